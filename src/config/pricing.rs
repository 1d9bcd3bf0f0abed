//! `[pricing."provider/model"]`: what a model's tokens cost, so the session's spend can be
//! shown and totalled. Models without an entry (the built-in ones, a local Ollama) are free
//! as far as this table knows.

use super::{ConfigError, Location, Weight};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::Spanned;

/// US dollars per million tokens, one rate for the prompt and one for the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Price {
    pub input_per_mtok: Weight,
    pub output_per_mtok: Weight,
}

impl Price {
    /// The cost in dollars of one call.
    pub fn of(&self, tokens_in: u64, tokens_out: u64) -> f64 {
        (tokens_in as f64 * self.input_per_mtok.0 + tokens_out as f64 * self.output_per_mtok.0) / 1e6
    }
}

/// The resolved table, keyed by `provider/model` exactly as `[models]` names them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Pricing(pub BTreeMap<String, Price>);

impl Pricing {
    pub fn get(&self, provider: &str, model: &str) -> Option<&Price> {
        self.0.get(&format!("{provider}/{model}"))
    }

    /// The cost of a call, `None` when the model has no price.
    pub fn cost(&self, provider: &str, model: &str, tokens_in: u64, tokens_out: u64) -> Option<f64> {
        self.get(provider, model).map(|p| p.of(tokens_in, tokens_out))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PriceLayer {
    input_per_mtok: f64,
    output_per_mtok: f64,
}

/// Merge one file's `[pricing]` over the table so far: a later file's entry replaces the
/// earlier one whole.
pub(super) fn merge(
    table: &mut Pricing,
    layer: &BTreeMap<String, Spanned<PriceLayer>>,
    at: impl Fn(&Spanned<PriceLayer>) -> Location,
) -> Result<(), ConfigError> {
    for (key, v) in layer {
        let p = v.get_ref();
        let bad = |message: String| ConfigError::Invalid { at: at(v), message };
        if key.split_once('/').is_none_or(|(prov, model)| prov.is_empty() || model.is_empty()) {
            return Err(bad(format!("[pricing.\"{key}\"]: name the model as \"provider/model\"")));
        }
        for (name, rate) in [("input_per_mtok", p.input_per_mtok), ("output_per_mtok", p.output_per_mtok)] {
            if !rate.is_finite() || rate < 0.0 {
                return Err(bad(format!("[pricing.\"{key}\"] {name} = {rate}: a price is a number of dollars ≥ 0")));
            }
        }
        table.0.insert(
            key.clone(),
            Price { input_per_mtok: Weight(p.input_per_mtok), output_per_mtok: Weight(p.output_per_mtok) },
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, ConfigError};
    use std::path::Path;

    fn load(text: &str) -> Result<Config, ConfigError> {
        Config::from_user_toml(Path::new("/c.toml"), text)
    }

    #[test]
    fn prices_are_read_per_provider_and_model() {
        let c = load("[pricing.\"openai/gpt-4o\"]\ninput_per_mtok = 2.5\noutput_per_mtok = 10\n").unwrap();
        let cost = c.pricing.cost("openai", "gpt-4o", 2_000, 1_000).unwrap();
        assert!((cost - 0.015).abs() < 1e-12, "{cost}");
        assert_eq!(c.pricing.cost("openai", "gpt-4o-mini", 1, 1), None);
        assert!(Config::defaults().pricing.0.is_empty(), "no model is priced by default");
    }

    #[test]
    fn a_bad_price_names_the_file_and_line() {
        let err = load("[llm]\n\n[pricing.\"openai/x\"]\ninput_per_mtok = -1\noutput_per_mtok = 1\n").unwrap_err();
        assert!(err.to_string().starts_with("/c.toml:3"), "{err}");
        let err = load("[pricing.gpt]\ninput_per_mtok = 1\noutput_per_mtok = 1\n").unwrap_err();
        assert!(err.to_string().contains("provider/model"), "{err}");
        let err = load("[pricing.\"a/b\"]\ninput_per_mtok = 1\n").unwrap_err();
        assert!(err.to_string().contains("output_per_mtok"), "{err}");
    }
}
