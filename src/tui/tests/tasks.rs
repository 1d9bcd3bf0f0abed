//! The Tasks view (F7): opening it asks for the tasks, the answer draws each task with its
//! plan as a tree, step states and results, coverage and the next run; Esc closes it.

use super::*;
use crate::vocab::tasks::{PlanStep, StepState, Task, TaskPlan, TaskProgress, TaskState};

fn step(id: &str, description: &str, deps: &[&str], state: StepState, result: Option<&str>) -> PlanStep {
    PlanStep {
        id: id.into(),
        description: description.into(),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        tools_needed: if id == "s2" { vec!["read".into()] } else { Vec::new() },
        state,
        result: result.map(str::to_string),
    }
}

fn tasks() -> Vec<Task> {
    let plan = TaskPlan {
        steps: vec![
            step(
                "s1",
                "note what a 20 km daily commute needs",
                &[],
                StepState::Done,
                Some("Read pasted text (9 words): 20 km, one hill"),
            ),
            step(
                "s2",
                "read the saved e-bike notes",
                &[],
                StepState::Done,
                Some("Read ~/bikes.txt (16 words): Bike A 80 km, Bike B 60 km"),
            ),
            step(
                "s3",
                "compare range, weight and price of the candidates",
                &["s1", "s2"],
                StepState::Skipped,
                Some("no skill of mine applies (empty_plan)"),
            ),
            step("s4", "write a shortlist of two bikes with a reason each", &["s3"], StepState::Pending, None),
        ],
        decomposition_confidence: 0.8,
        source: "model".into(),
        rejected: None,
    };
    let base = Task {
        id: 1,
        goal: "research the best e-bike for a 20 km commute".into(),
        state: TaskState::Running,
        priority: 5,
        plan: Some(plan),
        progress: TaskProgress::default(),
        coverage: 0.75,
        cycles: 1,
        iterations: 4,
        fatigue: 3.0,
        created_at: T0 - 7200,
        updated_at: T0 - 600,
        expires_at: T0 + 14 * 86_400,
        last_run_at: Some(T0 - 600),
        next_run_at: Some(T0 + 1200),
        thread_id: Some("t".into()),
        origin: None,
    };
    let waiting = Task {
        id: 2,
        goal: "keep an eye on flights to Lisbon under 120 euros for May".into(),
        state: TaskState::AwaitingConfirmation,
        plan: None,
        coverage: 0.0,
        cycles: 0,
        next_run_at: None,
        ..base.clone()
    };
    vec![base, waiting]
}

#[test]
fn f7_opens_the_tasks_view_with_each_plan_as_a_tree() {
    let mut a = app();
    assert_eq!(a.on_terminal(key(KeyCode::F(7))), Some(Action::LoadTasks));
    assert_eq!(a.context(), Context::Tasks);
    a.on_view(ViewAnswer::Tasks { tasks: tasks() });
    insta::assert_snapshot!("tasks_view_120x40", draw(&mut a, 120, 40));
    assert_eq!(a.on_terminal(key(KeyCode::Char('r'))), Some(Action::LoadTasks), "r reloads");
    assert_eq!(a.on_terminal(key(KeyCode::Esc)), None);
    assert!(a.tasks.is_none());
    a.on_view(ViewAnswer::Tasks { tasks: tasks() });
    assert!(a.tasks.is_none(), "a late answer does not reopen the view");
}

#[test]
fn an_empty_tasks_view_says_how_to_ask_for_one() {
    let mut a = app();
    a.on_terminal(key(KeyCode::F(7)));
    a.on_view(ViewAnswer::Tasks { tasks: Vec::new() });
    let screen = draw(&mut a, 120, 40);
    assert!(screen.contains("No background tasks are open."), "{screen}");
    a.on_terminal(key(KeyCode::F(7)));
    assert!(a.tasks.is_none(), "F7 again closes it");
}

#[test]
fn a_task_progress_message_shows_in_the_chat_as_it_arrives() {
    let mut a = app();
    let text = "Task #3 \"compare coffee grinders\": 2 of 4 steps done";
    assert!(!draw(&mut a, 100, 30).contains("2 of 4 steps done"));
    let m = EngineEvent::TaskMessage { task_id: 3, thread_id: Some("t".into()), text: text.into() };
    a.on_engine(&ev(-5, m));
    let screen = draw(&mut a, 100, 30);
    assert!(screen.contains("2 of 4 steps done"), "{screen}");
}
