//! A turn's use of the graph (docs/cognition.md §9.4.3–9.4.5): activate from the message, keep
//! the firings, grow a node for novel content; after the reply, learn from what it used (again
//! when the next message's feedback on it arrives); in the
//! decay pass, fade and prune learned edges and drop expired probationary nodes.

use super::context::{CONTEXT_TOKEN_BUDGET, GraphLine, context_lines};
use super::grow::{self, Novelty};
use super::learn::{self, Change};
use super::routed::Routed;
use super::router::Verdict;
use super::{Activated, Activation, Graph, GraphCache, Params, Seed, persist};
use crate::store::{ConceptsRepo, KvStateRepo, RelationshipsRepo, StoreError, VecTable, VectorRepo, in_savepoint};
use crate::vocab::graph::{GraphFiring, GraphReport, GraphRouting, GraphSeed};
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// What the graph did for one message.
#[derive(Debug, Clone, Default)]
pub struct TurnGraph {
    pub activated: Activated,
    /// Fired concepts for the reply's context, with provenance.
    pub lines: Vec<GraphLine>,
    pub novelty: Option<Novelty>,
    /// The node grown from this message, if one was.
    pub grown: Option<i64>,
    /// Its name: the activation's graph was read before the node existed, so it cannot say.
    pub grown_name: Option<String>,
    /// The v2 router's report, when it is configured on.
    pub routing: Option<GraphRouting>,
    /// The model's verdict on each edge it routed, by edge id.
    pub verdicts: HashMap<i64, Verdict>,
}

/// Activate from the message's embedding, persist the firings, confirm probationary nodes that
/// fired often enough, and grow a node when the message is novel (not for social messages).
/// The graph comes from `cache`, read from the database only when it changed.
pub fn for_message(
    c: &Connection,
    cache: &GraphCache,
    text: &str,
    embedding: &[f32],
    social: bool,
    now: i64,
) -> Result<TurnGraph, StoreError> {
    let Some(activated) = activate_for(c, cache, embedding)? else { return Ok(TurnGraph::default()) };
    finish(c, activated, Routed::default(), text, embedding, social, now)
}

/// [`for_message`]'s first half, which writes nothing: the graph, the message's seeds and the
/// activation over them; `None` as for [`prepare`]. [`finish`] writes it (the turn, in one
/// commit with its topic stage).
pub fn activate_for(c: &Connection, cache: &GraphCache, embedding: &[f32]) -> Result<Option<Activated>, StoreError> {
    let Some((graph, seeds)) = prepare(c, cache, embedding)? else { return Ok(None) };
    let activation = super::activate::activate(&graph, &seeds, &Params::default());
    Ok(Some(Activated { graph, seeds, activation }))
}

/// The graph and a message's seeds.
pub type Prepared = (std::sync::Arc<Graph>, Vec<Seed>);

/// The graph and the message's seeds, for an activation run outside the database thread (the
/// v2 router's model calls); `None` for an embedding of another space (a model change not yet
/// re-embedded), which cannot seed the graph.
pub fn prepare(c: &Connection, cache: &GraphCache, embedding: &[f32]) -> Result<Option<Prepared>, StoreError> {
    if embedding.len() != crate::store::embedding_dim(c)? {
        return Ok(None);
    }
    Ok(Some((cache.graph(c)?, super::nearest_seeds(c, embedding)?)))
}

/// After the activation: persist it, confirm, grow. `routed` carries the v2 router's report and
/// verdicts (its activation is `activated`'s).
pub fn finish(
    c: &Connection,
    activated: Activated,
    routed: Routed,
    text: &str,
    embedding: &[f32],
    social: bool,
    now: i64,
) -> Result<TurnGraph, StoreError> {
    in_savepoint(c, || finish_writes(c, activated, routed, text, embedding, social, now))
}

/// [`finish`]'s writes, run as one commit.
fn finish_writes(
    c: &Connection,
    activated: Activated,
    routed: Routed,
    text: &str,
    embedding: &[f32],
    social: bool,
    now: i64,
) -> Result<TurnGraph, StoreError> {
    persist(c, &activated.activation, now)?;
    let mut routed = routed;
    super::suggest::apply(c, &activated, &mut routed, embedding, now)?;
    let concepts = ConceptsRepo(c);
    for p in concepts.probationers()? {
        if activated.activation.steps_of.contains_key(&p.id) && grow::confirmed(p.fired_count, false) {
            concepts.confirm(p.id)?;
        }
    }
    let lines = context_lines(&activated, CONTEXT_TOKEN_BUDGET);
    let routing = (!routed.report.mode.is_empty()).then_some(routed.report);
    let mut out = TurnGraph { activated, lines, routing, verdicts: routed.verdicts, ..TurnGraph::default() };
    if !social {
        grow_node(c, text, embedding, &mut out, now)?;
    }
    Ok(out)
}

