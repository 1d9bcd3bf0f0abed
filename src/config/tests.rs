use super::*;
use std::collections::HashMap;

struct MapEnv(HashMap<&'static str, &'static str>);
impl Env for MapEnv {
    fn var(&self, key: &str) -> Option<String> {
        self.0.get(key).map(|s| s.to_string())
    }
}

fn user(text: &str) -> Result<Config, ConfigError> {
    Config::from_user_toml(Path::new("/home/u/.config/chalie-tui/config.toml"), text)
}

fn paths_for(dir: &Path, explicit: bool) -> Paths {
    Paths {
        config_file: dir.join("config.toml"),
        config_explicit: explicit,
        data_dir: dir.to_path_buf(),
        db_file: dir.join("chalie.db"),
        models_dir: dir.join("models"),
    }
}

#[test]
fn defaults_use_builtin_models() {
    let c = Config::defaults();
    assert_eq!(c.models.primary.to_string(), "local/smollm2-135m-instruct");
    assert_eq!(c.models.embedding.to_string(), "local/all-minilm-l6-v2");
    assert_eq!(c.llm.triage, ModelUse::Auto);
    assert_eq!(c.llm.tiebreak_timeout_ms, 1500);
    assert_eq!(c.llm.triage_timeout_ms, 500);
    assert!(!c.roles_from_user);
    assert_eq!(c.providers["ollama"].base_url.as_deref(), Some("http://localhost:11434/v1"));
}

#[test]
fn user_file_merges_over_defaults() {
    let c = user(
        r#"
[providers.ollama]
kind = "openai"
base_url = "http://gpu-box:11434/v1"

[models]
primary = "ollama/qwen3:8b"

[llm]
triage = "heuristic"
"#,
    )
    .unwrap();
    assert_eq!(c.models.primary.provider, "ollama");
    assert_eq!(c.models.primary.model, "qwen3:8b");
    assert_eq!(c.models.primary.at.line, 7);
    // Untouched roles and settings keep their defaults.
    assert_eq!(c.models.lightweight.to_string(), "local/smollm2-135m-instruct");
    assert_eq!(c.llm.triage, ModelUse::Heuristic);
    assert_eq!(c.llm.request_timeout_ms, 60000);
    assert_eq!(c.providers["ollama"].base_url.as_deref(), Some("http://gpu-box:11434/v1"));
    assert!(c.providers.contains_key("local"));
    assert!(c.roles_from_user);
}

#[test]
fn model_names_may_contain_slashes() {
    let c = user(
        "[providers.router]\nkind = \"openai\"\nbase_url = \"http://x/v1\"\n[models]\nstrong = \"router/meta/llama-3\"\n",
    )
    .unwrap();
    assert_eq!(c.models.strong.provider, "router");
    assert_eq!(c.models.strong.model, "meta/llama-3");
}

#[test]
fn bad_toml_names_file_and_line() {
    let err = user("[models]\nprimary = \"ollama/x\"\nlightweight = \n").unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ConfigError::Parse { line: 3, .. }), "{msg}");
    assert!(msg.starts_with("/home/u/.config/chalie-tui/config.toml:3:"), "{msg}");
}

#[test]
fn unknown_key_names_file_line_and_key() {
    let err = user("[llm]\ntriage = \"llm\"\ntriage_timout_ms = 300\n").unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ConfigError::Parse { line: 3, .. }), "{msg}");
    assert!(msg.contains("triage_timout_ms"), "{msg}");
    assert!(msg.contains("config.toml:3:"), "{msg}");

    let err = user("[colours]\nfg = \"red\"\n").unwrap_err();
    assert!(err.to_string().contains("colours"), "{err}");

    let err = user("[providers.x]\nkind = \"openai\"\nurl = \"http://x\"\n").unwrap_err();
    assert!(matches!(err, ConfigError::Parse { line: 3, .. }), "{err}");
    assert!(err.to_string().contains("url"), "{err}");
}

#[test]
fn wrong_type_names_line_and_shows_key() {
    let err = user("[llm]\n\ntriage_timeout_ms = \"fast\"\n").unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ConfigError::Parse { line: 3, .. }), "{msg}");
    assert!(msg.contains("triage_timeout_ms = \"fast\""), "{msg}");

    let err = user("[llm]\ntriage = \"sometimes\"\n").unwrap_err();
    assert!(err.to_string().contains("sometimes"), "{err}");

    let err = user("[providers.x]\nkind = \"grpc\"\n").unwrap_err();
    assert!(matches!(err, ConfigError::Parse { line: 2, .. }), "{err}");
}

#[test]
fn bad_model_refs_are_rejected_with_line() {
    let err = user("\n[models]\nprimary = \"qwen3\"\n").unwrap_err();
    assert!(matches!(&err, ConfigError::Invalid { at, .. } if at.line == 3), "{err}");
    assert!(err.to_string().contains("provider/model"), "{err}");

    let err = user("[models]\nprimary = \"nowhere/qwen3\"\n").unwrap_err();
    assert!(err.to_string().contains("`nowhere`"), "{err}");
    assert!(err.to_string().contains("config.toml:2"), "{err}");
}

