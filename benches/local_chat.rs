//! Built-in chat speed on this machine: prefill and decode throughput, and
//! time-to-first-token for a 600-token prompt, cold versus with a cached prefix.
//!
//! Decode tok/s = 64 / median(decode_64); prefill tok/s ≈ prompt tokens /
//! median(ttft_600_cold). Run: `cargo bench --bench local_chat`.
//!
//! The BENCHFIG figures set `LocalChat` beside a reference loop written straight on
//! llama.cpp's C API (what its `simple` example does: one batch for the prompt, then greedy
//! sample → decode one token), on the same file, threads, context and batch size, with the
//! two measured call for call in the same run.
//!
//! `LOCAL_CHAT_ROWS` (comma-separated: `prefill`, `decode`, `first`, `choose`, `threads`; all
//! by default) picks which figures run. The reference runs on `LocalChat`'s threads (`Threads::default`,
//! half the cores) except in the `threads` rows, where it runs on one per core, llama.cpp's own
//! habit: `chat_decode_64_vs_all_cores` and `chat_first_token_after_prefill_vs_all_cores`.

#[path = "support/benchfig.rs"]
mod benchfig;

use chalie::llm::local::fetch::Fetcher;
use chalie::llm::local::{
    CHAT_MODEL, LocalChat, N_BATCH, N_CTX, PenalizedGreedy, REPEAT_LAST_N, REPEAT_PENALTY, Threads, llama_backend,
};
use chalie::llm::{ChatRequest, Message, PromptKind};
use criterion::{Criterion, criterion_group, criterion_main};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

fn gguf() -> PathBuf {
    let dir = std::env::var_os("CHALIE_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/models"));
    if let Err(e) = Fetcher::default().fetch(&dir, &mut |_| {}) {
        panic!("cannot fetch the built-in models: {e}");
    }
    dir.join(CHAT_MODEL).join("SmolLM2-135M-Instruct.Q4_1.gguf")
}

fn load(gguf: &Path, threads: Threads) -> LocalChat {
    match LocalChat::load_with(gguf, threads) {
        Ok(c) => c,
        Err(e) => panic!("cannot load SmolLM2: {e}"),
    }
}

/// The prompt `LocalChat` builds for a system + user message (SmolLM2's ChatML), as one string.
fn chatml(system: &str, user: &str) -> String {
    format!("<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n")
}

/// llama.cpp driven directly, no wrapper of ours in between.
struct Reference<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
}

impl<'m> Reference<'m> {
    fn new(model: &'m LlamaModel, threads: Threads) -> Reference<'m> {
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(N_CTX))
            .with_n_batch(N_BATCH)
            .with_n_threads(threads.decode)
            .with_n_threads_batch(threads.batch);
        let backend = llama_backend().expect("llama.cpp backend");
        Reference { model, ctx: model.new_context(backend, params).expect("reference context") }
    }

    fn tokens(&self, prompt: &str) -> Vec<LlamaToken> {
        self.model.vocab().tokenize(prompt.as_bytes(), false, true)
    }

    /// Decode `prompt[from..]` (positions `from..`) in batches of N_BATCH, then greedy-sample
    /// and decode until `n` tokens are sampled, ignoring end-of-generation.
    fn generate(&mut self, prompt: &[LlamaToken], from: usize, n: usize) -> usize {
        self.ctx.clear_kv_cache_seq(Some(0), Some(from as u32), None).expect("clear cache");
        let mut pos = from;
        let mut last = 0;
        for chunk in prompt[from..].chunks(N_BATCH as usize) {
            let mut batch = LlamaBatch::new(chunk.len(), 1);
            for (i, t) in chunk.iter().enumerate() {
                batch.add(*t, (pos + i) as i32, &[0], i + 1 == chunk.len()).expect("batch");
            }
            self.ctx.decode(&mut batch).expect("prompt decode");
            pos += chunk.len();
            last = chunk.len() as i32 - 1;
        }
        let mut sampler = LlamaSampler::greedy();
        let mut bytes = 0;
        for i in 0..n {
            let token = sampler.sample(&self.ctx, last);
            bytes += self.model.vocab().token_to_piece(token, false, None).len();
            if i + 1 == n {
                break;
            }
            let mut batch = LlamaBatch::new(1, 1);
            batch.add(token, pos as i32, &[0], true).expect("batch");
            self.ctx.decode(&mut batch).expect("decode");
            pos += 1;
            last = 0;
        }
        bytes
    }
}

