//! A small MCP server, built with the same SDK as chalie's client, for the tests that need the
//! real protocol (src/mcp/tests.rs, tests/it/mcp.rs). Tools: `echo` (read-only), `note` (not
//! read-only, so chalie asks first), `fail` (replies with an error) and `hang` (never
//! replies). `MCP_TEST_SECRET` is echoed by `whoami`, to check env passing.
//!
//! Over stdio by default (`cargo run --example mcp_test_server`, then type JSON-RPC lines).
//! With `--http` it serves streamable HTTP at `/mcp` on a free loopback port and prints the
//! address as its first stdout line; when `MCP_TEST_BEARER` is set, a request without
//! `Authorization: Bearer <that value>` is answered 401.

use axum::response::IntoResponse;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;
use std::sync::Arc;

struct TestServer;

fn schema(v: serde_json::Value) -> Arc<serde_json::Map<String, serde_json::Value>> {
    Arc::new(v.as_object().cloned().unwrap_or_default())
}

fn tools() -> Vec<Tool> {
    let text = schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}));
    let none = schema(json!({"type": "object", "properties": {}}));
    vec![
        Tool::new("echo", "Repeat the text back", text.clone())
            .with_annotations(ToolAnnotations::new().read_only(true)),
        Tool::new("note", "Write a note down", text),
        Tool::new("fail", "Always fails", none.clone()).with_annotations(ToolAnnotations::new().read_only(true)),
        Tool::new("hang", "Never answers", none.clone()).with_annotations(ToolAnnotations::new().read_only(true)),
        Tool::new("whoami", "The secret it was given", none).with_annotations(ToolAnnotations::new().read_only(true)),
    ]
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request.arguments.as_ref().and_then(|a| a.get("text")).and_then(|t| t.as_str()).unwrap_or("");
        let reply = match request.name.as_ref() {
            "echo" => CallToolResult::success(vec![ContentBlock::text(format!("echo: {text}"))]),
            "note" => CallToolResult::success(vec![ContentBlock::text(format!("noted: {text}"))]),
            "fail" => CallToolResult::error(vec![ContentBlock::text("the disk is on fire")]),
            "whoami" => CallToolResult::success(vec![ContentBlock::text(
                std::env::var("MCP_TEST_SECRET").unwrap_or_else(|_| "unset".into()),
            )]),
            "hang" => {
                std::future::pending::<()>().await;
                CallToolResult::success(vec![])
            }
            other => return Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        };
        Ok(reply.into())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|a| a == "--http") {
        return serve_http().await;
    }
    let service = TestServer.serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}

async fn serve_http() -> Result<(), Box<dyn std::error::Error>> {
    use axum::http::{StatusCode, header};
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    use std::io::Write;

    let mcp = StreamableHttpService::new(
        || Ok(TestServer),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let bearer = std::env::var("MCP_TEST_BEARER").ok().map(|t| format!("Bearer {t}"));
    let gate = move |req: axum::extract::Request, next: axum::middleware::Next| {
        let bearer = bearer.clone();
        async move {
            let given = req.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
            match bearer {
                Some(want) if given != Some(want.as_str()) => StatusCode::UNAUTHORIZED.into_response(),
                _ => next.run(req).await,
            }
        }
    };
    let app = axum::Router::new().nest_service("/mcp", mcp).layer(axum::middleware::from_fn(gate));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let mut out = std::io::stdout();
    writeln!(out, "http://{}/mcp", listener.local_addr()?)?;
    out.flush()?;
    axum::serve(listener, app).await?;
    Ok(())
}
