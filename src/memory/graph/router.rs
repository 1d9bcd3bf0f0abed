//! The v2 router's rules (seed 004 §3–§6, parameters §12.4, docs/cognition.md §9.4.9), pure:
//! which tier an edge is in, what one step asks the lightweight model, how its answer is
//! checked and applied, how learning combines its multiplier with STDP, and the circuit breaker.
//! The model call itself is in `routed.rs`.

use super::activate::Graph;
use super::run::Transfer;
use crate::llm::{ChatRequest, Message, ResponseFormat};
use serde_json::{Value, json};
use std::collections::HashMap;

/// Reflex: `w > REFLEX_ABOVE` or `w < REFLEX_BELOW` transfers mechanically (parameters §12.4).
pub const REFLEX_ABOVE: f64 = 0.8;
pub const REFLEX_BELOW: f64 = -0.5;
/// Below this |w| is the band the seed leaves open (faint): sent to the model after the
/// habitual edges, while the step's candidate budget lasts, else mechanical. Faint edges are
/// the newest (growth's 0.15, a co-firing edge's 0.05–0.1), where the graph's own evidence is
/// thinnest, so a verdict is worth most there; they carry little energy either way.
pub const FAINT_BELOW: f64 = 0.2;
/// λ_safety: the share of a learning step's target the model's multiplier sets (the rest is the
/// edge's own weight). 0.3 keeps one confident contrary verdict on a full-strength edge with a
/// good outcome to a 0.25·0.3·2 = 0.15 move, so flipping a reflex edge takes several turns.
pub const LAMBDA_SAFETY: f64 = 0.3;
/// η_route (parameters §12.4).
pub const ROUTE_RATE: f64 = 0.25;
/// w_ref (parameters §12.4).
pub const W_REF: f64 = 1.0;
/// Candidate edges per call: with the fired nodes sent (≤ [`MAX_FIRED_SENT`]) the cost model's
/// 240 + 36·8 + 24·24 = 1104 input tokens stays under the 1200 per call.
pub const MAX_CANDIDATES: usize = 24;
pub const MAX_FIRED_SENT: usize = 8;
/// Output tokens per call (parameters §12.4: ≤ 220).
pub const MAX_OUTPUT_TOKENS: u32 = 220;
/// New nodes the model's suggestions may create per turn (parameters §12.4: ≤ 2); per day they
/// count against deterministic growth's [`super::grow::MAX_GROWN_PER_DAY`] (60), so the two
/// together never pass the seed's 60 a day.
pub const MAX_NEW_NODES_PER_TURN: usize = 2;
/// Concepts a turn's prune suggestions may weaken.
pub const MAX_PRUNES_PER_TURN: usize = 2;
/// A prune suggestion with confidence g takes `PRUNE_WEAKEN·g` of each edge into the concept
/// (toward zero): a learned edge named again and again falls below the decay pass's pruning
/// line, and nothing is deleted on one suggestion (docs/cognition.md §9.4.11).
pub const PRUNE_WEAKEN: f64 = 0.5;
/// A suggested node's content, in characters (parameters §12.4: 8–220).
pub const NODE_CONTENT_CHARS: std::ops::RangeInclusive<usize> = 8..=220;
/// Consecutive hard timeouts that switch the model tier off, and for how many turns.
pub const TIMEOUTS_TO_TRIP: u8 = 3;
pub const OFF_TURNS: u64 = 25;

/// How an edge is routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    Reflex,
    Habitual,
    Faint,
}

pub fn tier(w: f64) -> Tier {
    if !(REFLEX_BELOW..=REFLEX_ABOVE).contains(&w) {
        Tier::Reflex
    } else if w.abs() >= FAINT_BELOW {
        Tier::Habitual
    } else {
        Tier::Faint
    }
}

/// The model's verdict on one edge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// In [−1, 1]: the sign and share of the edge's strength to pass on.
    pub multiplier: f64,
    /// In [0, 1].
    pub confidence: f64,
}