/// Prefill (a cold ~600-token prompt to its first token) and decode (64 tokens after a
/// cached short prompt), ours against the reference, interleaved call for call.
fn figures(rt: &tokio::runtime::Runtime, chat: &LocalChat, gguf: &Path) {
    let backend = llama_backend().expect("llama.cpp backend");
    let model = LlamaModel::load_from_file(backend, gguf, &LlamaModelParams::default()).expect("reference model");
    let mut reference = Reference::new(&model, Threads::default());
    let rows = std::env::var("LOCAL_CHAT_ROWS").unwrap_or_else(|_| "prefill,decode,first,choose,threads".into());
    let want = |row: &str| rows.split(',').any(|r| r.trim() == row);

    if want("prefill") {
        prefill(rt, chat, &mut reference);
    }
    if want("decode") {
        decode(rt, chat, &mut reference, "chat_decode_64", true);
    }
    if want("first") {
        warm_first_token(rt, chat, &mut reference, "chat_first_token_after_prefill");
    }
    if want("choose") {
        choose(model.n_vocab());
    }
    if want("threads") {
        drop(reference);
        let mut all = Reference::new(&model, Threads::all_cores());
        decode(rt, chat, &mut all, "chat_decode_64_vs_all_cores", false);
        warm_first_token(rt, chat, &mut all, "chat_first_token_after_prefill_vs_all_cores");
    }
}

fn prefill(rt: &tokio::runtime::Runtime, chat: &LocalChat, reference: &mut Reference<'_>) {
    let (ours_salt, ref_salt) = (AtomicUsize::new(1_000), AtomicUsize::new(2_000));
    let (ours, theirs) = benchfig::paired(
        2,
        15,
        || {
            let r = req(persona(ours_salt.fetch_add(1, Ordering::Relaxed)), "What should I cook tonight?", 1);
            rt.block_on(chat.generate_exact(&r, 1)).expect("prefill")
        },
        || {
            let system = persona(ref_salt.fetch_add(1, Ordering::Relaxed));
            let prompt = reference.tokens(&chatml(&system, "What should I cook tonight?"));
            reference.generate(&prompt, 0, 1)
        },
    );
    let s = chat.last_stats();
    eprintln!("prefill: {} prompt tokens, {} reused", s.prompt_tokens, s.reused_tokens);
    benchfig::print("chat_prefill_600_cold", &ours, Some(("llama_cpp_c_api", &theirs)), "ratio<=1.0");
}

/// 64 tokens after a cached short prompt, as `name`, and with log-probabilities as
/// `{name}_logprobs` when `logprobs`.
fn decode(rt: &tokio::runtime::Runtime, chat: &LocalChat, reference: &mut Reference<'_>, name: &str, logprobs: bool) {
    let decode_req = req("Be brief.".into(), "Count to one hundred.", 64);
    let mut with_logprobs = decode_req.clone();
    with_logprobs.logprobs = true;
    let prompt = reference.tokens(&chatml("Be brief.", "Count to one hundred."));
    reference.generate(&prompt, 0, 1);
    let (ours, theirs) = benchfig::paired(
        2,
        15,
        || rt.block_on(chat.generate_exact(&decode_req, 64)).expect("decode"),
        // Like LocalChat: the prompt's last token is decoded again for fresh logits.
        || reference.generate(&prompt, prompt.len() - 1, 64),
    );
    let s = chat.last_stats();
    eprintln!(
        "decode: {} prompt tokens, {} reused, {} generated",
        s.prompt_tokens, s.reused_tokens, s.generated_tokens
    );
    let tps = |v: &[f64]| 64.0 / benchfig::quantile(v, 0.5) * 1e3;
    eprintln!("decode tok/s: LocalChat {:.1}, llama.cpp {:.1}", tps(&ours), tps(&theirs));
    benchfig::print(name, &ours, Some(("llama_cpp_c_api", &theirs)), "ratio<=1.0");
    if !logprobs {
        return;
    }

    // The same with per-token log-probabilities (what a reply asks for: the regulator reads them).
    let (ours, theirs) = benchfig::paired(
        2,
        15,
        || rt.block_on(chat.generate_exact(&with_logprobs, 64)).expect("decode"),
        || reference.generate(&prompt, prompt.len() - 1, 64),
    );
    eprintln!("decode tok/s with logprobs: LocalChat {:.1}, llama.cpp {:.1}", tps(&ours), tps(&theirs));
    benchfig::print(&format!("{name}_logprobs"), &ours, Some(("llama_cpp_c_api", &theirs)), "ratio<=1.0");
}

