//! Episodes written by the model (seed 001 phase D, parameters §6.2; docs/cognition.md §16.4):
//! when the lightweight model is an endpoint (`[llm] memory_extraction`) and the conversation
//! is dense enough to be worth a call, the model writes the episode (its gist, intent,
//! emotion, open loops and salience factors) in strict JSON. The deterministic draft of
//! [`super::episodic::build_episode`] is always built first and stands when the model is
//! not asked, times out or answers unusably; the episode's `context.builder` records which
//! one wrote it and why.
//!
//! Pure: counts in, the trigger out; the model's object in, the merged draft out. [`write`]
//! does the reads and the call for the episodic worker.

use super::episodic::{EpisodeDraft, SalienceFactors};
use crate::llm::{ChatRequest, Message, ResponseFormat};
use crate::text::clip::clip;
use serde_json::{Value, json};
use std::time::Duration;

/// The density at or above which the model writes the episode.
pub const DENSITY_TRIGGER: f64 = 0.5;
/// … and only from this many exchanges of the thread on.
pub const MIN_EXCHANGES: usize = 3;
/// How long the model may take before the draft stands.
pub const EPISODE_TIMEOUT: Duration = Duration::from_secs(15);
/// The longest gist kept from the model.
pub const GIST_MAX_CHARS: usize = 400;

pub const INTENT_TYPES: [&str; 8] = [
    "exploration",
    "confirmation",
    "problem-solving",
    "planning",
    "reflection",
    "reframing",
    "evaluation",
    "recreational",
];
pub const DIRECTIONS: [&str; 4] = ["open-ended", "narrowing", "decision-making", "sense-making"];

pub const EPISODE_PROMPT: &str = include_str!("../../prompts/memory/episode.md");

/// `0.4·min(gists/8,1) + 0.3·min(facts/6,1) + 0.15·min(traits/3,1) + 0.15·min(emotions/3,1)`.
pub fn density(gists: usize, facts: usize, traits: usize, emotions: usize) -> f64 {
    let part = |n: usize, cap: f64| (n as f64 / cap).min(1.0);
    0.4 * part(gists, 8.0) + 0.3 * part(facts, 6.0) + 0.15 * part(traits, 3.0) + 0.15 * part(emotions, 3.0)
}

/// Whether this exchange's episode is worth a model call.
pub fn triggered(density: f64, exchanges: usize) -> bool {
    density >= DENSITY_TRIGGER && exchanges >= MIN_EXCHANGES
}

/// The strict schema of the model's episode.
pub fn schema() -> Value {
    let factor = json!({"type": "integer", "minimum": 0, "maximum": 3});
    json!({
        "type": "object",
        "required": ["gist", "intent", "salience_factors"],
        "properties": {
            "gist": {"type": "string"},
            "intent": {
                "type": "object",
                "required": ["type", "direction"],
                "properties": {
                    "type": {"type": "string", "enum": INTENT_TYPES},
                    "direction": {"type": "string", "enum": DIRECTIONS}
                }
            },
            "emotion": {},
            "open_loops": {"type": "array", "items": {"type": "string"}},
            "salience_factors": {
                "type": "object",
                "required": ["novelty", "emotional", "commitment", "unresolved"],
                "properties": {
                    "novelty": factor, "emotional": factor, "commitment": factor,
                    "unresolved": {"type": "boolean"}
                }
            }
        }
    })
}

/// The request: the exchange and the topic's live gists, for context.
pub fn request(user: &str, reply: &str, gists: &[String]) -> ChatRequest {
    let mut text = format!("User: {}\nAssistant: {}", clip(user, 600), clip(reply, 400));
    if !gists.is_empty() {
        text.push_str(&format!("\nWhat the conversation established: {}", gists.join("; ")));
    }
    let mut req = ChatRequest::new(vec![Message::system(EPISODE_PROMPT.trim()), Message::user(text)]);
    req.max_tokens = 300;
    req.temperature = 0.1;
    req.logprobs = false;
    req.format = ResponseFormat::JsonSchema { name: "episode".into(), schema: schema() };
    req
}

/// The model's episode, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelEpisode {
    pub gist: String,
    pub intent: Value,
    pub emotion: Option<Value>,
    pub open_loops: Vec<String>,
    pub factors: SalienceFactors,
}

