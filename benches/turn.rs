//! Speed of the deterministic part of a turn: everything `Engine::turn` does besides waiting for
//! models — Phase A context (identity hook, working memory, traits, session), the topic stage
//! (classifier + boundary detector + topic context; the embedding itself is an instant in-process
//! provider), intent, social filter, heuristic triage, router, and the Phase D commit.
//!
//! - `turn/deterministic/1k` and `turn/deterministic/100k`: one `engine.turn` per iteration on an
//!   on-disk SQLite database (tempdir, WAL) seeded with N stored memories spread over the layers
//!   (episodes + vectors, concepts + vectors + edges, facts, gists, traits + vectors), other
//!   threads' chat history and topics, and one warm thread whose five topics have gists and facts.
//!   The user message is stored first as `Runtime::intake` does (not timed); the 20 messages
//!   rotate, so the thread keeps growing the way a real one does. None of them routes to ACT:
//!   the ACT loop (planning, skills such as `recall` over the vector tables) is outside the
//!   deterministic path measured here (they route RESPOND or ACKNOWLEDGE; the printed
//!   delivered-mode line would show an ACT if routing changes).
//! - `turn/deterministic/1m`: the same over 1M memories whose vectors are real all-MiniLM-L6-v2
//!   embeddings of the shared data's sentences and mixtures of them (`benches/recall_1m.rs`
//!   says exactly how; `support/minilm_real.rs`), with the 20 messages embedded by the same
//!   model. Built once under `target/bench-cache/` (set `CHALIE_BENCH_1M=1` the first time;
//!   later runs find the cached store and copy it). Without the built-in model the store's
//!   vectors are random, as at 100k, and the group is `turn/deterministic/1m_random`.
//! - `turn/stages_pure`: the pure stages alone for one message (`signals::extract` +
//!   `classify_intent` + `social_match` + `route`), no database.
//!
//! The model calls are an in-process `Provider`: `embed` returns a precomputed 384-d unit vector
//! per message (messages of one topic share a direction, cosine ≈ 0.8, topics ≈ 0 apart) and
//! `chat` streams one fixed short completion. Triage is `heuristic`, so no triage or tie-break
//! call happens. After each database group the median per-stage timings (`TurnReport::timings_ms`)
//! are printed. As in the app, the `checkpoint` worker owns the WAL's checkpoints
//! (`store::wal`): its run (`checkpoint_and_restart`) is in the untimed pause before each message.
//!
//! At the end of each database group three `BENCHFIG` lines give the median and p99 over every
//! measured turn but the process's first (it fills the in-process caches once; printed on its
//! own line): `turn/{label}` is what issue 22 names, every step before the first token plus
//! the commit (the first token is the turn's first `ReplyChunk` on the bus, timed from the same
//! start as the call); `turn/{label}_after_reply` is the rest of the call (the stream's end, the
//! regulator's verdict, the graph's learning, the report), and `turn/{label}_whole_call` is the
//! call to `engine.turn` (the figure this bench printed as `turn/{label}` before).
//! `CHALIE_BENCH_SIZES=100k,1m` runs only the groups named. `CHALIE_BENCH_TURNS=<dir>` writes
//! every measured turn (message, figures, stages, and what it did: mode, topic, recall hits,
//! the graph's time) to `<dir>/turns-{label}.jsonl`, to see which turns make the p99.
//! `CHALIE_BENCH_WAL=<dir>` keeps each turn's write-ahead log (its commits) and the store at the
//! end under `<dir>/{label}/`; `scripts/wal_pages.py` says which tables and indexes they wrote.
//!
//! `cargo bench --bench turn` (seeding 100k memories takes a few seconds first).

use std::collections::HashMap;
use std::hint::black_box;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chalie::cognition::context::ContextSignals;
use chalie::cognition::intent::{IntentContext, classify_intent};
use chalie::cognition::pipeline::{Engine, Timings};
use chalie::cognition::router::{Mode, RouterSignals, RouterState, RouterWeights, route};
use chalie::cognition::signals;
use chalie::cognition::social::social_match;
use chalie::config::{LlmSettings, ModelUse, Role};
use chalie::events::EventBus;
use chalie::llm::{ChatRequest, Completion, FinishReason, Llm, LlmError, Provider, Route, Token};
use chalie::store::{ChatRepo, Db, EMBEDDING_DIM, StoreError, VecTable, VectorRepo, now_ts};
use criterion::{Criterion, criterion_group, criterion_main};
use rusqlite::params;
use tokio_util::sync::CancellationToken;

#[path = "support/benchfig.rs"]
mod benchfig;
#[path = "support/minilm_real.rs"]
mod minilm_real;

const THREAD: &str = "bench-thread";

