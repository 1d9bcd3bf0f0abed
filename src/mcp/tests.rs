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
    // Port 1 on loopback: nobody listens there, so the connection is refused at once.
    let down = Transport::Http { url: "http://127.0.0.1:1/mcp".into(), bearer_token_env: None };
    servers.insert("web".into(), server(down, 2));
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
    assert!(matches!(err, McpError::Start { .. }), "{err}");
    assert!(err.to_string().contains("onnection refused") && !err.to_string().contains('\n'), "{err}");
    assert!(matches!(hub.tools("nope").await.unwrap_err(), McpError::Unknown(_)));
    let survey = hub.survey().await;
    assert_eq!(survey.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["gone", "t", "web"]);
    assert_eq!(survey[1].state, "running");
    assert!(survey[0].state.contains("did not start"));
    assert!(survey[2].state.starts_with("MCP server 'web' did not start"), "{}", survey[2].state);
}

/// The example server in `--http` mode on a free loopback port, ended when dropped.
pub struct HttpServer {
    child: std::process::Child,
    pub url: String,
}

impl HttpServer {
    /// `bearer`: the token the server insists on, if any.
    pub fn start(bearer: Option<&str>) -> HttpServer {
        use std::io::BufRead;
        let mut cmd = std::process::Command::new(test_server());
        cmd.arg("--http").stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::null());
        if let Some(t) = bearer {
            cmd.env("MCP_TEST_BEARER", t);
        }
        let mut child = cmd.spawn().expect("start the example server");
        let mut url = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        std::io::BufReader::new(stdout).read_line(&mut url).expect("the address line");
        HttpServer { child, url: url.trim().to_string() }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_hub(url: &str, bearer_token_env: Option<&str>) -> Hub {
    let transport = Transport::Http { url: url.into(), bearer_token_env: bearer_token_env.map(String::from) };
    let servers = BTreeMap::from([("h".to_string(), server(transport, 5))]);
    Hub::new(Servers(servers), Arc::new(|k| (k == "H_TOKEN").then(|| "t0ken".to_string())))
}

#[tokio::test]
async fn an_http_server_lists_and_calls_tools_over_streamable_http() {
    let http = HttpServer::start(None);
    let hub = http_hub(&http.url, None);
    let names: Vec<String> = hub.tools("h").await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["echo", "note", "fail", "hang", "whoami"]);
    assert_eq!(hub.call("h", "echo", serde_json::json!({"text": "over http"})).await.unwrap(), "echo: over http");
    let err = hub.call("h", "fail", serde_json::json!({})).await.unwrap_err();
    assert!(matches!(&err, McpError::Tool { message, .. } if message == "the disk is on fire"), "{err}");
}

#[tokio::test]
async fn an_http_server_gets_the_bearer_token_from_the_named_variable() {
    let http = HttpServer::start(Some("t0ken"));
    let err = http_hub(&http.url, None).tools("h").await.unwrap_err();
    assert!(matches!(err, McpError::Start { .. }), "without the token the server refuses: {err}");
    let err = http_hub(&http.url, Some("UNSET_VAR")).tools("h").await.unwrap_err();
    assert!(err.to_string().contains("environment variable UNSET_VAR (bearer_token_env) is not set"), "{err}");
    let hub = http_hub(&http.url, Some("H_TOKEN"));
    assert_eq!(hub.call("h", "echo", serde_json::json!({"text": "x"})).await.unwrap(), "echo: x");
    assert!(!format!("{:?}", hub.survey().await).contains("t0ken"), "the token is never shown");
}

#[test]
fn skill_names_round_trip() {
    assert_eq!(super::parse_skill("mcp.t.a.b"), Some(("t", "a.b")));
    assert_eq!(super::parse_skill("remember"), None);
    assert_eq!(super::parse_skill("mcp..x"), None);
}
