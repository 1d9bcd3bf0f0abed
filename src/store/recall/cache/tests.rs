use super::*;
use crate::SplitMix64;
use crate::store::{KeywordLayer, RecallRepo, open, open_in_memory};

const WORDS_USED: [&str; 8] = ["lisbon", "trip", "trips", "sister", "oat", "milk", "w17", "review"];

fn words() -> Vec<String> {
    WORDS_USED.iter().map(|w| w.to_string()).collect()
}

fn text(rng: &mut SplitMix64) -> String {
    let pool = ["Lisbon", "trip", "trips", "sister's", "oat-milk", "W17", "review.", "the", "a", "Trip?"];
    (0..1 + rng.below(4)).map(|_| pool[rng.below(pool.len())]).collect::<Vec<_>>().join(" ")
}

fn add_episode(c: &Connection, rng: &mut SplitMix64) {
    c.execute(
        "INSERT INTO episodes (gist, action, created_at, updated_at) VALUES (?1, ?2, 1, 1)",
        params![text(rng), if rng.below(3) == 0 { Some(text(rng)) } else { None }],
    )
    .unwrap();
}

fn add_concept(c: &Connection, rng: &mut SplitMix64, n: usize) {
    c.execute(
        "INSERT INTO semantic_concepts (name, definition, probation, created_at, updated_at) VALUES (?1, ?2, ?3, 1, 1)",
        params![format!("{} {n}", text(rng)), text(rng), i64::from(rng.below(4) == 0)],
    )
    .unwrap();
}

/// What the copies say against what the indexes say, word by word, in the connection's view.
fn assert_agree(c: &Connection, cap: i64, at: &str) {
    let repo = RecallRepo(c);
    let ws = words();
    let counted = repo.fts_rows_capped_all(&ws, cap).unwrap();
    let found = repo.keyword_all(KeywordLayer::Concepts, &ws, 5).unwrap();
    for (i, w) in ws.iter().enumerate() {
        assert_eq!(counted[i], repo.fts_rows_capped(w, cap).unwrap(), "count of {w} {at}");
        let direct = repo.keyword(KeywordLayer::Concepts, w, 5, true).unwrap();
        assert_eq!(found[i], direct, "concepts holding {w} {at}");
    }
}

#[test]
fn the_copies_agree_with_the_indexes_through_every_kind_of_write() {
    let c = open_in_memory().unwrap();
    let mut rng = SplitMix64(22);
    for n in 0..60 {
        add_episode(&c, &mut rng);
        add_concept(&c, &mut rng, n);
    }
    // Words reach a cap of 40 part way through, so counts below it and at it are both followed.
    let cap = 40;
    assert_agree(&c, cap, "at first");
    for step in 0..400 {
        let n = 1_000 + step;
        let what = rng.below(12);
        match what {
            0..=3 => add_episode(&c, &mut rng),
            4..=5 => add_concept(&c, &mut rng, n),
            6 => {
                c.execute("DELETE FROM episodes WHERE id = (SELECT id FROM episodes ORDER BY random() LIMIT 1)", [])
                    .unwrap();
            }
            7 => {
                c.execute(
                    "UPDATE episodes SET gist = ?1 WHERE id = (SELECT id FROM episodes ORDER BY random() LIMIT 1)",
                    [text(&mut rng)],
                )
                .unwrap();
            }
            8 => {
                let column =
                    ["deleted_at = 5", "probation = 0", "probation = 1", "definition = 'a lisbon trip'"][rng.below(4)];
                c.execute(
                    &format!(
                        "UPDATE semantic_concepts SET {column}
                         WHERE id = (SELECT id FROM semantic_concepts ORDER BY random() LIMIT 1)"
                    ),
                    [],
                )
                .unwrap();
            }
            9 => {
                // An insert below the largest id, into a gap a delete left.
                c.execute("DELETE FROM episodes WHERE id = (SELECT MIN(id) + 1 FROM episodes)", []).unwrap();
                assert_agree(&c, cap, &format!("after step {step}'s delete"));
                c.execute(
                    "INSERT INTO episodes (id, gist, created_at, updated_at)
                     VALUES ((SELECT MIN(id) + 1 FROM episodes), 'lisbon trip', 1, 1)",
                    [],
                )
                .unwrap();
            }
            10 => {
                // Writes seen inside their transaction, then rolled back.
                c.execute_batch("BEGIN").unwrap();
                add_episode(&c, &mut rng);
                add_concept(&c, &mut rng, n);
                assert_agree(&c, cap, &format!("inside step {step}'s transaction"));
                c.execute_batch("ROLLBACK").unwrap();
            }
            _ => {
                c.execute("DELETE FROM semantic_concepts WHERE id = (SELECT MAX(id) FROM semantic_concepts)", [])
                    .unwrap();
            }
        }
        assert_agree(&c, cap, &format!("after step {step} ({what})"));
    }
}

