//! Issue 6, the memory chunker: chunk jobs on a real SQLite file become gists, facts, a style
//! profile and user traits, through the lightweight model when it answers and through the
//! deterministic rules when it does not (or is not asked); a trait stated once is recalled later.

use crate::support::harness::{self, Harness, dead_url, settings};
use crate::support::openai_double::{Double, Reply};
use crate::support::word_hash::WordHash;
use chalie::cognition::pipeline::Engine;
use chalie::config::{ModelUse, Role};
use chalie::events::EventBus;
use chalie::llm::openai::OpenAiProvider;
use chalie::llm::{Llm, Provider, Route};
use chalie::memory::chunker::{Processed, process_next, run_chunker_worker, wait_for_chunk};
use chalie::memory::recall::{RecallRequest, recall_with};
use chalie::memory::traits::TraitDecision;
use chalie::store::{CHUNK_QUEUE, Db, JobState, JobsRepo, StoreError, now_ts};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

struct Setup {
    _dir: TempDir,
    db: Db,
    double: Double,
    llm: Arc<Llm>,
    bus: EventBus,
}

/// A database file in a temp dir; chat roles on the scripted double (or nowhere, `chat_dead`),
/// embeddings from [`WordHash`].
async fn setup(script: Vec<Reply>, extraction: ModelUse, chat_dead: bool) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(&dir.path().join("chalie.db")).unwrap();
    let double = Double::start(script).await;
    let bus = EventBus::new();
    let url = if chat_dead { dead_url() } else { double.base_url() };
    let chat: Arc<dyn Provider> = Arc::new(OpenAiProvider::new("double", &url, None));
    let embedder: Arc<dyn Provider> = Arc::new(WordHash);
    let routes = Role::ALL.map(|r| {
        let provider = if r == Role::Embedding { embedder.clone() } else { chat.clone() };
        (r, Route { provider, model: "m".into(), builtin: false })
    });
    let mut s = settings(ModelUse::Heuristic);
    s.memory_extraction = extraction;
    let llm = Arc::new(Llm::new(bus.clone(), s, routes));
    Setup { _dir: dir, db, double, llm, bus }
}

impl Setup {
    async fn enqueue(&self, user: &str) -> i64 {
        let payload = json!({"thread_id": "t", "exchange_id": format!("x-{user}"), "topic": "life", "user_text": user,
                             "response": "Good to know.", "mode": "RESPOND", "created_at": now_ts()});
        self.db.call(move |c| JobsRepo(c).enqueue(CHUNK_QUEUE, &payload, 3)).await.unwrap()
    }

    async fn process(&self) -> Processed {
        process_next(&self.db, &self.llm, &CancellationToken::new()).await.unwrap().expect("a job was queued")
    }

