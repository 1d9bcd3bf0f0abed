use super::*;
use crate::memory::semantic_store::*;
use crate::store::fixtures::Fixture;
use crate::store::{EMBEDDING_DIM, VecTable, VectorRepo, open_in_memory};

fn input(pending: i64, salience: u8) -> TriggerInput {
    TriggerInput { pending, salience, rolling_avg: 5.0, since_last_run_s: Some(10_000), outstanding: false }
}

#[test]
fn trigger_rules() {
    assert_eq!(trigger(&input(19, 5)), None);
    assert_eq!(trigger(&input(20, 1)), Some(TriggerReason::Count));
    assert_eq!(trigger(&input(3, 7)), Some(TriggerReason::Salience), "7 ≥ 1.4 × 5");
    assert_eq!(trigger(&input(3, 6)), None, "6 < 7");
    let recent = TriggerInput { since_last_run_s: Some(299), ..input(3, 9) };
    assert_eq!(trigger(&recent), None, "too soon after the last run");
    assert_eq!(trigger(&TriggerInput { since_last_run_s: Some(300), ..recent }), Some(TriggerReason::Salience));
    assert_eq!(trigger(&TriggerInput { since_last_run_s: None, ..recent }), Some(TriggerReason::Salience));
    assert_eq!(trigger(&TriggerInput { pending: 25, ..recent }), Some(TriggerReason::Count), "count ignores the gap");
    assert_eq!(trigger(&TriggerInput { outstanding: true, ..input(40, 10) }), None);
    // One scale: an average on 1–10 is compared with a 1–10 salience (a 0–1 mix would always fire).
    assert_eq!(trigger(&TriggerInput { rolling_avg: 8.0, ..input(2, 10) }), None, "10 < 11.2");
}

#[test]
fn idle_fallback() {
    assert!(!idle_due(Some(1000), 1000 + IDLE_S - 1, false));
    assert!(idle_due(Some(1000), 1000 + IDLE_S, false));
    assert!(!idle_due(Some(1000), 1000 + IDLE_S, true), "a job is already waiting");
    assert!(!idle_due(None, 1_000_000, false));
}

fn add_episode(c: &Connection, salience: u8, created_at: i64) -> i64 {
    Fixture(c).insert(
        "episodes",
        &[("gist", &"g"), ("salience", &salience), ("created_at", &created_at), ("updated_at", &created_at)],
    )
}

fn jobs(c: &Connection) -> Vec<String> {
    Fixture(c).values("jobs", "json_extract(payload, '$.reason')", "queue = 'semantic'", [])
}

#[test]
fn maybe_enqueue_counts_and_compares_salience() {
    let c = open_in_memory().unwrap();
    let now = crate::store::now_ts();
    for _ in 0..19 {
        let id = add_episode(&c, 3, now);
        assert_eq!(maybe_enqueue(&c, id, 3, now).unwrap(), None);
    }
    let id = add_episode(&c, 3, now);
    assert_eq!(maybe_enqueue(&c, id, 3, now).unwrap(), Some(TriggerReason::Count));
    let id = add_episode(&c, 10, now);
    assert_eq!(maybe_enqueue(&c, id, 10, now).unwrap(), None, "a job is outstanding");
    Fixture(&c).set("jobs", "state = 'done'", "", []);
    Fixture(&c).set("episodes", "semantic_consolidation_status = 'done'", "", []);
    let id = add_episode(&c, 4, now);
    assert_eq!(maybe_enqueue(&c, id, 4, now + 400).unwrap(), None, "4 < 1.4 × the rolling average (3.35)");
    let id = add_episode(&c, 8, now);
    assert_eq!(maybe_enqueue(&c, id, 8, now + 400).unwrap(), Some(TriggerReason::Salience));
    assert_eq!(jobs(&c), ["count", "salience"]);
    Fixture(&c).set("jobs", "state = 'done'", "", []);
    assert!(!enqueue_if_idle(&c, now + IDLE_S - 1).unwrap());
    assert!(enqueue_if_idle(&c, now + IDLE_S).unwrap(), "the oldest pending episode has waited 15 min");
    assert_eq!(jobs(&c).last().map(String::as_str), Some("idle"));
}

#[test]
fn similarity_from_l2_and_strengthen_math() {
    assert_eq!(sim_from_l2(l2_from_cosine_distance(0.0)), 1.0);
    let orthogonal = sim_from_l2(l2_from_cosine_distance(1.0));
    assert!((orthogonal - 1.0 / (1.0 + 2f64.sqrt())).abs() < 1e-12);
    // sim > 0.85 ⟺ L2 < 0.17647 ⟺ cosine distance < 0.015571.
    assert!(sim_from_l2(l2_from_cosine_distance(0.0155)) > MATCH_SIM);
    assert!(sim_from_l2(l2_from_cosine_distance(0.0157)) < MATCH_SIM);
    let s = strengthen(1.0, 0);
    assert!((s.strength - 1.1).abs() < 1e-12);
    assert_eq!(s.consolidation_count, 1);
    assert!((s.decay_resistance - (0.5 + 0.05 * 2f64.ln())).abs() < 1e-12);
    assert_eq!(strengthen(9.5, 4).strength, 10.0, "capped at 10");
    assert_eq!(strengthen(1.0, 30_000).decay_resistance, 1.0, "capped at 1");
    assert_eq!(signed_weight("contradicts", 0.7), -0.7);
    assert_eq!(signed_weight("is-a", 0.7), 0.7);
}

