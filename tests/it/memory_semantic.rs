//! Issue 6 items 1–3 over a real SQLite file: episodes trigger a semantic job, the worker turns
//! them into concepts, relationships and concept vectors (embeddings from the scripted double),
//! unusable model output falls back to the deterministic extractor, a second mention
//! strengthens, and the decay engine forgets a faded trait on a fake clock, on the record.

use crate::support::harness;
use crate::support::openai_double::{Double, Reply};
use async_trait::async_trait;
use chalie::config::{ModelUse, Role};
use chalie::events::{EngineEvent, EventBus, NoticeLevel};
use chalie::llm::openai::OpenAiProvider;
use chalie::llm::{ChatRequest, Completion, Llm, LlmError, Provider, Route, Token};
use chalie::memory::decay::{run_decay_once, run_decay_task};
use chalie::memory::episodic::{self, build_episode, insert_episode};
use chalie::memory::semantic::{self, Processed, SEMANTIC_QUEUE};
use chalie::store::{Db, EMBEDDING_DIM, ENCODE_QUEUE, JobsRepo, StoreError, now_ts};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The double's 8-d unit embeddings, zero-padded to the vector tables' 384 (still unit length).
struct Padded(OpenAiProvider);

#[async_trait]
impl Provider for Padded {
    fn name(&self) -> &str {
        "double"
    }

    async fn chat(
        &self,
        model: &str,
        req: &ChatRequest,
        on_token: &mut (dyn FnMut(Token) + Send),
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        self.0.chat(model, req, on_token, cancel).await
    }

    async fn embed(&self, model: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        let mut out = self.0.embed(model, inputs).await?;
        out.iter_mut().for_each(|v| v.resize(EMBEDDING_DIM, 0.0));
        Ok(out)
    }
}

struct Setup {
    double: Double,
    db: Db,
    llm: Arc<Llm>,
    _dir: tempfile::TempDir,
}

async fn setup(script: Vec<Reply>, extraction: ModelUse) -> Setup {
    let double = Double::start(script).await;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(&dir.path().join("chalie.db")).unwrap();
    let provider: Arc<dyn Provider> = Arc::new(Padded(OpenAiProvider::new("double", &double.base_url(), None)));
    let routes = Role::ALL.map(|r| (r, Route { provider: provider.clone(), model: "m".into(), builtin: false }));
    let mut settings = harness::settings(ModelUse::Heuristic);
    settings.memory_extraction = extraction;
    let llm = Arc::new(Llm::new(EventBus::new(), settings, routes));
    Setup { double, db, llm, _dir: dir }
}

fn payload(i: usize, user: &str, reply: &str) -> Value {
    json!({"thread_id": "t", "exchange_id": format!("x{i}"), "topic": "engineering", "user_text": user,
           "response": reply, "mode": "RESPOND", "created_at": now_ts()})
}

/// Store one episode directly (no trigger) and queue a semantic job for it.
async fn episode_and_job(s: &Setup, i: usize, user: &str) -> i64 {
    let draft = build_episode(&payload(i, user, "Noted.")).unwrap();
    s.db.call(move |c| {
        let id = insert_episode(c, &draft, None)?;
        JobsRepo(c).enqueue(SEMANTIC_QUEUE, &json!({"reason": "test"}), 3)?;
        Ok(id)
    })
    .await
    .unwrap()
}

async fn q<T: rusqlite::types::FromSql + Send + 'static>(db: &Db, sql: &'static str) -> Vec<T> {
    db.call(move |c| {
        let mut stmt = c.prepare(sql)?;
        let rows = stmt.query_map([], |r| r.get(0))?.collect::<Result<Vec<T>, _>>()?;
        Ok::<_, StoreError>(rows)
    })
    .await
    .unwrap()
}

async fn consolidate(s: &Setup) -> Processed {
    semantic::process_next(&s.db, &s.llm, &CancellationToken::new()).await.unwrap().expect("a semantic job")
}