#[test]
fn a_word_asked_again_is_answered_by_the_copy() {
    let c = open_in_memory().unwrap();
    let mut rng = SplitMix64(5);
    for n in 0..20 {
        add_episode(&c, &mut rng);
        add_concept(&c, &mut rng, n);
    }
    c.execute("INSERT INTO episodes (gist, created_at, updated_at) VALUES ('lisbon', 1, 1)", []).unwrap();
    c.execute(
        "INSERT INTO semantic_concepts (name, definition, created_at, updated_at) VALUES ('lisbon', 'a city', 1, 1)",
        [],
    )
    .unwrap();
    let repo = RecallRepo(&c);
    let ws = vec!["lisbon".to_string()];
    let counted = repo.fts_rows_capped_all(&ws, 100).unwrap();
    let found = repo.keyword_all(KeywordLayer::Concepts, &ws, 5).unwrap();
    assert!(counted[0] > 0 && !found[0].is_empty());
    // Emptied behind the triggers' back, the indexes now find nothing; the copies still answer.
    c.execute_batch(
        "INSERT INTO episodes_fts(episodes_fts) VALUES ('delete-all');
         INSERT INTO concepts_trgm(concepts_trgm) VALUES ('delete-all');",
    )
    .unwrap();
    assert_eq!(repo.fts_rows_capped("lisbon", 100).unwrap(), 0);
    assert!(repo.keyword(KeywordLayer::Concepts, "lisbon", 5, true).unwrap().is_empty());
    assert_eq!(repo.fts_rows_capped_all(&ws, 100).unwrap(), counted);
    assert_eq!(repo.keyword_all(KeywordLayer::Concepts, &ws, 5).unwrap(), found);
}

#[test]
fn a_view_older_than_the_copy_reads_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.db");
    let (a, b) = (open(&path).unwrap(), open(&path).unwrap());
    let mut rng = SplitMix64(9);
    for n in 0..30 {
        add_episode(&a, &mut rng);
        add_concept(&a, &mut rng, n);
    }
    assert_agree(&a, 7, "at first");
    // `a` holds a snapshot while `b` appends and brings the copies forward past it.
    a.execute_batch("BEGIN").unwrap();
    assert_agree(&a, 7, "in the old snapshot");
    for n in 0..10 {
        add_episode(&b, &mut rng);
        b.execute(
            "INSERT INTO semantic_concepts (name, definition, created_at, updated_at) VALUES (?1, 'lisbon trip', 1, 1)",
            [format!("new {n}")],
        )
        .unwrap();
    }
    assert_agree(&b, 7, "in the new state");
    assert_agree(&a, 7, "in the old snapshot, after");
    a.execute_batch("COMMIT").unwrap();
    assert_agree(&a, 7, "in the new state, from the old connection");
}

/// The tokens FTS5's default tokenizer makes of `text`, from the index itself.
fn fts5_tokens(text: &str) -> HashSet<String> {
    let c = Connection::open_in_memory().unwrap();
    c.execute_batch("CREATE VIRTUAL TABLE t USING fts5(x); CREATE VIRTUAL TABLE v USING fts5vocab(t, row);").unwrap();
    c.execute("INSERT INTO t (x) VALUES (?1)", [text]).unwrap();
    let mut s = c.prepare("SELECT term FROM v").unwrap();
    s.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

#[test]
fn words_are_read_as_fts5_reads_them_or_not_at_all() {
    for text in [
        "User's trip to Lisbon, in OCTOBER (w17)!",
        "oat-milk_swap: 3.5 cups \u{2014} \u{201c}quoted\u{201d} it\u{2019}s \u{1f600}\u{fe0f} done\u{a0}now",
        "tabs\tand\nnew lines; e-mail@x.org #tag",
        "",
    ] {
        let mut ours = HashSet::new();
        assert!(ascii_tokens(text, &mut ours), "{text}");
        assert_eq!(ours, fts5_tokens(text), "{text}");
    }
    // Letters FTS5 folds (diacritics, other scripts) and marks it keeps in a token: not read.
    for text in ["caf\u{e9} trip", "cafe\u{301}", "\u{41f}\u{440}\u{438}\u{432}\u{435}\u{442}", "x\u{e000}y", "\u{661}"]
    {
        assert!(!ascii_tokens(text, &mut HashSet::new()), "{text}");
    }
    assert!(followed_word("w17") && !followed_word("Trip") && !followed_word("don't") && !followed_word(""));
    assert!(like_word("don't") && !like_word("50%") && !like_word("a_b") && !like_word("caf\u{e9}"));
}
