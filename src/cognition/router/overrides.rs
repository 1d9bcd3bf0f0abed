//! `[router.weights]` from the config, merged over the weights stored in the database.
//!
//! The merge is stored as a new `router_weights` version (author `config`) rather than applied
//! in memory, so every routing audit row keeps naming the exact weights it was decided with.
//! A config version is always merged over the newest version that did not come from the config,
//! so taking an override out of the file takes it out of routing too.

use super::{DEFAULT_WEIGHTS_VERSION, RouterWeights};
use crate::store::{RouterWeightsRepo, StoreError, WeightsVersion, now_ts};
use rusqlite::Connection;
use std::collections::BTreeMap;

/// The author of versions written from the config.
pub const CONFIG_AUTHOR: &str = "config";

#[derive(Debug, thiserror::Error)]
pub enum OverrideError {
    #[error("cannot read or store router weights")]
    Store(#[from] StoreError),
    #[error("stored router weights v{version} are not readable")]
    Stored { version: u32, source: serde_json::Error },
    #[error("[router.weights] in the config gives unusable weights: {0}")]
    Invalid(String),
}

/// Store the built-in weights as the first version of a fresh database and return them:
/// the engine's start and the config merge both begin from this row.
pub fn store_defaults(c: &Connection) -> Result<RouterWeights, StoreError> {
    let w = RouterWeights::default();
    let text = serde_json::to_string(&w)?;
    RouterWeightsRepo(c).insert(DEFAULT_WEIGHTS_VERSION, &text, "default", "built-in calibrated weights", now_ts())?;
    Ok(w)
}

/// `base` with each `"group.field"` of `overrides` set. Pure; names were checked when the
/// config was read, so an unknown one here is a caller's bug and is reported, not ignored.
pub fn merged(base: &RouterWeights, overrides: &BTreeMap<String, f64>) -> Result<RouterWeights, String> {
    let mut w = *base;
    for (name, value) in overrides {
        *w.slot(name).ok_or_else(|| format!("unknown router weight `{name}`"))? = *value;
    }
    w.validate()?;
    Ok(w)
}

/// One line for the version's `reason` column.
fn reason(overrides: &BTreeMap<String, f64>) -> String {
    if overrides.is_empty() {
        return "config [router.weights] removed".into();
    }
    let items: Vec<String> = overrides.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!("config [router.weights]: {}", items.join(", "))
}

/// Bring the newest stored version in line with the config's overrides, storing a new version
/// when it differs. Returns the version written, if one was. Seeds the built-in defaults first
/// on a fresh database, as the engine would, so the history starts where it always does.
pub fn apply(c: &Connection, overrides: &BTreeMap<String, f64>) -> Result<Option<u32>, OverrideError> {
    let read = |version: u32, text: String| {
        serde_json::from_str::<RouterWeights>(&text).map_err(|source| OverrideError::Stored { version, source })
    };
    let repo = RouterWeightsRepo(c);
    let Some(WeightsVersion { version: latest_version, weights: latest_text, author: latest_author }) =
        repo.latest()?
    else {
        if overrides.is_empty() {
            return Ok(None);
        }
        store_defaults(c)?;
        return apply(c, overrides);
    };
    if latest_author != CONFIG_AUTHOR && overrides.is_empty() {
        return Ok(None);
    }
    let base: RouterWeights = match repo.latest_not_by(CONFIG_AUTHOR)? {
        Some(v) => read(v.version, v.weights)?,
        None => RouterWeights::default(),
    };
    let target = merged(&base, overrides).map_err(OverrideError::Invalid)?;
    let current = read(latest_version, latest_text)?;
    let mut target_versioned = target;
    target_versioned.version = current.version;
    if target_versioned == current {
        return Ok(None);
    }
    let version = latest_version + 1;
    let mut stored = target;
    stored.version = version;
    let text = serde_json::to_string(&stored).map_err(|source| OverrideError::Stored { version, source })?;
    repo.insert(version, &text, CONFIG_AUTHOR, &reason(overrides), now_ts())?;
    Ok(Some(version))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn newest(c: &Connection) -> (u32, RouterWeights, String) {
        let v = RouterWeightsRepo(c).latest().unwrap().unwrap();
        (v.version, serde_json::from_str(&v.weights).unwrap(), v.author)
    }

    #[test]
    fn overrides_are_versioned_and_removable() {
        let c = crate::store::open_in_memory().unwrap();
        assert_eq!(apply(&c, &BTreeMap::new()).unwrap(), None, "nothing to do on a fresh database");
        let one = BTreeMap::from([("acknowledge.greeting".to_string(), 0.05)]);
        assert_eq!(apply(&c, &one).unwrap(), Some(3), "v2 seeded, v3 from the config");
        let (v, w, author) = newest(&c);
        assert_eq!((v, w.acknowledge.greeting, author.as_str()), (3, 0.05, CONFIG_AUTHOR));
        assert_eq!(w.respond, RouterWeights::default().respond, "the rest is the stored weights");
        assert_eq!(apply(&c, &one).unwrap(), None, "unchanged config: no new version");
        assert_eq!(apply(&c, &BTreeMap::new()).unwrap(), Some(4), "removed from the file");
        let (_, w, _) = newest(&c);
        assert_eq!(w.acknowledge, RouterWeights::default().acknowledge);
        assert_eq!(apply(&c, &BTreeMap::new()).unwrap(), None);
    }

    #[test]
    fn an_inconsistent_merge_is_refused() {
        let c = crate::store::open_in_memory().unwrap();
        let bad = BTreeMap::from([("tiebreaker.min_margin".to_string(), 0.29)]);
        assert!(matches!(apply(&c, &bad), Err(OverrideError::Invalid(_))), "min_margin above base_margin");
        assert!(merged(&RouterWeights::default(), &BTreeMap::from([("nope.x".into(), 1.0)])).is_err());
    }
}
