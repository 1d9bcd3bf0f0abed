//! Configuration: defaults embedded in the binary, the user's TOML merged over them.
//!
//! Every key is optional for the user; unknown keys and wrong types are errors that
//! name the file, line and key, because a silently ignored typo in a config file is
//! the worst kind of bug to chase. API keys are never in the file: a provider names
//! the environment variable that holds its key.

pub mod mcp;
mod paths;
pub mod pricing;
mod regulator;
mod secrets;

pub use paths::{Env, Paths, ProcessEnv};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::Spanned;

pub use regulator::RegulatorConfig;

/// The built-in defaults, merged under every user config.
pub const DEFAULT_CONFIG: &str = include_str!("../../assets/default-config.toml");
const DEFAULTS_NAME: &str = "<built-in defaults>";

/// Where a value came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}")]
    Read { path: PathBuf, source: std::io::Error },
    /// Syntax errors, unknown keys and wrong types, as the TOML parser reports them.
    #[error("{file}:{line}:{column}: {message}\n  {line} | {snippet}")]
    Parse { file: String, line: usize, column: usize, message: String, snippet: String },
    #[error("{at}: {message}")]
    Invalid { at: Location, message: String },
    #[error(
        "{at}: api_key_env = \"{var}\" (provider `{provider}`) names an environment variable that is not set; export it or remove api_key_env"
    )]
    MissingEnv { at: Location, var: String, provider: String },
}

/// A check an owning layer runs over the raw values it owns. Config reads `[keys]` and
/// `[router.weights]` with their locations but cannot tell a binding or weight name from a
/// typo: the TUI's key map and the router know those, and config sits below both (see
/// docs/architecture.md, the layering rule). Whoever loads the config passes the checks.
pub type Check = fn(&Config) -> Result<(), ConfigError>;

/// The kind of backend a provider talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Any OpenAI-compatible HTTP server: OpenAI, Ollama, llama.cpp server, vLLM, LM Studio.
    Openai,
    /// The built-in CPU models.
    Local,
}

/// Whether a stage that can ask the lightweight model does so or stays deterministic: the
/// calls before routing (`[llm] triage`: cognitive triage and the router's tie-breaker) and
/// the memory workers' extraction (`[llm] memory_extraction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelUse {
    /// The model when the lightweight role is an endpoint; heuristics when it is the built-in
    /// 135M model, which cannot answer a triage prompt inside the time box on two cores.
    Auto,
    Llm,
    Heuristic,
}

impl ModelUse {
    /// Whether the model is asked, given whether the lightweight role is the built-in model.
    pub fn asks_model(self, lightweight_builtin: bool) -> bool {
        match self {
            ModelUse::Llm => true,
            ModelUse::Heuristic => false,
            ModelUse::Auto => !lightweight_builtin,
        }
    }
}

/// The roles the cognition stack calls models by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Primary,
    Lightweight,
    Strong,
    Embedding,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Primary, Role::Lightweight, Role::Strong, Role::Embedding];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Primary => "primary",
            Role::Lightweight => "lightweight",
            Role::Strong => "strong",
            Role::Embedding => "embedding",
        }
    }
}

/// A value that remembers the file and line it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located<T> {
    pub value: T,
    pub at: Location,
}

impl<T: Serialize> Serialize for Located<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(s)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Provider {
    pub kind: ProviderKind,
    pub base_url: Option<String>,
    /// The environment variable holding the API key (never the key itself).
    pub api_key_env: Option<Located<String>>,
}

/// A role's target: `provider/model`. Model names may contain `/` themselves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelRef {
    pub provider: String,
    pub model: String,
    #[serde(skip)]
    pub at: Location,
}

impl fmt::Display for ModelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.provider, self.model)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Models {
    pub primary: ModelRef,
    pub lightweight: ModelRef,
    pub strong: ModelRef,
    pub embedding: ModelRef,
}

