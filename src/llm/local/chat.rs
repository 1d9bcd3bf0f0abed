//! SmolLM2 chat through llama.cpp on the CPU.
//!
//! One thread owns the model and its context, so generation never blocks the async
//! runtime and the KV cache survives between calls. The cache holds one llama.cpp sequence
//! per [`PromptKind`]: the reply's prompt (persona, then the conversation so far) and the
//! helper calls' short prompts never evict each other, and a call decodes only the tokens
//! after the prefix it shares with the previous call of its kind. Between turns the engine
//! can have the next reply's prefix decoded ahead ([`LocalChat::prefill`]); that work gives
//! way to any call that arrives. Both keep time-to-first-token low on two cores.

use super::greedy::PenalizedGreedy;
use super::stream::{Outbox, StopFilter, log_softmax_at};
use super::token_memo::TokenMemo;
use crate::llm::{ChatRequest, ChatRole, Completion, FinishReason, LlmError, PromptKind, ResponseFormat, Token};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use std::collections::VecDeque;
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Context window of each sequence. SmolLM2 was trained at 8k; 4k covers the 4000-token
/// context budget.
pub const N_CTX: u32 = 4096;
pub const N_BATCH: u32 = 512;
/// Sequences, one per [`PromptKind`], each with its own `N_CTX` cells (~94 MB of f16 keys and
/// values each): apart rather than one shared pool, so decoding one never attends over the
/// other's cells.
const SEQUENCES: usize = 2;
/// A prefill decodes in batches this small, so a call that arrives waits for at most one.
const PREFILL_BATCH: usize = 32;

fn sequence(kind: PromptKind) -> usize {
    match kind {
        PromptKind::Helper => 0,
        PromptKind::Conversation => 1,
    }
}

/// A JSON grammar (GBNF): with it even a 135M model emits syntactically valid JSON.
const JSON_GRAMMAR: &str = r#"
root   ::= ws object ws
value  ::= object | array | string | number | ("true" | "false" | "null")
object ::= "{" ws ( string ws ":" ws value ( ws "," ws string ws ":" ws value )* )? ws "}"
array  ::= "[" ws ( value ( ws "," ws value )* )? ws "]"
string ::= "\"" ( [^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\""
number ::= "-"? ([0-9] | [1-9] [0-9]{0,15}) ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
ws     ::= [ \t\n]{0,20}
"#;

/// The process's one llama.cpp backend (it can be initialised only once), shared with
/// benches that drive llama.cpp directly beside `LocalChat`.
pub fn backend() -> Result<&'static LlamaBackend, LlmError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            // llama.cpp's chatter goes to our log file, never the terminal.
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LlmError::Local(format!("llama.cpp backend: {e}")))
}

/// What the generation thread is asked to do, in order of arrival.
enum Work {
    Generate(Job),
    /// Decode the start of a coming prompt into its kind's sequence; stops early when a
    /// call or a newer prefill arrives (what it decoded so far stays cached).
    Prefill {
        prompt: Vec<Segment>,
        kind: PromptKind,
    },
    /// Answered once everything sent before it is done: lets a bench wait for an idle model
    /// the way a user's typing does.
    Idle(oneshot::Sender<()>),
}

struct Job {
    prompt: Vec<Segment>,
    kind: PromptKind,
    max_tokens: u32,
    temperature: f32,
    stop: Vec<String>,
    json: bool,
    /// Benchmarks only: generate exactly `max_tokens`, ignoring end-of-generation.
    ignore_eos: bool,
    /// Whether the caller wants per-token log-probabilities: each costs a pass over the
    /// whole vocabulary's logits, so without them it is skipped.
    logprobs: bool,
    tokens: Arc<Outbox>,
    done: oneshot::Sender<Result<Completion, LlmError>>,
    cancel: CancellationToken,
}

/// Tokens the repetition penalty looks back over, and its strength (1.0 = off).
pub const REPEAT_LAST_N: i32 = 64;
pub const REPEAT_PENALTY: f32 = 1.15;

/// Prompt pieces: template markers are tokenized as special tokens, message text
/// never is, so a user typing `<|im_end|>` cannot break out of their turn.
#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Special(String),
    Text(String),
}

/// Render messages with SmolLM2's ChatML template, ending with an open assistant turn.
fn chatml(req: &ChatRequest) -> Vec<Segment> {
    let mut out = Vec::new();
    for m in &req.messages {
        render(&mut out, m);
        out.push(Segment::Special("<|im_end|>\n".into()));
    }
    out.push(Segment::Special("<|im_start|>assistant\n".into()));
    out
}

