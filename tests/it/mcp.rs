//! MCP servers from the user's side: `chalie-tui mcp list` against the example server
//! (examples/mcp_test_server.rs) over real stdio, plus a server that cannot start.

use crate::support::bin::{chalie, chalie_with, json_lines, text};

/// The example server's binary, built by `cargo test`/`nextest` beside this test binary.
pub fn test_server() -> String {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().and_then(|d| d.parent()).unwrap().join("examples/mcp_test_server");
    assert!(path.exists(), "{} missing: cargo build --example mcp_test_server", path.display());
    path.display().to_string()
}

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
