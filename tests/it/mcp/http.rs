//! The example server over streamable HTTP (`url` servers): `mcp list`, a call through the
//! ACT loop, and a server that is down or goes away, which costs the turn a line, not an
//! answer.

use super::{plan, prompts};
use crate::support::bin::{chalie_with, json_lines, text};
use crate::support::harness::{self, Harness, drain};
use crate::support::mcp_server::HttpServer;
use crate::support::openai_double::Reply;
use chalie::cognition::router::Mode;
use chalie::config::Location;
use chalie::config::mcp::{Server, Servers, Transport};
use chalie::events::{EngineEvent, NoticeLevel};
use chalie::mcp::Hub;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A loopback address where nothing listens (bound, then released).
fn down_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}/mcp", l.local_addr().unwrap())
}

fn web_hub(url: &str) -> Hub {
    let server = Server {
        transport: Transport::Http { url: url.into(), bearer_token_env: None },
        timeout_secs: 5,
        at: Location { file: "/c.toml".into(), line: 1 },
    };
    Hub::new(Servers(BTreeMap::from([("web".to_string(), server)])), Arc::new(|_| None))
}

async fn engine_with_web(script: Vec<Reply>, url: &str) -> Harness {
    let Harness { double, db, bus, engine } = harness::start_heuristic(script).await;
    Harness { double, db, bus, engine: engine.with_mcp(Arc::new(web_hub(url))) }
}

#[test]
fn mcp_list_shows_an_http_server_running_and_one_that_is_down() {
    let http = HttpServer::start(Some("hunter2"));
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[mcp.servers.web]\nurl = \"{}\"\nbearer_token_env = \"CHALIE_IT_WEB_TOKEN\"\n\n\
         [mcp.servers.down]\nurl = \"{}\"\ntimeout_secs = 5\n",
        http.url,
        down_url()
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let env = [("CHALIE_IT_WEB_TOKEN", "hunter2")];
    let out = chalie_with(dir.path(), &dir.path().join("config.toml"), &env, &["mcp", "list"]);
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "a server that is down fails the listing: {shown}");
    assert!(shown.contains("web: running (5 tools)"), "{shown}");
    assert!(shown.contains("  note  [asks first]"), "{shown}");
    let down = shown.lines().find(|l| l.starts_with("down: ")).unwrap_or_default();
    assert!(down.contains("did not start") && down.contains("onnection refused"), "{shown}");
    assert!(!shown.contains("hunter2") && !text(&out.stderr).contains("hunter2"), "the token is never shown");

    let out = chalie_with(dir.path(), &dir.path().join("config.toml"), &[], &["mcp", "list", "--json"]);
    let rows = json_lines(&out);
    assert!(rows[1]["state"].as_str().unwrap_or("").contains("CHALIE_IT_WEB_TOKEN"), "{:?}", rows[1]);
}

#[tokio::test]
async fn an_http_tool_runs_as_an_act_iteration() {
    let http = HttpServer::start(None);
    let script = vec![
        plan(json!([{"type": "mcp.web.echo", "params": {"text": "hi"}}])),
        plan(json!([])),
        Reply::text("It said hi."),
    ];
    let h = engine_with_web(script, &http.url).await;
    let r = h.say("t", "use echo to say hi").await;
    assert_eq!(r.mode, Mode::Act, "{} {:?}", r.router.reason, r.fallbacks);
    assert_eq!(r.act_iterations[0].actions[0].kind, "mcp.web.echo");
    assert_eq!(r.act_iterations[0].results[0].summary, "echo: hi", "{:?}", r.act_iterations);
    assert!(prompts(&h)[0].contains("mcp.web.echo — Repeat the text back"), "the planner saw the tool");
    assert_eq!(r.response, "It said hi.");
}

#[tokio::test]
async fn a_server_that_is_down_is_a_notice_and_the_turn_answers() {
    let h = engine_with_web(vec![plan(json!([])), Reply::text("Added.")], &down_url()).await;
    let mut rx = h.bus.subscribe();
    let r = h.say("t", "put milk on my list with echo").await;
    assert_eq!(r.mode, Mode::Act, "{} {:?}", r.router.reason, r.fallbacks);
    assert!(!prompts(&h)[0].contains("mcp.web.echo"), "a server that is down offers nothing");
    let notices: Vec<String> = drain(&mut rx)
        .into_iter()
        .filter_map(|e| match e {
            EngineEvent::Notice { level: NoticeLevel::Warn, message } => Some(message),
            _ => None,
        })
        .collect();
    assert!(
        notices.iter().any(|n| n.starts_with("MCP server 'web' did not start") && n.contains("not offered")),
        "{notices:?}"
    );
    assert!(!r.response.is_empty());
}

#[tokio::test]
async fn a_server_that_goes_away_mid_session_degrades_the_call() {
    let http = HttpServer::start(None);
    let Harness { double, db, bus, engine } = harness::start_heuristic(vec![
        plan(json!([{"type": "mcp.web.echo", "params": {"text": "hi"}}])),
        plan(json!([])),
        Reply::text("The echo tool is not answering."),
    ])
    .await;
    let hub = Arc::new(web_hub(&http.url));
    assert_eq!(hub.tools("web").await.unwrap().len(), 5, "listed (and kept) while the server was up");
    let h = Harness { double, db, bus, engine: engine.with_mcp(hub) };
    drop(http);
    let r = h.say("t", "use echo to say hi").await;
    assert_eq!(r.mode, Mode::Act, "{} {:?}", r.router.reason, r.fallbacks);
    let result = &r.act_iterations[0].results[0];
    assert!(!result.ok && result.summary.starts_with("mcp.web.echo could not be used ("), "{result:?}");
    assert!(result.summary.ends_with("answering without it."), "{result:?}");
    assert!(r.fallbacks.iter().any(|f| f == "mcp_tool"), "{:?}", r.fallbacks);
    assert_eq!(r.response, "The echo tool is not answering.");
}
