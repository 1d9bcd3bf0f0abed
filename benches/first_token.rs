//! Enter → first streamed token on the built-in model, through the engine.
//!
//! What the TUI does when the user presses Enter: `Runtime::intake` stores and announces the
//! message, then `Engine::turn` runs Phase A context, topic (with the built-in MiniLM
//! embedding), intent, routing and the reply prompt, and streams the reply from SmolLM2. The
//! figure is the time from just before `intake` to the bus stamp of the first `LlmToken` of the
//! turn's reply call (the first piece the chat pane could draw). The models are what the default
//! config resolves to with nothing else running (the built-in ones, `auto` settings as they
//! resolve for them); background workers are not started, so nothing competes between turns.
//!
//! Every message carries the same long paragraph of detail, so with the exchanges working
//! memory holds the reply prompt is ~600 tokens or more; two turns run first to load the models
//! and fill the KV cache. Before each measured Enter the bench does what the TUI does while
//! the user reads and types: after each turn the engine has the chat model decode the next
//! reply's prefix (persona, conversation, the RESPOND prompt); then the message is typed and
//! handed over as a draft at a pause (`Engine::prefill_draft`, which the TUI calls once typing
//! pauses; it decodes the draft and the sections the turn would add for it), the bench waits
//! until the model is idle, and Enter sends the whole message. That cached prefix is the warm
//! KV prefix the figures are about:
//! - `first_token_600_warm`: the pause came before the last word, so at Enter the model
//!   decodes the last word and the reply's header (and, when the turn's sections differ from
//!   the draft's preview, everything from the first difference: the message too);
//! - `first_token_600_whole_draft`: the pause came after the last word (the user read the
//!   message over before Enter), so only the reply's header is left when the preview was right.
//!
//! The two alternate in blocks of six turns (every message once), so they share the load.
//! Per turn the split is printed: up to `Routed`, up to the reply call's `LlmStart`, and to
//! the first token; the prompt's size from `LlmCost`, and how many of its tokens the KV cache
//! served. A turn with no reply token says which mode it was routed to and how it was answered.
//! `first_token_no_pause` is the same with Enter pressed as soon as the previous turn returns
//! and no draft (the prefill then gives way to the new turn's calls).
//!
//! `cargo bench --bench first_token`. Needs the built-in models (fetched on first run).

#[path = "support/benchfig.rs"]
mod benchfig;

use chalie::config::{Config, Paths, Role};
use chalie::events::{EngineEvent, Stamped};
use chalie::llm::local::fetch::Fetcher;
use chalie::llm::local::{CHAT_MODEL, EMBED_MODEL, LocalProvider};
use chalie::llm::{Llm, PromptKind, Route};
use chalie::runtime::Runtime;
use chrono::{DateTime, Utc};
use criterion::{Criterion, criterion_group, criterion_main};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::TryRecvError;
use tokio_util::sync::CancellationToken;

fn models_dir() -> PathBuf {
    let dir = std::env::var_os("CHALIE_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/models"));
    if let Err(e) = Fetcher::default().fetch(&dir, &mut |_| {}) {
        panic!("cannot fetch the built-in models: {e}");
    }
    dir
}

/// Earlier exchanges of the thread: enough text that the reply prompt reaches ~600 tokens.
const HISTORY: &[(&str, &str)] = &[
    (
        "I'm planning a trip to Lisbon in October with my sister and we want to eat well without spending too much.",
        "October is a good month for Lisbon: the summer crowds are gone and it is still warm. For food, look for \
         tascas in Alfama and Mouraria, where a set lunch with soup, a main and a drink is cheap.",
    ),
    (
        "Which neighbourhoods are nice to stay in if we want to walk everywhere and not take taxis at night?",
        "Baixa and Chiado are central and flat by Lisbon standards; Príncipe Real is quieter and close to the \
         viewpoints. Alfama is charming but steep, with narrow streets that are confusing after dark.",
    ),
    (
        "Is October still warm enough for the beaches there, or should we plan a day trip somewhere else instead?",
        "The sea is cool but the beaches at Cascais and Costa da Caparica are pleasant on sunny days. If the \
         weather turns, Sintra's palaces and gardens make a good day trip by train from Rossio station.",
    ),
    (
        "How much should we budget per day for food if we eat one proper meal and snack the rest of the time?",
        "Around thirty to forty euros each a day is comfortable: a set lunch costs twelve to fifteen, pastries \
         and coffee a few euros, and a simple dinner with wine about twenty.",
    ),
];

