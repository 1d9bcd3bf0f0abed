//! The popups' database reads, answered on their own worker→app channel.
//!
//! A read for the audit or the memory browser is a view of what is already stored, not
//! something the mind did, so it stays off the event bus (which every subscriber and the
//! session log receive, and which may drop events for a lagging reader). Each popup has one
//! slot holding its latest request: typing a search quickly replaces the pending request
//! instead of queueing a read per keystroke, and the answer to the newest request is never
//! lost behind a burst of engine events.

use crate::cognition::router::Mode;
use crate::store::{self, AuditRow, ChatMessage, Conversation, DriftItem, MemoryLayer, MemoryRow};
use crate::store::{Db, StoreError};
use crate::store::{RoutingRecord, UncertaintyItem};
use std::future::Future;
use tokio::sync::{mpsc, watch};

/// Drift thoughts and uncertainties read when the TUI starts.
const STARTUP_ROWS: usize = 50;

/// An answer to one of the app's reads.
#[derive(Debug, Clone, PartialEq)]
pub enum ViewAnswer {
    /// Audit rows, newest first, for the filter `mode`.
    Audit { mode: Option<Mode>, rows: Vec<AuditRow> },
    /// One routing decision in full; `None` when it is not stored.
    AuditDetail { id: String, record: Option<Box<RoutingRecord>> },
    /// The last 24 h's routing statistics, for the audit's stats tab.
    RoutingStats { stats: Box<crate::cognition::router::stats::RoutingStats> },
    /// Rows of one memory layer; `search` is the filter they answer, so an answer to a search
    /// the user has since changed can be told apart.
    Memory { layer: MemoryLayer, search: Option<String>, rows: Vec<MemoryRow> },
    /// The conversation list for `search`.
    Conversations { search: Option<String>, rows: Vec<Conversation> },
    /// A resumed conversation's recent messages, oldest first.
    Conversation { thread_id: String, rows: Vec<ChatMessage> },
    /// The page of `thread_id`'s messages before exchange `before`, oldest first; `earlier`:
    /// the store holds older ones still.
    EarlierChat { thread_id: String, before: String, rows: Vec<ChatMessage>, earlier: bool },
    /// Stored drift thoughts, newest first, read at start.
    Drift { thoughts: Vec<DriftItem> },
    /// Open uncertainties, most severe first, read at start.
    Uncertainties { items: Vec<UncertaintyItem> },
    /// What memories named `layer:id` say now (`None`: gone), for the Uncertainties pane.
    MemoryTexts { texts: Vec<(String, Option<String>)> },
    /// The persistent tasks, open ones first, for the Tasks view.
    Tasks { tasks: Vec<crate::vocab::tasks::Task> },
    /// An MCP tool asks to run (the confirm prompt).
    Approval(super::approve::Asked),
    /// A read failed; `what` names it for the status line ("the audit").
    Failed { what: &'static str, error: String },
}

/// The request slots, one per popup. Sending replaces whatever request is still pending.
pub struct Queries {
    audit: watch::Sender<Option<Option<Mode>>>,
    decision: watch::Sender<Option<String>>,
    stats: watch::Sender<Option<()>>,
    memory: watch::Sender<Option<(MemoryLayer, Option<String>)>>,
    texts: watch::Sender<Option<Vec<String>>>,
    tasks: watch::Sender<Option<()>>,
    conversations: watch::Sender<Option<Option<String>>>,
    conversation: watch::Sender<Option<String>>,
    earlier: watch::Sender<Option<(String, String)>>,
    answers: mpsc::UnboundedSender<ViewAnswer>,
}

impl Queries {
    /// Start one reader task per popup (and the start-up read of the side panes); answers
    /// arrive on the returned receiver.
    pub fn spawn(db: &Db) -> (Queries, mpsc::UnboundedReceiver<ViewAnswer>) {
        let (answers, rx) = mpsc::unbounded_channel();
        let (audit, audit_rx) = watch::channel(None);
        let (decision, decision_rx) = watch::channel(None);
        let (stats, stats_rx) = watch::channel(None);
        // The same read as `audit --stats` (docs/cognition.md §15.1).
        serve(stats_rx, answers.clone(), db.clone(), |db, ()| async move {
            let read = db.call(|c| crate::cognition::router::stats::last_day(c, store::now_ts())).await;
            answer("the routing statistics", read.map(|s| ViewAnswer::RoutingStats { stats: Box::new(s) }))
        });
        let (memory, memory_rx) = watch::channel(None);
        let (texts, texts_rx) = watch::channel(None);
        let (tasks, tasks_rx) = watch::channel(None);
        serve(tasks_rx, answers.clone(), db.clone(), |db, ()| async move {
            let read = db.call(|c| store::TasksRepo(c).list(true)).await;
            answer("the tasks", read.map(|tasks| ViewAnswer::Tasks { tasks }))
        });
        let (conversations, conversations_rx) = watch::channel(None);
        let (conversation, conversation_rx) = watch::channel(None);
        serve(conversations_rx, answers.clone(), db.clone(), |db, search: Option<String>| async move {
            let q = search.clone();
            let rows =
                db.call(move |c| store::ChatRepo(c).conversations(q.as_deref(), super::conversations::LIMIT)).await;
            answer("conversations", rows.map(|rows| ViewAnswer::Conversations { search, rows }))
        });
        serve(conversation_rx, answers.clone(), db.clone(), |db, thread_id: String| async move {
            let t = thread_id.clone();
            let rows = db.call(move |c| store::ChatRepo(c).recent(&t, super::RESUMED_MESSAGES)).await;
            answer("the conversation", rows.map(|rows| ViewAnswer::Conversation { thread_id, rows }))
        });
        let (earlier, earlier_rx) = watch::channel(None);
        serve(earlier_rx, answers.clone(), db.clone(), |db, (thread_id, before): (String, String)| async move {
            let (t, b) = (thread_id.clone(), before.clone());
            let page = super::chat::EARLIER_PAGE;
            let rows = db.call(move |c| store::ChatRepo(c).before(&t, &b, page)).await;
            let earlier = |rows: &Vec<ChatMessage>| rows.len() == page;
            answer(
                "earlier messages",
                rows.map(|rows| ViewAnswer::EarlierChat { thread_id, before, earlier: earlier(&rows), rows }),
            )
        });
        serve(texts_rx, answers.clone(), db.clone(), |db, names: Vec<String>| async move {
            let read = db.call(move |c| names.into_iter().map(|n| Ok((n.clone(), shown(c, &n)?))).collect()).await;
            answer("memories", read.map(|texts| ViewAnswer::MemoryTexts { texts }))
        });

        serve(audit_rx, answers.clone(), db.clone(), |db, mode: Option<Mode>| async move {
            let filter = mode.map(|m| m.as_str());
            let rows = db.call(move |c| store::audit_rows(c, super::audit::LIMIT, filter)).await;
            answer("the audit", rows.map(|rows| ViewAnswer::Audit { mode, rows }))
        });
        serve(decision_rx, answers.clone(), db.clone(), |db, id: String| async move {
            let key = id.clone();
            let record = db.call(move |c| store::routing_decision(c, &key)).await;
            answer("the decision", record.map(|r| ViewAnswer::AuditDetail { id, record: r.map(Box::new) }))
        });
        serve(
            memory_rx,
            answers.clone(),
            db.clone(),
            |db, (layer, search): (MemoryLayer, Option<String>)| async move {
                let q = search.clone();
                let rows = db.call(move |c| store::list_layer(c, layer, q.as_deref(), super::memory::LIMIT)).await;
                answer("memories", rows.map(|rows| ViewAnswer::Memory { layer, search, rows }))
            },
        );

        let db = db.clone();
        let (kept, answers) = (answers.clone(), answers);
        tokio::spawn(async move {
            let read = db
                .call(|c| Ok((store::recent_drift(c, STARTUP_ROWS)?, store::open_uncertainties(c, STARTUP_ROWS)?)))
                .await;
            match read {
                Ok((thoughts, items)) => {
                    if !thoughts.is_empty() {
                        let _ = answers.send(ViewAnswer::Drift { thoughts });
                    }
                    if !items.is_empty() {
                        let _ = answers.send(ViewAnswer::Uncertainties { items });
                    }
                }
                Err(e) => {
                    let _ = answers.send(answer_failed("drift thoughts", &e));
                }
            }
        });
        let queries = Queries {
            audit,
            decision,
            stats,
            memory,
            texts,
            tasks,
            conversations,
            conversation,
            earlier,
            answers: kept,
        };
        (queries, rx)
    }

