//! Forgetting in the session logs: every log under the sessions dir is rewritten with each
//! forgotten string replaced in every string field of every line, through a temporary file
//! and a rename, so a crash leaves either the old log or the new one, never half of each.
//! Lines stay valid JSON of the same shape, so replay still reads a rewritten log.

use super::SessionError;
use crate::text::privacy::{contains_any_ci, replace_all_ci};
use serde_json::Value;
use std::io::Write;
use std::path::Path;

/// What a forgotten string becomes in a log line.
pub const REDACTED: &str = "[forgotten]";

/// Rewrite every `*.jsonl` under `dir` holding any of `needles`. Returns how many files changed.
pub fn scrub_logs(dir: &Path, needles: &[String]) -> Result<usize, SessionError> {
    if needles.is_empty() || !dir.is_dir() {
        return Ok(0);
    }
    let read_err = |source| SessionError::Read { path: dir.to_path_buf(), source };
    let mut changed = 0;
    for entry in std::fs::read_dir(dir).map_err(read_err)? {
        let path = entry.map_err(read_err)?.path();
        if path.extension().is_some_and(|e| e == "jsonl") && scrub_file(&path, needles)? {
            changed += 1;
        }
    }
    Ok(changed)
}

/// Rewrite one file (any line-oriented text; JSON lines keep their shape). True when it changed.
pub fn scrub_file(path: &Path, needles: &[String]) -> Result<bool, SessionError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(source) => return Err(SessionError::Read { path: path.to_path_buf(), source }),
    };
    if !contains_any_ci(&text, needles) {
        return Ok(false);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        out.push_str(&scrub_line(line, needles));
    }
    let err = |source| SessionError::Write { path: path.to_path_buf(), source };
    let tmp = path.with_extension("jsonl.forget-tmp");
    {
        let mut f = crate::files::private_create(&tmp).map_err(err)?;
        f.write_all(out.as_bytes()).map_err(err)?;
        f.sync_all().map_err(err)?;
    }
    std::fs::rename(&tmp, path).map_err(err)?;
    Ok(true)
}

/// One line with the needles gone: JSON lines field by field (escapes stay right), other
/// lines as text.
pub fn scrub_line(line: &str, needles: &[String]) -> String {
    if !contains_any_ci(line, needles) {
        // An escaped form (a quote or a non-ASCII letter in JSON) is checked below.
        if !line.contains('\\') {
            return line.to_string();
        }
    }
    let (body, nl) = line.strip_suffix('\n').map_or((line, ""), |b| (b, "\n"));
    match serde_json::from_str::<Value>(body) {
        Ok(mut v) => {
            if !crate::text::needles::redact_json(&mut v, needles, REDACTED) {
                return line.to_string();
            }
            format!("{}{nl}", serde_json::to_string(&v).unwrap_or_default())
        }
        Err(_) => replace_all_ci(line, needles, REDACTED).unwrap_or_else(|| line.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_their_json_shape() {
        let n = vec!["4921".to_string(), "café secret".to_string()];
        let l = "{\"type\":\"user_message\",\"text\":\"pin is 4921\",\"n\":4921}\n";
        assert_eq!(scrub_line(l, &n), "{\"n\":4921,\"text\":\"pin is [forgotten]\",\"type\":\"user_message\"}\n");
        let escaped = "{\"text\":\"caf\\u00e9 SECRET here\"}";
        assert_eq!(scrub_line(escaped, &n), "{\"text\":\"[forgotten] here\"}");
        assert_eq!(scrub_line("plain 4921 text\n", &n), "plain [forgotten] text\n");
        assert_eq!(scrub_line("{\"a\":1}\n", &n), "{\"a\":1}\n");
    }

    #[test]
    fn files_are_rewritten_in_place_of_the_old() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, "{\"text\":\"Jordan called\"}\n{\"text\":\"hello\"}\n").unwrap();
        std::fs::write(dir.path().join("other.txt"), "Jordan").unwrap();
        assert_eq!(scrub_logs(dir.path(), &["jordan".into()]).unwrap(), 1);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"text\":\"[forgotten] called\"}\n{\"text\":\"hello\"}\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2, "no temporary file left");
    }
}
