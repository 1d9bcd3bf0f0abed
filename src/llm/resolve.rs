//! From config to a ready `Llm`: one provider instance per configured name, and the
//! "no config" rule (docs/architecture.md §1) — use a local Ollama if one answers, else the
//! built-in models.

use super::local::{CHAT_MODEL, LocalProvider};
use super::openai::{OpenAiProvider, list_models};
use super::{Llm, Provider, Route};
use crate::config::{Config, ConfigError, Env, ProviderKind, Role};
use crate::events::EventBus;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How long start-up waits for Ollama's default address before using the built-in models.
const PROBE_TIMEOUT: Duration = Duration::from_millis(400);

/// What start-up decided, for `--version` and the status bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// Roles as the user's config assigns them (or the defaults, probe disabled).
    Configured,
    /// No roles configured and Ollama answered: its first chat model serves the chat roles.
    DetectedOllama { base_url: String, model: String },
    /// No roles configured and nothing answered: the built-in models.
    BuiltIn,
}

/// Build the model layer. With `probe`, a config that assigns no roles tries a
/// local Ollama first.
pub async fn build(
    config: &Config,
    models_dir: &Path,
    env: &(dyn Env + Sync),
    bus: EventBus,
    probe: bool,
) -> Result<(Llm, Selection), ConfigError> {
    let mut providers: HashMap<String, Arc<dyn Provider>> = HashMap::new();
    let mut routes = Vec::new();
    let mut selection = Selection::Configured;

    let detected = if probe && !config.roles_from_user { detect_ollama(config).await } else { None };
    for role in Role::ALL {
        let target = config.models.get(role);
        let (provider_name, model) = match (&detected, role) {
            (Some((_, model)), Role::Primary | Role::Lightweight | Role::Strong) => ("ollama", model.as_str()),
            _ => (target.provider.as_str(), target.model.as_str()),
        };
        let Some(spec) = config.providers.get(provider_name) else { continue };
        let provider = match providers.get(provider_name) {
            Some(p) => p.clone(),
            None => {
                let p: Arc<dyn Provider> = match spec.kind {
                    ProviderKind::Local => {
                        Arc::new(LocalProvider::new(provider_name, models_dir).with_auto_fetch(bus.clone()))
                    }
                    ProviderKind::Openai => {
                        let base = spec.base_url.as_deref().unwrap_or("https://api.openai.com/v1");
                        let origin = match &spec.api_key_env {
                            Some(var) => {
                                format!("{}: api_key_env = \"{}\" (provider `{provider_name}`)", var.at, var.value)
                            }
                            None => format!(
                                "{}: provider `{provider_name}` has no api_key_env, so no key is sent",
                                target.at
                            ),
                        };
                        let key = config.provider_key(provider_name, env)?;
                        Arc::new(OpenAiProvider::new(provider_name, base, key).with_key_origin(origin))
                    }
                };
                providers.insert(provider_name.to_string(), p.clone());
                p
            }
        };
        let builtin = spec.kind == ProviderKind::Local;
        routes.push((role, Route { provider, model: model.to_string(), builtin }));
    }
    if let Some((base_url, model)) = detected {
        selection = Selection::DetectedOllama { base_url, model };
    } else if probe && !config.roles_from_user {
        selection = Selection::BuiltIn;
    }
    Ok((Llm::new(bus, config.llm.clone(), routes), selection))
}

/// Is an OpenAI-compatible server at the `ollama` provider's address, and which chat
/// model does it have? The first non-embedding model it lists is used.
async fn detect_ollama(config: &Config) -> Option<(String, String)> {
    let base = config.providers.get("ollama")?.base_url.clone()?;
    let models = list_models(&base, PROBE_TIMEOUT).await?;
    let model = models.into_iter().find(|m| !m.contains("embed") && m != CHAT_MODEL)?;
    tracing::info!(%base, %model, "found an OpenAI-compatible server at the Ollama address");
    Some((base, model))
}
