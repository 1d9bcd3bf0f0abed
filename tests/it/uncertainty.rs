//! The uncertainty engine end to end against the scripted OpenAI double: a fact is stated, then
//! changed, then asked about in a new thread; the prompt the model receives must carry the new
//! value, with the old one absent or marked as past. On the built-in path, memory's own answer
//! must give the current value. A change without a temporal marker is a contradiction: both
//! values reach the prompt flagged, and the record is raised when the topic comes back.

use crate::support::harness::*;
use crate::support::openai_double::Reply;
use chalie::config::{ModelUse, Role};
use chalie::llm::openai::OpenAiProvider;
use chalie::llm::{Llm, Route};
use std::sync::Arc;

/// (first statement, the change, the question in a new thread, new value, old value).
const CASES: &[(&str, &str, &str, &str, &str)] = &[
    (
        "My gym is Fitness First on Main Street",
        "I switched gyms, I go to Iron Works now",
        "which gym do I go to?",
        "Iron Works",
        "Fitness First",
    ),
    ("I live in Porto", "I moved to Lisbon", "where do I live?", "Lisbon", "Porto"),
    ("I live in Berlin", "We moved to Munich last spring", "which city is home for me?", "Munich", "Berlin"),
    ("I'm based in Toronto", "I relocated to Vancouver", "where am I based?", "Vancouver", "Toronto"),
    ("I work at Acme", "I switched jobs, I now work at Globex", "where do I work?", "Globex", "Acme"),
    ("I work for Hooli", "I joined Initech last week", "who employs me?", "Initech", "Hooli"),
    ("I work as a nurse", "I work as a paramedic now", "what do I do for work?", "paramedic", "nurse"),
    ("My manager is Sofia", "My new manager is Bruno", "who is my manager?", "Bruno", "Sofia"),
    ("My boss is Karen", "I now report to Dmitri", "who do I answer to?", "Dmitri", "Karen"),
    (
        "My phone number is 555-0100",
        "My phone number changed to 555-0199",
        "what's my phone number?",
        "555-0199",
        "555-0100",
    ),
    ("My number is 0781 234", "Update: my number is now 0799 876", "how can people call me?", "0799 876", "0781 234"),
    ("The meeting is on Friday", "The meeting was pushed back to Monday", "when is the meeting?", "Monday", "Friday"),
    ("The deadline is March 3", "The deadline was moved to March 17", "when is the deadline?", "March 17", "March 3"),
    (
        "My dentist appointment is at 10am",
        "My dentist appointment was rescheduled to 2pm",
        "when do I see the dentist?",
        "2pm",
        "10am",
    ),
    (
        "The wedding is on June 5",
        "The wedding was postponed to August 20",
        "when is the wedding?",
        "August 20",
        "June 5",
    ),
    ("The yoga class is on Tuesday", "The yoga class was moved to Thursday", "when is yoga?", "Thursday", "Tuesday"),
    (
        "My book club is on Wednesday",
        "My book club changed to Thursday evenings",
        "when is book club?",
        "Thursday",
        "Wednesday",
    ),
    ("I'm reading Dune", "I finished Dune and now I'm reading Foundation", "what book am I on?", "Foundation", "Dune"),
    (
        "I'm learning the violin",
        "I quit the violin and started learning guitar",
        "which instrument am I learning?",
        "guitar",
        "violin",
    ),
    (
        "I'm learning Spanish",
        "I stopped Spanish, now I'm learning Italian",
        "which language am I studying?",
        "Italian",
        "Spanish",
    ),
    ("I'm vegetarian", "I'm vegan now", "what should I cook tonight given my diet?", "vegan", "vegetarian"),
    ("I eat meat", "I no longer eat meat, I'm pescatarian now", "suggest a dinner for me", "pescatarian", "eats meat"),
    ("My girlfriend is Maya", "My partner is Alex now", "who is my partner?", "Alex", "Maya"),
    ("I drive a Honda Civic", "I now drive a Tesla", "what car do I drive?", "Tesla", "Honda"),
    ("My car is a Ford Focus", "My new car is a Mazda 3", "what do I drive?", "Mazda", "Ford"),
    (
        "My favourite band is Radiohead",
        "My favourite band is now Arctic Monkeys",
        "who is my favourite band?",
        "Arctic Monkeys",
        "Radiohead",
    ),
    ("My favourite food is sushi", "My favourite food is now ramen", "what food do I love most?", "ramen", "sushi"),
    ("My best friend is Tom", "My best friend is Priya these days", "who's my best friend?", "Priya", "Tom"),
    ("My doctor is Dr Silva", "My new doctor is Dr Costa", "who is my doctor?", "Costa", "Silva"),
    ("My landlord is Mr Okafor", "My new landlord is Mrs Lee", "who is my landlord?", "Lee", "Okafor"),
    ("My therapist is Dr Park", "Correction: my therapist is Dr Kim", "who is my therapist?", "Kim", "Park"),
    ("I train at Gold's Gym", "I switched gyms, I go to PureGym now", "where do I train?", "PureGym", "Gold's"),
    (
        "My email is ana@oldmail.com",
        "My new email is ana@newmail.com",
        "what's my email?",
        "ana@newmail.com",
        "ana@oldmail.com",
    ),
];

