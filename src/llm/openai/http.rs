//! The HTTP side of the OpenAI-compatible provider: the transport, the request body, error
//! text, model listing, and how a streamed chunk's log-probabilities become tokens.

use super::*;

/// The model ids an OpenAI-compatible server lists at `GET {base_url}/models`, or
/// `None` if nothing usable answers within `timeout`. Finds a local Ollama (and what
/// it can run) without configuration.
pub async fn list_models(base_url: &str, timeout: Duration) -> Option<Vec<String>> {
    let url = format!("{}/models", base_url.trim_end_matches('/'));
    let http =
        reqwest::Client::builder().connect_timeout(timeout.min(CONNECT_TIMEOUT)).timeout(timeout).build().ok()?;
    let response = tokio::time::timeout(timeout, http.get(url).send()).await.ok()?.ok()?;
    if response.status() != reqwest::StatusCode::OK {
        return None;
    }
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.ok()?).ok()?;
    let ids = body.get("data")?.as_array()?.iter().filter_map(|m| m.get("id")?.as_str().map(str::to_string));
    Some(ids.collect())
}

/// The transport installed in async-openai: one attempt, no retry, and every non-2xx
/// answer returned as an `ApiError` carrying its status and raw body.
pub(super) async fn send(
    http: reqwest::Client,
    factory: HttpRequestFactory,
    has_key: bool,
) -> Result<reqwest::Response, OpenAIError> {
    let mut request = factory.build().await?;
    if !has_key {
        // async-openai always sends `Bearer <key>`; with no key that would be `Bearer `,
        // which some proxies reject while the servers themselves would have let it through.
        request.headers_mut().remove(reqwest::header::AUTHORIZATION);
    }
    let response = http.execute(request).await?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    // async-openai's error has no room for headers: a 429's `Retry-After` (as seconds)
    // travels in `code`, which this transport never fills otherwise ([`retry_after`]).
    let code = (status == reqwest::StatusCode::TOO_MANY_REQUESTS)
        .then(|| {
            let value = response.headers().get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
            retry_after_seconds(value, chrono::Utc::now())
        })
        .flatten()
        .map(|s| format!("{RETRY_AFTER_CODE}{s}"));
    let body = response.text().await.unwrap_or_default();
    Err(OpenAIError::ApiError(ApiErrorResponse {
        status_code: status,
        api_error: ApiError { message: body, code, ..ApiError::default() },
    }))
}

const RETRY_AFTER_CODE: &str = "retry-after:";

/// A `Retry-After` value as seconds from `now`: either form RFC 9110 allows, delay-seconds
/// or an HTTP-date (IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`, which RFC 2822's grammar
/// reads), rounded up; a date already past is no wait. Anything else is `None`, and the
/// exponential backoff applies.
pub fn retry_after_seconds(value: &str, now: chrono::DateTime<chrono::Utc>) -> Option<u64> {
    let value = value.trim();
    if let Ok(s) = value.parse::<u64>() {
        return Some(s);
    }
    let when = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let ms = (when.with_timezone(&chrono::Utc) - now).num_milliseconds().max(0);
    Some((ms as u64).div_ceil(1000))
}

/// The `Retry-After` seconds [`send`] put into an error's `code`, if any.
pub(super) fn retry_after(api_error: &ApiError) -> Option<u64> {
    api_error.code.as_deref()?.strip_prefix(RETRY_AFTER_CODE)?.parse().ok()
}

pub(super) fn request_body(model: &str, req: &ChatRequest, logprobs: bool, schema: bool) -> Value {
    let mut body = json!({
        "model": model,
        "messages": wire_messages(req),
        "stream": true,
        "stream_options": { "include_usage": true },
        // Not `max_completion_tokens`: Ollama and older llama.cpp builds ignore it.
        "max_tokens": req.max_tokens,
        // Through the decimal string, so 0.7 goes out as 0.7 rather than 0.699999988079071.
        "temperature": req.temperature.to_string().parse::<f64>().unwrap_or(f64::from(req.temperature)),
    });
    if !req.stop.is_empty() {
        body["stop"] = json!(req.stop);
    }
    if logprobs {
        body["logprobs"] = json!(true);
    }
    match &req.format {
        ResponseFormat::Text => {}
        ResponseFormat::JsonSchema { name, schema: json_schema } if schema => {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": { "name": name, "schema": json_schema, "strict": true },
            });
        }
        ResponseFormat::JsonObject | ResponseFormat::JsonSchema { .. } => {
            body["response_format"] = json!({ "type": "json_object" });
        }
    }
    body
}

/// The messages as a server gets them: every system message merged, in order, into one that
/// comes first. The reply prompt carries three (the persona first, the mode's prompt before the
/// message, the turn's sections after it: the built-in model's cache layout, `prompts`), and
/// many chat templates (Llama 2 and Mistral style, Gemma, some served by vLLM or llama.cpp)
/// reject a system message anywhere but first. The cost: a server's own prefix cache serves
/// the merged message up to its first change from turn to turn (the sections), not the turns
/// after it. Folding the later ones into user messages instead would keep that cache but
/// present the engine's instructions as the user's words.
pub(super) fn wire_messages(req: &ChatRequest) -> Vec<Value> {
    let system: Vec<&str> =
        req.messages.iter().filter(|m| m.role == ChatRole::System).map(|m| m.content.as_str()).collect();
    let first = (!system.is_empty()).then(|| json!({ "role": "system", "content": system.join("\n\n") }));
    let rest = req.messages.iter().filter(|m| m.role != ChatRole::System).map(|m| {
        let role = if m.role == ChatRole::User { "user" } else { "assistant" };
        json!({ "role": role, "content": m.content })
    });
    first.into_iter().chain(rest).collect()
}