/// The start of a coming prompt: every message closed but the last, which may go on. Each
/// segment is tokenized alone, so these tokens are the coming prompt's first tokens.
fn chatml_prefix(req: &ChatRequest) -> Vec<Segment> {
    let mut out = Vec::new();
    for (i, m) in req.messages.iter().enumerate() {
        render(&mut out, m);
        if i + 1 < req.messages.len() {
            out.push(Segment::Special("<|im_end|>\n".into()));
        }
    }
    out
}

fn render(out: &mut Vec<Segment>, m: &crate::llm::Message) {
    let role = match m.role {
        ChatRole::System => "system",
        ChatRole::User => "user",
        ChatRole::Assistant => "assistant",
    };
    out.push(Segment::Special(format!("<|im_start|>{role}\n")));
    out.push(Segment::Text(m.content.clone()));
}

/// llama.cpp's threads: for one-token decodes (each generated token) and for batches (a
/// prompt, or the part of it the cache does not hold).
///
/// Both run on half the machine's cores, at least one: llama.cpp's threads meet at a barrier
/// for every op, and when another thread of ours (MiniLM, the database, the TUI) or another
/// process holds a core, each wait for a descheduled one costs a time slice. On the 2-core dev
/// machine, shared with other work, one thread decoded 125 tok/s where two decoded 10 in the
/// same run (`benches/local_chat.rs`). Batches on every core were tried (a batch is a few large
/// products, and on 2 quiet cores two threads took an 8-token batch 1.8x faster): under load
/// (load average 6-7, same binary, alternating with `CHALIE_LOCAL_THREADS=1`) they made the
/// first token 233 ms median against 123 and a reply with no draft decoded ahead 5.2 s against
/// 2.2 s (`benches/first_token.rs`), so the default stays where a busy machine is safe.
///
/// `CHALIE_LOCAL_THREADS=DECODE[,BATCH]` overrides both (e.g. `1,4` on a quiet machine with
/// cores to spare); a value that is not a positive number is ignored, with a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Threads {
    pub decode: i32,
    pub batch: i32,
}

impl Threads {
    /// One thread per core, for both.
    pub fn all_cores() -> Threads {
        let n = std::thread::available_parallelism().map_or(2, |n| n.get()) as i32;
        Threads { decode: n, batch: n }
    }

    /// The default with `spec` (the environment variable's value) over it.
    fn from_spec(spec: Option<&str>) -> Threads {
        let half = (Threads::all_cores().batch / 2).max(1);
        let default = Threads { decode: half, batch: half };
        let Some(spec) = spec else { return default };
        let parse = |s: Option<&str>| s.map(|s| s.trim().parse::<i32>().ok().filter(|n| *n > 0));
        let mut parts = spec.split(',');
        match (parse(parts.next()), parse(parts.next()), parts.next()) {
            (Some(Some(decode)), None, None) => Threads { decode, batch: decode },
            (Some(Some(decode)), Some(Some(batch)), None) => Threads { decode, batch },
            _ => {
                tracing::warn!(
                    "CHALIE_LOCAL_THREADS={spec:?} is not DECODE[,BATCH] (positive numbers); using {default:?}"
                );
                default
            }
        }
    }
}

impl Default for Threads {
    fn default() -> Threads {
        Threads::from_spec(std::env::var("CHALIE_LOCAL_THREADS").ok().as_deref())
    }
}

/// What the last generation cost, for tests and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChatStats {
    pub kind: PromptKind,
    pub prompt_tokens: usize,
    /// Prompt tokens whose cache entries were reused from the previous call of this kind
    /// (or a prefill).
    pub reused_tokens: usize,
    pub generated_tokens: usize,
}

/// Handle to the generation thread. Cloning shares the one model.
#[derive(Clone)]
pub struct LocalChat {
    thread: Arc<Worker>,
    stats: Arc<Mutex<ChatStats>>,
}

/// The generation thread, joined when the last handle goes. Left running, it could still be
/// freeing the model and its context while the process exits and llama.cpp's own statics are
/// destroyed under it: the bench binaries died with SIGSEGV after their last figure that way.
struct Worker {
    tx: Option<mpsc::Sender<Work>>,
    handle: Option<std::thread::JoinHandle<()>>,
    /// Set as the last handle goes: the generation under way stops at its next token and
    /// whatever is queued is dropped, so the join waits for one decode at most.
    closing: Arc<AtomicBool>,
}

