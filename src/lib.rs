//! chalie-tui: a terminal personal assistant whose mind you can watch.
//!
//! Start with `docs/architecture.md`, then [`runtime`] (how the pieces are
//! wired), [`events`] (the one stream everything reports to) and [`store`].

pub mod background;
pub mod cli;
pub mod cognition;
pub mod commands;
pub mod config;
pub mod events;
pub mod files;
#[cfg(test)]
mod layering;
pub mod llm;
pub mod logging;
pub mod mcp;
pub mod memory;
pub mod runtime;
pub mod session;
pub mod store;
pub mod text;
pub mod tui;
pub mod vocab;
pub mod when;

/// An error and its causes on one line ("cannot read x: permission denied"), for
/// notices and logs. Library errors keep causes out of their own message (the Rust
/// convention), so anything shown to a person goes through here or `{:#}` of anyhow.
pub fn describe(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}

/// A serde enum's wire name (`"respond"`, `"ACT"`, …), for text columns and messages.
pub fn wire_name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// splitmix64: a tiny deterministic generator for sampling and synthetic data, so tests,
/// benches and tools need no random-number dependency.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the modulo bias is negligible for the small n of sampling).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
