//! Issue 6, episodic slice end to end: turns through the engine queue encode jobs, the
//! episodic worker turns them into episodes with vectors, and hybrid recall finds them.

use crate::support::bin::write_double_config;
use crate::support::harness::{self, Harness, settings};
use crate::support::openai_double::{Double, Reply};
use crate::support::word_hash::WordHash;
use chalie::cognition::pipeline::Engine;
use chalie::config::{ModelUse, Role};
use chalie::events::EventBus;
use chalie::llm::openai::OpenAiProvider;
use chalie::llm::{Llm, Provider, Route};
use chalie::memory::episodic::{Processed, encode_state, process_next, wait_for_encoding};
use chalie::memory::{hybrid_recall, run_episodic_worker};
use chalie::store::{Db, JobState, JobsRepo, StoreError, now_ts};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Chat roles on the scripted double (heuristic triage: one model call per turn), embeddings
/// on `embedder`. Returns the harness and the engine's shared models for the worker.
async fn start(script: Vec<Reply>, embedder: Option<Arc<dyn Provider>>) -> (Harness, Arc<Llm>) {
    let double = Double::start(script).await;
    let db = Db::spawn(chalie::store::open_in_memory().unwrap());
    let bus = EventBus::new();
    let chat: Arc<dyn Provider> = Arc::new(OpenAiProvider::new("double", &double.base_url(), None));
    let dead: Arc<dyn Provider> = Arc::new(OpenAiProvider::new("dead", &harness::dead_url(), None));
    let embedder = embedder.unwrap_or(dead);
    let routes = Role::ALL.map(|r| {
        let provider = if r == Role::Embedding { embedder.clone() } else { chat.clone() };
        (r, Route { provider, model: "m".into(), builtin: false })
    });
    let llm = Arc::new(Llm::new(bus.clone(), settings(ModelUse::Heuristic), routes));
    let engine = Engine::start(db.clone(), llm.clone(), bus.clone()).await.unwrap();
    (Harness { double, db, bus, engine }, llm)
}

fn replies() -> Vec<Reply> {
    [
        "Lisbon in May is lovely. Do you already have dates?",
        "Paris is the capital of France.",
        "Noted.",
        "Noted.",
        "Noted.",
    ]
    .iter()
    .map(|s| Reply::text(s))
    .collect()
}

type EpisodeRow = (i64, String, Option<String>, i64, Option<String>, i64);

