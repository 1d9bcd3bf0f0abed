//! MCP servers from the user's side: `chalie-tui mcp list` against the example server
//! (examples/mcp_test_server.rs) over real stdio, plus a server that cannot start; the same
//! server over streamable HTTP in `http`.

mod http;

use crate::support::bin::{chalie, chalie_with, json_lines, text};
use crate::support::harness::{self, Harness, triage_reply};
use crate::support::mcp_server::test_server;
use crate::support::openai_double::Reply;
use chalie::cognition::act::mcp::{Answer, ApprovalRequest};
use chalie::cognition::router::Mode;
use chalie::config::Location;
use chalie::config::mcp::{Server, Servers, Transport};
use chalie::mcp::Hub;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

#[test]
fn mcp_list_shows_each_server_state_and_tools() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[mcp.servers.notes]\ncommand = \"{}\"\nenv = {{ MCP_TEST_SECRET = \"CHALIE_IT_SECRET\" }}\n\n\
         [mcp.servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n",
        test_server()
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let env = [("CHALIE_IT_SECRET", "hunter2")];
    let out = chalie_with(dir.path(), &dir.path().join("config.toml"), &env, &["mcp", "list"]);
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "a failed server fails the listing: {shown}");
    assert!(shown.contains("notes: running (5 tools)"), "{shown}");
    assert!(shown.contains("  echo  [read-only]  Repeat the text back"), "{shown}");
    assert!(shown.contains("  note  [asks first]"), "{shown}");
    assert!(shown.contains("broken: MCP server 'broken' did not start"), "{shown}");
    assert!(!shown.contains("hunter2") && !text(&out.stderr).contains("hunter2"), "secrets never shown");

    let out = chalie_with(dir.path(), &dir.path().join("config.toml"), &env, &["mcp", "list", "--json"]);
    let rows = json_lines(&out);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["name"], "notes");
    assert_eq!(rows[1]["tools"][0]["schema"]["required"][0], "text");
}

#[test]
fn mcp_list_without_servers_says_how_to_add_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = chalie(dir.path(), &["mcp", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("[mcp.servers.NAME]"));
}

/// The engine over the scripted endpoint with the example server as `notes` (each call may
/// take `timeout_secs`). The messages route to ACT on the heuristics (a list command) and name
/// the tool, which is what offers it; the scripted plan decides what runs.
async fn engine_with_notes(script: Vec<Reply>, timeout_secs: u64) -> Harness {
    let Harness { double, db, bus, engine } = harness::start_heuristic(script).await;
    Harness { double, db, bus, engine: engine.with_mcp(Arc::new(notes_hub(timeout_secs))) }
}

/// The example server as `notes`.
fn notes_hub(timeout_secs: u64) -> Hub {
    let server = Server {
        transport: Transport::Stdio { command: test_server(), args: vec![], env: BTreeMap::new() },
        timeout_secs,
        at: Location { file: "/c.toml".into(), line: 1 },
    };
    Hub::new(Servers(BTreeMap::from([("notes".to_string(), server)])), Arc::new(|_| None))
}

fn plan(actions: Value) -> Reply {
    Reply::text(&json!({ "actions": actions }).to_string())
}

fn prompts(h: &Harness) -> Vec<String> {
    h.double.chat_requests().iter().map(|r| r.body.to_string()).collect()
}

#[tokio::test]
async fn a_read_only_tool_runs_and_its_result_reaches_the_reply() {
    let h = engine_with_notes(
        vec![
            plan(json!([{"type": "mcp.notes.echo", "params": {"text": "hello there"}}])),
            plan(json!([])),
            Reply::text("The echo tool said hello there."),
        ],
        10,
    )
    .await;
    let r = h.say("t", "put hello there on my list with echo").await;
    assert_eq!(r.mode, Mode::Act, "{} {:?}", r.router.reason, r.fallbacks);
    let first = &r.act_iterations[0];
    assert_eq!(first.actions[0].kind, "mcp.notes.echo");
    assert!(first.results[0].ok && first.results[0].summary == "echo: hello there", "{:?}", first.results);
    let sent = prompts(&h);
    assert!(sent[0].contains("mcp.notes.echo — Repeat the text back"), "the planner saw the tool: {}", sent[0]);
    assert!(!sent[0].contains("mcp.notes.note"), "only the tools the message names");
    assert!(sent.last().is_some_and(|p| p.contains("mcp.notes.echo: echo: hello there")), "the reply's notes");
    assert_eq!(r.response, "The echo tool said hello there.");
    assert!(!r.fallbacks.iter().any(|f| f == "mcp_tool"));
}

