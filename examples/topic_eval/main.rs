//! Topic-boundary evaluation on the chatterbot topic-shift sessions (docs/cognition.md §5.5), and on
//! real chit-chat (`--chitchat`).
//!
//! Every utterance of `topic_shift_concat.jsonl` is embedded with the built-in all-MiniLM-L6-v2
//! (cached under `target/topic_eval/`, so reruns take a second), each session is run as its own
//! thread through `topic::classify` + `topic::apply`, and a boundary is predicted before a
//! message whenever its topic differs from the previous message's (a new topic, or a return to
//! an older one). Scores:
//! - **Pk** (Beeferman et al.), window k = half the mean true segment length in messages,
//!   rounded, pooled over all windows of all sessions; lower is better;
//! - **boundary F1** with ±2 messages tolerance, one-to-one matching nearest first, pooled.
//!
//! Systems: the calibrated detector (`BoundaryParams::default`, content gate on), the same
//! without the gate, the faithful published detector (docs/cognition.md §5.3) (`BoundaryParams::published`, no gate), a
//! never-fires baseline and the static `best_sim < 0.65` rule (no gate).
//!
//! Streams: user messages only, which is what the app classifies (the headline; the held-out
//! odd-numbered sessions first, calibration used the even ones); all utterances, user and bot;
//! user messages with chat fillers ("lol", "ok", …) inserted after 25% of them, which never
//! carry a boundary (what the content gate is for); and all sessions' user messages in a row as
//! one long thread, where a join between different categories is a boundary (the steady state
//! that docs/cognition.md §5.5 measured).
//!
//! `cargo run --example topic_eval [-- MODE] [DATA.jsonl]`, MODE one of
//! - `--chitchat [DATA.jsonl]`: the real-chat evaluation instead (see `chitchat.rs`), with
//!   `--chitchat-sweep` its calibration grid, `--chitchat-regulate` the topic stability
//!   regulator replayed on it (see `regulate.rs`);
//! - `--sweep`: the calibration grid, then the prior grid, on the dev half;
//! - `--priors`: the prior grid alone;
//! - `--stats [--try …]`: the signal statistics behind the priors;
//! - `--try field=value,…`: the defaults with some `BoundaryParams` fields changed, on the dev half.

mod chitchat;
mod regulate;

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use chalie::cognition::boundary::{BoundaryParams, BoundaryState, FocusLevel};
use chalie::cognition::topic::{self, ClassifierParams, Detector, Message, Topic};
use chalie::llm::local::embed::Embedder;
use chalie::llm::local::fetch::{self, Fetcher};
use serde::Deserialize;
use sha2::{Digest, Sha256};

const DATA_REL: &str = "../shared/data/chatterbot/topic_shift_concat.jsonl";
const DATA_ABS: &str = "/work/shared/data/chatterbot/topic_shift_concat.jsonl";
const MODEL: &str = "all-minilm-l6-v2";
/// Seconds between consecutive messages of a session (the data has no clock; well inside the
/// 30-min recency window and the 45-min silence reset).
const STEP_S: i64 = 30;
const T0: i64 = 1_700_000_000;
/// Tolerance of the boundary F1, in messages.
const TOLERANCE: usize = 2;
/// Fillers inserted into the third stream, and how often (one after this share of messages).
const FILLERS: &[&str] =
    &["lol", "ok", "yeah", "thanks", "haha", "hmm", "cool", "ok thanks", "lol yeah", "nice", "yes", "oh wow"];
const FILLER_RATE: f64 = 0.25;

#[derive(Deserialize)]
struct Session {
    segments: Vec<Segment>,
    utterances: Vec<Utterance>,
}

#[derive(Deserialize)]
struct Segment {
    /// Chatterbot sessions name a category; chit-chat sessions a prompt instead.
    #[serde(default)]
    category: String,
}

#[derive(Deserialize)]
struct Utterance {
    speaker: String,
    text: String,
    boundary_before: bool,
}

/// One message of a stream: its text, its embedding row and whether a true boundary precedes it.
#[derive(Clone)]
struct Item {
    text: String,
    row: usize,
    boundary: bool,
}

