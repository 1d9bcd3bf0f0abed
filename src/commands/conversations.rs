//! `chalie-tui conversations`: the conversations to come back to (`chalie-tui --thread ID`
//! opens one in the TUI, `ask --thread ID` continues one headless).

use crate::cli::ConversationsArgs;
use crate::config::Paths;
use crate::store::{self, ChatRepo};
use std::process::ExitCode;

pub fn run(paths: &Paths, args: ConversationsArgs) -> anyhow::Result<ExitCode> {
    let conn = store::open(&paths.db_file)?;
    let list = ChatRepo(&conn).conversations(args.search.as_deref(), args.limit)?;
    if args.json {
        for c in &list {
            super::say_json(&serde_json::to_string(c)?);
        }
    } else if list.is_empty() {
        crate::outln!("No conversations{}.", if args.search.is_some() { " match" } else { " yet" });
    } else {
        let mut out = format!("{:<36}  {:<16}  {:>5}  title", "id", "last message", "msgs");
        for c in &list {
            let when = chrono::DateTime::from_timestamp(c.last_at, 0)
                .map(|t| t.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M").to_string())
                .unwrap_or_default();
            out.push_str(&format!("\n{:<36}  {:<16}  {:>5}  {}", c.thread_id, when, c.messages, c.title));
        }
        super::say(&out);
    }
    Ok(ExitCode::SUCCESS)
}
