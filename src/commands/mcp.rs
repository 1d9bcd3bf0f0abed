//! `chalie-tui mcp list`: every configured MCP server started, with its state (running, or
//! the one line saying why not) and the tools it offers. Exit 1 when any server failed, so a
//! script can check a config. `mcp allow` is the one-shot `ask`'s way to say "always allow",
//! which the TUI's confirm prompt says with `a`.

use crate::cli::McpAction;
use crate::config::{Config, Paths};
use crate::mcp::Hub;
use std::process::ExitCode;

pub fn run(paths: &Paths, config: &Config, action: McpAction) -> anyhow::Result<ExitCode> {
    match action {
        McpAction::List { json } => list(config, json),
        McpAction::Allow { skill } => allow(paths, config, &skill),
    }
}

/// Remember "always allow" for one configured server's tool; the tool itself is not
/// checked, so a server need not be running.
fn allow(paths: &Paths, config: &Config, skill: &str) -> anyhow::Result<ExitCode> {
    let Some((server, _)) = crate::mcp::parse_skill(skill) else {
        return Err(super::UsageError(format!("`{skill}` is not a tool name: expected mcp.SERVER.TOOL")).into());
    };
    if !config.mcp.0.contains_key(server) {
        return Err(super::UsageError(format!("no MCP server `{server}` in the config")).into());
    }
    let conn = crate::store::open(&paths.db_file)?;
    crate::cognition::act::mcp::allow_skill(&conn, skill, crate::store::now_ts())?;
    super::say(&format!("{skill} will run without asking (always allowed)"));
    Ok(ExitCode::SUCCESS)
}

pub fn list(config: &Config, json: bool) -> anyhow::Result<ExitCode> {
    let hub = Hub::from_process_env(config.mcp.clone());
    if hub.is_empty() && !json {
        crate::outln!(
            "no MCP servers configured (add [mcp.servers.NAME] with command = \"...\" or url = \"...\" to the config)"
        );
        return Ok(ExitCode::SUCCESS);
    }
    let survey = super::tokio_runtime()?.block_on(hub.survey());
    let mut failed = false;
    for s in &survey {
        failed |= s.state != "running";
        if json {
            super::say_json(&serde_json::to_string(s)?);
            continue;
        }
        super::say(&format!("{}: {} ({} tools)", s.name, s.state, s.tools.len()));
        for t in &s.tools {
            let kind = if t.read_only { "read-only" } else { "asks first" };
            super::say(&format!("  {}  [{kind}]  {}", t.name, t.description));
        }
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