/// The weight a routed transfer uses: `(1 − g)·w + g·m·|w|`. A sure verdict (g = 1) replaces
/// the edge's sign and share with the model's; an unsure one (the contract's m = 0, g ≤ 0.35)
/// keeps most of the stored weight.
pub fn effective(w: f64, v: Verdict) -> f64 {
    (1.0 - v.confidence) * w + v.confidence * v.multiplier * w.abs()
}

/// The step's non-reflex transfers, one per (source, target): habitual before faint, then by
/// energy carried, at most [`MAX_CANDIDATES`].
pub fn candidates(transfers: impl Iterator<Item = Transfer>) -> Vec<Transfer> {
    let mut by_pair: HashMap<(i64, i64), Transfer> = HashMap::new();
    for t in transfers.filter(|t| tier(t.weight) != Tier::Reflex) {
        let e = by_pair.entry((t.source, t.target)).or_insert(t);
        if t.weight.abs() > e.weight.abs() {
            *e = t;
        }
    }
    let mut out: Vec<Transfer> = by_pair.into_values().collect();
    out.sort_by(|a, b| {
        (tier(a.weight) == Tier::Faint)
            .cmp(&(tier(b.weight) == Tier::Faint))
            .then((b.weight.abs() * b.energy).total_cmp(&(a.weight.abs() * a.energy)))
            .then((a.source, a.target).cmp(&(b.source, b.target)))
    });
    out.truncate(MAX_CANDIDATES);
    out
}

const SYSTEM: &str = "You route activation in a concept graph for a personal assistant. \
Some concepts fired for the user's message; each candidate edge would pass energy from a fired \
concept to another. For each candidate decide how much of it should pass: multiplier 1 = all of \
it, 0 = none, negative = suppress the target. Reply with one JSON object only, no prose. \
Multipliers are in [-1, 1] and confidences in [0, 1]. Use only the source_id/target_id pairs \
given; never invent one and never repeat one. When unsure, multiplier 0.0 with confidence at \
most 0.35. When the user negates a concept, prefer a negative multiplier into it.";

/// One step's request: the message, what fired, the candidates (ids as strings).
pub fn request(message: &str, step: u8, graph: &Graph, fired: &[(i64, f64)], cands: &[Transfer]) -> ChatRequest {
    let name = |id: i64| graph.node(id).map_or("", |n| n.name.as_str());
    let fired: Vec<Value> = fired
        .iter()
        .take(MAX_FIRED_SENT)
        .map(|&(id, e)| json!({"node_id": id.to_string(), "content": name(id), "energy": round2(e)}))
        .collect();
    let edges: Vec<Value> = cands
        .iter()
        .map(|t| {
            json!({"source_id": t.source.to_string(), "target_id": t.target.to_string(),
                "target": name(t.target), "edge_weight": round2(t.weight),
                "edge_tier": if tier(t.weight) == Tier::Faint { "faint" } else { "habitual" }})
        })
        .collect();
    let user = format!(
        "STEP={step}\nUSER_MESSAGE={message}\nFIRED_NODES={}\nCANDIDATE_EDGES={}\n\
         Return {{\"step\": int, \"routes\": [{{\"source_id\", \"target_id\", \"multiplier\", \"confidence\", \
         \"reason\"}}], \"new_nodes\": [], \"prune_candidates\": []}}.",
        Value::Array(fired),
        Value::Array(edges),
    );
    let mut req = ChatRequest::new(vec![Message::system(SYSTEM), Message::user(user)]);
    req.temperature = 0.0;
    req.max_tokens = MAX_OUTPUT_TOKENS;
    req.logprobs = false;
    req.format = ResponseFormat::JsonSchema { name: "graph_routes".into(), schema: schema() };
    req
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The answer's required shape; ranges are checked per row in [`parse`] so one bad row does
/// not cost the others.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "required": ["step", "routes"],
        "properties": {
            "step": {"type": "integer"},
            "routes": {"type": "array", "items": {
                "type": "object",
                "required": ["source_id", "target_id", "multiplier", "confidence"],
                "properties": {
                    "source_id": {"type": "string"},
                    "target_id": {"type": ["string", "null"]},
                    "multiplier": {"type": "number"},
                    "confidence": {"type": "number"}
                }
            }},
            "new_nodes": {"type": "array"},
            "prune_candidates": {"type": "array"}
        }
    })
}

