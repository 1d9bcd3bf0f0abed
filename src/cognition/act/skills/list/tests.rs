use super::*;
use chrono::Local;

fn ctx() -> SkillContext {
    SkillContext::new("t", "x", "t", Local::now())
}

fn call(c: &Connection, v: Value) -> Result<SkillOutput, SkillError> {
    run(c, v.as_object().unwrap(), &ctx())
}

#[test]
fn add_view_remove_check_and_history() {
    let c = crate::store::open_in_memory().unwrap();
    let out = call(&c, json!({"action": "add", "name": "my Shopping list", "items": ["eggs", "milk"]})).unwrap();
    assert_eq!(out.summary, "Added eggs and milk to shopping.");
    let out = call(&c, json!({"action": "add", "items": ["Milk", "bread"]})).unwrap();
    assert_eq!(out.data["added"], json!(["bread"]), "case-insensitive duplicate, default = latest list");
    assert_eq!(out.data["already"], json!(["Milk"]));
    let out = call(&c, json!({"action": "remove", "name": "shopping", "items": ["EGGS", "caviar"]})).unwrap();
    assert_eq!(out.data["done"], json!(["eggs"]), "the stored item is reported");
    assert_eq!(out.data["missing"], json!(["caviar"]));
    call(&c, json!({"action": "check", "items": ["bread"]})).unwrap();
    let out = call(&c, json!({"action": "view"})).unwrap();
    assert_eq!(out.summary, "shopping (2): [ ] milk; [x] bread");
    let out = call(&c, json!({"action": "history", "name": "shopping"})).unwrap();
    assert_eq!(out.data["history"].as_array().unwrap().len(), 5);
}

#[test]
fn edge_cases() {
    let c = crate::store::open_in_memory().unwrap();
    assert!(matches!(call(&c, json!({"action": "view"})), Err(SkillError::NotFound(_))));
    assert!(matches!(call(&c, json!({"action": "add", "items": []})), Err(SkillError::Param { .. })));
    assert!(matches!(call(&c, json!({"action": "fly"})), Err(SkillError::Param { name: "action", .. })));
    call(&c, json!({"action": "create", "name": "books"})).unwrap();
    assert_eq!(call(&c, json!({"action": "view", "name": "books"})).unwrap().summary, "books is empty.");
    call(&c, json!({"action": "rename", "name": "books", "new_name": "reading list"})).unwrap();
    assert_eq!(call(&c, json!({"action": "list_all"})).unwrap().summary, "reading (0)");
    call(&c, json!({"action": "delete", "name": "reading"})).unwrap();
    assert_eq!(call(&c, json!({"action": "list_all"})).unwrap().summary, "No lists yet.");
}

#[test]
fn names_are_cleaned() {
    assert_eq!(clean_name("my Shopping List"), "shopping");
    assert_eq!(clean_name("the list"), DEFAULT_LIST);
    assert_eq!(clean_name("Packing"), "packing");
}

fn contents_of(c: &Connection, list: &str) -> Vec<String> {
    let out = call(c, json!({"action": "view", "name": list})).unwrap();
    out.data["items"].as_array().unwrap().iter().map(|i| i["content"].as_str().unwrap().to_string()).collect()
}

#[test]
fn items_are_named_the_way_people_say_them() {
    let c = crate::store::open_in_memory().unwrap();
    call(&c, json!({"action": "add", "name": "shopping", "items": ["bread", "oat milk", "Tomatoes", "eggs"]})).unwrap();
    let out = call(&c, json!({"action": "remove", "name": "shopping", "items": ["the bread", "milk"]})).unwrap();
    assert_eq!(out.summary, "Removed bread and oat milk from shopping.");
    let out = call(&c, json!({"action": "check", "items": ["my tomato"]})).unwrap();
    assert_eq!(out.summary, "Checked off Tomatoes on shopping.");
    let out = call(&c, json!({"action": "uncheck", "items": ["TOMATOES"]})).unwrap();
    assert_eq!(out.data["done"], json!(["Tomatoes"]));
    let out = call(&c, json!({"action": "add", "items": ["the egg", "an onion"]})).unwrap();
    assert_eq!((out.data["added"].clone(), out.data["already"].clone()), (json!(["an onion"]), json!(["the egg"])));
    assert_eq!(contents_of(&c, "shopping"), ["Tomatoes", "eggs", "an onion"]);
}

