//! `chalie-tui mcp list`: every configured MCP server started, with its state (running, or
//! the one line saying why not) and the tools it offers. Exit 1 when any server failed, so a
//! script can check a config.

use crate::config::Config;
use crate::mcp::Hub;
use std::process::ExitCode;

pub fn list(config: &Config, json: bool) -> anyhow::Result<ExitCode> {
    let hub = Hub::from_process_env(config.mcp.clone());
    if hub.is_empty() && !json {
        println!("no MCP servers configured (add [mcp.servers.NAME] with command = \"...\" to the config)");
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
