//! Learning from outcomes (parameters §12.2, docs/cognition.md §9.4.4): after a turn the edges
//! between concepts that fired are moved by STDP, signed by whether the reply used the target,
//! and co-firing pairs the reply used both of may get a new edge. Pure: it returns the changes.

use super::activate::{Activation, Graph};
use super::router;
use std::collections::{HashMap, HashSet};

/// η_stdp: the rate for existing edges (v0.6's rate).
pub const STDP_RATE: f64 = 0.1;
/// The rate for a new co-firing edge. v0.6 used the STDP rate, and with it a new edge
/// (`rate·y·f·0.5` ≤ 0.025 for y ≤ 1, |dt| ≥ 0) could never clear the 0.05 keep floor; 0.4 makes
/// a causal or simultaneous pair clear it (0.1 at dt ∈ {0, 1}, 0.067 at dt = 2) and keeps an
/// anti-causal one (−0.05 at dt = −1) out.
pub const CREATE_RATE: f64 = 0.4;
/// A new edge is kept only when |w0| exceeds this.
pub const NEW_EDGE_MIN: f64 = 0.05;
/// New co-firing edges per turn.
pub const MAX_NEW_EDGES: usize = 10;
/// An edge into a fired concept the reply did not use moves by this share of the outcome, the
/// other way.
pub const UNUSED_SHARE: f64 = 0.5;
/// With neither feedback nor a quality signal, what "the reply used it" is worth.
pub const DEFAULT_OUTCOME: f64 = 0.5;

/// STDP timing factor for `dt = step(target) − step(source)` (`None`: timing unknown).
pub fn timing(dt: Option<i32>) -> f64 {
    match dt {
        None => 1.0,
        Some(d) if d > 0 => 1.0 / (1.0 + f64::from(d)),
        Some(d) if d < 0 => -0.5 / (1.0 + f64::from(d.abs())),
        Some(_) => 0.5,
    }
}

/// The turn's outcome y ∈ [−1, 1]: explicit routing feedback wins, then the regulator's quality
/// (0–1, mapped to −1…1), else [`DEFAULT_OUTCOME`]. The regulator and feedback arrive as plain
/// numbers so the issue building them can wire them in without touching this rule.
pub fn outcome(feedback: Option<f64>, quality: Option<f64>) -> f64 {
    let y = feedback.or(quality.map(|q| 2.0 * q - 1.0)).unwrap_or(DEFAULT_OUTCOME);
    if y.is_finite() { y.clamp(-1.0, 1.0) } else { 0.0 }
}

/// The reply's quality as this turn's regulator verdict sees it, in [0, 1] (docs/cognition.md
/// §9.4.4): a break (the turn looped or overspent) and a scope-drift warning (the reply strayed
/// from the question, so what it used was off the point) are poor at [`POOR_VERDICT`];
/// otherwise the verdict's confidence, whose 0.5 without evidence makes `y` = 0 (nothing learnt
/// until the next message's feedback says more).
pub fn regulator_quality(report: &crate::vocab::regulator::RegulatorReport) -> f64 {
    let poor = !report.breaks.is_empty() || matches!(report.decision.as_str(), "circuit_break" | "scope_drift_warn");
    if poor {
        POOR_VERDICT
    } else if report.confidence.is_finite() {
        report.confidence.clamp(0.0, 1.0)
    } else {
        0.5
    }
}

/// The quality [`regulator_quality`] gives a broken or drifting turn (y = −0.5).
pub const POOR_VERDICT: f64 = 0.25;

/// The outcome of the routing feedback on a reply (the quality of its label, in [0, 1], from
/// the next user message), mapped to −1…1 like the regulator's quality: thanks 1, moving on
/// 0.4, a correction −0.6, a complaint −0.8.
pub fn feedback_outcome(quality: f64) -> f64 {
    outcome(Some(2.0 * quality - 1.0), None)
}