impl Worker {
    fn send(&self, work: Work) -> Result<(), LlmError> {
        self.tx.as_ref().ok_or_else(stopped)?.send(work).map_err(|_| stopped())
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.closing.store(true, Ordering::SeqCst);
        self.tx.take();
        if let Some(handle) = self.handle.take()
            && handle.join().is_err()
        {
            tracing::warn!("the generation thread panicked");
        }
    }
}

impl LocalChat {
    /// Load the GGUF and start the generation thread.
    pub fn load(gguf: &Path) -> Result<LocalChat, LlmError> {
        LocalChat::load_with(gguf, Threads::default())
    }

    /// [`LocalChat::load`] with llama.cpp running on `threads`.
    pub fn load_with(gguf: &Path, threads: Threads) -> Result<LocalChat, LlmError> {
        let backend = backend()?;
        let model = LlamaModel::load_from_file(backend, gguf, &LlamaModelParams::default())
            .map_err(|e| LlmError::Local(format!("cannot load {}: {e}", gguf.display())))?;
        let (tx, rx) = mpsc::channel::<Work>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), LlmError>>();
        let stats = Arc::new(Mutex::new(ChatStats::default()));
        let worker_stats = stats.clone();
        let closing = Arc::new(AtomicBool::new(false));
        let worker_closing = closing.clone();
        let handle = std::thread::Builder::new()
            .name("chalie-llama".into())
            .spawn(move || worker(backend, model, threads, rx, ready_tx, worker_stats, worker_closing))
            .map_err(|e| LlmError::Local(format!("cannot start the generation thread: {e}")))?;
        let thread = Arc::new(Worker { tx: Some(tx), handle: Some(handle), closing });
        ready_rx.recv().map_err(|_| LlmError::Local("generation thread died while loading".into()))??;
        Ok(LocalChat { thread, stats })
    }

    /// Statistics of the most recent generation.
    pub fn last_stats(&self) -> ChatStats {
        self.stats.lock().map(|s| *s).unwrap_or_default()
    }

    /// Queue the decoding of `req` as the start of a coming prompt of its kind (its last
    /// message left open, no assistant turn opened). Returns at once; a call that arrives
    /// meanwhile goes first.
    pub fn prefill(&self, req: &ChatRequest) -> Result<(), LlmError> {
        self.thread.send(Work::Prefill { prompt: chatml_prefix(req), kind: req.kind })
    }

    /// Resolves once the generation thread has done everything asked of it before.
    pub async fn idle(&self) -> Result<(), LlmError> {
        let (tx, rx) = oneshot::channel();
        self.thread.send(Work::Idle(tx))?;
        rx.await.map_err(|_| stopped())
    }

    /// Generate exactly `tokens` tokens (end-of-generation ignored): for measuring
    /// decode speed without depending on when the model chooses to stop.
    pub async fn generate_exact(&self, req: &ChatRequest, tokens: u32) -> Result<Completion, LlmError> {
        let mut req = req.clone();
        req.max_tokens = tokens;
        self.submit(&req, true, &mut |_| {}, &CancellationToken::new()).await
    }

    /// Generate a reply, streaming tokens to `on_token`.
    pub async fn generate(
        &self,
        req: &ChatRequest,
        on_token: &mut (dyn FnMut(Token) + Send),
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        self.submit(req, false, on_token, cancel).await
    }

    async fn submit(
        &self,
        req: &ChatRequest,
        ignore_eos: bool,
        on_token: &mut (dyn FnMut(Token) + Send),
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        let tokens = Arc::new(Outbox::default());
        let (done, mut done_rx) = oneshot::channel();
        let job = Job {
            prompt: chatml(req),
            kind: req.kind,
            max_tokens: req.max_tokens,
            temperature: req.temperature,
            stop: req.stop.clone(),
            json: !matches!(req.format, ResponseFormat::Text),
            ignore_eos,
            logprobs: req.logprobs,
            tokens: tokens.clone(),
            done,
            cancel: cancel.clone(),
        };
        self.thread.send(Work::Generate(job))?;
        loop {
            tokio::select! {
                biased;
                // Every piece is in the outbox before the result is sent: take the rest.
                result = &mut done_rx => {
                    tokens.take().into_iter().for_each(&mut *on_token);
                    return result.map_err(|_| LlmError::Local("the generation thread dropped the request".into()))?;
                }
                () = tokens.ready.notified() => tokens.take().into_iter().for_each(&mut *on_token),
            }
        }
    }
}