/// A node the model suggests, checked: every id names a concept of the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSuggestion {
    /// The normalised content ([`super::grow::normalise`]): the node's name.
    pub name: String,
    /// Concepts it gets an edge from (`from_source_ids` and `initial_in_edges_from`).
    pub from: Vec<i64>,
    /// Concepts it gets an edge to (`proposed_out_edges_to`).
    pub to: Vec<i64>,
    pub confidence: f64,
}

/// A concept the model suggests is superseded, contradicted or stale.
#[derive(Debug, Clone, PartialEq)]
pub struct PruneSuggestion {
    pub node: i64,
    pub reason: String,
    pub confidence: f64,
}

/// A checked answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// By (source, target), for candidates only.
    pub verdicts: HashMap<(i64, i64), Verdict>,
    /// Rows dropped: unknown or repeated pairs, a multiplier outside [−1, 1], a null target.
    pub dropped: usize,
    pub new_nodes: Vec<NodeSuggestion>,
    pub prunes: Vec<PruneSuggestion>,
    /// Suggestions dropped, each with why (for the report).
    pub refused: Vec<String>,
}

/// One JSON decode of the trimmed text, checked against [`schema`]; `Err` (with why) is junk and
/// the step is routed mechanically. Rows for pairs that are not candidates are dropped, as are
/// out-of-range multipliers; confidence is clamped to [0, 1].
pub fn parse(text: &str, cands: &[Transfer], graph: &Graph) -> Result<Parsed, String> {
    let v: Value = serde_json::from_str(text.trim()).map_err(|e| format!("not JSON: {e}"))?;
    crate::llm::schema::validate(&v, &schema())?;
    let mut out = Parsed::default();
    let rows = v.get("routes").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for r in rows {
        let id = |k: &str| r.get(k).and_then(Value::as_str).and_then(|s| s.trim().parse::<i64>().ok());
        let m = r.get("multiplier").and_then(Value::as_f64).unwrap_or(f64::NAN);
        let g = r.get("confidence").and_then(Value::as_f64).unwrap_or(f64::NAN);
        let pair = id("source_id").zip(id("target_id"));
        let known = pair.filter(|&(s, t)| cands.iter().any(|c| c.source == s && c.target == t));
        match known {
            Some(p) if m.is_finite() && (-1.0..=1.0).contains(&m) && !out.verdicts.contains_key(&p) => {
                let confidence = if g.is_finite() { g.clamp(0.0, 1.0) } else { 0.0 };
                out.verdicts.insert(p, Verdict { multiplier: m, confidence });
            }
            _ => out.dropped += 1,
        }
    }
    suggestions(&v, graph, &mut out);
    Ok(out)
}

