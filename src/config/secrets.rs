//! API keys live in environment variables only. A config file is copied, synced, pasted into
//! bug reports and read by the config digest; a key written into it leaks with it. So a file
//! that holds something key-like is refused before it is parsed, with the file and line, and
//! without ever repeating the value (parse errors quote the offending line, which would).

use super::{ConfigError, Location};
use regex::Regex;
use std::sync::LazyLock;

/// `name =` at the start of a line or inside an inline table, bare or quoted.
static KEY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?:^|[\s{,.])["']?([A-Za-z0-9_-]+)["']?\s*="#).expect("valid regex"));
/// The shapes of the common providers' keys (OpenAI and compatibles, Anthropic, GitHub, Slack,
/// AWS), anywhere on a line.
static KEY_SHAPED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\b|_)(?:sk-|sk_live_|ghp_|gho_|github_pat_|xox[abp]-|AKIA)[A-Za-z0-9_\-]{12,}")
        .expect("valid regex")
});
/// A URL carrying credentials: a password in its user part, or a key in its query.
static URL_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)://[^/\s@]*:[^/\s@]+@|[?&](?:api[_-]?key|key|token|access[_-]?token|secret)=")
        .expect("valid regex")
});
/// `api_key_env = "VALUE"`, to check that VALUE is a variable's name and not the key itself.
static KEY_ENV: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"api_key_env["']?\s*=\s*["']([^"']*)["']"#).expect("valid regex"));
/// An MCP server's inline `env = { ... }` map.
static MCP_ENV: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^env\s*=\s*\{").expect("valid regex"));
static ENV_NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*$").expect("valid regex"));

/// Refuse `text` (the config file `file`) if any line holds a key inline: a setting named
/// like a secret, a value shaped like a provider's key, a URL with credentials, or an
/// `api_key_env` whose value is not a variable name. The first such line is reported.
pub(super) fn refuse_inline_secrets(file: &str, text: &str) -> Result<(), ConfigError> {
    for (i, line) in text.lines().enumerate() {
        if let Some(what) = secret_on(line) {
            return Err(ConfigError::Invalid {
                at: Location { file: file.to_string(), line: i + 1 },
                message: format!(
                    "{what}: a config file may not hold an API key. Put the key in an environment \
                     variable and name the variable in the provider, e.g. api_key_env = \"OPENAI_API_KEY\""
                ),
            });
        }
    }
    Ok(())
}

/// What on `line` looks like a secret, described without its value.
fn secret_on(line: &str) -> Option<String> {
    let code = line.trim_start();
    // A commented-out key is still a key in the file; a comment's words are not settings.
    let comment = code.starts_with('#');
    // `env = { GITHUB_TOKEN = "GH_TOKEN" }` of an MCP server maps the server's variable to
    // one of ours by name; config::mcp refuses any value that is not a variable's name.
    let env_map = MCP_ENV.is_match(code);
    for c in KEY.captures_iter(code).filter(|_| !comment && !env_map) {
        let name = &c[1];
        if is_secret_name(name) {
            return Some(format!("the setting `{name}`"));
        }
    }
    if let Some(c) = KEY_ENV.captures(code)
        && !comment
        && !ENV_NAME.is_match(&c[1])
    {
        return Some("api_key_env is not the name of an environment variable".into());
    }
    if KEY_SHAPED.is_match(code) {
        return Some("a value shaped like an API key".into());
    }
    if URL_SECRET.is_match(code) {
        return Some("a URL carrying credentials".into());
    }
    None
}

fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    if n.ends_with("_env") {
        return false;
    }
    n == "key"
        || ["api_key", "apikey", "token", "secret", "password", "passwd", "authorization", "bearer", "access_key"]
            .iter()
            .any(|s| n == *s || n.ends_with(&format!("_{s}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-proj-Zq8vN3xT5bL1mK0pW7rY2cJ4";

    fn refused(text: &str) -> Option<String> {
        refuse_inline_secrets("/home/u/config.toml", text).err().map(|e| e.to_string())
    }

    #[test]
    fn an_inline_key_is_refused_naming_file_and_line_without_the_value() {
        let cases = [
            format!("[providers.openai]\nkind = \"openai\"\napi_key = \"{KEY}\"\n"),
            format!("[providers.openai]\nkind = \"openai\"\n\"api-key\" = \"{KEY}\"\n"),
            format!("# a comment\n\nproviders.o = {{ kind = \"openai\", token = \"{KEY}\" }}\n"),
            format!("[x]\nkind = \"openai\"\nbase_url = \"https://host/v1\" # {KEY}\n"),
            format!("[x]\nkind = \"openai\"\n# api_key = \"{KEY}\"\n"),
            "[x]\nkind = \"openai\"\nbase_url = \"https://me:hunter2hunter2@host/v1\"\n".to_string(),
            "[x]\nkind = \"openai\"\nbase_url = \"https://host/v1?api_key=abcdef123456\"\n".to_string(),
            "[x]\nkind = \"openai\"\napi_key_env = \"0a9f3e7d6c5b4a39281706f5e4d3c2b1\"\n".to_string(),
            "[x]\nkind = \"openai\"\napi_key_env = \"Bearer abc.def\"\n".to_string(),
        ];
        for text in &cases {
            let msg = refused(text).unwrap_or_else(|| panic!("accepted: {text}"));
            assert!(msg.starts_with("/home/u/config.toml:3: "), "{msg}");
            assert!(msg.contains("api_key_env"), "{msg}");
            for secret in [KEY, "hunter2", "abcdef123456", "0a9f3e7d", "abc.def"] {
                assert!(!msg.contains(secret), "the message repeats the secret: {msg}");
            }
        }
    }

    #[test]
    fn ordinary_configs_pass() {
        let text = "# the token = goes in OPENAI_API_KEY, never here\n[providers.openai]\nkind = \"openai\"\n\
                    base_url = \"https://api.openai.com/v1\"\napi_key_env = \"OPENAI_API_KEY\"\n\
                    [keys]\nquit = [\"ctrl+c\", \"ctrl+q\"]\nsend = \"enter\"\n[models]\nprimary = \"openai/gpt-4o-mini\"\n\
                    [llm]\nmax_retries = 2\n";
        assert_eq!(refused(text), None);
        assert_eq!(refused(super::super::DEFAULT_CONFIG), None);
    }
}
