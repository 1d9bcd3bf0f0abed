//! The one generic dispatcher: a skill name to its function, and the result shape every
//! action produces. No skill-specific branches anywhere else.

use super::plan::Action;
use super::skill::{SkillContext, SkillError, SkillFn};
use super::skills;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Which values of a skill's `action` parameter change something the user would want to
/// confirm before it rests on a doubtful memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consequence {
    /// Reading or remembering only.
    Never,
    /// Every action but these (a missing `action` counts as consequential).
    Except(&'static [&'static str]),
    /// Only these actions: the ones that lose something.
    Only(&'static [&'static str]),
}

/// Everything the ACT layer knows about one skill, in one row, so that adding a skill is one
/// line here and no list elsewhere can forget it.
#[derive(Debug, Clone, Copy)]
pub struct Skill {
    pub name: &'static str,
    pub run: SkillFn,
    /// The planner prompt's line describing the skill and its parameters.
    pub doc: &'static str,
    /// The result is a self-contained card for the user (a confirmation, a list, an error
    /// about a list): when every action of a turn is a card, no reply text is generated.
    pub card: bool,
    pub consequence: Consequence,
}

const fn skill_row(name: &'static str, run: SkillFn, doc: &'static str, card: bool, consequence: Consequence) -> Skill {
    Skill { name, run, doc, card, consequence }
}

/// The skills this build can run, in the order the ACT prompt lists them.
pub const SKILLS: &[Skill] = {
    use Consequence::{Except, Never, Only};
    use skills::{associate, autobiography, focus, forget, introspect, list, memory, read, schedule, task};
    &[
        skill_row("recall", memory::recall, include_str!("../../../prompts/skills/recall.md"), false, Never),
        skill_row("memorize", memory::memorize, include_str!("../../../prompts/skills/memorize.md"), true, Never),
        skill_row(
            "introspect",
            introspect::introspect,
            include_str!("../../../prompts/skills/introspect.md"),
            false,
            Never,
        ),
        skill_row("associate", associate::run, include_str!("../../../prompts/skills/associate.md"), false, Never),
        skill_row(
            "autobiography",
            autobiography::run,
            include_str!("../../../prompts/skills/autobiography.md"),
            false,
            Never,
        ),
        skill_row(
            "list",
            list::run,
            include_str!("../../../prompts/skills/list.md"),
            true,
            Only(&["remove", "clear", "delete", "rename"]),
        ),
        skill_row(
            "schedule",
            schedule::run,
            include_str!("../../../prompts/skills/schedule.md"),
            true,
            Except(&["list"]),
        ),
        skill_row("focus", focus::run, include_str!("../../../prompts/skills/focus.md"), true, Never),
        // Forgetting is never held back for confirmation: the user asked for it in so many words.
        skill_row("forget", forget::run, include_str!("../../../prompts/skills/forget.md"), true, Never),
        skill_row("read", read::run, include_str!("../../../prompts/skills/read.md"), false, Never),
        skill_row(
            "persistent_task",
            task::run,
            include_str!("../../../prompts/skills/persistent_task.md"),
            true,
            Only(&["cancel"]),
        ),
    ]
};

/// The row for a skill name, or `None` when this build has no such skill.
pub fn skill(name: &str) -> Option<&'static Skill> {
    SKILLS.iter().find(|s| s.name == name)
}

/// Actions whose effect the user would want to confirm when it rests on a doubtful memory:
/// anything that schedules or cancels, and list changes that lose items.
pub fn is_consequential(a: &Action) -> bool {
    let action = a.params.get("action").and_then(Value::as_str).unwrap_or("");
    match skill(&a.kind).map(|s| s.consequence) {
        Some(Consequence::Except(safe)) => !safe.contains(&action),
        Some(Consequence::Only(risky)) => risky.contains(&action),
        Some(Consequence::Never) | None => false,
    }
}

/// The first memory recalled earlier in this turn that is marked uncertain or contradicted.
pub fn unreliable_basis<'a>(history: impl IntoIterator<Item = &'a ActionResult>) -> Option<String> {
    history.into_iter().filter(|r| r.kind == "recall" && r.ok).find_map(|r| {
        r.data["hits"].as_array()?.iter().find_map(|h| {
            let state = h["reliability"].as_str()?;
            matches!(state, "uncertain" | "contradicted")
                .then(|| format!("{} ({state})", h["text"].as_str().unwrap_or_default()))
        })
    })
}

/// How much an action's confidence is cut when it rests on a doubtful memory (docs/cognition.md §10.4).
pub const UNRELIABLE_CONFIDENCE_CUT: f64 = 0.4;

