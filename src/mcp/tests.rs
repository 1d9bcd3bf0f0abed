//! Against the example server over real stdio (examples/mcp_test_server.rs, which
//! `cargo test`/`nextest` build next to this test binary).

use super::{Hub, McpError};
use crate::config::Location;
use crate::config::mcp::{Server, Servers, Transport};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The example's binary: target/debug/examples/, beside target/debug/deps/ where this runs.
pub fn test_server() -> PathBuf {
    let exe = std::env::current_exe().expect("test exe");
    let path = exe.parent().and_then(|d| d.parent()).expect("target dir").join("examples/mcp_test_server");
    assert!(path.exists(), "{} missing: cargo build --example mcp_test_server", path.display());
    path
}

fn server(transport: Transport, timeout_secs: u64) -> Server {
    Server { transport, timeout_secs, at: Location { file: "/c.toml".into(), line: 1 } }
}

fn hub(timeout_secs: u64) -> Hub {
    let mut servers = BTreeMap::new();
    let env = BTreeMap::from([("MCP_TEST_SECRET".to_string(), "CHALIE_TEST_TOKEN".to_string())]);
    let command = test_server().display().to_string();
    servers.insert("t".into(), server(Transport::Stdio { command, args: vec![], env }, timeout_secs));
    servers.insert(
        "gone".into(),
        server(Transport::Stdio { command: "/nonexistent/mcp".into(), args: vec![], env: BTreeMap::new() }, 2),
    );
    servers.insert("web".into(), server(Transport::Http { url: "https://x.test/mcp".into() }, 2));
    Hub::new(Servers(servers), Arc::new(|k| (k == "CHALIE_TEST_TOKEN").then(|| "s3cret".to_string())))
}

#[tokio::test]
async fn lists_tools_with_schemas_and_read_only_flags() {
    let hub = hub(10);
    let tools = hub.tools("t").await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo", "note", "fail", "hang", "whoami"]);
    let echo = &tools[0];
    assert!(echo.read_only);
    assert_eq!(echo.schema["required"][0], "text");
    assert_eq!(echo.skill(), "mcp.t.echo");
    assert!(!tools[1].read_only, "no annotation means consequential");
}

#[tokio::test]
async fn calls_a_tool_and_passes_secrets_through_env() {
    let hub = hub(10);
    let out = hub.call("t", "echo", serde_json::json!({"text": "hi"})).await.unwrap();
    assert_eq!(out, "echo: hi");
    assert_eq!(hub.call("t", "whoami", serde_json::Value::Null).await.unwrap(), "s3cret");
}

#[tokio::test]
async fn a_tool_error_a_hang_and_a_missing_server_are_typed_errors() {
    let hub = hub(2);
    let err = hub.call("t", "fail", serde_json::json!({})).await.unwrap_err();
    assert!(matches!(&err, McpError::Tool { message, .. } if message == "the disk is on fire"), "{err}");
    let err = hub.call("t", "hang", serde_json::json!({})).await.unwrap_err();
    assert!(matches!(err, McpError::Timeout { secs: 2, .. }), "{err}");
    // The hung server was dropped; the next call starts a fresh one.
    assert_eq!(hub.call("t", "echo", serde_json::json!({"text": "again"})).await.unwrap(), "echo: again");
    let err = hub.tools("gone").await.unwrap_err();
    assert!(matches!(err, McpError::Start { .. }), "{err}");
    assert!(!err.to_string().contains('\n'));
    let err = hub.tools("web").await.unwrap_err();
    assert!(err.to_string().contains("unsupported transport"), "{err}");
    assert!(matches!(hub.tools("nope").await.unwrap_err(), McpError::Unknown(_)));
    let survey = hub.survey().await;
    assert_eq!(survey.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["gone", "t", "web"]);
    assert_eq!(survey[1].state, "running");
    assert!(survey[0].state.contains("did not start"));
}

#[test]
fn skill_names_round_trip() {
    assert_eq!(super::parse_skill("mcp.t.a.b"), Some(("t", "a.b")));
    assert_eq!(super::parse_skill("remember"), None);
    assert_eq!(super::parse_skill("mcp..x"), None);
}
