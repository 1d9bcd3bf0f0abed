//! The one line each figure of the suite prints for `scripts/bench.sh` to collect:
//! `BENCHFIG name=<id> median_ms=<x> p99_ms=<y> ref=<name or -> ref_median_ms=<z or -> target=<text>`.
//! Criterion reports medians but no p99, so the figure comes from its own timed samples,
//! taken interleaved with the reference's when there is one so both see the same machine.

#![allow(dead_code)] // each bench uses part of it

use std::time::Instant;

/// Milliseconds per call of `f`, `samples` times, after `warm` untimed calls.
pub fn samples<R>(warm: usize, samples: usize, mut f: impl FnMut() -> R) -> Vec<f64> {
    for _ in 0..warm {
        std::hint::black_box(f());
    }
    (0..samples).map(|_| time(&mut f)).collect()
}

/// `a` and `b` measured in turns, call for call: `(a's samples, b's samples)`.
pub fn paired<A, B>(
    warm: usize,
    samples: usize,
    mut a: impl FnMut() -> A,
    mut b: impl FnMut() -> B,
) -> (Vec<f64>, Vec<f64>) {
    for _ in 0..warm {
        std::hint::black_box((a(), b()));
    }
    (0..samples).map(|_| (time(&mut a), time(&mut b))).unzip()
}

fn time<R>(f: &mut impl FnMut() -> R) -> f64 {
    let start = Instant::now();
    std::hint::black_box(f());
    start.elapsed().as_secs_f64() * 1e3
}

/// The value below which `q` of the samples lie (nearest rank).
pub fn quantile(samples: &[f64], q: f64) -> f64 {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

/// Print the figure's line; `reference` is `(name, its samples)` measured in the same run.
pub fn print(name: &str, samples: &[f64], reference: Option<(&str, &[f64])>, target: &str) {
    let (r, rm) = match reference {
        Some((n, s)) => (n.to_string(), format!("{:.4}", quantile(s, 0.5))),
        None => ("-".to_string(), "-".to_string()),
    };
    println!(
        "BENCHFIG name={name} median_ms={:.4} p99_ms={:.4} ref={r} ref_median_ms={rm} target={target}",
        quantile(samples, 0.5),
        quantile(samples, 0.99)
    );
}
