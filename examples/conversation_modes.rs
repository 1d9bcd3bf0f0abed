//! Delivered modes on realistic multi-turn conversations, through the real `Engine` with the
//! real built-in embedding model, against hand labels and the healthy ranges of docs/cognition.md §6.8.
//!
//! `cargo run --example conversation_modes [-- [--all] [PATH.jsonl]]`
//!
//! - Input: `tests/data/conversations.jsonl`, one `{"conversation", "text", "expected"}` per line;
//!   each conversation is one thread, fed in order (the user message is stored first, as
//!   `Runtime::intake` does, then `engine.turn`).
//! - Models: the Embedding role is the built-in all-MiniLM-L6-v2 (`CHALIE_MODELS_DIR`, default
//!   `target/models`; nothing is fetched); every chat role is an instant in-process provider with
//!   a fixed reply (routing reads the reply only through working memory). Triage is `heuristic`,
//!   so tie-breaks resolve to the higher score, as on a model failure.
//! - `CHALIE_ROUTER_WEIGHTS="clarify.missing_object=0.5,respond.base=0.45"` overrides router
//!   weights for a calibration run (stored as the config's `[router.weights]` would be).
//! - No memory workers run, so gists and facts stay empty: the context signals are what a fresh
//!   install has (working memory, session, topic), the state this build's engine routes in.
//! - Prints: the delivered-mode distribution against docs/cognition.md §6.8, the labels' own distribution,
//!   agreement overall and per mode, the confusion matrix (all turns, then the calibration part
//!   — odd-numbered conversations — and the held-out part — even-numbered ones — separately),
//!   the tie-break rate, and every
//!   disagreement with the router's reason and the signals that decided it. `--all` prints every
//!   turn. A JSONL of every turn is written to `target/conversation_modes.jsonl`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use chalie::cognition::pipeline::{Engine, TurnReport};
use chalie::cognition::router::{HealthyRange, Mode, overrides};
use chalie::config::{LlmSettings, ModelUse, Role};
use chalie::events::EventBus;
use chalie::llm::local::{EMBED_MODEL, LocalProvider};
use chalie::llm::{ChatRequest, Completion, FinishReason, Llm, LlmError, Provider, Route, Token};
use chalie::store::{ChatRepo, Db};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A chat model that answers at once with one fixed, mode-neutral reply.
struct InstantChat;

const REPLY: &str = "Here is a short answer to that, with one suggestion for what to do next. Does that help?";

#[async_trait]
impl Provider for InstantChat {
    fn name(&self) -> &str {
        "instant"
    }

    async fn chat(
        &self,
        _model: &str,
        _req: &ChatRequest,
        on_token: &mut (dyn FnMut(Token) + Send),
        _cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        on_token(Token { text: REPLY.to_string(), logprob: None });
        Ok(Completion { text: REPLY.to_string(), tokens_in: 100, tokens_out: 20, finish: FinishReason::Stop })
    }

    async fn embed(&self, _model: &str, _inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        Err(LlmError::Local("the instant chat provider does not embed".into()))
    }
}

struct Turn {
    conversation: String,
    text: String,
    expected: Mode,
}

struct Outcome {
    turn: Turn,
    report: TurnReport,
}

fn parse_mode(s: &str) -> Option<Mode> {
    Mode::ALL.into_iter().find(|m| m.as_str().eq_ignore_ascii_case(s))
}

fn load(path: &PathBuf) -> anyhow::Result<Vec<Turn>> {
    let data = std::fs::read_to_string(path)?;
    let mut out = Vec::new();
    for (i, line) in data.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).map_err(|e| anyhow::anyhow!("{}:{}: {e}", path.display(), i + 1))?;
        let field = |k: &str| {
            v[k].as_str().map(str::to_string).ok_or_else(|| anyhow::anyhow!("{}:{}: no `{k}`", path.display(), i + 1))
        };
        let expected = field("expected")?;
        out.push(Turn {
            conversation: field("conversation")?,
            text: field("text")?,
            expected: parse_mode(&expected)
                .ok_or_else(|| anyhow::anyhow!("{}:{}: unknown mode {expected}", path.display(), i + 1))?,
        });
    }
    Ok(out)
}

fn verdict(mode: Mode, p: f64) -> &'static str {
    HealthyRange::of(mode).verdict(p)
}

fn pct(n: usize, total: usize) -> f64 {
    100.0 * n as f64 / total.max(1) as f64
}

fn short(m: Mode) -> &'static str {
    match m {
        Mode::Respond => "RESP",
        Mode::Clarify => "CLAR",
        Mode::Act => "ACT",
        Mode::Acknowledge => "ACK",
        Mode::Ignore => "IGN",
    }
}

