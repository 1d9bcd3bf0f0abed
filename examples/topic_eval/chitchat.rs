//! Topic boundaries on real human chit-chat (`--chitchat`), scored the way the app meets them.
//!
//! `../shared/data/chitchat/topic_shift_dev.jsonl` joins 2–4 two-person conversations started
//! from different prompts. Every utterance of a session, both speakers, goes in order through
//! `topic::classify` + `topic::apply` as the user's messages of one thread, with what the
//! pipeline adds (`cognition::pipeline::phases::topic_stage`): a contentless first message opens
//! no topic, and the focus is `Inferred` once the last five messages all sat in the current
//! topic. A boundary is `is_new_topic` on any message after the first. Pk uses k = half the mean
//! true segment length; F1 matches within ±2 messages (the scoring of `main.rs`).
//!
//! Calibration used even-numbered sessions only (`--chitchat-sweep`; the block rule's first grid
//! ran on the first 60 sessions, `head -60` of the file as DATA, the later grids, the last of
//! them in `sweep`, on all 150 even sessions); the headline is the odd-numbered ones.
//! `--chitchat-why` counts the default detector's fires on the even sessions by rule, with how
//! many sit near a true boundary, by the thread's kind (short lines, long lines, talking) and the
//! lines since the last fire. `--chitchat-try field=value,…` scores the defaults with some
//! fields changed (`c.field` for the classifier) on the even sessions and the chatterbot dev
//! half, with that breakdown.
//! Set `TOPIC_EVAL_ALL=1` to print every grid point.
//!
//! `cargo run --example topic_eval -- --chitchat [DATA.jsonl]`, or `--chitchat-sweep` /
//! `--chitchat-why` / `--chitchat-try SPEC` [DATA.jsonl].

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use chalie::cognition::boundary::{BoundaryParams, BoundaryState, FocusLevel};
use chalie::cognition::topic::{self, ClassifierParams, Detector, Message, Topic};

use super::{
    Corpus, STEP_S, Score, Stream, System, T0, before_greetings, before_talk, chat_first, default_data, evaluate,
    evaluate_with, load, previous_classifier, previous_default, session_stream, window_k,
};

const DATA_REL: &str = "../shared/data/chitchat/topic_shift_dev.jsonl";
const DATA_ABS: &str = "/work/shared/data/chitchat/topic_shift_dev.jsonl";
/// Consecutive same-topic messages after which the pipeline infers focus.
const FOCUS_STREAK: usize = 5;

pub fn main(args: &[String]) -> Result<()> {
    let path = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--chitchat-try"))
        .map(|(_, a)| PathBuf::from(a))
        .unwrap_or_else(default_chitchat);
    let Corpus { sessions, rows, vectors } = load(&path)?;
    let streams: Vec<Stream> = sessions.iter().map(|s| session_stream(s, &rows, false)).collect();
    let dev: Vec<Stream> = streams.iter().step_by(2).cloned().collect();
    let held_out: Vec<Stream> = streams.iter().skip(1).step_by(2).cloned().collect();

    if args.iter().any(|a| a == "--chitchat-sweep") {
        let bot = load(&default_data())?;
        let bot_dev: Vec<Stream> = bot.sessions.iter().step_by(2).map(|s| session_stream(s, &bot.rows, true)).collect();
        sweep(&dev, &vectors, &bot_dev, &bot.vectors);
        return Ok(());
    }

    if args.iter().any(|a| a == "--chitchat-regulate") {
        return super::regulate::main(&dev, &held_out, &vectors);
    }
    if args.iter().any(|a| a == "--chitchat-why") {
        why(&dev, &vectors, &ClassifierParams::default(), &BoundaryParams::default());
        return Ok(());
    }
    // `--chitchat-try field=value,…`: the defaults with some fields changed (`c.` before a
    // classifier field), on the even sessions and the chatterbot dev half, with the fires by rule.
    if let Some(spec) = args.iter().position(|a| a == "--chitchat-try").and_then(|i| args.get(i + 1)) {
        let (c, b) = tried(spec)?;
        let bot = load(&default_data())?;
        let bot_dev: Vec<Stream> = bot.sessions.iter().step_by(2).map(|s| session_stream(s, &bot.rows, true)).collect();
        let system = System::Adaptive(c.clone(), b.clone());
        let s = score(&dev, &vectors, &system);
        let bs = evaluate(&bot_dev, &bot.vectors, &system, window_k(&bot_dev));
        println!(
            "TRY {spec}: chit-chat even Pk {:.4} F1 {:.3} fires/ses {:.2} | chatterbot dev Pk {:.4} F1 {:.3}",
            s.pk,
            s.f1(),
            s.fired as f64 / dev.len() as f64,
            bs.pk,
            bs.f1()
        );
        why(&dev, &vectors, &c, &b);
        return Ok(());
    }
    let static_t = best_static(&dev, &vectors);
    let systems: Vec<(String, System)> = vec![
        ("new detector (default)".into(), System::Adaptive(ClassifierParams::default(), BoundaryParams::default())),
        ("previous detector".into(), System::Adaptive(previous_classifier(), BoundaryParams::chatterbot())),
        ("before the talk rules (44d9bad)".into(), before_talk()),
        ("block rule, fixed refractory".into(), previous_default()),
        ("before chat prior + greetings (c83f4a3)".into(), before_greetings()),
        ("chit-chat-first variant".into(), chat_first()),
        (
            "faithful published detector".into(),
            System::Adaptive(ClassifierParams::published(), BoundaryParams::published()),
        ),
        ("never fires".into(), System::Never),
        ("static best_sim < 0.65".into(), System::Static(ClassifierParams::published())),
        (
            format!("static < {static_t:.2} (best on dev)"),
            System::Static(ClassifierParams { static_threshold: static_t, ..ClassifierParams::published() }),
        ),
    ];
    for (title, part) in [
        ("held-out odd sessions (headline)", &held_out),
        ("calibration even sessions", &dev),
        ("all sessions", &streams),
    ] {
        let k = window_k(part);
        let n: usize = part.iter().map(Vec::len).sum();
        let b: usize = part.iter().flatten().filter(|i| i.boundary).count();
        println!("\n== chit-chat, {title}: {} sessions, {n} messages, {b} true boundaries, Pk k = {k}", part.len());
        println!("{:<34} {:>6} {:>6} {:>6} {:>6} {:>9}", "system", "Pk", "F1", "P", "R", "fires/ses");
        for (name, system) in &systems {
            let s = score(part, &vectors, system);
            println!(
                "{name:<34} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>9.2}",
                s.pk,
                s.f1(),
                s.precision(),
                s.recall(),
                s.fired as f64 / part.len() as f64
            );
        }
    }
    println!("\nfires/ses: boundaries predicted per session (true: {:.2}).", {
        streams.iter().flatten().filter(|i| i.boundary).count() as f64 / streams.len() as f64
    });
    Ok(())
}

