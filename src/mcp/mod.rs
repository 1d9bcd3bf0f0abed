//! MCP client: the servers named in `[mcp.servers]`, started on the first need, their tools
//! listed with schemas and called with a time limit. Every way a server can let us down
//! (no such program, a crash during the handshake, a hang, an error reply) ends in one
//! [`McpError`] with a one-line message, so the ACT loop can show it and move on rather than
//! wait. Built on the official SDK (`rmcp`): stdio child processes and streamable HTTP.

use crate::config::mcp::{Server, Servers, Transport};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransportConfig, StreamableHttpError};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde::Serialize;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

#[cfg(test)]
mod tests;

/// One tool a server offers, as the planner sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolInfo {
    pub server: String,
    pub name: String,
    pub description: String,
    /// The JSON Schema of the arguments, as the server sent it.
    pub schema: serde_json::Value,
    /// Declared read-only by the server's annotations; anything else may change the world
    /// and is asked about before its first run.
    pub read_only: bool,
}

impl ToolInfo {
    /// The skill name ACT uses: `mcp.SERVER.TOOL`, unique across servers.
    pub fn skill(&self) -> String {
        skill_name(&self.server, &self.name)
    }
}

/// `mcp.SERVER.TOOL`.
pub fn skill_name(server: &str, tool: &str) -> String {
    format!("mcp.{server}.{tool}")
}

/// Split `mcp.SERVER.TOOL` back into its parts (a tool name may itself hold dots).
pub fn parse_skill(skill: &str) -> Option<(&str, &str)> {
    let rest = skill.strip_prefix("mcp.")?;
    let (server, tool) = rest.split_once('.')?;
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    #[error("MCP server '{0}' is not configured")]
    Unknown(String),
    #[error("MCP server '{server}' did not start: {message}")]
    Start { server: String, message: String },
    #[error("MCP server '{server}': {what} took longer than {secs}s and was abandoned")]
    Timeout { server: String, what: String, secs: u64 },
    #[error("MCP server '{server}': {what} failed: {message}")]
    Protocol { server: String, what: String, message: String },
    #[error("MCP tool {server}.{tool} reported an error: {message}")]
    Tool { server: String, tool: String, message: String },
}

type Client = RunningService<RoleClient, ()>;

/// A transport's MCP handshake, run under the server's time limit.
/// Its error is already the one line to show.
type Handshake = Pin<Box<dyn Future<Output = Result<Client, String>> + Send>>;

/// Looks up an environment variable of chalie's own, for a server's `env` entries.
pub type Lookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// How far one server got, for `chalie-tui mcp list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerState {
    pub name: String,
    /// `"running"`, or the error's line.
    pub state: String,
    pub tools: Vec<ToolInfo>,
}

/// The configured servers and the ones running now. Cheap to share behind an `Arc`.
pub struct Hub {
    servers: Servers,
    /// Values of the environment variables the `env` entries name, looked up when a server
    /// starts; never logged.
    lookup: Lookup,
    running: Mutex<BTreeMap<String, Running>>,
}

/// A started server and, once asked, its tools: triage, the ACT offer and drift all want the
/// list every turn or cycle, and a server's tools do not change while it runs, so one listing
/// per start serves them all (a restart lists afresh).
struct Running {
    client: Arc<Client>,
    tools: Option<Vec<ToolInfo>>,
}

impl Hub {
    pub fn new(servers: Servers, lookup: Lookup) -> Self {
        Hub { servers, lookup, running: Mutex::new(BTreeMap::new()) }
    }

    /// The process environment supplies the secrets.
    pub fn from_process_env(servers: Servers) -> Self {
        Hub::new(servers, Arc::new(|k| std::env::var(k).ok()))
    }

    pub fn is_empty(&self) -> bool {
        self.servers.0.is_empty()
    }

    pub fn names(&self) -> Vec<String> {
        self.servers.0.keys().cloned().collect()
    }

    fn server(&self, name: &str) -> Result<&Server, McpError> {
        self.servers.0.get(name).ok_or_else(|| McpError::Unknown(name.to_string()))
    }

    /// The running client for `name`, starting it (handshake included) within the server's
    /// time limit.
    async fn client(&self, name: &str) -> Result<Arc<Client>, McpError> {
        let server = self.server(name)?;
        let mut running = self.running.lock().await;
        if let Some(r) = running.get(name) {
            if !r.client.is_transport_closed() {
                return Ok(r.client.clone());
            }
            running.remove(name);
        }
        let secs = server.timeout_secs;
        let connecting = match &server.transport {
            Transport::Stdio { command, args, env } => self.spawn(name, command, args, env)?,
            Transport::Http { url, bearer_token_env } => self.dial(name, url, bearer_token_env.as_deref())?,
        };
        let client = tokio::time::timeout(Duration::from_secs(secs), connecting)
            .await
            .map_err(|_| McpError::Timeout { server: name.into(), what: "the handshake".into(), secs })?
            .map_err(|message| McpError::Start { server: name.into(), message: one_line(&message) })?;
        let client = Arc::new(client);
        running.insert(name.to_string(), Running { client: client.clone(), tools: None });
        Ok(client)
    }

