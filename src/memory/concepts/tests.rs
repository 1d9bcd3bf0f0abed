use super::*;

fn ep(gist: &str) -> EpisodeText {
    EpisodeText { id: 1, gist: gist.into(), topic: Some("work".into()) }
}

fn one(gist: &str) -> Extraction {
    extract(&ep(gist), &HashSet::new())
}

fn names(x: &Extraction) -> Vec<&str> {
    x.concepts.iter().map(|c| c.name.as_str()).collect()
}

fn rel<'a>(x: &'a Extraction, ty: &str) -> Vec<(&'a str, &'a str)> {
    x.relationships.iter().filter(|r| r.rel_type == ty).map(|r| (r.source.as_str(), r.target.as_str())).collect()
}

#[test]
fn is_a_from_the_sentence_with_the_sentence_as_definition() {
    let x = one("Rust is a systems programming language. — reply: Rust is great for CLI tools.");
    assert_eq!(rel(&x, "is-a"), [("rust", "systems programming language")]);
    let lang = x.concepts.iter().find(|c| c.name == "systems programming language").unwrap();
    assert_eq!(lang.definition, "Rust is a systems programming language.");
    assert_eq!(lang.concept_type, "technology");
    assert_eq!(lang.abstraction_level, 4, "an is-a target is the more abstract one");
    assert_eq!(lang.domain.as_deref(), Some("work"));
    assert!(names(&x).contains(&"CLI"), "an acronym is a named thing: {:?}", names(&x));
    assert_eq!(x.relationships.iter().find(|r| r.rel_type == "is-a").unwrap().strength, 0.8);
}

#[test]
fn part_of_uses_instead_of_requires() {
    let x = one("Unit testing is part of the development process.");
    assert_eq!(rel(&x, "part-of"), [("unit testing", "development process")]);
    assert!(rel(&x, "is-a").is_empty(), "'is part of' is not is-a");
    let x = one("Cargo uses rustc to compile crates.");
    assert_eq!(rel(&x, "used-for"), [("rustc", "cargo")], "X uses Y: Y is used for X");
    let x = one("I'm switching to Postgres instead of MySQL for the new project");
    assert_eq!(rel(&x, "alternative-to"), [("Postgres", "MySQL")]);
    assert!(rel(&x, "related-to").is_empty(), "a typed pair gets no co-occurrence edge");
    let types: Vec<&str> = x.concepts.iter().map(|c| c.concept_type.as_str()).collect();
    assert_eq!(types, ["technology", "technology"]);
    let x = one("We picked postgres instead of mysql for billing.");
    assert_eq!(rel(&x, "alternative-to"), [("postgres", "mysql")], "a past-tense verb ends the phrase");
    let x = one("Then we chose Postgres instead of MySQL.");
    assert_eq!(rel(&x, "alternative-to"), [("Postgres", "MySQL")], "a name is its own phrase");
    assert_eq!(names(&x), ["Postgres", "MySQL"]);
    let x = one("The nightly build requires cmake.");
    assert_eq!(rel(&x, "prerequisite-for"), [("cmake", "nightly build")]);
}

#[test]
fn named_things_and_repeated_words_become_concepts_with_cooccurrence() {
    let x = one("I keep reading about sourdough. My sourdough starter died while I was in Lisbon with Maria.");
    let n = names(&x);
    assert!(n.contains(&"Lisbon") && n.contains(&"Maria") && n.contains(&"sourdough"), "{n:?}");
    assert!(!n.iter().any(|w| w.eq_ignore_ascii_case("I") || w.eq_ignore_ascii_case("my")), "{n:?}");
    assert!(!n.contains(&"reading"), "said once: not a concept");
    let related = rel(&x, "related-to");
    assert_eq!(related.len(), n.len() * (n.len() - 1) / 2, "every pair once");
    assert!(x.relationships.iter().all(|r| r.strength == COOCCUR_STRENGTH || r.rel_type != "related-to"));
    let lisbon = x.concepts.iter().find(|c| c.name == "Lisbon").unwrap();
    assert_eq!(lisbon.definition, "My sourdough starter died while I was in Lisbon with Maria.");
}

#[test]
fn negatives_produce_nothing_spurious() {
    for s in [
        "It is a good idea.",
        "What is a monad?",
        "Nice weather today!",
        "There is a problem.",
        "Python is not a compiled language.",
        "I need a break.",
        "We use it every day.",
        "I went there on Monday in May.",
    ] {
        let x = one(s);
        assert!(x.relationships.iter().all(|r| r.rel_type == "related-to"), "{s}: {:?}", x.relationships);
        assert!(x.concepts.len() <= 1, "{s}: {:?}", names(&x));
    }
    assert_eq!(one(""), Extraction::default());
    assert!(names(&one("I went there on Monday in May.")).is_empty(), "days and months are not concepts");
}

#[test]
fn recurring_words_across_the_batch_are_themes() {
    let batch = [
        EpisodeText { id: 1, gist: "Training for the marathon this spring".into(), topic: None },
        EpisodeText { id: 2, gist: "My knee hurts after the marathon".into(), topic: None },
        EpisodeText { id: 3, gist: "Bought groceries".into(), topic: None },
    ];
    let out = extract_batch(&batch);
    assert!(names(&out[0]).contains(&"marathon"));
    assert!(names(&out[1]).contains(&"marathon"));
    assert!(names(&out[2]).is_empty(), "{:?}", names(&out[2]));
}

#[test]
fn types_depend_on_the_name_only() {
    assert_eq!(concept_type_of("Rust"), concept_type_of("rust"));
    assert_eq!(concept_type_of("PostgreSQL"), "technology");
    assert_eq!(concept_type_of("C++"), "technology");
    assert_eq!(concept_type_of("continuous deployment"), "process");
    assert_eq!(concept_type_of("single responsibility principle"), "principle");
    assert_eq!(concept_type_of("gardening"), "process");
    assert_eq!(concept_type_of("sourdough"), "domain");
    assert_eq!(concept_type_of(""), "domain");
}

#[test]
fn caps_hold_on_long_input() {
    let long = (0..40).map(|i| format!("Name{i} met Person{i} again. Name{i} again.")).collect::<Vec<_>>().join(" ");
    let x = one(&long);
    assert!(x.concepts.len() <= MAX_CONCEPTS);
    let related = rel(&x, "related-to").len();
    assert!(related <= 15, "{related}");
    assert!(x.concepts.iter().all(|c| c.definition.chars().count() <= MAX_DEFINITION_CHARS));
}
