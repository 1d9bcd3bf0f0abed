//! The built-in chat model, for real: SmolLM2-135M through llama.cpp on the CPU.
//! The models are fetched first through the project's own fetch step.

use crate::support::models;
use chalie::llm::local::{CHAT_MODEL, LocalChat, LocalProvider};
use chalie::llm::{ChatRequest, LlmError, Message, PromptKind, Provider, ResponseFormat};
use std::sync::OnceLock;
use tokio::sync::{Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;

/// One fetch per test process, and one model load. The model keeps its KV cache and the last
/// call's stats, so each test holds it throughout: under `cargo test` the tests run on threads
/// of one process, and another test's call in between would change what a test reads.
async fn chat() -> MutexGuard<'static, LocalChat> {
    static CHAT: OnceLock<Mutex<LocalChat>> = OnceLock::new();
    let chat = CHAT.get_or_init(|| {
        let dir = models::fetched();
        let path = dir.join(CHAT_MODEL).join("SmolLM2-135M-Instruct.Q4_1.gguf");
        Mutex::new(LocalChat::load(&path).expect("load SmolLM2"))
    });
    chat.lock().await
}

fn ask(system: &str, user: &str) -> ChatRequest {
    let mut r = ChatRequest::new(vec![Message::system(system), Message::user(user)]);
    r.temperature = 0.0;
    r.max_tokens = 48;
    r
}

