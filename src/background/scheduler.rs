//! The reminder scheduler: fires due reminders into the chat and the event bus (and so the
//! session log), and catches up on the ones that came due while the app was closed.
//!
//! [`fire_due`] is the whole decision, synchronous and testable with a fixed clock: every
//! pending reminder due at or before `now` fires once. A one-shot one becomes `fired`; a
//! recurring one moves to its next occurrence after `now`, computed from its previous due
//! time in local wall time, so a week with the app closed fires a daily reminder once (marked
//! late), not seven times. [`SchedulerTask`] is that decision as a periodic task; the loop
//! around it is the one every timed task shares (`super::worker::run_periodic`).

use super::board::WorkerBoard;
use super::registry::{Registry, WorkerId};
use super::worker::PeriodicTask;
use crate::events::{EngineEvent, EventBus};
use crate::store::{ChatRepo, Db, ReminderRow, RemindersRepo, StoreError};
use crate::when::{self as time, Recurrence};
use chrono::NaiveDateTime;
use rusqlite::Connection;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the loop looks for due reminders.
pub const TICK: Duration = Duration::from_secs(1);

/// A reminder fired more than this many seconds after its due time is `late` (it was due
/// while the app was not running, or the machine was asleep).
pub const LATE_AFTER_S: i64 = 60;

/// One reminder that fired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fired {
    pub id: i64,
    pub message: String,
    /// The occurrence that fired, ISO 8601 local (`2026-11-22T09:00`).
    pub due_at: String,
    pub due_ts: i64,
    pub item_type: String,
    pub thread_id: Option<String>,
    pub recurrence: Option<String>,
    /// For a recurring reminder, its next occurrence (it stays pending).
    pub next_due_at: Option<String>,
    pub late: bool,
}

impl Fired {
    /// The bus event for this firing.
    pub fn event(&self) -> EngineEvent {
        EngineEvent::ReminderFired {
            id: self.id,
            message: self.message.clone(),
            due_at: self.due_at.clone(),
            thread_id: self.thread_id.clone(),
            late: self.late,
        }
    }

    /// The line recorded in the chat history (role `system`), matching what the chat pane shows.
    pub fn chat_line(&self) -> String {
        let when = if self.late { "was due" } else { "due" };
        format!("⏰ Reminder: {} ({when} {})", self.message, self.due_at)
    }
}

/// Fire every pending reminder due at or before `now_ts` (unix seconds), in due order, in
/// one transaction. Returns what fired.
pub fn fire_due(c: &Connection, now_ts: i64) -> Result<Vec<Fired>, StoreError> {
    in_transaction(c, |c| fire_due_in(c, now_ts))
}

/// [`fire_due`], then record each fired reminder in its thread's chat history as a `system`
/// line (a reminder with no thread goes to the most recent thread, if there is one), all in
/// one transaction.
pub fn fire_due_and_record(c: &Connection, now_ts: i64) -> Result<Vec<Fired>, StoreError> {
    in_transaction(c, |c| {
        let fired = fire_due_in(c, now_ts)?;
        let chat = ChatRepo(c);
        for f in &fired {
            let thread = match &f.thread_id {
                Some(t) if !t.is_empty() => Some(t.clone()),
                _ => chat.latest_thread()?,
            };
            if let Some(thread) = thread {
                let exchange = format!("reminder-{}-{}", f.id, f.due_ts);
                chat.append(&thread, &exchange, "system", &f.chat_line(), None, None)?;
            }
        }
        Ok(fired)
    })
}

fn in_transaction<R>(c: &Connection, f: impl FnOnce(&Connection) -> Result<R, StoreError>) -> Result<R, StoreError> {
    if !c.is_autocommit() {
        // Already inside the caller's transaction: it commits.
        return f(c);
    }
    let tx = c.unchecked_transaction()?;
    let out = f(&tx)?;
    tx.commit()?;
    Ok(out)
}

