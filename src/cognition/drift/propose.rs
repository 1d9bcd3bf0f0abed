//! PLAN's effect (docs/cognition.md §14, §17.1): the thought becomes a persistent task that
//! waits for the user's "start task N", made through the same path as a task asked for in chat.

use crate::cognition::tasks::DEFAULT_PRIORITY;
use crate::cognition::tasks::create::{CreateError, Created, Proposal, create};
use crate::store::StoreError;
use rusqlite::Connection;

/// Proposes `goal` (thought `thought_id`'s text) as a task; returns what happened, for the
/// cycle's effect, and the task's id when one was made or merged.
pub fn propose(c: &Connection, goal: &str, thought_id: i64, now: i64) -> Result<(String, Option<i64>), StoreError> {
    let goal = goal.trim();
    if goal.is_empty() {
        return Ok(("no task proposed: the thought is empty".into(), None));
    }
    let origin = format!("drift thought #{thought_id}");
    let p = Proposal { goal, priority: DEFAULT_PRIORITY, thread_id: None, origin: Some(&origin) };
    Ok(match create(c, &p, now) {
        Ok(Created::New { id }) => {
            (format!("proposed task #{id}, awaiting confirmation (\"start task {id}\")"), Some(id))
        }
        Ok(Created::Merged { id, state, .. }) => (format!("merged into task #{id} ({})", state.as_str()), Some(id)),
        Err(CreateError::Full) => ("no task proposed: 5 tasks are open".into(), None),
        Err(CreateError::Store(e)) => return Err(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{TasksRepo, open_in_memory};
    use crate::vocab::tasks::TaskState;

    #[test]
    fn a_plan_proposal_waits_for_the_go_ahead_and_a_repeat_merges() {
        let c = open_in_memory().unwrap();
        let goal = "compare the coffee grinders that suit early mornings and list two";
        let (effect, id) = propose(&c, goal, 12, 1_000).unwrap();
        let id = id.unwrap();
        assert!(effect.contains(&format!("start task {id}")), "{effect}");
        let open = TasksRepo(&c).list(false).unwrap();
        assert_eq!(open.len(), 1);
        assert_eq!(open[0].state, TaskState::AwaitingConfirmation);
        assert_eq!(open[0].origin.as_deref(), Some("drift thought #12"));
        let shown = crate::cognition::tasks::view::lines(&open[0], chrono::FixedOffset::east_opt(0).unwrap());
        assert_eq!(shown.get(1).map(String::as_str), Some("  proposed by drift thought #12"), "{shown:?}");
        assert!(TasksRepo(&c).next_due(i64::MAX).unwrap().is_none(), "nothing runs before the go-ahead");
        // The same idea on a later cycle is the same task.
        let (effect, again) =
            propose(&c, "compare coffee grinders that suit early mornings, list two", 13, 2_000).unwrap();
        assert_eq!(again, Some(id), "{effect}");
        assert!(effect.starts_with("merged into task"), "{effect}");
        assert_eq!(TasksRepo(&c).list(false).unwrap().len(), 1);
    }

    #[test]
    fn no_task_past_the_open_limit_or_from_an_empty_thought() {
        let c = open_in_memory().unwrap();
        for g in [
            "find a dentist near work",
            "plan a birthday dinner",
            "compare phone contracts",
            "learn Portuguese",
            "sort photos",
        ] {
            propose(&c, g, 1, 0).unwrap();
        }
        let (effect, id) = propose(&c, "read about sourdough starters", 2, 0).unwrap();
        assert_eq!((id, effect.contains("5 tasks are open")), (None, true), "{effect}");
        assert_eq!(propose(&c, "  ", 3, 0).unwrap().1, None);
        assert_eq!(TasksRepo(&c).list(false).unwrap().len(), 5);
    }
}