impl Models {
    pub fn get(&self, role: Role) -> &ModelRef {
        match role {
            Role::Primary => &self.primary,
            Role::Lightweight => &self.lightweight,
            Role::Strong => &self.strong,
            Role::Embedding => &self.embedding,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LlmSettings {
    pub triage: ModelUse,
    /// Whether the memory workers (chunker, semantic consolidation) ask the lightweight
    /// model to extract, or use only their deterministic extraction. Same values as `triage`.
    pub memory_extraction: ModelUse,
    /// Whether the post-action critic asks the lightweight model (its deterministic checks
    /// run always). Same values as `triage`.
    pub critic: ModelUse,
    /// Whether the concept graph's v2 router asks the lightweight model about habitual edges
    /// (docs/cognition.md §9.4.9). Same values as `triage`.
    pub graph_router: ModelUse,
    /// The router's per-call hard cap (parameters §12.4: 800 ms).
    pub graph_router_timeout_ms: u64,
    pub triage_timeout_ms: u64,
    pub tiebreak_timeout_ms: u64,
    pub request_timeout_ms: u64,
    pub max_retries: u32,
    /// Output tokens (a user's turns, since the last cost break) after which a run of poor
    /// replies stops spending (docs/cognition.md §13.4).
    pub regulator_token_cap: u64,
    /// `[regulator]`, carried here because these settings are what the engine is given.
    pub regulator: RegulatorConfig,
}

/// `[privacy]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PrivacySettings {
    /// Whether a chat line keeps a password, key, card or id number it holds until the
    /// session ends (true), or has it masked as it is stored, before the model sees it (false).
    pub keep_secrets_in_history: bool,
}

/// `[drift]`: the idle-thought engine (docs/cognition.md §14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DriftSettings {
    pub enabled: bool,
    /// Base seconds between cycles (jittered).
    pub interval_s: u64,
    /// Local hours [start, end) in which no message is sent; equal values mean none.
    pub quiet_start: u8,
    pub quiet_end: u8,
}

impl Default for DriftSettings {
    fn default() -> DriftSettings {
        DriftSettings { enabled: true, interval_s: 300, quiet_start: 23, quiet_end: 8 }
    }
}

/// `[tasks]`: the persistent-task worker (docs/cognition.md §17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TaskSettings {
    pub enabled: bool,
    /// Base seconds between cycles (± 30 %).
    pub interval_s: u64,
}

impl Default for TaskSettings {
    fn default() -> TaskSettings {
        TaskSettings { enabled: true, interval_s: 1800 }
    }
}

/// The resolved configuration: defaults with the user's file merged over them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Config {
    pub providers: BTreeMap<String, Provider>,
    pub models: Models,
    pub llm: LlmSettings,
    pub privacy: PrivacySettings,
    pub drift: DriftSettings,
    pub tasks: TaskSettings,
    /// `[keys]`: key binding name → the keys that replace its defaults (checked against the
    /// TUI's key table when loaded).
    pub keys: BTreeMap<String, Located<Vec<String>>>,
    /// `[router.weights]`: router weights by `"group.field"` name, merged over the weights
    /// stored in the database (see `cognition::router::overrides`).
    pub router_weights: BTreeMap<String, Located<Weight>>,
    /// `[pricing."provider/model"]`: dollars per million tokens, for the models that cost.
    pub pricing: pricing::Pricing,
    /// `[mcp.servers.NAME]`: MCP servers whose tools ACT may call.
    pub mcp: mcp::Servers,
    /// True when the user's file assigned at least one role; without that, start-up may
    /// switch every role to a local Ollama that answers (see docs/architecture.md §1).
    #[serde(skip)]
    pub roles_from_user: bool,
    /// The user file that was merged, if one existed.
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

// ---- the on-disk shape: every key optional, unknown keys rejected ----

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Layer {
    #[serde(default)]
    providers: BTreeMap<String, ProviderLayer>,
    #[serde(default)]
    models: ModelsLayer,
    #[serde(default)]
    llm: LlmLayer,
    #[serde(default)]
    privacy: PrivacyLayer,
    #[serde(default)]
    drift: DriftLayer,
    #[serde(default)]
    tasks: TasksLayer,
    #[serde(default)]
    keys: BTreeMap<String, Spanned<KeyList>>,
    #[serde(default)]
    router: RouterLayer,
    #[serde(default)]
    regulator: regulator::RegulatorLayer,
    #[serde(default)]
    pricing: BTreeMap<String, Spanned<pricing::PriceLayer>>,
    #[serde(default)]
    mcp: mcp::McpLayer,
}

/// `[router]`: only `weights` so far, as `group.field = number` (TOML dotted keys, or one
/// `[router.weights.group]` table per group).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RouterLayer {
    #[serde(default)]
    weights: BTreeMap<String, BTreeMap<String, Spanned<f64>>>,
}

/// A router weight from the config. Compared by bits so the config stays `Eq` (a NaN never
/// gets this far: it is rejected when the file is read).
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(transparent)]
pub struct Weight(pub f64);

impl PartialEq for Weight {
    fn eq(&self, other: &Weight) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Weight {}

/// A `[keys]` value: one key or a list of them.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum KeyList {
    One(String),
    Many(Vec<String>),
}