fn default_chitchat() -> PathBuf {
    let rel = Path::new(env!("CARGO_MANIFEST_DIR")).join(DATA_REL);
    if rel.is_file() { rel } else { PathBuf::from(DATA_ABS) }
}

fn score(streams: &[Stream], vectors: &[Vec<f32>], system: &System) -> Score {
    evaluate_with(streams, window_k(streams), |s| predict_app(s, vectors, system))
}

/// The static threshold with the lowest Pk on `dev`, from 0.30 to 0.80 by 0.05.
fn best_static(dev: &[Stream], vectors: &[Vec<f32>]) -> f32 {
    (6..=16)
        .map(|i| i as f32 * 0.05)
        .map(|t| {
            let system = System::Static(ClassifierParams { static_threshold: t, ..ClassifierParams::published() });
            (t, score(dev, vectors, &system).pk)
        })
        .fold((0.65, f64::INFINITY), |best, c| if c.1 < best.1 { c } else { best })
        .0
}

/// Boundary flags as the app produces them: `is_new_topic` on a message after the first.
fn predict_app(stream: &Stream, vectors: &[Vec<f32>], system: &System) -> (Vec<bool>, usize) {
    let (out, _) = assign_app(stream, vectors, system);
    let fired = out.iter().filter(|&&b| b).count();
    (out, fired)
}

/// [`predict_app`]'s flags with the topic each message was filed under (None: kept out of the
/// topic table), what the app stores in `chat_history.topic`.
pub(super) fn assign_app(stream: &Stream, vectors: &[Vec<f32>], system: &System) -> (Vec<bool>, Vec<Option<usize>>) {
    let (params, mut state) = match system {
        System::Never => return (vec![false; stream.len()], vec![Some(0); stream.len()]),
        System::Static(p) => (p, None),
        System::Adaptive(p, b) => (p, Some(BoundaryState::new(b.clone()))),
    };
    let mut topics: Vec<Topic> = Vec::new();
    let mut active: Option<usize> = None;
    let mut history: Vec<String> = Vec::new();
    let mut out = Vec::with_capacity(stream.len());
    let mut filed = Vec::with_capacity(stream.len());
    for (i, item) in stream.iter().enumerate() {
        let msg = Message { text: &item.text, embedding: &vectors[item.row], now_unix_s: T0 + STEP_S * i as i64 };
        let current = active.map(|a| topics[a].name.clone());
        let streak = history.len() >= FOCUS_STREAK
            && history[history.len() - FOCUS_STREAK..].iter().all(|n| Some(n) == current.as_ref());
        let focus = if streak { FocusLevel::Inferred } else { FocusLevel::None };
        let detector = state.as_mut().map(|state| Detector { state, focus });
        let c = topic::classify(&topics, active, &msg, detector, params);
        if c.contentless && c.topic_index.is_none() {
            // The pipeline keeps a contentless first message out of the topic table.
            history.push(topic::topic_name(msg.text, msg.now_unix_s));
            out.push(false);
            filed.push(None);
            continue;
        }
        let new_id = topics.len() as i64;
        let chosen = topic::apply(&mut topics, &c, &msg, new_id, params);
        out.push(i > 0 && c.is_new_topic);
        filed.push(Some(chosen));
        history.push(topics[chosen].name.clone());
        active = Some(chosen);
    }
    (out, filed)
}