fn fire_due_in(c: &Connection, now_ts: i64) -> Result<Vec<Fired>, StoreError> {
    let reminders = RemindersRepo(c);
    let due = reminders.due(now_ts)?;
    let mut fired = Vec::with_capacity(due.len());
    for ReminderRow { id, message, due_at, due_ts, item_type, thread_id, recurrence, .. } in due {
        let rec = recurrence.as_deref().and_then(Recurrence::parse);
        if recurrence.is_some() && rec.is_none() {
            tracing::warn!(id, recurrence = recurrence.as_deref(), "unknown recurrence; firing the reminder once");
        }
        let next = rec.and_then(|r| next_occurrence(r, &due_at, due_ts, now_ts));
        match next {
            Some((next_at, next_ts)) => {
                reminders.reschedule(id, &time::iso(next_at), next_ts, now_ts)?;
            }
            None => {
                reminders.mark_fired(id, now_ts)?;
            }
        }
        fired.push(Fired {
            id,
            message,
            due_at,
            due_ts,
            item_type,
            thread_id,
            recurrence: rec.map(|r| r.as_str()),
            next_due_at: next.map(|(at, _)| time::iso(at)),
            late: now_ts - due_ts > LATE_AFTER_S,
        });
    }
    Ok(fired)
}

/// The first occurrence of `rec` after `now_ts`, stepping from the previous due time (its
/// local wall time, or the instant when the stored text does not parse).
fn next_occurrence(rec: Recurrence, due_at: &str, due_ts: i64, now_ts: i64) -> Option<(NaiveDateTime, i64)> {
    let prev = time::parse_iso(due_at).or_else(|| time::from_unix(due_ts))?;
    let mut next = rec.advance(prev);
    // Fixed periods jump straight over a long gap instead of stepping through it.
    if let (Some(period), Some(next_ts)) = (rec.period_minutes(), time::to_unix(next))
        && now_ts > next_ts
    {
        let behind = (now_ts - next_ts) / 60 / period;
        next += chrono::Duration::minutes(behind * period);
    }
    for _ in 0..100_000 {
        match time::to_unix(next) {
            Some(ts) if ts > now_ts => return Some((next, ts)),
            _ => next = rec.advance(next),
        }
    }
    None
}

/// The scheduler as a periodic task: each tick fires what is due at that tick's `now`,
/// records it in the chat and emits [`EngineEvent::ReminderFired`].
pub struct SchedulerTask {
    pub bus: EventBus,
    /// Wait before the first tick (the front-end subscribes to the bus first, so a reminder
    /// caught up at start is shown, not only logged).
    pub delay: Duration,
}

#[async_trait::async_trait]
impl PeriodicTask for SchedulerTask {
    async fn first_wait(&mut self, _db: &Db, _now: i64) -> Result<Duration, StoreError> {
        Ok(self.delay)
    }

    fn every(&self) -> Duration {
        TICK
    }

    async fn run(&mut self, db: &Db, now: i64) -> Result<(), StoreError> {
        for f in db.call(move |c| fire_due_and_record(c, now)).await? {
            tracing::info!(id = f.id, late = f.late, "reminder fired");
            self.bus.emit(f.event());
        }
        Ok(())
    }
}

