//! MCP tools as ACT skills: which of the servers' tools the planner sees this turn, the line
//! that describes each one to it, and whether a call must be confirmed first. The calling
//! itself goes through [`crate::mcp::Hub::call`], whose per-server time limit keeps a hung
//! server from holding the turn.
//!
//! Selection follows the innate skills' rule (docs/cognition.md §19): a tool is offered only
//! when triage names it (`mcp.SERVER.TOOL`) or the message names it, at most
//! [`MAX_OFFERED`] per turn, so a server with fifty tools does not flood the planner's prompt.

use crate::mcp::ToolInfo;
use crate::store::KvStateRepo;
use rusqlite::Connection;

/// How many MCP tools one planner prompt may carry.
pub const MAX_OFFERED: usize = 3;
/// `kv_state` namespace holding the tools the user said to always allow.
const ALLOW_NS: &str = "mcp_always_allow";

/// The tools offered this turn: those triage selected by skill name, then those the message
/// mentions by name (`read_file` matches "read file" and "read_file"), in that order.
pub fn select<'t>(tools: &'t [ToolInfo], triage_skills: &[String], text: &str) -> Vec<&'t ToolInfo> {
    let words = normalise(text);
    let by_triage = tools.iter().filter(|t| triage_skills.iter().any(|s| *s == t.skill()));
    let by_name = tools.iter().filter(|t| {
        let name = normalise(&t.name);
        !name.is_empty() && format!(" {words} ").contains(&format!(" {name} "))
    });
    let mut out: Vec<&ToolInfo> = Vec::new();
    for t in by_triage.chain(by_name) {
        if out.len() >= MAX_OFFERED {
            break;
        }
        if !out.iter().any(|o| o.skill() == t.skill()) {
            out.push(t);
        }
    }
    out
}

/// Lower case, `_`/`-` and punctuation as spaces, single-spaced, so a name matches only whole
/// words. An apostrophe joins rather than splits: "don't" is one word, not "don" and a "t"
/// that a one-letter tool would match.
fn normalise(s: &str) -> String {
    let spaced: String = s
        .chars()
        .filter(|c| !matches!(c, '\'' | '’'))
        .map(|c| if c.is_alphanumeric() { c.to_lowercase().next().unwrap_or(c) } else { ' ' })
        .collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The planner prompt's line for a tool: its skill name, what it does and its argument schema.
pub fn planner_doc(t: &ToolInfo) -> String {
    let desc = t.description.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{} — {} Arguments (JSON Schema): {}", t.skill(), desc, t.schema)
}

/// What has to happen before a tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// Declared read-only, or allowed for good by the user.
    Run,
    /// May change something and the user has not said "always allow": ask first.
    AskFirst,
}

/// Whether `t` may run without asking. A read failure asks (the safe side).
pub fn approval(c: &Connection, t: &ToolInfo) -> Approval {
    if t.read_only {
        return Approval::Run;
    }
    match KvStateRepo(c).get_text(ALLOW_NS, &t.skill()) {
        Ok(Some(v)) if v == "always" => Approval::Run,
        _ => Approval::AskFirst,
    }
}

/// Remember the user's "always allow" for one tool.
pub fn always_allow(c: &Connection, t: &ToolInfo, now: i64) -> Result<(), crate::store::StoreError> {
    allow_skill(c, &t.skill(), now)
}

/// The same by skill name, for `chalie-tui mcp allow`, which may run before the server does.
pub fn allow_skill(c: &Connection, skill: &str, now: i64) -> Result<(), crate::store::StoreError> {
    KvStateRepo(c).set_text(ALLOW_NS, skill, "always", now)
}

/// The user's answer to "run this tool?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// `y`: this call only.
    Once,
    /// `a`: this call and every later one of this tool.
    Always,
    /// `n`, or nobody could be asked.
    No,
}

