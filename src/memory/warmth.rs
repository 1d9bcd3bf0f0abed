//! Context warmth: how much the assistant has to go on in a thread (working memory, real
//! gists, world state), 0–1. Context assembly reads it for the router; the decay pass reads it
//! for its richness gate, so it lives here, below both (docs/cognition.md §4.1).

/// Working-memory entries at which the warmth term saturates.
pub const WARMTH_WM_FULL: f64 = 4.0;
/// Real gists at which the warmth term saturates.
pub const WARMTH_GISTS_FULL: f64 = 5.0;

/// `warmth = (min(wm_len/4, 1) + min(real_gists/5, 1) + [world_state non-empty]) / 3` (docs/cognition.md §4.1).
/// Cold-start gists must not be counted in `real_gists`.
pub fn warmth(wm_len: usize, real_gists: usize, world_state_present: bool) -> f64 {
    let wm = (wm_len as f64 / WARMTH_WM_FULL).min(1.0);
    let gists = (real_gists as f64 / WARMTH_GISTS_FULL).min(1.0);
    let world = if world_state_present { 1.0 } else { 0.0 };
    (wm + gists + world) / 3.0
}