/// The warm thread's topics: name, then four messages on it (the rotation is topic-major, so
/// the boundary detector sees runs of one topic and a switch every four messages).
const TOPICS: &[(&str, [&str; 4])] = &[
    (
        "borrow-checker-vec-iterating",
        [
            "Why does the borrow checker complain when I push to a Vec while iterating over it?",
            "what about iterating over indices instead?",
            "Can you show me how retain works for that case?",
            "thanks, that fixed it",
        ],
    ),
    (
        "trip-lisbon-october",
        [
            "I'm planning a trip to Lisbon in October with my sister",
            "Which neighbourhoods are nice to stay in?",
            "Is October still warm enough for the beaches there?",
            "how much should we budget per day for food?",
        ],
    ),
    (
        "oat-milk-dairy-swap",
        [
            "I'm trying to cut down on dairy, is oat milk a good swap?",
            "which brands don't add sugar?",
            "is oat milk actually healthier than regular milk?",
            "ok",
        ],
    ),
    (
        "sleeping-badly-week",
        [
            "I've been sleeping badly all week",
            "any tips for falling asleep faster?",
            "why?",
            "would cutting coffee after noon make a difference?",
        ],
    ),
    (
        "performance-review-thursday",
        [
            "good morning",
            "I have my performance review on Thursday",
            "Help me outline what to say about the database migration project",
            "never mind",
        ],
    ),
];

/// Synthetic data: the library's splitmix64 plus unit vectors.
struct Rng(chalie::SplitMix64);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(chalie::SplitMix64(seed))
    }
    /// Uniform in [-1, 1).
    fn signed(&mut self) -> f32 {
        (self.0.next_f64() * 2.0 - 1.0) as f32
    }
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }
    fn unit(&mut self) -> Vec<f32> {
        normalised((0..EMBEDDING_DIM).map(|_| self.signed()).collect())
    }
}

fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= n);
    v
}

/// The precomputed embeddings: one base direction per topic, each message its topic's direction
/// plus half a unit of its own noise (same-topic cosine ≈ 0.8, cross-topic ≈ 0).
fn topic_bases() -> Vec<Vec<f32>> {
    let mut rng = Rng::new(0x7091C);
    TOPICS.iter().map(|_| rng.unit()).collect()
}

fn message_vectors(bases: &[Vec<f32>]) -> HashMap<String, Vec<f32>> {
    let mut rng = Rng::new(0xE3BED);
    let mut out = HashMap::new();
    for ((_, msgs), base) in TOPICS.iter().zip(bases) {
        for m in msgs {
            let noise = rng.unit();
            out.insert(m.to_string(), normalised(base.iter().zip(&noise).map(|(b, n)| b + 0.5 * n).collect()));
        }
    }
    out
}

/// Instant in-process models: precomputed embeddings, one fixed completion.
struct InstantModels {
    vectors: HashMap<String, Vec<f32>>,
}

const REPLY: &str = "Sure. Here is a short answer that covers the main point and suggests a next step.";

#[async_trait]
impl Provider for InstantModels {
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
        Ok(Completion { text: REPLY.to_string(), tokens_in: 120, tokens_out: 18, finish: FinishReason::Stop })
    }

    async fn embed(&self, _model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        Ok(inputs
            .iter()
            .map(|t| {
                self.vectors.get(t).cloned().unwrap_or_else(|| {
                    // Unknown text: a deterministic vector from its bytes.
                    let seed = t
                        .bytes()
                        .fold(0xCBF2_9CE4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3));
                    Rng::new(seed).unit()
                })
            })
            .collect())
    }
}

fn llm(vectors: HashMap<String, Vec<f32>>, bus: EventBus) -> Arc<Llm> {
    let provider: Arc<dyn Provider> = Arc::new(InstantModels { vectors });
    let settings = LlmSettings {
        triage: ModelUse::Heuristic,
        memory_extraction: ModelUse::Heuristic,
        critic: ModelUse::Heuristic,
        graph_router: ModelUse::Heuristic,
        graph_router_timeout_ms: 800,
        triage_timeout_ms: 500,
        tiebreak_timeout_ms: 500,
        request_timeout_ms: 30_000,
        max_retries: 0,
        regulator_token_cap: 10_000,
        regulator: Default::default(),
    };
    let routes = Role::ALL.map(|role| {
        (role, Route { provider: provider.clone(), model: format!("instant-{}", role.as_str()), builtin: false })
    });
    Arc::new(Llm::new(bus, settings, routes))
}

const EPISODE_GISTS: &[&str] = &[
    "User debugged a failing migration and found a missing index",
    "User planned a weekend hike and asked about trail conditions",
    "User compared two laptops for battery life and weight",
    "User practised Spanish past tenses and got most of them right",
    "User felt stressed about a deadline and asked for a plan",
    "User asked how to split a bill fairly among four friends",
    "User set up a sourdough starter and asked about feeding times",
    "User reviewed a pull request about async cancellation",
];
const CONCEPTS: &[&str] =
    &["sleep", "coffee", "rust", "travel", "budget", "cooking", "running", "spanish", "work", "family", "music"];
const TRAIT_KEYS: &[&str] =
    &["likes", "works_as", "lives_in", "prefers", "dislikes", "allergic_to", "hobby", "goal", "pet", "schedule"];
const WORDS: &[&str] = &[
    "morning", "evening", "project", "deadline", "garden", "recipe", "budget", "flight", "library", "bicycle",
    "meeting", "sister", "laptop", "notebook", "playlist", "marathon", "invoice", "balcony", "harbour", "theatre",
];