/// The pre-action reliability check (docs/cognition.md §10.4): an action after a recall that returned
/// a doubtful memory either asks first (consequential) or runs with its confidence cut by
/// 40 % and a warning attached.
#[derive(Debug, Clone, PartialEq)]
pub enum PreAction {
    Proceed,
    AskFirst(String),
    Warn { basis: String, confidence: f64 },
}

pub fn pre_action(action: &Action, basis: Option<String>) -> PreAction {
    match basis {
        None => PreAction::Proceed,
        Some(b) if is_consequential(action) => PreAction::AskFirst(b),
        Some(basis) => PreAction::Warn { basis, confidence: 1.0 - UNRELIABLE_CONFIDENCE_CUT },
    }
}

/// Attach a [`PreAction::Warn`] to what the action did: the reply hedges on it.
pub fn with_warning(mut r: ActionResult, basis: &str, confidence: f64) -> ActionResult {
    r.summary = format!("{} (rests on a doubtful memory: {basis})", r.summary);
    if let Some(obj) = r.data.as_object_mut() {
        obj.insert("reliability_warning".into(), Value::String(basis.to_string()));
        obj.insert("confidence".into(), serde_json::json!(confidence));
    }
    r
}

/// What one action did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionResult {
    #[serde(rename = "type")]
    pub kind: String,
    pub ok: bool,
    /// One line for the planner's history, the reply and the ACT pane.
    pub summary: String,
    pub data: Value,
    pub ms: f64,
    pub card: bool,
    /// What the user is asked to choose between when the action was ambiguous and did nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
}

/// Run one action synchronously (on the database thread). `previous` is the summary of the
/// action before it in the same plan: a string parameter `"$previous"` is replaced by it,
/// which is how one action's output feeds the next.
pub fn dispatch(c: &Connection, action: &Action, ctx: &SkillContext, previous: Option<&str>) -> ActionResult {
    let clock = std::time::Instant::now();
    let mut params = action.params.clone();
    if let Some(prev) = previous {
        for v in params.values_mut() {
            if v.as_str() == Some("$previous") {
                *v = Value::String(prev.to_string());
            }
        }
    }
    let row = skill(&action.kind);
    let card = row.is_some_and(|s| s.card);
    let outcome = match row {
        Some(s) => (s.run)(c, &params, ctx),
        None => Err(SkillError::NotFound(format!("the `{}` skill is not available in this build", action.kind))),
    };
    let ms = clock.elapsed().as_secs_f64() * 1000.0;
    let result = match outcome {
        Ok(out) => ActionResult {
            kind: action.kind.clone(),
            ok: true,
            summary: out.summary,
            data: out.data,
            ms,
            card,
            choices: out.choices,
        },
        Err(e) => ActionResult {
            kind: action.kind.clone(),
            ok: false,
            summary: match &e {
                SkillError::NotFound(what) => format!("{}.", capitalise(what)),
                other => format!("The {} action failed: {}.", action.kind, crate::describe(other)),
            },
            data: json!({"error": e.to_string()}),
            ms,
            card,
            choices: Vec::new(),
        },
    };
    note_world_state(c, &result, ctx);
    result
}