    async fn rows(&self, sql: &'static str) -> Vec<Vec<Value>> {
        self.db
            .call(move |c| {
                let mut stmt = c.prepare(sql)?;
                let n = stmt.column_count();
                let rows = stmt.query_map([], |r| {
                    (0..n).map(|i| r.get::<_, rusqlite::types::Value>(i).map(sql_json)).collect::<Result<Vec<_>, _>>()
                })?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await
            .unwrap()
    }

    async fn job_state(&self, id: i64) -> (String, i64) {
        self.db
            .call(move |c| {
                Ok(c.query_row("SELECT state, attempts FROM jobs WHERE id = ?1", [id], |r| Ok((r.get(0)?, r.get(1)?)))?)
            })
            .await
            .unwrap()
    }
}

fn sql_json(v: rusqlite::types::Value) -> Value {
    match v {
        rusqlite::types::Value::Integer(i) => json!(i),
        rusqlite::types::Value::Real(f) => json!(f),
        rusqlite::types::Value::Text(s) => json!(s),
        _ => Value::Null,
    }
}

fn model_reply() -> Reply {
    let v = json!({
        "gists": [{"type": "decision", "content": "The user decided to move to Porto in June.", "confidence": 8}],
        "facts": [{"key": "move_month", "value": "June", "confidence": 0.9}],
        "traits": [{"key": "location", "value": "Porto", "category": "core", "source": "explicit",
                    "is_literal": true, "confidence": 0.9}],
        "style": {"verbosity": 3, "directness": 8, "formality": 4, "abstraction_level": 2, "emotional_valence": 6,
                  "certainty_level": 9, "challenge_appetite": 5, "depth_preference": 4, "pacing": 3},
    });
    Reply::text(&v.to_string())
}

const STATEMENT: &str = "I decided to move to Lisbon in June. I'm allergic to peanuts.";

#[tokio::test]
async fn a_valid_model_reply_is_stored_in_one_go() {
    let s = setup(vec![model_reply()], ModelUse::Llm, false).await;
    let job = s.enqueue(STATEMENT).await;
    let out = s.process().await;
    let Processed::Stored { source, fallback, embed_error, summary, .. } = out else { panic!("{out:?}") };
    assert_eq!((source, fallback, embed_error), ("model", None, None));
    assert_eq!((summary.gists, summary.facts, summary.style_observations), (1, 1, Some(1)));
    assert_eq!(s.job_state(job).await.0, "done");
    let requests = s.double.chat_requests();
    assert_eq!(requests.len(), 1);
    assert!(harness::system_prompt(&requests[0]).starts_with("You read one exchange"));
    assert!(requests[0].body["messages"][1]["content"].as_str().unwrap().contains("allergic to peanuts"));
    let gists = s.rows("SELECT gist_type, content, confidence, expires_at - created_at FROM gists").await;
    assert_eq!(
        gists,
        [vec![json!("decision"), json!("The user decided to move to Porto in June."), json!(8.0), json!(1800)]]
    );
    let facts = s.rows("SELECT key, value, expires_at - updated_at FROM facts").await;
    assert_eq!(facts, [vec![json!("move_month"), json!("June"), json!(86_400)]]);
    // The fact has its vector (the uncertainty pre-screen reads it).
    let fact_vec = s.rows("SELECT COUNT(*) FROM fact_vec v JOIN facts f ON f.id = v.id").await;
    assert_eq!(fact_vec, [vec![json!(1)]]);
    let traits =
        s.rows("SELECT trait_key, trait_value, source, (SELECT COUNT(*) FROM trait_vec) FROM user_traits").await;
    assert_eq!(traits, [vec![json!("location"), json!("Porto"), json!("explicit"), json!(1)]]);
    let style = s.rows("SELECT value FROM kv_state WHERE namespace = 'adaptive' AND key = 'communication_style'").await;
    let style: Value = serde_json::from_str(style[0][0].as_str().unwrap()).unwrap();
    assert_eq!((style["observations"].clone(), style["dimensions"]["certainty_level"].clone()), (json!(1), json!(9.0)));
}

/// The rules' result for [`STATEMENT`], whichever way they were reached.
async fn assert_rules_stored(s: &Setup) {
    let traits = s.rows("SELECT trait_key, trait_value, category FROM user_traits ORDER BY id").await;
    assert_eq!(traits, [vec![json!("allergy_peanuts"), json!("peanuts"), json!("physical")]]);
    let gists = s.rows("SELECT gist_type FROM gists ORDER BY id").await;
    assert_eq!(gists, [vec![json!("decision")], vec![json!("fact")]]);
    let facts = s.rows("SELECT key FROM facts").await;
    assert_eq!(facts, [vec![json!("allergy_peanuts")]]);
    let logged =
        s.rows("SELECT json_extract(payload, '$.source') FROM interaction_log WHERE event_type = 'memory_chunk'").await;
    assert_eq!(logged, [vec![json!("deterministic")]]);
}

#[tokio::test]
async fn junk_from_the_model_falls_back_to_the_rules_after_bounded_repairs() {
    let junk = || Reply::text("The user seems to like Lisbon, I think.");
    let s = setup(vec![junk(), junk(), junk(), junk()], ModelUse::Llm, false).await;
    let job = s.enqueue(STATEMENT).await;
    let out = s.process().await;
    let Processed::Stored { source, fallback, .. } = out else { panic!("{out:?}") };
    assert_eq!(source, "deterministic");
    assert!(fallback.unwrap().contains("not valid"));
    assert_eq!(s.double.chat_requests().len(), 3, "the first answer and two repairs, no more");
    assert_eq!(s.job_state(job).await, ("done".into(), 1));
    assert_rules_stored(&s).await;
}

#[tokio::test]
async fn an_unreachable_model_falls_back_to_the_rules() {
    let s = setup(vec![], ModelUse::Llm, true).await;
    let job = s.enqueue(STATEMENT).await;
    let out = s.process().await;
    assert!(matches!(&out, Processed::Stored { source: "deterministic", fallback: Some(_), .. }), "{out:?}");
    assert_eq!(s.job_state(job).await, ("done".into(), 1));
    assert_rules_stored(&s).await;
}

#[tokio::test]
async fn heuristic_extraction_makes_no_model_call_and_records_conflicts() {
    let s = setup(vec![model_reply()], ModelUse::Heuristic, false).await;
    s.enqueue(STATEMENT).await;
    let out = s.process().await;
    assert!(matches!(&out, Processed::Stored { source: "deterministic", fallback: None, .. }), "{out:?}");
    assert!(s.double.chat_requests().is_empty(), "no chat call");
    assert_rules_stored(&s).await;

    s.enqueue("I live in Porto").await;
    s.process().await;
    s.enqueue("I live in Lisbon").await;
    let Processed::Stored { summary, .. } = s.process().await else { panic!() };
    assert_eq!(summary.traits, [("location".to_string(), TraitDecision::KeepOld)]);
    let rows = s
        .rows("SELECT trait_value, reliability, last_conflict_at IS NOT NULL FROM user_traits WHERE trait_key = 'location' ORDER BY id")
        .await;
    assert_eq!(
        rows,
        [vec![json!("Porto"), json!("contradicted"), json!(1)], vec![json!("Lisbon"), json!("contradicted"), json!(1)]],
        "the rival is kept beside the old value, both doubtful"
    );
    let records =
        s.rows("SELECT uncertainty_type, severity, state, memory_a_type, memory_b_type FROM uncertainties").await;
    assert_eq!(
        records,
        [vec![json!("contradiction"), json!("critical"), json!("open"), json!("trait"), json!("trait")]],
        "a trait conflict is a record, not a log line"
    );
    assert!(s.rows("SELECT id FROM interaction_log WHERE event_type = 'trait_conflict'").await.is_empty());
    let style = s.rows("SELECT json_extract(value, '$.observations') FROM kv_state WHERE namespace = 'adaptive'").await;
    assert_eq!(style, [vec![json!(3)]], "one style observation per exchange");
}

#[tokio::test]
async fn a_job_left_running_by_a_crash_resumes_after_recovery() {
    let s = setup(vec![], ModelUse::Heuristic, false).await;
    let job = s.enqueue(STATEMENT).await;
    // Claimed by a process that died before committing.
    s.db.call(|c| JobsRepo(c).claim(CHUNK_QUEUE)).await.unwrap().unwrap();
    assert!(process_next(&s.db, &s.llm, &CancellationToken::new()).await.unwrap().is_none(), "not taken twice");
    assert!(s.rows("SELECT id FROM user_traits").await.is_empty());
    assert_eq!(s.db.call(|c| JobsRepo(c).recover_interrupted()).await.unwrap(), 1);
    assert!(matches!(s.process().await, Processed::Stored { .. }));
    assert_eq!(s.job_state(job).await, ("done".into(), 2));
    assert_rules_stored(&s).await;
}

#[tokio::test]
async fn a_store_error_requeues_the_job_with_nothing_half_written() {
    let s = setup(vec![], ModelUse::Heuristic, false).await;
    let job = s.enqueue(STATEMENT).await;
    s.db.call(|c| {
        c.execute_batch(
            "CREATE TRIGGER boom BEFORE INSERT ON user_traits BEGIN SELECT RAISE(ABORT, 'disk full'); END;",
        )?;
        Ok::<_, StoreError>(())
    })
    .await
    .unwrap();
    let out = s.process().await;
    assert!(
        matches!(&out, Processed::Failed { permanent: false, error, .. } if error.contains("disk full")),
        "{out:?}"
    );
    assert_eq!(s.job_state(job).await, ("queued".into(), 1));
    assert!(s.rows("SELECT id FROM gists UNION ALL SELECT id FROM facts").await.is_empty());
}

/// A turn through the engine queues the chunk job; the worker stores the trait; a later recall
/// finds it by vector (and by keyword).
#[tokio::test]
async fn a_trait_stated_in_a_turn_is_recalled_later() {
    let s = setup(vec![Reply::text("Noted, no peanuts.")], ModelUse::Heuristic, false).await;
    let engine = Engine::start(s.db.clone(), s.llm.clone(), s.bus.clone()).await.unwrap();
    let h = Harness { double: s.double, db: s.db.clone(), bus: s.bus.clone(), engine };
    let r = h.say("t", "Just so you know, my name is Ada and I'm allergic to peanuts.").await;
    assert_eq!(h.jobs("chunk").await.len(), 1);

    let stop = CancellationToken::new();
    let worker = tokio::spawn(run_chunker_worker(h.db.clone(), s.llm.clone(), h.bus.clone(), stop.clone()));
    let state = wait_for_chunk(&h.db, &r.exchange_id, Duration::from_secs(10)).await.unwrap();
    assert_eq!(state, Some(JobState::Done));
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(5), worker).await.expect("the worker stops on cancel").unwrap();

    // Phase A's identity hook stored the name; the chunker saw the same statement and did not
    // count it a second time.
    let name: (String, i64) = h
        .read(|c| {
            Ok(c.query_row(
                "SELECT trait_value, reinforcement_count FROM user_traits WHERE trait_key = 'name'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?)
        })
        .await;
    assert_eq!(name, ("Ada".to_string(), 1));

    let query = "my peanuts allergy";
    let embedding = s.llm.embed(&[query.to_string()]).await.unwrap().remove(0);
    let hits = h
        .read(move |c| {
            recall_with(c, &RecallRequest { query, embedding: Some(&embedding), layers: &[], limit: 5, now: now_ts() })
        })
        .await;
    let top = &hits[0];
    assert_eq!((top.layer, top.text.as_str()), ("trait", "allergy_peanuts: peanuts"), "{hits:#?}");
    let sources: Vec<&str> = top.sources.iter().map(|s| s.source).collect();
    assert!(sources.contains(&"vector"), "{sources:?}");
}