/// Seed `n` stored memories in one transaction, plus the warm bench thread. Returns the seeding time.
fn seed(db: &Db, n: usize, bases: Vec<Vec<f32>>, real: Option<Arc<Vec<Vec<f32>>>>) -> Result<Duration, StoreError> {
    let started = Instant::now();
    db.call_blocking(move |c| {
        // A stored memory's vector: a random unit vector, or the next of the real mixtures.
        let mut stored = 0usize;
        let mut memory_vector = |rng: &mut Rng| -> Vec<f32> {
            stored += 1;
            match &real {
                Some(r) => minilm_real::generated(r, stored - 1).0,
                None => rng.unit(),
            }
        };
        let now = now_ts();
        let mut rng = Rng::new(n as u64);
        let tx = c.transaction()?;
        let vec = VectorRepo(&tx);
        let phrase = |rng: &mut Rng, k: usize| -> String {
            (0..k).map(|_| WORDS[rng.below(WORDS.len())]).collect::<Vec<_>>().join(" ")
        };

        // Layer shares of the N memories: episodes 45 %, concepts 25 %, facts 15 %, gists 10 %, traits 5 %.
        let (n_ep, n_con, n_fact, n_gist) = (n * 45 / 100, n * 25 / 100, n * 15 / 100, n * 10 / 100);
        let n_trait = n - n_ep - n_con - n_fact - n_gist;
        // Other threads: one per 500 memories, 10 topics each, 20 chat lines per topic.
        let threads = (n / 500).max(2);
        let topic_names: Vec<String> =
            (0..threads * 10).map(|i| format!("{}-{}", phrase(&mut rng, 2).replace(' ', "-"), i)).collect();

        {
            let mut thread_stmt =
                tx.prepare("INSERT INTO threads (id, created_at, last_active_at) VALUES (?1, ?2, ?2)")?;
            let mut topic_stmt = tx.prepare(
                "INSERT INTO topics (name, thread_id, centroid, message_count, avg_salience, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, 0.5, ?5, ?5)",
            )?;
            let mut chat_stmt = tx.prepare(
                "INSERT INTO chat_history (thread_id, exchange_id, role, content, mode, topic, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for t in 0..threads {
                let thread = format!("thread-{t}");
                let t0 = now - 86_400 * (1 + t as i64 % 300);
                thread_stmt.execute(params![thread, t0])?;
                for k in 0..10 {
                    let name = &topic_names[t * 10 + k];
                    let centroid: Vec<u8> = rng.unit().iter().flat_map(|x| x.to_le_bytes()).collect();
                    topic_stmt.execute(params![name, thread, centroid, 10, t0])?;
                    for m in 0..10 {
                        let xid = format!("x-{t}-{k}-{m}");
                        let at = t0 + (k * 10 + m) as i64 * 60;
                        chat_stmt.execute(params![thread, xid, "user", phrase(&mut rng, 9), "RESPOND", name, at])?;
                        chat_stmt.execute(params![
                            thread,
                            xid,
                            "assistant",
                            phrase(&mut rng, 30),
                            "RESPOND",
                            name,
                            at + 5
                        ])?;
                    }
                }
            }
        }

        {
            let mut ep = tx.prepare(
                "INSERT INTO episodes (intent, context, action, emotion, outcome, gist, salience, freshness, topic,
                     thread_id, exchange_id, created_at, updated_at, activation_score, semantic_consolidation_status)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12, ?13, 'consolidated')",
            )?;
            for i in 0..n_ep {
                let topic = &topic_names[rng.below(topic_names.len())];
                let gist = format!("{} ({})", EPISODE_GISTS[i % EPISODE_GISTS.len()], phrase(&mut rng, 3));
                let at = now - rng.below(365 * 86_400) as i64;
                ep.execute(params![
                    r#"{"type":"question","direction":"seeking"}"#,
                    r#"{"situational":"at home","conversational":"follow-up","constraints":[]}"#,
                    "assistant explained and suggested a next step",
                    r#"{"type":"neutral","valence":0.1,"intensity":0.3,"arc":"flat"}"#,
                    "resolved",
                    gist,
                    1 + rng.below(10) as i64,
                    0.5,
                    topic,
                    format!("thread-{}", rng.below(threads)),
                    format!("ep-{i}"),
                    at,
                    1.0,
                ])?;
                vec.upsert(VecTable::Episodes, tx.last_insert_rowid(), &memory_vector(&mut rng))?;
            }
        }

        {
            let mut con = tx.prepare(
                "INSERT INTO semantic_concepts (name, concept_type, definition, domain, strength, confidence,
                     source_episodes, created_at, updated_at)
                 VALUES (?1, 'domain', ?2, ?3, ?4, ?5, '[]', ?6, ?6)",
            )?;
            let mut rel = tx.prepare(
                "INSERT OR IGNORE INTO semantic_relationships (source_id, target_id, rel_type, weight,
                     confidence, created_at, updated_at)
                 VALUES (?1, ?2, 'related-to', ?3, 0.5, ?4, ?4)",
            )?;
            for i in 0..n_con {
                let domain = CONCEPTS[i % CONCEPTS.len()];
                let at = now - rng.below(365 * 86_400) as i64;
                con.execute(params![
                    format!("{domain} {} {i}", WORDS[rng.below(WORDS.len())]),
                    format!("something about {domain} and {}", phrase(&mut rng, 4)),
                    domain,
                    0.5 + 0.5 * (rng.below(100) as f64 / 100.0),
                    0.5,
                    at
                ])?;
                let id = tx.last_insert_rowid();
                vec.upsert(VecTable::Concepts, id, &memory_vector(&mut rng))?;
                if id > 1 {
                    let other = 1 + rng.below(id as usize - 1) as i64;
                    rel.execute(params![id, other, (rng.below(200) as f64 / 100.0) - 1.0, at])?;
                }
            }
        }

        {
            let mut fact = tx.prepare(
                "INSERT OR IGNORE INTO facts (topic, key, value, confidence, created_at, updated_at, expires_at)
                 VALUES (?1, ?2, ?3, 0.8, ?4, ?4, ?5)",
            )?;
            for i in 0..n_fact {
                let topic = &topic_names[rng.below(topic_names.len())];
                let at = now - rng.below(30 * 86_400) as i64;
                fact.execute(params![topic, format!("key_{i}"), phrase(&mut rng, 4), at, at + 90 * 86_400])?;
            }
            let mut gist = tx.prepare(
                "INSERT INTO gists (topic, thread_id, gist_type, content, confidence, created_at, expires_at)
                 VALUES (?1, ?2, ?3, ?4, 7.0, ?5, ?6)",
            )?;
            for _ in 0..n_gist {
                let t = rng.below(topic_names.len());
                let at = now - rng.below(7 * 86_400) as i64;
                let kind = ["decision", "intent", "preference", "fact"][rng.below(4)];
                // Most stored gists have expired (30 min TTL, swept lazily); a tenth are live.
                let expires = if rng.below(10) == 0 { now + 1_800 } else { at + 1_800 };
                gist.execute(params![
                    topic_names[t],
                    format!("thread-{}", t / 10),
                    kind,
                    phrase(&mut rng, 10),
                    at,
                    expires
                ])?;
            }
            let mut tr = tx.prepare(
                "INSERT INTO user_traits (trait_key, trait_value, category, confidence, source, created_at, updated_at)
                 VALUES (?1, ?2, 'general', ?3, ?4, ?5, ?5)",
            )?;
            for i in 0..n_trait {
                let at = now - rng.below(365 * 86_400) as i64;
                let source = if i % 20 == 0 { "explicit" } else { "inferred" };
                tr.execute(params![
                    format!("{}_{i}", TRAIT_KEYS[i % TRAIT_KEYS.len()]),
                    phrase(&mut rng, 2),
                    0.3 + 0.7 * (rng.below(100) as f64 / 100.0),
                    source,
                    at
                ])?;
                vec.upsert(VecTable::Traits, tx.last_insert_rowid(), &memory_vector(&mut rng))?;
            }
            tx.execute(
                "INSERT INTO world_state (key, value, updated_at, expires_at) VALUES
                 ('time_of_day', 'morning', ?1, NULL), ('location', 'home office', ?1, NULL),
                 ('weather', 'light rain, 14 C', ?1, ?2)",
                params![now, now + 3_600],
            )?;
        }

        // The warm bench thread: five topics with centroids on the message directions, each with
        // live gists and facts, and 200 earlier chat lines ending a minute ago.
        {
            let mut topic_stmt = tx.prepare(
                "INSERT INTO topics (name, thread_id, centroid, message_count, avg_salience, created_at, updated_at)
                 VALUES (?1, ?2, ?3, 12, 0.6, ?4, ?4)",
            )?;
            let mut gist = tx.prepare(
                "INSERT INTO gists (topic, thread_id, gist_type, content, confidence, created_at, expires_at)
                 VALUES (?1, ?2, ?3, ?4, 7.5, ?5, ?6)",
            )?;
            let mut fact = tx.prepare(
                "INSERT INTO facts (topic, key, value, confidence, created_at, updated_at, expires_at)
                 VALUES (?1, ?2, ?3, 0.9, ?4, ?4, ?5)",
            )?;
            for (k, ((name, _), base)) in TOPICS.iter().zip(&bases).enumerate() {
                let at = now - 3_600 + k as i64 * 60;
                let centroid: Vec<u8> = base.iter().flat_map(|x| x.to_le_bytes()).collect();
                topic_stmt.execute(params![name, THREAD, centroid, at])?;
                for g in 0..4 {
                    let kind = ["intent", "preference", "decision", "fact"][g];
                    gist.execute(params![
                        name,
                        THREAD,
                        kind,
                        format!("{name}: {}", phrase(&mut rng, 8)),
                        at,
                        now + 86_400
                    ])?;
                }
                for f in 0..8 {
                    fact.execute(params![name, format!("{name}_fact_{f}"), phrase(&mut rng, 3), at, now + 86_400])?;
                }
            }
            tx.execute(
                "INSERT INTO threads (id, created_at, last_active_at) VALUES (?1, ?2, ?2)",
                params![THREAD, now - 3_600],
            )?;
            let mut chat = tx.prepare(
                "INSERT INTO chat_history (thread_id, exchange_id, role, content, mode, topic, created_at)
                 VALUES (?1, ?2, ?3, ?4, 'RESPOND', ?5, ?6)",
            )?;
            for i in 0..100i64 {
                let xid = format!("warm-{i}");
                let (name, msgs) = &TOPICS[i as usize % TOPICS.len()];
                let at = now - 60 - (100 - i) * 30;
                chat.execute(params![THREAD, xid, "user", msgs[i as usize % 4], name, at])?;
                chat.execute(params![THREAD, xid, "assistant", REPLY, name, at + 5])?;
            }
        }
        tx.commit()?;
        c.execute_batch("PRAGMA optimize; PRAGMA wal_checkpoint(TRUNCATE);")?;
        Ok(())
    })?;
    Ok(started.elapsed())
}

