//! Cognitive triage without the model call: the reply contract, its post-processing,
//! the self-check rules and the keyword fallback (docs/cognition.md §3.2–§3.4).

use super::*;
pub use crate::vocab::triage::{Branch, Effort, TriageMode, TriageResult, TriageSource};

/// The cognitive primitives, always injected for ACT (docs/cognition.md §3.2).
pub const PRIMITIVES: [&str; 3] = ["recall", "memorize", "introspect"];
/// docs/cognition.md §3.2 skill whitelist.
pub const VALID_SKILLS: [&str; 12] = [
    "recall",
    "memorize",
    "introspect",
    "associate",
    "schedule",
    "list",
    "focus",
    "autobiography",
    "forget",
    "persistent_task",
    "document",
    "read",
];
/// Contextual skills after the primitives are capped at this many.
pub const MAX_CONTEXTUAL_SKILLS: usize = 3;
/// Tools per triage decision.
pub const MAX_TOOLS: usize = 3;
/// R2: freshness risk at or above this sends a factual RESPOND to ACT.
pub const FRESHNESS_ACT_THRESHOLD: f64 = 0.7;
/// R4: damping of `confidence_tool_need` when the same tool is re-selected right after ACT.
pub const REPEAT_TOOL_DAMPING: f64 = 0.7;
/// R4: below this (after damping) the result becomes RESPOND.
pub const REPEAT_TOOL_FLOOR: f64 = 0.4;

impl TriageMode {
    pub fn branch(self) -> Branch {
        match self {
            TriageMode::Respond => Branch::Respond,
            TriageMode::Clarify => Branch::Clarify,
            TriageMode::Act => Branch::Act,
            TriageMode::Acknowledge | TriageMode::Ignore | TriageMode::Cancel => Branch::Social,
        }
    }

    /// The router mode, or `None` for CANCEL.
    pub fn as_mode(self) -> Option<Mode> {
        match self {
            TriageMode::Respond => Some(Mode::Respond),
            TriageMode::Clarify => Some(Mode::Clarify),
            TriageMode::Act => Some(Mode::Act),
            TriageMode::Acknowledge => Some(Mode::Acknowledge),
            TriageMode::Ignore => Some(Mode::Ignore),
            TriageMode::Cancel => None,
        }
    }

    fn parse(s: &str) -> Option<TriageMode> {
        Some(match s.trim().to_ascii_uppercase().as_str() {
            "RESPOND" => TriageMode::Respond,
            "CLARIFY" => TriageMode::Clarify,
            "ACT" => TriageMode::Act,
            "ACKNOWLEDGE" => TriageMode::Acknowledge,
            "IGNORE" => TriageMode::Ignore,
            "CANCEL" => TriageMode::Cancel,
            _ => return None,
        })
    }

    fn from_branch(s: &str) -> Option<TriageMode> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "respond" => TriageMode::Respond,
            "clarify" => TriageMode::Clarify,
            "act" => TriageMode::Act,
            _ => return None,
        })
    }
}

impl From<crate::cognition::social::SocialExit> for TriageMode {
    /// A social exit as triage records it (CANCEL keeps its own name here; the delivered mode
    /// is [`crate::cognition::social::SocialExit::mode`]).
    fn from(exit: crate::cognition::social::SocialExit) -> TriageMode {
        use crate::cognition::social::SocialExit;
        match exit {
            SocialExit::Acknowledge => TriageMode::Acknowledge,
            SocialExit::Cancel => TriageMode::Cancel,
            SocialExit::Ignore => TriageMode::Ignore,
        }
    }
}
impl Effort {
    /// Unknown values become `moderate` (docs/cognition.md §3.2).
    pub fn parse(s: &str) -> Effort {
        match s.trim().to_ascii_lowercase().as_str() {
            "trivial" => Effort::Trivial,
            "light" => Effort::Light,
            "deep" => Effort::Deep,
            _ => Effort::Moderate,
        }
    }
}