/// A reply's first token once its ~600-token prompt was decoded ahead with
/// [`LocalChat::prefill`] as the engine does it: the persona and the turn's instructions, then
/// the message as typed up to its last word, closed, and the reply's header
/// (`prompts::conversation_prefix` with a draft). At Enter the last word, the message's end
/// and the header are left. The reference decodes the same suffix after the same cached
/// prefix, from the prompt tokenized as one string. The prefills are outside the timing.
fn warm_first_token(rt: &tokio::runtime::Runtime, chat: &LocalChat, reference: &mut Reference<'_>, name: &str) {
    const INSTRUCTIONS: &str = "Answer the user's message directly.";
    let typed = |i: usize| format!("Question {i}: what should I cook tonight with rice and");
    let conversation = |user: String| {
        let mut r = req(persona(0), &user, 1);
        r.messages.insert(1, Message::system(INSTRUCTIONS));
        r.kind = PromptKind::Conversation;
        r
    };
    let full = |i: usize| conversation(format!("{} beans?", typed(i)));
    let draft = |i: usize| {
        let mut r = conversation(typed(i));
        r.messages.push(Message::assistant(""));
        r
    };
    let text = |user: &str| {
        chatml(&persona(0), user)
            .replace("<|im_start|>user", &format!("<|im_start|>system\n{INSTRUCTIONS}<|im_end|>\n<|im_start|>user"))
    };
    let common = |a: &[LlamaToken], b: &[LlamaToken]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
    // What the reference's sequence holds, as `LocalChat` knows its own.
    let mut held: Vec<LlamaToken> = Vec::new();
    let (mut ours, mut theirs, mut their_suffix) = (Vec::new(), Vec::new(), 0);
    for i in 0..17 {
        chat.prefill(&draft(i)).expect("prefill");
        rt.block_on(chat.idle()).expect("idle");
        let t = std::time::Instant::now();
        rt.block_on(chat.generate_exact(&full(i), 1)).expect("warm first token");
        let ms = t.elapsed().as_secs_f64() * 1e3;

        let prompt = reference.tokens(&text(&format!("{} beans?", typed(i))));
        let ahead = common(&reference.tokens(&text(&typed(i))), &prompt);
        reference.generate(&prompt[..ahead], common(&held, &prompt[..ahead]).min(ahead - 1), 1);
        let t = std::time::Instant::now();
        reference.generate(&prompt, ahead, 1);
        let ref_ms = t.elapsed().as_secs_f64() * 1e3;
        held = prompt.clone();
        their_suffix = prompt.len() - ahead;
        // The first two warm up.
        if i >= 2 {
            ours.push(ms);
            theirs.push(ref_ms);
        }
    }
    let s = chat.last_stats();
    eprintln!(
        "warm first token: {} prompt tokens, {} from the cache ({} decoded); reference decodes {}",
        s.prompt_tokens,
        s.reused_tokens,
        s.prompt_tokens - s.reused_tokens,
        their_suffix
    );
    benchfig::print(name, &ours, Some(("llama_cpp_c_api", &theirs)), "ratio<=1.0");
}

/// Choosing one greedy token with the repetition penalty over the last 64 chosen, from a
/// full vocabulary of logits: `PenalizedGreedy` (what `LocalChat` does for a reply) against
/// llama.cpp's `penalties` + `greedy` chain (what it did: a candidate array of the whole
/// vocabulary, each candidate looked up among the recent tokens), call for call; and
/// llama.cpp's `greedy` alone, the reference loop's per-token choice, printed beside them.
fn choose(n_vocab: i32) {
    let mut s = 0x2545_f491_4f6c_dd1d_u64;
    let mut logits: Vec<f32> = (0..n_vocab)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % 4_000) as f32 / 100.0 - 20.0
        })
        .collect();
    let mut ours = PenalizedGreedy::new(REPEAT_LAST_N as usize, REPEAT_PENALTY);
    let mut chain = LlamaSampler::chain_simple([
        LlamaSampler::penalties(n_vocab, REPEAT_LAST_N, REPEAT_PENALTY, 0.0, 0.0),
        LlamaSampler::greedy(),
    ]);
    let mut greedy = LlamaSampler::greedy();
    let llama = |sampler: &mut LlamaSampler, logits: &[f32]| {
        let data = logits.iter().enumerate().map(|(i, &l)| LlamaTokenData::new(LlamaToken(i as i32), l, 0.0));
        let mut array = LlamaTokenDataArray::from_iter(data, false);
        array.apply_sampler(sampler);
        let token = array.selected_token().expect("a token");
        sampler.accept(token);
        token.0
    };
    // Fill both histories with 64 distinct recent tokens, as a reply in flight has.
    for i in 0..REPEAT_LAST_N as usize {
        logits[i * 7] = 100.0;
        assert_eq!(ours.pick(&logits), llama(&mut chain, &logits));
        logits[i * 7] = 0.0;
    }
    let (mine, theirs) = benchfig::paired(100, 3_000, || ours.pick(&logits), || llama(&mut chain, &logits));
    let plain = benchfig::samples(100, 3_000, || llama(&mut greedy, &logits));
    eprintln!(
        "choose a token over {n_vocab} logits: PenalizedGreedy {:.4} ms, llama.cpp penalties+greedy {:.4} ms, greedy alone {:.4} ms (medians)",
        benchfig::quantile(&mine, 0.5),
        benchfig::quantile(&theirs, 0.5),
        benchfig::quantile(&plain, 0.5)
    );
    benchfig::print("chat_choose_token", &mine, Some(("llama_cpp_penalties_greedy", &theirs)), "report");
    benchfig::print("chat_choose_token_reference_greedy", &plain, None, "report");
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
    // Like the reference loop; `chat_decode_64_logprobs` measures the pass they add.
    r.logprobs = false;
    r
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    let gguf = gguf();
    let chat = load(&gguf, Threads::default());
    figures(&rt, &chat, &gguf);
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