/// A question for whoever can answer it (the TUI's confirm prompt). Dropping `answer`
/// unanswered counts as [`Answer::No`].
#[derive(Debug)]
pub struct ApprovalRequest {
    pub tool: ToolInfo,
    /// The call's arguments as JSON text, clipped for one line.
    pub args: String,
    pub answer: tokio::sync::oneshot::Sender<Answer>,
}

/// Why a consequential tool did not run, in words for the reply and the ACT pane.
pub fn refusal(skill: &str, interactive: bool) -> String {
    if interactive {
        format!("Did not run {skill}: you said no.")
    } else {
        format!(
            "Did not run {skill}: it may change things and needs your go-ahead, which a one-shot `ask` cannot \
             give. Allow it for good with `chalie-tui mcp allow {skill}`, or use it from the TUI."
        )
    }
}

/// How much of a tool's reply the planner's history and the reply notes carry.
pub const RESULT_CHARS: usize = 600;

/// The ACT result line of a call that did not come back: what failed and that the turn goes
/// on without it.
pub fn degraded(skill: &str, error: &str) -> String {
    format!("{skill} could not be used ({error}); answering without it.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, read_only: bool) -> ToolInfo {
        ToolInfo {
            server: "s".into(),
            name: name.into(),
            description: "Does\n  things.".into(),
            schema: json!({"type": "object"}),
            read_only,
        }
    }

    #[test]
    fn only_tools_triage_or_the_message_names_are_offered() {
        let tools = [tool("read_file", true), tool("write_file", false), tool("search", true), tool("a", true)];
        assert!(select(&tools, &[], "what's the weather").is_empty());
        let picked: Vec<String> = select(&tools, &["mcp.s.search".into()], "please read file notes.txt")
            .iter()
            .map(|t| t.name.clone())
            .collect();
        assert_eq!(picked, ["search", "read_file"]);
        let many = select(&tools, &[], "read_file write_file search a");
        assert_eq!(many.len(), MAX_OFFERED);
        assert_eq!(
            planner_doc(&tools[0]),
            "mcp.s.read_file — Does things. Arguments (JSON Schema): {\"type\":\"object\"}"
        );
    }

    #[test]
    fn a_tool_name_matches_whole_words_only() {
        let tools = [tool("note", false), tool("t", true), tool("web_search", true)];
        let picked = |text: &str| select(&tools, &[], text).iter().map(|t| t.name.clone()).collect::<Vec<_>>();
        for ordinary in [
            "my notebook is full",
            "denote the keynote",
            "notes from the meeting",
            "notation",
            "don't stop, it's late",
            "websearch it",
        ] {
            assert!(picked(ordinary).is_empty(), "{ordinary}: {:?}", picked(ordinary));
        }
        assert_eq!(picked("Note: buy milk"), ["note"]);
        assert_eq!(picked("add a (note) here."), ["note"]);
        assert_eq!(picked("try web-search or WEB SEARCH"), ["web_search"]);
        assert_eq!(picked("use t"), ["t"]);
    }

    #[test]
    fn a_consequential_tool_asks_until_always_allowed() {
        let c = crate::store::open_in_memory().unwrap();
        let (reader, writer) = (tool("read_file", true), tool("write_file", false));
        assert_eq!(approval(&c, &reader), Approval::Run);
        assert_eq!(approval(&c, &writer), Approval::AskFirst);
        always_allow(&c, &writer, 1).unwrap();
        assert_eq!(approval(&c, &writer), Approval::Run);
        assert_eq!(approval(&c, &tool("delete", false)), Approval::AskFirst, "allowed per tool, not per server");
        allow_skill(&c, "mcp.s.delete", 2).unwrap();
        assert_eq!(approval(&c, &tool("delete", false)), Approval::Run, "allowed by name before the server ran");
    }

    #[test]
    fn a_refusal_says_how_to_allow_when_nobody_can_be_asked() {
        assert!(refusal("mcp.s.note", false).contains("chalie-tui mcp allow mcp.s.note"));
        assert_eq!(refusal("mcp.s.note", true), "Did not run mcp.s.note: you said no.");
        assert!(degraded("mcp.s.hang", "took too long").ends_with("answering without it."));
    }
}