fn replies(n: usize) -> Vec<Reply> {
    (0..n).map(|_| Reply::text("Noted.")).collect()
}

/// Every line of the request that names `old` must mark it as past.
fn old_only_as_past(body: &str, old: &str) -> Result<(), String> {
    for line in body.lines() {
        if line.contains(old) && !line.contains("used to be") {
            return Err(format!("`{old}` as current: {line}"));
        }
    }
    Ok(())
}

#[tokio::test]
async fn after_a_change_a_new_thread_sees_the_current_value_and_the_old_one_only_as_past() {
    assert!(CASES.len() >= 30);
    let mut failures = Vec::new();
    for (i, (first, change, question, new, old)) in CASES.iter().enumerate() {
        let h = start_heuristic(replies(8)).await;
        let t = format!("before-{i}");
        h.say(&t, first).await;
        let changed = h.say(&t, change).await;
        let before = h.double.chat_requests().len();
        let asked = h.say(&format!("after-{i}"), question).await;
        let requests = h.double.chat_requests();
        // The model was asked (its prompt is checked), or memory answered (its reply is).
        let (body, messages) = match requests[before..].iter().rev().find(|r| matches!(kind(r), Call::Generation(_))) {
            Some(last) => {
                let msgs = last.body["messages"].as_array().cloned().unwrap_or_default();
                let body = msgs.iter().filter_map(|m| m["content"].as_str()).collect::<Vec<_>>().join("\n");
                // A new thread carries no earlier turn: its one non-system message is the question.
                (body, msgs.iter().filter(|m| m["role"] != "system").count())
            }
            None => (asked.response.clone(), 1),
        };
        if messages != 1 {
            failures.push(format!("{first}: the question's thread is not new ({messages} conversation messages)"));
        }
        if !body.contains(new) {
            failures.push(format!("{first} → {change}: `{new}` missing from the prompt:\n{body}"));
        }
        if let Err(e) = old_only_as_past(&body, old) {
            failures.push(format!("{first} → {change}: {e}"));
        }
        let temporal = changed.uncertainty.detected.iter().any(|u| u.state == "resolved");
        if !temporal {
            failures.push(format!("{change}: no resolved record ({:?})", changed.uncertainty));
        }
        assert!(asked.uncertainty.detected.is_empty(), "a question opens nothing");
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), CASES.len(), failures.join("\n"));
}