/// docs/cognition.md §3.2 skill effort tiers.
pub fn skill_tier(skill: &str) -> Option<Effort> {
    match skill {
        "recall" | "memorize" | "introspect" | "list" | "focus" | "forget" | "moment" | "emit_card" => {
            Some(Effort::Trivial)
        }
        "associate" | "schedule" | "autobiography" | "document" | "read" | "reflect" => Some(Effort::Light),
        "persistent_task" => Some(Effort::Deep),
        _ => None,
    }
}

/// What the self-check and the fallback need to know besides the text.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TriageContext {
    /// Names of the external tools that are registered (empty: none).
    pub tools_available: Vec<String>,
    /// The topic's previous delivered mode.
    pub previous_mode: Option<Mode>,
    /// Tools used by the previous exchange.
    pub previous_tools: Vec<String>,
    /// MCP tools (`mcp.SERVER.TOOL`) the message names: a named tool is a capability, so
    /// the message is ACT even without tool words (docs/cognition.md §19).
    #[serde(default)]
    pub named_tools: Vec<String>,
}

/// The JSON schema a model's triage reply must satisfy (the subset `llm::schema` checks; every
/// property required and no extras, so it also works as an OpenAI strict `json_schema`). Skill
/// names and the effort are free strings on purpose: post-processing drops unknown skills and
/// maps an unknown effort to `moderate` instead of failing the whole reply.
pub fn triage_schema() -> Value {
    let unit = json!({"type": "number", "minimum": 0, "maximum": 1});
    json!({
        "type": "object",
        "required": ["branch", "mode", "tools", "skills", "confidence_internal", "confidence_tool_need",
                     "freshness_risk", "effort_estimate", "reasoning"],
        "additionalProperties": false,
        "properties": {
            "branch": {"type": "string", "enum": ["respond", "clarify", "act", "social"]},
            "mode": {"type": "string", "enum": ["RESPOND", "CLARIFY", "ACT", "ACKNOWLEDGE", "IGNORE", "CANCEL"]},
            "tools": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_TOOLS},
            "skills": {"type": "array", "items": {"type": "string"}},
            "confidence_internal": unit,
            "confidence_tool_need": unit,
            "freshness_risk": unit,
            "effort_estimate": {"type": "string"},
            "reasoning": {"type": "string"}
        }
    })
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(|s| s.trim().to_string()).collect(),
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.trim().to_string()],
        _ => Vec::new(),
    }
}