fn stopped() -> LlmError {
    LlmError::Local("the generation thread has stopped".into())
}

fn worker(
    backend: &'static LlamaBackend,
    model: LlamaModel,
    threads: Threads,
    rx: mpsc::Receiver<Work>,
    ready: mpsc::Sender<Result<(), LlmError>>,
    stats: Arc<Mutex<ChatStats>>,
    closing: Arc<AtomicBool>,
) {
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(N_CTX * SEQUENCES as u32))
        .with_n_seq_max(SEQUENCES as u32)
        .with_kv_unified(false)
        .with_n_batch(N_BATCH)
        .with_n_threads(threads.decode)
        .with_n_threads_batch(threads.batch);
    let mut ctx = match model.new_context(backend, params) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(LlmError::Local(format!("cannot create a llama.cpp context: {e}"))));
            return;
        }
    };
    let _ = ready.send(Ok(()));
    let mut engine =
        Engine { model: &model, cached: Default::default(), stats: ChatStats::default(), memo: TokenMemo::new() };
    let mut backlog: VecDeque<Work> = VecDeque::new();
    let closing = &*closing;
    while let Some(work) = backlog.pop_front().or_else(|| rx.recv().ok()) {
        if closing.load(Ordering::SeqCst) {
            break;
        }
        match work {
            Work::Generate(job) => {
                let result = engine.run(&mut ctx, &job, closing);
                if let Ok(mut s) = stats.lock() {
                    *s = engine.stats;
                }
                // A cancelled call stops between decodes, so what is cached is still true.
                if result.as_ref().is_err_and(|e| !matches!(e, LlmError::Cancelled)) {
                    engine.forget(&mut ctx, sequence(job.kind));
                }
                let _ = job.done.send(result);
            }
            Work::Prefill { prompt, kind } => {
                // Anything but an idle probe waiting behind it stops it, and so does the
                // last handle going (nothing will ever read what it decodes).
                let mut yield_to_waiting = || {
                    backlog.extend(rx.try_iter());
                    closing.load(Ordering::SeqCst) || backlog.iter().any(|w| !matches!(w, Work::Idle(_)))
                };
                if let Err(e) = engine.prefill(&mut ctx, sequence(kind), &prompt, &mut yield_to_waiting) {
                    tracing::debug!("prefill stopped: {e}");
                    engine.forget(&mut ctx, sequence(kind));
                }
            }
            Work::Idle(done) => {
                let _ = done.send(());
            }
        }
    }
}

struct Engine<'m> {
    model: &'m LlamaModel,
    /// Per sequence: the tokens whose keys/values it holds at positions 0..len.
    cached: [Vec<LlamaToken>; SEQUENCES],
    stats: ChatStats,
    /// The prompt pieces of the last few calls, tokenized.
    memo: TokenMemo<LlamaToken>,
}

fn local(e: impl std::fmt::Display) -> LlmError {
    LlmError::Local(e.to_string())
}

