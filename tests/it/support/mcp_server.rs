//! The example MCP server (examples/mcp_test_server.rs), which `cargo test`/`nextest` build
//! beside this test binary: its path for stdio servers, and a running `--http` instance.

use std::io::BufRead;
use std::process::{Child, Command, Stdio};

/// The example server's binary.
pub fn test_server() -> String {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().and_then(|d| d.parent()).unwrap().join("examples/mcp_test_server");
    assert!(path.exists(), "{} missing: cargo build --example mcp_test_server", path.display());
    path.display().to_string()
}

/// The example server serving streamable HTTP on a free loopback port; killed when dropped.
pub struct HttpServer {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`, as the server printed it.
    pub url: String,
}

impl HttpServer {
    /// `bearer`: the token the server insists on, if any.
    pub fn start(bearer: Option<&str>) -> HttpServer {
        let mut cmd = Command::new(test_server());
        cmd.arg("--http").stdout(Stdio::piped()).stderr(Stdio::null());
        if let Some(t) = bearer {
            cmd.env("MCP_TEST_BEARER", t);
        }
        let mut child = cmd.spawn().unwrap();
        let mut url = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut url).unwrap();
        assert!(url.starts_with("http://127.0.0.1:"), "the server's first line: {url:?}");
        HttpServer { child, url: url.trim().to_string() }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
