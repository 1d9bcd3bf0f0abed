//! MCP tools inside the ACT loop (docs/cognition.md §19): which tools this turn offers, and
//! one call with its approval, time limit and degradation. The innate skills run on the
//! database thread through the synchronous dispatcher; a tool call is network-shaped I/O, so
//! it is awaited here instead and only its approval touches the database.

use super::Engine;
use crate::cognition::act::dispatch::ActionResult;
use crate::cognition::act::mcp::{self as tools, Answer, Approval, ApprovalRequest};
use crate::cognition::act::plan::Action;
use crate::events::NoticeLevel;
use crate::mcp::ToolInfo;
use serde_json::{Value, json};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// One tool call as the loop accounts for it.
pub(super) struct Called {
    pub result: ActionResult,
    /// The tool was not run for want of the user's go-ahead: the loop stops and says so.
    pub refused: bool,
    /// The server failed, hung or reported an error: the turn goes on without it.
    pub degraded: bool,
}

impl Engine {
    /// The tools offered this turn. A server that cannot list its tools is left out with a
    /// notice (the ACT pane's status line), never an error for the turn.
    pub(super) async fn mcp_offer(&self, text: &str, triage_skills: &[String]) -> Vec<ToolInfo> {
        let all = self.mcp_tools(true).await;
        tools::select(&all, triage_skills, text).into_iter().cloned().collect()
    }

    /// The skills of the MCP tools the message names, for triage: naming one makes the turn
    /// ACT. Empty without servers; a server that cannot list is skipped quietly here (the
    /// ACT loop's offer says so if the turn gets there).
    pub(super) async fn mcp_named(&self, text: &str) -> Vec<String> {
        let all = self.mcp_tools(false).await;
        tools::select(&all, &[], text).into_iter().map(ToolInfo::skill).collect()
    }

    /// Every configured server's tools; `notify`: a server that cannot list them says so.
    async fn mcp_tools(&self, notify: bool) -> Vec<ToolInfo> {
        let Some(hub) = &self.mcp else { return Vec::new() };
        let mut all = Vec::new();
        for name in hub.names() {
            match hub.tools(&name).await {
                Ok(t) => all.extend(t),
                Err(e) if notify => {
                    self.bus.notice(NoticeLevel::Warn, format!("{e}; its tools are not offered this turn"))
                }
                Err(_) => {}
            }
        }
        all
    }

    /// Run `action` (an offered tool's skill): ask first when it may change things, then call
    /// it within its server's time limit.
    pub(super) async fn mcp_call(
        &self,
        tool: &ToolInfo,
        action: &Action,
        previous: Option<&str>,
        cancel: &CancellationToken,
    ) -> Called {
        let clock = Instant::now();
        let skill = tool.skill();
        let mut params = action.params.clone();
        if let Some(prev) = previous {
            for v in params.values_mut() {
                if v.as_str() == Some("$previous") {
                    *v = Value::String(prev.to_string());
                }
            }
        }
        let args = Value::Object(params);
        let t = tool.clone();
        let approval = self.db.call(move |c| Ok(tools::approval(c, &t))).await.unwrap_or(Approval::AskFirst);
        if approval == Approval::AskFirst {
            let (answer, interactive) = self.ask_user(tool, &args, cancel).await;
            if answer == Answer::Always {
                let t = tool.clone();
                let now = crate::store::now_ts();
                if let Err(e) = self.db.call(move |c| tools::always_allow(c, &t, now)).await {
                    tracing::warn!("always-allow not remembered: {}", crate::describe(&e));
                }
            }
            if answer == Answer::No {
                let summary = tools::refusal(&skill, interactive);
                let result = outcome(&skill, false, summary, json!({"refused": true}), clock, true);
                return Called { result, refused: true, degraded: false };
            }
        }
        let Some(hub) = &self.mcp else {
            let result = outcome(&skill, false, tools::degraded(&skill, "no MCP servers"), json!({}), clock, false);
            return Called { result, refused: false, degraded: true };
        };
        let call = hub.call(&tool.server, &tool.name, args);
        let reply = tokio::select! {
            r = call => r.map_err(|e| e.to_string()),
            _ = cancel.cancelled() => Err("cancelled".to_string()),
        };
        match reply {
            Ok(text) => {
                let summary = crate::text::clip::clip(&text, tools::RESULT_CHARS);
                Called {
                    result: outcome(&skill, true, summary, json!({"text": text}), clock, false),
                    refused: false,
                    degraded: false,
                }
            }
            Err(e) => Called {
                result: outcome(&skill, false, tools::degraded(&skill, &e), json!({"error": e}), clock, false),
                refused: false,
                degraded: true,
            },
        }
    }

    /// The user's answer, and whether anyone could be asked at all.
    async fn ask_user(&self, tool: &ToolInfo, args: &Value, cancel: &CancellationToken) -> (Answer, bool) {
        let tx = self.approvals.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        let Some(tx) = tx else { return (Answer::No, false) };
        let (answer, rx) = tokio::sync::oneshot::channel();
        let args = crate::text::clip::clip(&args.to_string(), 120);
        if tx.send(ApprovalRequest { tool: tool.clone(), args, answer }).await.is_err() {
            return (Answer::No, false);
        }
        tokio::select! {
            a = rx => (a.unwrap_or(Answer::No), true),
            _ = cancel.cancelled() => (Answer::No, true),
        }
    }
}

fn outcome(skill: &str, ok: bool, summary: String, data: Value, clock: Instant, card: bool) -> ActionResult {
    ActionResult {
        kind: skill.to_string(),
        ok,
        summary,
        data,
        ms: clock.elapsed().as_secs_f64() * 1000.0,
        card,
        choices: Vec::new(),
    }
}
