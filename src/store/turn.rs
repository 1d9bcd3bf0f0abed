//! What one turn reads and writes: Phase A's context (working memory, gists, facts, world
//! state, FOK, traits), the thread's topics and boundary detector, and Phase D's commit.
//!
//! Keys follow the seeds: working memory per thread, gists/facts/FOK per topic name.

use super::CachedSql;
use super::{StoreError, now_ts};
use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One topic: a rolling centroid and its bookkeeping (the `topics` table). The classifier's
/// arithmetic on it is in `cognition::topic`; the row lives here so the store needs nothing above it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Topic {
    pub id: i64,
    pub name: String,
    /// L2-normalised.
    pub centroid: Vec<f32>,
    /// Messages classified into it.
    pub message_count: u32,
    pub avg_salience: f32,
    /// Unix seconds of the last message classified into it.
    pub updated_at: i64,
}

/// The newest working-memory entries the router and triage read, and what a thread keeps when
/// it outgrows [`WORKING_MEMORY_CAP`] (docs/cognition.md §4.4).
pub const WORKING_MEMORY_ENTRIES: usize = 4;
/// Working memory grows to this many entries (design: 4 turns); an exchange that would take
/// it past them first drops it to the newest [`WORKING_MEMORY_KEPT`]. The reply prompt shows
/// all of it, oldest first, so its start stays the same for three turns at a time and a prompt
/// cache keeps serving it, where a window sliding by one exchange changed it every turn. It
/// shows at least 4 entries, as the sliding window did.
pub const WORKING_MEMORY_CAP: usize = 8;
/// What a drop keeps: the last exchange, so with the new one the prompt has two.
pub const WORKING_MEMORY_KEPT: usize = 2;
/// Working memory lives 24 h, refreshed on append.
pub const WORKING_MEMORY_TTL_S: i64 = 86_400;
/// Gists live 30 min, refreshed on read.
pub const GIST_TTL_S: i64 = 1_800;
/// At most this many gists are read into context, newest first.
pub const GISTS_IN_CONTEXT: usize = 8;
/// World-state slots of the topic read into context (one per slot, docs/cognition.md §4.7).
pub const WORLD_STATE_IN_CONTEXT: usize = 4;
/// The most earlier message times [`TurnRepo::message_times_before`] reads.
pub const MESSAGE_TIMES: usize = 200;
/// Facts per topic read into context.
pub const FACTS_IN_CONTEXT: usize = 50;
/// Boundary-detector state lives a day.
pub const BOUNDARY_TTL_S: i64 = 86_400;
/// Topics of a thread considered by the classifier, most recently updated first.
pub const TOPICS_CONSIDERED: usize = 64;
/// Traits shown to the frontal cortex.
pub const TRAITS_IN_CONTEXT: usize = 12;
/// Superseded values shown as past ("used to …"), at most one per key.
pub const PAST_TRAITS_IN_CONTEXT: usize = 4;
/// Traits below this confidence are not injected (docs/cognition.md §4.4).
pub const TRAIT_INJECT_CONFIDENCE: f64 = 0.3;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WmEntry {
    pub role: String,
    pub content: String,
    pub created_at: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gist {
    pub gist_type: String,
    pub content: String,
    pub confidence: f64,
    pub cold_start: bool,
}

/// Everything Phase A reads for one topic.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TopicContext {
    pub gists: Vec<Gist>,
    /// `(key, value)`, newest first.
    pub facts: Vec<(String, String)>,
    pub world_state: Vec<(String, String)>,
    /// 0–5; 0 when absent or expired.
    pub fok: f64,
}

impl TopicContext {
    /// Gists learned from the user: cold-start and drift gists (the assistant's own idle
    /// thoughts) must not make a thread look warm.
    pub fn real_gist_count(&self) -> usize {
        self.gists.iter().filter(|g| !g.cold_start && g.gist_type != "drift").count()
    }
}