/// One change to the graph.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// Add `delta` to the edge (`carried`: it carried activation this turn).
    Adjust {
        edge: i64,
        delta: f64,
        carried: bool,
    },
    Create {
        source: i64,
        target: i64,
        weight: f64,
    },
}

/// The changes one turn's outcome makes. `used` are the concepts the reply used; `y` the outcome.
///
/// - An edge s→t between two fired concepts moves by `η_stdp · o · f(dt)`, where `o = y` when the
///   reply used t and `o = −UNUSED_SHARE · y` (timing magnitude only, so an anti-causal edge into
///   an unused concept is not strengthened) when it did not.
/// - An inhibitory edge that drove a used concept below zero is eased by `η_stdp · y · |f|`.
/// - Pairs of used concepts with no edge get `CREATE_RATE · y · f · 0.5`, kept above
///   [`NEW_EDGE_MIN`], the largest [`MAX_NEW_EDGES`] of them.
pub fn learn(g: &Graph, a: &Activation, used: &HashSet<i64>, y: f64) -> Vec<Change> {
    learn_routed(g, a, used, &HashMap::new(), y)
}

/// [`learn`] with the v2 router's verdicts: an edge between fired concepts that the model routed
/// also moves by [`router::route_delta`] (parameters §12.4, `w' = w + Δw_llm + Δw_stdp`).
pub fn learn_routed(
    g: &Graph,
    a: &Activation,
    used: &HashSet<i64>,
    verdicts: &HashMap<i64, router::Verdict>,
    y: f64,
) -> Vec<Change> {
    let steps: &HashMap<i64, u8> = &a.steps_of;
    let inhibited: HashSet<i64> = a.inhibited.iter().map(|x| x.0).collect();
    let mut out = Vec::new();
    let mut linked: HashSet<(i64, i64)> = HashSet::new();
    let mut sources: Vec<(&i64, &u8)> = steps.iter().collect();
    sources.sort();
    for &(&s, &ss) in &sources {
        for (t, w, edge) in g.outgoing(s) {
            linked.insert((s, t));
            if let Some(&ts) = steps.get(&t) {
                let dt = i32::from(ts) - i32::from(ss);
                let f = timing(Some(dt));
                let mut delta =
                    if used.contains(&t) { STDP_RATE * y * f } else { -UNUSED_SHARE * STDP_RATE * y * f.abs() };
                if let Some(v) = verdicts.get(&edge) {
                    // The outcome for this edge is the reply's use of its target, as for STDP.
                    let (yo, fo) = if used.contains(&t) { (y, f) } else { (-UNUSED_SHARE * y, f.abs()) };
                    delta += router::route_delta(w, *v, yo, fo);
                }
                out.push(Change::Adjust { edge, delta, carried: dt > 0 });
            } else if w < 0.0 && inhibited.contains(&t) && used.contains(&t) {
                out.push(Change::Adjust { edge, delta: STDP_RATE * y * timing(Some(1)).abs(), carried: true });
            }
        }
    }
    let mut fresh: Vec<(i64, i64, f64)> = Vec::new();
    for &(&s, &ss) in &sources {
        for &(&t, &ts) in &sources {
            if s == t || !used.contains(&s) || !used.contains(&t) || linked.contains(&(s, t)) {
                continue;
            }
            let w0 = CREATE_RATE * y * timing(Some(i32::from(ts) - i32::from(ss))) * 0.5;
            if w0.abs() > NEW_EDGE_MIN {
                fresh.push((s, t, w0));
            }
        }
    }
    out.extend(new_edges(fresh, MAX_NEW_EDGES));
    out
}

/// The largest `max` candidates by |w0| (ties: by ends), as creations.
pub fn new_edges(mut fresh: Vec<(i64, i64, f64)>, max: usize) -> Vec<Change> {
    fresh.sort_by(|a, b| b.2.abs().total_cmp(&a.2.abs()).then((a.0, a.1).cmp(&(b.0, b.1))));
    fresh.into_iter().take(max).map(|(source, target, weight)| Change::Create { source, target, weight }).collect()
}