fn messages() -> Vec<&'static str> {
    TOPICS.iter().flat_map(|(_, m)| m.iter().copied()).collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// One measured turn: the engine's own stage timings, `outer` (the wall time around
/// `block_on(engine.turn)`, what criterion sees) and when its first reply chunk reached the bus,
/// from the same start.
struct Sample {
    t: Timings,
    outer: f64,
    first_chunk: Option<f64>,
    /// What the turn did, for the turn log: which turns are slow, and doing what.
    did: serde_json::Value,
}

impl Sample {
    fn new(t: Timings, outer: f64, first_chunk: Option<f64>) -> Sample {
        Sample { t, outer, first_chunk, did: serde_json::Value::Null }
    }

    /// What the issue calls the deterministic turn: every step before the first token, plus the
    /// commit. A turn with no reply text (IGNORE) has no first token; its figure is the engine's
    /// own total up to the end of the commit.
    fn deterministic(&self) -> f64 {
        match self.first_chunk {
            Some(f) => f + self.t.commit,
            None => self.t.total,
        }
    }

    /// One JSON line for the turn log (`CHALIE_BENCH_TURNS`): which message, the figures, the stages.
    fn log(&self, out: &mut impl std::io::Write, message: usize) {
        let line = serde_json::json!({
            "message": message,
            "deterministic": self.deterministic(),
            "first_chunk": self.first_chunk,
            "outer": self.outer,
            "stages": self.t,
            "did": self.did,
        });
        let _ = writeln!(out, "{line}");
    }