#[tokio::test]
async fn answers_the_capital_of_france_with_paris() {
    let mut streamed = String::new();
    let c = chat()
        .await
        .generate(
            &ask("You are a helpful assistant.", "What is the capital of France?"),
            &mut |t| streamed.push_str(&t.text),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(c.text.contains("Paris"), "{:?}", c.text);
    assert_eq!(streamed, c.text);
    assert!(c.tokens_in > 10 && c.tokens_out > 0);
}

#[tokio::test]
async fn reuses_the_cached_prompt_prefix() {
    let system = "You are Chalie, a calm and precise personal assistant. ".repeat(12);
    let chat = chat().await;
    chat.generate(&ask(&system, "Name a colour."), &mut |_| {}, &CancellationToken::new()).await.unwrap();
    chat.generate(&ask(&system, "Name a fruit."), &mut |_| {}, &CancellationToken::new()).await.unwrap();
    let s = chat.last_stats();
    // Everything up to the changed user message came from the cache.
    assert!(s.reused_tokens > 100, "{s:?}");
    assert!(s.reused_tokens < s.prompt_tokens);
}

#[tokio::test]
async fn json_requests_yield_parseable_json() {
    let mut r = ask("Reply with a JSON object with keys \"city\" and \"country\".", "Where is the Eiffel Tower?");
    r.format = ResponseFormat::JsonObject;
    r.max_tokens = 64;
    let c = chat().await.generate(&r, &mut |_| {}, &CancellationToken::new()).await.unwrap();
    let v: serde_json::Value = serde_json::from_str(c.text.trim()).unwrap_or_else(|e| panic!("{e}: {:?}", c.text));
    assert!(v.is_object());
}

#[tokio::test]
async fn stops_when_cancelled() {
    let cancel = CancellationToken::new();
    cancel.cancel();
    let chat = chat().await;
    let r = chat.generate(&ask("You are helpful.", "Tell me a long story."), &mut |_| {}, &cancel).await;
    assert!(matches!(r, Err(LlmError::Cancelled)), "{r:?}");
    // And the engine still works afterwards.
    chat.generate(&ask("You are helpful.", "Say hi."), &mut |_| {}, &CancellationToken::new()).await.unwrap();
}

#[tokio::test]
async fn the_provider_rejects_unknown_models_and_missing_files_clearly() {
    let empty = tempfile::tempdir().unwrap();
    let p = LocalProvider::new("local", empty.path());
    let r = p.chat("gpt-9", &ask("s", "u"), &mut |_| {}, &CancellationToken::new()).await;
    assert!(matches!(&r, Err(LlmError::ModelUnavailable { detail, .. }) if detail.contains(CHAT_MODEL)), "{r:?}");
    let r = p.chat(CHAT_MODEL, &ask("s", "u"), &mut |_| {}, &CancellationToken::new()).await;
    assert!(matches!(&r, Err(LlmError::ModelUnavailable { detail, .. }) if detail.contains("models fetch")), "{r:?}");
}

/// Log-probabilities come with every piece when asked for, and are not computed otherwise
/// (then the pieces may arrive merged, and still spell the reply).
#[tokio::test]
async fn logprobs_only_when_requested() {
    let chat = chat().await;
    let mut with = Vec::new();
    let c = chat
        .generate(&ask("Be brief.", "Name three colours."), &mut |t| with.push(t), &CancellationToken::new())
        .await
        .unwrap();
    assert!(!with.is_empty() && with.iter().all(|t| t.logprob.is_some_and(|l| l <= 0.0)), "{with:?}");
    assert_eq!(with.iter().map(|t| t.text.as_str()).collect::<String>(), c.text);

    let mut req = ask("Be brief.", "Name three colours.");
    req.logprobs = false;
    let mut without = Vec::new();
    let c = chat.generate(&req, &mut |t| without.push(t), &CancellationToken::new()).await.unwrap();
    assert!(!without.is_empty() && without.iter().all(|t| t.logprob.is_none()), "{without:?}");
    assert_eq!(without.iter().map(|t| t.text.as_str()).collect::<String>(), c.text);
}

/// A conversation prompt: persona, earlier turns, the turn's instructions, the message.
fn conversation(turns: usize, message: &str) -> ChatRequest {
    let mut m = vec![Message::system("You are Chalie, a calm and precise personal assistant. ".repeat(6))];
    for i in 0..turns {
        m.push(Message::user(format!("Tell me fact number {i} about the sea.")));
        m.push(Message::assistant(format!("Fact {i}: the sea covers most of the planet and is salty.")));
    }
    m.push(Message::system("Answer the user's message directly."));
    m.push(Message::user(message));
    let mut r = ChatRequest::new(m);
    r.kind = PromptKind::Conversation;
    r.temperature = 0.0;
    r.max_tokens = 8;
    r
}

/// A helper call in between (another system prompt) keeps its own KV sequence, so the
/// conversation's prefix is still there for the next reply.
#[tokio::test]
async fn a_helper_call_does_not_evict_the_conversation_prefix() {
    let chat = chat().await;
    let none = CancellationToken::new();
    chat.generate(&conversation(2, "Name a colour."), &mut |_| {}, &none).await.unwrap();
    let helper = ask("Reply with one word.", "Is water wet?");
    chat.generate(&helper, &mut |_| {}, &none).await.unwrap();
    assert_eq!(chat.last_stats().kind, PromptKind::Helper);
    let c = chat.generate(&conversation(2, "Name a fruit."), &mut |_| {}, &none).await.unwrap();
    let s = chat.last_stats();
    assert_eq!(s.kind, PromptKind::Conversation);
    // Everything up to the changed message came from the cache.
    assert!(s.reused_tokens + 20 > s.prompt_tokens && s.reused_tokens < s.prompt_tokens, "{s:?}");
    assert!(c.tokens_out > 0);
}

/// What a prefill decodes ahead (the conversation and the start of the turn's instructions)
/// is what the next call of that kind finds cached.
#[tokio::test]
async fn a_prefill_serves_the_next_prompt_and_changes_no_answer() {
    let chat = chat().await;
    let none = CancellationToken::new();
    let full = conversation(3, "Which ocean is the largest?");
    // Cold: another conversation took the sequence, so little is shared.
    chat.generate(&ask("Unrelated.", "x"), &mut |_| {}, &none).await.unwrap();
    let mut other = conversation(0, "Hi.");
    other.messages[0].content = "Something else entirely.".into();
    chat.generate(&other, &mut |_| {}, &none).await.unwrap();
    chat.generate(&full, &mut |_| {}, &none).await.unwrap();
    let cold_reused = chat.last_stats().reused_tokens;

    chat.generate(&other, &mut |_| {}, &none).await.unwrap();
    let mut prefix = full.clone();
    prefix.messages.truncate(prefix.messages.len() - 1);
    chat.prefill(&prefix).unwrap();
    chat.idle().await.unwrap();
    let warm = chat.generate(&full, &mut |_| {}, &none).await.unwrap();
    let s = chat.last_stats();
    assert!(s.reused_tokens > cold_reused + 50, "cold {cold_reused}, warm {s:?}");
    // Only the message's own tokens (and the template around it) were left to decode.
    assert!(s.prompt_tokens - s.reused_tokens < 24, "{s:?}");
    assert!(warm.tokens_out > 0);
}

/// A call that arrives while a long prefill runs is served (the prefill gives way), and the
/// sequences stay usable afterwards.
#[tokio::test]
async fn a_call_during_a_prefill_is_answered() {
    let chat = chat().await;
    let none = CancellationToken::new();
    let long = conversation(40, "And the deepest?");
    chat.prefill(&long).unwrap();
    let c = chat.generate(&ask("Be brief.", "Say hi."), &mut |_| {}, &none).await.unwrap();
    assert!(c.tokens_out > 0);
    let c = chat.generate(&long, &mut |_| {}, &none).await.unwrap();
    assert!(c.tokens_out > 0);
    chat.idle().await.unwrap();
}

/// The message decoded while it is typed (`prompts::conversation_prefix` with a draft: the
/// prompt up to the message's end, then the reply's header, open) leaves one token to decode
/// at Enter; a draft that changed before Enter is decoded again from where it differs.
#[tokio::test]
async fn a_typed_draft_leaves_one_token_at_enter_and_a_changed_one_is_decoded_again() {
    let chat = chat().await;
    let none = CancellationToken::new();
    let typed = |text: &str| {
        let mut r = conversation(3, text);
        r.messages.push(Message::assistant(""));
        r
    };
    let full = conversation(3, "Which ocean is the largest?");
    chat.prefill(&typed("Which ocean is the largest?")).unwrap();
    chat.idle().await.unwrap();
    let c = chat.generate(&full, &mut |_| {}, &none).await.unwrap();
    let s = chat.last_stats();
    // The last prompt token is always decoded again, for the logits the reply starts from.
    assert_eq!(s.reused_tokens + 1, s.prompt_tokens, "{s:?}");
    assert!(c.tokens_out > 0);

    chat.prefill(&typed("Which sea is the warmest?")).unwrap();
    chat.idle().await.unwrap();
    chat.generate(&full, &mut |_| {}, &none).await.unwrap();
    let changed = chat.last_stats();
    assert_eq!(changed.prompt_tokens, s.prompt_tokens);
    // "ocean is the largest?", the message's end and the reply's header: decoded at Enter.
    assert!(changed.prompt_tokens - changed.reused_tokens > 8, "{changed:?}");
}

/// Through the engine on the built-in models: a draft handed over as the message is then sent
/// is decoded ahead with the sections its turn adds (a preview of the turn's stages), so the
/// reply decodes one token at Enter; and the preview leaves the database as it found it (no
/// topic row, no detector state, no trait, no adaptive state).
#[tokio::test]
async fn a_whole_draft_is_decoded_ahead_with_its_sections_and_its_preview_writes_nothing() {
    use chalie::cognition::pipeline::Engine;
    use chalie::config::{Config, Role};
    use chalie::events::EventBus;
    use chalie::llm::local::EMBED_MODEL;
    use chalie::llm::{Llm, Route};
    use chalie::store::{ChatRepo, Db};
    use std::sync::Arc;

    let dir = tokio::task::spawn_blocking(models::fetched).await.unwrap();
    let bus = EventBus::new();
    let local = Arc::new(LocalProvider::new("local", &dir));
    let routes = Role::ALL.map(|role| {
        let model = if role == Role::Embedding { EMBED_MODEL } else { CHAT_MODEL };
        (role, Route { provider: local.clone(), model: model.into(), builtin: true })
    });
    let llm = Arc::new(Llm::new(bus.clone(), Config::defaults().llm, routes));
    let db = Db::spawn(chalie::store::open_in_memory().unwrap());
    let engine = Engine::start(db.clone(), llm, bus.clone()).await.unwrap();
    let thread = "draft-thread".to_string();
    let none = CancellationToken::new();
    let send = |i: usize, text: &'static str| {
        let (db, engine, thread, none) = (db.clone(), &engine, thread.clone(), none.clone());
        async move {
            let (t, x, body) = (thread.clone(), format!("x{i}"), text.to_string());
            db.call(move |c| ChatRepo(c).append(&t, &x, "user", &body, None, None)).await.unwrap();
            engine.turn(&thread, &format!("x{i}"), text, &none).await.unwrap()
        }
    };
    // A template greets a name; the next reply loads the chat model.
    send(0, "My name is Ada.").await;
    send(1, "I'm planning a trip to Lisbon in October with my sister and we love old churches.").await;
    assert!(local.last_chat_stats().is_some(), "the chat model is loaded");
    // A trait: the reply prompt has a section after the message ("What you know about the user").
    let traits = db.call(|c| chalie::store::TurnRepo(c).traits()).await.unwrap();
    assert!(!traits.is_empty(), "the name is a trait");
    // Every table's rows (the jobs queue aside, which nothing here touches).
    let state = |db: Db| async move { db.call(|c| Ok(chalie::store::export::export(c)?.tables)).await.unwrap() };
    let before = state(db.clone()).await;
    let next = "Which old churches in Lisbon should we see on our first afternoon there?";
    engine.prefill_draft(Some(&thread), next).await;
    local.chat_idle().await.unwrap();
    assert!(state(db.clone()).await == before, "the preview wrote nothing");

    let r = send(2, next).await;
    let s = local.last_chat_stats().unwrap();
    assert_eq!(r.reply_source, chalie::cognition::reply::ReplySource::Model, "{r:?}");
    assert_eq!(s.kind, PromptKind::Conversation);
    // The last prompt token is always decoded again, for the logits the reply starts from.
    assert_eq!(s.reused_tokens + 1, s.prompt_tokens, "the sections were decoded ahead: {s:?}");
}