/// Added to every message: with the two exchanges of working memory, a ~600-token prompt.
const MESSAGES_DETAIL: &str = "For context: we arrive on a Thursday evening flight, stay five nights in a small \
    apartment near the river, and my sister does not eat meat but loves fish and sweets. We like walking, old \
    churches, tiled facades, bookshops and quiet viewpoints more than nightlife, and we would rather take trams \
    and trains than taxis. Our budget is moderate and we want one or two memorable dinners.";
/// Turns behind the two paused BENCHFIG figures together (blocks of six, alternating), and
/// behind the no-pause one.
const MEASURED: usize = 36;
const MEASURED_NO_PAUSE: usize = 6;

/// When the draft was last handed over before Enter.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pause {
    /// No draft: Enter as soon as the previous turn returns.
    None,
    /// Before the message's last word.
    LastWord,
    /// After the whole message.
    Whole,
}

const MESSAGES: &[&str] = &[
    "What should we see on our first afternoon there?",
    "Are there any good markets we should visit for lunch?",
    "Do we need to book the Sintra palaces in advance?",
    "Which pastries should we try besides the custard tarts?",
    "Is it easy to get from the airport to the centre by metro?",
    "What is a good rainy-day plan in the city?",
];

/// Stamps of one turn, relative to Enter: routed, reply call started, first reply token.
#[derive(Default, Clone)]
struct Split {
    routed: f64,
    reply_start: f64,
    first_token: f64,
    prompt_tokens: u32,
    /// Reply prompt tokens the KV cache served (from the chat model's stats).
    reused: usize,
    /// Model calls of the turn other than the reply (they have a KV sequence of their own),
    /// and how many of them were on the primary role.
    other_calls: usize,
    other_primary: usize,
    /// Events the receiver missed (the bus overran it): the turn's figures may lack some.
    lagged: u64,
    /// The reply call failed after its first token (on a saturated machine: its deadline),
    /// so no `LlmCost` gave the prompt's size; the chat model's stats do.
    failed: Option<String>,
    /// The delivered mode and the start of the reply, for a turn with no reply token.
    mode: Option<chalie::cognition::router::Mode>,
    reply: String,
}

/// Read the turn's events (all emitted by the time `turn` returns) and place them in time.
fn split(rx: &mut broadcast::Receiver<Stamped>, enter: DateTime<Utc>) -> Result<Split, Split> {
    let ms = |ts: DateTime<Utc>| (ts - enter).num_microseconds().unwrap_or(0) as f64 / 1e3;
    let mut s = Split::default();
    // The reply's call is the one whose token the first `ReplyChunk` passes on (the layer
    // emits `LlmToken`, then the engine the chunk): another call on the primary role (a
    // helper's) may start first.
    let mut first_tokens: Vec<(String, f64, String)> = Vec::new();
    let mut reply_call: Option<String> = None;
    let mut got_token = false;
    let (mut starts, mut costs, mut failures) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        let e = match rx.try_recv() {
            Ok(e) => e,
            Err(TryRecvError::Lagged(n)) => {
                s.lagged += n;
                continue;
            }
            Err(TryRecvError::Empty | TryRecvError::Closed) => break,
        };
        match e.event {
            EngineEvent::Routed { mode, .. } => {
                s.routed = ms(e.ts);
                s.mode = Some(mode);
            }
            EngineEvent::ReplyChunk { text, .. } => {
                if s.reply.is_empty()
                    && let Some((call, at, _)) = first_tokens.iter().rev().find(|t| t.2 == text)
                {
                    reply_call = Some(call.clone());
                    s.first_token = *at;
                    got_token = true;
                }
                if s.reply.len() < 80 {
                    s.reply.push_str(&text);
                }
            }
            EngineEvent::LlmStart { call_id, role, .. } if role != Role::Embedding => {
                starts.push((call_id, ms(e.ts), role));
            }
            EngineEvent::LlmToken { call_id, text, .. } if !first_tokens.iter().any(|t| t.0 == call_id) => {
                first_tokens.push((call_id, ms(e.ts), text));
            }
            EngineEvent::LlmCost { call_id, tokens_in, .. } => costs.push((call_id, tokens_in)),
            EngineEvent::LlmFailed { call_id, error, .. } => failures.push((call_id, error)),
            _ => {}
        }
    }
    for (call, at, role) in starts {
        if reply_call.as_ref() == Some(&call) {
            s.reply_start = at;
        } else {
            s.other_calls += 1;
            if role == Role::Primary {
                s.other_primary += 1;
            }
        }
    }
    s.prompt_tokens = costs.into_iter().find(|(call, _)| reply_call.as_ref() == Some(call)).map_or(0, |c| c.1);
    s.failed = failures.into_iter().find(|(call, _)| reply_call.as_ref() == Some(call)).map(|(_, e)| e);

    if got_token { Ok(s) } else { Err(s) }
}