type Stream = Vec<Item>;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a.starts_with("--chitchat")) {
        return chitchat::main(&args);
    }
    let sweep = args.iter().any(|a| a == "--sweep");
    let stats = args.iter().any(|a| a == "--stats");
    let data_path = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--try"))
        .map(|(_, a)| PathBuf::from(a))
        .unwrap_or_else(default_data);

    let Corpus { sessions, rows, vectors } = load(&data_path)?;

    let stream = |s: &Session, users_only: bool| session_stream(s, &rows, users_only);
    let user: Vec<Stream> = sessions.iter().map(|s| stream(s, true)).collect();
    let all: Vec<Stream> = sessions.iter().map(|s| stream(s, false)).collect();
    let mut rng = Lcg(20260521);
    let fillered: Vec<Stream> = user
        .iter()
        .map(|s| {
            // A filler goes after a real message and never carries a boundary: a true boundary
            // stays before the next real message.
            let mut out = Vec::new();
            for item in s {
                out.push(item.clone());
                if rng.unit() < FILLER_RATE {
                    let f = FILLERS[rng.below(FILLERS.len())];
                    out.push(Item { text: f.to_string(), row: rows[f], boundary: false });
                }
            }
            out
        })
        .collect();
    // All sessions' user messages in a row as one long thread. A join is a boundary when the
    // categories on either side differ.
    let mut continuous: Stream = Vec::new();
    for (j, session) in sessions.iter().enumerate() {
        let mut part = user[j].clone();
        let previous = j.checked_sub(1).and_then(|p| sessions[p].segments.last()).map(|s| &s.category);
        if let (Some(first), Some(prev)) = (part.first_mut(), previous) {
            first.boundary = session.segments.first().map(|s| &s.category) != Some(prev);
        }
        continuous.extend(part);
    }
    let dev = |streams: &[Stream]| -> Vec<Stream> { streams.iter().step_by(2).cloned().collect() };
    let held_out = |streams: &[Stream]| -> Vec<Stream> { streams.iter().skip(1).step_by(2).cloned().collect() };

    if sweep {
        run_sweep(&dev(&user), &vectors);
        run_prior_sweep(&dev(&user), &vectors);
        return Ok(());
    }
    // `--try field=value,field=value`: the defaults with some fields changed, scored on the dev
    // half (with `--stats`: the statistics under those params).
    let tried = match args.iter().position(|a| a == "--try").and_then(|i| args.get(i + 1)) {
        Some(spec) => {
            let mut json = serde_json::to_value(BoundaryParams::default())?;
            for pair in spec.split(',') {
                let (key, value) = pair.split_once('=').context("--try wants field=value")?;
                if json.get(key).is_none() {
                    bail!("BoundaryParams has no field {key:?}");
                }
                json[key] = serde_json::from_str(value).with_context(|| format!("the value of {key}"))?;
            }
            Some(serde_json::from_value::<BoundaryParams>(json)?)
        }
        None => None,
    };
    if stats {
        print_stats(&dev(&user), &vectors, tried.unwrap_or_default());
        return Ok(());
    }
    if let Some(b) = tried {
        let d = dev(&user);
        let score = evaluate(&d, &vectors, &System::Adaptive(ClassifierParams::default(), b), window_k(&d));
        println!("dev half: Pk {:.4} F1 {:.3}", score.pk, score.f1());
        return Ok(());
    }
    if args.iter().any(|a| a == "--priors") {
        run_prior_sweep(&dev(&user), &vectors);
        return Ok(());
    }

    let systems = systems();
    for (title, streams) in [
        ("user messages only, held-out odd sessions (150; headline)", held_out(&user)),
        ("user messages only, all 300 sessions", user.clone()),
        ("all utterances (user + bot), all 300 sessions", all),
        ("user messages with fillers after 25% of them, all 300 sessions", fillered),
        ("user messages of all 300 sessions as one continuous thread", vec![continuous.clone()]),
    ] {
        let k = window_k(&streams);
        let n: usize = streams.iter().map(Vec::len).sum();
        let b: usize = streams.iter().flatten().filter(|i| i.boundary).count();
        println!("\n== {title}: {n} messages, {b} true boundaries, Pk window k = {k}");
        println!(
            "{:<30} {:>6} {:>6} {:>6} {:>6} {:>7} {:>6} {:>7}",
            "system", "Pk", "F1", "P", "R", "fired", "new", "late R"
        );
        for (name, system) in &systems {
            let score = evaluate(&streams, &vectors, system, k);
            println!(
                "{:<30} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.1}% {:>5.0}% {:>7.3}",
                name,
                score.pk,
                score.f1(),
                score.precision(),
                score.recall(),
                100.0 * score.fired as f64 / score.messages as f64,
                100.0 * ratio(score.opened, score.fired),
                score.late_recall(),
            );
        }
    }
    for (title, streams) in [("per-session threads", &user), ("one continuous thread", &vec![continuous.clone()])] {
        println!("\n== why the detectors fire (user messages, {title})");
        for (name, b) in
            [("calibrated", BoundaryParams::default()), ("faithful published", BoundaryParams::published())]
        {
            fire_profile(name, streams, &vectors, b);
        }
    }
    println!(
        "\nPk: lower is better. F1/P/R: boundaries matched within ±{TOLERANCE} messages. fired: share of messages \
         predicted as a boundary; new: share of those that opened a new topic (the rest returned to an older \
         topic by switch score). late R: recall on true boundaries at message 6 or later (after the published \
         detector's warm-up)."
    );
    Ok(())
}

/// One session as a stream: its user messages only (`users_only`), or every utterance. A true
/// boundary falls on the first kept message after it.
fn session_stream(s: &Session, rows: &HashMap<String, usize>, users_only: bool) -> Stream {
    let mut out: Stream = Vec::new();
    let mut pending = false;
    for u in &s.utterances {
        pending |= u.boundary_before;
        if users_only && u.speaker != "user" {
            continue;
        }
        out.push(Item { text: u.text.clone(), row: rows[&u.text], boundary: pending && !out.is_empty() });
        pending = false;
    }
    out
}