impl TurnGraph {
    /// The turn's graph for the `routed` event and the Routing pane, by name.
    pub fn report(&self) -> GraphReport {
        let a = &self.activated;
        let name = |id: i64| a.name(id).to_string();
        GraphReport {
            seeds: a.seeds.iter().map(|s| GraphSeed { name: name(s.node), energy: s.energy }).collect(),
            fired: a
                .activation
                .fired
                .iter()
                .map(|f| GraphFiring {
                    name: name(f.node),
                    step: f.step,
                    energy: f.energy,
                    via: f.via.map(|v| name(v.from)),
                    weight: f.via.map(|v| v.weight),
                })
                .collect(),
            inhibited: a.activation.inhibited.iter().map(|&(id, p)| GraphSeed { name: name(id), energy: p }).collect(),
            grown: self.grown_name.clone(),
            router: self.routing.clone(),
        }
    }
}

fn grow_node(c: &Connection, text: &str, embedding: &[f32], t: &mut TurnGraph, now: i64) -> Result<(), StoreError> {
    let normalised = grow::normalise(text);
    let v = VectorRepo(c);
    let top1 = if v.is_empty(VecTable::Concepts)? {
        None
    } else {
        v.search(VecTable::Concepts, embedding, 1)?.first().map(|(_, d)| 1.0 - f64::from(*d))
    };
    let novelty = grow::novelty(&normalised, top1);
    t.novelty = Some(novelty);
    if novelty == Novelty::Blocked {
        return Ok(());
    }
    let Some(name) = grow::grown_name(&normalised) else { return Ok(()) };
    let concepts = ConceptsRepo(c);
    let key = grow::graph_key(&name);
    if let Some(id) = concepts.by_graph_key(&key)? {
        concepts.bump_seed_count(id, now)?;
        return Ok(());
    }
    if novelty != Novelty::Novel || concepts.grown_since(now - 86_400)? >= grow::MAX_GROWN_PER_DAY {
        return Ok(());
    }
    let id = concepts.insert_grown(&key, &name, grow::GROWN_THRESHOLD, now)?;
    v.upsert(VecTable::Concepts, id, embedding)?;
    let edges = RelationshipsRepo(c);
    for s in &t.activated.seeds {
        edges.insert_learned(s.node, id, grow::SEED_EDGE, now)?;
    }
    t.grown = Some(id);
    t.grown_name = Some(name);
    Ok(())
}

/// What learning did after a reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Learned {
    pub used: Vec<i64>,
    pub adjusted: usize,
    pub created: usize,
    pub outcome: f64,
}

/// Learn from the reply: which fired concepts it used, and outcome `y` ([`learn::outcome`]).
/// An explicit positive outcome (`y` ≥ 1) confirms the probationary nodes it used. What fired
/// and what the reply used are kept under `exchange_id` for [`after_feedback`].
pub fn after_reply(
    c: &Connection,
    t: &TurnGraph,
    exchange_id: &str,
    reply: &str,
    y: f64,
    now: i64,
) -> Result<Learned, StoreError> {
    let a = &t.activated;
    let fired = a.activation.steps_of.keys().map(|&id| (id, a.name(id)));
    let used = learn::used_concepts(reply, fired);
    let kept = Fired::of(&a.activation, &used, &t.verdicts);
    let kept = serde_json::to_string(&kept).unwrap_or_default();
    in_savepoint(c, || {
        let kv = KvStateRepo(c);
        kv.delete_older(FIRED_NAMESPACE, now - FIRED_KEPT_S)?;
        kv.set_text(FIRED_NAMESPACE, exchange_id, &kept, now)?;
        apply(c, &a.graph, &a.activation, used, &t.verdicts, y, now)
    })
}

/// The routing feedback on an exchange's reply arrived (with the next user message):
/// learn from it over what fired in that exchange, against the graph as it is now. Applied
/// once; `None` when nothing is kept for the exchange (nothing fired, already applied, or
/// older than [`FIRED_KEPT_S`]). `quality` is the feedback label's, in [0, 1].
pub fn after_feedback(
    c: &Connection,
    cache: &GraphCache,
    exchange_id: &str,
    quality: f64,
    now: i64,
) -> Result<Option<Learned>, StoreError> {
    let Some(text) = KvStateRepo(c).take_text(FIRED_NAMESPACE, exchange_id)? else { return Ok(None) };
    let Ok(kept) = serde_json::from_str::<Fired>(&text) else { return Ok(None) };
    let activation = Activation {
        steps_of: kept.steps.into_iter().collect(),
        inhibited: kept.inhibited.into_iter().map(|id| (id, 0.0)).collect(),
        ..Activation::default()
    };
    let graph = cache.graph(c)?;
    let verdicts: HashMap<i64, Verdict> =
        kept.routes.into_iter().map(|(e, multiplier, confidence)| (e, Verdict { multiplier, confidence })).collect();
    let y = learn::feedback_outcome(quality);
    let used = kept.used.into_iter().collect();
    in_savepoint(c, || apply(c, &graph, &activation, used, &verdicts, y, now)).map(Some)
}