/// The signals that decide most routes, in one line.
fn signal_line(r: &TurnReport) -> String {
    let s = &r.router.signals;
    let b = |k: &str| s[k].as_bool().unwrap_or(false);
    let f = |k: &str| s[k].as_f64().unwrap_or(f64::NAN);
    let mut flags = Vec::new();
    for k in ["has_question_mark", "interrogative_words", "greeting_pattern", "implicit_reference", "vague_reference"] {
        if b(k) {
            flags.push(k.trim_end_matches("_words").trim_end_matches("_pattern").to_string());
        }
    }
    if let Some(fb) = s["explicit_feedback"].as_str().filter(|x| *x != "none") {
        flags.push(format!("feedback={fb}"));
    }
    if s["derived"]["no_antecedent"].as_bool().unwrap_or(false) {
        flags.push("no_antecedent".into());
    }
    if s["derived"]["bare_negative_feedback"].as_bool().unwrap_or(false) {
        flags.push("bare_negative".into());
    }
    format!(
        "intent={} warmth={:.2} wm={} memconf={:.2} new_topic={} content_words={} [{}]",
        s["intent_type"].as_str().unwrap_or("?"),
        f("context_warmth"),
        s["working_memory_turns"].as_u64().unwrap_or(0),
        f("memory_confidence"),
        b("is_new_topic"),
        s["content_word_count"].as_u64().unwrap_or(0),
        flags.join(" ")
    )
}

fn scores_line(r: &TurnReport) -> String {
    let sc = &r.router.scores;
    Mode::ALL.iter().map(|m| format!("{}={:.2}", short(*m), sc.get(*m))).collect::<Vec<_>>().join(" ")
}

