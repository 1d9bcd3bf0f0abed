//! `chalie-tui models [fetch]`: which built-in model files are present, or fetch them.

use crate::cli::{ModelsAction, ModelsArgs};
use crate::config::Paths;
use crate::llm::local::fetch;
use std::process::ExitCode;

pub fn run(paths: &Paths, args: ModelsArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        Some(ModelsAction::Fetch) => {
            let mut last = String::new();
            fetch::Fetcher::default().fetch(&paths.models_dir, &mut |p| {
                // The fetcher reports every read; a person needs a line only when it changes.
                let line = crate::llm::local::progress_line(&p);
                if line != last {
                    crate::errln!("{line}");
                    last = line;
                }
            })?;
            crate::outln!("Built-in models ready in {}", paths.models_dir.display());
        }
        None => {
            let missing = fetch::missing(&paths.models_dir);
            for f in fetch::FILES {
                let state = if missing.iter().any(|m| m.file_name == f.file_name && m.model == f.model) {
                    "missing"
                } else {
                    "ok"
                };
                crate::outln!(
                    "{:<8}{}",
                    state,
                    fetch::model_dir(&paths.models_dir, f.model).join(f.file_name).display()
                );
            }
            if !missing.is_empty() {
                crate::outln!("Run `chalie-tui models fetch` to download them (~190 MB).");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
