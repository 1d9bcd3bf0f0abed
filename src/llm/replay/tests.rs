use super::*;
use crate::llm::Message;

fn start(call: &str, role: Role, digest: &str) -> EngineEvent {
    EngineEvent::LlmStart {
        call_id: call.into(),
        role,
        provider: "p".into(),
        model: "m".into(),
        prompt_chars: 1,
        prompt_digest: digest.into(),
        origin: None,
    }
}

fn done(call: &str, text: &str) -> EngineEvent {
    EngineEvent::LlmComplete { call_id: call.into(), text: text.into() }
}

fn user(text: &str) -> EngineEvent {
    EngineEvent::UserMessage { thread_id: "t".into(), exchange_id: text.into(), text: text.into() }
}

fn req(text: &str) -> ChatRequest {
    ChatRequest::new(vec![Message::user(text)])
}

async fn chat(p: &ReplayProvider, r: &ChatRequest) -> (Result<Completion, LlmError>, Vec<Token>) {
    let mut tokens = Vec::new();
    let out = p.chat("m", r, &mut |t| tokens.push(t), &CancellationToken::new()).await;
    (out, tokens)
}

#[tokio::test]
async fn answers_by_digest_then_by_order_within_the_turn_then_fails() {
    let (a, b) = (req("a"), req("b"));
    let events = vec![
        user("one"),
        start("1", Role::Primary, &prompt_digest(&a)),
        EngineEvent::LlmToken { call_id: "1".into(), text: "A ".into(), logprob: Some(-0.5) },
        EngineEvent::LlmToken { call_id: "1".into(), text: "reply".into(), logprob: None },
        done("1", "A reply"),
        start("2", Role::Primary, &prompt_digest(&b)),
        done("2", "B reply"),
        user("two"),
        start("3", Role::Primary, "feedface"),
        done("3", "turn two"),
        // Never finished: not a recording.
        start("4", Role::Primary, "0000"),
    ];
    let book = Arc::new(ReplayBook::from_events(&events));
    assert_eq!(book.len(), 3);
    let p = ReplayProvider::new(Role::Primary, book.clone());
    book.begin_turn(1);

    // Out of order, yet each prompt gets its own recording, tokens and logprobs included.
    let (out, _) = chat(&p, &b).await;
    assert_eq!(out.unwrap().text, "B reply");
    let (out, tokens) = chat(&p, &a).await;
    assert_eq!(out.unwrap().text, "A reply");
    assert_eq!(tokens[0], Token { text: "A ".into(), logprob: Some(-0.5) });

    // A changed prompt in turn 1 finds nothing left in turn 1: it does not steal turn 2's.
    let (out, _) = chat(&p, &req("changed")).await;
    assert!(matches!(out, Err(LlmError::ModelUnavailable { .. })), "{out:?}");
    book.begin_turn(2);
    let (out, tokens) = chat(&p, &req("changed too")).await;
    assert_eq!(out.unwrap().text, "turn two", "matched by order within the turn");
    assert_eq!(tokens, [Token { text: "turn two".into(), logprob: None }]);
    assert_eq!(book.stats(), ReplayStats { exact: 2, by_order: 1, missing: 1 });
}

#[tokio::test]
async fn embeddings_and_failures_replay_as_recorded() {
    let inputs = vec!["hello".to_string()];
    let events = vec![
        user("hello"),
        start("e", Role::Embedding, &embed_digest(&inputs)),
        EngineEvent::LlmEmbedded { call_id: "e".into(), vectors: crate::events::PackedVectors(vec![vec![0.5, -1.0]]) },
        start("t", Role::Lightweight, "x"),
        EngineEvent::LlmFailed { call_id: "t".into(), error: "p is unreachable: refused".into(), will_retry: true },
        EngineEvent::LlmFailed {
            call_id: "t".into(),
            error: "p did not answer within 500 ms".into(),
            will_retry: false,
        },
    ];
    let book = Arc::new(ReplayBook::from_events(&events));
    book.begin_turn(1);
    let e = ReplayProvider::new(Role::Embedding, book.clone());
    assert_eq!(e.embed("m", &inputs).await.unwrap(), vec![vec![0.5, -1.0]]);
    assert!(e.embed("m", &inputs).await.is_err(), "each recording answers once");
    let l = ReplayProvider::new(Role::Lightweight, book.clone());
    let (out, _) = chat(&l, &req("x")).await;
    assert!(matches!(out, Err(LlmError::Timeout { .. })), "{out:?}");
    assert!(!recorded_failure("x is unreachable: y").is_retryable());
    assert!(!recorded_failure("x failed with HTTP 500: y").is_retryable());
}
