use super::super::super::fixtures::Fixture;
use super::super::super::{GraphLogRepo, open_in_memory};
use super::ConceptsRepo;
use rusqlite::Connection;

/// `concept_traces` as (id, trace, potential), by id.
fn traces(c: &Connection) -> Vec<(i64, f64, f64)> {
    let mut stmt = c.prepare("SELECT id, trace, potential FROM concept_traces ORDER BY id").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().collect::<Result<_, _>>().unwrap()
}

fn fired(c: &Connection, id: i64) -> (i64, Option<i64>) {
    c.query_row(
        "SELECT COALESCE(f.fired_count, 0), f.last_fired_at
         FROM semantic_concepts c LEFT JOIN concept_firings f ON f.id = c.id WHERE c.id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

/// Migration 0021: the activation state lives in a narrow table holding only the concepts
/// with a trace or a potential; it decays, clears and empties as the wide rows did, names no
/// concept that is not there, moves no graph version and goes with its concept.
#[test]
fn an_activation_s_state_is_kept_for_the_charged_concepts_only() {
    let c = open_in_memory().unwrap();
    let f = Fixture(&c);
    for (id, name) in [(1, "coffee"), (2, "morning"), (3, "decaf"), (4, "tea")] {
        f.concept(id, name);
    }
    let repo = ConceptsRepo(&c);
    let mark = GraphLogRepo(&c).mark().unwrap();

    // 99 and 98 are no concept: skipped, as the UPDATEs of the wide row skipped them.
    repo.save_activation(0.5, &[(1, 1.0), (2, 1.5e-4), (99, 1.0)], &[(3, 0.7), (98, 0.3)], 10).unwrap();
    assert_eq!(traces(&c), [(1, 1.0, 0.0), (2, 1.5e-4, 0.0), (3, 0.0, 0.7)]);
    assert_eq!((fired(&c, 1), fired(&c, 2), fired(&c, 3)), ((1, Some(10)), (1, Some(10)), (0, None)));

    // The next activation halves the traces (a tiny one to 0) and clears the potentials; a row
    // left at 0 and 0 goes.
    repo.save_activation(0.5, &[(4, 2.0)], &[], 11).unwrap();
    assert_eq!(traces(&c), [(1, 0.5, 0.0), (4, 2.0, 0.0)]);
    let nodes = repo.graph_nodes().unwrap();
    assert_eq!(
        nodes.iter().map(|n| (n.id, n.trace, n.potential)).collect::<Vec<_>>(),
        [(1, 0.5, 0.0), (2, 0.0, 0.0), (3, 0.0, 0.0), (4, 2.0, 0.0)]
    );
    assert_eq!(GraphLogRepo(&c).node(4).unwrap().map(|(n, live)| (n.trace, live)), Some((2.0, true)));

    // A node firing again takes its new trace, 0 as well (2 keeps a row for its potential).
    repo.save_activation(1.0, &[(1, 3.0), (2, 0.0)], &[(2, 0.25)], 12).unwrap();
    assert_eq!(traces(&c), [(1, 3.0, 0.0), (2, 0.0, 0.25), (4, 2.0, 0.0)]);
    assert_eq!(GraphLogRepo(&c).mark().unwrap(), mark, "a trace or potential is no change to the graph");

    // Migration 0025: the counts and times are kept in their own narrow table, for the
    // concepts that fired only.
    assert_eq!([1, 2, 3, 4].map(|id| fired(&c, id)), [(2, Some(12)), (2, Some(12)), (0, None), (1, Some(11))]);
    assert_eq!(firing_ids(&c), [1, 2, 4]);

    f.remove("semantic_concepts", "id = ?1", [4]);
    assert_eq!(traces(&c), [(1, 3.0, 0.0), (2, 0.0, 0.25)], "the state goes with its concept");
    assert_eq!(firing_ids(&c), [1, 2], "the firings go with their concept");
}

/// The ids with a `concept_firings` row.
fn firing_ids(c: &Connection) -> Vec<i64> {
    let mut stmt = c.prepare("SELECT id FROM concept_firings ORDER BY id").unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
}

/// A grown node forgotten and grown again from the same text is probationary and unfired
/// again; a node grown under another key keeps its count.
#[test]
fn a_node_grown_again_starts_unfired() {
    let c = open_in_memory().unwrap();
    let repo = ConceptsRepo(&c);
    let id = repo.insert_grown("k:sourdough", "sourdough", 0.5, 10).unwrap();
    let other = repo.insert_grown("k:starter", "starter", 0.5, 10).unwrap();
    repo.save_activation(1.0, &[(id, 1.0), (other, 1.0)], &[], 11).unwrap();
    repo.save_activation(1.0, &[(id, 1.0), (other, 1.0)], &[], 12).unwrap();
    let counts = |repo: &ConceptsRepo| {
        let mut p: Vec<(i64, i64)> = repo.probationers().unwrap().iter().map(|p| (p.id, p.fired_count)).collect();
        p.sort_unstable();
        p
    };
    assert_eq!(counts(&repo), [(id, 2), (other, 2)]);
    Fixture(&c).set("semantic_concepts", "deleted_at = 13", "id = ?1", [id]);
    assert_eq!(repo.insert_grown("k:sourdough", "sourdough", 0.5, 14).unwrap(), id, "the row is reused");
    assert_eq!(counts(&repo), [(id, 0), (other, 2)]);
    assert_eq!(fired(&c, id), (0, None));
}