/// The answer's `new_nodes` and `prune_candidates`, checked against the graph: ids that name
/// no concept are dropped, a node with no existing concept to hang from is refused, as is
/// content out of [`NODE_CONTENT_CHARS`], all punctuation, or a filler neurogenesis blocks.
fn suggestions(v: &Value, graph: &Graph, out: &mut Parsed) {
    let rows = |k: &str| v.get(k).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let ids = |r: &Value, k: &str| -> (Vec<i64>, Vec<String>) {
        let mut known = Vec::new();
        let mut missing = Vec::new();
        for x in r.get(k).and_then(Value::as_array).into_iter().flatten() {
            let raw = x.as_str().map(str::to_string).unwrap_or_else(|| x.to_string());
            match raw.trim().parse::<i64>().ok().filter(|&id| graph.node(id).is_some()) {
                Some(id) if !known.contains(&id) => known.push(id),
                Some(_) => {}
                None => missing.push(raw),
            }
        }
        (known, missing)
    };
    let confidence = |r: &Value| r.get("confidence").and_then(Value::as_f64).filter(|g| g.is_finite());
    for r in rows("new_nodes") {
        let content = r.get("content").and_then(Value::as_str).unwrap_or_default().trim();
        let shown: String = content.chars().take(40).collect();
        if !NODE_CONTENT_CHARS.contains(&content.chars().count()) {
            out.refused.push(format!("new node {shown:?}: content of {} characters", content.chars().count()));
            continue;
        }
        let name = super::grow::normalise(content);
        // Neurogenesis's filler list; its three-token floor is for messages, not names.
        if name.is_empty() || super::grow::BLOCKED.contains(&name.as_str()) {
            out.refused.push(format!("new node {shown:?}: blocked content"));
            continue;
        }
        let (mut from, mut missing) = ids(r, "from_source_ids");
        let (more, gone) = ids(r, "initial_in_edges_from");
        from.extend(more.into_iter().filter(|id| !from.contains(id)).collect::<Vec<_>>());
        missing.extend(gone);
        let (to, gone) = ids(r, "proposed_out_edges_to");
        missing.extend(gone);
        if from.is_empty() {
            out.refused.push(format!("new node {shown:?}: no existing concept to connect from"));
            continue;
        }
        if !missing.is_empty() {
            out.refused.push(format!("new node {shown:?}: unknown concept(s) {} left out", missing.join(", ")));
        }
        let confidence = confidence(r).unwrap_or(0.0).clamp(0.0, 1.0);
        out.new_nodes.push(NodeSuggestion { name, from, to, confidence });
    }
    for r in rows("prune_candidates") {
        let raw = r.get("node_id").map(|x| x.as_str().map(str::to_string).unwrap_or_else(|| x.to_string()));
        let raw = raw.unwrap_or_default();
        match raw.trim().parse::<i64>().ok().filter(|&id| graph.node(id).is_some()) {
            Some(node) => out.prunes.push(PruneSuggestion {
                node,
                reason: r.get("reason").and_then(Value::as_str).unwrap_or("stale").chars().take(24).collect(),
                confidence: confidence(r).unwrap_or(0.0).clamp(0.0, 1.0),
            }),
            None => out.refused.push(format!("prune {raw}: no such concept")),
        }
    }
}

/// The model's part of a learning step on an edge it routed (parameters §12.4):
/// `z = clamp(w/w_ref, −1, 1)`, `target = (1 − λ_safety)·z + λ_safety·r`,
/// `Δw_llm = η_route·y·f·g·(target − z)`. STDP's `η_stdp·y·f` is added by the caller.
pub fn route_delta(w: f64, v: Verdict, y: f64, f: f64) -> f64 {
    let z = (w / W_REF).clamp(-1.0, 1.0);
    let target = (1.0 - LAMBDA_SAFETY) * z + LAMBDA_SAFETY * v.multiplier;
    ROUTE_RATE * y * f * v.confidence * (target - z)
}

/// The model tier's circuit breaker, kept by the engine across turns: [`TIMEOUTS_TO_TRIP`]
/// hard timeouts in a row switch it off for the next [`OFF_TURNS`] turns. An answer in time
/// (usable or not) ends a run of timeouts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Breaker {
    turn: u64,
    in_a_row: u8,
    off_through: Option<u64>,
}

impl Breaker {
    /// A new turn; whether the model tier may be asked during it.
    pub fn begin_turn(&mut self) -> bool {
        self.turn += 1;
        match self.off_through {
            Some(t) if self.turn <= t => false,
            Some(_) => {
                self.off_through = None;
                true
            }
            None => true,
        }
    }

    pub fn timed_out(&mut self) {
        self.in_a_row += 1;
        if self.in_a_row >= TIMEOUTS_TO_TRIP {
            self.in_a_row = 0;
            self.off_through = Some(self.turn + OFF_TURNS);
        }
    }

    pub fn answered(&mut self) {
        self.in_a_row = 0;
    }

    /// Turns after this one that the tier stays off (0: on).
    pub fn off_turns_left(&self) -> u64 {
        self.off_through.map_or(0, |t| t.saturating_sub(self.turn))
    }
}

#[cfg(test)]
mod tests;