#[tokio::test]
async fn twenty_episodes_trigger_a_job_that_builds_the_graph_with_vectors() {
    let s = setup(vec![], ModelUse::Heuristic).await;
    // All of salience 1, so only the count trigger can fire.
    let texts = [
        "Rust is a systems programming language.",
        "Cargo uses rustc to compile our crates.",
        "we picked postgres instead of mysql for billing.",
        "Unit testing is part of the release process.",
        "The nightly build requires cmake.",
    ];
    for i in 0..20 {
        let p = payload(i, texts[i % texts.len()], "Good to know.");
        s.db.call(move |c| JobsRepo(c).enqueue(ENCODE_QUEUE, &p, 3)).await.unwrap();
        let done = episodic::process_next(&s.db, &s.llm, &CancellationToken::new()).await.unwrap();
        assert!(matches!(done, Some(episodic::Processed::Stored { embed_error: None, .. })), "{done:?}");
        let reasons: Vec<String> =
            q(&s.db, "SELECT json_extract(payload, '$.reason') FROM jobs WHERE queue = 'semantic'").await;
        assert_eq!(reasons.len(), usize::from(i == 19), "the 20th pending episode triggers: {reasons:?} at {i}");
    }
    let Processed::Done { counts, by_model, embed_error, .. } = consolidate(&s).await else { panic!() };
    assert_eq!((counts.episodes, by_model, embed_error), (20, 0, None));
    assert!(counts.created >= 8 && counts.strengthened > 0, "{counts:?}");
    let concepts: Vec<String> = q(&s.db, "SELECT name FROM semantic_concepts ORDER BY name").await;
    for want in ["cmake", "mysql", "postgres", "rust", "systems programming language", "unit testing"] {
        assert!(concepts.iter().any(|c| c == want), "{want} missing from {concepts:?}");
    }
    let vectors: Vec<i64> = q(&s.db, "SELECT COUNT(*) FROM concept_vec").await;
    assert_eq!(vectors[0] as usize, concepts.len(), "every concept has its vector");
    let edges: Vec<String> = q(
        &s.db,
        "SELECT a.name || ' ' || r.rel_type || ' ' || b.name FROM semantic_relationships r
         JOIN semantic_concepts a ON a.id = r.source_id JOIN semantic_concepts b ON b.id = r.target_id",
    )
    .await;
    for want in
        ["rust is-a systems programming language", "rustc used-for cargo", "cmake prerequisite-for nightly build"]
    {
        assert!(edges.iter().any(|e| e == want), "{want} missing from {edges:?}");
    }
    let pending: Vec<i64> =
        q(&s.db, "SELECT COUNT(*) FROM episodes WHERE semantic_consolidation_status <> 'done'").await;
    assert_eq!(pending, [0]);
    let states: Vec<String> = q(&s.db, "SELECT state FROM jobs WHERE queue = 'semantic'").await;
    assert_eq!(states, ["done"]);
    assert!(semantic::process_next(&s.db, &s.llm, &CancellationToken::new()).await.unwrap().is_none());
}

#[tokio::test]
async fn junk_model_output_falls_back_to_the_deterministic_extractor() {
    let junk = Reply::text("Sure! The concepts here are Postgres and MySQL.");
    let s = setup(vec![junk.clone(), junk.clone(), junk], ModelUse::Llm).await;
    episode_and_job(&s, 1, "We picked Postgres instead of MySQL for billing.").await;
    let Processed::Done { counts, by_model, .. } = consolidate(&s).await else { panic!() };
    assert_eq!(by_model, 0);
    assert_eq!(s.double.chat_requests().len(), 3, "the first answer and two repairs");
    assert_eq!(counts.created, 2);
    let edges: Vec<String> = q(&s.db, "SELECT rel_type FROM semantic_relationships").await;
    assert_eq!(edges, ["alternative-to"]);
}

#[tokio::test]
async fn a_valid_model_answer_is_stored_as_given() {
    let answer = json!({
        "concepts": [
            {"name": "borrow checker", "type": "process", "definition": "Checks references at compile time.",
             "abstraction_level": 3, "domain": "rust"},
            {"name": "Rust", "type": "technology", "definition": "A language.", "abstraction_level": 2, "domain": "rust"}
        ],
        "relationships": [{"source": "borrow checker", "target": "Rust", "type": "part-of", "strength": 0.9}]
    });
    let s = setup(vec![Reply::text(&answer.to_string())], ModelUse::Llm).await;
    episode_and_job(&s, 1, "Why does the borrow checker reject my code?").await;
    let Processed::Done { counts, by_model, .. } = consolidate(&s).await else { panic!() };
    assert_eq!((by_model, counts.created, counts.relationships), (1, 2, 1));
    let body = &s.double.chat_requests()[0].body;
    assert!(body.to_string().contains("borrow checker reject"), "the episode is sent: {body}");
    let weight: Vec<f64> = q(&s.db, "SELECT weight FROM semantic_relationships WHERE rel_type = 'part-of'").await;
    assert_eq!(weight, [0.9]);
}

