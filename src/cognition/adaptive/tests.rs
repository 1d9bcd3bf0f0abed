use super::signals::{self, Load, Reaction};
use super::*;
use crate::memory::style::{Style, StyleProfile};

/// A profile with every dimension at 5.5 except the named ones.
fn profile(set: &[(&str, f64)], observations: u32) -> StyleProfile {
    let mut style = Style::neutral();
    for (name, v) in set {
        let i = DIMENSIONS.iter().position(|d| d == name).unwrap();
        style.values[i] = *v;
    }
    StyleProfile { style, observations }
}

fn inputs(p: StyleProfile) -> Inputs {
    Inputs { profile: Some(p), tolerance: signals::START_TOLERANCE, ..Inputs::default() }
}

fn slots(a: &Applied) -> Vec<(Slot, Option<Side>, Origin)> {
    a.directives.iter().map(|d| (d.slot, d.side, d.origin)).collect()
}

#[test]
fn terse_and_expansive_profiles_get_opposite_directives() {
    let terse = plan(&inputs(profile(&[("verbosity", 2.0), ("pacing", 2.0), ("depth_preference", 3.0)], 6)));
    let expansive = plan(&inputs(profile(&[("verbosity", 9.0), ("pacing", 8.5), ("depth_preference", 8.0)], 6)));
    assert_eq!(
        slots(&terse),
        vec![
            (Slot::Pacing, Some(Side::Low), Origin::Profile),
            (Slot::Length, Some(Side::Low), Origin::Profile),
            (Slot::Depth, Some(Side::Low), Origin::Profile),
        ]
    );
    assert_eq!(
        slots(&expansive),
        vec![
            (Slot::Pacing, Some(Side::High), Origin::Profile),
            (Slot::Length, Some(Side::High), Origin::Profile),
            (Slot::Depth, Some(Side::High), Origin::Profile),
        ]
    );
}

#[test]
fn nothing_before_two_observations_nor_inside_the_thresholds() {
    assert!(plan(&inputs(profile(&[("verbosity", 1.0)], 1))).directives.is_empty());
    assert_eq!(plan(&inputs(profile(&[("verbosity", 1.0)], 2))).directives.len(), 1);
    let mid = profile(&[("verbosity", 4.01), ("formality", 6.99)], 9);
    assert!(plan(&inputs(mid)).directives.is_empty(), "4 < v < 7 says nothing");
    let edges = profile(&[("verbosity", 4.0), ("formality", 7.0)], 9);
    assert_eq!(plan(&inputs(edges)).directives.len(), 2, "the thresholds are inclusive");
}

#[test]
fn only_the_two_furthest_cognitive_dimensions_and_a_salient_emotion_get_slots() {
    let p =
        profile(&[("verbosity", 2.5), ("formality", 9.5), ("abstraction_level", 1.0), ("emotional_valence", 7.2)], 9);
    let got = slots(&plan(&inputs(p)));
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!((got[0].0, got[1].0), (Slot::Abstraction, Slot::Formality), "|v − 5.5| largest first");
    assert_eq!(got[2].0, Slot::Warmth, "1.7 from neutral is salient");
    let calm = profile(&[("emotional_valence", 7.0)], 9);
    assert!(plan(&inputs(calm)).directives.is_empty(), "1.5 is not above the salience bar");
}

#[test]
fn micro_preferences_outrank_the_profile_on_their_slot() {
    let mut i = inputs(profile(&[("verbosity", 9.0)], 9));
    i.micro = vec![("response_length".into(), "short".into()), ("format".into(), "prose".into())];
    let a = plan(&i);
    assert_eq!(
        slots(&a),
        vec![(Slot::Length, Some(Side::Low), Origin::Micro), (Slot::Format, None, Origin::Micro)],
        "the profile's 'fuller answers' is silenced by 'keep it short'"
    );
}

#[test]
fn identity_voice_outranks_both() {
    let mut i = inputs(profile(&[("directness", 1.5), ("emotional_valence", 1.0)], 9));
    i.micro = vec![("reply_pushback".into(), "less".into())];
    let texts: Vec<String> = plan(&i).directives.into_iter().map(|d| d.text).collect();
    assert!(texts.iter().any(|t| t.ends_with("but never agree with something false.")), "{texts:?}");
    assert!(texts.iter().any(|t| t.ends_with("but still say plainly what you know.")), "{texts:?}");
    assert!(texts.iter().any(|t| t.ends_with("but stay kind.")), "{texts:?}");
    let high = identity_guard(Directive {
        slot: Slot::Directness,
        side: Some(Side::High),
        origin: Origin::Profile,
        text: "Be direct.".into(),
    });
    assert_eq!(high.text, "Be direct.", "a directive within the voice is left alone");
}

