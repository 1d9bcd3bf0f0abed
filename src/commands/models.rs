//! `chalie-tui models [fetch]`: which built-in model files are present and which model serves
//! each role (and why), or fetch them.

use crate::cli::{ModelsAction, ModelsArgs};
use crate::config::{Config, Paths, ProcessEnv, Role};
use crate::events::EventBus;
use crate::llm::local::fetch;
use crate::llm::resolve::{self, Selection};
use std::process::ExitCode;

pub fn run(paths: &Paths, config: &Config, args: ModelsArgs) -> anyhow::Result<ExitCode> {
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
            active(paths, config);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The stored vectors' size and model, and what each role calls: this resolves the providers
/// (probing Ollama's address when nothing is configured), which `--version` does not wait for.
fn active(paths: &Paths, config: &Config) {
    crate::outln!("vectors:  {}", crate::store::describe_vectors(&paths.db_file));
    let built = super::tokio_runtime().and_then(|rt| {
        Ok(rt.block_on(resolve::build(config, &paths.models_dir, &ProcessEnv, EventBus::new(), true))?)
    });
    let (llm, selection) = match built {
        Ok(built) => built,
        Err(e) => {
            crate::outln!("active:   error: {e:#}");
            return;
        }
    };
    let how = match selection {
        Selection::Configured => "as configured".to_string(),
        Selection::BuiltIn => "no endpoint configured and none answering at Ollama's address: built-in models".into(),
        Selection::DetectedOllama { base_url, model } => {
            format!("found {model} at {base_url} (Ollama's default address)")
        }
    };
    crate::outln!("active:   {how}");
    for role in Role::ALL {
        crate::outln!("  {:<12}{}", role.as_str(), llm.describe(role));
    }
    let pre = if llm.pre_routing_uses_model() {
        "triage and tie-breaker ask the lightweight model"
    } else {
        "triage and tie-breaker are deterministic (no model call before routing)"
    };
    crate::outln!("routing:  {pre} (`[llm] triage = \"{}\"`)", crate::wire_name(&config.llm.triage));
}