#[test]
fn missing_key_env_var_is_an_error_naming_the_line() {
    let text = "[providers.openai]\nkind = \"openai\"\nbase_url = \"https://api.example.com/v1\"\napi_key_env = \"CHALIE_TEST_KEY\"\n[models]\nprimary = \"openai/gpt\"\n";
    let c = user(text).unwrap();
    let err = c.check_env(&MapEnv(HashMap::new())).unwrap_err();
    assert!(matches!(&err, ConfigError::MissingEnv { at, .. } if at.line == 4), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("CHALIE_TEST_KEY") && msg.contains("config.toml:4"), "{msg}");

    let env = MapEnv(HashMap::from([("CHALIE_TEST_KEY", "sk-secret")]));
    c.check_env(&env).unwrap();
    assert_eq!(c.api_key(Role::Primary, &env).unwrap().as_deref(), Some("sk-secret"));
    assert_eq!(c.api_key(Role::Embedding, &env).unwrap(), None);
}

#[test]
fn unused_provider_needs_no_key() {
    let c = user("[providers.openai]\nkind = \"openai\"\napi_key_env = \"UNSET_VAR\"\n").unwrap();
    c.check_env(&MapEnv(HashMap::new())).unwrap();
}

#[test]
fn digest_is_stable_and_secret_free() {
    let text = "[providers.openai]\nkind = \"openai\"\napi_key_env = \"K\"\n[models]\nprimary = \"openai/gpt\"\n";
    let a = user(text).unwrap();
    let b = user(text).unwrap();
    assert_eq!(a.digest(), b.digest());
    assert_ne!(a.digest(), Config::defaults().digest());
    assert_eq!(a.digest().len(), 16);
}

#[test]
fn load_handles_missing_and_explicit_files() {
    let dir = tempfile::tempdir().unwrap();
    let env = MapEnv(HashMap::new());
    // No file at the default location: defaults.
    let c = Config::load(&paths_for(dir.path(), false), &env).unwrap();
    assert_eq!(c, Config::defaults());
    // An explicitly named file that is missing is an error.
    let err = Config::load(&paths_for(dir.path(), true), &env).unwrap_err();
    assert!(matches!(err, ConfigError::Read { .. }));
    // A present file is merged.
    std::fs::write(dir.path().join("config.toml"), "[llm]\nmax_retries = 5\n").unwrap();
    let c = Config::load(&paths_for(dir.path(), false), &env).unwrap();
    assert_eq!(c.llm.max_retries, 5);
    assert_eq!(c.source.as_deref(), Some(dir.path().join("config.toml").as_path()));
}

#[test]
fn router_weight_overrides_are_read_with_their_lines() {
    let c = user("[router.weights]\nacknowledge.greeting = 0.1\n\n[router.weights.respond]\nbase = 0.45\n").unwrap();
    let names: Vec<&str> = c.router_weights.keys().map(String::as_str).collect();
    assert_eq!(names, ["acknowledge.greeting", "respond.base"]);
    assert_eq!(c.router_weights["acknowledge.greeting"].value, Weight(0.1));
    assert_eq!(c.router_weights["respond.base"].at.line, 5);
    assert_ne!(c.digest(), Config::defaults().digest(), "the digest covers the overrides");
    assert!(Config::defaults().router_weights.is_empty());
}

#[test]
fn regulator_section_merges_and_checks_ranges() {
    let d = Config::defaults().llm.regulator;
    assert_eq!(d, RegulatorConfig::default(), "the shipped file and the code's defaults agree");
    let c = user("[regulator]\nsimilarity_threshold = 0.3\nimplicit_window_ms = 20000\n").unwrap();
    assert_eq!(c.llm.regulator.similarity_threshold, Weight(0.3));
    assert_eq!(c.llm.regulator.implicit_window_ms, 20_000);
    assert_eq!(c.llm.regulator.drift_threshold, Weight(0.5));
    let err = user("[regulator]\n\ndrift_threshold = 1.5\n").unwrap_err().to_string();
    assert!(err.contains("drift_threshold") && err.contains(":3"), "{err}");
    assert!(user("[regulator]\nsimilarity_threshold = -2.0\n").is_err());
    assert!(user("[regulator]\nunknown = 1\n").is_err());
}

#[test]
fn a_huge_value_is_refused_naming_the_line_without_echoing_it() {
    // Over the file limit: refused before parsing, at the line where the limit is passed.
    let text =
        format!("[llm]\ntriage = \"llm\"\n[providers.x]\nkind = \"openai\"\nbase_url = \"{}\"\n", "a".repeat(3 << 20));
    let err = user(&text).unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("/home/u/.config/chalie-tui/config.toml:5:"), "{}", &msg[..msg.len().min(300)]);
    assert!(msg.len() < 400, "the message quotes the value: {} bytes", msg.len());
    // Under the limit but still one long bad value: the error quotes a clipped line.
    let err = user(&format!("[llm]\ntriage = \"{}\"\n", "b".repeat(500_000))).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ConfigError::Parse { line: 2, .. }), "{}", &msg[..msg.len().min(300)]);
    assert!(msg.len() < 1000, "the message quotes the value: {} bytes", msg.len());
}

#[test]
fn a_deeply_nested_value_is_an_error_naming_the_line_not_a_stack_overflow() {
    for text in [
        format!("[llm]\ntriage = {}{}\n", "[".repeat(100_000), "]".repeat(100_000)),
        format!("x = {}1{}\n", "{a = ".repeat(50_000), "}".repeat(50_000)),
    ] {
        let err = user(&text).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, ConfigError::Parse { .. }), "{}", &msg[..msg.len().min(300)]);
        assert!(msg.contains("config.toml:") && msg.len() < 1000, "{}", &msg[..msg.len().min(300)]);
    }
}