fn triage_line(r: &TurnReport) -> String {
    let t = &r.triage.result;
    let mode = serde_json::to_value(t.mode).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let src = serde_json::to_value(t.source).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let skills = if t.skills.is_empty() { String::new() } else { format!(" skills={}", t.skills.join(",")) };
    format!("triage={mode}/{src}{skills}")
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut all = false;
    let mut path = root.join("tests/data/conversations.jsonl");
    for a in std::env::args().skip(1) {
        if a == "--all" {
            all = true;
        } else {
            path = PathBuf::from(a);
        }
    }
    let models_dir =
        std::env::var_os("CHALIE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target/models"));
    let turns = load(&path)?;

    let dir = tempfile::tempdir()?;
    let db = Db::open(&dir.path().join("chalie.db"))?;
    let bus = EventBus::new();
    let chat: Arc<dyn Provider> = Arc::new(InstantChat);
    let local: Arc<dyn Provider> = Arc::new(LocalProvider::new("local", &models_dir));
    let settings = LlmSettings {
        triage: ModelUse::Heuristic,
        memory_extraction: ModelUse::Heuristic,
        critic: ModelUse::Heuristic,
        graph_router: ModelUse::Heuristic,
        graph_router_timeout_ms: 800,
        triage_timeout_ms: 500,
        tiebreak_timeout_ms: 500,
        request_timeout_ms: 60_000,
        max_retries: 0,
        regulator_token_cap: 10_000,
        regulator: Default::default(),
    };
    let routes = Role::ALL.map(|role| {
        let route = match role {
            Role::Embedding => Route { provider: local.clone(), model: EMBED_MODEL.to_string(), builtin: true },
            _ => Route { provider: chat.clone(), model: format!("instant-{}", role.as_str()), builtin: false },
        };
        (role, route)
    });
    let llm = Arc::new(Llm::new(bus.clone(), settings, routes));
    // Fail early, with the path, when the embedding model is not there.
    llm.embed(&["warm-up".to_string()])
        .await
        .map_err(|e| anyhow::anyhow!("embedding model unavailable in {}: {e}", models_dir.display()))?;
    // Weight overrides for calibration runs, stored the way `[router.weights]` in the config is.
    if let Ok(spec) = std::env::var("CHALIE_ROUTER_WEIGHTS") {
        let mut map = BTreeMap::new();
        for item in spec.split(',').filter(|x| !x.trim().is_empty()) {
            let (k, v) = item.split_once('=').ok_or_else(|| anyhow::anyhow!("`{item}`: expected name=value"))?;
            map.insert(k.trim().to_string(), v.trim().parse::<f64>()?);
        }
        println!("(router weight overrides: {map:?})");
        db.call(move |c| Ok(overrides::apply(c, &map))).await??;
    }
    let engine = Engine::start(db.clone(), llm, bus).await?;
    let cancel = CancellationToken::new();

    let started = std::time::Instant::now();
    let mut outcomes: Vec<Outcome> = Vec::new();
    for turn in turns {
        let thread = turn.conversation.clone();
        let xid = uuid::Uuid::now_v7().to_string();
        let (t, x, body) = (thread.clone(), xid.clone(), turn.text.clone());
        db.call(move |c| ChatRepo(c).append(&t, &x, "user", &body, None, None)).await?;
        let report = engine.turn(&thread, &xid, &turn.text, &cancel).await?;
        outcomes.push(Outcome { turn, report });
    }
    let elapsed = started.elapsed().as_secs_f64();
    let n = outcomes.len();
    let conversations =
        outcomes.iter().map(|o| o.turn.conversation.as_str()).collect::<std::collections::BTreeSet<_>>();
    println!(
        "== {}: {n} user messages in {} conversations ({elapsed:.1} s, {:.1} ms per turn incl. embedding)",
        path.display(),
        conversations.len(),
        1000.0 * elapsed / n.max(1) as f64
    );

    // Distribution.
    let mut got: BTreeMap<Mode, usize> = BTreeMap::new();
    let mut want: BTreeMap<Mode, usize> = BTreeMap::new();
    let mut confusion: BTreeMap<(Mode, Mode), usize> = BTreeMap::new();
    for o in &outcomes {
        *got.entry(o.report.mode).or_default() += 1;
        *want.entry(o.turn.expected).or_default() += 1;
        *confusion.entry((o.turn.expected, o.report.mode)).or_default() += 1;
    }
    println!("\n== delivered modes vs the healthy ranges (cognition.md §6.8), and the labels' own distribution");
    println!(
        "   {:<12} {:>9} {:>8}   {:<16} {:>9} {:>8}   {:<28}",
        "mode", "delivered", "share", "verdict", "labelled", "share", "healthy (cognition.md §6.8)"
    );
    for mode in Mode::ALL {
        let g = got.get(&mode).copied().unwrap_or(0);
        let w = want.get(&mode).copied().unwrap_or(0);
        println!(
            "   {:<12} {:>9} {:>7.1} %   {:<16} {:>9} {:>7.1} %   {:<28}",
            mode.as_str(),
            g,
            pct(g, n),
            verdict(mode, pct(g, n)),
            w,
            pct(w, n),
            HealthyRange::of(mode).label
        );
    }

    // Agreement.
    let ok = outcomes.iter().filter(|o| o.report.mode == o.turn.expected).count();
    let respond_baseline = want.get(&Mode::Respond).copied().unwrap_or(0);
    println!(
        "\n== agreement with the labels: {:.1} % ({ok}/{n}); always-RESPOND baseline {:.1} %",
        pct(ok, n),
        pct(respond_baseline, n)
    );
    println!("   {:<12} {:>16} {:>18}", "mode", "recall (of label)", "precision (of got)");
    for mode in Mode::ALL {
        let tp = confusion.get(&(mode, mode)).copied().unwrap_or(0);
        let w = want.get(&mode).copied().unwrap_or(0);
        let g = got.get(&mode).copied().unwrap_or(0);
        let cell =
            |a: usize, b: usize| if b == 0 { "   -".to_string() } else { format!("{:5.1} % ({a}/{b})", pct(a, b)) };
        println!("   {:<12} {:>16} {:>18}", mode.as_str(), cell(tp, w), cell(tp, g));
    }
    print_confusion("confusion matrix, all conversations", &outcomes.iter().collect::<Vec<_>>());
    let (calibration, held_out): (Vec<&Outcome>, Vec<&Outcome>) =
        outcomes.iter().partition(|o| is_calibration(&o.turn.conversation));
    print_confusion("calibration part (odd-numbered conversations)", &calibration);
    print_confusion("held-out part (even-numbered conversations)", &held_out);

    // Tie-breaks, social exits, triage overrides.
    let ties: Vec<&Outcome> = outcomes.iter().filter(|o| o.report.router.tiebreaker_candidates.is_some()).collect();
    let mut pairs: BTreeMap<String, usize> = BTreeMap::new();
    for o in &ties {
        let [a, b] = o.report.router.tiebreaker_candidates.unwrap_or([Mode::Respond, Mode::Respond]);
        *pairs.entry(format!("{}/{}", a.as_str(), b.as_str())).or_default() += 1;
    }
    println!(
        "\n== tie-break requested on {:.1} % ({}/{n}) — resolved to the higher score (heuristic triage, no model): {}",
        pct(ties.len(), n),
        ties.len(),
        pairs.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
    );
    let social = outcomes.iter().filter(|o| o.report.social.is_some()).count();
    let triage_act = outcomes.iter().filter(|o| o.report.router.reason.starts_with("triage chose ACT")).count();
    let identity = outcomes.iter().filter(|o| o.report.router.reason.starts_with("identity hook")).count();
    let new_topics = outcomes.iter().filter(|o| o.report.topic.is_new_topic).count();
    println!(
        "   social exits {social}, triage-confirmed ACT overrides {triage_act}, identity-hook ACKs {identity}, \
         new topics {new_topics}"
    );

    // Disagreements.
    println!("\n== disagreements ({}), grouped by expected → delivered", n - ok);
    let mut groups: BTreeMap<(Mode, Mode), Vec<&Outcome>> = BTreeMap::new();
    for o in outcomes.iter().filter(|o| o.report.mode != o.turn.expected) {
        groups.entry((o.turn.expected, o.report.mode)).or_default().push(o);
    }
    for ((e, g), list) in &groups {
        println!("\n-- expected {} → delivered {} ({})", e.as_str(), g.as_str(), list.len());
        for o in list {
            print_turn(o);
        }
    }
    if all {
        println!("\n== every turn");
        for o in &outcomes {
            print_turn(o);
        }
    }

    let out = root.join("target/conversation_modes.jsonl");
    let lines: Vec<String> = outcomes
        .iter()
        .map(|o| {
            json!({
                "conversation": o.turn.conversation, "text": o.turn.text, "expected": o.turn.expected,
                "got": o.report.mode, "scored_mode": o.report.router.scored_mode, "reason": o.report.router.reason,
                "scores": o.report.router.scores, "confidence": o.report.router.confidence,
                "tiebreak": o.report.router.tiebreaker_candidates, "previous_mode": o.report.router.previous_mode,
                "social": o.report.social,
                "triage": o.report.triage.result, "topic": o.report.topic, "signals": o.report.router.signals,
            })
            .to_string()
        })
        .collect();
    if std::fs::write(&out, lines.join("\n") + "\n").is_ok() {
        println!("\n(every turn written to {})", out.display());
    }
    Ok(())
}