    /// Start a stdio server's child process; the handshake is the returned future.
    fn spawn(
        &self,
        name: &str,
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
    ) -> Result<Handshake, McpError> {
        let start = |message: String| McpError::Start { server: name.into(), message };
        let mut cmd = tokio::process::Command::new(command);
        cmd.args(args);
        for (var, from) in env {
            let value = (self.lookup)(from)
                .ok_or_else(|| start(format!("environment variable {from} (for {var}) is not set")))?;
            cmd.env(var, value);
        }
        let (transport, _stderr) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| start(format!("{command}: {e}")))?;
        Ok(Box::pin(async move { ().serve(transport).await.map_err(|e| e.to_string()) }))
    }

    /// Reach a streamable-HTTP server: nothing is sent until the returned handshake runs, so
    /// an address with nobody behind it fails there, as one line, within the time limit.
    fn dial(&self, name: &str, url: &str, bearer_token_env: Option<&str>) -> Result<Handshake, McpError> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url);
        if let Some(var) = bearer_token_env {
            let token = (self.lookup)(var).ok_or_else(|| McpError::Start {
                server: name.into(),
                message: format!("environment variable {var} (bearer_token_env) is not set"),
            })?;
            config = config.auth_header(token);
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        Ok(Box::pin(async move { ().serve(transport).await.map_err(|e| http_failure(&e)) }))
    }

    /// Forget a server that misbehaved so the next use starts it afresh (dropping the client
    /// ends the child process).
    async fn drop_client(&self, name: &str) {
        self.running.lock().await.remove(name);
    }

    /// Every tool the server offers, listed once per start of the server.
    pub async fn tools(&self, name: &str) -> Result<Vec<ToolInfo>, McpError> {
        let client = self.client(name).await?;
        if let Some(tools) = self.running.lock().await.get(name).and_then(|r| r.tools.clone()) {
            return Ok(tools);
        }
        let secs = self.server(name)?.timeout_secs;
        let listed = match tokio::time::timeout(Duration::from_secs(secs), client.list_all_tools()).await {
            Err(_) => {
                self.drop_client(name).await;
                return Err(McpError::Timeout { server: name.into(), what: "listing tools".into(), secs });
            }
            Ok(r) => r.map_err(|e| McpError::Protocol {
                server: name.into(),
                what: "listing tools".into(),
                message: one_line(&e.to_string()),
            })?,
        };
        let tools: Vec<ToolInfo> = listed
            .into_iter()
            .map(|t| ToolInfo {
                server: name.to_string(),
                name: t.name.to_string(),
                description: t.description.as_deref().unwrap_or("").to_string(),
                schema: serde_json::Value::Object((*t.input_schema).clone()),
                read_only: t.annotations.as_ref().and_then(|a| a.read_only_hint).unwrap_or(false),
            })
            .collect();
        if let Some(r) = self.running.lock().await.get_mut(name).filter(|r| Arc::ptr_eq(&r.client, &client)) {
            r.tools = Some(tools.clone());
        }
        Ok(tools)
    }

    /// The state and tools of every configured server; one that fails says why.
    pub async fn survey(&self) -> Vec<ServerState> {
        let mut out = Vec::new();
        for name in self.names() {
            let (state, tools) = match self.tools(&name).await {
                Ok(tools) => ("running".to_string(), tools),
                Err(e) => (e.to_string(), Vec::new()),
            };
            out.push(ServerState { name, state, tools });
        }
        out
    }

    /// Call one tool; the reply's text blocks joined, or the error.
    pub async fn call(&self, server: &str, tool: &str, args: serde_json::Value) -> Result<String, McpError> {
        let arguments = match args {
            serde_json::Value::Object(m) => Some(m),
            serde_json::Value::Null => None,
            other => {
                return Err(McpError::Protocol {
                    server: server.into(),
                    what: format!("calling {tool}"),
                    message: format!("arguments must be a JSON object, got {other}"),
                });
            }
        };
        let client = self.client(server).await?;
        let secs = self.server(server)?.timeout_secs;
        let mut params = CallToolRequestParams::new(tool.to_string());
        if let Some(a) = arguments {
            params = params.with_arguments(a);
        }
        let result = match tokio::time::timeout(Duration::from_secs(secs), client.call_tool(params)).await {
            Err(_) => {
                self.drop_client(server).await;
                return Err(McpError::Timeout { server: server.into(), what: format!("calling {tool}"), secs });
            }
            Ok(r) => r.map_err(|e| McpError::Protocol {
                server: server.into(),
                what: format!("calling {tool}"),
                message: one_line(&e.to_string()),
            })?,
        };
        let text = result_text(&result);
        if result.is_error == Some(true) {
            return Err(McpError::Tool { server: server.into(), tool: tool.into(), message: one_line(&text) });
        }
        Ok(text)
    }
}

/// The text of a tool's reply: its text blocks, or the structured content as JSON.
fn result_text(r: &CallToolResult) -> String {
    let texts: Vec<&str> = r.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
    if texts.is_empty() {
        r.structured_content.as_ref().map(|v| v.to_string()).unwrap_or_default()
    } else {
        texts.join("\n")
    }
}

/// Why an HTTP handshake failed, in words a person can act on. The SDK's own text for a
/// server that is down is the transport's type name, and the reason ("Connection refused")
/// sits in the HTTP client's error, which the SDK holds without exposing it as a source.
fn http_failure(e: &ClientInitializeError) -> String {
    let ClientInitializeError::TransportError { error, .. } = e else { return e.to_string() };
    let mut cur: &(dyn std::error::Error + 'static) = error;
    loop {
        if let Some(StreamableHttpError::Client(inner)) = cur.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            return with_causes(inner);
        }
        match cur.source() {
            Some(next) => cur = next,
            None => return cur.to_string(),
        }
    }
}

/// An error and the errors under it, each said once.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(cause) = next {
        let text = cause.to_string();
        if !out.contains(&text) {
            out = format!("{out}: {text}");
        }
        next = cause.source();
    }
    out
}

/// Errors from the SDK can run over lines; the ACT pane shows one.
fn one_line(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() > 200 { format!("{}…", s.chars().take(200).collect::<String>()) } else { s }
}
