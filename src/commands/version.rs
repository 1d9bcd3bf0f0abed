//! `chalie-tui --version`: the version and every path in use. It reads no config, opens no
//! database and asks no network (it answers in milliseconds, on a broken config too, and
//! creates nothing); which model serves each role is `chalie-tui models`.

use crate::config::Paths;
use crate::llm::local::fetch;

pub fn run(paths: &Paths) {
    // Only whether the file is there: parsing it is config work, which `--version` skips.
    let config_state = if paths.config_file.exists() { "present" } else { "not present; built-in defaults" };
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
}