#[test]
fn load_comes_first_and_silences_anything_that_asks_for_more() {
    let mut i = inputs(profile(&[("verbosity", 9.0), ("depth_preference", 9.0), ("formality", 9.5)], 9));
    i.load = Load::Overload;
    let got = slots(&plan(&i));
    assert_eq!(got[0], (Slot::Load, Some(Side::Low), Origin::Load));
    assert!(!got.iter().any(|s| matches!(s.0, Slot::Length | Slot::Depth)), "{got:?}");
    assert!(got.iter().any(|s| s.0 == Slot::Formality), "tone still applies");
}

#[test]
fn cognitive_load_reads_overload_and_terse_replies_to_long_answers() {
    assert_eq!(signals::cognitive_load("ok this is too much, I'm lost", None), Load::Overload);
    assert_eq!(signals::cognitive_load("tl;dr?", Some(10)), Load::Overload);
    assert_eq!(signals::cognitive_load("ok", Some(200)), Load::High);
    assert_eq!(signals::cognitive_load("ok", Some(40)), Load::Normal, "a terse reply to a short answer is fine");
    assert_eq!(signals::cognitive_load("why?", Some(200)), Load::Normal, "a question asks for more");
    assert_eq!(signals::cognitive_load("ok", None), Load::Normal);
}

#[test]
fn energy_mirrors_a_message_far_from_the_baseline() {
    assert_eq!(signals::energy(2.0, 6.0), Some(Side::Low));
    assert_eq!(signals::energy(9.5, 5.0), Some(Side::High));
    assert_eq!(signals::energy(5.0, 6.5), None);
    let mut i = inputs(profile(&[("verbosity", 8.0)], 9));
    i.energy = Some(Side::Low);
    let a = plan(&i);
    assert_eq!(slots(&a)[0], (Slot::Length, Some(Side::Low), Origin::Energy), "the moment outranks the profile");
    assert_eq!(a.directives.len(), 1);
}

#[test]
fn challenge_follows_tolerance_under_the_appetite_ceiling() {
    let mut t = signals::START_TOLERANCE;
    t = signals::update_tolerance(t, Reaction::Badly);
    assert!(t < signals::START_TOLERANCE);
    let mut i = inputs(profile(&[("challenge_appetite", 9.0)], 9));
    assert_eq!(slots(&plan(&i)), vec![(Slot::Challenge, Some(Side::High), Origin::Profile)]);
    i.tolerance = t;
    let a = plan(&i);
    assert!(a.directives.is_empty(), "pushback that landed badly is withheld: {a:?}");
    assert_eq!(a.challenge, Some(t));
    for _ in 0..20 {
        t = signals::update_tolerance(t, Reaction::Well);
    }
    assert_eq!(t, 10.0, "clamped");
    assert_eq!(signals::calibrated_challenge(6.0, t), 6.0, "the appetite is the ceiling");
    assert_eq!(signals::reaction("fair point, I hadn't thought of that"), Some(Reaction::Well));
    assert_eq!(signals::reaction("just answer the question"), Some(Reaction::Badly));
    assert_eq!(signals::reaction("what time is it"), None);
}

#[test]
fn forks_are_offered_in_the_mid_range_with_a_cooldown() {
    let undecided = profile(&[("verbosity", 5.4), ("depth_preference", 6.5), ("abstraction_level", 2.0)], 9).style;
    let (dim, _) = signals::fork(&undecided, None).unwrap();
    assert_eq!(dim, "verbosity", "the most undecided dimension");
    assert!(signals::fork(&undecided, Some(signals::FORK_COOLDOWN - 1)).is_none());
    assert!(signals::fork(&undecided, Some(signals::FORK_COOLDOWN)).is_some());
    let decided = profile(&[("verbosity", 2.0), ("depth_preference", 8.0), ("abstraction_level", 7.5)], 9).style;
    assert!(signals::fork(&decided, None).is_none());
    let mut i = inputs(profile(&[], 9));
    i.fork = Some("offer");
    let a = plan(&i);
    assert_eq!(a.lines_for(true, 9), vec!["offer".to_string()]);
    assert!(a.lines_for(false, 9).is_empty(), "a clarification offers no fork");
    i.load = Load::High;
    assert!(!plan(&i).directives.iter().any(|d| d.slot == Slot::Fork), "not while overloaded");
}

