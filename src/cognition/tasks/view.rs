//! A task as text: the plan as a tree under its goal, each step's state and result, coverage
//! and the next run. `chalie-tui tasks` prints it; the Tasks view (F7) draws it.

use crate::vocab::tasks::{PlanStep, StepState, Task, TaskState};
use chrono::FixedOffset;

/// The local clock's offset now (the command line shows local times).
pub fn local_offset() -> FixedOffset {
    *chrono::Local::now().offset()
}

fn when(ts: i64, offset: FixedOffset) -> String {
    chrono::DateTime::from_timestamp(ts, 0)
        .map(|t| t.with_timezone(&offset).format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}

fn mark(s: StepState) -> &'static str {
    match s {
        StepState::Pending => "[ ]",
        StepState::Done => "[x]",
        StepState::Skipped => "[-]",
    }
}

/// The task's header line and its plan as an indented tree (a step under the first step it
/// depends on, so roots are flush left).
pub fn lines(t: &Task, offset: FixedOffset) -> Vec<String> {
    let next = match (t.state, t.next_run_at) {
        (TaskState::AwaitingConfirmation, _) => format!("waits for \"start task {}\"", t.id),
        (TaskState::Pending | TaskState::Running, Some(n)) => format!("next run {}", when(n, offset)),
        (TaskState::Pending | TaskState::Running, None) => "next run at the worker's next cycle".into(),
        _ => format!("expires {}", when(t.expires_at, offset)),
    };
    let next = if t.state.is_open() { next } else { format!("updated {}", when(t.updated_at, offset)) };
    let mut out = vec![format!(
        "#{} {} [{}] priority {}, {:.0} % covered, {} cycles, {next}",
        t.id,
        t.goal,
        t.state.as_str(),
        t.priority,
        t.coverage * 100.0,
        t.cycles
    )];
    if let Some(origin) = &t.origin {
        out.push(format!("  proposed by {origin}"));
    }
    let Some(plan) = &t.plan else {
        out.push("  (no plan yet: it is made at the first run)".into());
        return out;
    };
    if let Some(why) = &plan.rejected {
        out.push(format!("  one-step plan: the model's was not used ({why})"));
    }
    let mut shown = Vec::new();
    for root in plan.steps.iter().filter(|s| s.depends_on.is_empty()) {
        tree(&plan.steps, root, 1, &mut shown, &mut out);
    }
    out
}

fn tree<'a>(steps: &'a [PlanStep], s: &'a PlanStep, depth: usize, shown: &mut Vec<&'a str>, out: &mut Vec<String>) {
    if shown.contains(&s.id.as_str()) {
        return;
    }
    shown.push(&s.id);
    let pad = "  ".repeat(depth);
    let tools = if s.tools_needed.is_empty() { String::new() } else { format!(" ({})", s.tools_needed.join(", ")) };
    out.push(format!("{pad}{} {} {}{tools}", mark(s.state), s.id, s.description));
    if let Some(r) = &s.result {
        out.push(format!("{pad}    → {}", crate::text::clip::clip(r, 160)));
    }
    for child in steps.iter().filter(|c| c.depends_on.first() == Some(&s.id)) {
        tree(steps, child, depth + 1, shown, out);
    }
}
