//! Whether a user turn is in flight, kept by the bus itself as events pass.
//!
//! Background tasks that must not run during a turn (drift, tasks, reflection, the WAL
//! checkpoint) used to keep a bus receiver each and drain it when they woke. A broadcast slot
//! is freed only once every receiver has read it, so a task that wakes every 30 minutes kept
//! the last `EventBus::CAPACITY` events alive — streamed tokens, embeddings in `llm_embedded`,
//! routing snapshots — a few hundred turns' worth of memory that grew until the ring was full.
//! A watch holds one `bool` whatever the traffic.

use super::EngineEvent;
use tokio::sync::watch;

impl EngineEvent {
    /// `Some(true)` when this event starts a user turn, `Some(false)` when it ends one.
    pub fn turn_state(&self) -> Option<bool> {
        match self {
            EngineEvent::UserMessage { .. } => Some(true),
            EngineEvent::ReplyDone { .. } | EngineEvent::TurnFailed { .. } => Some(false),
            _ => None,
        }
    }
}

/// A read-only view of the bus's turn state. Holding one keeps no event alive and does not
/// keep the bus open.
#[derive(Clone, Debug)]
pub struct TurnWatch(pub(super) watch::Receiver<bool>);

impl TurnWatch {
    /// Whether a user turn has started and not yet ended.
    pub fn in_flight(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once a user turn is in flight (at once if one is now). Never resolves after
    /// the bus is gone: then no turn can start.
    pub async fn turn_started(&mut self) {
        if self.0.wait_for(|busy| *busy).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// The bus's side: updated on every emitted event that starts or ends a turn.
pub(super) fn record(turn: &watch::Sender<bool>, event: &EngineEvent) {
    if let Some(busy) = event.turn_state() {
        turn.send_if_modified(|v| std::mem::replace(v, busy) != busy);
    }
}

#[cfg(test)]
mod tests {
    use crate::events::{EngineEvent, EventBus, NoticeLevel};
    use std::time::Duration;

    fn user(text: &str) -> EngineEvent {
        EngineEvent::UserMessage { thread_id: "t".into(), exchange_id: "e".into(), text: text.into() }
    }

    fn failed() -> EngineEvent {
        EngineEvent::TurnFailed { exchange_id: "e".into(), error: "down".into() }
    }

    #[test]
    fn the_watch_follows_turns_and_nothing_else() {
        let bus = EventBus::new();
        let turns = bus.turns();
        assert!(!turns.in_flight());
        bus.emit(user("hi"));
        assert!(turns.in_flight());
        bus.notice(NoticeLevel::Info, "a notice is not the end of a turn");
        assert!(turns.in_flight());
        bus.emit(failed());
        assert!(!turns.in_flight());
        assert!(!bus.turns().in_flight(), "a watch taken later reads the same state");
    }

    #[test]
    fn a_watch_keeps_no_event_alive_where_an_unread_receiver_keeps_them_all() {
        let bus = EventBus::new();
        let _turns = bus.turns();
        for i in 0..500 {
            bus.emit(user(&format!("message {i}")));
        }
        assert_eq!(bus.queued(), 0);
        let _idle = bus.subscribe();
        for i in 0..500 {
            bus.emit(user(&format!("message {i}")));
        }
        assert_eq!(bus.queued(), 500, "an unread receiver holds every event sent since it subscribed");
    }

    #[tokio::test]
    async fn turn_started_waits_for_a_user_message() {
        let bus = EventBus::new();
        let mut turns = bus.turns();
        let early = tokio::time::timeout(Duration::from_millis(50), turns.turn_started()).await;
        assert!(early.is_err(), "no turn yet");
        let b = bus.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            b.emit(user("back"));
        });
        tokio::time::timeout(Duration::from_secs(5), turns.turn_started()).await.expect("the message starts a turn");
        tokio::time::timeout(Duration::from_millis(50), turns.turn_started()).await.expect("still in flight: at once");
    }
}