/// The conversations the router's weights may be tuned on: odd-numbered ones ("c01", "c03", …);
/// the even-numbered ones are held out, the way `calibration::holdout_set` is.
fn is_calibration(conversation: &str) -> bool {
    conversation.trim_start_matches(|c: char| !c.is_ascii_digit()).parse::<u32>().is_ok_and(|n| n % 2 == 1)
}

/// Agreement, the CLARIFY share and the confusion matrix of a set of turns.
fn print_confusion(name: &str, outcomes: &[&Outcome]) {
    let n = outcomes.len();
    let mut confusion: BTreeMap<(Mode, Mode), usize> = BTreeMap::new();
    for o in outcomes {
        *confusion.entry((o.turn.expected, o.report.mode)).or_default() += 1;
    }
    let ok = outcomes.iter().filter(|o| o.report.mode == o.turn.expected).count();
    let clarify = outcomes.iter().filter(|o| o.report.mode == Mode::Clarify).count();
    println!(
        "\n== {name}: {n} turns, agreement {:.1} % ({ok}/{n}), CLARIFY delivered {:.1} % ({clarify}/{n}) \
         (rows: expected, columns: delivered)",
        pct(ok, n),
        pct(clarify, n)
    );
    println!("   {:<10}{}", "", Mode::ALL.iter().map(|m| format!("{:>6}", short(*m))).collect::<String>());
    for e in Mode::ALL {
        let row: String =
            Mode::ALL.iter().map(|g| format!("{:>6}", confusion.get(&(e, *g)).copied().unwrap_or(0))).collect();
        println!("   {:<10}{row}", short(e));
    }
}

fn print_turn(o: &Outcome) {
    let r = &o.report;
    let mark = if r.mode == o.turn.expected { " " } else { "✗" };
    println!(
        " {mark} [{}] {:?}\n      expected {} got {} — {}\n      {} | {} | conf={:.2} eff_margin={:.2}{}{}\n      {} | topic={}{}",
        o.turn.conversation,
        o.turn.text,
        o.turn.expected.as_str(),
        r.mode.as_str(),
        r.router.reason,
        scores_line(r),
        triage_line(r),
        r.router.confidence,
        r.router.effective_margin,
        r.router.tiebreaker_candidates.map(|[a, b]| format!(" tie={}/{}", a.as_str(), b.as_str())).unwrap_or_default(),
        r.router.previous_mode.map(|m| format!(" prev={}", m.as_str())).unwrap_or_default(),
        signal_line(r),
        r.topic.name,
        if r.topic.is_new_topic { " (new)" } else { "" },
    );
}