fn bench(c: &mut Criterion) {
    let models = models_dir();
    let dir = tempfile::tempdir().expect("tempdir");
    let paths = Paths::in_dir(dir.path(), &models);
    let tok = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let rt = Runtime::start(paths, Config::defaults()).expect("runtime");
    // What the default config resolves to with no Ollama: every role on the built-in models.
    let local = Arc::new(LocalProvider::new("local", &models));
    let routes = Role::ALL.map(|role| {
        let model = if role == Role::Embedding { EMBED_MODEL } else { CHAT_MODEL };
        (role, Route { provider: local.clone(), model: model.into(), builtin: true })
    });
    let llm = Arc::new(Llm::new(rt.bus.clone(), rt.config.llm.clone(), routes));
    eprintln!("reply model: {}", llm.describe(Role::Primary));
    let engine =
        tok.block_on(chalie::cognition::pipeline::Engine::start(rt.db.clone(), llm, rt.bus.clone())).expect("engine");
    let cancel = CancellationToken::new();
    let thread = "first-token-bench".to_string();

    // History stored as earlier exchanges, then turns until the prompt is warm in the cache.
    tok.block_on(async {
        for (user, reply) in HISTORY {
            let (t, x) = rt.intake(Some(thread.clone()), user.to_string()).await.expect("intake");
            let (t2, x2, r) = (t.clone(), x.clone(), reply.to_string());
            rt.db
                .call(move |c| chalie::store::ChatRepo(c).append(&t2, &x2, "assistant", &r, None, None))
                .await
                .expect("history");
        }
    });
    let mut rx = rt.bus.subscribe();
    let mut turn = |i: usize, pause: Pause| -> Option<Split> {
        let text = format!("{} {MESSAGES_DETAIL}", MESSAGES[i % MESSAGES.len()]);
        let text = text.as_str();
        if pause != Pause::None {
            // Read the reply, type the message (but its last word), pause: the TUI hands the
            // draft over; the model decodes it while the last word is typed or read over.
            tok.block_on(local.chat_idle()).expect("chat model idle");
            let draft = match pause {
                Pause::LastWord => text.rsplit_once(' ').map_or(text, |(typed, _)| typed),
                _ => text,
            };
            tok.block_on(engine.prefill_draft(Some(&thread), draft));
            tok.block_on(local.chat_idle()).expect("chat model idle");
        }
        let _ = split(&mut rx, Utc::now());
        let enter = Utc::now();
        tok.block_on(async {
            let (t, x) = rt.intake(Some(thread.clone()), text.to_string()).await.expect("intake");
            engine.turn(&t, &x, text, &cancel).await.expect("turn");
        });
        let mut s = match split(&mut rx, enter) {
            Ok(s) => Some(s),
            Err(s) => {
                let mode = s.mode.map_or("none".to_string(), |m| format!("{m:?}"));
                eprintln!("turn {i}: no reply token; routed to {mode}, answered {:?}", s.reply);
                None
            }
        };
        if let (Some(s), Some(c)) = (&mut s, local.last_chat_stats()) {
            s.reused = if c.kind == PromptKind::Conversation { c.reused_tokens } else { 0 };
            if s.prompt_tokens == 0 && c.kind == PromptKind::Conversation {
                s.prompt_tokens = c.prompt_tokens as u32;
            }
            let mut notes = String::new();
            if s.lagged > 0 {
                notes += &format!("; {} events missed", s.lagged);
            }
            if let Some(e) = &s.failed {
                notes += &format!("; the reply call failed after its first token: {e}");
            }
            if s.other_primary > 0 {
                notes += &format!(" ({} on the primary role)", s.other_primary);
            }
            eprintln!(
                "turn {i}{}: routed {:.1} ms, reply call {:.1} ms, first token {:.1} ms; reply prompt {} tokens, \
                 {} from the KV cache, {} decoded at Enter; other calls {}{}",
                match pause {
                    Pause::None => " (no pause)",
                    Pause::LastWord => "",
                    Pause::Whole => " (whole draft)",
                },
                s.routed,
                s.reply_start,
                s.first_token,
                s.prompt_tokens,
                s.reused,
                (s.prompt_tokens as usize).saturating_sub(s.reused),
                s.other_calls,
                notes
            );
        }
        s
    };
    for i in 0..2 {
        let _ = turn(i, Pause::LastWord);
    }

    // The figures: plain turns, so `--figures` (no criterion group) still measures them.
    let no_pause: Vec<Split> = (2..2 + MEASURED_NO_PAUSE).filter_map(|i| turn(i, Pause::None)).collect();
    let mut i = 2 + MEASURED_NO_PAUSE;
    let (mut splits, mut whole) = (Vec::new(), Vec::new());
    for j in 0..MEASURED {
        // Blocks of every message once, so each figure has the same messages.
        let pause = if (j / MESSAGES.len()).is_multiple_of(2) { Pause::LastWord } else { Pause::Whole };
        let s = turn(i + j, pause);
        match pause {
            Pause::Whole => whole.extend(s),
            _ => splits.extend(s),
        }
    }
    i += MEASURED;
    let mut g = c.benchmark_group("first_token");
    g.sample_size(10).measurement_time(Duration::from_secs(20)).warm_up_time(Duration::from_secs(1));
    g.bench_function("enter_to_first_token_600", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                if let Some(s) = turn(i, Pause::LastWord) {
                    total += Duration::from_secs_f64(s.first_token / 1e3);
                    splits.push(s);
                }
                i += 1;
            }
            total
        })
    });
    g.finish();

    let med = |v: &[f64]| benchfig::quantile(v, 0.5);
    let summary = |what: &str, splits: &[Split]| -> Vec<f64> {
        let col = |f: fn(&Split) -> f64| -> Vec<f64> { splits.iter().map(f).collect() };
        let tokens: Vec<f64> = col(|s| f64::from(s.prompt_tokens));
        let range = |v: &[f64]| v.iter().copied().fold((f64::MAX, 0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
        let (lo, hi) = range(&tokens);
        let at_enter = col(|s| f64::from(s.prompt_tokens) - s.reused as f64);
        let (elo, ehi) = range(&at_enter);
        eprintln!(
            "{what}: {} turns; medians: routed {:.1} ms, reply call started {:.1} ms, first token {:.1} ms; prompt \
             {:.0} tokens ({lo:.0}–{hi:.0}), {:.0} from the KV cache, {:.0} decoded at Enter ({elo:.0}–{ehi:.0})",
            splits.len(),
            med(&col(|s| s.routed)),
            med(&col(|s| s.reply_start)),
            med(&col(|s| s.first_token)),
            med(&tokens),
            med(&col(|s| s.reused as f64)),
            med(&at_enter),
        );
        col(|s| s.first_token)
    };
    let first = summary("pause before the last word", &splits);
    benchfig::print("first_token_600_warm", &first, None, "<150ms");
    let first_whole = summary("whole message handed over", &whole);
    benchfig::print("first_token_600_whole_draft", &first_whole, None, "<150ms");
    let first_np: Vec<f64> = no_pause.iter().map(|s| s.first_token).collect();
    let reused_np: Vec<f64> = no_pause.iter().map(|s| s.reused as f64).collect();
    eprintln!(
        "no pause: {} turns, first token {:.1} ms median, {:.0} tokens from the KV cache",
        no_pause.len(),
        med(&first_np),
        med(&reused_np)
    );
    benchfig::print("first_token_no_pause", &first_np, None, "report");
    drop(engine);
    rt.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
