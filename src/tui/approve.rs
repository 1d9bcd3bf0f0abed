//! The confirm prompt for an MCP tool that may change something (docs/cognition.md §19):
//! the engine's question arrives as a view answer, the prompt sits over the main area, and
//! `y` (once), `a` (always allow this tool) or `n`/Esc (no) answer it. The turn waits on the
//! answer; a prompt closed any other way (the TUI quits) counts as no.

use super::query::ViewAnswer;
use crate::cognition::act::mcp::{Answer, ApprovalRequest};
use crate::cognition::pipeline::Engine;
use crossterm::event::KeyCode;
use ratatui::text::{Line, Text};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// A pending question, cheap to copy into a view answer.
#[derive(Debug, Clone)]
pub struct Asked {
    pub skill: String,
    pub description: String,
    pub args: String,
    reply: Arc<Mutex<Option<oneshot::Sender<Answer>>>>,
}

impl PartialEq for Asked {
    fn eq(&self, other: &Asked) -> bool {
        Arc::ptr_eq(&self.reply, &other.reply)
    }
}

impl Asked {
    pub fn new(r: ApprovalRequest) -> Asked {
        Asked {
            skill: r.tool.skill(),
            description: r.tool.description.clone(),
            args: r.args,
            reply: Arc::new(Mutex::new(Some(r.answer))),
        }
    }

    /// Send the answer (once; later calls do nothing).
    pub fn answer(&self, a: Answer) {
        let sender = self.reply.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        if let Some(s) = sender {
            let _ = s.send(a);
        }
    }

    pub fn text(&self) -> Text<'static> {
        Text::from(vec![
            Line::from(format!("{} wants to run. It may change something.", self.skill)),
            Line::from(self.description.clone()),
            Line::from(format!("Arguments: {}", self.args)),
            Line::from(""),
            Line::from("y = run once · a = always allow this tool · n = no"),
        ])
    }
}

/// The answer a key gives, if it is one of the prompt's keys.
pub fn key(code: KeyCode) -> Option<Answer> {
    match code {
        KeyCode::Char('y' | 'Y') => Some(Answer::Once),
        KeyCode::Char('a' | 'A') => Some(Answer::Always),
        KeyCode::Char('n' | 'N') | KeyCode::Esc => Some(Answer::No),
        _ => None,
    }
}

/// Route the engine's questions to the app as view answers.
pub fn forward(engine: &Engine, answers: mpsc::UnboundedSender<ViewAnswer>) {
    let (tx, mut rx) = mpsc::channel::<ApprovalRequest>(4);
    engine.set_approver(tx);
    tokio::spawn(async move {
        while let Some(r) = rx.recv().await {
            if answers.send(ViewAnswer::Approval(Asked::new(r))).is_err() {
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::ToolInfo;

    #[test]
    fn the_keys_answer_once_and_only_once() {
        let (answer, mut rx) = oneshot::channel();
        let tool = ToolInfo {
            server: "notes".into(),
            name: "note".into(),
            description: "Write a note down".into(),
            schema: serde_json::json!({}),
            read_only: false,
        };
        let asked = Asked::new(ApprovalRequest { tool, args: "{\"text\":\"x\"}".into(), answer });
        let first: String = asked.text().lines[0].spans.iter().map(|s| s.content.as_ref()).collect();
        assert!(first.starts_with("mcp.notes.note wants to run"), "{first}");
        assert_eq!(key(KeyCode::Char('a')), Some(Answer::Always));
        assert_eq!(key(KeyCode::Esc), Some(Answer::No));
        assert_eq!(key(KeyCode::Char('q')), None);
        asked.clone().answer(Answer::Always);
        asked.answer(Answer::No);
        assert_eq!(rx.try_recv(), Ok(Answer::Always));
    }
}
