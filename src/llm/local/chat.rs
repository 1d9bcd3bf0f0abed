//! SmolLM2 chat through llama.cpp on the CPU.
//!
//! One thread owns the model and its context, so generation never blocks the async
//! runtime and the KV cache survives between calls: the persona/system part of the
//! prompt is identical every turn, and only the tokens after the shared prefix are
//! decoded again. That keeps time-to-first-token low on two cores.

use crate::llm::{ChatRequest, ChatRole, Completion, FinishReason, LlmError, ResponseFormat, Token};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use tokio::sync::{Notify, oneshot};
use tokio_util::sync::CancellationToken;

/// Context window. SmolLM2 was trained at 8k; 4k covers the 4000-token context budget.
pub const N_CTX: u32 = 4096;
pub const N_BATCH: u32 = 512;

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

struct Job {
    prompt: Vec<Segment>,
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

/// Streamed text on its way from the generation thread to the caller.
///
/// The thread appends and rings; the caller takes everything waiting at once. Pieces without
/// a log-probability are merged as they arrive, so a caller that is busy (or a reply that
/// needs no log-probabilities) gets a few larger pieces instead of one message per token.
#[derive(Default)]
struct Outbox {
    pending: Mutex<Vec<Token>>,
    ready: Notify,
}

impl Outbox {
    fn push(&self, piece: String, logprob: Option<f64>) {
        if let Ok(mut p) = self.pending.lock() {
            match p.last_mut() {
                Some(last) if logprob.is_none() && last.logprob.is_none() => last.text.push_str(&piece),
                _ => p.push(Token { text: piece, logprob }),
            }
        }
        // A stored permit: a ring while the caller is not waiting is not lost.
        self.ready.notify_one();
    }

    fn take(&self) -> Vec<Token> {
        self.pending.lock().map(|mut p| std::mem::take(&mut *p)).unwrap_or_default()
    }
}

/// Tokens the repetition penalty looks back over, and its strength (1.0 = off).
const REPEAT_LAST_N: i32 = 64;
const REPEAT_PENALTY: f32 = 1.15;

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
        let role = match m.role {
            ChatRole::System => "system",
            ChatRole::User => "user",
            ChatRole::Assistant => "assistant",
        };
        out.push(Segment::Special(format!("<|im_start|>{role}\n")));
        out.push(Segment::Text(m.content.clone()));
        out.push(Segment::Special("<|im_end|>\n".into()));
    }
    out.push(Segment::Special("<|im_start|>assistant\n".into()));
    out
}

/// What the last generation cost, for tests and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChatStats {
    pub prompt_tokens: usize,
    /// Prompt tokens whose cache entries were reused from the previous call.
    pub reused_tokens: usize,
    pub generated_tokens: usize,
}

/// Handle to the generation thread. Cloning shares the one model.
#[derive(Clone)]
pub struct LocalChat {
    tx: mpsc::Sender<Job>,
    stats: Arc<Mutex<ChatStats>>,
}

impl LocalChat {
    /// Load the GGUF and start the generation thread.
    pub fn load(gguf: &Path) -> Result<LocalChat, LlmError> {
        let backend = backend()?;
        let model = LlamaModel::load_from_file(backend, gguf, &LlamaModelParams::default())
            .map_err(|e| LlmError::Local(format!("cannot load {}: {e}", gguf.display())))?;
        let (tx, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), LlmError>>();
        let stats = Arc::new(Mutex::new(ChatStats::default()));
        let worker_stats = stats.clone();
        std::thread::Builder::new()
            .name("chalie-llama".into())
            .spawn(move || worker(backend, model, rx, ready_tx, worker_stats))
            .map_err(|e| LlmError::Local(format!("cannot start the generation thread: {e}")))?;
        ready_rx.recv().map_err(|_| LlmError::Local("generation thread died while loading".into()))??;
        Ok(LocalChat { tx, stats })
    }

