//! What the regulator remembers about a user between turns and restarts
//! (docs/cognition.md §13.6): corrections per cluster, success per cluster, the quality and cost
//! history. Stored as JSON; every field defaults, so a snapshot written before a field existed
//! still loads.

use super::cost::Qualities;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// Corrections kept per cluster (the oldest go first).
pub const CORRECTIONS_PER_CLUSTER: usize = 20;
/// Corrections on one cluster that make a pattern.
pub const PATTERN_MIN: usize = 3;
/// Examples a pattern shows (newest first).
pub const PATTERN_EXAMPLES: usize = 3;
/// Poor replies in a row on one cluster that make a failure pattern. Above [`PATTERN_MIN`]:
/// three corrections first bring the procedural warning (the next reply gets the user's past
/// corrections in its prompt); only if two more replies still miss does the turn stop.
pub const FAILURE_PATTERN: usize = 5;
/// Turns of cost history kept.
pub const COST_HISTORY: usize = 20;
/// Clusters whose success is kept; past it the one judged longest ago goes. Every new pair of
/// task words is a cluster, so without a bound the state (read and written every turn) grew
/// with every turn ever taken: 3,000 turns of varied questions made it a few hundred KB.
pub const CLUSTERS_KEPT: usize = 256;
/// Clusters whose corrections are kept; past it the one corrected longest ago goes.
pub const CORRECTED_CLUSTERS_KEPT: usize = 64;

/// One thing the user said to correct a reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Correction {
    pub text: String,
    /// Unix seconds.
    #[serde(default)]
    pub at: i64,
}

/// How replies on one cluster have gone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClusterRecord {
    /// Share of judged replies with quality ≥ 0.5.
    pub success_rate: f64,
    pub count: u64,
    /// Poor replies since the last good one (or the last failure break).
    pub failures_in_a_row: usize,
    /// The state's judgement count when this cluster was last judged: the oldest goes first
    /// once [`CLUSTERS_KEPT`] are held (0 in snapshots from before the bound).
    pub last_judged: u64,
}

/// One turn's cost, for the history.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TurnCost {
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub wall_ms: u64,
}

/// The persisted state of one user's regulator. Clusters are made of the user's words, so
/// they are stored as string values (`[{"cluster": …, "data": …}]`), never as object keys: a
/// forget rewrites the words inside JSON string values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RegulatorState {
    pub user_id: String,
    /// Per cluster, oldest first.
    #[serde(with = "by_cluster")]
    pub corrections: BTreeMap<String, VecDeque<Correction>>,
    #[serde(with = "by_cluster")]
    pub clusters: BTreeMap<String, ClusterRecord>,
    pub qualities: Qualities,
    /// Output tokens since the last cost break (the cap is checked against this).
    pub tokens_out_spent: u64,
    pub cost_history: VecDeque<TurnCost>,
    /// Starts at 1.0 and falls by 0.02 per typical turn's cost. Shown, never decided on.
    pub budget: f64,
    /// The cluster of the last finished turn: the next message's feedback and corrections are
    /// about it.
    pub last_cluster: String,
    /// Whether the last turn already has its quality sample (a failed reply scores itself).
    pub last_sampled: bool,
    /// Replies judged against a cluster, ever: the clock of [`ClusterRecord::last_judged`].
    pub judgements: u64,
}

impl Default for RegulatorState {
    fn default() -> Self {
        RegulatorState {
            user_id: String::new(),
            corrections: BTreeMap::new(),
            clusters: BTreeMap::new(),
            qualities: Qualities::default(),
            tokens_out_spent: 0,
            cost_history: VecDeque::new(),
            budget: 1.0,
            last_cluster: String::new(),
            last_sampled: false,
            judgements: 0,
        }
    }
}

impl RegulatorState {
    pub fn for_user(user_id: impl Into<String>) -> RegulatorState {
        RegulatorState { user_id: user_id.into(), ..RegulatorState::default() }
    }