    /// Everything else the call to `engine.turn` spends: the rest of the stream, then what runs
    /// after the commit (the regulator's verdict, the graph's learning, the report).
    fn after_reply(&self) -> f64 {
        self.outer - self.deterministic()
    }

    /// Before the first token but in no stage: the weights check, the regulator's start, the
    /// reply's prompt and the model call up to its first token.
    fn outside_stages(&self) -> Option<f64> {
        let t = &self.t;
        let staged = t.context + t.embedding + t.topic + t.intent + t.triage + t.routing + t.tiebreak + t.act;
        self.first_chunk.map(|f| f - staged)
    }
}

/// Median per-stage timings of every measured turn (`TurnReport::timings_ms`), then the spread of
/// each part: `deterministic` (before the first token + commit, the issue's figure),
/// `after_reply`, `outer` (the whole call), `total` (the engine's own measurement, which starts
/// after the weights check and ends with the commit). Their means sit above the medians because
/// of rare slow turns (a busy machine).
fn print_stages(label: &str, turns: &[Sample], modes: &HashMap<Mode, usize>) {
    if turns.is_empty() {
        return;
    }
    let col = |f: fn(&Timings) -> f64| median(turns.iter().map(|s| f(&s.t)).collect());
    println!(
        "{label}: {} turns; median ms: context {:.3}, embedding {:.3}, topic {:.3}, intent {:.3}, triage {:.3}, \
         routing {:.4}, act {:.3}, generation {:.3}, commit {:.3}, total {:.3}",
        turns.len(),
        col(|t| t.context),
        col(|t| t.embedding),
        col(|t| t.topic),
        col(|t| t.intent),
        col(|t| t.triage),
        col(|t| t.routing),
        col(|t| t.act),
        col(|t| t.generation),
        col(|t| t.commit),
        col(|t| t.total),
    );
    let without_chunk = turns.iter().filter(|s| s.first_chunk.is_none()).count();
    if without_chunk > 0 {
        println!(
            "{label}: {without_chunk} turns had no reply chunk (their deterministic figure is the engine's total)"
        );
    }
    let of = |f: &dyn Fn(&Sample) -> f64| turns.iter().map(f).collect::<Vec<_>>();
    for (name, v) in [
        ("deterministic", of(&Sample::deterministic)),
        ("first_chunk", turns.iter().filter_map(|s| s.first_chunk).collect()),
        ("outside_stages", turns.iter().filter_map(Sample::outside_stages).collect()),
        ("after_reply", of(&Sample::after_reply)),
        ("outer", of(&|s| s.outer)),
        ("total", of(&|s| s.t.total)),
        ("context", of(&|s| s.t.context)),
        ("embedding", of(&|s| s.t.embedding)),
        ("topic", of(&|s| s.t.topic)),
        ("act", of(&|s| s.t.act)),
        ("generation", of(&|s| s.t.generation)),
        ("commit", of(&|s| s.t.commit)),
    ] {
        let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
        println!(
            "{label}: {name:<14} ms: median {:.3}  mean {:.3}  p95 {:.3}  p99 {:.3}  max {:.3}",
            quantile(v.clone(), 0.5),
            mean,
            quantile(v.clone(), 0.95),
            quantile(v.clone(), 0.99),
            quantile(v, 1.0)
        );
    }
    let mut m: Vec<_> = modes.iter().map(|(k, v)| format!("{}={v}", k.as_str())).collect();
    m.sort();
    println!("{label}: delivered modes {}", m.join(" "));
}

