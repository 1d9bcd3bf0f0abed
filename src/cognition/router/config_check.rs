//! What the config may say about the router: `[router.weights]` names weights the router has,
//! with finite values inside the regulator's bounds. The config reads the entries with their
//! file and line; the router, which knows the names, checks them (config sits below it).

use super::RouterWeights;
use crate::config::{Config, ConfigError};

/// Every `[router.weights]` entry, checked; the error names the file and line of the first bad one.
pub fn check_config(config: &Config) -> Result<(), ConfigError> {
    for (name, weight) in &config.router_weights {
        check_weight(name, weight.value.0)
            .map_err(|message| ConfigError::Invalid { at: weight.at.clone(), message })?;
    }
    Ok(())
}

/// A `[router.weights]` entry must name a weight the router has, be finite, and stay inside
/// the bounds the routing regulator keeps (a silent clamp would hide the typo or the mistake).
fn check_weight(name: &str, value: f64) -> Result<(), String> {
    if RouterWeights::default().get(name).is_none() {
        let group = name.split('.').next().unwrap_or_default();
        let siblings: Vec<&str> = RouterWeights::PARAMS
            .iter()
            .filter_map(|p| p.strip_prefix(group).and_then(|f| f.strip_prefix('.')))
            .collect();
        return Err(if siblings.is_empty() {
            let mut groups: Vec<&str> = RouterWeights::PARAMS.iter().filter_map(|p| p.split('.').next()).collect();
            groups.dedup();
            format!("router.weights.{name}: unknown router weight group `{group}` (known: {})", groups.join(", "))
        } else {
            format!("router.weights.{name}: unknown router weight (`{group}` has: {})", siblings.join(", "))
        });
    }
    if !value.is_finite() {
        return Err(format!("router.weights.{name} must be a finite number"));
    }
    if let Some((lo, hi)) = RouterWeights::bound(name)
        && !(lo..=hi).contains(&value)
    {
        return Err(format!("router.weights.{name} = {value} is outside its bounds {lo}..={hi}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn user(text: &str) -> Result<Config, ConfigError> {
        Config::from_user_toml(Path::new("/home/u/.config/chalie-tui/config.toml"), text)
            .and_then(|c| c.checked(&[check_config]))
    }

    #[test]
    fn unknown_or_out_of_bounds_router_weights_name_file_and_line() {
        let err = user("[router.weights]\nrespond.bsae = 0.4\n").unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("/home/u/.config/chalie-tui/config.toml:2: "), "{msg}");
        assert!(msg.contains("respond.bsae") && msg.contains("warmth_boost"), "lists the group's weights: {msg}");
        let msg = user("[router.weights]\nrespnod.base = 0.4\n").unwrap_err().to_string();
        assert!(msg.contains("unknown router weight group `respnod`") && msg.contains("clarify"), "{msg}");
        let msg = user("[router.weights]\n\nrespond.base = 0.9\n").unwrap_err().to_string();
        assert!(msg.contains(":3: ") && msg.contains("outside its bounds 0.3..=0.7"), "{msg}");
        let msg = user("[router.weights]\nrespond.base = nan\n").unwrap_err().to_string();
        assert!(msg.contains("finite"), "{msg}");
        // Not a table of numbers, and unknown keys beside `weights`: the parser's error, with the line.
        assert!(matches!(user("[router.weights]\nrespond = 1\n"), Err(ConfigError::Parse { line: 2, .. })));
        assert!(matches!(user("[router]\nweight = {}\n"), Err(ConfigError::Parse { line: 2, .. })));
    }
}