/// A data file's sessions with every distinct text embedded once.
struct Corpus {
    sessions: Vec<Session>,
    /// Text → row of `vectors`.
    rows: HashMap<String, usize>,
    vectors: Vec<Vec<f32>>,
}

fn load(data_path: &Path) -> Result<Corpus> {
    let raw = fs::read_to_string(data_path).with_context(|| format!("reading {}", data_path.display()))?;
    let sessions: Vec<Session> =
        raw.lines().filter(|l| !l.trim().is_empty()).map(serde_json::from_str).collect::<Result<_, _>>()?;
    println!("data: {} ({} sessions)", data_path.display(), sessions.len());

    // Every distinct text once, in first-seen order, fillers last.
    let mut texts: Vec<String> = Vec::new();
    let mut rows: HashMap<String, usize> = HashMap::new();
    for t in sessions.iter().flat_map(|s| s.utterances.iter().map(|u| u.text.as_str())).chain(FILLERS.iter().copied()) {
        if !rows.contains_key(t) {
            rows.insert(t.to_string(), texts.len());
            texts.push(t.to_string());
        }
    }
    let vectors = embeddings(&raw, &texts)?;
    Ok(Corpus { sessions, rows, vectors })
}

fn default_data() -> PathBuf {
    let rel = Path::new(env!("CARGO_MANIFEST_DIR")).join(DATA_REL);
    if rel.is_file() { rel } else { PathBuf::from(DATA_ABS) }
}

fn models_dir() -> PathBuf {
    std::env::var_os("CHALIE_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/models"))
}

/// The embeddings of `texts`, from the cache when it matches the data, model and text list.
fn embeddings(raw: &str, texts: &[String]) -> Result<Vec<Vec<f32>>> {
    let mut hash = Sha256::new();
    hash.update(MODEL.as_bytes());
    hash.update(raw.as_bytes());
    for t in texts {
        hash.update(t.as_bytes());
        hash.update([0u8]);
    }
    let digest: String = hash.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    let cache_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/topic_eval");
    let cache = cache_dir.join(format!("embeddings-{digest}.bin"));

    if let Ok(bytes) = fs::read(&cache) {
        let dim = Embedder::DIM;
        if bytes.len() == texts.len() * dim * 4 {
            let floats: Vec<f32> =
                bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
            println!("embeddings: {} texts from {}", texts.len(), cache.display());
            return Ok(floats.chunks_exact(dim).map(<[f32]>::to_vec).collect());
        }
    }

    let dir = models_dir();
    Fetcher::default().fetch(&dir, &mut |_| {}).context("fetching the built-in models")?;
    let embedder = Embedder::load(&fetch::model_dir(&dir, MODEL))?;
    let started = Instant::now();
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(256) {
        let batch: Vec<&str> = chunk.iter().map(String::as_str).collect();
        out.extend(embedder.embed(&batch)?);
        print!("\rembedding: {}/{}", out.len(), texts.len());
        std::io::stdout().flush().ok();
    }
    println!(" in {:.1} s", started.elapsed().as_secs_f64());
    if out.iter().any(|v| v.len() != Embedder::DIM) {
        bail!("the embedder returned a vector that is not {}-dimensional", Embedder::DIM);
    }
    fs::create_dir_all(&cache_dir)?;
    let bytes: Vec<u8> = out.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
    fs::write(&cache, bytes).with_context(|| format!("writing {}", cache.display()))?;
    Ok(out)
}

/// A handful of these are built per run; their size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
enum System {
    Never,
    Static(ClassifierParams),
    Adaptive(ClassifierParams, BoundaryParams),
}

fn systems() -> Vec<(&'static str, System)> {
    vec![
        ("calibrated detector + gate", System::Adaptive(ClassifierParams::default(), BoundaryParams::default())),
        ("calibrated detector, no gate", System::Adaptive(ClassifierParams::published(), BoundaryParams::default())),
        ("previous (chatterbot-only) + gate", System::Adaptive(previous_classifier(), BoundaryParams::chatterbot())),
        ("before the talk rules (44d9bad)", before_talk()),
        ("block rule, fixed refractory + gate", previous_default()),
        ("before the chat prior and greetings", before_greetings()),
        ("chit-chat-first variant + gate", chat_first()),
        ("faithful published detector", System::Adaptive(ClassifierParams::published(), BoundaryParams::published())),
        ("never fires", System::Never),
        ("static best_sim < 0.65", System::Static(ClassifierParams::published())),
    ]
}

/// The classifier as it was before the real-chat calibration: the content gate, no content
/// weights, no greeting restart.
fn previous_classifier() -> ClassifierParams {
    ClassifierParams { full_weight_words: 0, greeting_restart_after: 0, ..ClassifierParams::default() }
}

/// The classifier of c83f4a3: content weights, no greeting restart.
fn classifier_before_greetings() -> ClassifierParams {
    ClassifierParams { greeting_restart_after: 0, ..ClassifierParams::default() }
}