/// Where every measured turn of group `label` is written, one JSON line each, when
/// `CHALIE_BENCH_TURNS` names a directory: the medians and p99 say how slow the slow turns are,
/// the lines say which turns they were and in which stage (`turns-{label}.jsonl`).
fn turn_log(label: &str) -> Option<std::io::BufWriter<std::fs::File>> {
    let dir = std::path::PathBuf::from(std::env::var_os("CHALIE_BENCH_TURNS")?);
    let path = dir.join(format!("turns-{label}.jsonl"));
    match std::fs::File::create(&path) {
        Ok(f) => Some(std::io::BufWriter::new(f)),
        Err(e) => {
            println!("no turn log at {}: {e}", path.display());
            None
        }
    }
}

/// The time of the first `ReplyChunk` of `exchange_id` among the events the turn left on the bus.
fn first_chunk(
    events: &mut tokio::sync::broadcast::Receiver<chalie::events::Stamped>,
    exchange_id: &str,
) -> Option<chrono::DateTime<chrono::Utc>> {
    let mut first = None;
    loop {
        match events.try_recv() {
            Ok(s) => {
                if let chalie::events::EngineEvent::ReplyChunk { exchange_id: x, .. } = &s.event
                    && x == exchange_id
                    && first.is_none()
                {
                    first = Some(s.ts);
                }
            }
            Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => {}
            Err(_) => return first,
        }
    }
}

/// Real vectors for the 1M store: the mixture pool, and the bench messages embedded by the
/// built-in model (so context recall meets real neighbours). `None` when the model is missing.
struct RealVectors {
    pool: Arc<Vec<Vec<f32>>>,
    messages: HashMap<String, Vec<f32>>,
}

fn real_vectors() -> Option<RealVectors> {
    let embedder = match minilm_real::embedder() {
        Ok(e) => e,
        Err(e) => {
            println!("turn/1m on random vectors: no built-in embedding model ({e})");
            return None;
        }
    };
    let msgs = messages();
    let vectors = embedder.embed(&msgs).ok()?;
    let pool = minilm_real::split().real;
    Some(RealVectors { pool: Arc::new(pool), messages: msgs.iter().map(|m| m.to_string()).zip(vectors).collect() })
}

/// Where a database group's store comes from.
enum Store {
    /// Seeded afresh in the group's tempdir (random vectors).
    Fresh,
    /// Seeded once into the bench cache, then copied: every run starts from the same store.
    /// With real vectors, or random ones when the built-in model is missing.
    Cached(Option<RealVectors>),
}

