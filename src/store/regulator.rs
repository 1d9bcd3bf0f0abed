//! `regulator_state`: one JSON document per user (docs/cognition.md §13.6). The store keeps the
//! text; the regulator owns its shape, so an older snapshot is read by the regulator's serde
//! defaults, not here.

use super::CachedSql;
use super::{StoreError, now_ts};
use rusqlite::{Connection, OptionalExtension, params};

pub struct RegulatorStateRepo<'c>(pub &'c Connection);

impl RegulatorStateRepo<'_> {
    pub fn load(&self, user_id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .0
            .row("SELECT state FROM regulator_state WHERE user_id = ?1", params![user_id], |r| r.get(0))
            .optional()?)
    }

    pub fn save(&self, user_id: &str, state: &str) -> Result<(), StoreError> {
        self.0.exec(
            "INSERT INTO regulator_state (user_id, state, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(user_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
            params![user_id, state, now_ts()],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_user_replaced_on_save() {
        let c = crate::store::open_in_memory().unwrap();
        let repo = RegulatorStateRepo(&c);
        assert_eq!(repo.load("local").unwrap(), None);
        repo.save("local", r#"{"a":1}"#).unwrap();
        repo.save("local", r#"{"a":2}"#).unwrap();
        repo.save("other", "{}").unwrap();
        assert_eq!(repo.load("local").unwrap().as_deref(), Some(r#"{"a":2}"#));
        let n: i64 = c.query_row("SELECT COUNT(*) FROM regulator_state", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 2);
    }
}
