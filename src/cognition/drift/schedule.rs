//! When cycles run (docs/cognition.md §14.1) and when the user must not be spoken to.

use crate::SplitMix64;

/// Probability that a wait is a long gap instead of the usual jitter.
pub const LONG_GAP_P: f64 = 0.1;
pub const JITTER: (f64, f64) = (0.7, 1.3);
pub const LONG_GAP: (f64, f64) = (1.8, 2.5);

fn uniform(rng: &mut SplitMix64, (lo, hi): (f64, f64)) -> f64 {
    lo + (hi - lo) * rng.next_f64()
}

/// The wait before the next cycle: `interval × U(0.7, 1.3)`, or with probability 0.1 a long
/// gap `interval × U(1.8, 2.5)`.
pub fn next_wait_s(interval_s: u64, rng: &mut SplitMix64) -> u64 {
    let f = if rng.next_f64() < LONG_GAP_P { uniform(rng, LONG_GAP) } else { uniform(rng, JITTER) };
    (interval_s as f64 * f).round().max(1.0) as u64
}

/// The plain jitter, `interval × U(0.7, 1.3)` without the long gaps: the task worker's wait
/// (docs/cognition.md §17.3).
pub fn jittered_s(interval_s: u64, rng: &mut SplitMix64) -> u64 {
    (interval_s as f64 * uniform(rng, JITTER)).round().max(1.0) as u64
}

/// Whether local `hour` (0–23) is inside quiet hours `[start, end)`, which may wrap midnight
/// (23 → 8). Equal bounds mean no quiet hours.
pub fn quiet_hour(hour: u32, start: u8, end: u8) -> bool {
    let (s, e) = (u32::from(start), u32::from(end));
    match s.cmp(&e) {
        std::cmp::Ordering::Equal => false,
        std::cmp::Ordering::Less => hour >= s && hour < e,
        std::cmp::Ordering::Greater => hour >= s || hour < e,
    }
}

/// The local hour of `now` at `utc_offset_s` seconds east of UTC.
pub fn local_hour(now: i64, utc_offset_s: i64) -> u32 {
    ((now + utc_offset_s).rem_euclid(86_400) / 3600) as u32
}

/// Whether `now` falls in quiet hours.
pub fn is_quiet(now: i64, utc_offset_s: i64, start: u8, end: u8) -> bool {
    quiet_hour(local_hour(now, utc_offset_s), start, end)
}

/// The first moment at or after `now` outside quiet hours (whole hours).
pub fn quiet_ends(now: i64, utc_offset_s: i64, start: u8, end: u8) -> i64 {
    let mut t = now;
    for _ in 0..24 {
        if !is_quiet(t, utc_offset_s, start, end) {
            return t;
        }
        t = (t + utc_offset_s).div_euclid(3600) * 3600 + 3600 - utc_offset_s;
    }
    t
}