fn bench_db(c: &mut Criterion, label: &str, n: usize, store: Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("chalie.db");
    let bases = topic_bases();
    let message_vecs = match &store {
        Store::Cached(Some(r)) => r.messages.clone(),
        _ => message_vectors(&bases),
    };
    let db = match store {
        Store::Cached(real) => {
            let cached =
                minilm_real::cache_dir().join(format!("turn-{label}-v1-s{}.db", chalie::store::latest_version()));
            if !cached.exists() {
                let partial = cached.with_extension("partial.db");
                let _ = std::fs::create_dir_all(minilm_real::cache_dir());
                for p in [&partial, &partial.with_extension("db-wal"), &partial.with_extension("db-shm")] {
                    let _ = std::fs::remove_file(p);
                }
                let db = Db::open(&partial).expect("open db");
                let took = seed(&db, n, bases.clone(), real.map(|r| r.pool)).expect("seed");
                // Closed (its thread gone) before the file moves.
                db.call_blocking(|c| Ok(c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?)).expect("checkpoint");
                drop(db);
                std::thread::sleep(Duration::from_millis(200));
                std::fs::rename(&partial, &cached).expect("cache the seeded store");
                println!("seeded {n} memories in {:.2} s ({:.1} MB on disk)", took.as_secs_f64(), file_mb(&cached));
            }
            let copied = Instant::now();
            std::fs::copy(&cached, &path).expect("copy the cached store");
            // Written out now, untimed: left to the kernel, the copy's gigabyte of dirty pages
            // was flushed ~30 s later, in the middle of the timed turns.
            std::fs::File::open(&path).and_then(|f| f.sync_all()).expect("sync the copied store");
            println!("copied the cached {label} store in {:.1} s", copied.elapsed().as_secs_f64());
            Db::open(&path).expect("open db")
        }
        Store::Fresh => {
            let db = Db::open(&path).expect("open db");
            let took = seed(&db, n, bases.clone(), None).expect("seed");
            println!("seeded {n} memories in {:.2} s ({:.1} MB on disk)", took.as_secs_f64(), file_mb(&path));
            db
        }
    };

    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let bus = EventBus::new();
    // The bench's own ear on the bus: the first `ReplyChunk` of each exchange is its first token.
    let mut events = bus.subscribe();
    let engine = rt.block_on(Engine::start(db.clone(), llm(message_vecs, bus.clone()), bus)).expect("engine");
    // As in the app: the `checkpoint` worker owns the WAL's checkpoints, and runs between turns.
    db.call_blocking(|c| chalie::store::wal::hand_checkpoints_to_worker(c)).expect("wal");
    let cancel = CancellationToken::new();
    let mut restarted = None;
    let msgs = messages();
    let mut i = 0usize;
    let timings = Arc::new(Mutex::new(Vec::new()));
    let mut turn_log = turn_log(label);
    let wal_log = std::env::var_os("CHALIE_BENCH_WAL").map(|d| std::path::PathBuf::from(d).join(label));
    if let Some(dir) = &wal_log {
        std::fs::create_dir_all(dir).expect("CHALIE_BENCH_WAL dir");
    }
    let modes = Arc::new(Mutex::new(HashMap::new()));

    // One turn of the rotation, as the app runs it; its time, its figures kept.
    let mut turn = || -> Duration {
        let text = msgs[i % msgs.len()];
        i += 1;
        let xid = uuid::Uuid::now_v7().to_string();
        // Store the message first, as Runtime::intake does (not timed).
        let (x, body) = (xid.clone(), text.to_string());
        rt.block_on(db.call(move |c| ChatRepo(c).append(THREAD, &x, "user", &body, None, None))).expect("intake");
        // The checkpoint worker's run in the pause before this message (untimed).
        let last = restarted;
        restarted =
            rt.block_on(db.call(move |c| chalie::store::wal::checkpoint_and_restart(c, last))).expect("checkpoint").1;
        while events.try_recv().is_ok() {}
        let wall = chrono::Utc::now();
        let t = Instant::now();
        let report = rt.block_on(engine.turn(THREAD, &xid, text, &cancel)).expect("turn");
        let took = t.elapsed();
        let first =
            first_chunk(&mut events, &xid).and_then(|at| (at - wall).num_microseconds()).map(|us| us as f64 / 1000.0);
        *modes.lock().unwrap().entry(report.mode).or_insert(0) += 1;
        let report = black_box(report);
        let mut sample = Sample::new(report.timings_ms, took.as_secs_f64() * 1000.0, first);
        if turn_log.is_some() {
            let graph = report.graph.as_ref();
            sample.did = serde_json::json!({
                "mode": report.mode,
                "topic": report.topic.name,
                "new_topic": report.topic.is_new_topic,
                "memories": report.memories.len(),
                "graph_ms": graph.map(|g| g.ms),
                "graph_fired": graph.map(|g| g.fired.len()),
                "graph_grown": graph.and_then(|g| g.grown.clone()),
            });
        }
        if let Some(out) = &mut turn_log {
            sample.log(out, (i - 1) % msgs.len());
        }
        if let Some(dir) = &wal_log {
            // The log holds this turn's commits (and the intake's): the checkpoint worker
            // started it over just before. `scripts/wal_pages.py` names the b-trees they wrote.
            let _ = std::fs::copy(path.with_extension("db-wal"), dir.join(format!("turn-{i:05}.wal")));
        }
        timings.lock().unwrap().push(sample);
        took
    };
    // The process's first turn fills the in-process caches; it runs before the timed group so
    // that criterion sizes its samples from running turns (counted in, a first turn of seconds
    // on a busy machine left it timing ~20 turns).
    turn();
    // The app loads every vector table in the background once its engine is up
    // (`Runtime::warm_vectors`); here before the timed turns, so none waits for a table's load.
    db.call_blocking(|c| VecTable::ALL.into_iter().try_for_each(|t| VectorRepo(c).warm(t))).expect("warm");
    // The turn searches the episodes and the concepts; a table past the graph's threshold gets
    // its graph built on a background thread after its first search, the flat scan answering
    // meanwhile; the figures are the turns of an engine whose graphs are built (untimed wait).
    let waited = Instant::now();
    let all_settled = || {
        db.call_blocking(|c| {
            let repo = VectorRepo(c);
            Ok(repo.index_settled(VecTable::Episodes)? && repo.index_settled(VecTable::Concepts)?)
        })
        .expect("index state")
    };
    while !all_settled() {
        std::thread::sleep(Duration::from_millis(500));
    }
    println!(
        "turn/deterministic/{label}: vector indexes settled {:.1} s after the first turn",
        waited.elapsed().as_secs_f64()
    );

    let mut group = c.benchmark_group("turn");
    group.sample_size(20).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(2));
    group.bench_function(format!("deterministic/{label}"), |b| b.iter_custom(|iters| (0..iters).map(|_| turn()).sum()));
    group.finish();
    // The process's first turn fills the in-process caches (the vector codes and rows, the
    // concept graph: ~1 s at 1M memories), once per process; it is reported on its own and
    // left out of the figures, which are the turns of a running engine.
    let all = timings.lock().unwrap();
    if let Some(first) = all.first() {
        println!(
            "turn/deterministic/{label}: first turn of the process (cache fill, not in the figures): \
             deterministic {:.3} ms, whole call {:.3} ms",
            first.deterministic(),
            first.outer
        );
    }
    let turns = all.get(1..).unwrap_or_default();
    print_stages(&format!("turn/deterministic/{label}"), turns, &modes.lock().unwrap());
    if !turns.is_empty() {
        let target = match n {
            1_000_000.. => "<4ms_p99",
            100_000.. => "<1ms_median,<2ms_p99",
            _ => "report",
        };
        let of = |f: &dyn Fn(&Sample) -> f64| turns.iter().map(f).collect::<Vec<_>>();
        benchfig::print(&format!("turn/{label}"), &of(&Sample::deterministic), None, target);
        benchfig::print(&format!("turn/{label}_after_reply"), &of(&Sample::after_reply), None, "report");
        benchfig::print(&format!("turn/{label}_whole_call"), &of(&|s| s.outer), None, "report");
    }
    drop(all);
    drop(engine);
    drop(db);
    if let Some(dir) = &wal_log {
        // The pages the logs name, mapped to their b-trees by `scripts/wal_pages.py`.
        std::fs::copy(&path, dir.join("chalie.db")).expect("copy the store for CHALIE_BENCH_WAL");
    }
    bench_skills(c, label, &path);
}