#[test]
fn growth_needs_three_cycles_of_the_same_shift() {
    let mut g = signals::Growth::default();
    let base = Style::neutral();
    let (new, _) = signals::growth_cycle(&mut g, &base, 0);
    assert!(new.is_empty(), "the first cycle sets the baseline");
    let mut shifted = base;
    shifted.values[0] = 8.0;
    let step = signals::GROWTH_INTERVAL_S;
    assert!(signals::growth_cycle(&mut g, &shifted, step / 2).0.is_empty(), "too soon: no cycle");
    assert!(signals::growth_cycle(&mut g, &shifted, step).0.is_empty());
    assert!(signals::growth_cycle(&mut g, &shifted, 2 * step).0.is_empty());
    let (new, reflect) = signals::growth_cycle(&mut g, &shifted, 3 * step);
    assert_eq!(new, vec!["verbosity"]);
    assert!(reflect);
    assert_eq!(g.signals.get("verbosity"), Some(&1));
    let (again, _) = signals::growth_cycle(&mut g, &shifted, 4 * step);
    assert!(again.is_empty(), "a standing signal is not raised twice");
    let mut back = base;
    back.values[0] = 3.0;
    let mut g2 = g.clone();
    for k in 5..12 {
        signals::growth_cycle(&mut g2, &back, k * step);
    }
    assert_eq!(g2.signals.get("verbosity"), Some(&-1), "a lasting shift the other way replaces it");
    assert_eq!(g2.last_reflection_at, Some(3 * step), "the 24 h cooldown holds back a second reflection");
}

#[test]
fn every_directive_is_short_for_the_built_in_model() {
    let all = profile(&DIMENSIONS.map(|d| (d, 1.0)), 9);
    let high = profile(&DIMENSIONS.map(|d| (d, 10.0)), 9);
    for p in [all, high] {
        for d in profile_directives(&p.style) {
            assert!(d.text.split_whitespace().count() <= 12, "{}", d.text);
        }
    }
    for l in [Load::High, Load::Overload] {
        assert!(signals::load_directive(l).unwrap().split_whitespace().count() <= 12);
    }
}

#[test]
fn the_store_side_keeps_micro_preferences_state_and_resets() {
    let mut c = crate::store::open_in_memory().unwrap();
    let t = |text| state::TurnInput { text, last_reply_words: None, answers: true, now: 1_000 };
    let a = state::prepare(&c, &t("Keep it short please: what is a good pasta shape?")).unwrap();
    assert_eq!(slots(&a), vec![(Slot::Length, Some(Side::Low), Origin::Micro)]);
    let a = state::prepare(&c, &t("and for soup?")).unwrap();
    assert_eq!(a.directives.len(), 1, "the preference is stored and applies later");
    let a = state::prepare(&c, &t("actually, more detail from now on")).unwrap();
    assert_eq!(slots(&a), vec![(Slot::Length, Some(Side::High), Origin::Micro)], "a later request supersedes");
    let shown = state::show(&c).unwrap();
    assert_eq!(shown["micro_preferences"][0]["value"], "detailed");
    assert_eq!(shown["exchanges"], 3);
    let r = state::reset(&mut c).unwrap();
    assert!(r.state && r.micro_preferences >= 2);
    let shown = state::show(&c).unwrap();
    assert!(shown["micro_preferences"].as_array().unwrap().is_empty());
    assert_eq!(shown["exchanges"], 0);
}

#[test]
fn the_chunkers_later_write_of_the_same_request_reinforces_it() {
    use crate::memory::traits::{Origin, TraitDecision, store_trait};
    let c = crate::store::open_in_memory().unwrap();
    let text = "Keep it short and no emojis: what's a good pasta shape?";
    state::prepare(&c, &state::TurnInput { text, last_reply_words: None, answers: true, now: 1_000 }).unwrap();
    let ex = crate::memory::extract::extract(text);
    let micro: Vec<_> = ex.traits.iter().filter(|t| t.category == micro::CATEGORY).collect();
    assert_eq!(micro.len(), 2, "the chunker sees both requests too: {micro:?}");
    for t in micro {
        let (_, d) = store_trait(&c, t, 1_001, 1_001, None, Origin::default()).unwrap();
        assert!(matches!(d, TraitDecision::Reinforce { .. }), "{} → {d:?}", t.key);
    }
    let rows = crate::store::TraitsRepo(&c).in_category(micro::CATEGORY, 0.0).unwrap();
    assert_eq!(rows.len(), 2, "one row per request, none contradicted: {rows:?}");
    assert!(rows.iter().all(|r| r.reliability == "reliable"));
}