/// The scheduler alone: catch up at once, then check every [`TICK`] until `shutdown`.
pub async fn run(db: Db, bus: EventBus, shutdown: CancellationToken) {
    let task = SchedulerTask { bus: bus.clone(), delay: Duration::ZERO };
    let group = Registry::new(WorkerBoard::new()).periodic(WorkerId::Scheduler, task);
    match group.start(&db, &bus, &shutdown) {
        Ok(running) => running.join().await,
        Err(e) => tracing::error!("reminder scheduler not started: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{NewReminder, open_in_memory};

    fn n(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M").unwrap()
    }

    fn ts(s: &str) -> i64 {
        time::to_unix(n(s)).unwrap()
    }

    fn add(c: &Connection, message: &str, due: &str, recurrence: Option<&str>, thread: Option<&str>) -> i64 {
        let new = NewReminder {
            message,
            due_at: due,
            due_ts: ts(due),
            item_type: "notification",
            recurrence,
            thread_id: thread,
        };
        RemindersRepo(c).insert(&new, 0).unwrap()
    }

    fn row(c: &Connection, id: i64) -> (String, String, i64, Option<i64>) {
        let r = RemindersRepo(c).get(id).unwrap().unwrap();
        (r.state, r.due_at, r.due_ts, r.fired_at)
    }

    #[test]
    fn one_shot_fires_once_when_due() {
        let c = open_in_memory().unwrap();
        let id = add(&c, "call mum", "2026-11-19T09:00", None, None);
        assert!(fire_due(&c, ts("2026-11-19T08:59")).unwrap().is_empty(), "not yet due");
        let now = ts("2026-11-19T09:00") + 1;
        let fired = fire_due(&c, now).unwrap();
        assert_eq!(fired.len(), 1);
        let f = &fired[0];
        assert_eq!((f.id, f.message.as_str(), f.due_at.as_str()), (id, "call mum", "2026-11-19T09:00"));
        assert!(!f.late);
        assert_eq!(f.next_due_at, None);
        assert_eq!(row(&c, id).0, "fired");
        assert_eq!(row(&c, id).3, Some(now));
        assert!(fire_due(&c, now + 5).unwrap().is_empty(), "fires only once");
    }

    #[test]
    fn cancelled_reminders_never_fire() {
        let c = open_in_memory().unwrap();
        let id = add(&c, "x", "2026-11-19T09:00", None, None);
        assert!(RemindersRepo(&c).cancel(id).unwrap());
        assert!(fire_due(&c, ts("2026-11-20T09:00")).unwrap().is_empty());
    }

    #[test]
    fn several_due_fire_in_due_order() {
        let c = open_in_memory().unwrap();
        let b = add(&c, "b", "2026-11-19T09:05", None, None);
        let a = add(&c, "a", "2026-11-19T09:00", None, None);
        add(&c, "later", "2026-11-19T12:00", None, None);
        let fired = fire_due(&c, ts("2026-11-19T09:10")).unwrap();
        assert_eq!(fired.iter().map(|f| f.id).collect::<Vec<_>>(), vec![a, b]);
        assert!(fired.iter().all(|f| f.late), "minutes overdue counts as late");
    }

    #[test]
    fn recurring_daily_moves_to_the_next_day() {
        let c = open_in_memory().unwrap();
        let id = add(&c, "pills", "2026-11-19T09:00", Some("daily"), None);
        let fired = fire_due(&c, ts("2026-11-19T09:00")).unwrap();
        assert_eq!(fired.len(), 1);
        assert_eq!(fired[0].next_due_at.as_deref(), Some("2026-11-20T09:00"));
        assert_eq!(fired[0].recurrence.as_deref(), Some("daily"));
        let (state, due_at, due_ts, _) = row(&c, id);
        assert_eq!((state.as_str(), due_at.as_str(), due_ts), ("pending", "2026-11-20T09:00", ts("2026-11-20T09:00")));
        assert!(fire_due(&c, ts("2026-11-19T18:00")).unwrap().is_empty());
        assert_eq!(fire_due(&c, ts("2026-11-20T09:00")).unwrap().len(), 1);
        assert_eq!(row(&c, id).1, "2026-11-21T09:00");
    }

    #[test]
    fn recurring_weekly_and_interval() {
        let c = open_in_memory().unwrap();
        let w = add(&c, "plan the week", "2026-11-22T18:00", Some("weekly"), None);
        let i = add(&c, "stretch", "2026-11-22T18:00", Some("interval:15"), None);
        let h = add(&c, "water", "2026-11-22T18:00", Some("hourly"), None);
        let wd = add(&c, "standup", "2026-11-20T09:30", Some("weekdays"), None);
        let m = add(&c, "rent", "2026-11-30T09:00", Some("monthly"), None);
        let fired = fire_due(&c, ts("2026-11-22T18:00")).unwrap();
        assert_eq!(fired.len(), 4, "all but the monthly one are due");
        assert_eq!(row(&c, w).1, "2026-11-29T18:00");
        assert_eq!(row(&c, i).1, "2026-11-22T18:15");
        assert_eq!(row(&c, h).1, "2026-11-22T19:00");
        assert_eq!(row(&c, wd).1, "2026-11-23T09:30", "Friday → Monday");
        assert_eq!(row(&c, m).1, "2026-11-30T09:00");
        fire_due(&c, ts("2026-11-30T09:00")).unwrap();
        assert_eq!(row(&c, m).1, "2026-12-30T09:00");
    }

    #[test]
    fn catch_up_after_a_long_gap_fires_once_and_late() {
        let c = open_in_memory().unwrap();
        let daily = add(&c, "pills", "2026-11-10T09:00", Some("daily"), None);
        let every = add(&c, "stretch", "2026-11-10T09:00", Some("interval:15"), None);
        let once = add(&c, "dentist", "2026-11-12T15:00", None, None);
        // The app was closed for a week.
        let now = ts("2026-11-17T10:07");
        let fired = fire_due(&c, now).unwrap();
        assert_eq!(fired.len(), 3, "each fires once, however many occurrences were missed");
        assert!(fired.iter().all(|f| f.late));
        let first = fired.iter().find(|f| f.id == daily).unwrap();
        assert_eq!(first.due_at, "2026-11-10T09:00", "reports the occurrence that was missed");
        assert_eq!(row(&c, daily).1, "2026-11-18T09:00", "next is the first occurrence after now");
        assert_eq!(row(&c, every).1, "2026-11-17T10:15");
        assert_eq!(row(&c, once).0, "fired");
        assert!(fire_due(&c, now + 30).unwrap().is_empty());
    }

    #[test]
    fn unknown_recurrence_fires_once() {
        let c = open_in_memory().unwrap();
        let id = add(&c, "x", "2026-11-19T09:00", Some("fortnightly-ish"), None);
        assert_eq!(fire_due(&c, ts("2026-11-19T09:00")).unwrap().len(), 1);
        assert_eq!(row(&c, id).0, "fired");
    }

    #[test]
    fn fired_reminders_are_recorded_in_the_chat() {
        let c = open_in_memory().unwrap();
        ChatRepo(&c).touch_thread("t1").unwrap();
        add(&c, "call mum", "2026-11-19T09:00", None, Some("t1"));
        add(&c, "no thread", "2026-11-19T09:00", None, None);
        let fired = fire_due_and_record(&c, ts("2026-11-19T09:30")).unwrap();
        assert_eq!(fired.len(), 2);
        let lines = ChatRepo(&c).recent("t1", 10).unwrap();
        let texts: Vec<_> = lines.iter().map(|m| (m.role.as_str(), m.content.as_str())).collect();
        assert_eq!(
            texts,
            vec![
                ("system", "⏰ Reminder: call mum (was due 2026-11-19T09:00)"),
                ("system", "⏰ Reminder: no thread (was due 2026-11-19T09:00)"),
            ]
        );
    }

    #[test]
    fn works_inside_a_callers_transaction() {
        let c = open_in_memory().unwrap();
        add(&c, "x", "2026-11-19T09:00", None, None);
        let tx = c.unchecked_transaction().unwrap();
        assert_eq!(fire_due(&tx, ts("2026-11-19T09:00")).unwrap().len(), 1);
        tx.commit().unwrap();
    }

    #[tokio::test]
    async fn run_catches_up_at_start_and_emits_events() {
        let conn = open_in_memory().unwrap();
        ChatRepo(&conn).touch_thread("t1").unwrap();
        let now = crate::store::now_ts();
        let due = time::from_unix(now - 3600).unwrap();
        let due_at = time::iso(due);
        let new = NewReminder {
            message: "call mum",
            due_at: &due_at,
            due_ts: now - 3600,
            item_type: "notification",
            recurrence: None,
            thread_id: Some("t1"),
        };
        RemindersRepo(&conn).insert(&new, 0).unwrap();
        let db = Db::spawn(conn);
        let bus = EventBus::new();
        let mut rx = bus.subscribe();
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(run(db.clone(), bus.clone(), shutdown.clone()));

        let first = next_reminder(&mut rx).await;
        assert!(matches!(first, EngineEvent::ReminderFired { ref message, late: true, .. } if message == "call mum"));

        // One added while running fires on a later tick.
        let now = crate::store::now_ts();
        db.call(move |c| {
            let due_at = time::iso(time::from_unix(now).unwrap());
            let new = NewReminder {
                message: "stretch",
                due_at: &due_at,
                due_ts: now,
                item_type: "notification",
                recurrence: None,
                thread_id: None,
            };
            RemindersRepo(c).insert(&new, 0)
        })
        .await
        .unwrap();
        let second = next_reminder(&mut rx).await;
        assert!(matches!(second, EngineEvent::ReminderFired { ref message, .. } if message == "stretch"));

        let chat = db.call(|c| ChatRepo(c).recent("t1", 10)).await.unwrap();
        assert!(chat.iter().any(|m| m.role == "system" && m.content.starts_with("⏰ Reminder: call mum")));

        shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(30), task).await.expect("the task stops on shutdown").unwrap();
    }

    async fn next_reminder(rx: &mut tokio::sync::broadcast::Receiver<crate::events::Stamped>) -> EngineEvent {
        // Generous safety bound only; the test never asserts how long firing takes.
        tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                match rx.recv().await {
                    Ok(s) if matches!(s.event, EngineEvent::ReminderFired { .. }) => return s.event,
                    Ok(_) => {}
                    Err(e) => panic!("bus closed: {e}"),
                }
            }
        })
        .await
        .expect("a reminder fires")
    }
}
