//! `[mcp.servers.NAME]`: the Model Context Protocol servers whose tools the ACT loop may use.
//! A server is either a child process spoken to over stdio (`command`, `args`, `env`) or a
//! streamable-HTTP endpoint (`url`). `env` maps a variable the server sees to the name of a
//! variable in chalie's own environment, so a secret lives in the environment and never in
//! the file, a log line or `config show`. An HTTP server's `bearer_token_env` names, in the
//! same way, the variable holding the token sent as `Authorization: Bearer …`.

use super::{ConfigError, Location};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::Spanned;

/// How chalie reaches one server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// A child process started on demand; `env` is server variable → chalie variable name.
    Stdio { command: String, args: Vec<String>, env: BTreeMap<String, String> },
    /// A streamable-HTTP endpoint; `bearer_token_env` names the chalie variable holding the
    /// token, if the server wants one.
    Http { url: String, bearer_token_env: Option<String> },
}

/// One configured server, with the file and line it came from for error messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Server {
    pub transport: Transport,
    /// Seconds one tool call may take before it is abandoned.
    pub timeout_secs: u64,
    #[serde(skip)]
    pub at: Location,
}

/// Every configured server by name, in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Servers(pub BTreeMap<String, Server>);

/// What a tool call may take unless the server's entry says otherwise (docs/cognition.md §19).
pub const DEFAULT_TIMEOUT_SECS: u64 = 20;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct McpLayer {
    #[serde(default)]
    servers: BTreeMap<String, Spanned<ServerLayer>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ServerLayer {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    bearer_token_env: Option<String>,
    timeout_secs: Option<u64>,
}

fn is_env_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Merge one file's `[mcp.servers]` over the servers so far: a later file's entry replaces
/// the earlier one whole.
pub(super) fn merge(
    table: &mut Servers,
    layer: &McpLayer,
    at: impl Fn(&Spanned<ServerLayer>) -> Location,
) -> Result<(), ConfigError> {
    for (name, v) in &layer.servers {
        let s = v.get_ref();
        let bad = |message: String| ConfigError::Invalid { at: at(v), message };
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') || name.is_empty() {
            return Err(bad(format!("[mcp.servers.{name}]: a server name is letters, digits, '-' and '_'")));
        }
        let transport = match (&s.command, &s.url) {
            (Some(_), Some(_)) => {
                return Err(bad(format!("[mcp.servers.{name}]: give either command (stdio) or url (HTTP), not both")));
            }
            (None, None) => return Err(bad(format!("[mcp.servers.{name}]: needs command (stdio) or url (HTTP)"))),
            (Some(c), None) if c.trim().is_empty() => {
                return Err(bad(format!("[mcp.servers.{name}] command is empty")));
            }
            (Some(command), None) => {
                if let Some((k, var)) = s.env.iter().find(|(k, var)| !is_env_name(k) || !is_env_name(var)) {
                    return Err(bad(format!(
                        "[mcp.servers.{name}.env] {k} = \"{var}\": the value names an environment variable \
                         holding the secret (letters, digits, '_'), not the secret itself"
                    )));
                }
                if s.bearer_token_env.is_some() {
                    return Err(bad(format!("[mcp.servers.{name}]: bearer_token_env is for url servers")));
                }
                Transport::Stdio { command: command.clone(), args: s.args.clone(), env: s.env.clone() }
            }
            (None, Some(url)) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(bad(format!("[mcp.servers.{name}] url = \"{url}\": an http:// or https:// address")));
                }
                if !s.args.is_empty() || !s.env.is_empty() {
                    return Err(bad(format!("[mcp.servers.{name}]: args and env are for command servers")));
                }
                if let Some(var) = s.bearer_token_env.as_ref().filter(|v| !is_env_name(v)) {
                    return Err(bad(format!(
                        "[mcp.servers.{name}] bearer_token_env = \"{var}\": the name of an environment variable \
                         holding the token (letters, digits, '_'), not the token itself"
                    )));
                }
                Transport::Http { url: url.clone(), bearer_token_env: s.bearer_token_env.clone() }
            }
        };
        let timeout_secs = s.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
        if !(1..=600).contains(&timeout_secs) {
            return Err(bad(format!("[mcp.servers.{name}] timeout_secs = {timeout_secs}: between 1 and 600")));
        }
        table.0.insert(name.clone(), Server { transport, timeout_secs, at: at(v) });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Transport;
    use crate::config::{Config, ConfigError};
    use std::path::Path;

    fn load(text: &str) -> Result<Config, ConfigError> {
        Config::from_user_toml(Path::new("/c.toml"), text)
    }

    #[test]
    fn stdio_and_http_servers_are_read() {
        let c = load(
            "[mcp.servers.files]\ncommand = \"mcp-files\"\nargs = [\"--root\", \"/tmp\"]\n\
             env = { GITHUB_TOKEN = \"FILES_TOKEN\" }\n\n[mcp.servers.web]\nurl = \"https://x.test/mcp\"\ntimeout_secs = 5\n\
             bearer_token_env = \"WEB_TOKEN\"\n",
        )
        .unwrap();
        let files = &c.mcp.0["files"];
        assert!(matches!(&files.transport, Transport::Stdio { command, args, env }
            if command == "mcp-files" && args.len() == 2 && env["GITHUB_TOKEN"] == "FILES_TOKEN"));
        assert_eq!(files.timeout_secs, super::DEFAULT_TIMEOUT_SECS);
        assert_eq!(files.at.line, 1);
        assert!(matches!(&c.mcp.0["web"].transport, Transport::Http { url, bearer_token_env: Some(v) }
            if url == "https://x.test/mcp" && v == "WEB_TOKEN"));
        assert_eq!(c.mcp.0["web"].timeout_secs, 5);
        assert!(Config::defaults().mcp.0.is_empty());
    }

    #[test]
    fn a_malformed_server_names_the_file_and_line() {
        for (text, says) in [
            ("[llm]\n\n[mcp.servers.a]\nargs = [\"x\"]\n", "needs command"),
            ("[mcp.servers.a]\ncommand = \"x\"\nurl = \"http://h\"\n", "not both"),
            ("[mcp.servers.a]\nurl = \"ftp://h\"\n", "http://"),
            ("[mcp.servers.a]\ncommand = \"x\"\nenv = { K = \"a secret\" }\n", "environment variable"),
            ("[mcp.servers.a]\ncommand = \"x\"\nenv = { K = \"ghp_0123456789abcdefXYZ\" }\n", "API key"),
            ("[mcp.servers.a]\ncommand = \"x\"\ntimeout_secs = 0\n", "between 1 and 600"),
            ("[mcp.servers.a]\nurl = \"http://h\"\nbearer_token_env = \"tok en\"\n", "environment variable"),
            ("[mcp.servers.a]\ncommand = \"x\"\nbearer_token_env = \"T\"\n", "for url servers"),
        ] {
            let err = load(text).unwrap_err().to_string();
            assert!(err.starts_with("/c.toml:"), "{err}");
            assert!(err.contains(says), "{text}: {err}");
        }
        let err = load("[llm]\n\n[mcp.servers.a]\nargs = [\"x\"]\n").unwrap_err().to_string();
        assert!(err.starts_with("/c.toml:3"), "{err}");
        let err = load("[mcp.servers.a]\ncommand = \"x\"\nwhat = 1\n").unwrap_err().to_string();
        assert!(err.contains("what"), "{err}");
    }
}
