//! `chalie-tui tasks [--json] [--all]`, `tasks run --now`, `tasks confirm ID`, `tasks cancel ID`:
//! the persistent tasks (docs/cognition.md §17).

use crate::cli::{TasksAction, TasksArgs};
use crate::cognition::tasks::cycle::{Moment, run_cycle};
use crate::cognition::tasks::view;
use crate::config::{Config, Paths};
use crate::runtime::Runtime;
use crate::store::{self, TasksRepo};
use crate::vocab::tasks::TaskState;
use std::process::ExitCode;
use tokio_util::sync::CancellationToken;

pub fn run(paths: Paths, config: Config, args: TasksArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        None => list(&paths, args.json, args.all),
        Some(TasksAction::Run { now }) => {
            if !now {
                crate::errln!(
                    "The task worker runs on its own while chalie-tui is open; `tasks run --now` runs a cycle here."
                );
                return Ok(ExitCode::from(2));
            }
            run_now(paths, config, args.json)
        }
        Some(TasksAction::Confirm { id }) => {
            let from = [TaskState::AwaitingConfirmation, TaskState::Paused];
            change(&paths, id, &from, TaskState::Pending, "started")
        }
        Some(TasksAction::Cancel { id }) => {
            let from: Vec<TaskState> = TaskState::ALL.into_iter().filter(|s| s.is_open()).collect();
            change(&paths, id, &from, TaskState::Cancelled, "cancelled")
        }
    }
}

fn list(paths: &Paths, json: bool, all: bool) -> anyhow::Result<ExitCode> {
    let conn = store::open(&paths.db_file)?;
    let tasks = TasksRepo(&conn).list(all)?;
    if json {
        for t in &tasks {
            super::say_json(&serde_json::to_string(t)?);
        }
    } else if tasks.is_empty() {
        crate::outln!("No {}tasks in {}.", if all { "" } else { "open " }, paths.db_file.display());
    } else {
        let text: Vec<String> = tasks.iter().map(|t| view::lines(t, view::local_offset()).join("\n")).collect();
        super::say(&text.join("\n\n"));
    }
    Ok(ExitCode::SUCCESS)
}

fn change(paths: &Paths, id: i64, from: &[TaskState], to: TaskState, done: &str) -> anyhow::Result<ExitCode> {
    let _lock = store::InstanceLock::acquire(&paths.db_file)?;
    let conn = store::open(&paths.db_file)?;
    let repo = TasksRepo(&conn);
    match repo.get(id)? {
        None => {
            crate::errln!("There is no task #{id}.");
            Ok(ExitCode::from(1))
        }
        Some(t) if !repo.transition(id, from, to, store::now_ts())? => {
            crate::errln!("Task #{id} is {}: nothing changed.", t.state.as_str());
            Ok(ExitCode::from(1))
        }
        Some(t) => {
            crate::outln!("Task #{id} {done}: {}", t.goal);
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn run_now(paths: Paths, config: Config, json: bool) -> anyhow::Result<ExitCode> {
    let interval = config.tasks.interval_s as i64;
    let rt = Runtime::start(paths, config)?;
    let runtime = super::tokio_runtime()?;
    let report = runtime.block_on(async {
        let engine = rt.start_engine().await?;
        let now = store::now_ts();
        // `--now` means now: a task between its runs is not made to wait.
        rt.db.call(move |c| TasksRepo(c).make_due(now)).await?;
        let moment = Moment { may_speak: true };
        let cancel = CancellationToken::new();
        anyhow::Ok(run_cycle(&rt.db, Some(engine.llm()), &rt.bus, now, now + interval, moment, &cancel).await?)
    });
    drop(runtime);
    rt.finish();
    match report? {
        None => crate::outln!("No task is due (confirm one with `chalie-tui tasks confirm ID`)."),
        Some(r) if json => super::say_json(&serde_json::to_string(&r)?),
        Some(r) => {
            let mut lines = vec![format!("Task #{} cycle {}: {}", r.task_id, r.cycle, r.goal)];
            if let Some(p) = &r.planned {
                lines.push(format!("  planned: {p}"));
            }
            lines.push(format!("  steps run: {}", if r.steps.is_empty() { "-".into() } else { r.steps.join(", ") }));
            lines.push(format!("  coverage {:.0} %, {}", r.coverage * 100.0, r.state.as_str()));
            if let Some(m) = &r.surfaced {
                lines.push(format!("  told you: {m}"));
            }
            super::say(&lines.join("\n"));
        }
    }
    Ok(ExitCode::SUCCESS)
}