/// The defaults of c83f4a3, before the chat-gated similarity prior and the greeting restart:
/// four messages of refractory period in a thread of long lines.
fn before_greetings() -> System {
    System::Adaptive(
        classifier_before_greetings(),
        BoundaryParams { long_init_sim_ema: None, long_refractory_msgs: 4, ..before_talk_params() },
    )
}

/// The defaults of 44d9bad, before the conversation test by first-person lines and the rules it
/// gates (minimum topic length, block floor 0.3 in a conversation).
fn before_talk_params() -> BoundaryParams {
    BoundaryParams { talk_first_person_share: 0.0, ..BoundaryParams::default() }
}

fn before_talk() -> System {
    System::Adaptive(ClassifierParams::default(), before_talk_params())
}

/// The defaults of 4c72798 (block rule, content weights), before the refractory period adapted
/// to the thread's line length: six messages against three at 0.2, no refractory period.
fn previous_default() -> System {
    System::Adaptive(
        classifier_before_greetings(),
        BoundaryParams {
            long_line_words: 0.0,
            block_left: 6,
            block_right: 3,
            block_floor: Some(0.2),
            long_init_sim_ema: None,
            ..before_talk_params()
        },
    )
}

/// The best chit-chat configuration of the calibration grid (`--chitchat-sweep`), not the default
/// because it costs the chatterbot sessions their gains: content weights over 3 words, one
/// message of refractory period (the default's in a thread of long lines), the block rule at 0.25,
/// and the 44d9bad defaults' chat prior and greeting restart (no conversation test by
/// first-person lines).
fn chat_first() -> System {
    System::Adaptive(
        ClassifierParams { full_weight_words: 3, ..ClassifierParams::default() },
        BoundaryParams { refractory_msgs: 1, block_floor: Some(0.25), ..before_talk_params() },
    )
}

/// How a detector's boundaries come about: by rule, by position in the session, and how high
/// the accumulator gets relative to its bound once past the cold start.
fn fire_profile(name: &str, streams: &[Stream], vectors: &[Vec<f32>], b: BoundaryParams) {
    let params =
        if b == BoundaryParams::default() { ClassifierParams::default() } else { ClassifierParams::published() };
    let (mut cold, mut acc, mut floor, mut early, mut late, mut late_msgs) = (0, 0, 0, 0, 0, 0);
    let mut ratios: Vec<f32> = Vec::new();
    for stream in streams {
        let mut state = BoundaryState::new(b.clone());
        let mut topics: Vec<Topic> = Vec::new();
        let mut active = None;
        for (i, item) in stream.iter().enumerate() {
            let msg = Message { text: &item.text, embedding: &vectors[item.row], now_unix_s: T0 + STEP_S * i as i64 };
            let c = topic::classify(
                &topics,
                active,
                &msg,
                Some(Detector { state: &mut state, focus: FocusLevel::None }),
                &params,
            );
            let new_id = topics.len() as i64;
            active = Some(topic::apply(&mut topics, &c, &msg, new_id, &params));
            let Some(d) = c.diagnostics else { continue };
            if i >= 5 {
                late_msgs += 1;
                if !d.cold_start && !d.held {
                    ratios.push(d.acc / d.bound);
                }
            }
            if i == 0 || !d.is_boundary {
                continue;
            }
            if d.cold_start {
                cold += 1;
            } else if d.below_floor {
                floor += 1;
            } else {
                acc += 1;
            }
            if i < 5 { early += 1 } else { late += 1 }
        }
    }
    ratios.sort_by(f32::total_cmp);
    let q = |p: f64| ratios.get(((ratios.len().max(1) - 1) as f64 * p) as usize).copied().unwrap_or(0.0);
    println!(
        "  {name:<14} fires: {cold} cold-start rule, {acc} accumulator, {floor} similarity floor; {early} in messages \
         2-5, {late} from message 6 on ({:.1}% of those {late_msgs} messages); acc/bound from message 6: median \
         {:.2}, p90 {:.2}, max {:.2}",
        100.0 * ratio(late, late_msgs),
        q(0.5),
        q(0.9),
        q(1.0)
    );
}

/// Predicted boundary flags for one session: a boundary before message i when its topic
/// differs from message i−1's. Also how many of those opened a new topic (the rest are returns
/// to an older topic chosen by switch score).
fn predict(stream: &Stream, vectors: &[Vec<f32>], system: &System) -> (Vec<bool>, usize) {
    let (params, mut state) = match system {
        System::Never => return (vec![false; stream.len()], 0),
        System::Static(p) => (p, None),
        System::Adaptive(p, b) => (p, Some(BoundaryState::new(b.clone()))),
    };
    let mut topics: Vec<Topic> = Vec::new();
    let mut active: Option<usize> = None;
    let mut out = Vec::with_capacity(stream.len());
    let mut opened = 0;
    for (i, item) in stream.iter().enumerate() {
        let msg = Message { text: &item.text, embedding: &vectors[item.row], now_unix_s: T0 + STEP_S * i as i64 };
        let detector = state.as_mut().map(|state| Detector { state, focus: FocusLevel::None });
        let c = topic::classify(&topics, active, &msg, detector, params);
        let new_id = topics.len() as i64;
        let chosen = topic::apply(&mut topics, &c, &msg, new_id, params);
        let boundary = i > 0 && active != Some(chosen);
        opened += usize::from(boundary && c.is_new_topic);
        out.push(boundary);
        active = Some(chosen);
    }
    (out, opened)
}

