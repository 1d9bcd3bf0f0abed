//! `[regulator]`: the thresholds of the regulator's warnings (docs/cognition.md §13.2, §13.5).

use super::{ConfigError, Location, Weight};
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// The resolved `[regulator]` section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RegulatorConfig {
    /// Keyword drift (unanchored share of the reply's keywords) at or above which a reply is a
    /// drift candidate, in [0, 1].
    pub drift_threshold: Weight,
    /// A candidate warns only when the request/reply embedding cosine is below this, in
    /// [-1, 1]; 1 warns on keyword drift alone, as the seed does.
    pub similarity_threshold: Weight,
    /// A message on the last reply's cluster this soon after it counts as a correction of it;
    /// 0 turns the implicit window off.
    pub implicit_window_ms: u64,
}

impl Default for RegulatorConfig {
    /// The shipped defaults (assets/default-config.toml), for code that builds settings by hand.
    fn default() -> Self {
        RegulatorConfig { drift_threshold: Weight(0.5), similarity_threshold: Weight(0.125), implicit_window_ms: 0 }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RegulatorLayer {
    drift_threshold: Option<Spanned<f64>>,
    similarity_threshold: Option<Spanned<f64>>,
    implicit_window_ms: Option<u64>,
}

/// The merge of every file's section so far, each value with where it was set.
#[derive(Default)]
pub(super) struct Merged {
    drift: Option<(f64, Location)>,
    similarity: Option<(f64, Location)>,
    window: Option<u64>,
}

impl Merged {
    pub(super) fn over(&mut self, layer: &RegulatorLayer, at: impl Fn(&Spanned<f64>) -> Location) {
        if let Some(v) = &layer.drift_threshold {
            self.drift = Some((*v.get_ref(), at(v)));
        }
        if let Some(v) = &layer.similarity_threshold {
            self.similarity = Some((*v.get_ref(), at(v)));
        }
        self.window = layer.implicit_window_ms.or(self.window);
    }

    pub(super) fn resolve(self, defaults: &str) -> Result<RegulatorConfig, ConfigError> {
        let missing = |key: &str| ConfigError::Invalid {
            at: Location { file: defaults.into(), line: 0 },
            message: format!("missing [regulator] {key}"),
        };
        let check = |v: Option<(f64, Location)>, key: &str, lo: f64| -> Result<Weight, ConfigError> {
            let (value, at) = v.ok_or_else(|| missing(key))?;
            if !(lo..=1.0).contains(&value) {
                return Err(ConfigError::Invalid { at, message: format!("[regulator] {key} must be in [{lo}, 1]") });
            }
            Ok(Weight(value))
        };
        Ok(RegulatorConfig {
            drift_threshold: check(self.drift, "drift_threshold", 0.0)?,
            similarity_threshold: check(self.similarity, "similarity_threshold", -1.0)?,
            implicit_window_ms: self.window.ok_or_else(|| missing("implicit_window_ms"))?,
        })
    }
}
