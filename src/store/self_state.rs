//! What the self-model is made of (docs/cognition.md §4.8), read across the tables that hold
//! it in one pass: recent turns' fallbacks, how much durable memory there is, the unresolved
//! contradictions in it, and the last ACT loop's fatigue. A read model like `browse`: it owns
//! no table.

use super::{CachedSql, StoreError};
use rusqlite::{Connection, OptionalExtension, params};

/// Turns looked back on for failing model roles.
pub const FALLBACK_WINDOW_TURNS: usize = 10;
/// An ACT loop's fatigue counts for this long after it ran.
pub const FATIGUE_RECENT_S: i64 = 600;
/// Durable memories are counted up to this many: the self model only asks whether memory is
/// still nearly empty, and counting every episode of a large store took milliseconds a turn.
pub const DURABLE_COUNT_CAP: i64 = 64;

/// The self-model's inputs, as stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SelfReadings {
    /// The fallback names (comma-separated, `None` when none fired) of the latest turns,
    /// newest first, at most [`FALLBACK_WINDOW_TURNS`].
    pub recent_fallbacks: Vec<Option<String>>,
    /// Traits plus live episodes, counted up to [`DURABLE_COUNT_CAP`].
    pub durable_memories: i64,
    /// Everything the user has said, every thread; counted only while `durable_memories` is
    /// below [`DURABLE_COUNT_CAP`] (0 otherwise), the only case the self model reads it.
    pub user_messages: i64,
    /// Severities (`low` … `critical`) of the contradictions not yet resolved.
    pub open_contradictions: Vec<String>,
    /// The highest fatigue of the latest ACT loop, when it ran within [`FATIGUE_RECENT_S`].
    pub recent_fatigue: Option<f64>,
}

/// Read the self-model's inputs at `now`.
pub fn self_readings(c: &Connection, now: i64) -> Result<SelfReadings, StoreError> {
    let mut stmt =
        c.prepare_cached("SELECT fallback FROM routing_decisions ORDER BY created_at DESC, rowid DESC LIMIT ?1")?;
    let recent_fallbacks =
        stmt.query_map([FALLBACK_WINDOW_TURNS as i64], |r| r.get(0))?.collect::<Result<Vec<Option<String>>, _>>()?;
    let durable_memories: i64 = c
        .prepare_cached(
            "SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM user_traits LIMIT ?1))
              + (SELECT COUNT(*) FROM (SELECT 1 FROM episodes WHERE deleted_at IS NULL LIMIT ?1))",
        )?
        .query_row([DURABLE_COUNT_CAP], |r| r.get::<_, i64>(0))?
        .min(DURABLE_COUNT_CAP);
    let user_messages: i64 = if durable_memories < DURABLE_COUNT_CAP {
        c.prepare_cached("SELECT COUNT(*) FROM chat_history WHERE role = 'user'")?.query_row([], |r| r.get(0))?
    } else {
        0
    };
    let mut stmt = c.prepare_cached(
        "SELECT severity FROM uncertainties WHERE uncertainty_type = 'contradiction' AND state IN ('open', 'surfaced')",
    )?;
    let open_contradictions = stmt.query_map([], |r| r.get(0))?.collect::<Result<Vec<String>, _>>()?;
    let recent_fatigue: Option<f64> = c
        .row(
            "SELECT MAX(fatigue) FROM cortex_iterations
             WHERE exchange_id = (SELECT exchange_id FROM cortex_iterations WHERE created_at > ?1 AND exchange_id IS NOT NULL
                                  ORDER BY created_at DESC, id DESC LIMIT 1)",
            params![now - FATIGUE_RECENT_S],
            |r| r.get(0),
        )
        .optional()?
        .flatten();
    Ok(SelfReadings { recent_fallbacks, durable_memories, user_messages, open_contradictions, recent_fatigue })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_store_reads_cold_and_calm() {
        let c = crate::store::open_in_memory().unwrap();
        let r = self_readings(&c, 1_000).unwrap();
        assert_eq!(r, SelfReadings::default());
    }

    #[test]
    fn durable_memories_are_counted_up_to_the_cap_and_messages_only_below_it() {
        let c = crate::store::open_in_memory().unwrap();
        let add_traits = |from: i64, n: i64| {
            for i in from..from + n {
                c.execute(
                    "INSERT INTO user_traits (trait_key, trait_value, category, confidence, source, created_at, updated_at)
                     VALUES (?1, 'v', 'general', 0.5, 'inferred', 0, 0)",
                    [format!("k{i}")],
                )
                .unwrap();
            }
        };
        crate::store::ChatRepo(&c).append("t", "x1", "user", "hello", None, None).unwrap();
        add_traits(0, 3);
        let r = self_readings(&c, 1_000).unwrap();
        assert_eq!((r.durable_memories, r.user_messages), (3, 1));
        add_traits(3, DURABLE_COUNT_CAP + 10);
        let r = self_readings(&c, 1_000).unwrap();
        assert_eq!((r.durable_memories, r.user_messages), (DURABLE_COUNT_CAP, 0));
    }
}