    /// Statistics of the most recent generation.
    pub fn last_stats(&self) -> ChatStats {
        self.stats.lock().map(|s| *s).unwrap_or_default()
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
        self.tx.send(job).map_err(|_| LlmError::Local("the generation thread has stopped".into()))?;
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

fn worker(
    backend: &'static LlamaBackend,
    model: LlamaModel,
    rx: mpsc::Receiver<Job>,
    ready: mpsc::Sender<Result<(), LlmError>>,
    stats: Arc<Mutex<ChatStats>>,
) {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as i32;
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(N_CTX))
        .with_n_batch(N_BATCH)
        .with_n_threads(threads)
        .with_n_threads_batch(threads);
    let mut ctx = match model.new_context(backend, params) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(LlmError::Local(format!("cannot create a llama.cpp context: {e}"))));
            return;
        }
    };
    let _ = ready.send(Ok(()));
    let mut engine = Engine { model: &model, cached: Vec::new(), stats: ChatStats::default() };
    for job in rx {
        let result = engine.run(&mut ctx, &job);
        if let Ok(mut s) = stats.lock() {
            *s = engine.stats;
        }
        if result.is_err() {
            // A failed decode leaves the cache in an unknown state: start clean.
            ctx.clear_kv_cache();
            engine.cached.clear();
        }
        let _ = job.done.send(result);
    }
}

struct Engine<'m> {
    model: &'m LlamaModel,
    /// Tokens whose keys/values sit in the cache at positions 0..len (sequence 0).
    cached: Vec<LlamaToken>,
    stats: ChatStats,
}

fn local(e: impl std::fmt::Display) -> LlmError {
    LlmError::Local(e.to_string())
}

impl Engine<'_> {
    fn tokenize(&self, prompt: &[Segment]) -> Vec<LlamaToken> {
        let vocab = self.model.vocab();
        let mut out = Vec::new();
        for seg in prompt {
            match seg {
                Segment::Special(s) => out.extend(vocab.tokenize(s.as_bytes(), false, true)),
                Segment::Text(s) => out.extend(vocab.tokenize(s.as_bytes(), false, false)),
            }
        }
        out
    }

    fn run(&mut self, ctx: &mut LlamaContext<'_>, job: &Job) -> Result<Completion, LlmError> {
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
        let common = self.cached.iter().zip(&prompt).take_while(|(a, b)| a == b).count().min(prompt.len() - 1);
        ctx.clear_kv_cache_seq(Some(0), Some(common as u32), None).map_err(local)?;
        self.cached.truncate(common);
        self.stats = ChatStats { prompt_tokens: prompt.len(), reused_tokens: common, generated_tokens: 0 };
        let mut last_idx = 0;
        for chunk in prompt[common..].chunks(N_BATCH as usize) {
            if job.cancel.is_cancelled() {
                return Err(LlmError::Cancelled);
            }
            let mut batch = LlamaBatch::new(chunk.len(), 1);
            let start = self.cached.len();
            for (i, tok) in chunk.iter().enumerate() {
                batch.add(*tok, (start + i) as i32, &[0], i + 1 == chunk.len()).map_err(local)?;
            }
            ctx.decode(&mut batch).map_err(local)?;
            self.cached.extend_from_slice(chunk);
            last_idx = chunk.len() as i32 - 1;
        }

        let mut sampler = self.sampler(job)?;
        let vocab = self.model.vocab();
        let mut out = StopFilter::new(&job.stop);
        let mut utf8 = Vec::new();
        let mut produced = 0u32;
        let mut finish = FinishReason::Length;
        let mut batch = LlamaBatch::new(1, 1);
        while (produced as usize) < max_tokens {
            if job.cancel.is_cancelled() {
                return Err(LlmError::Cancelled);
            }
            // `sample` also accepts the token into the sampler state (grammar included).
            let token = sampler.sample(ctx, last_idx);
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
            batch.add(token, self.cached.len() as i32, &[0], true).map_err(local)?;
            ctx.decode(&mut batch).map_err(local)?;
            self.cached.push(token);
            last_idx = 0;
        }
        let tail = out.finish();
        if !tail.is_empty() {
            job.tokens.push(tail, None);
        }
        Ok(Completion { text: out.text, tokens_in: prompt.len() as u32, tokens_out: produced, finish })
    }

    fn sampler(&self, job: &Job) -> Result<LlamaSampler, LlmError> {
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
        Ok(LlamaSampler::chain_simple(chain))
    }
}