#[tokio::test]
async fn a_change_without_a_marker_is_a_contradiction_flagged_and_raised_on_topic() {
    let h = start_heuristic(replies(10)).await;
    h.say("a", "I live in Oslo").await;
    let r = h.say("a", "I live in Bergen").await;
    let rec = r.uncertainty.detected.first().expect("a record");
    assert_eq!((rec.kind.as_str(), rec.severity.as_str(), rec.state.as_str()), ("contradiction", "critical", "open"));
    assert!(rec.memory_b.is_some());
    let weave = crate::support::harness::system_prompt(h.double.chat_requests().last().unwrap());
    assert!(weave.contains("ask one short, natural question"), "woven into this reply: {weave}");

    let asked = h.say("b", "Any tips for finding a flat in my city?").await;
    let prompt = crate::support::harness::system_prompt(h.double.chat_requests().last().unwrap());
    for city in ["Oslo", "Bergen"] {
        let line = prompt.lines().find(|l| l.contains(city) && l.starts_with("- location")).unwrap_or_default();
        assert!(line.contains("contradicted"), "{city} flagged: {prompt}");
    }
    assert_eq!(asked.uncertainty.surfaced.len(), 1, "raised on its topic");
    assert_eq!(asked.uncertainty.surfaced[0].surfaced_count, 1);
    assert!(prompt.contains("disagree"), "{prompt}");

    let off = h.say("c", "Tell me a joke about penguins").await;
    assert!(off.uncertainty.surfaced.is_empty(), "not raised off topic");
    for n in 2..=3 {
        let again = h.say("b", "Is my city expensive to live in?").await;
        assert_eq!(again.uncertainty.surfaced.first().map(|u| u.surfaced_count), Some(n));
    }
    let last = h.say("b", "What about groceries in my city?").await;
    assert!(last.uncertainty.surfaced.is_empty(), "not raised a fourth time (anti-nag)");
    let severity = h.read(|c| Ok(chalie::store::open_uncertainties(c, 5)?[0].severity.clone())).await;
    assert_eq!(severity, "high", "and its severity stepped down one level");
}

/// The built-in path: the primary role is marked built-in, so a question about the user's own
/// traits is answered from memory without the model; it must give the current value.
#[tokio::test]
async fn memory_answers_give_the_current_value() {
    let double = crate::support::openai_double::Double::start(replies(20)).await;
    let db = chalie::store::Db::spawn(chalie::store::open_in_memory().unwrap());
    let bus = chalie::events::EventBus::new();
    let url = double.base_url();
    let routes = Role::ALL.map(|r| {
        (r, Route { provider: Arc::new(OpenAiProvider::new("double", &url, None)), model: "m".into(), builtin: true })
    });
    let llm = Llm::new(bus.clone(), settings(ModelUse::Heuristic), routes);
    let engine = chalie::cognition::pipeline::Engine::start(db.clone(), Arc::new(llm), bus.clone()).await.unwrap();
    let h = Harness { double, db, bus, engine };
    for (first, change, question, new, old) in [
        ("I live in Porto", "I moved to Lisbon", "where do I live?", "Lisbon", "Porto"),
        ("I work at Acme", "I switched jobs, I now work at Globex", "where do I work?", "Globex", "Acme"),
        ("My manager is Sofia", "My new manager is Bruno", "who is my manager?", "Bruno", "Sofia"),
        (
            "My gym is Fitness First",
            "I switched gyms, I go to Iron Works now",
            "which gym do I go to?",
            "Iron Works",
            "Fitness",
        ),
        (
            "My phone number is 555-0100",
            "My phone number changed to 555-0199",
            "what's my phone number?",
            "555-0199",
            "555-0100",
        ),
    ] {
        h.say("x", first).await;
        let r = h.say("x", change).await;
        // A change is acknowledged: the new value as current, the old one only as past; never
        // the no-action line, nor an old memory read back.
        assert!(!r.response.contains("couldn't turn that into an action"), "{change}: {}", r.response);
        assert!(r.response.contains(new), "{change}: {}", r.response);
        assert!(!r.response.contains(old) || r.response.contains(" any more"), "{change}: {}", r.response);
        let r = h.say("y", question).await;
        assert!(r.response.contains(new), "{question}: {}", r.response);
        assert!(!r.response.contains(old), "{question}: {}", r.response);
    }
}

