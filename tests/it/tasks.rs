//! Persistent tasks end to end against the scripted endpoint: a turn asks for one and the user
//! starts it; the worker's cycle plans it with the model (the plan-decomposition prompt), runs
//! its ready steps through the bounded ACT loop with the `read` skill, checkpoints, and tells
//! the user in the chat; a plan that fails a gate becomes one honest step.

use crate::support::harness::{Harness, start_heuristic, system_prompt};
use crate::support::openai_double::Reply;
use chalie::cognition::tasks::cycle::{Moment, run_cycle};
use chalie::store::{ChatRepo, TasksRepo, now_ts};
use chalie::vocab::tasks::{StepState, Task, TaskState};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn plan(actions: Value) -> Reply {
    Reply::text(&json!({ "actions": actions }).to_string())
}

fn done() -> Reply {
    plan(json!([]))
}

fn read_text(text: &str) -> Reply {
    plan(json!([{"type": "read", "params": {"text": text}}]))
}

async fn task(h: &Harness, id: i64) -> Task {
    h.read(move |c| TasksRepo(c).get(id)).await.expect("the task exists")
}

async fn cycle(h: &Harness) -> Option<chalie::cognition::tasks::cycle::CycleReport> {
    let now = now_ts();
    let (llm, cancel) = (Some(h.engine.llm()), CancellationToken::new());
    run_cycle(&h.db, llm, &h.bus, now, now, Moment { may_speak: true }, &cancel).await.unwrap()
}

#[tokio::test]
async fn a_task_asked_for_in_chat_is_planned_run_checkpointed_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("bikes.txt");
    std::fs::write(&notes, "Bike A: 80 km range, 22 kg, 2400 euros. Bike B: 60 km range, 18 kg, 1900 euros.").unwrap();
    let decomposition = json!({"steps": [
        {"id": "s1", "description": "note what a twenty kilometre daily commute needs", "depends_on": [], "tools_needed": ["read"]},
        {"id": "s2", "description": "read the saved e-bike notes the user pointed to", "depends_on": [], "tools_needed": ["read", "web_search"]},
        {"id": "s3", "description": "compare range, weight and price of the candidates", "depends_on": ["s1", "s2"], "tools_needed": []},
        {"id": "s4", "description": "write a shortlist of two bikes with one reason each", "depends_on": ["s3"], "tools_needed": []}
    ], "decomposition_confidence": 0.8});
    let script = vec![
        // The turn: the model plans the task's creation, then has nothing more to do.
        plan(
            json!([{"type": "persistent_task", "params": {"action": "create", "goal": "research the best e-bike for a 20 km commute"}}]),
        ),
        done(),
        // "start task 1": the model confirms it.
        plan(json!([{"type": "persistent_task", "params": {"action": "confirm", "id": 1}}])),
        done(),
        // Cycle 1: the plan, then s1 (pasted text), s2 (the file), s3 (nothing a skill can do).
        Reply::text(&decomposition.to_string()),
        read_text("commute: 20 km each way, one steep hill, storage in a hallway"),
        done(),
        plan(json!([{"type": "read", "params": {"path": notes.to_str().unwrap()}}])),
        done(),
        done(),
        // Cycle 2: s4.
        read_text("shortlist: Bike B for weight and price, Bike A for range"),
        done(),
    ];
    let h = start_heuristic(script).await;
    let r =
        h.say("t", "keep working on this over the next few days: research the best e-bike for a 20 km commute").await;
    assert!(r.response.contains("start task 1"), "{}", r.response);
    assert_eq!(task(&h, 1).await.state, TaskState::AwaitingConfirmation);
    assert!(cycle(&h).await.is_none(), "nothing runs before the user says so");

    let r = h.say("t", "start task 1").await;
    assert!(r.response.contains("Started task #1"), "{}", r.response);

    let first = cycle(&h).await.expect("the confirmed task is due");
    assert_eq!(first.steps, ["s1", "s2", "s3"], "roots first, the shorter first, then what they unblocked");
    let t = task(&h, 1).await;
    let p = t.plan.as_ref().unwrap();
    assert_eq!((p.source.as_str(), p.steps.len()), ("model", 4));
    assert_eq!(p.steps[1].tools_needed, ["read"], "a tool this build lacks is not kept");
    assert_eq!(p.steps[0].state, StepState::Done);
    assert!(p.steps[1].result.as_deref().unwrap().contains("Bike A: 80 km range"), "{:?}", p.steps[1].result);
    assert_eq!(p.steps[2].state, StepState::Skipped);
    assert!(p.steps[2].result.as_deref().unwrap().contains("no skill"), "{:?}", p.steps[2].result);
    assert_eq!((t.state, t.cycles, (t.coverage * 100.0).round()), (TaskState::Running, 1, 75.0));
    assert_eq!(t.progress.checkpoints.len(), 1);
    assert!(first.surfaced.is_some(), "coverage jumped by more than 15 points");

    // The prompts: the decomposition's, then a step planner offered the primitives and `read`.
    let chat = h.double.chat_requests();
    let systems: Vec<String> = chat.iter().map(system_prompt).collect();
    let decomposing = systems.iter().position(|s| s.contains("break a goal")).expect("the plan prompt was sent");
    assert!(systems[decomposing].contains("read") && !systems[decomposing].contains("{{skills}}"));
    let s2 = &chat[decomposing + 3];
    assert!(system_prompt(s2).contains("- read:"));
    let user = s2.body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("This step: read the saved e-bike notes"), "{user}");
    assert!(user.contains("step s1:"), "earlier steps' results reach the planner: {user}");

    let owned: Vec<(Option<String>, i64, i64)> = h
        .read(|c| {
            let mut s = c.prepare(
                "SELECT exchange_id, task_id, step_index FROM cortex_iterations WHERE task_id IS NOT NULL ORDER BY id",
            )?;
            Ok(s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<Result<Vec<_>, _>>()?)
        })
        .await;
    assert_eq!(owned, [(None, 1, 0), (None, 1, 1)], "one row per step iteration that ran actions");

    let second = cycle(&h).await.expect("still due");
    assert_eq!((second.steps.as_slice(), second.state), (&["s4".to_string()][..], TaskState::Completed));
    let lines = h.read(|c| ChatRepo(c).recent("t", 50)).await;
    let told: Vec<&str> = lines
        .iter()
        .filter(|m| m.role == "assistant" && m.exchange_id.starts_with("task-"))
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(told.len(), 2, "{told:?}");
    assert!(told[0].starts_with("Progress on background task #1"), "{}", told[0]);
    assert!(told[1].contains("is finished") && told[1].contains("shortlist"), "{}", told[1]);
    assert!(cycle(&h).await.is_none(), "a completed task does not run again");
}