#[derive(Default)]
struct Score {
    pk: f64,
    tp: usize,
    predicted: usize,
    truth: usize,
    fired: usize,
    messages: usize,
    late_truth: usize,
    late_tp: usize,
    opened: usize,
}

impl Score {
    fn precision(&self) -> f64 {
        ratio(self.tp, self.predicted)
    }
    fn recall(&self) -> f64 {
        ratio(self.tp, self.truth)
    }
    fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 { 0.0 } else { 2.0 * p * r / (p + r) }
    }
    fn late_recall(&self) -> f64 {
        ratio(self.late_tp, self.late_truth)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// k = half the mean true segment length, rounded, at least 1.
fn window_k(streams: &[Stream]) -> usize {
    let messages: usize = streams.iter().map(Vec::len).sum();
    let segments: usize = streams.iter().map(|s| 1 + s.iter().filter(|i| i.boundary).count()).sum();
    ((messages as f64 / segments as f64 / 2.0).round() as usize).max(1)
}

fn evaluate(streams: &[Stream], vectors: &[Vec<f32>], system: &System, k: usize) -> Score {
    evaluate_with(streams, k, |stream| predict(stream, vectors, system))
}

/// Scores the boundary flags `predict` gives for each stream (and how many opened a topic).
fn evaluate_with(streams: &[Stream], k: usize, predict: impl Fn(&Stream) -> (Vec<bool>, usize)) -> Score {
    let mut score = Score::default();
    let (mut errors, mut windows) = (0usize, 0usize);
    for stream in streams {
        let truth: Vec<bool> = stream.iter().map(|i| i.boundary).collect();
        let (hyp, opened) = predict(stream);
        score.opened += opened;
        let (e, w) = pk_counts(&truth, &hyp, k);
        errors += e;
        windows += w;
        let (tp, matched) = match_boundaries(&truth, &hyp, TOLERANCE);
        score.tp += tp;
        score.predicted += hyp.iter().filter(|&&b| b).count();
        score.truth += truth.iter().filter(|&&b| b).count();
        score.fired += hyp.iter().filter(|&&b| b).count();
        score.messages += stream.len();
        for (i, &t) in truth.iter().enumerate().skip(5) {
            if t {
                score.late_truth += 1;
                score.late_tp += usize::from(matched[i]);
            }
        }
    }
    score.pk = ratio(errors, windows);
    score
}

/// Pk's (errors, windows) for one session: for each i, do messages i and i+k share a segment
/// in the truth and in the hypothesis; an error when the two disagree.
fn pk_counts(truth: &[bool], hyp: &[bool], k: usize) -> (usize, usize) {
    let n = truth.len();
    if n <= k {
        return (0, 0);
    }
    let split = |b: &[bool], i: usize| b[i + 1..=i + k].iter().any(|&x| x);
    let errors = (0..n - k).filter(|&i| split(truth, i) != split(hyp, i)).count();
    (errors, n - k)
}

/// One-to-one matching of true to predicted boundaries within `tol` messages, nearest first.
/// Returns the matches and, per position, whether the true boundary there was matched.
fn match_boundaries(truth: &[bool], hyp: &[bool], tol: usize) -> (usize, Vec<bool>) {
    let mut used = vec![false; hyp.len()];
    let mut matched = vec![false; truth.len()];
    let mut tp = 0;
    for (i, _) in truth.iter().enumerate().filter(|(_, t)| **t) {
        let lo = i.saturating_sub(tol);
        let hi = (i + tol).min(hyp.len() - 1);
        let best = (lo..=hi).filter(|&j| hyp[j] && !used[j]).min_by_key(|&j| j.abs_diff(i));
        if let Some(j) = best {
            used[j] = true;
            matched[i] = true;
            tp += 1;
        }
    }
    (tp, matched)
}

/// Deterministic pseudo-random numbers (no dependency), for the filler stream.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn unit(&mut self) -> f64 {
        self.next() as f64 / (1u64 << 31) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The signal statistics behind the calibrated priors, on the dev half: each message is run
/// against topics built from the true segmentation (an oracle history), and the raw detector
/// quantities are recorded with the truth.
fn print_stats(streams: &[Stream], vectors: &[Vec<f32>], base: BoundaryParams) {
    for slow_window in [10, 14, 18, 22, 30] {
        let b = BoundaryParams { slow_window, ..base.clone() };
        println!("\n-- fast window {}, slow window {slow_window}", b.fast_window);
        signal_stats(streams, vectors, b);
    }
}

fn signal_stats(streams: &[Stream], vectors: &[Vec<f32>], detector: BoundaryParams) {
    let params = ClassifierParams::published();
    // truth, position, best_sim, drift_ema, drop, newma, surprise
    let mut rows: Vec<(bool, usize, f32, f64, f64, f32, f32)> = Vec::new();
    // Raw drift ‖fast − slow‖² and raw drop per message, and the running statistics, after 5 messages.
    let (mut raw_drift, mut raw_drop, mut state_stats) = (Vec::new(), Vec::new(), Vec::new());
    for stream in streams {
        let mut topics: Vec<Topic> = Vec::new();
        let mut active: Option<usize> = None;
        let mut state = BoundaryState::new(BoundaryParams { cold_start_msgs: 0, ..detector.clone() });
        for (i, item) in stream.iter().enumerate() {
            let now = T0 + STEP_S * i as i64;
            let msg = Message { text: &item.text, embedding: &vectors[item.row], now_unix_s: now };
            let sims = topic::similarities(&topics, msg.embedding, active, now, &params);
            let best = sims.iter().copied().fold(if topics.is_empty() { 1.0 } else { f32::NEG_INFINITY }, f32::max);
            let drop_before = state.sim_ema - f64::from(best);
            let out = if topics.is_empty() {
                state.prime(msg.embedding, now, FocusLevel::None)
            } else {
                state.update(msg.embedding, best, now, FocusLevel::None)
            };
            let drift = state.drift_ema; // after update
            if i >= 5 {
                let (f, sl) = (state.ewma_fast.as_ref().expect("set"), state.ewma_slow.as_ref().expect("set"));
                raw_drift.push(f.iter().zip(sl).map(|(&a, &b)| f64::from(a - b).powi(2)).sum::<f64>());
                raw_drop.push(drop_before.max(0.0));
                state_stats.push((state.drift_ema, state.drift_var, state.drop_ema, state.drop_var));
            }
            rows.push((item.boundary, i, best, drift, drop_before.max(0.0), out.newma, out.surprise));
            let idx = if item.boundary || topics.is_empty() {
                topics.push(Topic::new(topics.len() as i64, msg.text, msg.embedding, 0.5, now));
                topics.len() - 1
            } else {
                let a = active.expect("set after the first message");
                topics[a].absorb(msg.embedding, 0.5, now, params.centroid_cap);
                a
            };
            active = Some(idx);
        }
    }
    let later: Vec<_> = rows.iter().filter(|r| r.1 > 0).collect();
    let pct = |mut v: Vec<f64>, q: f64| {
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * q) as usize]
    };
    for (label, pick) in [("boundary", true), ("same topic", false)] {
        let sel: Vec<_> = later.iter().filter(|r| r.0 == pick).collect();
        let bs: Vec<f64> = sel.iter().map(|r| f64::from(r.2)).collect();
        let dr: Vec<f64> = sel.iter().map(|r| r.3).collect();
        let dp: Vec<f64> = sel.iter().map(|r| r.4).collect();
        let nw: Vec<f64> = sel.iter().map(|r| f64::from(r.5)).collect();
        let sp: Vec<f64> = sel.iter().map(|r| f64::from(r.6)).collect();
        println!("{label} ({}):", sel.len());
        for (name, v) in [("best_sim", bs), ("drift_ema", dr), ("drop", dp), ("newma", nw), ("surprise", sp)] {
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
            println!(
                "  {name:<10} mean {mean:>7.3} sd {sd:>6.3}  p10 {:>7.3} p50 {:>7.3} p90 {:>7.3}",
                pct(v.clone(), 0.1),
                pct(v.clone(), 0.5),
                pct(v, 0.9)
            );
        }
    }
    // The priors: the signals' own statistics after the first 5 messages of a session.
    let mean_sd = |v: &[f64]| {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        (mean, (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64).sqrt())
    };
    let (dm, ds) = mean_sd(&raw_drift);
    let (pm, ps) = mean_sd(&raw_drop);
    println!(
        "after 5 messages ({}): raw drift mean {dm:.4} sd {ds:.4}; raw drop mean {pm:.4} sd {ps:.4}",
        raw_drift.len()
    );
    let col =
        |j: usize| -> Vec<f64> { state_stats.iter().map(|t: &(f64, f64, f64, f64)| [t.0, t.1, t.2, t.3][j]).collect() };
    println!(
        "running statistics, medians: drift_ema {:.4} drift_var {:.5} drop_ema {:.4} drop_var {:.5}",
        pct(col(0), 0.5),
        pct(col(1), 0.5),
        pct(col(2), 0.5),
        pct(col(3), 0.5)
    );
    // How well a plain threshold on best_sim separates, on this oracle history.
    println!("threshold on best_sim (oracle history): t, precision, recall");
    for t in [0.15f32, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5] {
        let fired: Vec<_> = later.iter().filter(|r| r.2 < t).collect();
        let tp = fired.iter().filter(|r| r.0).count();
        let truth = later.iter().filter(|r| r.0).count();
        println!("  {t:.2} {:.3} {:.3} ({} fired)", ratio(tp, fired.len()), ratio(tp, truth), fired.len());
    }
}

