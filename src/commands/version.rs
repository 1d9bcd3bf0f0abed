//! `chalie-tui --version`: the version, every path in use and which models each role calls.
//! It never creates anything, so it works before the first start and on a broken config.

use crate::config::{Paths, ProcessEnv, Role};
use crate::events::EventBus;
use crate::llm::local::fetch;
use crate::llm::resolve::{self, Selection};

pub fn run(paths: &Paths) {
    let config = super::load_config(paths, &ProcessEnv);
    let config_state = match (paths.config_file.exists(), &config) {
        (_, Err(e)) => format!("error: {e}"),
        (true, Ok(_)) => "merged over built-in defaults".into(),
        (false, Ok(_)) => "not present; built-in defaults".into(),
    };
    crate::outln!("chalie-tui {}", env!("CARGO_PKG_VERSION"));
    crate::outln!("config:   {} ({config_state})", paths.config_file.display());
    crate::outln!("data:     {}", paths.data_dir.display());
    crate::outln!("database: {}", paths.db_file.display());
    let missing = fetch::missing(&paths.models_dir).len();
    let state = if missing == 0 {
        "built-in models present".to_string()
    } else {
        format!("{missing} built-in model file(s) not fetched yet")
    };
    crate::outln!("models:   {} ({state})", paths.models_dir.display());
    crate::outln!("log:      {}", paths.log_file().display());
    crate::outln!("vectors:  {}", crate::store::describe_vectors(&paths.db_file));
    let Ok(config) = config else { return };
    let built = super::tokio_runtime().and_then(|rt| {
        Ok(rt.block_on(resolve::build(&config, &paths.models_dir, &ProcessEnv, EventBus::new(), true))?)
    });
    match built {
        Ok((llm, selection)) => {
            let how = match selection {
                Selection::Configured => "as configured".to_string(),
                Selection::BuiltIn => {
                    "no endpoint configured and none answering at Ollama's address: built-in models".into()
                }
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
        Err(e) => crate::outln!("active:   error: {e:#}"),
    }
}