/// The real-chat calibration grid: the new rules on the even chit-chat sessions, each shown with
/// the chatterbot dev half (user messages, the main evaluation's protocol) beside it.
fn sweep(dev: &[Stream], vectors: &[Vec<f32>], bot_dev: &[Stream], bot_vectors: &[Vec<f32>]) {
    let mut grid: Vec<(ClassifierParams, BoundaryParams)> = Vec::new();
    // Issue 14, second pass: the conversation test by first-person lines, the minimum topic
    // length and the block floor in a conversation. The first pass's grid (greeting restart
    // 1–3, chat prior none–0.25, content weights 0–3 words, refractory 2–4, base 2–2.5 in
    // long-line threads) chose the rest of the defaults; `--chitchat-try` the single changes
    // around this grid (docs/cognition.md §5.5 has the figures of both).
    for talk_first_person_share in [0.25, 0.3, 0.35] {
        for talk_min_topic in [0u32, 8, 10, 11, 12, 13, 14] {
            for talk_block_floor in [None, Some(0.28), Some(0.3), Some(0.32), Some(0.35)] {
                let b = BoundaryParams {
                    talk_first_person_share,
                    talk_min_topic,
                    talk_block_floor,
                    ..BoundaryParams::default()
                };
                grid.push((ClassifierParams::default(), b));
            }
        }
    }
    let (k, bot_k) = (window_k(dev), window_k(bot_dev));
    println!("chit-chat sweep: {} configurations, {} dev sessions (k = {k})", grid.len(), dev.len());
    let started = Instant::now();
    let chunk = grid.len().div_ceil(2);
    let rows: Vec<(f64, f64, f64, f64, f64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = grid
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|(c, b)| {
                            let system = System::Adaptive(c.clone(), b.clone());
                            let s = evaluate_with(dev, k, |st| predict_app(st, vectors, &system));
                            let bot = evaluate(bot_dev, bot_vectors, &system, bot_k);
                            (s.pk, s.f1(), s.fired as f64 / dev.len() as f64, bot.pk, bot.f1())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("sweep thread")).collect()
    });
    println!("  in {:.0} s", started.elapsed().as_secs_f64());
    let prev = System::Adaptive(previous_classifier(), BoundaryParams::chatterbot());
    let bot_prev = evaluate(bot_dev, bot_vectors, &prev, bot_k);
    let chat_prev = score(dev, vectors, &prev);
    println!(
        "previous detector: chit-chat dev Pk {:.4} F1 {:.3}; chatterbot dev Pk {:.4} F1 {:.3}",
        chat_prev.pk,
        chat_prev.f1(),
        bot_prev.pk,
        bot_prev.f1()
    );
    let mut order: Vec<usize> = (0..grid.len()).collect();
    order.sort_by(|&a, &b| (rows[a].0 - rows[a].1).total_cmp(&(rows[b].0 - rows[b].1)));
    let keeps_bot = |i: &usize| rows[*i].3 <= bot_prev.pk + 0.003 && rows[*i].4 >= bot_prev.f1() - 0.005;
    // The whole grid, for a closer look (Pareto fronts): chit-chat Pk, F1, fires; chatterbot Pk, F1; params.
    if std::env::var_os("TOPIC_EVAL_ALL").is_some() {
        for (i, r) in rows.iter().enumerate() {
            let (c, b) = &grid[i];
            println!(
                "ROW {:.4} {:.3} {:.2} {:.4} {:.3} {} {:?} {} {} {} {:?} {} {} {} {} {:?} {} {:?} {:?} {} {}",
                r.0,
                r.1,
                r.2,
                r.3,
                r.4,
                c.full_weight_words,
                b.sim_floor,
                b.refractory_msgs,
                b.block_left,
                b.block_right,
                b.block_floor,
                b.base,
                b.floor_min_weight,
                b.long_line_words,
                b.long_refractory_msgs,
                b.long_init_sim_ema,
                c.long_full_weight_words,
                b.long_base,
                b.long_sim_floor,
                c.greeting_restart_after,
                c.greeting_restart_long_only
            );
        }
    }
    for (title, only_kept) in [("best by Pk − F1, chatterbot kept", true), ("best by Pk − F1, any", false)] {
        println!("{title}:");
        for &i in order.iter().filter(|i| !only_kept || keeps_bot(i)).take(20) {
            let (c, b) = &grid[i];
            let r = rows[i];
            println!(
                "  chit Pk {:.4} F1 {:.3} fires {:.2} | bot Pk {:.4} F1 {:.3} | full_words {} sim_floor {:?} refr {} \
                 block {}/{} < {:?} base {} long {} → {} prior {:?} long_full {} talk {} {} {} min topic {} block < {:?}",
                r.0,
                r.1,
                r.2,
                r.3,
                r.4,
                c.full_weight_words,
                b.sim_floor,
                b.refractory_msgs,
                b.block_left,
                b.block_right,
                b.block_floor,
                b.base,
                b.long_line_words,
                b.long_refractory_msgs,
                b.long_init_sim_ema,
                c.long_full_weight_words,
                b.talk_first_person_share,
                b.talk_line_words,
                b.talk_min_lines,
                b.talk_min_topic,
                b.talk_block_floor
            );
        }
    }
}