fn unit(seed: usize, tilt: f32) -> Vec<f32> {
    let mut v = vec![0f32; EMBEDDING_DIM];
    v[seed] = 1.0;
    v[seed + 1] = tilt;
    let n = (1.0 + tilt * tilt).sqrt();
    v.iter().map(|x| x / n).collect()
}

fn concept(name: &str) -> Concept {
    Concept {
        name: name.into(),
        concept_type: "technology".into(),
        definition: format!("{name} is a thing."),
        abstraction_level: 3,
        domain: None,
    }
}

#[test]
fn match_or_create() {
    let c = open_in_memory().unwrap();
    let created = upsert_concept(&c, &concept("Postgres"), Some(&unit(0, 0.0)), 1, 100).unwrap();
    let Upserted::Created(id) = created else { panic!("{created:?}") };
    // Same name, other case: strengthened, episode appended.
    assert_eq!(upsert_concept(&c, &concept("postgres"), None, 2, 200).unwrap(), Upserted::Strengthened(id));
    // Another name with a near-identical vector (cos 0.995): the same concept.
    assert_eq!(
        upsert_concept(&c, &concept("PostgreSQL"), Some(&unit(0, 0.1)), 3, 300).unwrap(),
        Upserted::Strengthened(id)
    );
    let f = Fixture(&c);
    let (strength, count, dr, sources, reinforced): (f64, i64, f64, String, i64) = (
        f.value("semantic_concepts", "strength", "id = ?1", [id]),
        f.value("semantic_concepts", "consolidation_count", "id = ?1", [id]),
        f.value("semantic_concepts", "decay_resistance", "id = ?1", [id]),
        f.value("semantic_concepts", "source_episodes", "id = ?1", [id]),
        f.value("semantic_concepts", "last_reinforced_at", "id = ?1", [id]),
    );
    assert!((strength - 1.21).abs() < 1e-9);
    assert_eq!(count, 2);
    assert!((dr - (0.5 + 0.05 * 3f64.ln())).abs() < 1e-9);
    assert_eq!(sources, "[1,2,3]");
    assert_eq!(reinforced, 300);
    // A vector at cos 0.95 is below the threshold: a new concept.
    let far = upsert_concept(&c, &concept("MySQL"), Some(&unit(0, 0.33)), 4, 400).unwrap();
    assert!(matches!(far, Upserted::Created(x) if x != id));
    // No embedding: stored without a vector.
    let Upserted::Created(bare) = upsert_concept(&c, &concept("SQLite"), None, 5, 500).unwrap() else { panic!() };
    assert!(VectorRepo(&c).knn(VecTable::Concepts, &unit(0, 0.0), 10).unwrap().iter().all(|(i, _)| *i != bare));
    // A forgotten concept comes back as new, on the same row.
    Fixture(&c).set("semantic_concepts", "deleted_at = 1", "id = ?1", [bare]);
    assert_eq!(upsert_concept(&c, &concept("SQLite"), None, 6, 600).unwrap(), Upserted::Created(bare));
}

#[test]
fn relationships_upsert_signed_and_symmetric() {
    let c = open_in_memory().unwrap();
    let a = upsert_concept(&c, &concept("A"), None, 1, 1).unwrap().id();
    let b = upsert_concept(&c, &concept("B"), None, 1, 1).unwrap().id();
    let r =
        |ty: &str, s: f64| Relationship { source: "A".into(), target: "B".into(), rel_type: ty.into(), strength: s };
    assert!(upsert_relationship(&c, a, b, &r("contradicts", 0.7), 1).unwrap());
    assert!(upsert_relationship(&c, b, a, &r("contradicts", 0.9), 2).unwrap(), "the reverse of a symmetric edge");
    assert!(upsert_relationship(&c, a, b, &r("is-a", 0.6), 1).unwrap());
    assert!(!upsert_relationship(&c, a, a, &r("is-a", 0.6), 1).unwrap(), "no self-loops");
    let rows: Vec<(i64, i64, String, f64, bool)> = {
        let f = Fixture(&c);
        let ids: Vec<i64> = f.values("semantic_relationships", "id", "", []);
        ids.into_iter()
            .map(|id| {
                let at = "id = ?1";
                (
                    f.value("semantic_relationships", "source_id", at, [id]),
                    f.value("semantic_relationships", "target_id", at, [id]),
                    f.value("semantic_relationships", "rel_type", at, [id]),
                    f.value("semantic_relationships", "weight", at, [id]),
                    f.value("semantic_relationships", "bidirectional", at, [id]),
                )
            })
            .collect()
    };
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0], (a.min(b), a.max(b), "contradicts".into(), -0.9, true));
    assert_eq!(rows[1], (a, b, "is-a".into(), 0.6, false));
}