fn unit_value(v: Option<&Value>, default: f64) -> f64 {
    let x = match v {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    match x {
        Some(x) if x.is_finite() => x.clamp(0.0, 1.0),
        _ => default,
    }
}

/// docs/cognition.md §3.2 skill post-processing: whitelist (case-insensitive), de-duplicate, primitives first (all
/// three enforced for ACT), contextual skills sorted and capped at [`MAX_CONTEXTUAL_SKILLS`].
pub fn normalize_skills<S: AsRef<str>>(raw: &[S], act: bool) -> Vec<String> {
    let mut primitives = [false; 3];
    let mut contextual: Vec<&'static str> = Vec::new();
    for s in raw {
        let s = s.as_ref().trim().to_ascii_lowercase();
        let Some(&name) = VALID_SKILLS.iter().find(|v| **v == s) else { continue };
        if let Some(i) = PRIMITIVES.iter().position(|p| *p == name) {
            primitives[i] = true;
        } else if !contextual.contains(&name) {
            contextual.push(name);
        }
    }
    if act {
        primitives = [true; 3];
    }
    contextual.sort_unstable();
    contextual.truncate(MAX_CONTEXTUAL_SKILLS);
    PRIMITIVES
        .iter()
        .zip(primitives)
        .filter(|(_, on)| *on)
        .map(|(p, _)| p.to_string())
        .chain(contextual.into_iter().map(str::to_string))
        .collect()
}

fn normalize_tools(raw: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in raw {
        if !t.is_empty() && !out.contains(&t) {
            out.push(t);
        }
    }
    out.truncate(MAX_TOOLS);
    out
}

impl TriageResult {
    /// A result in `mode` with neutral confidences and no skills or tools.
    pub fn new(mode: TriageMode, source: TriageSource, reasoning: impl Into<String>) -> TriageResult {
        TriageResult {
            branch: mode.branch(),
            mode,
            tools: Vec::new(),
            skills: if mode == TriageMode::Act { normalize_skills::<&str>(&[], true) } else { Vec::new() },
            confidence_internal: 0.5,
            confidence_tool_need: 0.5,
            freshness_risk: 0.0,
            effort: Effort::Moderate,
            reasoning: reasoning.into(),
            source,
        }
    }

    /// Parse a model reply: strip code fences and anything outside the outer braces, then
    /// [`TriageResult::from_json`]. `Err` means "use [`heuristic_triage`]".
    pub fn from_reply(reply: &str) -> Result<TriageResult, String> {
        let v = crate::llm::schema::extract_json(reply)?;
        TriageResult::from_json(&v)
    }

    /// Post-process a reply object (docs/cognition.md §3.2). Lenient where a fix is safe: the mode wins over a
    /// disagreeing branch (the branch is derived from it), a missing mode is taken from the
    /// branch, confidences are clamped to 0–1 (numeric strings accepted), skills are whitelisted
    /// and ordered ([`normalize_skills`]), tools de-duplicated and capped, an unknown effort is
    /// `moderate`. Only a reply with neither a valid mode nor a valid branch is an error.
    pub fn from_json(v: &Value) -> Result<TriageResult, String> {
        let obj = v.as_object().ok_or("the triage reply is not a JSON object")?;
        let mode = obj
            .get("mode")
            .and_then(Value::as_str)
            .and_then(TriageMode::parse)
            .or_else(|| obj.get("branch").and_then(Value::as_str).and_then(TriageMode::from_branch))
            .ok_or("the triage reply has no valid mode or branch")?;
        let act = mode == TriageMode::Act;
        let effort = obj
            .get("effort_estimate")
            .or_else(|| obj.get("effort"))
            .and_then(Value::as_str)
            .map(Effort::parse)
            .unwrap_or_default();
        let reasoning: String =
            obj.get("reasoning").and_then(Value::as_str).unwrap_or_default().trim().chars().take(300).collect();
        Ok(TriageResult {
            branch: mode.branch(),
            mode,
            tools: normalize_tools(string_list(obj.get("tools"))),
            skills: normalize_skills(&string_list(obj.get("skills")), act),
            confidence_internal: unit_value(obj.get("confidence_internal"), 0.5),
            confidence_tool_need: unit_value(obj.get("confidence_tool_need"), 0.5),
            freshness_risk: unit_value(obj.get("freshness_risk"), 0.0),
            effort,
            reasoning,
            source: TriageSource::Model,
        })
    }

    fn set_mode(&mut self, mode: TriageMode) {
        self.mode = mode;
        self.branch = mode.branch();
        if mode == TriageMode::Act {
            self.skills = normalize_skills(&self.skills, true);
        }
    }

    fn has_contextual_skill(&self) -> bool {
        self.skills.iter().any(|s| !PRIMITIVES.contains(&s.as_str()))
    }
}

/// A question that asks for facts about the world (R2's "factual-question pattern"): a question
/// mark and a leading wh-word or yes/no auxiliary.
pub fn is_factual_question(text: &str) -> bool {
    let lower = normalize(text);
    factual_question(text, &words(&lower))
}

fn factual_question(text: &str, ws: &[&str]) -> bool {
    if !text.contains('?') {
        return false;
    }
    let core = strip_polite(ws);
    let heads = ["what", "where", "when", "who", "which", "how", "is", "are", "was", "were", "did", "does", "do"];
    core.first().is_some_and(|w| heads.contains(w) || *w == "what's" || *w == "who's" || *w == "where's")
}

/// The deterministic self-check (docs/cognition.md §3.3, R1–R6) over a post-processed triage result. Returns the
/// corrected result and the rules that fired, as `"<rule>"` or `"<rule>:<outcome>"`.
///
/// Order: R3 (a question misread as IGNORE), R5 (URL), R2b (tool words), R2 (freshness), R1 (ACT
/// without tools; runs after the rules that can produce ACT so their result is checked too), R4
/// (same tool right after ACT), R6 (effort proportionality).
pub fn sanity_check(
    r: TriageResult,
    text: &str,
    signals: &TextSignals,
    ctx: &TriageContext,
) -> (TriageResult, Vec<&'static str>) {
    let lower = normalize(text);
    sanity_check_for(r, &Analysis::with_signals(text, &lower, words(&lower), signals.clone()), ctx)
}

/// [`sanity_check`] over a message already read.
pub fn sanity_check_for(mut r: TriageResult, msg: &Analysis, ctx: &TriageContext) -> (TriageResult, Vec<&'static str>) {
    let mut fired: Vec<&'static str> = Vec::new();
    let (text, ws, signals) = (msg.text, msg.words.as_slice(), &msg.signals);
    let answerable = matches!(r.mode, TriageMode::Respond | TriageMode::Clarify);

    // R3: IGNORE on a real question (> 3 words with a `?`) → RESPOND. CANCEL is protected.
    if r.mode == TriageMode::Ignore && signals.has_question_mark && signals.prompt_token_count > 3 {
        r.set_mode(TriageMode::Respond);
        fired.push("R3");
    }
    // R5: a URL is an unambiguous request to read something.
    if answerable && msg.url {
        r.set_mode(TriageMode::Act);
        r.skills.push("read".to_string());
        r.skills = normalize_skills(&r.skills, true);
        fired.push("R5");
    } else if answerable && has_any(ws, TOOL_WORDS) {
        // R2b: explicit tool-invocation words.
        r.set_mode(TriageMode::Act);
        fired.push("R2b");
    }
    // R2: a factual question with a high freshness risk, and tools to answer it.
    if r.mode == TriageMode::Respond
        && r.freshness_risk >= FRESHNESS_ACT_THRESHOLD
        && !ctx.tools_available.is_empty()
        && factual_question(text, ws)
    {
        r.set_mode(TriageMode::Act);
        fired.push("R2");
    }
    // An MCP tool in the reply stands only when the message names it; one it names turns an
    // answerable reply into ACT with that tool.
    r.tools.retain(|t| !t.starts_with("mcp.") || ctx.named_tools.contains(t));
    if !ctx.named_tools.is_empty() && (answerable || r.mode == TriageMode::Act) {
        r.set_mode(TriageMode::Act);
        for t in &ctx.named_tools {
            if !r.tools.contains(t) {
                r.tools.push(t.clone());
            }
        }
        fired.push("R1:named_tool");
    }
    // R1: ACT with no tools named.
    if r.mode == TriageMode::Act && r.tools.is_empty() {
        if r.has_contextual_skill() {
            fired.push("R1:innate_skill");
        } else if !ctx.tools_available.is_empty() {
            fired.push("R1:deferred_to_loop");
        } else {
            let recovered = &msg.skills;
            if recovered.is_empty() {
                r.set_mode(TriageMode::Respond);
                r.reasoning = format!("capability gap: {}", r.reasoning);
                fired.push("R1:capability_gap");
            } else {
                r.skills.extend(recovered.iter().map(|s| s.to_string()));
                r.skills = normalize_skills(&r.skills, true);
                fired.push("R1:recovered_skill");
            }
        }
    }
    // R4: the same tool re-selected right after an ACT.
    if r.mode == TriageMode::Act
        && ctx.previous_mode == Some(Mode::Act)
        && r.tools.iter().any(|t| ctx.previous_tools.contains(t))
    {
        r.confidence_tool_need *= REPEAT_TOOL_DAMPING;
        if r.confidence_tool_need < REPEAT_TOOL_FLOOR {
            r.set_mode(TriageMode::Respond);
            fired.push("R4:respond");
        } else {
            fired.push("R4:damped");
        }
    }
    // R6: effort proportionality.
    let deep = |s: &String| skill_tier(s) == Some(Effort::Deep);
    if r.effort <= Effort::Light && r.skills.iter().any(deep) {
        r.skills.retain(|s| !deep(s));
        fired.push("R6:removed_deep");
    } else if r.effort == Effort::Deep
        && r.mode == TriageMode::Act
        && !r.skills.is_empty()
        && r.skills.iter().all(|s| skill_tier(s).is_some_and(|t| t <= Effort::Light))
    {
        let act = r.mode == TriageMode::Act;
        let mut skills = normalize_skills(&r.skills, act);
        let primitives = skills.iter().filter(|s| PRIMITIVES.contains(&s.as_str())).count();
        if skills.len() - primitives >= MAX_CONTEXTUAL_SKILLS {
            skills.pop();
        }
        skills.push("persistent_task".to_string());
        r.skills = skills;
        fired.push("R6:added_persistent_task");
    }
    (r, fired)
}

/// The keyword fallback used on any triage error or timeout (docs/cognition.md §3.4): innate skills by keyword →
/// ACT with those skills; tool words, a URL or real-time words with tools registered → ACT with
/// freshness 0.8; an empty message → IGNORE; otherwise RESPOND.
pub fn heuristic_triage(text: &str, signals: &TextSignals, ctx: &TriageContext) -> TriageResult {
    let lower = normalize(text);
    heuristic_triage_for(&Analysis::with_signals(text, &lower, words(&lower), signals.clone()), ctx)
}

/// [`heuristic_triage`] over a message already read.
pub fn heuristic_triage_for(msg: &Analysis, ctx: &TriageContext) -> TriageResult {
    let (ws, signals) = (msg.words.as_slice(), &msg.signals);
    if signals.prompt_token_count == 0 {
        let mut r = TriageResult::new(TriageMode::Ignore, TriageSource::Heuristic, "heuristic: empty");
        r.effort = Effort::Trivial;
        return r;
    }
    let (url, skills) = (msg.url, &msg.skills);
    if !skills.is_empty() {
        let mut r = TriageResult::new(
            TriageMode::Act,
            TriageSource::Heuristic,
            format!("heuristic: innate skill {}", skills.join(", ")),
        );
        r.skills = normalize_skills(skills, true);
        r.confidence_internal = 0.3;
        r.confidence_tool_need = 0.2;
        r.freshness_risk = 0.2;
        r.effort = skills.iter().filter_map(|s| skill_tier(s)).max().unwrap_or(Effort::Trivial);
        return r;
    }
    if !ctx.named_tools.is_empty() {
        let mut r = TriageResult::new(
            TriageMode::Act,
            TriageSource::Heuristic,
            format!("heuristic: names tool {}", ctx.named_tools.join(", ")),
        );
        r.tools = ctx.named_tools.clone();
        r.confidence_internal = 0.3;
        r.confidence_tool_need = 0.8;
        r.freshness_risk = 0.2;
        r.effort = Effort::Light;
        return r;
    }
    let command = url || has_any(ws, TOOL_WORDS);
    let realtime = has_any(ws, REALTIME_WORDS);
    if (command || realtime) && !ctx.tools_available.is_empty() {
        let mut r = TriageResult::new(
            TriageMode::Act,
            TriageSource::Heuristic,
            if command { "heuristic: tool request" } else { "heuristic: real-time question" },
        );
        r.confidence_internal = 0.3;
        r.confidence_tool_need = 0.8;
        r.freshness_risk = 0.8;
        r.effort = Effort::Light;
        return r;
    }
    let mut r = TriageResult::new(TriageMode::Respond, TriageSource::Heuristic, "heuristic: respond");
    r.confidence_internal = 0.6;
    r.confidence_tool_need = 0.2;
    r.freshness_risk = 0.2;
    r.effort = if signals.prompt_token_count > 30 { Effort::Moderate } else { Effort::Light };
    r
}
