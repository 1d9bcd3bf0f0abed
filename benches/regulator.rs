//! The regulator's overhead (docs/cognition.md §13.7): targets < 1 µs per token and < 50 µs per
//! turn.
//!
//! - `regulator/token`: 1000 `Token` events into a turn that already holds 300 (the rolling
//!   window full); criterion reports the time per token.
//! - `regulator/turn`: the per-turn work on a 300-token reply of 1,800 characters whose tokens
//!   are already in: TurnStart's task bag, costs, TurnComplete, `report()` (decision,
//!   confidence, spans, drift, procedural lookup) and `finish_turn`, over a state holding
//!   corrections and a quality history.
//!
//! `cargo bench --bench regulator`

use std::hint::black_box;
use std::time::Duration;

use chalie::cognition::regulator::{Event, Regulator, RegulatorState, Settings};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

const WORDS: &[&str] = &[
    "the",
    " runtime",
    " schedules",
    " futures",
    " on",
    " worker",
    " threads",
    ",",
    " and",
    " timers",
    " wake",
    " them",
    ".",
];

fn reply_tokens() -> Vec<(String, f64)> {
    (0..300).map(|i| (WORDS[i % WORDS.len()].to_string(), if i % 37 < 3 { -3.1 } else { -0.4 })).collect()
}

fn seeded() -> Regulator {
    let mut st = RegulatorState::for_user("bench");
    for i in 0..5 {
        st.add_correction("runtime+tokio", &format!("no, I meant the scheduler {i}"), i);
        st.judge("runtime+tokio", 0.6);
    }
    Regulator::new(Settings::default(), st)
}

fn with_reply(tokens: &[(String, f64)]) -> Regulator {
    let mut r = seeded();
    r.on_event(Event::TurnStart { user_message: "explain the tokio runtime".into(), at_ms: 0 });
    for (t, lp) in tokens {
        r.on_event(Event::Token { text: t.clone(), logprob: Some(*lp) });
    }
    r
}

fn bench(c: &mut Criterion) {
    let tokens = reply_tokens();
    let reply: String = tokens.iter().map(|(t, _)| t.as_str()).collect();
    let mut group = c.benchmark_group("regulator");
    group.measurement_time(Duration::from_secs(5));

    let batch: Vec<String> = (0..1000).map(|i| WORDS[i % WORDS.len()].to_string()).collect();
    group.throughput(Throughput::Elements(batch.len() as u64));
    group.bench_function("token", |b| {
        b.iter_batched(
            || (with_reply(&tokens), batch.clone()),
            |(mut r, batch)| {
                for t in batch {
                    r.on_event(Event::Token { text: t, logprob: Some(-0.7) });
                }
                r
            },
            BatchSize::SmallInput,
        )
    });

    group.throughput(Throughput::Elements(1));
    group.bench_function("turn", |b| {
        b.iter_batched(
            || with_reply(&tokens),
            |mut r| {
                r.on_event(Event::TurnStart { user_message: black_box("explain the tokio runtime").into(), at_ms: 0 });
                r.on_event(Event::Cost { role: "primary".into(), tokens_in: 400, tokens_out: 300, wall_ms: 2000 });
                r.on_event(Event::TurnComplete { response: reply.clone(), at_ms: 1 });
                let (d, report) = r.report();
                r.finish_turn(&d);
                (r, report)
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