#[tokio::test]
async fn a_consequential_tool_is_refused_when_nobody_can_be_asked() {
    let h = engine_with_notes(
        vec![plan(json!([{"type": "mcp.notes.note", "params": {"text": "buy milk"}}])), Reply::text("unused")],
        10,
    )
    .await;
    let r = h.say("t", "put buy milk on my list with note").await;
    assert_eq!(r.mode, Mode::Act, "{} {:?}", r.router.reason, r.fallbacks);
    let result = &r.act_iterations[0].results[0];
    assert!(!result.ok && result.data["refused"] == true, "{result:?}");
    assert_eq!(r.act_termination.map(|t| t.as_str()), Some("needs_confirmation"));
    assert!(r.response.contains("chalie-tui mcp allow mcp.notes.note"), "{}", r.response);
    assert!(!r.response.contains("noted:"), "the tool never ran");
}

#[tokio::test]
async fn always_allow_is_asked_once_and_remembered() {
    let note = || plan(json!([{"type": "mcp.notes.note", "params": {"text": "buy milk"}}]));
    let h = engine_with_notes(
        vec![note(), plan(json!([])), Reply::text("Noted."), note(), plan(json!([])), Reply::text("Again.")],
        10,
    )
    .await;
    let (tx, mut rx) = tokio::sync::mpsc::channel::<ApprovalRequest>(4);
    h.engine.set_approver(tx);
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = asked.clone();
    tokio::spawn(async move {
        while let Some(q) = rx.recv().await {
            log.lock().unwrap().push((q.tool.skill(), q.args.clone()));
            let _ = q.answer.send(Answer::Always);
        }
    });
    let r = h.say("t", "put buy milk on my list with note").await;
    assert_eq!(r.act_iterations[0].results[0].summary, "noted: buy milk", "{:?}", r.act_iterations);
    let r2 = h.say("t", "put buy milk on my list with note again").await;
    assert_eq!(r2.act_iterations[0].results[0].summary, "noted: buy milk");
    assert_eq!(*asked.lock().unwrap(), [("mcp.notes.note".to_string(), r#"{"text":"buy milk"}"#.to_string())]);
    let stored = h.read(|c| chalie::store::KvStateRepo(c).get_text("mcp_always_allow", "mcp.notes.note")).await;
    assert_eq!(stored.as_deref(), Some("always"), "remembered in the database");
}

#[tokio::test]
async fn a_no_at_the_prompt_runs_nothing() {
    let h = engine_with_notes(vec![plan(json!([{"type": "mcp.notes.note", "params": {"text": "x"}}]))], 10).await;
    let (tx, mut rx) = tokio::sync::mpsc::channel::<ApprovalRequest>(1);
    h.engine.set_approver(tx);
    tokio::spawn(async move {
        while let Some(q) = rx.recv().await {
            let _ = q.answer.send(Answer::No);
        }
    });
    let r = h.say("t", "put x on my list with note").await;
    assert_eq!(r.act_iterations[0].results[0].summary, "Did not run mcp.notes.note: you said no.");
    assert_eq!(r.response, "Did not run mcp.notes.note: you said no.");
}

#[tokio::test]
async fn a_hanging_tool_times_out_and_the_turn_answers_without_it() {
    let h = engine_with_notes(
        vec![
            plan(json!([{"type": "mcp.notes.hang", "params": {}}])),
            plan(json!([])),
            Reply::text("The hang tool did not answer, so I can't say."),
        ],
        1,
    )
    .await;
    let r = h.say("t", "put x on my list with hang").await;
    assert_eq!(r.mode, Mode::Act, "{} {:?}", r.router.reason, r.fallbacks);
    let result = &r.act_iterations[0].results[0];
    assert!(!result.ok, "{result:?}");
    assert!(result.summary.contains("took longer than 1s") && result.summary.contains("answering without it"));
    assert!(r.fallbacks.iter().any(|f| f == "mcp_tool"), "{:?}", r.fallbacks);
    assert!(prompts(&h).last().is_some_and(|p| p.contains("could not be used")), "the reply is told");
    assert_eq!(r.response, "The hang tool did not answer, so I can't say.");
}

#[test]
fn ask_refuses_a_consequential_tool_until_mcp_allow_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let note = || plan(json!([{"type": "mcp.notes.note", "params": {"text": "buy milk"}}]));
    let double = rt.block_on(crate::support::openai_double::Double::start(vec![
        note(),
        note(),
        plan(json!([])),
        Reply::text("Noted: buy milk."),
    ]));
    crate::support::bin::write_double_config(dir.path(), &double.base_url());
    let mut config = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    config.push_str(&format!("\n[mcp.servers.notes]\ncommand = \"{}\"\n", test_server()));
    std::fs::write(dir.path().join("config.toml"), config).unwrap();

    let out = chalie(dir.path(), &["ask", "--json", "put buy milk on my list with note"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = &json_lines(&out)[0];
    assert!(report["response"].as_str().unwrap_or("").contains("chalie-tui mcp allow mcp.notes.note"), "{report}");
    assert_eq!(report["act_iterations"][0]["results"][0]["data"]["refused"], true);

    let out = chalie(dir.path(), &["mcp", "allow", "mcp.notes.note"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = chalie(dir.path(), &["mcp", "allow", "mcp.nowhere.x"]);
    assert_eq!(out.status.code(), Some(2), "an unknown server is a usage error");

    let out = chalie(dir.path(), &["ask", "--json", "put buy milk on my list with note"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = &json_lines(&out)[0];
    assert_eq!(report["act_iterations"][0]["results"][0]["summary"], "noted: buy milk", "{report}");
    assert_eq!(report["response"], "Noted: buy milk.");
}

/// A message that only names a tool (no list words, no innate skill) is ACT, with the
/// keyword triage and with a model triage whose bare ACT the capability-gap rule would veto.
#[tokio::test]
async fn naming_a_tool_routes_to_act_and_calls_it() {
    let script = || {
        vec![
            plan(json!([{"type": "mcp.notes.echo", "params": {"text": "hi"}}])),
            plan(json!([])),
            Reply::text("It said hi."),
        ]
    };
    let h = engine_with_notes(script(), 10).await;
    let r = h.say("t", "use echo to say hi").await;
    assert_eq!(r.mode, Mode::Act, "{} {:?}", r.router.reason, r.fallbacks);
    assert!(r.router.reason.contains("mcp.notes.echo"), "{}", r.router.reason);
    assert_eq!(r.act_iterations[0].results[0].summary, "echo: hi", "{:?}", r.act_iterations);
    assert_eq!(r.response, "It said hi.");

    let Harness { double, db, bus, engine } = harness::start([vec![triage_reply("ACT", &[])], script()].concat()).await;
    let hub = notes_hub(10);
    let h = Harness { double, db, bus, engine: engine.with_mcp(Arc::new(hub)) };
    let r = h.say("t", "use echo to say hi").await;
    assert_eq!(r.mode, Mode::Act, "{} {:?} {:?}", r.router.reason, r.fallbacks, r.triage.sanity_rules);
    assert!(r.triage.sanity_rules.iter().any(|s| s == "R1:named_tool"), "{:?}", r.triage.sanity_rules);
    assert_eq!(r.act_iterations[0].results[0].summary, "echo: hi", "{:?}", r.act_iterations);
}