async fn episodes(h: &Harness) -> Vec<EpisodeRow> {
    h.read(|c| {
        let mut stmt = c.prepare(
            "SELECT id, gist, exchange_id, salience, intent,
                    (SELECT COUNT(*) FROM episode_vec v WHERE v.rowid = episodes.id)
             FROM episodes ORDER BY id",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    })
    .await
}

#[tokio::test]
async fn two_turns_become_episodes_with_vectors_and_recall_finds_them_first() {
    let (h, llm) = start(replies(), Some(Arc::new(WordHash))).await;
    let r1 = h.say("t", "I'm planning a trip to Lisbon with my sister in May").await;
    let r2 = h.say("t", "What is the capital of France?").await;
    assert_eq!(h.jobs("encode").await.len(), 2);

    let stop = CancellationToken::new();
    let worker = tokio::spawn(run_episodic_worker(h.db.clone(), llm.clone(), h.bus.clone(), stop.clone()));
    for r in [&r1, &r2] {
        let state = wait_for_encoding(&h.db, &r.exchange_id, Duration::from_secs(10)).await.unwrap();
        assert_eq!(state, Some(JobState::Done), "exchange {}", r.exchange_id);
    }
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(5), worker).await.expect("the worker stops on cancel").unwrap();

    let rows = episodes(&h).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    let (lisbon, gist, xid, salience, intent, vectors) = rows[0].clone();
    assert_eq!(xid.as_deref(), Some(r1.exchange_id.as_str()));
    assert!(gist.starts_with("I'm planning a trip to Lisbon with my sister in May"), "{gist}");
    if !r1.response.is_empty() {
        assert!(gist.contains(" — reply: "), "the reply's first sentence is kept: {gist}");
    }
    assert!((1..=10).contains(&salience));
    let intent: serde_json::Value = serde_json::from_str(&intent.unwrap()).unwrap();
    assert!(intent["type"].is_string() && intent["direction"].is_string(), "{intent}");
    assert_eq!(vectors, 1, "the gist's embedding is stored");
    assert_eq!(rows[1].2.as_deref(), Some(r2.exchange_id.as_str()));
    assert_eq!(rows[1].5, 1);

    // A related query, embedded by the same model, finds the Lisbon episode first.
    let query = "when is the Lisbon trip with my sister";
    let embedding = llm.embed(&[query.to_string()]).await.unwrap().remove(0);
    let hits = h.read(move |c| hybrid_recall(c, query, Some(&embedding), 5, now_ts())).await;
    let top = &hits[0];
    assert_eq!((top.layer, top.id), ("episode", lisbon), "{hits:#?}");
    let sources: Vec<&str> = top.sources.iter().map(|s| s.source).collect();
    assert!(sources.contains(&"vector") && sources.contains(&"fts"), "{sources:?}");
    assert!(top.why.contains("vector #1"), "{}", top.why);
    assert!(top.why.contains("matches"), "{}", top.why);
    assert!(top.at > 0 && top.at <= now_ts());
    assert_eq!(top.reliability, "reliable");
    assert!(top.score > 0.0 && top.parts.rrf > 0.0);
}

#[tokio::test]
async fn an_embedding_failure_still_stores_the_episode_and_completes_the_job() {
    // The embedding role points where nothing listens.
    let (h, llm) = start(replies(), None).await;
    let r = h.say("t", "I will send the quarterly report to Maria by Friday").await;
    let stop = CancellationToken::new();
    let done = process_next(&h.db, &llm, &stop).await.unwrap().expect("one job was queued");
    let Processed::Stored { episode_id, embed_error, .. } = done else { panic!("{done:?}") };
    assert!(embed_error.is_some(), "the failure is reported");
    let x = r.exchange_id.clone();
    assert_eq!(h.read(move |c| encode_state(c, &x)).await, Some(JobState::Done));
    let rows = episodes(&h).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].0, episode_id);
    assert_eq!(rows[0].5, 0, "no vector");
    // Still recalled, by full text.
    let hits = h.read(|c| hybrid_recall(c, "quarterly report", None, 3, now_ts())).await;
    assert_eq!((hits[0].layer, hits[0].id), ("episode", episode_id), "{hits:#?}");
    assert!(process_next(&h.db, &llm, &stop).await.unwrap().is_none(), "queue empty");
}