/// One stored trait, as context sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraitRow {
    pub key: String,
    pub value: String,
    pub category: String,
    pub confidence: f64,
    pub reliability: String,
    /// When a superseded value stopped being current: when the row that replaced it was stored
    /// (`superseded_by`), else the row's last update; `None` for the others.
    pub until: Option<i64>,
}

impl TraitRow {
    /// From `SELECT trait_key, trait_value, category, confidence, reliability[, updated_at]`:
    /// the sixth column, when selected, is read as `until` for a superseded row.
    pub fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TraitRow> {
        let reliability: String = r.get(4)?;
        let until = if reliability == "superseded" { r.get::<_, i64>(5).ok() } else { None };
        Ok(TraitRow {
            key: r.get(0)?,
            value: r.get(1)?,
            category: r.get(2)?,
            confidence: r.get(3)?,
            reliability,
            until,
        })
    }
}

/// Everything Phase D writes, in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnCommit {
    pub thread_id: String,
    pub exchange_id: String,
    pub topic: String,
    pub user_text: String,
    /// `None`: no reply line (IGNORE).
    pub reply: Option<String>,
    /// `assistant`, or `system` when the line explains a failed generation (it then stays out
    /// of working memory).
    pub reply_role: &'static str,
    pub mode: String,
    pub routing: super::RoutingRecord,
    pub triage: Option<TriageRow>,
    /// `(topic, state)` for the router's per-topic history.
    pub router_state: Option<(String, Value)>,
    pub interaction: Value,
    /// The encode job's payload; `None` for turns with nothing to remember.
    pub encode: Option<Value>,
    /// The adaptive layer's directives as sent to the model, for the decision's audit row.
    pub adaptive: Option<Value>,
    /// A forget the turn's `forget` skill resolved: carried out in the same transaction, so a
    /// kill can never leave the request committed ("Forgotten.") and the words still stored.
    pub forget: Option<super::Purge>,
}

/// A triage verdict with what the next message said of the route.
#[derive(Debug, Clone, PartialEq)]
pub struct TriageOutcome {
    pub mode: Option<String>,
    pub routed_mode: Option<String>,
    pub outcome: Value,
}

/// A `triage_calibration` row.
#[derive(Debug, Clone, PartialEq)]
pub struct TriageRow {
    /// `llm` or `heuristic`.
    pub source: &'static str,
    pub fallback_reason: Option<String>,
    pub branch: String,
    pub mode: String,
    pub skills: Value,
    pub confidence_internal: f64,
    pub confidence_tool_need: f64,
    pub freshness_risk: f64,
    pub effort: String,
    pub reasoning: String,
    pub latency_ms: f64,
}

/// The queue Phase D feeds; the memory workers consume it.
pub const ENCODE_QUEUE: super::JobKind = super::JobKind::Encode;
/// The memory chunker's queue (gists, facts, style, traits): the same payload as `encode`.
pub const CHUNK_QUEUE: super::JobKind = super::JobKind::Chunk;

pub struct TurnRepo<'c>(pub &'c Connection);

pub(super) fn blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(super) fn unblob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