#[test]
fn an_ambiguous_item_asks_and_changes_nothing() {
    let c = crate::store::open_in_memory().unwrap();
    call(&c, json!({"action": "add", "name": "shopping", "items": ["oat milk", "almond milk", "eggs"]})).unwrap();
    for action in ["remove", "check"] {
        let out = call(&c, json!({"action": action, "items": ["eggs", "milk"]})).unwrap();
        assert_eq!(out.summary, "Which one: oat milk or almond milk?");
        assert_eq!(out.choices, ["oat milk", "almond milk"]);
        assert_eq!(out.data["unclear"][0]["item"], "milk");
    }
    assert_eq!(contents_of(&c, "shopping"), ["oat milk", "almond milk", "eggs"], "not even the eggs");
    let items = call(&c, json!({"action": "view"})).unwrap().data["items"].clone();
    assert!(items.as_array().unwrap().iter().all(|i| i["checked"] == false), "{items}");
    let out = call(&c, json!({"action": "add", "items": ["dark chocolate", "milk chocolate"]})).unwrap();
    assert_eq!(out.data["added"].as_array().map(Vec::len), Some(2));
    let out = call(&c, json!({"action": "remove", "items": ["milk", "chocolate"]})).unwrap();
    assert_eq!(
        out.summary,
        "Which \"milk\": oat milk or almond milk? Which \"chocolate\": dark chocolate or milk chocolate?"
    );
}

#[test]
fn list_names_by_synonym_and_number() {
    let c = crate::store::open_in_memory().unwrap();
    call(&c, json!({"action": "add", "name": "shopping", "items": ["bread"]})).unwrap();
    call(&c, json!({"action": "add", "name": "to-do", "items": ["taxes"]})).unwrap();
    let out = call(&c, json!({"action": "add", "name": "my groceries list", "items": ["milk"]})).unwrap();
    assert_eq!(out.summary, "Added milk to shopping.");
    assert_eq!(
        call(&c, json!({"action": "view", "name": "grocery"})).unwrap().summary,
        "shopping (2): [ ] bread; [ ] milk"
    );
    let out = call(&c, json!({"action": "remove", "name": "tasks", "items": ["tax"]})).unwrap();
    assert_eq!(out.summary, "Removed taxes from to-do.");
    let lists = call(&c, json!({"action": "list_all"})).unwrap().data["lists"].clone();
    assert!(lists.as_array().unwrap().iter().any(|l| l["name"] == "to-do" && l["items"] == 0), "{lists}");
    assert_eq!(lists.as_array().map(Vec::len), Some(2), "no list was created for a synonym: {lists}");
    call(&c, json!({"action": "create", "name": "todos"})).unwrap();
    let out = call(&c, json!({"action": "view", "name": "tasks"})).unwrap();
    assert_eq!((out.summary.as_str(), out.choices.len()), ("Which list: to-do or todos?", 2));
    assert!(matches!(call(&c, json!({"action": "view", "name": "packing"})), Err(SkillError::NotFound(_))));
}

#[test]
fn every_action_word_parses_to_its_own_request() {
    let params = |action: &str| {
        json!({"action": action, "name": "Shopping list", "items": "eggs", "new_name": "food"})
            .as_object()
            .unwrap()
            .clone()
    };
    let mut seen = Vec::new();
    for word in ACTIONS {
        let request = ListRequest::parse(&params(word)).unwrap();
        let said = match &request {
            ListRequest::ListAll => "list_all",
            ListRequest::Create { name } => {
                assert_eq!(name, "shopping");
                "create"
            }
            ListRequest::On { list, op } => {
                assert_eq!(list.as_deref(), Some("shopping"));
                op.as_str()
            }
        };
        assert_eq!(said, word);
        assert!(!seen.contains(&request), "{word} parses like another action");
        seen.push(request);
        assert!(include_str!("../../../../../prompts/skills/list.md").contains(&format!("\"{word}\"")), "{word}");
    }
    assert_eq!(ListRequest::parse(&params("ADD")).unwrap(), ListRequest::parse(&params("add")).unwrap());
    let missing = json!({"name": "shopping"}).as_object().unwrap().clone();
    assert_eq!(
        ListRequest::parse(&missing).unwrap(),
        ListRequest::On { list: Some("shopping".into()), op: ListOp::View }
    );
}