#[tokio::test]
async fn a_plan_with_a_cycle_becomes_one_honest_step() {
    let cyclic = json!({"steps": [
        {"id": "s1", "description": "check the fares on the airline sites", "depends_on": ["s2"]},
        {"id": "s2", "description": "compare the fares against the 120 euro limit", "depends_on": ["s1"]}
    ], "decomposition_confidence": 0.9});
    let h = start_heuristic(vec![Reply::text(&cyclic.to_string()), done()]).await;
    let id = h
        .read(|c| {
            TasksRepo(c).insert(&chalie::store::NewTask {
                goal: "keep an eye on flights to Lisbon under 120 euros for May",
                state: TaskState::Pending,
                priority: 5,
                thread_id: Some("t"),
                origin: None,
                created_at: now_ts(),
                expires_at: now_ts() + 86_400,
            })
        })
        .await;
    let r = cycle(&h).await.unwrap();
    assert!(r.planned.as_deref().unwrap().contains("one step"), "{:?}", r.planned);
    let t = task(&h, id).await;
    let p = t.plan.unwrap();
    assert_eq!((p.source.as_str(), p.steps.len()), ("fallback", 1));
    assert!(p.rejected.as_deref().unwrap().contains("every step depends"), "{:?}", p.rejected);
    assert_eq!(p.steps[0].description, "keep an eye on flights to Lisbon under 120 euros for May");
    assert_eq!(p.steps[0].state, StepState::Skipped, "the model chose no action: said so, not faked");
}

/// The command line: list, run a cycle now against the scripted endpoint, cancel.
#[test]
fn the_tasks_command_lists_runs_and_cancels() {
    use crate::support::bin::{chalie, json_lines, text, write_double_config};
    use crate::support::openai_double::Double;
    let two_steps = json!({"steps": [
        {"id": "s1", "description": "read the fare notes the user saved", "depends_on": [], "tools_needed": ["read"]},
        {"id": "s2", "description": "say which fares are under the limit", "depends_on": ["s1"], "tools_needed": []}
    ], "decomposition_confidence": 0.7});
    let script = vec![
        Reply::text(&two_steps.to_string()),
        read_text("TAP 2026-05-03 98 euros; Ryanair 2026-05-10 134 euros"),
        done(),
        done(),
    ];
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = rt.block_on(Double::start(script));
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    write_double_config(data, &double.base_url());

    let out = chalie(data, &["tasks"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("No open tasks"), "{}", text(&out.stdout));
    {
        let c = chalie::store::open(&data.join("chalie.db")).unwrap();
        TasksRepo(&c)
            .insert(&chalie::store::NewTask {
                goal: "keep an eye on flights to Lisbon under 120 euros for May",
                state: TaskState::AwaitingConfirmation,
                priority: 5,
                thread_id: None,
                origin: None,
                created_at: now_ts(),
                expires_at: now_ts() + 86_400,
            })
            .unwrap();
    }
    let out = chalie(data, &["tasks", "run", "--now"]);
    assert!(text(&out.stdout).contains("No task is due"), "not confirmed yet: {}", text(&out.stdout));
    let out = chalie(data, &["tasks", "confirm", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let out = chalie(data, &["tasks", "run", "--now", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = &json_lines(&out)[0];
    assert_eq!(report["steps"], json!(["s1", "s2"]), "{report}");
    assert_eq!(report["state"], "completed");

    let out = chalie(data, &["tasks", "--all"]);
    let shown = text(&out.stdout);
    assert!(shown.contains("#1 keep an eye on flights") && shown.contains("[completed]"), "{shown}");
    assert!(shown.contains("[x] s1 read the fare notes") && shown.contains("TAP 2026-05-03 98 euros"), "{shown}");
    assert!(shown.contains("[-] s2"), "no action ran for s2: skipped, said so: {shown}");

    let out = chalie(data, &["tasks", "cancel", "1"]);
    assert_eq!(out.status.code(), Some(1), "a completed task cannot be cancelled");
    assert!(text(&out.stderr).contains("is completed"), "{}", text(&out.stderr));
    let out = chalie(data, &["tasks", "cancel", "7"]);
    assert!(text(&out.stderr).contains("no task #7"));
    drop(rt);
}