/// Read the model's object; anything off the schema makes it unusable (the draft stands).
pub fn parse(v: &Value) -> Result<ModelEpisode, String> {
    let gist = v.get("gist").and_then(Value::as_str).map(str::trim).unwrap_or_default();
    let sentences = gist.split_terminator(['.', '!', '?']).filter(|s| !s.trim().is_empty()).count();
    if gist.len() < 10 || !(1..=3).contains(&sentences) {
        return Err(format!("the gist must be 1–3 sentences, got {sentences} in {} chars", gist.len()));
    }
    let intent = v.get("intent").ok_or("no intent")?;
    let kind = intent.get("type").and_then(Value::as_str).unwrap_or_default();
    let direction = intent.get("direction").and_then(Value::as_str).unwrap_or_default();
    if !INTENT_TYPES.contains(&kind) || !DIRECTIONS.contains(&direction) {
        return Err(format!("intent `{kind}`/`{direction}` is not in the vocabulary"));
    }
    let f = v.get("salience_factors").ok_or("no salience_factors")?;
    let factor = |k: &str| -> Result<u8, String> {
        match f.get(k).and_then(Value::as_u64) {
            Some(n) if n <= 3 => Ok(n as u8),
            _ => Err(format!("salience factor `{k}` must be 0–3")),
        }
    };
    let factors = SalienceFactors {
        novelty: factor("novelty")?,
        emotional: factor("emotional")?,
        commitment: factor("commitment")?,
        unresolved: f.get("unresolved").and_then(Value::as_bool).ok_or("`unresolved` must be a boolean")?,
    };
    let emotion = v.get("emotion").filter(|e| e.get("type").and_then(Value::as_str).is_some_and(|t| !t.is_empty()));
    let open_loops = v
        .get("open_loops")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(|s| clip(s.trim(), 160)).filter(|s| !s.is_empty()).collect())
        .unwrap_or_default();
    Ok(ModelEpisode {
        gist: clip(gist, GIST_MAX_CHARS),
        intent: json!({"type": kind, "direction": direction}),
        emotion: emotion.cloned(),
        open_loops,
        factors,
    })
}

/// The draft with the model's account in place of the rules' (salience from its factors by
/// the same formula, §9.2); the draft's ids, topic, action, outcome and time stay.
pub fn merge(mut draft: EpisodeDraft, m: ModelEpisode) -> EpisodeDraft {
    draft.gist = m.gist;
    draft.intent = m.intent;
    draft.emotion = m.emotion;
    draft.open_loops = m.open_loops;
    draft.factors = m.factors;
    draft.salience = m.factors.salience();
    draft.freshness = m.factors.score();
    set_builder(&mut draft, "model");
    draft
}

/// Record who wrote the episode (`model`, `rules`, or `rules (<why the model did not>)`).
pub fn set_builder(draft: &mut EpisodeDraft, builder: &str) {
    if let Some(obj) = draft.context.as_object_mut() {
        obj.insert("builder".into(), Value::String(builder.to_string()));
    }
}

