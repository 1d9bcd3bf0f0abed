use super::*;

mod chat;
mod talk;

const DIM: usize = 384;
const T0: i64 = 1_700_000_000;

/// Deterministic pseudo-random numbers (splitmix64), roughly normal by summing uniforms.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn normal(&mut self) -> f32 {
        (0..4).map(|_| (self.next_u64() >> 11) as f32 / (1u64 << 53) as f32).sum::<f32>() - 2.0
    }
}

fn unit(v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

fn random_unit(seed: u64) -> Vec<f32> {
    let mut rng = Rng(seed);
    unit((0..DIM).map(|_| rng.normal()).collect())
}

/// `base` plus noise of `noise` per component: the same topic.
fn perturb(base: &[f32], noise: f32, seed: u64) -> Vec<f32> {
    let mut rng = Rng(seed);
    unit(base.iter().map(|&x| x + noise * rng.normal()).collect())
}

/// A unit vector orthogonal to `base` (Gram-Schmidt): another topic.
fn orthogonal(base: &[f32], seed: u64) -> Vec<f32> {
    let v = random_unit(seed);
    let d: f32 = v.iter().zip(base).map(|(a, b)| a * b).sum();
    unit(v.iter().zip(base).map(|(a, b)| a - d * b).collect())
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Feeds `(embedding, best_sim)` pairs one minute apart from `start`.
fn feed(state: &mut BoundaryState, msgs: &[(Vec<f32>, f32)], start: i64) -> Vec<BoundaryOutcome> {
    msgs.iter().enumerate().map(|(i, (e, s))| state.update(e, *s, start + 60 * i as i64, FocusLevel::None)).collect()
}

fn stable(base: &[f32], n: usize, sim: f32, seed: u64) -> Vec<(Vec<f32>, f32)> {
    (0..n).map(|i| (perturb(base, 0.01, seed + i as u64), sim)).collect()
}

fn both() -> [(&'static str, BoundaryParams); 2] {
    [("published", BoundaryParams::published()), ("calibrated", BoundaryParams::default())]
}

#[test]
fn early_messages_use_the_cold_start_threshold() {
    let mut state = BoundaryState::new(BoundaryParams::published());
    let base = random_unit(1);
    let first = state.update(&base, 0.80, T0, FocusLevel::None);
    assert!(!first.is_boundary && first.cold_start);
    assert_eq!((first.newma, first.surprise, first.acc, first.bound), (0.0, 0.0, 0.0, 5.0));
    let low = state.update(&base, 0.54, T0 + 60, FocusLevel::None);
    assert!(low.is_boundary && low.cold_start, "0.54 < 0.55 in cold start");
    assert!((low.confidence - 0.54).abs() < 1e-6, "confidence = best_sim on a cold-start boundary");
    let high = state.update(&base, 0.56, T0 + 120, FocusLevel::None);
    assert!(!high.is_boundary);
    assert!(state.msg_count < 5);
    // Messages 1-4 are cold, the 5th is not.
    let fourth = state.update(&base, 0.9, T0 + 180, FocusLevel::None);
    let fifth = state.update(&base, 0.9, T0 + 240, FocusLevel::None);
    assert!(fourth.cold_start && !fifth.cold_start);

    // Calibrated: only the first message is cold, at 0.18.
    let mut state = BoundaryState::new(BoundaryParams::default());
    let first = state.update(&base, 0.17, T0, FocusLevel::None);
    assert!(first.is_boundary && first.cold_start);
    let second = state.update(&base, 0.5, T0 + 60, FocusLevel::None);
    assert!(!second.cold_start);
}

#[test]
fn twenty_near_identical_messages_never_fire() {
    for (name, params) in both() {
        let base = random_unit(42);
        let mut state = BoundaryState::new(params);
        let out = feed(&mut state, &stable(&base, 20, 0.95, 100), T0);
        assert!(out.iter().all(|o| !o.is_boundary), "{name}: {out:?}");
    }
}

#[test]
fn ten_stable_then_three_very_different_fires() {
    for (name, params) in both() {
        let base = random_unit(10);
        let other = orthogonal(&base, 20);
        assert!(dot(&base, &other).abs() < 1e-4);
        let mut state = BoundaryState::new(params);
        let before = feed(&mut state, &stable(&base, 10, 0.95, 0), T0);
        assert!(before.iter().all(|o| !o.is_boundary), "{name}");
        let after = feed(&mut state, &stable(&other, 3, 0.20, 100), T0 + 600);
        assert!(after.iter().any(|o| o.is_boundary), "{name}: {after:?}");
        // 0.20 is above the calibrated similarity floor: the accumulator did it.
        assert!(after.iter().all(|o| !o.below_floor), "{name}");
    }
}

#[test]
fn one_outlier_does_not_sustain() {
    for (name, params) in both() {
        let base = random_unit(5);
        let mut state = BoundaryState::new(params.clone());
        feed(&mut state, &stable(&base, 12, 0.92, 0), T0);
        let outlier = state.update(&orthogonal(&base, 99), 0.18, T0 + 720, FocusLevel::None);
        let recovery = state.update(&perturb(&base, 0.01, 200), 0.92, T0 + 780, FocusLevel::None);
        let next = state.update(&perturb(&base, 0.01, 201), 0.92, T0 + 840, FocusLevel::None);
        // As in the recorded test: the outlier itself may fire (nothing tells it from the first
        // message of a new topic), but it must not sustain.
        let _ = outlier;
        assert!(!recovery.is_boundary && !next.is_boundary, "{name}: {recovery:?} {next:?}");
        assert!(recovery.acc < recovery.bound * 0.5, "{name}: the evidence leaked away: {recovery:?}");
    }
    // Calibrated: a mild wobble (0.92 → 0.80 on a message of the same topic) does not fire;
    // a message with nothing in common with the thread does (the first message of a new topic
    // looks exactly like it, and Pk needs it caught on time). The topic classifier then sends
    // the next on-topic message back to the old topic (tested there).
    let base = random_unit(5);
    let mut state = BoundaryState::new(BoundaryParams::default());
    feed(&mut state, &stable(&base, 12, 0.92, 0), T0);
    let wobble = state.update(&perturb(&base, 0.05, 300), 0.80, T0 + 720, FocusLevel::None);
    assert!(!wobble.is_boundary, "{wobble:?}");
}

#[test]
fn slow_drift_fires_through_the_newma_term() {
    // From the first message, the embeddings turn towards an orthogonal topic while the
    // similarity sinks slowly: the recorded test (22 messages, 0.9 → 0.15) and a 20-message
    // drift that stops at 0.3, above the calibrated similarity floor.
    let base = random_unit(7);
    let target = orthogonal(&base, 8);
    let towards = |a: f32| unit(base.iter().zip(&target).map(|(b, t)| (1.0 - a) * b + a * t).collect());
    let drift = |n: usize, low: f32| -> Vec<(Vec<f32>, f32)> {
        (0..n).map(|i| i as f32 / n as f32).map(|a| (towards(a), (0.9 - a * 0.75).max(low))).collect()
    };
    let fires = |params: &BoundaryParams, msgs: &[(Vec<f32>, f32)]| -> Vec<BoundaryOutcome> {
        let mut state = BoundaryState::new(params.clone());
        feed(&mut state, msgs, T0).into_iter().filter(|o| o.is_boundary && !o.cold_start).collect()
    };
    for (name, params) in both() {
        for (n, low) in [(22, 0.15), (20, 0.3)] {
            let fired = fires(&params, &drift(n, low));
            assert!(!fired.is_empty(), "{name}: {n} messages down to {low}");
            assert!(fired.iter().all(|o| !o.below_floor), "{name}: {fired:?}");
        }
    }
    // As published, the NEWMA term is what carries it: without that term the same drifts pass
    // unnoticed, and a drift at a constant similarity (nothing for the surprise term) still
    // fires after a settled start. The calibrated set weighs the similarity drop more and
    // leaks less (see `surprise_weight`, `leak`): it catches these drifts through the slow
    // fall of the similarity, and a drift at constant similarity goes unnoticed there.
    let published = BoundaryParams::published();
    for (n, low) in [(22, 0.15), (20, 0.3)] {
        assert!(fires(&BoundaryParams { newma_weight: 0.0, ..published.clone() }, &drift(n, low)).is_empty());
    }
    let mut msgs = stable(&base, 20, 0.9, 500);
    msgs.extend((1..=20).map(|i| (towards(i as f32 / 20.0), 0.9)));
    let fired = fires(&published, &msgs);
    assert!(!fired.is_empty() && fired.iter().all(|o| o.surprise <= 0.0), "{fired:?}");
}

#[test]
fn save_and_load_keep_the_state() {
    let base = random_unit(3);
    let params = BoundaryParams { base: 2.0, ..BoundaryParams::default() };
    let mut state = BoundaryState::new(params.clone());
    let mut msgs = stable(&base, 7, 0.9, 0);
    msgs.push((orthogonal(&base, 4), 0.3));
    feed(&mut state, &msgs, T0);

    let json = state.to_json();
    let loaded = BoundaryState::from_json(&json, params.clone()).expect("valid JSON");
    assert_same_state(&loaded, &state);
    assert_eq!(loaded.msg_count, 8);
    assert_eq!(loaded.params(), &params);
    assert!(!json.contains("fast_window"), "the params are configuration, not state");

    // Both go on alike.
    let (mut a, mut b) = (state, loaded);
    for (i, (e, s)) in [(orthogonal(&base, 6), 0.25), (perturb(&base, 0.01, 7), 0.9)].iter().enumerate() {
        let now = T0 + 900 + 60 * i as i64;
        let (x, y) = (a.update(e, *s, now, FocusLevel::None), b.update(e, *s, now, FocusLevel::None));
        assert_eq!(x.is_boundary, y.is_boundary);
        assert!((x.acc - y.acc).abs() < 1e-5 && (x.newma - y.newma).abs() < 1e-4);
    }
    assert_same_state(&a, &b);
}

/// Equal up to the last bit of a float: serde_json's default float parser may be one ulp off.
fn assert_same_state(a: &BoundaryState, b: &BoundaryState) {
    assert_eq!((a.msg_count, a.last_ts), (b.msg_count, b.last_ts));
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs().max(y.abs()).max(1.0);
    for (x, y) in [
        (a.drift_ema, b.drift_ema),
        (a.drift_var, b.drift_var),
        (a.sim_ema, b.sim_ema),
        (a.drop_ema, b.drop_ema),
        (a.drop_var, b.drop_var),
        (a.acc, b.acc),
    ] {
        assert!(close(x, y), "{x} vs {y}");
    }
    for (x, y) in [(&a.ewma_fast, &b.ewma_fast), (&a.ewma_slow, &b.ewma_slow)] {
        let (x, y) = (x.as_ref().expect("set"), y.as_ref().expect("set"));
        assert_eq!(x.len(), y.len());
        assert!(x.iter().zip(y).all(|(p, q)| (p - q).abs() <= 1e-6), "EWMAs differ");
    }
}

#[test]
fn an_unreadable_store_means_a_cold_start() {
    assert!(BoundaryState::from_json("not json", BoundaryParams::default()).is_none());
    assert!(BoundaryState::from_json("[1, 2]", BoundaryParams::default()).is_none());
    // A partial state (older version) loads with the rest at cold-start values.
    let partial = BoundaryState::from_json(r#"{"msg_count": 3}"#, BoundaryParams::published()).expect("loads");
    assert_eq!(partial.msg_count, 3);
    assert_eq!(partial.ewma_fast, None);
    // Past the cold start with no EWMAs: they restart from this message, no panic.
    let mut partial = partial.with_params(BoundaryParams::published());
    partial.msg_count = 9;
    let out = partial.update(&random_unit(1), 0.9, T0, FocusLevel::None);
    assert!(!out.is_boundary && !out.cold_start);
    // A fresh state decides like a cold start.
    let mut fresh = BoundaryState::new(BoundaryParams::published());
    assert!(fresh.update(&random_unit(2), 0.5, T0, FocusLevel::None).cold_start);
}

#[test]
fn raising_the_base_lowers_sensitivity() {
    let base = random_unit(11);
    let other = orthogonal(&base, 12);
    let count = |params: BoundaryParams| {
        let mut state = BoundaryState::new(params);
        feed(&mut state, &stable(&base, 8, 0.92, 0), T0);
        feed(&mut state, &stable(&other, 6, 0.35, 50), T0 + 480).iter().filter(|o| o.is_boundary).count()
    };
    for (name, params) in both() {
        let low = count(BoundaryParams { base: 1.5, ..params.clone() });
        let high = count(BoundaryParams { base: 4.0, ..params });
        assert!(low > high, "{name}: base 1.5 fired {low}, base 4.0 fired {high}");
    }
}

#[test]
fn silence_resets_only_after_more_than_2700_s() {
    for (name, params) in both() {
        let base = random_unit(10);
        let mut state = BoundaryState::new(params);
        feed(&mut state, &stable(&base, 8, 0.9, 0), T0);
        let last = state.last_ts.expect("set");
        let at_limit = state.update(&base, 0.9, last + 2700, FocusLevel::None);
        assert!(!at_limit.just_reset, "{name}: exactly 2700 s is not a reset");
        state.acc = 0.7;
        let other = orthogonal(&base, 3);
        let after = state.update(&other, 0.4, last + 2700 + 2701, FocusLevel::None);
        assert!(after.just_reset, "{name}");
        let slow = state.ewma_slow.as_ref().expect("set");
        assert!(slow.iter().zip(&other).all(|(a, b)| (a - b).abs() < 1e-6), "{name}: EWMAs restart on the message");
        assert!((state.sim_ema - 0.4).abs() < 1e-6, "{name}: sim_ema restarts at best_sim");
        assert!(!after.is_boundary && after.acc < 0.7, "{name}: the accumulator restarted");
        let next = state.update(&other, 0.4, last + 2700 + 2761, FocusLevel::None);
        assert!(!next.just_reset, "{name}");
    }
}

#[test]
fn focus_raises_the_bound() {
    let state = BoundaryState::new(BoundaryParams::default());
    let none = state.bound(FocusLevel::None);
    assert!((state.bound(FocusLevel::Inferred) - none - 0.5).abs() < 1e-9);
    assert!((state.bound(FocusLevel::Explicit) - none - 1.0).abs() < 1e-9);
    // The clip's ceiling moves with the focus: 5.0 + 1.0.
    let high = BoundaryState::new(BoundaryParams { base: 9.0, ..BoundaryParams::published() });
    assert_eq!(high.bound(FocusLevel::None), 5.0);
    assert_eq!(high.bound(FocusLevel::Explicit), 6.0);
    // And a focused thread needs more to fire: over messages that turn further and further
    // from a settled topic, focus never fires where no focus does not, and somewhere no focus
    // fires where explicit focus holds.
    let base = random_unit(21);
    let other = orthogonal(&base, 22);
    let fires = |focus: FocusLevel, cos: f32| {
        let mut state = BoundaryState::new(BoundaryParams::default());
        for (i, (e, s)) in stable(&base, 8, 0.92, 0).iter().enumerate() {
            state.update(e, *s, T0 + 60 * i as i64, focus);
        }
        let e = unit(base.iter().zip(&other).map(|(b, o)| cos * b + (1.0 - cos * cos).sqrt() * o).collect());
        state.update(&e, 0.92 * cos, T0 + 600, focus).is_boundary
    };
    let levels: Vec<f32> = (0..=18).map(|i| 0.95 - 0.05 * i as f32).collect();
    assert!(levels.iter().all(|&c| !fires(FocusLevel::Explicit, c) || fires(FocusLevel::None, c)));
    assert!(levels.iter().any(|&c| fires(FocusLevel::None, c) && !fires(FocusLevel::Explicit, c)));
}

#[test]
fn hold_changes_nothing() {
    let base = random_unit(30);
    let mut state = BoundaryState::new(BoundaryParams::default());
    feed(&mut state, &stable(&base, 6, 0.9, 0), T0);
    state.acc = 0.4;
    let before = state.clone();
    let out = state.hold(FocusLevel::None);
    assert_eq!(state, before);
    assert!(out.held && !out.is_boundary);
    assert_eq!(out.acc, 0.4);
}

#[test]
fn prime_leaves_the_similarity_statistics_alone() {
    let mut state = BoundaryState::new(BoundaryParams::default());
    let e = random_unit(40);
    let out = state.prime(&e, T0, FocusLevel::None);
    assert!(!out.is_boundary && !out.held);
    assert_eq!(state.msg_count, 1);
    assert_eq!(state.last_ts, Some(T0));
    assert_eq!(state.ewma_fast.as_deref(), Some(e.as_slice()));
    let p = BoundaryParams::default();
    assert_eq!((state.sim_ema, state.drop_ema, state.drop_var), (p.init_sim_ema, p.init_drop_ema, p.init_drop_var));
}

#[test]
fn published_constants_match_the_sheet() {
    let p = BoundaryParams::published();
    assert_eq!((p.fast_window, p.slow_window, p.leak, p.base), (4, 18, 0.4, 2.5));
    assert_eq!((p.bound_min, p.bound_max, p.newma_weight, p.surprise_weight, p.acc_cap), (1.5, 5.0, 0.6, 0.4, 1.2));
    assert_eq!((p.cold_start_msgs, p.cold_start_threshold, p.stale_gap_s, p.state_ttl_s), (5, 0.55, 2700, 86_400));
    assert_eq!((p.focus_inferred, p.focus_explicit, p.drift_ratio_weight), (0.5, 1.0, 0.5));
    assert_eq!(
        (p.init_sim_ema, p.init_drift_ema, p.init_drift_var, p.init_drop_ema, p.init_drop_var),
        (0.5, 0.0, 1e-4, 0.0, 1e-4)
    );
    assert_eq!(p.sim_floor, None);
    let s = BoundaryState::new(p);
    assert_eq!((s.msg_count, s.acc, s.last_ts, s.ewma_fast.is_none()), (0, 0.0, None, true));
}

#[test]
fn tunables_clamp_to_their_bounds() {
    let wild = BoundaryParams { fast_window: 1, slow_window: 99, leak: 0.9, base: 0.5, ..BoundaryParams::default() };
    let c = wild.clamped();
    assert_eq!((c.fast_window, c.slow_window, c.leak, c.base), (2, 30, 0.7, 1.5));
    let d = BoundaryParams::default();
    assert_eq!(d.clone().clamped(), d, "the calibrated set lies inside the bounds");
    assert!((BoundaryParams::published().alpha_fast() - 0.4).abs() < 1e-12);
    assert!((BoundaryParams::published().alpha_slow() - 2.0 / 19.0).abs() < 1e-12);
}

#[test]
fn state_expires_after_its_ttl() {
    let mut state = BoundaryState::new(BoundaryParams::default());
    assert!(!state.expired(T0));
    state.update(&random_unit(1), 0.9, T0, FocusLevel::None);
    assert!(!state.expired(T0 + 86_400));
    assert!(state.expired(T0 + 86_401));
}

#[test]
fn a_new_embedding_dimension_restarts_the_ewmas() {
    let mut state = BoundaryState::new(BoundaryParams::default());
    feed(&mut state, &stable(&random_unit(1), 4, 0.9, 0), T0);
    let small = unit(vec![1.0, 2.0, 3.0]);
    let out = state.update(&small, 0.9, T0 + 600, FocusLevel::None);
    assert!(!out.is_boundary);
    assert_eq!(state.ewma_fast.as_ref().map(Vec::len), Some(3));
}

/// A window number names one message for as long as the state lives: a message keeps its
/// number while it stays, a new one gets a number past every one given before, and a cleared
/// window (a long silence, a new dimension) moves past its numbers (what a store's rows of
/// the window rely on).
#[test]
fn window_numbers_are_never_given_twice() {
    let mut state = BoundaryState::new(BoundaryParams::default());
    let mut given: std::collections::BTreeMap<u64, Vec<f32>> = Default::default();
    let (mut at, mut cleared) = (T0, 0);
    for i in 0..60u64 {
        at += if i == 25 { 10_000 } else { 60 };
        let e = if i < 45 { perturb(&random_unit(i / 12), 0.3, i) } else { unit(vec![1.0, i as f32, 3.0]) };
        let before = state.recent_seqs();
        if i == 0 {
            state.prime(&e, at, FocusLevel::None);
        } else {
            state.update_weighted(&e, 0.5, 0.8, at, FocusLevel::None);
        }
        let now = state.recent_seqs();
        assert!(now.start >= before.start && now.end >= before.end, "{before:?} → {now:?}");
        cleared += usize::from(now.start >= before.end && !before.is_empty());
        for (seq, (_, v)) in now.zip(&state.recent) {
            match given.get(&seq) {
                Some(old) => assert_eq!(old, v, "message {seq} changed"),
                None => {
                    assert!(seq >= before.end, "number {seq} given again");
                    given.insert(seq, v.clone());
                }
            }
        }
    }
    assert_eq!(cleared, 2, "the silence and the new dimension clear the window");
    assert!(given.len() > 40, "{}", given.len());
}
