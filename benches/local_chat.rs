//! Built-in chat speed on this machine: prefill and decode throughput, and
//! time-to-first-token for a 600-token prompt, cold versus with a cached prefix.
//!
//! Decode tok/s = 64 / median(decode_64); prefill tok/s ≈ prompt tokens /
//! median(ttft_600_cold). Run: `cargo bench --bench local_chat`.

use chalie::llm::local::fetch::Fetcher;
use chalie::llm::local::{CHAT_MODEL, LocalChat};
use chalie::llm::{ChatRequest, Message};
use criterion::{Criterion, criterion_group, criterion_main};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

fn load() -> LocalChat {
    let dir = std::env::var_os("CHALIE_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/models"));
    if let Err(e) = Fetcher::default().fetch(&dir, &mut |_| {}) {
        panic!("cannot fetch the built-in models: {e}");
    }
    match LocalChat::load(&dir.join(CHAT_MODEL).join("SmolLM2-135M-Instruct.Q4_1.gguf")) {
        Ok(c) => c,
        Err(e) => panic!("cannot load SmolLM2: {e}"),
    }
}

/// A system prompt that makes a prompt of about 600 tokens, like the persona + context part of a turn.
fn persona(salt: usize) -> String {
    let mut s = format!("Session {salt}. You are Chalie, a personal assistant in a terminal. ");
    for i in 0..30 {
        s.push_str(&format!("Rule {i}: be accurate, brief and kind; say when you do not know. "));
    }
    s
}

fn req(system: String, user: &str, max_tokens: u32) -> ChatRequest {
    let mut r = ChatRequest::new(vec![Message::system(system), Message::user(user)]);
    r.max_tokens = max_tokens;
    r.temperature = 0.0;
    r
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    let chat = load();
    let mut g = c.benchmark_group("local_chat");
    g.sample_size(10).measurement_time(Duration::from_secs(20));

    // Every iteration changes the first tokens, so nothing is reused: full prefill.
    let salt = AtomicUsize::new(0);
    g.bench_function("ttft_600_cold", |b| {
        b.iter(|| {
            let r = req(persona(salt.fetch_add(1, Ordering::Relaxed)), "What should I cook tonight?", 1);
            rt.block_on(chat.generate_exact(&r, 1))
        })
    });
    let s = chat.last_stats();
    eprintln!("cold prompt: {} tokens, {} reused", s.prompt_tokens, s.reused_tokens);

    // Same persona every time, only the user message changes: the cached prefix is reused.
    let turn = AtomicUsize::new(0);
    g.bench_function("ttft_600_cached_prefix", |b| {
        b.iter(|| {
            let r =
                req(persona(0), &format!("Question {}: what should I cook?", turn.fetch_add(1, Ordering::Relaxed)), 1);
            rt.block_on(chat.generate_exact(&r, 1))
        })
    });
    let s = chat.last_stats();
    eprintln!("cached prompt: {} tokens, {} reused", s.prompt_tokens, s.reused_tokens);

    g.bench_function("decode_64", |b| {
        b.iter(|| rt.block_on(chat.generate_exact(&req("Be brief.".into(), "Count to one hundred.", 64), 64)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