/// `((source, target), Δw)`.
pub type PairDelta = ((i64, i64), f64);

/// Reference STDP over every ordered pair of fired nodes (parameters §12.2), for the recorded
/// vectors: existing `(s, t)` edges get `rate · y · f`, missing ones `rate · y · f · 0.5`.
pub fn stdp_pairs(
    steps: &[(i64, u8)],
    existing: &HashSet<(i64, i64)>,
    rate: f64,
    y: f64,
    max_new: usize,
) -> (Vec<PairDelta>, Vec<Change>) {
    let mut deltas = Vec::new();
    let mut fresh = Vec::new();
    for &(s, ss) in steps {
        for &(t, ts) in steps {
            if s == t {
                continue;
            }
            let f = timing(Some(i32::from(ts) - i32::from(ss)));
            if existing.contains(&(s, t)) {
                deltas.push(((s, t), rate * y * f));
            } else if (rate * y * f * 0.5).abs() > NEW_EDGE_MIN {
                fresh.push((s, t, rate * y * f * 0.5));
            }
        }
    }
    (deltas, new_edges(fresh, max_new))
}

/// The fired concepts a reply used: those whose name appears in it as whole words (any case).
///
/// The report asks this of every node of the graph each turn (tens of thousands at 100k
/// memories), so a name is first checked by its first word against the reply's words, without
/// allocating: almost every name stops there, and only the rest are lowered and matched whole.
pub fn used_concepts<'n>(reply: &str, fired: impl IntoIterator<Item = (i64, &'n str)>) -> HashSet<i64> {
    let reply = words(reply).map(|w| lowered(w).into_owned()).collect::<Vec<_>>();
    let present: HashSet<&str> = reply.iter().map(String::as_str).collect();
    fired
        .into_iter()
        .filter(|(_, name)| {
            let Some(first) = words(name).next() else { return false };
            if !present.contains(lowered(first).as_ref()) {
                return false;
            }
            let n: Vec<String> = words(name).map(|w| lowered(w).into_owned()).collect();
            reply.windows(n.len()).any(|w| w == n.as_slice())
        })
        .map(|(id, _)| id)
        .collect()
}

impl Graph {
    /// The graph's concepts `reply` names ([`used_concepts`] over every node). Only the nodes
    /// whose first word the reply has can match, and an index of first words finds them, so
    /// the cost is the reply's words, not the graph's 250k names at 1M memories (a scan of
    /// them all was ~17 % of a turn's samples there).
    pub fn named_in(&self, reply: &str) -> HashSet<i64> {
        let index = self.by_first_word.get_or_init(|| {
            let mut index: HashMap<String, Vec<u32>> = HashMap::new();
            for (i, n) in self.nodes.iter().enumerate() {
                if let Some(w) = first_word(&n.name) {
                    index.entry(w).or_default().push(i as u32);
                }
            }
            index
        });
        let said: HashSet<String> = words(reply).map(|w| lowered(w).into_owned()).collect();
        let candidates = said.iter().filter_map(|w| index.get(w)).flatten().map(|&i| {
            let n = &self.nodes[i as usize];
            (n.id, n.name.as_str())
        });
        used_concepts(reply, candidates)
    }
}

/// A name's first word, lower-cased (the key of `Graph::by_first_word`).
pub(super) fn first_word(name: &str) -> Option<String> {
    words(name).next().map(|w| lowered(w).into_owned())
}

/// The words of `s`: runs of letters, digits and apostrophes.
fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !c.is_alphanumeric() && c != '\'').filter(|w| !w.is_empty())
}

/// `w` lower-cased, borrowed when it has no upper-case ASCII letter and nothing outside ASCII.
fn lowered(w: &str) -> std::borrow::Cow<'_, str> {
    if w.is_ascii() && !w.bytes().any(|b| b.is_ascii_uppercase()) { w.into() } else { w.to_lowercase().into() }
}