/// Each innate skill through the dispatcher on the seeded database (the seed's latency
/// targets are upper bounds: recall/associate/autobiography < 500 ms, introspect/schedule
/// < 100 ms, memorize/list/focus < 50 ms).
fn bench_skills(c: &mut Criterion, label: &str, path: &Path) {
    use chalie::cognition::act::dispatch::dispatch;
    use chalie::cognition::act::plan::Action;
    use chalie::cognition::act::skill::SkillContext;
    let conn = chalie::store::open(path).expect("open db");
    let ctx = SkillContext::new(THREAD, "bench", "bench", chrono::Local::now());
    let setup = [
        Action::new("list", serde_json::json!({"action": "add", "name": "shopping", "items": ["eggs", "milk"]})),
        Action::new("focus", serde_json::json!({"action": "set", "description": "the report", "minutes": 45})),
        Action::new(
            "schedule",
            serde_json::json!({"action": "create", "message": "call mum", "due_at": "tomorrow at 9am"}),
        ),
    ];
    for a in &setup {
        assert!(dispatch(&conn, a, &ctx, None).ok, "setup {a:?}");
    }
    let cases = [
        ("recall", serde_json::json!({"query": "what did I say about the trip budget"})),
        ("introspect", serde_json::json!({})),
        ("autobiography", serde_json::json!({})),
        ("list", serde_json::json!({"action": "view", "name": "shopping"})),
        ("schedule", serde_json::json!({"action": "list"})),
        ("focus", serde_json::json!({"action": "check"})),
        ("memorize", serde_json::json!({"facts": [{"key": "bench", "value": "a benchmark fact"}]})),
    ];
    let mut group = c.benchmark_group("skill");
    group.sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    for (skill, params) in cases {
        let action = Action::new(skill, params);
        group.bench_function(format!("{skill}/{label}"), |b| {
            b.iter(|| {
                let r = dispatch(&conn, black_box(&action), &ctx, None);
                assert!(r.ok, "{skill}: {}", r.summary);
                r
            })
        });
    }
    group.finish();
}

fn file_mb(path: &Path) -> f64 {
    let wal = path.with_extension("db-wal");
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    (size(path) + size(&wal)) as f64 / 1e6
}

fn bench_pure(c: &mut Criterion) {
    let text = "Which neighbourhoods are nice to stay in?";
    let weights = RouterWeights::default();
    let state = RouterState { previous_mode: Some(Mode::Respond), recent_confidences: vec![0.4, 0.3, 0.5] };
    let ctx = ContextSignals {
        working_memory_turns: 4,
        gist_count: 4,
        fact_count: 8,
        world_state_present: true,
        fok_score: 0.0,
        topic_confidence: 0.8,
        is_new_topic: false,
        session_exchange_count: 6,
        ..ContextSignals::default()
    };
    let mut group = c.benchmark_group("turn");
    group.sample_size(30).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(2));
    group.bench_function("stages_pure", |b| {
        b.iter(|| {
            let text = black_box(text);
            let ts = signals::extract(text);
            let intent = classify_intent(
                text,
                &ts,
                &IntentContext {
                    warmth: ctx.warmth(),
                    memory_confidence: ctx.memory_confidence(),
                    working_memory_turns: ctx.working_memory_turns,
                },
            );
            let rs = RouterSignals::new(&ts, &intent, &ctx);
            let social = social_match(text);
            route(&rs, &weights, &state, social.is_none()).mode
        })
    });
    group.finish();
}

/// Whether `CHALIE_BENCH_SIZES` (a comma-separated list such as `100k,1m`; unset: all) asks for `label`.
fn wanted(label: &str) -> bool {
    std::env::var("CHALIE_BENCH_SIZES").ok().is_none_or(|v| v.split(',').any(|s| s.trim() == label))
}

fn bench(c: &mut Criterion) {
    bench_pure(c);
    if wanted("1k") {
        bench_db(c, "1k", 1_000, Store::Fresh);
    }
    if wanted("100k") {
        bench_db(c, "100k", 100_000, Store::Fresh);
    }
    // The 1M store takes minutes to build the first time: built when asked, then kept. Its
    // vectors are real MiniLM embeddings; without the built-in model, random ones (`1m_random`).
    let cached = |label: &str| {
        minilm_real::cache_dir().join(format!("turn-{label}-v1-s{}.db", chalie::store::latest_version())).exists()
    };
    if (std::env::var_os("CHALIE_BENCH_1M").is_some() || cached("1m") || cached("1m_random")) && wanted("1m") {
        match real_vectors() {
            Some(real) => bench_db(c, "1m", 1_000_000, Store::Cached(Some(real))),
            None => bench_db(c, "1m_random", 1_000_000, Store::Cached(None)),
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