#[test]
fn model_answers_are_checked() {
    let schema = extraction_schema();
    let good = json!({
        "concepts": [
            {"name": "Rust", "type": "technology", "definition": "A language.", "abstraction_level": 2, "domain": ""},
            {"name": "language", "type": "domain", "definition": "", "abstraction_level": 4, "domain": "cs"}
        ],
        "relationships": [
            {"source": "rust", "target": "Language", "type": "is-a", "strength": 0.9},
            {"source": "Rust", "target": "Go", "type": "alternative-to", "strength": 0.6},
            {"source": "Rust", "target": "rust", "type": "related-to", "strength": 0.6}
        ]
    });
    assert!(crate::llm::schema::validate(&good, &schema).is_ok());
    let x = from_model(&good, Some("code")).unwrap();
    assert_eq!(x.concepts[0].domain.as_deref(), Some("code"), "an empty domain takes the topic");
    assert_eq!(x.relationships.len(), 1, "unknown endpoints and self-loops are dropped");
    assert_eq!((x.relationships[0].source.as_str(), x.relationships[0].target.as_str()), ("Rust", "language"));
    let bad_type = json!({"concepts": [{"name": "x", "type": "animal", "definition": "", "abstraction_level": 3,
                                        "domain": ""}], "relationships": []});
    assert!(crate::llm::schema::validate(&bad_type, &schema).is_err());
    let weak =
        json!({"concepts": [], "relationships": [{"source": "a", "target": "b", "type": "is-a", "strength": 0.2}]});
    assert!(crate::llm::schema::validate(&weak, &schema).is_err(), "strength below 0.5");
    assert_eq!(from_model(&json!({"concepts": [], "relationships": []}), None), Some(Extraction::default()));
    assert_eq!(from_model(&json!({"oops": 1}), None), None);
    let req = extraction_request(&EpisodeText { id: 1, gist: "g".into(), topic: None });
    assert!(matches!(req.format, ResponseFormat::JsonSchema { .. }));
}

#[test]
fn store_consolidation_is_one_transaction() {
    let mut c = open_in_memory().unwrap();
    let e1 = add_episode(&c, 5, 10);
    let e2 = add_episode(&c, 5, 10);
    let job = JobsRepo(&c).enqueue(SEMANTIC_QUEUE, &json!({}), 3).unwrap();
    let batch = pending_batch(&c, BATCH).unwrap();
    assert_eq!(batch.len(), 2);
    let ex = crate::memory::concepts::extract(
        &EpisodeText { id: e1, gist: "Postgres is a database. I use Postgres instead of MySQL.".into(), topic: None },
        &Default::default(),
    );
    let vectors: HashMap<String, Vec<f32>> =
        ex.concepts.iter().enumerate().map(|(i, k)| (embed_text(k), unit(2 * i, 0.0))).collect();
    let counts =
        store_consolidation(&mut c, job, &[(e1, ex.clone()), (e2, Extraction::default())], &vectors, 50).unwrap();
    assert_eq!(counts.episodes, 2);
    assert_eq!(counts.created, ex.concepts.len());
    assert!(counts.relationships >= 2, "{counts:?}");
    let vecs = VectorRepo(&c).count(VecTable::Concepts).unwrap();
    assert_eq!(vecs as usize, ex.concepts.len());
    let pending = Fixture(&c).count("episodes", "semantic_consolidation_status = 'pending'", []);
    assert_eq!(pending, 0);
    let state: String = Fixture(&c).value("jobs", "state", "id = ?1", [job]);
    assert_eq!(state, "done");
    // A bad vector fails the write: nothing of the batch is kept, the episodes stay pending.
    let e3 = add_episode(&c, 5, 10);
    let job = JobsRepo(&c).enqueue(SEMANTIC_QUEUE, &json!({}), 3).unwrap();
    let ex = crate::memory::concepts::extract(
        &EpisodeText { id: e3, gist: "Kafka is a message broker.".into(), topic: None },
        &Default::default(),
    );
    let bad: HashMap<String, Vec<f32>> = ex.concepts.iter().map(|k| (embed_text(k), vec![1.0; 3])).collect();
    assert!(store_consolidation(&mut c, job, &[(e3, ex)], &bad, 60).is_err());
    let status: String = Fixture(&c).value("episodes", "semantic_consolidation_status", "id = ?1", [e3]);
    assert_eq!(status, "pending");
    let kafka = Fixture(&c).count("semantic_concepts", "name = 'kafka'", []);
    assert_eq!(kafka, 0);
}