impl KeyList {
    fn to_vec(&self) -> Vec<String> {
        match self {
            KeyList::One(k) => vec![k.clone()],
            KeyList::Many(ks) => ks.clone(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderLayer {
    kind: ProviderKind,
    base_url: Option<String>,
    api_key_env: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelsLayer {
    primary: Option<Spanned<String>>,
    lightweight: Option<Spanned<String>>,
    strong: Option<Spanned<String>>,
    embedding: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LlmLayer {
    triage: Option<ModelUse>,
    memory_extraction: Option<ModelUse>,
    critic: Option<ModelUse>,
    graph_router: Option<ModelUse>,
    graph_router_timeout_ms: Option<u64>,
    triage_timeout_ms: Option<u64>,
    tiebreak_timeout_ms: Option<u64>,
    request_timeout_ms: Option<u64>,
    max_retries: Option<u32>,
    regulator_token_cap: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PrivacyLayer {
    keep_secrets_in_history: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct DriftLayer {
    enabled: Option<bool>,
    interval_s: Option<u64>,
    quiet_start: Option<u8>,
    quiet_end: Option<u8>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TasksLayer {
    enabled: Option<bool>,
    interval_s: Option<u64>,
}

/// The largest config file read; the built-in defaults are a few KiB.
const MAX_FILE_BYTES: usize = 1 << 20;
/// The most of a config line an error message quotes.
const QUOTE_CHARS: usize = 200;

/// One parsed file: its layer plus the text needed to turn spans into line numbers.
struct Parsed<'a> {
    name: String,
    text: &'a str,
    layer: Layer,
}

impl Parsed<'_> {
    fn parse<'a>(name: &str, text: &'a str) -> Result<Parsed<'a>, ConfigError> {
        // A config file is a page of settings: one of megabytes is a mistake (or an attack),
        // and parsing, checking and quoting it would take seconds and echo it back whole.
        if text.len() > MAX_FILE_BYTES {
            let (line, _) = line_col(text, MAX_FILE_BYTES);
            return Err(ConfigError::Invalid {
                at: Location { file: name.to_string(), line },
                message: format!(
                    "the file is {} bytes, more than a config file may hold ({} KiB); the limit is passed on this line",
                    text.len(),
                    MAX_FILE_BYTES >> 10
                ),
            });
        }
        secrets::refuse_inline_secrets(name, text)?;
        let layer: Layer = toml::from_str(text).map_err(|e| {
            let offset = e.span().map(|s| s.start).unwrap_or(0);
            let (line, column) = line_col(text, offset);
            ConfigError::Parse {
                file: name.to_string(),
                line,
                column,
                // Both quote the input, which may be one enormous line.
                message: crate::text::clip::clip(e.message().trim(), QUOTE_CHARS),
                snippet: crate::text::clip::clip(text.lines().nth(line - 1).unwrap_or("").trim_end(), QUOTE_CHARS),
            }
        })?;
        Ok(Parsed { name: name.to_string(), text, layer })
    }

    fn locate<T: Clone>(&self, v: &Spanned<T>) -> Located<T> {
        let (line, _) = line_col(self.text, v.span().start);
        Located { value: v.get_ref().clone(), at: Location { file: self.name.clone(), line } }
    }
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rfind('\n').map_or(before.len(), |nl| before.len() - nl - 1) + 1;
    (line, column)
}

impl Config {
    /// The built-in defaults alone.
    pub fn defaults() -> Config {
        Self::build(&[]).unwrap_or_else(|e| panic!("built-in default config is invalid: {e}"))
    }

    /// Load the user's file (if present) over the defaults and validate it against `env`.
    /// A missing file is fine unless it was named explicitly.
    pub fn load(paths: &Paths, env: &dyn Env) -> Result<Config, ConfigError> {
        let path = &paths.config_file;
        let text = match std::fs::read_to_string(path) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !paths.config_explicit => None,
            Err(e) => return Err(ConfigError::Read { path: path.clone(), source: e }),
        };
        let config = match &text {
            Some(t) => Self::from_user_toml(path, t)?,
            None => Self::defaults(),
        };
        config.check_env(env)?;
        Ok(config)
    }

    /// Merge one user document over the defaults (no environment checks).
    pub fn from_user_toml(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let mut config = Self::build(&[(path.display().to_string(), text)])?;
        config.source = Some(path.to_path_buf());
        Ok(config)
    }

    fn build(user: &[(String, &str)]) -> Result<Config, ConfigError> {
        let mut layers = vec![Parsed::parse(DEFAULTS_NAME, DEFAULT_CONFIG)?];
        for (name, text) in user {
            layers.push(Parsed::parse(name, text)?);
        }

        let mut providers = BTreeMap::new();
        let mut roles: [Option<Located<String>>; 4] = Default::default();
        let mut roles_from_user = false;
        let mut llm = LlmLayer::default();
        let mut keep_secrets: Option<bool> = None;
        let mut drift = DriftSettings::default();
        let mut tasks = TaskSettings::default();
        let mut keys = BTreeMap::new();
        let mut router_weights = BTreeMap::new();
        let mut reg = regulator::Merged::default();
        let mut prices = pricing::Pricing::default();
        let mut mcp_servers = mcp::Servers::default();
        for (i, p) in layers.iter().enumerate() {
            for (group, fields) in &p.layer.router.weights {
                for (field, value) in fields {
                    let name = format!("{group}.{field}");
                    let at = p.locate(value);
                    router_weights.insert(name, Located { value: Weight(at.value), at: at.at });
                }
            }
            for (name, list) in &p.layer.keys {
                let at = p.locate(list);
                let value = at.value.to_vec();
                keys.insert(name.clone(), Located { value, at: at.at });
            }
            for (name, prov) in &p.layer.providers {
                providers.insert(
                    name.clone(),
                    Provider {
                        kind: prov.kind,
                        base_url: prov.base_url.clone(),
                        api_key_env: prov.api_key_env.as_ref().map(|v| p.locate(v)),
                    },
                );
            }
            let m = &p.layer.models;
            for (slot, v) in roles.iter_mut().zip([&m.primary, &m.lightweight, &m.strong, &m.embedding]) {
                if let Some(v) = v {
                    *slot = Some(p.locate(v));
                    roles_from_user |= i > 0;
                }
            }
            let l = &p.layer.llm;
            llm.triage = l.triage.or(llm.triage);
            llm.memory_extraction = l.memory_extraction.or(llm.memory_extraction);
            llm.critic = l.critic.or(llm.critic);
            llm.graph_router = l.graph_router.or(llm.graph_router);
            llm.graph_router_timeout_ms = l.graph_router_timeout_ms.or(llm.graph_router_timeout_ms);
            llm.triage_timeout_ms = l.triage_timeout_ms.or(llm.triage_timeout_ms);
            llm.tiebreak_timeout_ms = l.tiebreak_timeout_ms.or(llm.tiebreak_timeout_ms);
            llm.request_timeout_ms = l.request_timeout_ms.or(llm.request_timeout_ms);
            llm.max_retries = l.max_retries.or(llm.max_retries);
            llm.regulator_token_cap = l.regulator_token_cap.or(llm.regulator_token_cap);
            keep_secrets = p.layer.privacy.keep_secrets_in_history.or(keep_secrets);
            let d = &p.layer.drift;
            drift.enabled = d.enabled.unwrap_or(drift.enabled);
            drift.interval_s = d.interval_s.unwrap_or(drift.interval_s).max(1);
            drift.quiet_start = d.quiet_start.unwrap_or(drift.quiet_start).min(23);
            drift.quiet_end = d.quiet_end.unwrap_or(drift.quiet_end).min(23);
            tasks.enabled = p.layer.tasks.enabled.unwrap_or(tasks.enabled);
            tasks.interval_s = p.layer.tasks.interval_s.unwrap_or(tasks.interval_s).max(1);
            reg.over(&p.layer.regulator, |v| p.locate(v).at);
            pricing::merge(&mut prices, &p.layer.pricing, |v| Location {
                file: p.name.clone(),
                line: line_col(p.text, v.span().start).0,
            })?;
            mcp::merge(&mut mcp_servers, &p.layer.mcp, |v| Location {
                file: p.name.clone(),
                line: line_col(p.text, v.span().start).0,
            })?;
        }

        let [primary, lightweight, strong, embedding] = roles;
        let role = |r: Role, v: Option<Located<String>>| -> Result<ModelRef, ConfigError> {
            let v = v.ok_or_else(|| ConfigError::Invalid {
                at: Location { file: DEFAULTS_NAME.into(), line: 0 },
                message: format!("no model for role `{}`", r.as_str()),
            })?;
            parse_model_ref(r, &v, &providers)
        };
        let models = Models {
            primary: role(Role::Primary, primary)?,
            lightweight: role(Role::Lightweight, lightweight)?,
            strong: role(Role::Strong, strong)?,
            embedding: role(Role::Embedding, embedding)?,
        };
        let missing = |key: &str| ConfigError::Invalid {
            at: Location { file: DEFAULTS_NAME.into(), line: 0 },
            message: format!("missing [llm] {key}"),
        };
        let llm = LlmSettings {
            triage: llm.triage.ok_or_else(|| missing("triage"))?,
            memory_extraction: llm.memory_extraction.ok_or_else(|| missing("memory_extraction"))?,
            critic: llm.critic.ok_or_else(|| missing("critic"))?,
            graph_router: llm.graph_router.ok_or_else(|| missing("graph_router"))?,
            graph_router_timeout_ms: llm.graph_router_timeout_ms.ok_or_else(|| missing("graph_router_timeout_ms"))?,
            triage_timeout_ms: llm.triage_timeout_ms.ok_or_else(|| missing("triage_timeout_ms"))?,
            tiebreak_timeout_ms: llm.tiebreak_timeout_ms.ok_or_else(|| missing("tiebreak_timeout_ms"))?,
            request_timeout_ms: llm.request_timeout_ms.ok_or_else(|| missing("request_timeout_ms"))?,
            max_retries: llm.max_retries.ok_or_else(|| missing("max_retries"))?,
            regulator_token_cap: llm.regulator_token_cap.ok_or_else(|| missing("regulator_token_cap"))?,
            regulator: reg.resolve(DEFAULTS_NAME)?,
        };
        let privacy = PrivacySettings {
            keep_secrets_in_history: keep_secrets.ok_or_else(|| ConfigError::Invalid {
                at: Location { file: DEFAULTS_NAME.into(), line: 0 },
                message: "missing [privacy] keep_secrets_in_history".into(),
            })?,
        };
        Ok(Config {
            providers,
            models,
            llm,
            privacy,
            drift,
            tasks,
            keys,
            router_weights,
            pricing: prices,
            mcp: mcp_servers,
            roles_from_user,
            source: None,
        })
    }

    /// Every provider a role uses must have its API key variable set, if it names one.
    pub fn check_env(&self, env: &dyn Env) -> Result<(), ConfigError> {
        for role in Role::ALL {
            self.api_key(role, env)?;
        }
        Ok(())
    }

    /// The API key for a role's provider, read from the variable the config names.
    /// Never log the returned value.
    pub fn api_key(&self, role: Role, env: &dyn Env) -> Result<Option<String>, ConfigError> {
        self.provider_key(&self.models.get(role).provider, env)
    }

    /// The API key of a named provider, if it names a key variable.
    pub fn provider_key(&self, provider: &str, env: &dyn Env) -> Result<Option<String>, ConfigError> {
        let Some(spec) = self.providers.get(provider) else {
            return Ok(None);
        };
        match &spec.api_key_env {
            None => Ok(None),
            Some(var) => env.var(&var.value).map(Some).ok_or_else(|| ConfigError::MissingEnv {
                at: var.at.clone(),
                var: var.value.clone(),
                provider: provider.to_string(),
            }),
        }
    }

    /// Run the owners' checks over the raw values they own, stopping at the first error (which
    /// names the file and line of the offending value).
    pub fn checked(self, checks: &[Check]) -> Result<Config, ConfigError> {
        for check in checks {
            check(&self)?;
        }
        Ok(self)
    }

    /// A stable fingerprint of the effective configuration, for session-log headers.
    /// Contains no secrets: the config never holds keys, only variable names.
    pub fn digest(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        let hash = Sha256::digest(&json);
        hash.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }
}

fn parse_model_ref(
    role: Role,
    v: &Located<String>,
    providers: &BTreeMap<String, Provider>,
) -> Result<ModelRef, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid { at: v.at.clone(), message };
    let Some((provider, model)) = v.value.split_once('/') else {
        return Err(invalid(format!("models.{} = \"{}\" must be \"provider/model\"", role.as_str(), v.value)));
    };
    if provider.is_empty() || model.is_empty() {
        return Err(invalid(format!("models.{} = \"{}\" must be \"provider/model\"", role.as_str(), v.value)));
    }
    if !providers.contains_key(provider) {
        let known: Vec<_> = providers.keys().map(String::as_str).collect();
        return Err(invalid(format!(
            "models.{} names provider `{provider}`, which is not defined (known: {})",
            role.as_str(),
            known.join(", ")
        )));
    }
    Ok(ModelRef { provider: provider.to_string(), model: model.to_string(), at: v.at.clone() })
}

#[cfg(test)]
mod tests;