/// Leave the action's open thing in its topic's world state (docs/cognition.md §4.7). A
/// failure here costs only warmth, never the action, so it is logged and passed over.
fn note_world_state(c: &Connection, r: &ActionResult, ctx: &SkillContext) {
    use crate::cognition::world::{Change, change};
    let now = ctx.now.timestamp();
    let repo = crate::store::WorldStateRepo(c);
    let written = match change(&r.kind, r.ok, &r.data, &r.choices, now) {
        Some(Change::Set { slot, value, ttl_s }) => repo.set(&ctx.topic, slot, &value, now, now + ttl_s),
        Some(Change::Clear { slot }) => repo.clear(&ctx.topic, slot),
        None => Ok(()),
    };
    if let Err(e) = written {
        tracing::warn!(error = %crate::describe(&e), "world state not written");
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Local;

    #[test]
    fn chains_and_reports_errors() {
        let c = crate::store::open_in_memory().unwrap();
        let ctx = SkillContext::new("t", "x", "t", Local::now());
        let r = dispatch(
            &c,
            &Action::new("list", json!({"action": "add", "name": "x", "items": "$previous"})),
            &ctx,
            Some("eggs"),
        );
        assert!(r.ok && r.card, "{r:?}");
        assert_eq!(r.data["added"], json!(["eggs"]));
        let r = dispatch(&c, &Action::new("document", json!({})), &ctx, None);
        assert!(!r.ok);
        assert!(r.summary.contains("not available"));
        let r = dispatch(&c, &Action::new("list", json!({"action": "view", "name": "nope"})), &ctx, None);
        assert!(!r.ok && r.card);
    }

    #[test]
    fn actions_leave_their_topic_world_state() {
        let c = crate::store::open_in_memory().unwrap();
        let ctx = SkillContext::new("t", "x", "shopping", Local::now());
        let now = ctx.now.timestamp();
        let ws = |topic: &str| crate::store::WorldStateRepo(&c).live_for(topic, now, 10).unwrap();
        dispatch(
            &c,
            &Action::new("list", json!({"action": "add", "name": "groceries", "items": ["eggs"]})),
            &ctx,
            None,
        );
        assert_eq!(
            ws("shopping"),
            vec![("list".into(), "editing the list groceries (1 items); just added eggs".into())]
        );
        assert!(ws("other").is_empty(), "per topic");
        dispatch(&c, &Action::new("list", json!({"action": "delete", "name": "groceries"})), &ctx, None);
        assert!(ws("shopping").is_empty(), "a deleted list is no longer open");
        dispatch(&c, &Action::new("list", json!({"action": "view", "name": "nope"})), &ctx, None);
        assert!(ws("shopping").is_empty(), "a failed action leaves nothing");
    }

    #[test]
    fn doubtful_memories_gate_consequential_actions() {
        let c = crate::store::open_in_memory().unwrap();
        let ctx = SkillContext::new("t", "x", "t", Local::now());
        crate::store::TurnRepo(&c).set_explicit_trait("dentist", "Tuesday at 10", "general").unwrap();
        let recall = Action::new("recall", json!({"query": "dentist"}));
        let reliable = dispatch(&c, &recall, &ctx, None);
        assert_eq!(unreliable_basis([&reliable]), None);
        crate::store::fixtures::Fixture(&c).set("user_traits", "reliability = 'contradicted'", "", []);
        let doubtful = dispatch(&c, &recall, &ctx, None);
        assert_eq!(unreliable_basis([&doubtful]).as_deref(), Some("dentist: Tuesday at 10 (contradicted)"));
        let create = Action::new("schedule", json!({"action": "create"}));
        let list = Action::new("schedule", json!({"action": "list"}));
        let basis = unreliable_basis([&doubtful]);
        assert!(matches!(pre_action(&create, basis.clone()), PreAction::AskFirst(_)), "consequential: ask first");
        let PreAction::Warn { basis: b, confidence } = pre_action(&list, basis) else { panic!("a warning") };
        assert!((confidence - 0.6).abs() < 1e-12, "a 40 % cut");
        let warned = with_warning(doubtful.clone(), &b, confidence);
        assert!(warned.summary.contains("doubtful memory") && warned.data["confidence"] == 0.6);
        assert_eq!(pre_action(&list, None), PreAction::Proceed);
        assert!(is_consequential(&Action::new("schedule", json!({"action": "create"}))));
        assert!(!is_consequential(&Action::new("schedule", json!({"action": "list"}))));
        assert!(is_consequential(&Action::new("list", json!({"action": "clear"}))));
        assert!(!is_consequential(&Action::new("list", json!({"action": "add"}))));
    }

    #[test]
    fn every_skill_has_one_consistent_row() {
        for s in SKILLS {
            assert_eq!(SKILLS.iter().filter(|o| o.name == s.name).count(), 1, "{} appears twice", s.name);
            assert!(s.doc.trim_start().starts_with(&format!("- {}:", s.name)), "{}: doc names another skill", s.name);
            let actions = match s.consequence {
                Consequence::Never => &[][..],
                Consequence::Except(a) | Consequence::Only(a) => a,
            };
            for a in actions {
                assert!(s.doc.contains(&format!("\"{a}\"")), "{}: `{a}` is not an action its doc offers", s.name);
            }
        }
        let names: Vec<&str> = SKILLS.iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "recall",
                "memorize",
                "introspect",
                "associate",
                "autobiography",
                "list",
                "schedule",
                "focus",
                "forget",
                "read",
                "persistent_task"
            ],
            "the planner prompt lists the skills in this order"
        );
        let cards: Vec<&str> = SKILLS.iter().filter(|s| s.card).map(|s| s.name).collect();
        assert_eq!(cards, ["memorize", "list", "schedule", "focus", "forget", "persistent_task"]);
        for primitive in crate::cognition::intent::PRIMITIVES {
            assert!(skill(primitive).is_some(), "primitive `{primitive}` has no row");
        }
        for s in SKILLS {
            assert!(crate::cognition::intent::VALID_SKILLS.contains(&s.name), "triage cannot choose `{}`", s.name);
        }
    }
}