/// What fires a detector on `streams`, by rule, thread kind and lines since the last fire, and
/// how many of those fires sit within ±2 messages of a true boundary (not one-to-one; a
/// diagnostic for the calibration).
fn why(streams: &[Stream], vectors: &[Vec<f32>], params: &ClassifierParams, b: &BoundaryParams) {
    // rule → (fires, near a true boundary)
    let mut counts: std::collections::BTreeMap<String, (usize, usize)> = std::collections::BTreeMap::new();
    let mut missed = 0usize;
    for stream in streams {
        let mut state = BoundaryState::new(b.clone());
        let mut topics: Vec<Topic> = Vec::new();
        let mut active: Option<usize> = None;
        let mut fired_at = Vec::new();
        for (i, item) in stream.iter().enumerate() {
            let msg = Message { text: &item.text, embedding: &vectors[item.row], now_unix_s: T0 + STEP_S * i as i64 };
            let c = topic::classify(
                &topics,
                active,
                &msg,
                Some(Detector { state: &mut state, focus: FocusLevel::None }),
                params,
            );
            if c.contentless && c.topic_index.is_none() {
                continue;
            }
            if i > 0 && c.is_new_topic {
                let rule = match c.diagnostics {
                    Some(d) if d.acc == 0.0 && d.bound == 0.0 => "?",
                    Some(d) if d.held => "held?",
                    Some(d) if d.newma == 0.0 && d.surprise == 0.0 && !d.cold_start => "greeting",
                    Some(d) if d.cold_start => "cold start",
                    Some(d) if d.below_floor => "floor",
                    Some(d) if d.acc >= d.bound => "accumulator",
                    Some(_) => "block",
                    None => "none",
                };
                let near = (i.saturating_sub(2)..=(i + 2).min(stream.len() - 1)).any(|j| stream[j].boundary);
                let age = i - fired_at.last().copied().unwrap_or(0);
                let age = ["<4", "4-7", "8-11", "12+"][(age / 4).min(3)];
                let conv = if state.talking() {
                    "talking"
                } else if state.long_lines() {
                    "long lines"
                } else {
                    "short lines"
                };
                let e = counts.entry(format!("{rule:<11} {conv:<12} after {age:<4}")).or_default();
                e.0 += 1;
                e.1 += usize::from(near);
                fired_at.push(i);
            }
            let new_id = topics.len() as i64;
            active = Some(topic::apply(&mut topics, &c, &msg, new_id, params));
        }
        for (j, item) in stream.iter().enumerate() {
            if item.boundary && !fired_at.iter().any(|&f| f.abs_diff(j) <= 2) {
                missed += 1;
            }
        }
    }
    for (rule, (n, near)) in counts {
        println!("{rule} fires {n:>5}, near a true boundary {near:>5}");
    }
    println!("true boundaries with no fire within ±2: {missed}");
}

/// `field=value,…` over the default `BoundaryParams`, `c.field=value` over the default
/// `ClassifierParams`.
fn tried(spec: &str) -> Result<(ClassifierParams, BoundaryParams)> {
    let mut c = serde_json::to_value(ClassifierParams::default())?;
    let mut b = serde_json::to_value(BoundaryParams::default())?;
    for pair in spec.split(',').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').context("--chitchat-try wants field=value")?;
        let (json, key) = match key.strip_prefix("c.") {
            Some(k) => (&mut c, k),
            None => (&mut b, key),
        };
        if json.get(key).is_none() {
            bail!("no field {key:?}");
        }
        json[key] = serde_json::from_str(value).with_context(|| format!("the value of {key}"))?;
    }
    Ok((serde_json::from_value(c)?, serde_json::from_value(b)?))
}