    /// Record a correction on `cluster`; an empty cluster has nothing to learn about.
    pub fn add_correction(&mut self, cluster: &str, text: &str, at: i64) {
        if cluster.is_empty() || text.trim().is_empty() {
            return;
        }
        let list = self.corrections.entry(cluster.to_string()).or_default();
        if list.len() == CORRECTIONS_PER_CLUSTER {
            list.pop_front();
        }
        list.push_back(Correction { text: text.trim().to_string(), at });
        keep_newest(&mut self.corrections, CORRECTED_CLUSTERS_KEPT, cluster, |l| l.back().map_or(i64::MIN, |c| c.at));
    }

    /// The pattern on `cluster` once it has [`PATTERN_MIN`] corrections: newest first, at most
    /// [`PATTERN_EXAMPLES`].
    pub fn pattern(&self, cluster: &str) -> Option<Vec<String>> {
        let list = self.corrections.get(cluster).filter(|l| !cluster.is_empty() && l.len() >= PATTERN_MIN)?;
        Some(list.iter().rev().take(PATTERN_EXAMPLES).map(|c| c.text.clone()).collect())
    }

    /// Record a reply's quality against its cluster.
    pub fn judge(&mut self, cluster: &str, quality: f64) {
        if !quality.is_finite() {
            return;
        }
        self.qualities.push(quality);
        if cluster.is_empty() {
            return;
        }
        self.judgements += 1;
        let rec = self.clusters.entry(cluster.to_string()).or_default();
        let good = quality >= super::cost::POOR_QUALITY;
        rec.success_rate = (rec.success_rate * rec.count as f64 + f64::from(u8::from(good))) / (rec.count + 1) as f64;
        rec.count += 1;
        rec.failures_in_a_row = if good { 0 } else { rec.failures_in_a_row + 1 };
        rec.last_judged = self.judgements;
        keep_newest(&mut self.clusters, CLUSTERS_KEPT, cluster, |r| r.last_judged as i64);
    }

    /// Add a finished turn's cost to the history and the budget.
    pub fn spend(&mut self, cost: TurnCost) {
        self.tokens_out_spent += cost.tokens_out;
        if self.cost_history.len() == COST_HISTORY {
            self.cost_history.pop_front();
        }
        self.cost_history.push_back(cost);
        let c = super::cost::normalized_cost(cost.tokens_out, cost.wall_ms);
        self.budget = (self.budget - c.clamp(0.0, 1.0) * 0.02).clamp(0.0, 1.0);
    }
}

/// Drop the entries of `map` beyond the `keep` newest by `age` (larger is newer), never
/// `current`, the cluster just written. One pass, so a snapshot from before the bound, with
/// thousands of clusters, is brought down at once.
fn keep_newest<V>(map: &mut BTreeMap<String, V>, keep: usize, current: &str, age: impl Fn(&V) -> i64) {
    if map.len() <= keep {
        return;
    }
    let mut ages: Vec<(i64, String)> =
        map.iter().filter(|(c, _)| c.as_str() != current).map(|(c, v)| (age(v), c.clone())).collect();
    ages.sort_unstable();
    let excess = map.len() - keep;
    for (_, cluster) in ages.into_iter().take(excess) {
        map.remove(&cluster);
    }
}

/// A map keyed by cluster, as a list of `{cluster, data}` entries.
mod by_cluster {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    struct Entry<'a, V> {
        cluster: &'a str,
        data: &'a V,
    }

    #[derive(Deserialize)]
    struct Owned<V> {
        cluster: String,
        data: V,
    }

    pub fn serialize<S: Serializer, V: Serialize>(map: &BTreeMap<String, V>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(map.iter().map(|(cluster, data)| Entry { cluster, data }))
    }

    pub fn deserialize<'de, D: Deserializer<'de>, V: Deserialize<'de>>(d: D) -> Result<BTreeMap<String, V>, D::Error> {
        let entries: Vec<Owned<V>> = Vec::deserialize(d)?;
        Ok(entries.into_iter().map(|e| (e.cluster, e.data)).collect())
    }
}