/// Raw drift ‖fast − slow‖² after the first 5 messages of a dev session, mean and sd, by slow
/// window (fast window 4), from `--stats`: the priors that go with each window.
const DRIFT_PRIORS: &[(u32, f64, f64)] =
    &[(10, 0.1104, 0.0324), (14, 0.2042, 0.0591), (18, 0.2882, 0.0808), (22, 0.3605, 0.0980), (30, 0.4752, 0.1223)];

/// The calibration grid on the dev half. Each configuration is ranked by its Pk averaged with
/// its grid neighbours (one parameter one step away), so the pick sits on a plateau rather
/// than on a lucky spike; its own Pk and F1 are shown beside.
fn run_sweep(streams: &[Stream], vectors: &[Vec<f32>]) {
    const FLOORS: [Option<f64>; 7] = [None, Some(0.12), Some(0.14), Some(0.16), Some(0.18), Some(0.2), Some(0.22)];
    const SLOW: [usize; 5] = [0, 1, 2, 3, 4]; // indices into DRIFT_PRIORS
    const LEAK: [f64; 6] = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7];
    const BASE: [f64; 5] = [1.5, 2.0, 2.5, 3.0, 3.5];
    const DRW: [f64; 3] = [0.0, 0.25, 0.5];
    const WN: [f64; 3] = [0.3, 0.6, 0.9];
    const WS: [f64; 3] = [0.7, 1.0, 1.3];
    const STD_FLOORS: [(f64, f64); 2] = [(1e-6, 1e-6), (0.02, 0.08)];
    let dims = [FLOORS.len(), SLOW.len(), LEAK.len(), BASE.len(), DRW.len(), WN.len(), WS.len(), STD_FLOORS.len()];
    let build = |ix: &[usize]| {
        let (slow_window, drift_mean, drift_sd) = DRIFT_PRIORS[SLOW[ix[1]]];
        BoundaryParams {
            sim_floor: FLOORS[ix[0]],
            cold_start_threshold: FLOORS[ix[0]].unwrap_or(0.0),
            slow_window,
            init_drift_ema: drift_mean,
            init_drift_var: drift_sd * drift_sd,
            leak: LEAK[ix[2]],
            base: BASE[ix[3]],
            drift_ratio_weight: DRW[ix[4]],
            newma_weight: WN[ix[5]],
            surprise_weight: WS[ix[6]],
            std_floor: STD_FLOORS[ix[7]].0,
            drop_std_floor: STD_FLOORS[ix[7]].1,
            ..BoundaryParams::default()
        }
    };
    let mut grid: Vec<Vec<usize>> = vec![vec![]];
    for &n in &dims {
        grid = grid.into_iter().flat_map(|g| (0..n).map(move |i| [g.clone(), vec![i]].concat())).collect();
    }
    let k = window_k(streams);
    println!("sweep: {} configurations on {} dev sessions, k = {k}", grid.len(), streams.len());
    let started = Instant::now();
    let classifier = ClassifierParams::default();
    let chunk = grid.len().div_ceil(2);
    let scores: Vec<(f64, f64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = grid
            .chunks(chunk)
            .map(|part| {
                let (classifier, build) = (&classifier, &build);
                scope.spawn(move || {
                    part.iter()
                        .map(|ix| {
                            let system = System::Adaptive(classifier.clone(), build(ix));
                            let score = evaluate(streams, vectors, &system, k);
                            (score.pk, score.f1())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("sweep thread")).collect()
    });
    println!("  in {:.0} s; never fires: Pk {:.4}", started.elapsed().as_secs_f64(), {
        evaluate(streams, vectors, &System::Never, k).pk
    });
    let position: HashMap<Vec<usize>, usize> = grid.iter().cloned().enumerate().map(|(i, g)| (g, i)).collect();
    let smoothed: Vec<f64> = grid
        .iter()
        .map(|ix| {
            let mut sum = scores[position[ix]].0;
            let mut n = 1.0;
            for d in 0..dims.len() {
                for step in [-1i64, 1] {
                    let j = ix[d] as i64 + step;
                    if j >= 0 && (j as usize) < dims[d] {
                        let mut other = ix.clone();
                        other[d] = j as usize;
                        sum += scores[position[&other]].0;
                        n += 1.0;
                    }
                }
            }
            sum / n
        })
        .collect();
    let show = |i: usize| {
        let b = build(&grid[i]);
        println!(
            "  smoothed Pk {:.4} | Pk {:.4} F1 {:.3} | floor {:?} Ns {} leak {} base {} drw {} wn {} ws {} std floors {}/{}",
            smoothed[i],
            scores[i].0,
            scores[i].1,
            b.sim_floor,
            b.slow_window,
            b.leak,
            b.base,
            b.drift_ratio_weight,
            b.newma_weight,
            b.surprise_weight,
            b.std_floor,
            b.drop_std_floor
        );
    };
    let mut order: Vec<usize> = (0..grid.len()).collect();
    order.sort_by(|&a, &b| smoothed[a].total_cmp(&smoothed[b]).then(scores[a].0.total_cmp(&scores[b].0)));
    println!("best by smoothed Pk:");
    order.iter().take(20).for_each(|&i| show(i));
    println!("best by smoothed Pk without the similarity floor:");
    order.iter().filter(|&&i| grid[i][0] == 0).take(5).for_each(|&i| show(i));
    // The profile along each parameter: the best smoothed Pk with that parameter at each value.
    let names = ["sim_floor", "slow_window", "leak", "base", "drift_ratio_weight", "newma_weight", "surprise_weight"];
    let labels: [Vec<String>; 7] = [
        FLOORS.iter().map(|f| f.map_or("none".to_string(), |f| f.to_string())).collect(),
        SLOW.iter().map(|&i| DRIFT_PRIORS[i].0.to_string()).collect(),
        LEAK.iter().map(f64::to_string).collect(),
        BASE.iter().map(f64::to_string).collect(),
        DRW.iter().map(f64::to_string).collect(),
        WN.iter().map(f64::to_string).collect(),
        WS.iter().map(f64::to_string).collect(),
    ];
    println!("profile (best smoothed Pk / its raw Pk at each value):");
    for (d, name) in names.iter().enumerate() {
        let cells: Vec<String> = (0..dims[d])
            .map(|v| {
                let best = order.iter().find(|&&i| grid[i][d] == v).copied().expect("every value occurs");
                format!("{} {:.4}/{:.4}", labels[d][v], smoothed[best], scores[best].0)
            })
            .collect();
        println!("  {name:<19} {}", cells.join("  "));
    }
    let mut raw: Vec<usize> = (0..grid.len()).collect();
    raw.sort_by(|&a, &b| scores[a].0.total_cmp(&scores[b].0));
    println!("best by raw Pk:");
    raw.iter().take(5).for_each(|&i| show(i));
    raw.sort_by(|&a, &b| scores[b].1.total_cmp(&scores[a].1));
    println!("best by F1:");
    raw.iter().take(5).for_each(|&i| show(i));
}

/// The second calibration stage, on the dev half: the priors of the similarity statistics with
/// everything else at the defaults.
fn run_prior_sweep(streams: &[Stream], vectors: &[Vec<f32>]) {
    let k = window_k(streams);
    let classifier = ClassifierParams::default();
    let mut rows = Vec::new();
    for init_sim_ema in [0.4, 0.5, 0.6] {
        for drop_ema in [0.03, 0.05, 0.07, 0.09, 0.106, 0.13] {
            for drop_sd in [0.06, 0.08, 0.1, 0.124, 0.15] {
                let b = BoundaryParams {
                    init_sim_ema,
                    init_drop_ema: drop_ema,
                    init_drop_var: drop_sd * drop_sd,
                    ..BoundaryParams::default()
                };
                let system = System::Adaptive(classifier.clone(), b);
                let score = evaluate(streams, vectors, &system, k);
                // The dev half split again in two, to see whether a ranking would carry over.
                let a: Vec<Stream> = streams.iter().step_by(2).cloned().collect();
                let b: Vec<Stream> = streams.iter().skip(1).step_by(2).cloned().collect();
                let (pa, pb) = (evaluate(&a, vectors, &system, k).pk, evaluate(&b, vectors, &system, k).pk);
                rows.push((score.pk, score.f1(), init_sim_ema, drop_ema, drop_sd, pa, pb));
            }
        }
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    println!("priors of the similarity statistics (dev half), best first:");
    for (pk, f1, sim, drop, sd, pa, pb) in rows.iter().take(15) {
        println!(
            "  Pk {pk:.4} F1 {f1:.3} (quarters {pa:.4} / {pb:.4}) | init_sim_ema {sim} drop_ema {drop} drop_sd {sd}"
        );
    }
    let n = rows.len() as f64;
    let (ma, mb) = (rows.iter().map(|r| r.5).sum::<f64>() / n, rows.iter().map(|r| r.6).sum::<f64>() / n);
    let cov = rows.iter().map(|r| (r.5 - ma) * (r.6 - mb)).sum::<f64>();
    let (va, vb) =
        (rows.iter().map(|r| (r.5 - ma).powi(2)).sum::<f64>(), rows.iter().map(|r| (r.6 - mb).powi(2)).sum::<f64>());
    println!("  correlation of Pk between the two dev quarters over this grid: {:.2}", cov / (va * vb).sqrt());
    let default = BoundaryParams::default();
    let mine = rows.iter().find(|r| {
        r.2 == default.init_sim_ema && r.3 == default.init_drop_ema && (r.4 * r.4 - default.init_drop_var).abs() < 1e-9
    });
    if let Some((pk, f1, _, _, _, _, _)) = mine {
        println!("  defaults: Pk {pk:.4} F1 {f1:.3}");
    }
    // The raw drop statistics measured by `--stats` (mean 0.106, sd 0.124), for comparison.
    if let Some((pk, f1, _, _, _, _, _)) = rows.iter().find(|r| r.2 == 0.5 && r.3 == 0.106 && r.4 == 0.124) {
        println!("  measured raw-drop priors (0.106, sd 0.124): Pk {pk:.4} F1 {f1:.3}");
    }
}
