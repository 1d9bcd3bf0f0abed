use super::*;

fn item(query: &str, items: &[&str]) -> Found {
    find_item(query, items)
}

#[test]
fn determiners_and_possessives_are_dropped() {
    assert_eq!(key("the bread"), ["bread"]);
    assert_eq!(key("some of the eggs"), ["eggs"]);
    assert_eq!(key("My Passport"), ["passport"]);
    assert_eq!(key("Of Mice and Men"), ["of", "mice", "and", "men"], "a leading `of` alone is a word of the name");
    assert_eq!(key("that"), ["that"], "nothing but a determiner: kept");
    for d in ["the", "a", "an", "some", "my", "our", "your", "his", "her", "their"] {
        assert_eq!(item(&format!("{d} bread"), &["eggs", "bread"]), Found::One(1), "{d}");
    }
    assert_eq!(item("the bread", &["breadcrumbs"]), Found::Nothing);
}

#[test]
fn case_and_number_do_not_matter() {
    assert_eq!(item("BREAD", &["bread"]), Found::One(0));
    for (said, stored) in [
        ("eggs", "egg"),
        ("egg", "eggs"),
        ("tomatoes", "tomato"),
        ("tomato", "Tomatoes"),
        ("berries", "berry"),
        ("berry", "berries"),
        ("boxes", "box"),
        ("loaves", "loaf"),
        ("knife", "knives"),
        ("mice", "mouse"),
        ("shoes", "shoe"),
    ] {
        assert_eq!(item(said, &["rice", stored]), Found::One(1), "{said} / {stored}");
    }
    assert!(!same_word("bus", "bused"));
    assert!(!same_word("pasta", "past"));
    assert!(!same_word("s", "ss"), "one letter has no plural");
    assert_eq!(item("eggs", &["eggplant"]), Found::Nothing);
}

#[test]
fn a_unique_head_noun_names_the_item() {
    assert_eq!(item("milk", &["eggs", "oat milk"]), Found::One(1));
    assert_eq!(item("the onions", &["large red onion"]), Found::One(0));
    assert_eq!(item("red onions", &["large red onion", "white onion"]), Found::One(0));
    // The head noun outranks a word elsewhere in a name: milk chocolate is chocolate.
    assert_eq!(item("milk", &["milk chocolate", "oat milk"]), Found::One(1));
    assert_eq!(item("almond milk", &["oat milk"]), Found::Nothing, "a different modifier is a different item");
}

#[test]
fn whole_words_anywhere_when_no_head_noun_fits() {
    assert_eq!(item("milk", &["milk chocolate"]), Found::One(0));
    assert_eq!(item("milk", &["milkshake mix", "buttermilk"]), Found::Nothing, "never inside a word");
    assert_eq!(item("paper", &["paper towels", "toilet paper"]), Found::One(1), "head noun first");
}

#[test]
fn several_fits_are_reported_not_guessed() {
    assert_eq!(item("milk", &["oat milk", "eggs", "almond milk"]), Found::Several(vec![0, 2]));
    assert_eq!(item("chocolate", &["milk chocolate", "dark chocolate"]), Found::Several(vec![0, 1]));
    // A closer tier settles it: the literal item beats the head-noun ones.
    assert_eq!(item("milk", &["oat milk", "milk", "almond milk"]), Found::One(1));
    assert_eq!(item("the milk", &["oat milk", "Milk", "almond milk"]), Found::One(1));
    assert_eq!(item("", &["milk"]), Found::Nothing);
}

#[test]
fn phrases_match_either_way_but_not_by_head_noun() {
    let msgs = ["call mum", "call mum about the party", "take the bins out"];
    assert_eq!(find_phrase("Call Mum", &msgs), Found::One(0));
    assert_eq!(find_phrase("mum", &msgs), Found::Several(vec![0, 1]), "no head-noun preference");
    assert_eq!(find_phrase("the bin out", &msgs), Found::One(2), "whole words inside, up to number");
    assert_eq!(find_phrase("bins", &msgs), Found::One(2));
    assert_eq!(find_phrase("taking the bins out tonight", &msgs), Found::Nothing);
    assert_eq!(find_phrase("take bins out", &msgs), Found::Nothing);
    assert_eq!(find_phrase("please call mum about the party tomorrow", &msgs), Found::Several(vec![0, 1]));
    assert_eq!(find_phrase("the dentists", &["call the dentist"]), Found::One(0));
    assert_eq!(find_phrase("go", &["go"]), Found::One(0));
    assert_eq!(find_phrase("go to the gym", &["go"]), Found::Nothing, "too short to be found inside a query");
}

#[test]
fn list_names_by_number_and_synonym() {
    let names = ["shopping", "todo", "books"];
    for said in ["shopping", "Shopping", "groceries", "grocery", "my grocery list", "grocery shopping"] {
        assert_eq!(find_list(said, &names), Found::One(0), "{said}");
    }
    for said in ["todo", "to-do", "to do", "todos", "To-Dos", "tasks", "task"] {
        assert_eq!(find_list(said, &names), Found::One(1), "{said}");
    }
    assert_eq!(find_list("book", &names), Found::One(2));
    assert_eq!(find_list("packing", &names), Found::Nothing);
    assert_eq!(find_list("shop", &names), Found::Nothing, "not a listed synonym");
    // Two lists of one group: the exact one wins, otherwise ask.
    assert_eq!(find_list("groceries", &["shopping", "groceries"]), Found::One(1));
    assert_eq!(find_list("grocery", &["shopping", "groceries"]), Found::One(1), "number before synonym");
    assert_eq!(find_list("tasks", &["todo", "to-do"]), Found::Several(vec![0, 1]));
}

#[test]
fn the_question_names_the_candidates() {
    assert_eq!(which("one", &["oat milk".into(), "almond milk".into()]), "Which one: oat milk or almond milk?");
    assert_eq!(which("list", &["a".into(), "b".into(), "c".into()]), "Which list: a, b or c?");
}