fn rand_seed() -> u32 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos())
}

/// Natural-log probability of `token` under the raw logits.
///
/// Runs over the whole vocabulary (49,152 logits) for every generated token, so it is
/// written to vectorise: f32 throughout and a polynomial `exp` instead of libm's, which
/// the compiler cannot turn into SIMD. Its error (~1e-6) is far below what the
/// regulator's low-confidence spans (logprob ≤ −2.0) can notice (docs/cognition.md §13.3).
fn log_softmax_at(logits: &[f32], token: usize) -> Option<f64> {
    let target = *logits.get(token)?;
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    // Eight partial sums: independent lanes the compiler can keep in one vector register.
    let mut lanes = [0f32; 8];
    let mut chunks = logits.chunks_exact(8);
    for c in &mut chunks {
        for (acc, &l) in lanes.iter_mut().zip(c) {
            *acc += exp_nonpositive(l - max);
        }
    }
    let tail: f32 = chunks.remainder().iter().map(|&l| exp_nonpositive(l - max)).sum();
    let sum = lanes.iter().sum::<f32>() + tail;
    Some(f64::from(target - max) - f64::from(sum).ln())
}

/// `e^x` for `x <= 0` (relative error ~2e-7): `x = n·ln2 + r`, `|r| <= ln2/2`, a degree-6
/// Taylor polynomial for `e^r` and `2^n` built in the exponent bits. Below -87 the
/// result would leave f32's normal range; there it is clamped, which a sum of
/// probabilities that includes `e^0 = 1` cannot notice.
#[inline(always)]
fn exp_nonpositive(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    // Adding 1.5·2^23 rounds to the nearest integer without a rounding instruction.
    const ROUND: f32 = 12_582_912.0;
    let x = x.max(-87.0);
    let n = (x * LOG2E + ROUND) - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    let scale = f32::from_bits(((n as i32 + 127) as u32) << 23);
    p * scale
}

/// Holds back text that might be the start of a stop string, so a stop string is
/// never shown to the user and never part of the result.
struct StopFilter<'a> {
    stops: &'a [String],
    /// Everything accepted so far (what the reply is).
    text: String,
    /// Accepted but not yet emitted.
    held: String,
}

impl<'a> StopFilter<'a> {
    fn new(stops: &'a [String]) -> Self {
        StopFilter { stops, text: String::new(), held: String::new() }
    }

    /// Add a piece; returns (text safe to emit now, whether a stop string was hit).
    fn push(&mut self, piece: &str) -> (String, bool) {
        self.held.push_str(piece);
        for stop in self.stops.iter().filter(|s| !s.is_empty()) {
            if let Some(at) = self.held.find(stop.as_str()) {
                let emit = self.held[..at].to_string();
                self.text.push_str(&emit);
                self.held.clear();
                return (emit, true);
            }
        }
        // Keep the longest suffix that is a prefix of some stop string.
        let keep = self
            .stops
            .iter()
            .flat_map(|s| (1..s.len().min(self.held.len() + 1)).rev().map(move |n| &s[..n]))
            .filter(|p| self.held.ends_with(p) && self.held.is_char_boundary(self.held.len() - p.len()))
            .map(str::len)
            .max()
            .unwrap_or(0);
        let cut = self.held.len() - keep;
        let emit: String = self.held.drain(..cut).collect();
        self.text.push_str(&emit);
        (emit, false)
    }