#[tokio::test]
async fn a_store_error_fails_the_job_for_a_retry_and_an_interrupted_job_is_recovered() {
    let (h, llm) = start(replies(), Some(Arc::new(WordHash))).await;
    let r = h.say("t", "My sister Ana moves to Porto in June").await;
    let stop = CancellationToken::new();

    // Interrupted: claimed by a process that died. Recovery at start puts it back.
    let claimed = h.read(|c| JobsRepo(c).claim(chalie::store::ENCODE_QUEUE)).await.unwrap();
    assert!(process_next(&h.db, &llm, &stop).await.unwrap().is_none(), "a running job is not taken twice");
    assert_eq!(h.read(|c| JobsRepo(c).recover_interrupted()).await, 1);

    // The write fails: the job goes back to the queue with its error, nothing half-written.
    h.read(|c| {
        c.execute_batch("CREATE TRIGGER boom BEFORE INSERT ON episodes BEGIN SELECT RAISE(ABORT, 'disk full'); END;")?;
        Ok::<_, StoreError>(())
    })
    .await;
    let out = process_next(&h.db, &llm, &stop).await.unwrap().unwrap();
    assert!(
        matches!(&out, Processed::Failed { permanent: false, error, .. } if error.contains("disk full")),
        "{out:?}"
    );
    let id = claimed.id;
    let (state, attempts, last_error): (String, u32, Option<String>) = h
        .read(move |c| {
            Ok(c.query_row("SELECT state, attempts, last_error FROM jobs WHERE id = ?1", [id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?)
        })
        .await;
    assert_eq!(state, "queued");
    assert_eq!(attempts, 2, "the interrupted claim counts");
    assert!(last_error.unwrap().contains("disk full"));
    assert!(episodes(&h).await.is_empty());
    let count: i64 = h.read(|c| Ok(c.query_row("SELECT COUNT(*) FROM episode_vec", [], |r| r.get(0))?)).await;
    assert_eq!(count, 0);

    // Fixed, and due again: it goes through.
    h.read(move |c| {
        c.execute_batch("DROP TRIGGER boom;")?;
        c.execute("UPDATE jobs SET run_after = 0 WHERE id = ?1", [id])?;
        Ok::<_, StoreError>(())
    })
    .await;
    let out = process_next(&h.db, &llm, &stop).await.unwrap().unwrap();
    assert!(matches!(out, Processed::Stored { embed_error: None, .. }), "{out:?}");
    let x = r.exchange_id.clone();
    assert_eq!(h.read(move |c| encode_state(c, &x)).await, Some(JobState::Done));
    assert_eq!(episodes(&h).await.len(), 1);
}

/// `ask` exits only after its turn's encode job is committed: the episode is in the database
/// when the process is gone. (The double's embeddings are 8-d, not the tables' 384: the
/// episode is stored without a vector, which is the degraded path, and the job still completes.)
#[test]
fn ask_waits_for_its_turn_to_be_encoded() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = rt.block_on(Double::start(vec![Reply::text("Paris is the capital of France.")]));
    write_double_config(dir.path(), &double.base_url());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chalie-tui"))
        .args(["ask", "--json", "What is the capital of France?"])
        .env("CHALIE_DATA_DIR", dir.path())
        .env("CHALIE_CONFIG", dir.path().join("config.toml"))
        .env("CHALIE_MODELS_DIR", dir.path().join("models"))
        .env_remove("CHALIE_LOG")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let xid = report["exchange_id"].as_str().unwrap().to_string();
    let c = chalie::store::open(&dir.path().join("chalie.db")).unwrap();
    assert_eq!(encode_state(&c, &xid).unwrap(), Some(JobState::Done));
    let gist: String = c.query_row("SELECT gist FROM episodes WHERE exchange_id = ?1", [&xid], |r| r.get(0)).unwrap();
    assert!(gist.starts_with("What is the capital of France?"), "{gist}");
}

#[tokio::test]
async fn an_earlier_statement_reaches_a_later_reply_in_another_thread() {
    let (h, llm) = start(replies(), Some(Arc::new(WordHash))).await;
    let r1 = h.say("t1", "I'm planning a trip to Lisbon with my sister in May").await;
    let stop = CancellationToken::new();
    let worker = tokio::spawn(run_episodic_worker(h.db.clone(), llm.clone(), h.bus.clone(), stop.clone()));
    let state = wait_for_encoding(&h.db, &r1.exchange_id, Duration::from_secs(10)).await.unwrap();
    assert_eq!(state, Some(JobState::Done));
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(5), worker).await.expect("the worker stops").unwrap();

    // An open question goes to the model with the episode in its context. ("When is my trip…?"
    // is planned as an ACT; with no usable plan, memory answers it directly: see the `act` module.)
    let r2 = h.say("t2", "Any tips for my trip to Lisbon with my sister?").await;
    assert_eq!(r2.memories.len(), 1, "{:?}", r2.memories);
    assert_eq!(r2.memories[0].layer, "episode");
    let generation = h.double.chat_requests().last().cloned().unwrap();
    let system = harness::system_prompt(&generation);
    assert!(system.contains("From earlier conversations:\n- I'm planning a trip to Lisbon"), "{system}");

    // A contentless message recalls nothing.
    let r3 = h.say("t2", "ok").await;
    assert!(r3.memories.is_empty());
}