impl Engine<'_> {
    fn tokenize(&mut self, prompt: &[Segment]) -> Vec<LlamaToken> {
        let vocab = self.model.vocab();
        let mut out = Vec::new();
        for seg in prompt {
            let (special, text) = match seg {
                Segment::Special(s) => (true, s),
                Segment::Text(s) => (false, s),
            };
            self.memo.extend(&mut out, special, text, |t| vocab.tokenize(t.as_bytes(), false, special));
        }
        self.memo.end_call();
        out
    }

    /// A failed decode leaves the sequence in an unknown state: start it clean.
    fn forget(&mut self, ctx: &mut LlamaContext<'_>, seq: usize) {
        if ctx.clear_kv_cache_seq(Some(seq as u32), None, None).is_err() {
            ctx.clear_kv_cache();
            self.cached.iter_mut().for_each(Vec::clear);
        }
        self.cached[seq].clear();
    }

    /// Drop what `seq` holds beyond the `keep` tokens it shares with the coming prompt.
    fn keep_prefix(&mut self, ctx: &mut LlamaContext<'_>, seq: usize, keep: usize) -> Result<(), LlmError> {
        ctx.clear_kv_cache_seq(Some(seq as u32), Some(keep as u32), None).map_err(local)?;
        self.cached[seq].truncate(keep);
        Ok(())
    }

    /// Decode `tokens` after what `seq` holds, in batches of `batch`, asking `stop` before
    /// each. Returns the index of the last token's logits in the last batch, or `None` if
    /// stopped first.
    fn extend(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        seq: usize,
        tokens: &[LlamaToken],
        batch: usize,
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<Option<i32>, LlmError> {
        let mut last_idx = 0;
        for chunk in tokens.chunks(batch) {
            if stop() {
                return Ok(None);
            }
            let mut b = LlamaBatch::new(chunk.len(), 1);
            let start = self.cached[seq].len();
            for (i, tok) in chunk.iter().enumerate() {
                b.add(*tok, (start + i) as i32, &[seq as i32], i + 1 == chunk.len()).map_err(local)?;
            }
            ctx.decode(&mut b).map_err(local)?;
            self.cached[seq].extend_from_slice(chunk);
            last_idx = chunk.len() as i32 - 1;
        }
        Ok(Some(last_idx))
    }

    /// How many of `prompt`'s first tokens `seq` already holds.
    fn shared(&self, seq: usize, prompt: &[LlamaToken]) -> usize {
        self.cached[seq].iter().zip(prompt).take_while(|(a, b)| a == b).count()
    }

    fn prefill(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        seq: usize,
        prompt: &[Segment],
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<(), LlmError> {
        let tokens = self.tokenize(prompt);
        // Room for the per-turn part, the message and the reply after it.
        if tokens.len() + N_BATCH as usize > N_CTX as usize {
            return Ok(());
        }
        let common = self.shared(seq, &tokens);
        self.keep_prefix(ctx, seq, common)?;
        self.extend(ctx, seq, &tokens[common..], PREFILL_BATCH, stop)?;
        Ok(())
    }

    fn run(&mut self, ctx: &mut LlamaContext<'_>, job: &Job, closing: &AtomicBool) -> Result<Completion, LlmError> {
        let seq = sequence(job.kind);
        let prompt = self.tokenize(&job.prompt);
        let room = N_CTX as usize - prompt.len().min(N_CTX as usize);
        if room < 16 {
            return Err(LlmError::Local(format!(
                "the prompt is {} tokens; the built-in model's window is {N_CTX}",
                prompt.len()
            )));
        }
        let max_tokens = (job.max_tokens as usize).min(room - 1);

        // Reuse the cached prefix; always re-decode at least the last prompt token so
        // there are fresh logits to sample from.
        let common = self.shared(seq, &prompt).min(prompt.len() - 1);
        self.keep_prefix(ctx, seq, common)?;
        self.stats =
            ChatStats { kind: job.kind, prompt_tokens: prompt.len(), reused_tokens: common, generated_tokens: 0 };
        let cancelled = || job.cancel.is_cancelled() || closing.load(Ordering::SeqCst);
        let Some(mut last_idx) = self.extend(ctx, seq, &prompt[common..], N_BATCH as usize, &mut || cancelled())?
        else {
            return Err(LlmError::Cancelled);
        };

        let mut chooser = self.chooser(job)?;
        let vocab = self.model.vocab();
        let mut out = StopFilter::new(&job.stop);
        let mut utf8 = Vec::new();
        let mut produced = 0u32;
        let mut finish = FinishReason::Length;
        let mut batch = LlamaBatch::new(1, 1);
        while (produced as usize) < max_tokens {
            if cancelled() {
                return Err(LlmError::Cancelled);
            }
            let token = match &mut chooser {
                Chooser::Greedy(g) => LlamaToken(g.pick(ctx.get_logits_ith(last_idx))),
                // `sample` also accepts the token into the sampler state (grammar included).
                Chooser::Sampler(s) => s.sample(ctx, last_idx),
            };
            if vocab.is_eog(token) && !job.ignore_eos {
                finish = FinishReason::Stop;
                break;
            }
            let logprob =
                if job.logprobs { log_softmax_at(ctx.get_logits_ith(last_idx), token.0 as usize) } else { None };
            produced += 1;
            self.stats.generated_tokens = produced as usize;
            utf8.extend(vocab.token_to_piece(token, false, None));
            // Emit only whole UTF-8 characters; a multi-byte one may span tokens.
            let valid = match std::str::from_utf8(&utf8) {
                Ok(s) => s.len(),
                Err(e) => e.valid_up_to(),
            };
            let (emit, stopped) = out.push(&String::from_utf8_lossy(&utf8[..valid]));
            utf8.drain(..valid);
            if !emit.is_empty() {
                job.tokens.push(emit, logprob);
            }
            if stopped {
                finish = FinishReason::Stop;
                break;
            }
            if produced as usize == max_tokens {
                // No logits are needed after the last token; it is decoded (and cached)
                // by the next call if that call's prompt continues with it.
                break;
            }
            batch.clear();
            batch.add(token, self.cached[seq].len() as i32, &[seq as i32], true).map_err(local)?;
            ctx.decode(&mut batch).map_err(local)?;
            self.cached[seq].push(token);
            last_idx = 0;
        }
        let tail = out.finish();
        if !tail.is_empty() {
            job.tokens.push(tail, None);
        }
        Ok(Completion { text: out.text, tokens_in: prompt.len() as u32, tokens_out: produced, finish })
    }

    /// Greedy replies (temperature 0, no grammar) are chosen on the logits directly; the rest
    /// go through llama.cpp's sampler chain.
    fn chooser(&self, job: &Job) -> Result<Chooser, LlmError> {
        if !job.json && job.temperature <= 0.0 {
            return Ok(Chooser::Greedy(PenalizedGreedy::new(REPEAT_LAST_N as usize, REPEAT_PENALTY)));
        }
        let mut chain = Vec::new();
        if job.json {
            chain.push(LlamaSampler::grammar(self.model, JSON_GRAMMAR, "root").map_err(local)?);
        }
        if !job.json {
            // SmolLM2-135M falls into sentence loops ("I'm here to help. But I'm not a
            // doctor. I'm here to help. …") until the token cap; a mild penalty on the last
            // 64 tokens breaks them. Never on JSON, whose braces and quotes must repeat.
            chain.push(LlamaSampler::penalties(self.model.n_vocab(), REPEAT_LAST_N, REPEAT_PENALTY, 0.0, 0.0));
        }
        if job.temperature <= 0.0 {
            chain.push(LlamaSampler::greedy());
        } else {
            chain.push(LlamaSampler::top_k(40));
            chain.push(LlamaSampler::top_p(0.95, 1));
            chain.push(LlamaSampler::temp(job.temperature));
            chain.push(LlamaSampler::dist(rand_seed()));
        }
        Ok(Chooser::Sampler(LlamaSampler::chain_simple(chain)))
    }
}

/// How a generation picks its tokens.
enum Chooser {
    Greedy(PenalizedGreedy),
    Sampler(LlamaSampler),
}

fn rand_seed() -> u32 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    #[test]
    fn threads_default_to_half_the_cores_unless_overridden() {
        let half = (Threads::all_cores().batch / 2).max(1);
        let default = Threads::from_spec(None);
        assert_eq!(default, Threads { decode: half, batch: half });
        assert_eq!(Threads::from_spec(Some("3")), Threads { decode: 3, batch: 3 });
        assert_eq!(Threads::from_spec(Some(" 1, 4 ")), Threads { decode: 1, batch: 4 });
        for bad in ["", "0", "-2", "two", "1,", "1,2,3", "1,0"] {
            assert_eq!(Threads::from_spec(Some(bad)), default, "{bad:?}");
        }
    }

    #[test]
    fn chatml_marks_only_template_tokens_special() {
        let req = ChatRequest::new(vec![Message::system("Be brief."), Message::user("hi <|im_end|>")]);
        let segs = chatml(&req);
        assert_eq!(segs[0], Segment::Special("<|im_start|>system\n".into()));
        assert_eq!(segs[4], Segment::Text("hi <|im_end|>".into()));
        assert_eq!(segs.last(), Some(&Segment::Special("<|im_start|>assistant\n".into())));
    }

    #[test]
    fn a_prefix_renders_as_the_start_of_the_full_prompt_with_its_last_message_open() {
        let full = ChatRequest::new(vec![
            Message::system("Be brief."),
            Message::user("hi"),
            Message::assistant("hello"),
            Message::system("Answer directly.\n\nFacts: none"),
            Message::user("and now?"),
        ]);
        let mut start = full.clone();
        start.messages.truncate(4);
        start.messages[3].content = "Answer directly.".into();
        let (prefix, whole) = (chatml_prefix(&start), chatml(&full));
        let open = prefix.len() - 1;
        assert_eq!(prefix[..open], whole[..open]);
        assert_eq!(prefix[open], Segment::Text("Answer directly.".into()));
        assert!(matches!(&whole[open], Segment::Text(t) if t.starts_with("Answer directly.")));
    }
}