#[tokio::test]
async fn a_second_mention_strengthens_rather_than_duplicates() {
    let s = setup(vec![], ModelUse::Heuristic).await;
    let first = episode_and_job(&s, 1, "We picked Postgres instead of MySQL for billing.").await;
    consolidate(&s).await;
    let second = episode_and_job(&s, 2, "Going with Postgres instead of MySQL was right.").await;
    let Processed::Done { counts, .. } = consolidate(&s).await else { panic!() };
    assert_eq!((counts.created, counts.strengthened), (0, 2), "{counts:?}");
    let rows: Vec<String> = q(
        &s.db,
        "SELECT name || ' ' || printf('%.2f', strength) || ' ' || consolidation_count || ' ' || source_episodes
         FROM semantic_concepts ORDER BY name",
    )
    .await;
    let sources = format!("[{first},{second}]");
    assert_eq!(rows, [format!("MySQL 1.10 1 {sources}"), format!("Postgres 1.10 1 {sources}")]);
    let edges: Vec<f64> = q(&s.db, "SELECT confidence FROM semantic_relationships").await;
    assert_eq!(edges.len(), 1, "one edge, reinforced");
    assert!((edges[0] - 0.6).abs() < 1e-9);
}

#[tokio::test]
async fn decay_on_a_fake_clock_forgets_a_faded_trait_and_records_it() {
    let s = setup(vec![], ModelUse::Heuristic).await;
    let t0 = now_ts() - 30 * 86_400;
    s.db.call(move |c| {
        for i in 0..15 {
            c.execute(
                "INSERT INTO episodes (gist, created_at, updated_at) VALUES (?1, ?2, ?2)",
                rusqlite::params![format!("e{i}"), t0],
            )?;
        }
        c.execute(
            "INSERT INTO user_traits (trait_key, trait_value, confidence, created_at, updated_at)
             VALUES ('favourite_colour', 'green', 0.12, ?1, ?1)",
            [t0],
        )?;
        Ok(())
    })
    .await
    .unwrap();
    let first = s.db.call(move |c| run_decay_once(c, t0)).await.unwrap();
    assert_eq!((first.traits_decayed, first.traits_deleted), (1, 0), "{first:?}");
    let late = s.db.call(move |c| run_decay_once(c, t0 + 7 * 86_400)).await.unwrap();
    assert_eq!(late.traits_deleted, 1, "{late:?}");
    let traits: Vec<i64> = q(&s.db, "SELECT COUNT(*) FROM user_traits").await;
    assert_eq!(traits, [0]);
    let record: Vec<String> =
        q(&s.db, "SELECT layer || ' ' || json_extract(detail, '$.trait_value') FROM memory_deletions").await;
    assert_eq!(record, ["trait green"]);

    // The background task announces what it forgot.
    let now = now_ts();
    s.db.call(move |c| {
        c.execute(
            "INSERT INTO user_traits (trait_key, trait_value, confidence, at_floor_since, created_at, updated_at)
             VALUES ('old_habit', 'x', 0.1, ?1, ?1, ?1)",
            [now - 8 * 86_400],
        )?;
        Ok(())
    })
    .await
    .unwrap();
    let bus = EventBus::new();
    let mut events = bus.subscribe();
    let stop = CancellationToken::new();
    let task = tokio::spawn(run_decay_task(s.db.clone(), bus.clone(), stop.clone()));
    let notice = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Ok(ev) = events.recv().await
                && let EngineEvent::Notice { level: NoticeLevel::Info, message } = ev.event
            {
                return message;
            }
        }
    })
    .await
    .expect("a notice");
    assert!(notice.contains("forgot 1 trait"), "{notice}");
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(5), task).await.expect("the task stops").unwrap();
}
