use super::*;
use crate::store::fixtures::Fixture;
use crate::store::{EMBEDDING_DIM, NewGist, VecTable, VectorRepo, open_in_memory};

const H: i64 = 3600;
const DAY: i64 = 86_400;
const T0: i64 = 1_800_000_000;

#[test]
fn reliability_multipliers_follow_the_table() {
    assert_eq!(reliability_multiplier("reliable"), 1.0);
    assert_eq!(reliability_multiplier("uncertain"), 1.5);
    assert_eq!(reliability_multiplier("contradicted"), 2.0);
    assert_eq!(reliability_multiplier("superseded"), 3.0);
    assert_eq!(reliability_multiplier("anything else"), 1.0);
    // The multiplier speeds decay up in every layer.
    assert!(decay_activation(1.0, 5.0, 2.0) < decay_activation(1.0, 5.0, 1.0));
    assert!((decay_activation(2.0, 5.0, 2.0) - decay_activation(2.0, 10.0, 1.0)).abs() < 1e-12);
    assert!((1.0 - decay_strength(1.0, 0.5, 3.0, 1.0) - 3.0 * 0.015).abs() < 1e-12);
    let reliable = 0.9 - decay_confidence(0.9, 1, "general", false, 1.0, 1.0);
    let superseded = 0.9 - decay_confidence(0.9, 1, "general", false, 3.0, 1.0);
    assert!((superseded - 3.0 * reliable).abs() < 1e-12);
}

#[test]
fn richness_and_gates() {
    assert_eq!(richness(0, 0, 0, 0.0), 0.0);
    assert!((richness(50, 30, 10, 1.0) - 1.0).abs() < 1e-12);
    assert!((richness(500, 300, 100, 5.0) - 1.0).abs() < 1e-12, "every term saturates");
    assert!((richness(25, 15, 5, 0.5) - 0.5).abs() < 1e-12);
    assert_eq!(gate(richness(14, 0, 0, 0.0)), Gate::Skip, "0.098");
    assert_eq!(gate(richness(15, 0, 0, 0.0)), Gate::EpisodesAndTraits, "0.105");
    assert_eq!(gate(0.2999), Gate::EpisodesAndTraits);
    assert_eq!(gate(0.3), Gate::All);
}

#[test]
fn episode_decay_counts_each_hour_once() {
    assert_eq!(episode_decay_hours(T0, None, T0 + H), None, "used within the hour");
    assert_eq!(episode_decay_hours(T0, None, T0 + 2 * H), Some(2.0), "first pass: since the access");
    assert_eq!(episode_decay_hours(T0, Some(T0 + 2 * H), T0 + 3 * H), Some(1.0), "then since the last pass");
    assert_eq!(episode_decay_hours(T0 + 3 * H, Some(T0), T0 + 5 * H), Some(2.0), "an access after the pass");
    // Passes every 30 minutes from 1.5 h to 24 h multiply out to exactly exp(−r·24).
    let (mut a, mut last) = (1.5, None);
    let mut now = T0 + 3 * H / 2;
    while now <= T0 + 24 * H {
        if let Some(h) = episode_decay_hours(T0, last, now) {
            a = decay_activation(a, h, 1.0);
        }
        last = Some(now);
        now += 1800;
    }
    assert!((a - 1.5 * (-0.05f64 * 24.0).exp()).abs() < 1e-9, "{a}");
    assert_eq!(decay_activation(1.0, 1000.0, 1.0), ACTIVATION_FLOOR);
}

#[test]
fn concept_and_trait_steps_and_floors() {
    assert!((decay_strength(2.0, 0.5, 1.0, 1.0) - (2.0 - 0.015)).abs() < 1e-12);
    assert_eq!(decay_strength(2.0, 1.0, 3.0, 10.0), 2.0, "full resistance: no decay");
    assert_eq!(decay_strength(0.21, 0.0, 1.0, 1.0), STRENGTH_FLOOR);
    // eff = base / log2(count + 1), ×1.5 inferred.
    assert!((0.5 - decay_confidence(0.5, 1, "general", false, 1.0, 1.0) - 0.02).abs() < 1e-12);
    assert!((0.5 - decay_confidence(0.5, 3, "general", false, 1.0, 1.0) - 0.01).abs() < 1e-12);
    assert!((0.5 - decay_confidence(0.5, 1, "general", true, 1.0, 1.0) - 0.03).abs() < 1e-12);
    assert!((0.5 - decay_confidence(0.5, 0, "core", false, 1.0, 2.0) - 0.02).abs() < 1e-12, "count 0 reads as 1");
    for (cat, base, floor) in [
        ("core", 0.010, 0.30),
        ("relationship", 0.010, 0.25),
        ("physical", 0.015, 0.20),
        ("preference", 0.020, 0.10),
        ("general", 0.020, 0.10),
        ("communication_style", 0.005, 0.20),
        ("micro_preference", 0.015, 0.15),
        ("behavioral_pattern", 0.005, 0.20),
        ("unknown", 0.020, 0.10),
    ] {
        assert_eq!(trait_params(cat), (base, floor), "{cat}");
        assert_eq!(decay_confidence(floor + 0.001, 1, cat, true, 3.0, 10.0), floor, "{cat} stops at its floor");
    }
    assert_eq!(decay_confidence(0.05, 1, "general", false, 1.0, 1.0), 0.05, "below the floor: left alone");
    assert_eq!(periods(None, T0), 1.0);
    assert_eq!(periods(Some(T0), T0 + 1800), 1.0);
    assert_eq!(periods(Some(T0), T0 + 900), 0.5, "a restart soon after a pass decays little");
    assert_eq!(periods(Some(T0), T0 + 365 * DAY), MAX_PERIODS);
    assert!(!due_for_deletion(None, T0));
    assert!(!due_for_deletion(Some(T0), T0 + 7 * DAY - 1));
    assert!(due_for_deletion(Some(T0), T0 + 7 * DAY));
}

