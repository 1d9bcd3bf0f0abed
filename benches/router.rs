//! Speed of the deterministic mode router.
//!
//! - `router/route`: signals → decision (scores, anti-oscillation, margins, and the audit
//!   snapshots as the hot path now holds them), cycling through the labelled calibration set
//!   with its contexts.
//! - `router/text_to_mode`: raw text → NLP signals → intent → route, the same messages: the
//!   whole deterministic routing on the path to the first token.
//! - `router/score_only`: the five scores alone.
//! - `router/route_and_snapshots`: `route` plus writing both JSON snapshots out, which the
//!   engine now does only when the routing row and the `routed` event are written.
//!
//! Besides criterion's groups, 100k individually timed calls each give the median and p99 printed
//! as `BENCHFIG` lines at the end (benches/support/benchfig.rs). Reference: the published Python router took a
//! median 5.4 µs for `route()` and 37 µs text to mode (docs/cognition.md §6.9).
//! `cargo bench --bench router`

use std::hint::black_box;
use std::time::Duration;

use chalie::cognition::router::calibration::labelled_set;
use chalie::cognition::router::{RouterSignals, RouterState, RouterWeights, route, route_text, score_modes};
use criterion::{Criterion, criterion_group, criterion_main};

#[path = "support/benchfig.rs"]
mod benchfig;

const SAMPLES: usize = 100_000;

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
    let mut m = 0;
    group.bench_function("route_and_snapshots", |b| {
        b.iter(|| {
            m = (m + 1) % signals.len();
            let d = route(black_box(&signals[m]), &weights, &state, true);
            (d.signal_snapshot.to_string().len(), d.weight_snapshot.to_string().len())
        })
    });
    group.finish();

    // Each call timed on its own, cycling through the messages (after one untimed pass).
    let mut n = 0;
    let text_to_mode = benchfig::samples(set.len(), SAMPLES, || {
        n = (n + 1) % set.len();
        route_text(black_box(set[n].text), &set[n].context, &weights, &state, true)
    });
    benchfig::print("router/text_to_mode", &text_to_mode, None, "p99<0.005ms");
    let route_only = benchfig::samples(signals.len(), SAMPLES, || {
        n = (n + 1) % signals.len();
        route(black_box(&signals[n]), &weights, &state, true)
    });
    benchfig::print("router/route", &route_only, None, "-");
    let with_snapshots = benchfig::samples(signals.len(), SAMPLES, || {
        n = (n + 1) % signals.len();
        let d = route(black_box(&signals[n]), &weights, &state, true);
        (d.signal_snapshot.to_string().len(), d.weight_snapshot.to_string().len())
    });
    benchfig::print("router/route_and_snapshots", &with_snapshots, None, "-");
}

criterion_group!(benches, bench);
criterion_main!(benches);
