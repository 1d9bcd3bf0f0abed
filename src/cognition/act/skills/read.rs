//! The `read` skill: the text of a local file the user points to, or of text they pasted,
//! bounded in size, so a plan step can work from it. Read-only; binary files are refused.

use crate::cognition::act::skill::{SkillContext, SkillError, SkillOutput, opt_str_param};
use rusqlite::Connection;
use serde_json::{Map, Value, json};
use std::io::Read;
use std::path::PathBuf;

/// At most this many bytes of a file are read.
pub const MAX_BYTES: usize = 64 * 1024;
/// At most this many characters of what was read go into the result's data.
pub const MAX_CHARS_KEPT: usize = 8_000;
/// The summary's excerpt.
pub const EXCERPT_CHARS: usize = 300;

pub fn run(_c: &Connection, p: &Map<String, Value>, _ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let (source, text, truncated) = match (opt_str_param(p, "path"), opt_str_param(p, "text")) {
        (Some(path), _) => {
            let (text, truncated) = read_file(&expand(path))?;
            (path.to_string(), text, truncated)
        }
        (None, Some(text)) => {
            let cut = floor_char_boundary(text, MAX_BYTES);
            ("pasted text".to_string(), text[..cut].to_string(), cut < text.len())
        }
        (None, None) => {
            return Err(SkillError::Param { name: "path", problem: "give a file `path` or the `text` itself".into() });
        }
    };
    let words = text.split_whitespace().count();
    let excerpt = crate::text::clip::clip(&text.split_whitespace().collect::<Vec<_>>().join(" "), EXCERPT_CHARS);
    let more = if truncated { format!(", first {} KiB", MAX_BYTES / 1024) } else { String::new() };
    Ok(SkillOutput::new(
        format!("Read {source} ({words} words{more}): {excerpt}"),
        json!({"source": source, "words": words, "truncated": truncated, "text": crate::text::clip::clip(&text, MAX_CHARS_KEPT)}),
    ))
}

/// `~/x` is the home directory's `x`.
fn expand(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

fn read_file(path: &PathBuf) -> Result<(String, bool), SkillError> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| SkillError::NotFound(format!("cannot read {shown}: {e}")))?;
    if !meta.is_file() {
        return Err(SkillError::NotFound(format!("{shown} is not a file")));
    }
    let file = std::fs::File::open(path).map_err(|e| SkillError::NotFound(format!("cannot open {shown}: {e}")))?;
    let mut bytes = Vec::with_capacity(MAX_BYTES.min(meta.len() as usize));
    file.take(MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| SkillError::NotFound(format!("cannot read {shown}: {e}")))?;
    let truncated = bytes.len() > MAX_BYTES;
    bytes.truncate(MAX_BYTES);
    if bytes.contains(&0) {
        return Err(SkillError::NotFound(format!("{shown} is not a text file")));
    }
    // A cut may split the last character; anything else that is not UTF-8 is not text.
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) if truncated && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            String::from_utf8_lossy(&e.into_bytes()[..valid]).into_owned()
        }
        Err(_) => return Err(SkillError::NotFound(format!("{shown} is not UTF-8 text"))),
    };
    Ok((text, truncated))
}

fn floor_char_boundary(s: &str, max: usize) -> usize {
    if s.len() <= max {
        return s.len();
    }
    (0..=max).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(v: Value) -> Result<SkillOutput, SkillError> {
        let c = crate::store::open_in_memory().unwrap();
        let ctx = SkillContext::new("t", "x", "t", chrono::Local::now());
        run(&c, v.as_object().unwrap(), &ctx)
    }

    #[test]
    fn a_file_is_read_up_to_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("notes.txt");
        std::fs::write(&small, "Bike A: 80 km range, 22 kg.\nBike B: 60 km, 18 kg.").unwrap();
        let out = call(json!({"path": small.to_str().unwrap()})).unwrap();
        assert!(out.summary.contains("Bike A: 80 km range"), "{}", out.summary);
        assert_eq!((out.data["words"].as_u64(), out.data["truncated"].as_bool()), (Some(13), Some(false)));

        let big = dir.path().join("big.txt");
        std::fs::write(&big, "é".repeat(MAX_BYTES)).unwrap();
        let out = call(json!({"path": big.to_str().unwrap()})).unwrap();
        assert_eq!(out.data["truncated"], true);
        assert!(out.summary.contains("first 64 KiB"));
        assert!(out.data["text"].as_str().unwrap().chars().count() <= MAX_CHARS_KEPT);
    }

    #[test]
    fn pasted_text_missing_files_and_binaries() {
        let out = call(json!({"text": "my commute is 20 km with one steep hill"})).unwrap();
        assert!(out.summary.starts_with("Read pasted text (9 words)"), "{}", out.summary);
        assert!(call(json!({"path": "/no/such/file.txt"})).unwrap_err().to_string().contains("cannot read"));
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("x.bin");
        std::fs::write(&bin, [0u8, 159, 146, 150]).unwrap();
        assert!(call(json!({"path": bin.to_str().unwrap()})).unwrap_err().to_string().contains("not a text file"));
        assert!(call(json!({"path": dir.path().to_str().unwrap()})).unwrap_err().to_string().contains("not a file"));
        assert!(call(json!({})).is_err());
    }
}
