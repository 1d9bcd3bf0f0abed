//! The `persistent_task` skill (docs/cognition.md §17.1): a chat request becomes a background
//! task awaiting the user's go-ahead; "start task 3" confirms it, "cancel task 3" ends it. A
//! goal close to an open task's is that task; at most five are open (`tasks::create`).

use crate::cognition::act::skill::{SkillContext, SkillError, SkillOutput, opt_str_param, str_param};
use crate::cognition::tasks::DEFAULT_PRIORITY;
use crate::cognition::tasks::create::{CreateError, Created, Proposal, create};
use crate::store::TasksRepo;
use crate::vocab::tasks::{Task, TaskState};
use rusqlite::Connection;
use serde_json::{Map, Value, json};

pub fn run(c: &Connection, p: &Map<String, Value>, ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let now = ctx.now.timestamp();
    let repo = TasksRepo(c);
    let action = opt_str_param(p, "action").unwrap_or("create").to_ascii_lowercase();
    match action.as_str() {
        "create" | "add" | "start_new" => {
            let goal = str_param(p, "goal")?;
            let priority = p.get("priority").and_then(Value::as_i64).unwrap_or(DEFAULT_PRIORITY).clamp(1, 10);
            let proposal = Proposal { goal, priority, thread_id: Some(&ctx.thread_id), origin: None };
            match create(c, &proposal, now) {
                Ok(Created::Merged { id, goal, state }) => Ok(SkillOutput::new(
                    format!("That is task #{id} already (\"{goal}\", {}): I kept the one task.", state.as_str()),
                    json!({"id": id, "merged": true}),
                )),
                Ok(Created::New { id }) => Ok(SkillOutput::new(
                    format!(
                        "I can work on \"{goal}\" in the background as task #{id}, a step about every half hour for up \
                         to 14 days. Say \"start task {id}\" to begin, or \"cancel task {id}\"."
                    ),
                    json!({"id": id, "state": TaskState::AwaitingConfirmation.as_str(), "priority": priority}),
                )),
                Err(e @ CreateError::Full) => Err(SkillError::NotFound(e.to_string())),
                Err(CreateError::Store(e)) => Err(e.into()),
            }
        }
        "confirm" | "start" | "resume" => {
            let t = target(&repo, p, ctx, &[TaskState::AwaitingConfirmation, TaskState::Paused])?;
            repo.transition(t.id, &[TaskState::AwaitingConfirmation, TaskState::Paused], TaskState::Pending, now)?;
            Ok(SkillOutput::new(
                format!("Started task #{}: \"{}\". I will tell you how it goes.", t.id, t.goal),
                json!({"id": t.id, "state": "pending"}),
            ))
        }
        "pause" => {
            let from = [TaskState::Pending, TaskState::Running];
            let t = target(&repo, p, ctx, &from)?;
            repo.transition(t.id, &from, TaskState::Paused, now)?;
            Ok(SkillOutput::new(format!("Paused task #{}.", t.id), json!({"id": t.id, "state": "paused"})))
        }
        "cancel" | "stop" => {
            let from: Vec<TaskState> = TaskState::ALL.into_iter().filter(|s| s.is_open()).collect();
            let t = target(&repo, p, ctx, &from)?;
            repo.transition(t.id, &from, TaskState::Cancelled, now)?;
            Ok(SkillOutput::new(
                format!("Cancelled task #{}: \"{}\".", t.id, t.goal),
                json!({"id": t.id, "state": "cancelled"}),
            ))
        }
        "status" | "list" => {
            let open = repo.list(false)?;
            if open.is_empty() {
                return Ok(SkillOutput::new("No background tasks are open.", json!({"tasks": []})));
            }
            let lines: Vec<String> = open
                .iter()
                .map(|t| format!("#{} {} ({}, {:.0} %)", t.id, t.goal, t.state.as_str(), t.coverage * 100.0))
                .collect();
            Ok(SkillOutput::new(format!("Open tasks: {}.", lines.join("; ")), json!({"tasks": lines})))
        }
        other => Err(SkillError::Param {
            name: "action",
            problem: format!("`{other}` is not one of create, confirm, pause, cancel, status"),
        }),
    }
}

/// The task an action names by `id`, or else the newest task of this thread in one of `states`.
fn target(
    repo: &TasksRepo<'_>,
    p: &Map<String, Value>,
    ctx: &SkillContext,
    states: &[TaskState],
) -> Result<Task, SkillError> {
    let id = p
        .get("id")
        .and_then(|v| v.as_i64().or_else(|| v.as_str().and_then(|s| s.trim_start_matches('#').parse().ok())));
    let found = match id {
        Some(id) => repo.get(id)?,
        None => repo
            .list(false)?
            .into_iter()
            .filter(|t| t.thread_id.as_deref() == Some(ctx.thread_id.as_str()) && states.contains(&t.state))
            .max_by_key(|t| (t.created_at, t.id)),
    };
    match found {
        Some(t) if states.contains(&t.state) => Ok(t),
        Some(t) => Err(SkillError::NotFound(format!("task #{} is {}", t.id, t.state.as_str()))),
        None => Err(SkillError::NotFound(match id {
            Some(id) => format!("there is no task #{id}"),
            None => "no background task fits".into(),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> SkillContext {
        SkillContext::new("t", "x", "t", chrono::Local::now())
    }

    fn call(c: &Connection, v: Value) -> Result<SkillOutput, SkillError> {
        run(c, v.as_object().unwrap(), &ctx())
    }

    #[test]
    fn a_request_waits_for_the_go_ahead_then_runs_and_can_be_cancelled() {
        let c = crate::store::open_in_memory().unwrap();
        let out = call(&c, json!({"goal": "research the best e-bike for a 20 km commute"})).unwrap();
        assert!(out.summary.contains("start task 1"), "{}", out.summary);
        let repo = TasksRepo(&c);
        assert_eq!(repo.get(1).unwrap().unwrap().state, TaskState::AwaitingConfirmation);
        assert!(repo.next_due(i64::MAX).unwrap().is_none(), "nothing runs before the go-ahead");
        call(&c, json!({"action": "confirm"})).unwrap();
        assert_eq!(repo.get(1).unwrap().unwrap().state, TaskState::Pending);
        assert!(call(&c, json!({"action": "confirm", "id": 1})).is_err(), "already started");
        call(&c, json!({"action": "cancel", "id": "#1"})).unwrap();
        assert_eq!(repo.get(1).unwrap().unwrap().state, TaskState::Cancelled);
    }

    #[test]
    fn a_repeated_goal_is_merged_and_at_most_five_are_open() {
        let c = crate::store::open_in_memory().unwrap();
        call(&c, json!({"goal": "keep an eye on flights to Lisbon under 120 euros in May"})).unwrap();
        let again = call(&c, json!({"goal": "keep an eye on flights to Lisbon under 120 euros for May"})).unwrap();
        assert_eq!(again.data["merged"], true);
        for g in
            ["find a dentist near work", "plan a birthday dinner", "compare phone contracts", "learn basic Portuguese"]
        {
            call(&c, json!({"goal": g})).unwrap();
        }
        assert_eq!(TasksRepo(&c).list(false).unwrap().len(), 5);
        let sixth = call(&c, json!({"goal": "sort the photo archive by year"})).unwrap_err();
        assert!(sixth.to_string().contains("5 background tasks"), "{sixth}");
    }
}