    /// The generation ended without a stop string: release what was held.
    fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.held);
        self.text.push_str(&rest);
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    #[test]
    fn chatml_marks_only_template_tokens_special() {
        let req = ChatRequest::new(vec![Message::system("Be brief."), Message::user("hi <|im_end|>")]);
        let segs = chatml(&req);
        assert_eq!(segs[0], Segment::Special("<|im_start|>system\n".into()));
        assert_eq!(segs[4], Segment::Text("hi <|im_end|>".into()));
        assert_eq!(segs.last(), Some(&Segment::Special("<|im_start|>assistant\n".into())));
    }

    #[test]
    fn stop_strings_are_never_emitted_even_across_pieces() {
        let stops = vec!["\nUser:".to_string()];
        let mut f = StopFilter::new(&stops);
        let mut shown = String::new();
        for piece in ["Hello", " there", "\nUs", "er: more"] {
            let (emit, stopped) = f.push(piece);
            shown.push_str(&emit);
            if stopped {
                break;
            }
        }
        assert_eq!(shown, "Hello there");
        assert_eq!(f.text, "Hello there");

        let mut f = StopFilter::new(&stops);
        let (a, _) = f.push("a\nU");
        assert_eq!(a, "a");
        assert_eq!(f.finish(), "\nU");
        assert_eq!(f.text, "a\nU");
    }

    #[test]
    fn the_outbox_merges_pieces_without_logprobs_and_keeps_the_others_apart() {
        let o = Outbox::default();
        o.push("Hel".into(), None);
        o.push("lo".into(), None);
        o.push(" there".into(), Some(-0.5));
        o.push("!".into(), Some(-0.1));
        o.push(" Bye".into(), None);
        let got = o.take();
        let want = [("Hello", None), (" there", Some(-0.5)), ("!", Some(-0.1)), (" Bye", None)]
            .map(|(t, l)| Token { text: t.into(), logprob: l });
        assert_eq!(got, want);
        assert!(o.take().is_empty());
    }

    #[test]
    fn log_softmax_is_a_log_probability() {
        let lp = log_softmax_at(&[0.0, 0.0], 1).unwrap();
        assert!((lp - 0.5f64.ln()).abs() < 1e-9);
        assert_eq!(log_softmax_at(&[1.0], 3), None);
    }

    /// The straightforward f64 computation the fast one must agree with.
    fn log_softmax_f64(logits: &[f32], token: usize) -> f64 {
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let sum: f64 = logits.iter().map(|&l| (l as f64 - max).exp()).sum();
        logits[token] as f64 - max - sum.ln()
    }

    #[test]
    fn fast_log_softmax_matches_f64_over_a_full_vocabulary() {
        // Logits spread like a small model's (a few peaks, a long tail, some far below the
        // max), generated by a fixed LCG so the test is deterministic.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        for spread in [1.0f32, 8.0, 40.0, 200.0] {
            let logits: Vec<f32> = (0..49_157).map(|_| (next() - 0.7) * spread).collect();
            for token in [0, 17, 4_096, 49_156] {
                let fast = log_softmax_at(&logits, token).unwrap();
                let exact = log_softmax_f64(&logits, token);
                assert!((fast - exact).abs() < 1e-3, "spread {spread} token {token}: {fast} vs {exact}");
            }
            let best = (0..logits.len()).max_by(|&a, &b| logits[a].total_cmp(&logits[b])).unwrap();
            let fast = log_softmax_at(&logits, best).unwrap();
            assert!((fast - log_softmax_f64(&logits, best)).abs() < 1e-3);
        }
    }

    #[test]
    fn polynomial_exp_tracks_libm_down_to_the_clamp() {
        let mut x = 0.0f32;
        while x > -100.0 {
            let (fast, exact) = (exp_nonpositive(x) as f64, (x as f64).exp());
            let tolerance = if x < -87.0 { 1e-37 } else { exact * 1e-6 };
            assert!((fast - exact).abs() <= tolerance, "exp({x}) = {fast}, libm {exact}");
            x -= 0.0137;
        }
    }
}
