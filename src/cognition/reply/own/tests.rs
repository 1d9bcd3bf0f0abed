use super::*;

fn t(key: &str, value: &str) -> TraitRow {
    TraitRow {
        key: key.into(),
        value: value.into(),
        category: "core".into(),
        confidence: 0.95,
        reliability: "reliable".into(),
        until: None,
    }
}

fn mem(traits: Vec<TraitRow>, facts: &[(i64, &str, &str)]) -> OwnMemory {
    OwnMemory {
        traits,
        facts: facts.iter().map(|(id, k, v)| FactRow { id: *id, key: (*k).into(), value: (*v).into() }).collect(),
    }
}

fn ask(text: &str, m: &OwnMemory) -> Option<String> {
    answer(&parse(text)?, m, &[]).map(|a| a.text)
}

#[test]
fn own_questions_are_recognised_and_other_questions_are_not() {
    for q in [
        "What am I allergic to?",
        "where do I live?",
        "what's my sister's name?",
        "hey, what's my name?",
        "What is my current home address?",
        "how old am I",
        "do I have any pets?",
        "what foods do I dislike?",
    ] {
        assert!(parse(q).is_some(), "{q}");
    }
    for q in ["What is the capital of France?", "where do penguins live?", "add milk to my list", "I live in Porto"] {
        assert!(parse(q).is_none(), "{q}");
    }
    let q = parse("what's my sister's name again?").unwrap();
    assert_eq!(q.subject, Subject::Words(vec!["sister".into(), "name".into()]));
    assert_eq!(q.asked, "your sister's name");
    assert!(q.personal);
    assert!(!parse("what's my best option here?").unwrap().personal, "an open question, not personal data");
}

#[test]
fn stored_traits_answer_with_their_source() {
    let m =
        mem(vec![t("allergy_peanuts", "peanuts"), t("allergy_shellfish", "shellfish"), t("location", "Porto")], &[]);
    let a = ask("What am I allergic to?", &m).unwrap();
    assert!(a.starts_with("You're allergic to peanuts and shellfish."), "{a}");
    assert!(a.contains("From memory") && a.contains("allergy peanuts"), "{a}");
    assert!(ask("where do I live?", &m).unwrap().starts_with("You live in Porto."));
}

#[test]
fn nothing_stored_is_said_plainly_and_never_invented() {
    let m = mem(vec![t("location", "Porto")], &[]);
    assert_eq!(
        ask("what am I allergic to?", &m).unwrap(),
        "I don't know that yet — you haven't told me what you're allergic to."
    );
    assert_eq!(
        ask("what's my sister's name?", &m).unwrap(),
        "I don't know that yet — you haven't told me your sister's name."
    );
    assert_eq!(ask("what's my best option here?", &m), None, "the model keeps open questions");
}

#[test]
fn my_x_questions_match_trait_and_fact_keys_and_prefer_the_newest_fact() {
    let m = mem(
        vec![t("sister_name", "Ana")],
        &[(9, "new_home_address", "12 Rua Augusta, Lisbon"), (3, "home_address", "4 Elm Street, Porto")],
    );
    assert!(ask("what's my sister's name?", &m).unwrap().starts_with("Your sister's name is Ana."));
    let a = answer(&parse("What is my current home address?").unwrap(), &m, &[]).unwrap();
    assert!(a.text.starts_with("Your home address is 12 Rua Augusta, Lisbon."), "{}", a.text);
    assert_eq!(a.sources, ["fact:9"]);
}

#[test]
fn doubtful_traits_are_hedged() {
    let mut doubtful = t("location", "Porto");
    doubtful.reliability = "contradicted".into();
    let a = ask("where do I live", &mem(vec![doubtful], &[])).unwrap();
    assert!(a.contains("not sure"), "{a}");
}

#[test]
fn recalled_episodes_answer_when_no_key_does() {
    let hit = Hit {
        layer: "episode",
        id: 42,
        text: "User said their new address is 5 Baker Street".into(),
        at: 0,
        confidence: 0.7,
        why: String::new(),
        reliability: "reliable".into(),
        sources: Vec::new(),
        score: 1.0,
        parts: Default::default(),
    };
    let a = answer(&parse("what's my address?").unwrap(), &OwnMemory::default(), &[hit]).unwrap();
    assert!(a.text.contains("5 Baker Street") && a.text.contains("episode:42"), "{}", a.text);
    assert_eq!(a.sources, ["episode:42"]);
}

#[test]
fn which_thing_do_i_use_asks_for_that_slot() {
    let m = mem(vec![t("gym", "Iron Works"), t("car", "a blue Corsa")], &[]);
    assert_eq!(parse("which gym do I go to?").map(|q| q.subject), Some(Subject::Words(vec!["gym".into()])));
    assert!(ask("which gym do I go to?", &m).unwrap().starts_with("Your gym is Iron Works"));
    assert!(ask("what car do I drive?", &m).unwrap().starts_with("Your car is a blue Corsa"));
    for q in ["what time do I need to leave?", "which way do I go from here?", "what do I need for a visa?"] {
        assert!(!matches!(parse(q).map(|q| q.subject), Some(Subject::Words(_))), "{q}");
    }
}