/// With an endpoint (`[llm] memory_extraction` asks the model), a pre-screened pair the rules
/// cannot judge goes to the lightweight model; its strict-JSON verdict opens the record before
/// the reply (this message is answered from memory, so the weaving itself is checked on the
/// rules' path above).
#[tokio::test]
async fn with_an_endpoint_the_model_classifies_what_the_rules_cannot() {
    use chalie::store::{ConceptFields, ConceptsRepo, VecTable, VectorRepo};
    let mut s = settings(ModelUse::Heuristic);
    s.memory_extraction = ModelUse::Llm;
    let verdict = serde_json::json!({
        "classification": "true_contradiction", "confidence": 0.9, "temporal_signal": false,
        "reasoning": "the usual evening drink differs", "surface_context": "evening drinks",
        "recommended_resolution": "flag_response"
    });
    let mut script = vec![Reply::text(&verdict.to_string())];
    script.extend(replies(6));
    let h = start_custom(script, s, &[]).await;
    h.double.set_embedding_dim(chalie::store::EMBEDDING_DIM);
    let message = "These days it is black coffee every evening for me";
    let v = crate::support::openai_double::embedding_of_size(message, chalie::store::EMBEDDING_DIM);
    let concept = h
        .read(move |c| {
            let f = ConceptFields {
                name: "evening drink",
                concept_type: "fact",
                definition: "green tea every evening",
                abstraction_level: 2,
                domain: None,
            };
            let id = ConceptsRepo(c).insert(&f, "[]", 1)?;
            VectorRepo(c).upsert(VecTable::Concepts, id, &v)?;
            Ok(id)
        })
        .await;
    let r = h.say("t", message).await;
    let requests = h.double.chat_requests();
    assert!(
        system_prompt(&requests[0]).starts_with(chalie::memory::uncertainty::classifier::PROMPT.trim()),
        "the classifier is asked first"
    );
    let rec = r.uncertainty.detected.first().expect("the model's hit opens a record");
    assert_eq!(rec.memory_a, format!("concept:{concept}"));
    assert_eq!(rec.reasoning.as_deref(), Some("the usual evening drink differs"));
    assert_eq!(rec.surface_context.as_deref(), Some("evening drinks"));
    let state =
        h.read(move |c| Ok(chalie::store::memory_text(c, &format!("concept:{concept}"))?.and_then(|x| x.1))).await;
    assert_eq!(state.as_deref(), Some("contradicted"));
}

/// The reply asks about a clash; the user answers in chat. The answer resolves the record the
/// way the pane's 1/2/3 does; a message that answers nothing leaves it open.
#[tokio::test]
async fn an_answer_in_chat_settles_the_woven_question() {
    for (answer, winner, both_reliable) in
        [("the new one", "Bergen", false), ("I moved, yes", "Bergen", false), ("both are true", "Bergen", true)]
    {
        let h = start_heuristic(replies(10)).await;
        h.say("a", "I live in Oslo").await;
        let opened = h.say("a", "I live in Bergen").await;
        let id = opened.uncertainty.detected.first().expect("a record").id.clone();
        let weave = crate::support::harness::system_prompt(h.double.chat_requests().last().unwrap());
        assert!(weave.contains("ask one short, natural question"), "{weave}");
        let other = h.say("a", "Tell me a joke about penguins").await;
        assert!(other.uncertainty.resolved.is_empty(), "not an answer");
        let state = |id: String| async { h.read(move |c| chalie::store::UncertaintiesRepo(c).get(&id)).await };
        assert_eq!(state(id.clone()).await.unwrap().item.state, "open");

        let r = h.say("a", answer).await;
        assert_eq!(r.uncertainty.resolved.iter().map(|u| u.id.as_str()).collect::<Vec<_>>(), [id.as_str()], "{answer}");
        let rec = state(id.clone()).await.unwrap();
        assert_eq!((rec.item.state.as_str(), rec.resolution_strategy.as_deref()), ("resolved", Some("user_clarified")));
        let rows = h
            .read(|c| {
                Ok(chalie::store::TraitsRepo(c)
                    .rows_for_key("location")?
                    .into_iter()
                    .map(|(t, _)| (t.value, t.reliability))
                    .collect::<Vec<_>>())
            })
            .await;
        let of = |v: &str| rows.iter().find(|r| r.0 == v).map(|r| r.1.clone()).unwrap_or_default();
        assert_eq!(of(winner), "reliable", "{answer}: {rows:?}");
        assert_eq!(of("Oslo"), if both_reliable { "reliable" } else { "superseded" }, "{answer}: {rows:?}");
    }
}