impl TurnRepo<'_> {
    /// Fill `triage_calibration.outcome` of an exchange from the feedback its next message gave.
    pub fn set_triage_outcome(&self, exchange_id: &str, outcome: &Value) -> Result<bool, StoreError> {
        let n = self.0.exec(
            "UPDATE triage_calibration SET outcome = ?2 WHERE exchange_id = ?1",
            params![exchange_id, outcome.to_string()],
        )?;
        Ok(n > 0)
    }

    /// The triage rows made in `[from, to)` that have an
    /// outcome: what the routing regulator's miscalibration pressure reads.
    pub fn triage_outcomes(&self, from: i64, to: i64) -> Result<Vec<TriageOutcome>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT mode, routed_mode, outcome FROM triage_calibration
             WHERE outcome IS NOT NULL AND created_at >= ?1 AND created_at < ?2 ORDER BY created_at, id",
        )?;
        let rows = stmt.query_map(params![from, to], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (mode, routed, outcome) = row?;
            out.push(TriageOutcome { mode, routed_mode: routed, outcome: serde_json::from_str(&outcome)? });
        }
        Ok(out)
    }

    /// Creation times of the thread's messages before `exchange_id`, newest first (at most
    /// [`MESSAGE_TIMES`]).
    pub fn message_times_before(&self, thread_id: &str, exchange_id: &str) -> Result<Vec<i64>, StoreError> {
        super::ChatRepo(self.0).user_message_times_before(thread_id, exchange_id, MESSAGE_TIMES)
    }

    /// [`Self::message_times_before`] up to the first time more than `gap_s` before the one after
    /// it (`now` for the newest), that one included: what a session's length needs, without
    /// the older history (a thread with a long past read all 200 every turn).
    pub fn session_times_before(
        &self,
        thread_id: &str,
        exchange_id: &str,
        now: i64,
        gap_s: i64,
    ) -> Result<Vec<i64>, StoreError> {
        let mut later = now;
        super::ChatRepo(self.0).user_message_times_while(thread_id, exchange_id, MESSAGE_TIMES, |t| {
            let within = later - t <= gap_s;
            later = t;
            within
        })
    }

    /// The thread's newest [`WORKING_MEMORY_ENTRIES`] live working-memory entries, oldest first.
    pub fn working_memory(&self, thread_id: &str, now: i64) -> Result<Vec<WmEntry>, StoreError> {
        super::WorkingMemoryRepo(self.0).recent(thread_id, now, WORKING_MEMORY_ENTRIES)
    }

    /// All of the thread's live working memory (at most [`WORKING_MEMORY_CAP`]), oldest first:
    /// the conversation the reply prompt shows.
    pub fn conversation(&self, thread_id: &str, now: i64) -> Result<Vec<WmEntry>, StoreError> {
        super::WorkingMemoryRepo(self.0).recent(thread_id, now, WORKING_MEMORY_CAP)
    }

    /// Gists, facts, world state and FOK of `topic`. Reading refreshes the gists' TTL.
    pub fn topic_context(&self, topic: &str, now: i64) -> Result<TopicContext, StoreError> {
        let mut gists = super::GistsRepo(self.0).for_context(topic, now, GISTS_IN_CONTEXT)?;
        if !gists.is_empty() {
            super::GistsRepo(self.0).extend_live(topic, now, now + GIST_TTL_S)?;
        }
        // Drift's curiosity threads on this topic come back once, marked as the assistant's
        // own question (a drift gist, so they never make the topic look warm).
        for q in super::CuriosityRepo(self.0).surface_for_topic(topic, now)? {
            gists.push(Gist {
                gist_type: "drift".into(),
                content: format!("[a question I wondered about earlier; raise it if it fits] {q}"),
                confidence: 8.0,
                cold_start: false,
            });
        }
        let facts = super::FactsRepo(self.0).for_context(topic, now, FACTS_IN_CONTEXT)?;
        let world_state = super::WorldStateRepo(self.0).live_for(topic, now, WORLD_STATE_IN_CONTEXT)?;
        let fok = super::FokRepo(self.0).score(topic, now)?;
        Ok(TopicContext { gists, facts, world_state, fok: fok.unwrap_or(0).clamp(0, 5) as f64 })
    }

    /// The traits context assembly injects: confident enough (docs/cognition.md §4.4), the
    /// user's own statements first; contradicted ones come flagged by their reliability, and
    /// then the superseded values whose key has a current one (shown as past, "used to").
    pub fn traits(&self) -> Result<Vec<TraitRow>, StoreError> {
        let repo = super::TraitsRepo(self.0);
        let mut rows = repo.for_context(TRAITS_IN_CONTEXT, TRAIT_INJECT_CONFIDENCE)?;
        let mut past = repo.past_values(PAST_TRAITS_IN_CONTEXT)?;
        past.retain(|p| rows.iter().any(|r| r.key == p.key));
        let mut seen = std::collections::HashSet::new();
        past.retain(|p| seen.insert(p.key.clone()));
        rows.extend(past);
        Ok(rows)
    }

    /// Store an explicit trait the user stated ("my name is …"): full confidence, reinforced
    /// when repeated; a different value supersedes the older one (kept as past).
    pub fn set_explicit_trait(
        &self,
        key: &str,
        value: &str,
        category: &str,
    ) -> Result<super::ExplicitWrite, StoreError> {
        super::TraitsRepo(self.0).set_explicit(key, value, category, now_ts())
    }

    /// The thread's topics, most recently updated first (at most [`TOPICS_CONSIDERED`]): from
    /// this process's copy when the table has not moved since (`topic_cache`).
    pub fn topics(&self, thread_id: &str) -> Result<Vec<Topic>, StoreError> {
        super::in_read(self.0, || {
            let stamp = super::topic_cache::stamp(self.0)?.now;
            if let Some(topics) = super::topic_cache::get(thread_id, stamp) {
                return Ok(topics);
            }
            let topics = self.read_topics(thread_id)?;
            super::topic_cache::put(thread_id, stamp, &topics);
            Ok(topics)
        })
    }

    /// [`Self::topics`] from the rows.
    pub(super) fn read_topics(&self, thread_id: &str) -> Result<Vec<Topic>, StoreError> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, name, centroid, message_count, avg_salience, updated_at FROM topics
             WHERE thread_id = ?1 AND centroid IS NOT NULL ORDER BY updated_at DESC, id DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![thread_id, TOPICS_CONSIDERED as i64], |r| {
            let centroid: Vec<u8> = r.get(2)?;
            Ok(Topic {
                id: r.get(0)?,
                name: r.get(1)?,
                centroid: unblob(&centroid),
                message_count: r.get::<_, i64>(3)?.clamp(0, i64::from(u32::MAX)) as u32,
                avg_salience: r.get::<_, f64>(4)? as f32,
                updated_at: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The id the next topic row will get (so a classification can name it before insert).
    pub fn next_topic_id(&self) -> Result<i64, StoreError> {
        Ok(self.0.row("SELECT COALESCE(MAX(id), 0) + 1 FROM topics", [], |r| r.get(0))?)
    }

    /// Insert or update a topic row (a stored row keeps its name and thread), and bring this
    /// process's copy of the thread's topics forward over the write when it can.
    pub fn save_topic(&self, thread_id: &str, t: &Topic) -> Result<(), StoreError> {
        let (stored_thread, stored_name): (Option<String>, String) = self.0.row(
            "INSERT INTO topics (id, name, thread_id, centroid, message_count, avg_salience, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)
             ON CONFLICT(id) DO UPDATE SET centroid = excluded.centroid, message_count = excluded.message_count,
                 avg_salience = excluded.avg_salience, updated_at = excluded.updated_at
             RETURNING thread_id, name",
            params![
                t.id,
                t.name,
                thread_id,
                blob(&t.centroid),
                t.message_count,
                f64::from(t.avg_salience),
                t.updated_at
            ],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        // A row the upsert kept under another thread or name is read again next time.
        if stored_thread.as_deref() == Some(thread_id) && stored_name == t.name {
            super::topic_cache::saved(thread_id, super::topic_cache::stamp(self.0)?, t);
        }
        Ok(())
    }

    /// A JSON value from the `kv_state` table.
    pub fn kv_get(&self, namespace: &str, key: &str) -> Result<Option<Value>, StoreError> {
        let s = super::KvStateRepo(self.0).get_text(namespace, key)?;
        Ok(s.and_then(|s| serde_json::from_str(&s).ok()))
    }

    pub fn kv_set(&self, namespace: &str, key: &str, value: &Value) -> Result<(), StoreError> {
        super::KvStateRepo(self.0).set_text(namespace, key, &value.to_string(), now_ts())
    }

    /// Phase D in one transaction: the turn is either wholly committed or not at all, its
    /// forget (if it asked for one) included. Returns what the forget purged.
    pub fn commit(&self, c: &TurnCommit) -> Result<Option<super::Purged>, StoreError> {
        Ok(self.commit_with(c, |_| Ok(()))?.0)
    }

    /// [`Self::commit`] with `also`'s writes in the same transaction (the onboarding state the
    /// engine advances): one commit to the WAL, not two.
    pub fn commit_with<T>(
        &self,
        c: &TurnCommit,
        also: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<(Option<super::Purged>, T), StoreError> {
        let now = now_ts();
        // A savepoint at the top level is a deferred transaction whose two statements stay
        // prepared (a `Transaction` parses BEGIN and COMMIT again each turn).
        let purged = super::in_savepoint(self.0, || {
            let tx = self.0;
            let repo = TurnRepo(tx);
            let chat = super::ChatRepo(tx);
            chat.set_user_mode_and_topic(&c.thread_id, &c.exchange_id, &c.mode, &c.topic)?;
            if let Some(reply) = &c.reply {
                chat.append(&c.thread_id, &c.exchange_id, c.reply_role, reply, Some(&c.mode), Some(&c.topic))?;
            }
            let user = Some(c.user_text.as_str()).filter(|t| !t.trim().is_empty());
            let reply = c.reply.as_deref().filter(|_| c.reply_role == "assistant");
            repo.append_exchange_to_working_memory(&c.thread_id, user, reply, now)?;
            super::RoutingRepo(tx).insert(&c.routing)?;
            if let Some(t) = &c.triage {
                tx.exec(
                    "INSERT INTO triage_calibration (exchange_id, source, fallback_reason, branch, mode, skills,
                         confidence_internal, confidence_tool_need, freshness_risk, effort_estimate, reasoning,
                         routed_mode, latency_ms, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                    params![
                        c.exchange_id,
                        t.source,
                        t.fallback_reason,
                        t.branch,
                        t.mode,
                        t.skills.to_string(),
                        t.confidence_internal,
                        t.confidence_tool_need,
                        t.freshness_risk,
                        t.effort,
                        t.reasoning,
                        c.mode,
                        t.latency_ms,
                        now
                    ],
                )?;
            }
            if let Some((key, state)) = &c.router_state {
                repo.kv_set("router_state", key, state)?;
            }
            let at = super::LogOrigin {
                thread_id: Some(&c.thread_id),
                exchange_id: Some(&c.exchange_id),
                topic: Some(&c.topic),
            };
            super::InteractionLogRepo(tx).append(at, "system_response", &c.interaction, now)?;
            if let Some(payload) = &c.encode {
                super::JobsRepo(tx).enqueue(ENCODE_QUEUE, payload, 3)?;
                super::JobsRepo(tx).enqueue(CHUNK_QUEUE, payload, 3)?;
            }
            if let Some(v) = &c.adaptive {
                super::RoutingRepo(tx).set_adaptive(&c.routing.id, v)?;
            }
            let also = also(tx)?;
            // Last, so the turn's own rows (its audit of the request) are purged too.
            Ok((c.forget.as_ref().map(|p| super::purge::purge_in(tx, p)).transpose()?, also))
        })?;
        if purged.0.is_some() {
            super::purge::settle(self.0)?;
        }
        Ok(purged)
    }

    /// Append an exchange's message and reply (either may be missing) to working memory,
    /// first dropping to the newest [`WORKING_MEMORY_KEPT`] entries if they would take it past
    /// [`WORKING_MEMORY_CAP`], and refresh the thread's TTL.
    pub fn append_exchange_to_working_memory(
        &self,
        thread_id: &str,
        user: Option<&str>,
        reply: Option<&str>,
        now: i64,
    ) -> Result<(), StoreError> {
        let wm = super::WorkingMemoryRepo(self.0);
        let incoming = usize::from(user.is_some()) + usize::from(reply.is_some());
        wm.make_room(thread_id, incoming, WORKING_MEMORY_CAP, WORKING_MEMORY_KEPT)?;
        for (role, text) in [("user", user), ("assistant", reply)] {
            if let Some(text) = text {
                wm.append(thread_id, role, text, now, now + WORKING_MEMORY_TTL_S)?;
            }
        }
        Ok(())
    }
}
