//! The adaptive layer on real people (docs/cognition.md §18.8): every speaker of the chit-chat
//! sessions is a user whose messages build a style profile the way the chunker does
//! (`style::observe` then the EMA), and the directives are planned from it after every message.
//!
//! Terse and expansive speakers are told apart by their mean words per message. The cut-offs
//! (the 25th and 75th percentiles) are read on the calibration part (even sessions) and applied
//! to the report part (odd sessions), whose figures are printed.
//!
//! Usage: `adaptive_eval [PATH]` (default: /work/shared/data/chitchat/topic_shift_dev.jsonl).

use chalie::cognition::adaptive::{Inputs, Origin, Side, Slot, plan, signals};
use chalie::memory::style::{StyleProfile, merge, observe};
use std::collections::BTreeMap;

struct Speaker {
    lines: Vec<String>,
}

impl Speaker {
    fn mean_words(&self) -> f64 {
        let words: usize = self.lines.iter().map(|l| l.split_whitespace().count()).sum();
        words as f64 / self.lines.len().max(1) as f64
    }
}

/// `(session index, speaker)` → their messages, in order.
fn speakers(path: &str) -> anyhow::Result<Vec<(usize, Speaker)>> {
    let raw = std::fs::read_to_string(path)?;
    let mut out = Vec::new();
    for (i, line) in raw.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        // A run of lines by one speaker is one message: a chat user splits what an assistant's
        // user sends at once.
        let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut last: Option<String> = None;
        for u in v["utterances"].as_array().into_iter().flatten() {
            let (Some(s), Some(t)) = (u["speaker"].as_str(), u["text"].as_str()) else { continue };
            let lines = by.entry(s.to_string()).or_default();
            match lines.last_mut() {
                Some(prev) if last.as_deref() == Some(s) => {
                    prev.push(' ');
                    prev.push_str(t);
                }
                _ => lines.push(t.to_string()),
            }
            last = Some(s.to_string());
        }
        out.extend(by.into_values().filter(|l| l.len() >= 4).map(|lines| (i, Speaker { lines })));
    }
    Ok(out)
}

fn percentile(mut xs: Vec<f64>, p: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let i = ((xs.len().saturating_sub(1)) as f64 * p).round() as usize;
    xs.get(i).copied().unwrap_or(0.0)
}

/// How one speaker's profile spoke over their conversation.
#[derive(Default)]
struct Tally {
    turns: usize,
    /// Turns whose directives held a length directive toward each side.
    short: usize,
    long: usize,
    /// The same, on the length slot alone (pacing left out).
    length_short: usize,
    length_long: usize,
    directives: usize,
}

fn run(s: &Speaker) -> Tally {
    let mut profile: Option<StyleProfile> = None;
    let mut t = Tally::default();
    for line in &s.lines {
        // The directives for the reply to `line` come from the profile before it (the chunker
        // observes a message after its reply), plus the message's own energy.
        let energy = profile
            .filter(|p| p.observations >= 2)
            .and_then(|p| signals::energy(observe(line)?.get("verbosity")?, p.style.get("verbosity")?));
        let applied = plan(&Inputs { profile, energy, tolerance: signals::START_TOLERANCE, ..Inputs::default() });
        t.turns += 1;
        t.directives += applied.directives.len();
        let length = |side| {
            applied.directives.iter().any(|d| {
                d.side == Some(side)
                    && (d.slot == Slot::Length || (d.slot == Slot::Pacing && d.origin == Origin::Profile))
            })
        };
        t.short += usize::from(length(Side::Low));
        t.long += usize::from(length(Side::High));
        let slot_only = |side| applied.directives.iter().any(|d| d.side == Some(side) && d.slot == Slot::Length);
        t.length_short += usize::from(slot_only(Side::Low));
        t.length_long += usize::from(slot_only(Side::High));
        if let Some(o) = observe(line) {
            profile = Some(merge(profile, &o));
        }
    }
    t
}

fn main() -> anyhow::Result<()> {
    let path =
        std::env::args().nth(1).unwrap_or_else(|| "/work/shared/data/chitchat/topic_shift_dev.jsonl".to_string());
    let all = speakers(&path)?;
    let (calib, report): (Vec<_>, Vec<_>) = all.into_iter().partition(|(i, _)| i % 2 == 0);
    let means: Vec<f64> = calib.iter().map(|(_, s)| s.mean_words()).collect();
    let (terse_cut, expansive_cut) = (percentile(means.clone(), 0.25), percentile(means, 0.75));
    println!(
        "calibration (even sessions): {} speakers; terse ≤ {terse_cut:.2} words/message, expansive ≥ {expansive_cut:.2}",
        calib.len()
    );
    for (name, pick) in [
        ("terse", Box::new(|m: f64| m <= terse_cut) as Box<dyn Fn(f64) -> bool>),
        ("middle", Box::new(|m: f64| m > terse_cut && m < expansive_cut)),
        ("expansive", Box::new(|m: f64| m >= expansive_cut)),
    ] {
        let group: Vec<&Speaker> = report.iter().map(|(_, s)| s).filter(|s| pick(s.mean_words())).collect();
        let tallies: Vec<Tally> = group.iter().map(|s| run(s)).collect();
        let turns: usize = tallies.iter().map(|t| t.turns).sum();
        let sum = |f: fn(&Tally) -> usize| tallies.iter().map(f).sum::<usize>();
        let pct = |n: usize| 100.0 * n as f64 / turns.max(1) as f64;
        // At the end of the conversation: does the speaker's last reply get the expected side?
        let last_short = group.iter().filter(|s| ends(s, Side::Low)).count();
        let last_long = group.iter().filter(|s| ends(s, Side::High)).count();
        println!(
            "report (odd sessions) {name:<9}: {:>3} speakers, {turns:>5} turns; turns with a shorter-reply directive \
             {:5.1} %, fuller {:5.1} % (length slot alone: {:5.1} % / {:5.1} %); directives per turn {:.2}; \
             last turn short {}/{} long {}/{}",
            group.len(),
            pct(sum(|t| t.short)),
            pct(sum(|t| t.long)),
            pct(sum(|t| t.length_short)),
            pct(sum(|t| t.length_long)),
            sum(|t| t.directives) as f64 / turns.max(1) as f64,
            last_short,
            group.len(),
            last_long,
            group.len(),
        );
    }
    Ok(())
}

/// Whether the directives for the speaker's last message lean toward `side` on length or pacing.
fn ends(s: &Speaker, side: Side) -> bool {
    let mut profile: Option<StyleProfile> = None;
    for line in &s.lines[..s.lines.len() - 1] {
        if let Some(o) = observe(line) {
            profile = Some(merge(profile, &o));
        }
    }
    let applied = plan(&Inputs { profile, tolerance: signals::START_TOLERANCE, ..Inputs::default() });
    applied.directives.iter().any(|d| d.side == Some(side) && matches!(d.slot, Slot::Length | Slot::Pacing))
}
