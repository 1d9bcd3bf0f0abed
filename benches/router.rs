//! Speed of the deterministic mode router.
//!
//! - `router/route`: signals → decision (scores, anti-oscillation, margins, snapshots), cycling
//!   through the labelled calibration set with its contexts.
//! - `router/text_to_mode`: raw text → NLP signals → intent → route, the same messages.
//! - `router/score_only`: the five scores alone (most of `route` is building the two JSON
//!   snapshots of the audit row).
//!
//! Reference: the published Python router took a median 5.4 µs for `route()` and 37 µs text to
//! mode (docs/cognition.md §6.9). `cargo bench --bench router`

use std::hint::black_box;
use std::time::Duration;

use chalie::cognition::router::calibration::labelled_set;
use chalie::cognition::router::{RouterSignals, RouterState, RouterWeights, route, route_text, score_modes};
use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let set = labelled_set();
    let weights = RouterWeights::default();
    let state = RouterState { previous_mode: None, recent_confidences: vec![0.3, 0.1, 0.5] };
    let signals: Vec<RouterSignals> = set.iter().map(|x| RouterSignals::from_text(x.text, &x.context)).collect();

    let mut group = c.benchmark_group("router");
    group.measurement_time(Duration::from_secs(5));
    let mut i = 0;
    group.bench_function("route", |b| {
        b.iter(|| {
            i = (i + 1) % signals.len();
            route(black_box(&signals[i]), &weights, &state, true)
        })
    });
    // The scoring alone (no margins, no snapshots), to show where route()'s time goes.
    let mut k = 0;
    group.bench_function("score_only", |b| {
        b.iter(|| {
            k = (k + 1) % signals.len();
            score_modes(black_box(&signals[k]), &weights)
        })
    });
    let mut j = 0;
    group.bench_function("text_to_mode", |b| {
        b.iter(|| {
            j = (j + 1) % set.len();
            let x = &set[j];
            route_text(black_box(x.text), &x.context, &weights, &state, true).mode
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