fn seed_episodes(c: &rusqlite::Connection, n: usize, created: i64) {
    for _ in 0..n {
        Fixture(c).insert(
            "episodes",
            &[("gist", &"g"), ("created_at", &created), ("updated_at", &created), ("activation_score", &1.0)],
        );
    }
}

fn add_trait(c: &rusqlite::Connection, key: &str, confidence: f64) -> i64 {
    Fixture(c).insert(
        "user_traits",
        &[
            ("trait_key", &key),
            ("trait_value", &"v"),
            ("category", &"general"),
            ("confidence", &confidence),
            ("source", &"inferred"),
            ("created_at", &T0),
            ("updated_at", &T0),
        ],
    )
}

/// `expr` over every row of `table`, as a number.
fn one(c: &rusqlite::Connection, table: &str, expr: &str) -> f64 {
    Fixture(c).value(table, expr, "", [])
}

fn add_concept(c: &rusqlite::Connection, name: &str, strength: f64) {
    Fixture(c).insert(
        "semantic_concepts",
        &[("name", &name), ("strength", &strength), ("created_at", &T0), ("updated_at", &T0)],
    );
}

#[test]
fn sparse_memory_is_left_alone_but_ttl_rows_expire() {
    let mut c = open_in_memory().unwrap();
    add_trait(&c, "likes_tea", 0.5);
    seed_episodes(&c, 2, T0);
    let gist = NewGist { topic: "t", thread_id: None, gist_type: "fact", content: "x", confidence: 7.0 };
    crate::store::GistsRepo(&c).insert(&gist, T0, T0 + 60).unwrap();
    let r = run_decay_once(&mut c, T0 + 10 * H).unwrap();
    assert_eq!(r.gate, Some(Gate::Skip));
    assert_eq!((r.traits_decayed, r.episodes_decayed), (0, 0));
    assert_eq!(one(&c, "user_traits", "confidence"), 0.5);
    assert_eq!(r.expired, 1);
    let f = Fixture(&c);
    let (layer, reason): (String, String) =
        (f.value("memory_deletions", "layer", "", []), f.value("memory_deletions", "reason", "", []));
    assert_eq!((layer.as_str(), reason.as_str()), ("gist", "expired"));
}

#[test]
fn a_middling_memory_decays_episodes_and_traits_but_not_concepts() {
    let mut c = open_in_memory().unwrap();
    seed_episodes(&c, 15, T0);
    add_trait(&c, "likes_tea", 0.5);
    add_concept(&c, "tea", 2.0);
    let r = run_decay_once(&mut c, T0 + 2 * H).unwrap();
    assert_eq!(r.gate, Some(Gate::EpisodesAndTraits), "{r:?}");
    assert_eq!(r.episodes_decayed, 15);
    assert!((one(&c, "episodes", "MIN(activation_score)") - (-0.1f64).exp()).abs() < 1e-9);
    assert!((one(&c, "user_traits", "confidence") - 0.47).abs() < 1e-9, "0.5 − 0.02×1.5");
    assert_eq!(one(&c, "semantic_concepts", "strength"), 2.0);
    // The next pass half an hour later applies only that half hour.
    run_decay_once(&mut c, T0 + 2 * H + 1800).unwrap();
    assert!((one(&c, "episodes", "MIN(activation_score)") - (-0.125f64).exp()).abs() < 1e-9);
}

