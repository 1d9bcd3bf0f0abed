//! Where chalie-tui keeps its files.
//!
//! XDG base directories on every platform (macOS included): terminal users expect
//! `~/.config`, not `~/Library/Application Support`. Each location has a `CHALIE_*`
//! override so tests and side-by-side installs never touch the user's real files.

use std::path::{Path, PathBuf};

const APP: &str = "chalie-tui";

/// Every path the program reads or writes, resolved once at start-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// The user config file (may not exist: then only the embedded defaults apply).
    pub config_file: PathBuf,
    /// Whether `config_file` was named on the command line: a missing `--config` file
    /// is an error, while a missing file at the default or `CHALIE_CONFIG` location
    /// just means the built-in defaults.
    pub config_explicit: bool,
    /// Database, session logs and the tracing log live here.
    pub data_dir: PathBuf,
    /// The SQLite database file.
    pub db_file: PathBuf,
    /// Model weights, shared by all data dirs so a fresh data dir fetches nothing.
    pub models_dir: PathBuf,
}

/// An environment lookup, injectable so path resolution is a pure function in tests.
pub trait Env {
    fn var(&self, key: &str) -> Option<String>;
}

/// The process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, key: &str) -> Option<String> {
        std::env::var(key).ok().filter(|v| !v.is_empty())
    }
}

impl Paths {
    /// Resolve from CLI overrides and the environment.
    pub fn resolve(env: &dyn Env, config_override: Option<&Path>, db_override: Option<&Path>) -> Paths {
        let home = env.var("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
        let xdg = |var: &str, fallback: &str| {
            env.var(var).map(PathBuf::from).filter(|p| p.is_absolute()).unwrap_or_else(|| home.join(fallback))
        };

        let (config_file, config_explicit) = match (config_override, env.var("CHALIE_CONFIG")) {
            (Some(p), _) => (p.to_path_buf(), true),
            (None, Some(p)) => (PathBuf::from(p), false),
            (None, None) => (xdg("XDG_CONFIG_HOME", ".config").join(APP).join("config.toml"), false),
        };
        let data_dir = env
            .var("CHALIE_DATA_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| xdg("XDG_DATA_HOME", ".local/share").join(APP));
        let models_dir = env
            .var("CHALIE_MODELS_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| xdg("XDG_CACHE_HOME", ".cache").join(APP).join("models"));
        let db_file = db_override.map(Path::to_path_buf).unwrap_or_else(|| data_dir.join("chalie.db"));

        Paths { config_file, config_explicit, data_dir, db_file, models_dir }
    }

    /// Everything under one data dir (its config file unnamed on the command line, so a
    /// missing one means the defaults): the layout benches, examples and reruns start from.
    pub fn in_dir(data_dir: &Path, models_dir: &Path) -> Paths {
        Paths {
            config_file: data_dir.join("config.toml"),
            config_explicit: false,
            data_dir: data_dir.to_path_buf(),
            db_file: data_dir.join("chalie.db"),
            models_dir: models_dir.to_path_buf(),
        }
    }

    /// Session logs (JSONL), one file per session.
    pub fn sessions_dir(&self) -> PathBuf {
        self.data_dir.join("sessions")
    }

    /// The tracing log file (the TUI owns stdout, so logs never go there).
    pub fn log_file(&self) -> PathBuf {
        self.data_dir.join("logs").join("chalie-tui.log")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct MapEnv(HashMap<&'static str, &'static str>);
    impl Env for MapEnv {
        fn var(&self, key: &str) -> Option<String> {
            self.0.get(key).map(|s| s.to_string())
        }
    }

    #[test]
    fn xdg_defaults_under_home() {
        let env = MapEnv(HashMap::from([("HOME", "/home/u")]));
        let p = Paths::resolve(&env, None, None);
        assert_eq!(p.config_file, PathBuf::from("/home/u/.config/chalie-tui/config.toml"));
        assert!(!p.config_explicit);
        assert_eq!(p.data_dir, PathBuf::from("/home/u/.local/share/chalie-tui"));
        assert_eq!(p.db_file, PathBuf::from("/home/u/.local/share/chalie-tui/chalie.db"));
        assert_eq!(p.models_dir, PathBuf::from("/home/u/.cache/chalie-tui/models"));
        assert_eq!(p.log_file(), PathBuf::from("/home/u/.local/share/chalie-tui/logs/chalie-tui.log"));
    }

    #[test]
    fn xdg_vars_and_chalie_overrides_win() {
        let env = MapEnv(HashMap::from([
            ("HOME", "/home/u"),
            ("XDG_CONFIG_HOME", "/xc"),
            ("XDG_DATA_HOME", "relative/ignored"),
            ("CHALIE_MODELS_DIR", "/m"),
        ]));
        let p = Paths::resolve(&env, None, None);
        assert_eq!(p.config_file, PathBuf::from("/xc/chalie-tui/config.toml"));
        assert_eq!(p.data_dir, PathBuf::from("/home/u/.local/share/chalie-tui"));
        assert_eq!(p.models_dir, PathBuf::from("/m"));

        let env =
            MapEnv(HashMap::from([("HOME", "/home/u"), ("CHALIE_CONFIG", "/etc/c.toml"), ("CHALIE_DATA_DIR", "/d")]));
        let p = Paths::resolve(&env, None, Some(Path::new("/tmp/x.db")));
        assert_eq!(p.config_file, PathBuf::from("/etc/c.toml"));
        assert!(!p.config_explicit);
        assert_eq!(p.db_file, PathBuf::from("/tmp/x.db"));
        assert_eq!(p.sessions_dir(), PathBuf::from("/d/sessions"));

        let p = Paths::resolve(&env, Some(Path::new("/cli.toml")), None);
        assert_eq!(p.config_file, PathBuf::from("/cli.toml"));
        assert!(p.config_explicit);
    }
}