/// The human part of an error body: OpenAI and Ollama nest it as `error.message`, vLLM
/// puts `message` at the top, some servers send `error` as a bare string, others plain text.
pub(super) fn error_message(body: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return body.to_string();
    };
    let found = value
        .pointer("/error/message")
        .or_else(|| value.get("message"))
        .or_else(|| value.get("error"))
        .and_then(Value::as_str);
    found.unwrap_or(body).to_string()
}

pub(super) fn names_missing_model(body: &str) -> bool {
    let body = body.to_lowercase();
    body.contains("model")
        && ["not found", "not_found", "does not exist", "no such model", "not available"]
            .iter()
            .any(|w| body.contains(w))
}

/// reqwest's own message is "error sending request for url (...)"; the useful part, such
/// as "Connection refused", is at the bottom of the source chain.
pub(super) fn innermost_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

pub(super) fn estimate_tokens(chars: usize) -> u32 {
    u32::try_from(chars.div_ceil(4)).unwrap_or(u32::MAX)
}

impl ChoiceLogprobs {
    /// A chunk may carry several tokens. When the server names them and they spell the piece,
    /// each is its own token with its own log-probability (the regulator's spans land on the
    /// right characters); otherwise the piece is one token carrying the mean of its tokens'
    /// values, so a mean over tokens stays a per-token mean (a sum would count a three-token
    /// piece's uncertainty three times).
    pub(super) fn split(lp: Option<ChoiceLogprobs>, piece: String) -> Vec<Token> {
        let entries = lp.and_then(|l| l.content).unwrap_or_default();
        let named = entries.len() > 1
            && entries.iter().all(|e| e.token.is_some() && e.logprob.is_some())
            && entries.iter().filter_map(|e| e.token.as_deref()).collect::<String>() == piece;
        if named {
            return entries
                .into_iter()
                .map(|e| Token { text: e.token.unwrap_or_default(), logprob: e.logprob })
                .collect();
        }
        let values: Vec<f64> = entries.into_iter().filter_map(|t| t.logprob).collect();
        let logprob = (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64);
        vec![Token { text: piece, logprob }]
    }
}

#[cfg(test)]
mod logprob_tests {
    use super::*;

    fn entries(parts: &[(&str, f64)]) -> Option<ChoiceLogprobs> {
        Some(ChoiceLogprobs {
            content: Some(
                parts.iter().map(|(t, lp)| TokenLogprob { token: Some(t.to_string()), logprob: Some(*lp) }).collect(),
            ),
        })
    }

    #[test]
    fn a_chunk_of_named_tokens_splits_into_them() {
        let got = ChoiceLogprobs::split(entries(&[("Zan", -3.0), ("zibar", -1.0)]), "Zanzibar".into());
        assert_eq!(
            got,
            [Token { text: "Zan".into(), logprob: Some(-3.0) }, Token { text: "zibar".into(), logprob: Some(-1.0) }]
        );
        // Tokens that do not spell the piece: one token with the per-token mean, not the sum.
        let got = ChoiceLogprobs::split(entries(&[("Zan", -3.0), ("zi", -1.0)]), "Zanzibar".into());
        assert_eq!(got, [Token { text: "Zanzibar".into(), logprob: Some(-2.0) }]);
        assert_eq!(ChoiceLogprobs::split(None, "a".into()), [Token { text: "a".into(), logprob: None }]);
    }
}

#[cfg(test)]
mod retry_after_tests {
    use super::retry_after_seconds;
    use chrono::{TimeZone, Utc};

    #[test]
    fn both_forms_of_retry_after_are_read() {
        let now = Utc.with_ymd_and_hms(2026, 11, 25, 8, 49, 7).unwrap();
        assert_eq!(retry_after_seconds(" 7 ", now), Some(7));
        assert_eq!(retry_after_seconds("Wed, 25 Nov 2026 08:49:37 GMT", now), Some(30));
        // Rounded up: a wait of 29.5 s is 30 s, never early into the server's limit.
        let half = now + chrono::Duration::milliseconds(500);
        assert_eq!(retry_after_seconds("Wed, 25 Nov 2026 08:49:37 GMT", half), Some(30));
        assert_eq!(retry_after_seconds("Wed, 25 Nov 2026 08:48:00 GMT", now), Some(0), "a past date is no wait");
        assert_eq!(retry_after_seconds("soon", now), None);
        assert_eq!(retry_after_seconds("-3", now), None);
    }
}

#[cfg(test)]
mod wire_tests {
    use super::wire_messages;
    use crate::llm::{ChatRequest, Message};
    use serde_json::json;

    #[test]
    fn a_server_gets_one_system_message_first_and_the_turns_in_order() {
        let req = ChatRequest::new(vec![
            Message::system("persona"),
            Message::user("hi"),
            Message::assistant("hello"),
            Message::system("answer directly"),
            Message::user("and now?"),
            Message::system("Facts:\n- a: b"),
        ]);
        assert_eq!(
            wire_messages(&req),
            [
                json!({"role": "system", "content": "persona\n\nanswer directly\n\nFacts:\n- a: b"}),
                json!({"role": "user", "content": "hi"}),
                json!({"role": "assistant", "content": "hello"}),
                json!({"role": "user", "content": "and now?"}),
            ]
        );
        let bare = ChatRequest::new(vec![Message::user("hi")]);
        assert_eq!(wire_messages(&bare), [json!({"role": "user", "content": "hi"})]);
    }
}