#[test]
fn traits_at_their_floor_for_a_week_are_deleted_and_recorded() {
    let mut c = open_in_memory().unwrap();
    seed_episodes(&c, 50, T0);
    for i in 0..30 {
        add_concept(&c, &format!("c{i}"), 3.0);
    }
    let fading = add_trait(&c, "likes_jazz", 0.11);
    let kept = add_trait(&c, "likes_tea", 0.9);
    let stated = add_trait(&c, "name", 0.11);
    Fixture(&c).set("user_traits", "source = 'explicit'", "id = ?1", [stated]);
    VectorRepo(&c).upsert(VecTable::Traits, fading, &vec![1.0 / (EMBEDDING_DIM as f32).sqrt(); EMBEDDING_DIM]).unwrap();
    Fixture(&c).insert(
        "uncertainties",
        &[
            ("id", &"u1"),
            ("memory_a_type", &"trait"),
            ("memory_a_id", &fading.to_string()),
            ("uncertainty_type", &"unverified"),
            ("severity", &"low"),
            ("detection_context", &"ingestion"),
            ("created_at", &T0),
        ],
    );
    let r = run_decay_once(&mut c, T0).unwrap();
    assert_eq!(r.gate, Some(Gate::All));
    let since: Option<i64> = Fixture(&c).value("user_traits", "at_floor_since", "id = ?1", [fading]);
    assert_eq!(since, Some(T0), "stamped when it reached the floor");
    assert_eq!(run_decay_once(&mut c, T0 + 7 * DAY - 1).unwrap().traits_deleted, 0);
    let r = run_decay_once(&mut c, T0 + 7 * DAY).unwrap();
    assert_eq!((r.traits_deleted, r.uncertainties_decayed), (1, 1));
    assert_eq!(r.forgotten_notice().as_deref(), Some("forgot 1 trait that had faded (kept in memory_deletions)"));
    let left: Vec<i64> = Fixture(&c).values("user_traits", "id", "", []);
    assert_eq!(left, [kept, stated], "the user's own unchallenged statement stays at its floor");
    let f = Fixture(&c);
    let (row_id, detail): (String, String) = (
        f.value("memory_deletions", "row_id", "layer = 'trait'", []),
        f.value("memory_deletions", "detail", "layer = 'trait'", []),
    );
    assert_eq!(row_id, fading.to_string());
    let snap: serde_json::Value = serde_json::from_str(&detail).unwrap();
    assert_eq!(snap["trait_key"], "likes_jazz");
    assert_eq!(VectorRepo(&c).count(VecTable::Traits).unwrap(), 0);
    let state: String = f.value("uncertainties", "state", "id = 'u1'", []);
    assert_eq!(state, "decayed");
    assert!(one(&c, "semantic_concepts", "MAX(strength)") < 3.0, "concepts decay at this richness");
}

#[test]
fn unreliable_concepts_at_the_floor_are_forgotten_reliable_ones_kept() {
    let mut c = open_in_memory().unwrap();
    seed_episodes(&c, 50, T0);
    for (i, rel) in [(1, "contradicted"), (2, "reliable")] {
        Fixture(&c).insert(
            "semantic_concepts",
            &[
                ("id", &i),
                ("name", &format!("c{i}")),
                ("strength", &0.2),
                ("reliability", &rel),
                ("at_floor_since", &T0),
                ("created_at", &T0),
                ("updated_at", &T0),
            ],
        );
        VectorRepo(&c)
            .upsert(VecTable::Concepts, i, &vec![1.0 / (EMBEDDING_DIM as f32).sqrt(); EMBEDDING_DIM])
            .unwrap();
    }
    for i in 3..40 {
        let f = Fixture(&c);
        f.insert(
            "semantic_concepts",
            &[("id", &i), ("name", &format!("c{i}")), ("created_at", &T0), ("updated_at", &T0)],
        );
    }
    Fixture(&c).insert(
        "semantic_relationships",
        &[("source_id", &1), ("target_id", &2), ("rel_type", &"related-to"), ("created_at", &0), ("updated_at", &0)],
    );
    let r = run_decay_once(&mut c, T0 + 7 * DAY).unwrap();
    assert_eq!((r.concepts_deleted, r.relationships_deleted), (1, 1), "{r:?}");
    let f = Fixture(&c);
    let deleted: Vec<i64> = f.values("semantic_concepts", "id", "deleted_at IS NOT NULL", []);
    assert_eq!(deleted, [1], "soft delete: the row stays with deleted_at");
    assert_eq!(VectorRepo(&c).count(VecTable::Concepts).unwrap(), 1);
    assert_eq!(f.count("semantic_relationships", "", []), 0);
    assert_eq!(f.count("memory_deletions", "layer IN ('concept', 'relationship')", []), 2);
}

#[test]
fn a_pass_is_due_an_interval_after_the_last_one() {
    assert_eq!(until_due(None, T0), Duration::ZERO, "never ran: due now");
    assert_eq!(until_due(Some(T0 - 600), T0), INTERVAL - Duration::from_secs(600));
    assert_eq!(until_due(Some(T0 - 7200), T0), Duration::ZERO);
    assert_eq!(until_due(Some(T0 + 60), T0), INTERVAL, "a clock that went back waits a full interval");
}