/// The episode the worker stores: the model's when it is asked (an endpoint, a dense
/// conversation) and answers usably, otherwise `draft`, marked with the reason.
pub async fn write(
    db: &crate::store::Db,
    llm: &crate::llm::Llm,
    mut draft: EpisodeDraft,
    payload: &Value,
    shutdown: &tokio_util::sync::CancellationToken,
) -> EpisodeDraft {
    if !llm.memory_uses_model() {
        set_builder(&mut draft, "rules");
        return draft;
    }
    let topic = draft.topic.clone().unwrap_or_default();
    let thread = draft.thread_id.clone().unwrap_or_default();
    let exchange = draft.exchange_id.clone().unwrap_or_default();
    let now = crate::store::now_ts();
    let read = db
        .call(move |c| {
            let gists: Vec<String> = crate::store::GistsRepo(c)
                .for_context(&topic, now, 8)?
                .into_iter()
                .filter(|g| !g.cold_start)
                .map(|g| g.content)
                .collect();
            let facts = crate::store::FactsRepo(c).for_context(&topic, now, 6)?.len();
            let traits = usize::try_from(crate::store::TraitsRepo(c).count()?).unwrap_or(0);
            // This exchange and the thread's earlier ones (working memory keeps only four lines).
            let exchanges = crate::store::TurnRepo(c).message_times_before(&thread, &exchange)?.len() + 1;
            Ok((gists, facts, traits, exchanges))
        })
        .await;
    let (gists, facts, traits, exchanges) = match read {
        Ok(r) => r,
        Err(e) => {
            set_builder(&mut draft, &format!("rules (cannot read the topic: {})", crate::describe(&e)));
            return draft;
        }
    };
    // The exchange's own emotion factor stands in for the distinct emotions of the window.
    let d = density(gists.len(), facts, traits, usize::from(draft.factors.emotional));
    if !triggered(d, exchanges) {
        set_builder(&mut draft, "rules");
        return draft;
    }
    let user = payload["user_text"].as_str().unwrap_or_default();
    let reply = payload["response"].as_str().unwrap_or_default();
    let req = request(user, reply, &gists);
    let timeout = EPISODE_TIMEOUT.min(Duration::from_millis(llm.settings().request_timeout_ms));
    let role = crate::config::Role::Lightweight;
    let why = match llm.structured(role, &req, &schema(), timeout, shutdown).await {
        Ok(v) => match parse(&v) {
            Ok(m) => return merge(draft, m),
            Err(why) => format!("rules (model output unusable: {why})"),
        },
        Err(e) => format!("rules (model: {})", crate::describe(&e)),
    };
    tracing::info!(exchange_id = ?draft.exchange_id, "episode written by the rules: {why}");
    set_builder(&mut draft, &why);
    draft
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn density_follows_the_seed_formula() {
        assert!((density(8, 6, 3, 3) - 1.0).abs() < 1e-12);
        assert!((density(4, 3, 0, 0) - (0.2 + 0.15)).abs() < 1e-12);
        assert!((density(20, 0, 0, 0) - 0.4).abs() < 1e-12, "capped");
        assert!(triggered(0.5, 3));
        assert!(!triggered(0.49, 10));
        assert!(!triggered(0.9, 2), "too few exchanges");
    }

    fn good() -> Value {
        json!({
            "gist": "The user is planning a trip to Lisbon in May. They have not picked dates yet.",
            "intent": {"type": "planning", "direction": "decision-making"},
            "emotion": {"type": "excited", "valence": "positive", "intensity": 0.6, "arc": "rising"},
            "open_loops": ["pick travel dates"],
            "salience_factors": {"novelty": 2, "emotional": 1, "commitment": 1, "unresolved": true}
        })
    }

    #[test]
    fn the_models_episode_is_strict() {
        let m = parse(&good()).unwrap();
        assert_eq!(m.factors, SalienceFactors { novelty: 2, emotional: 1, commitment: 1, unresolved: true });
        assert_eq!(m.open_loops, ["pick travel dates"]);
        let mut bad = good();
        bad["salience_factors"]["novelty"] = json!(5);
        assert!(parse(&bad).unwrap_err().contains("novelty"));
        let mut bad = good();
        bad["intent"]["type"] = json!("chatting");
        assert!(parse(&bad).is_err());
        let mut bad = good();
        bad["gist"] = json!("One. Two. Three. Four.");
        assert!(parse(&bad).is_err(), "more than three sentences");
        let mut bad = good();
        bad["salience_factors"]["unresolved"] = json!("yes");
        assert!(parse(&bad).is_err());
        assert!(parse(&json!({"gist": "ok"})).is_err());
    }

    #[test]
    fn the_merge_takes_the_models_account_and_recomputes_salience() {
        let payload = json!({"thread_id": "t", "exchange_id": "x", "topic": "travel", "mode": "RESPOND",
            "user_text": "thinking about Lisbon", "response": "Nice.", "created_at": 5});
        let draft = super::super::episodic::build_episode(&payload).unwrap();
        let merged = merge(draft.clone(), parse(&good()).unwrap());
        assert!(merged.gist.starts_with("The user is planning a trip"));
        // s = (0.4·2/3 + 0.4·1/3 + 0.2·1/3)·1.25 = 0.5833 → 6
        assert_eq!(merged.salience, 6);
        assert!((merged.freshness - 0.583_333).abs() < 1e-3);
        assert_eq!((merged.exchange_id, merged.created_at), (draft.exchange_id, 5));
        assert_eq!(merged.context["builder"], "model");
        assert_eq!(merged.context["conversational"], "travel", "the draft's context is kept");
    }
}