    /// Where answers that are not reads (the confirm prompt's questions) go.
    pub fn answers(&self) -> mpsc::UnboundedSender<ViewAnswer> {
        self.answers.clone()
    }

    pub fn audit(&self, mode: Option<Mode>) {
        self.audit.send_replace(Some(mode));
    }

    pub fn routing_stats(&self) {
        self.stats.send_replace(Some(()));
    }

    pub fn decision(&self, id: String) {
        self.decision.send_replace(Some(id));
    }

    pub fn tasks(&self) {
        self.tasks.send_replace(Some(()));
    }

    pub fn memory_texts(&self, names: Vec<String>) {
        self.texts.send_replace(Some(names));
    }

    pub fn conversations(&self, search: Option<String>) {
        self.conversations.send_replace(Some(search));
    }

    pub fn conversation(&self, thread_id: String) {
        self.conversation.send_replace(Some(thread_id));
    }

    /// The chat pane's page before exchange `before` of `thread_id`.
    pub fn earlier_chat(&self, thread_id: String, before: String) {
        self.earlier.send_replace(Some((thread_id, before)));
    }

    pub fn memory(&self, layer: MemoryLayer, search: Option<String>) {
        self.memory.send_replace(Some((layer, search)));
    }
}

/// Answer the newest request in `slot` each time it changes, until the app is gone.
fn serve<Q, F, Fut>(mut slot: watch::Receiver<Option<Q>>, answers: mpsc::UnboundedSender<ViewAnswer>, db: Db, read: F)
where
    Q: Clone + Send + Sync + 'static,
    F: Fn(Db, Q) -> Fut + Send + 'static,
    Fut: Future<Output = ViewAnswer> + Send,
{
    tokio::spawn(async move {
        while slot.changed().await.is_ok() {
            let Some(request) = slot.borrow_and_update().clone() else { continue };
            if answers.send(read(db.clone(), request).await).is_err() {
                return;
            }
        }
    });
}

fn answer(what: &'static str, read: Result<ViewAnswer, StoreError>) -> ViewAnswer {
    read.unwrap_or_else(|e| answer_failed(what, &e))
}

fn answer_failed(what: &'static str, e: &StoreError) -> ViewAnswer {
    ViewAnswer::Failed { what, error: crate::describe(e) }
}

/// What a record's memory says, for the Uncertainties pane: its text, and for a value that
/// was replaced, by what and since when ("used to …" with its temporal_evolution link).
fn shown(c: &rusqlite::Connection, name: &str) -> Result<Option<String>, store::StoreError> {
    let Some((text, _)) = store::memory_text(c, name)? else { return Ok(None) };
    Ok(Some(match store::replaced_by(c, name)? {
        Some((_, value, at)) => match chrono::DateTime::from_timestamp(at, 0) {
            Some(d) => format!("{text} (replaced by {value} on {})", d.format("%-d %b %Y")),
            None => format!("{text} (replaced by {value})"),
        },
        None => text,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    async fn next(rx: &mut mpsc::UnboundedReceiver<ViewAnswer>) -> ViewAnswer {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Some(a)) => a,
            other => panic!("no answer: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_burst_of_searches_is_answered_for_the_latest_one() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("q.db")).unwrap();
        let (q, mut rx) = Queries::spawn(&db);
        for search in ["a", "ap", "app", "appl", "apple"] {
            q.memory(MemoryLayer::Traits, Some(search.into()));
        }
        // The reader may have started on an early request before the burst replaced it, but
        // the last answer is for the last search and nothing is answered twice for it.
        let mut searches = Vec::new();
        loop {
            match next(&mut rx).await {
                ViewAnswer::Memory { search, .. } => {
                    let done = search.as_deref() == Some("apple");
                    searches.push(search);
                    if done {
                        break;
                    }
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(searches.len() <= 2, "coalesced, not one read per keystroke: {searches:?}");
        q.audit(None);
        assert!(matches!(next(&mut rx).await, ViewAnswer::Audit { mode: None, .. }));
    }
}
