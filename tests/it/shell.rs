//! Shell integration: completion scripts, the man page, `ask` under a pipe, and the exit
//! codes the README documents (0 ok, 1 a failed turn or other failure, 2 usage or config).

use crate::support::bin::{chalie, chalie_piped, text, write_double_config};
use crate::support::openai_double::{Double, Reply};

#[test]
fn completions_for_each_shell_name_the_subcommands_even_with_a_broken_config() {
    let dir = tempfile::tempdir().unwrap();
    // Completion scripts are installed before any config exists, or while it is being fixed.
    std::fs::write(dir.path().join("config.toml"), "[llm]\nno_such_key = 1\n").unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let out = chalie(dir.path(), &["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        for word in ["chalie-tui", "ask", "audit", "memory", "completions", "thread"] {
            assert!(script.contains(word), "{shell} script lacks {word}");
        }
    }
    assert_eq!(chalie(dir.path(), &["completions", "tcsh"]).status.code(), Some(2), "unknown shell is a usage error");
    assert!(!dir.path().join("chalie.db").exists(), "completions must not create a database");
}

#[test]
fn man_page_is_roff_for_the_whole_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = chalie(dir.path(), &["man"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let page = text(&out.stdout);
    assert!(page.starts_with(".ie") || page.contains(".TH chalie-tui"), "{}", &page[..page.len().min(200)]);
    assert!(page.contains(".TH chalie-tui 1"), "section 1 title");
    assert!(page.contains("completions") && page.contains("CHALIE_CONFIG"), "subcommands and environment");
}

/// Heuristic triage: the one scripted reply is the generation.
fn served(reply: &str) -> (tokio::runtime::Runtime, Double) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = rt.block_on(Double::start(vec![Reply::text(reply)]));
    (rt, double)
}

fn user_messages(data: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(data.join("chalie.db")).unwrap();
    let mut stmt = conn.prepare("SELECT content FROM chat_history WHERE role = 'user' ORDER BY id").unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

#[test]
fn piped_stdin_goes_under_the_question() {
    let dir = tempfile::tempdir().unwrap();
    let (_rt, double) = served("The change renames x to y.");
    write_double_config(dir.path(), &double.base_url());
    let diff = "diff --git a/src/x.rs b/src/x.rs\n-let x = 1;\n+let y = 1;\n";
    let out = chalie_piped(dir.path(), &["ask", "--thread", "t", "review this"], diff.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "The change renames x to y.\n");
    assert_eq!(user_messages(dir.path()), [format!("review this\n\n{}", diff.trim_end())]);
    let sent = double.chat_requests();
    assert!(sent.iter().any(|r| r.body.to_string().contains("+let y = 1;")), "the model saw the piped diff");
}

#[test]
fn piped_stdin_past_the_limit_exits_2_before_anything_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let (_rt, double) = served("unused");
    write_double_config(dir.path(), &double.base_url());
    let big = vec![b'a'; (chalie::commands::ask::STDIN_LIMIT + 1) as usize];
    let out = chalie_piped(dir.path(), &["ask", "review this"], &big);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("more than 4 MiB"), "{}", text(&out.stderr));
    assert!(double.chat_requests().is_empty());
    assert!(!dir.path().join("chalie.db").exists(), "refused before the database is opened");
}

#[test]
fn audit_stats_totals_the_cost_per_role_at_the_configured_price() {
    let dir = tempfile::tempdir().unwrap();
    let (_rt, double) = served("Fine, thanks.");
    write_double_config(dir.path(), &double.base_url());
    let mut config = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    config.push_str("[pricing.\"double/m\"]\ninput_per_mtok = 1000000\noutput_per_mtok = 2000000\n");
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let out = chalie(dir.path(), &["ask", "How are you?"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let out = chalie(dir.path(), &["audit", "--stats", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["cost_by_role"].as_array().unwrap();
    let primary = rows.iter().find(|r| r["role"] == "primary").expect("a primary row");
    let (tin, tout) = (primary["tokens_in"].as_f64().unwrap(), primary["tokens_out"].as_f64().unwrap());
    assert!(tin > 0.0, "{primary}");
    // $1 per input token and $2 per output token, by the price above.
    assert_eq!(primary["dollars"].as_f64().unwrap(), tin + 2.0 * tout, "{primary}");
    let embedding = rows.iter().find(|r| r["role"] == "embedding").expect("an embedding row");
    assert_eq!(
        embedding["unpriced_calls"].as_u64(),
        Some(embedding["calls"].as_u64().unwrap()),
        "double/e has no price"
    );
    let table = text(&chalie(dir.path(), &["audit", "--stats"]).stdout);
    assert!(table.contains("primary") && table.lines().any(|l| l.starts_with("total")), "{table}");
}

#[test]
fn conversations_lists_the_threads_ask_wrote_and_searches_them() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = rt.block_on(Double::start(vec![Reply::text("Lisbon is lovely."), Reply::text("It is 4.")]));
    write_double_config(dir.path(), &double.base_url());
    assert!(chalie(dir.path(), &["ask", "--thread", "trip", "Plan a trip to Lisbon"]).status.success());
    assert!(chalie(dir.path(), &["ask", "--thread", "sums", "What is 2 + 2?"]).status.success());

    let out = chalie(dir.path(), &["conversations", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rows: Vec<serde_json::Value> = text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let ids: Vec<&str> = rows.iter().map(|r| r["thread_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["sums", "trip"], "{rows:?}");
    assert_eq!(rows[1]["messages"], 2);
    let out = chalie(dir.path(), &["conversations", "--search", "LISBON"]);
    let listed = text(&out.stdout);
    assert!(listed.contains("trip") && !listed.contains("sums"), "{listed}");
}
