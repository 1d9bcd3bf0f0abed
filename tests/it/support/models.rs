//! The built-in models, fetched through the project's own fetch step into `CHALIE_MODELS_DIR`
//! (default `target/models`). The fetcher locks the models dir and places files by atomic
//! rename, so parallel test processes (and threads) may fetch at once.

use chalie::llm::local::embed::Embedder;
use chalie::llm::local::fetch::{self, Fetcher};
use std::path::PathBuf;
use std::sync::OnceLock;

pub fn models_dir() -> PathBuf {
    std::env::var_os("CHALIE_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/models"))
}

/// The models dir once every built-in model is in it (the first call downloads ~180 MB).
pub fn fetched() -> PathBuf {
    let dir = models_dir();
    Fetcher::default().fetch(&dir, &mut |p| eprintln!("{p:?}")).expect("fetch the built-in models");
    dir
}

/// candle's F32 all-MiniLM-L6-v2, loaded once per test process: the reference the built-in
/// int8 encoder is held to, and what the tests that embed many texts use, because candle is
/// optimised even in test builds and the int8 encoder (this crate's own code) is not: it
/// takes ~0.4 s a sentence unoptimised.
pub fn embedder() -> &'static Embedder {
    static EMBEDDER: OnceLock<Embedder> = OnceLock::new();
    EMBEDDER.get_or_init(|| Embedder::load_f32(&fetch::model_dir(&fetched(), "all-minilm-l6-v2")).expect("load MiniLM"))
}

/// The built-in all-MiniLM-L6-v2 as the assistant runs it (the int8 encoder), loaded once.
pub fn int8_embedder() -> &'static Embedder {
    static EMBEDDER: OnceLock<Embedder> = OnceLock::new();
    EMBEDDER.get_or_init(|| Embedder::load(&fetch::model_dir(&fetched(), "all-minilm-l6-v2")).expect("load MiniLM"))
}