/// Where [`after_reply`] keeps what fired, by exchange id (`kv_state` namespace).
pub const FIRED_NAMESPACE: &str = "graph_fired";
/// How long a fired set waits for its feedback.
pub const FIRED_KEPT_S: i64 = 86_400;

/// What fired in one exchange, as learning needs it later: ids and steps, no text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Fired {
    steps: Vec<(i64, u8)>,
    inhibited: Vec<i64>,
    used: Vec<i64>,
    /// The router's verdicts: (edge, multiplier, confidence).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    routes: Vec<(i64, f64, f64)>,
}

impl Fired {
    fn of(a: &Activation, used: &HashSet<i64>, verdicts: &HashMap<i64, Verdict>) -> Fired {
        let mut routes: Vec<(i64, f64, f64)> = verdicts.iter().map(|(&e, v)| (e, v.multiplier, v.confidence)).collect();
        routes.sort_by_key(|r| r.0);
        let mut steps: Vec<(i64, u8)> = a.steps_of.iter().map(|(&id, &s)| (id, s)).collect();
        steps.sort_unstable();
        let mut used: Vec<i64> = used.iter().copied().collect();
        used.sort_unstable();
        Fired { steps, inhibited: a.inhibited.iter().map(|x| x.0).collect(), used, routes }
    }
}

/// Write one outcome's changes (a zero change is not written, so a neutral outcome leaves the
/// graph's version alone).
fn apply(
    c: &Connection,
    g: &Graph,
    a: &Activation,
    used: HashSet<i64>,
    verdicts: &HashMap<i64, Verdict>,
    y: f64,
    now: i64,
) -> Result<Learned, StoreError> {
    let changes = learn::learn_routed(g, a, &used, verdicts, y);
    let edges = RelationshipsRepo(c);
    let mut report = Learned { outcome: y, ..Learned::default() };
    for ch in changes {
        match ch {
            Change::Adjust { delta, .. } if delta == 0.0 || !delta.is_finite() => {}
            Change::Adjust { edge, delta, carried } => {
                edges.add_weight(edge, delta, carried, now)?;
                report.adjusted += 1;
            }
            Change::Create { source, target, weight } => {
                report.created += usize::from(edges.insert_learned(source, target, weight, now)?)
            }
        }
    }
    if y >= 1.0 {
        for id in &used {
            if g.node(*id).is_some_and(|n| n.probation) {
                ConceptsRepo(c).confirm(*id)?;
            }
        }
    }
    report.used = used.into_iter().collect();
    report.used.sort_unstable();
    Ok(report)
}

/// Learned edges lose this share of their weight per decay period.
pub const LEARNED_EDGE_DECAY: f64 = 0.02;
/// Learned edges weaker than this are pruned (parameters §12.3 consolidation).
pub const PRUNE_BELOW: f64 = 0.05;

/// A removed row: `(layer, id, snapshot)` for the deletion record.
pub type Removed = (String, i64, serde_json::Value);

/// What the decay pass did to the graph.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GraphDecay {
    pub edges_pruned: usize,
    pub nodes_expired: usize,
}

/// Fade learned edges by `periods` decay periods and prune the weak ones; drop probationary
/// nodes past their probation. Extracted edges are the semantic worker's record and are left alone.
/// Returns what was removed, with each removal's snapshot for the deletion record.
pub fn decay(c: &Connection, periods: f64, now: i64) -> Result<(GraphDecay, Vec<Removed>), StoreError> {
    let edges = RelationshipsRepo(c);
    let factor = (1.0 - LEARNED_EDGE_DECAY).powf(periods.max(0.0));
    edges.scale_learned(factor)?;
    let mut report = GraphDecay::default();
    let mut removed = Vec::new();
    for id in edges.learned_weaker_than(PRUNE_BELOW)? {
        if let Some(snap) = edges.snapshot(id)? {
            removed.push(("relationship".to_string(), id, snap));
        }
        edges.delete(id)?;
        report.edges_pruned += 1;
    }
    let concepts = ConceptsRepo(c);
    for p in concepts.probationers()? {
        if grow::expired(p.created_at, now) && !grow::confirmed(p.fired_count, false) {
            edges.delete_of_concept(p.id)?;
            concepts.soft_delete(p.id, now)?;
            VectorRepo(c).delete(VecTable::Concepts, p.id)?;
            report.nodes_expired += 1;
        }
    }
    Ok((report, removed))
}
