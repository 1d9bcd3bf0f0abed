//! The tie-breaker: what the lightweight model is asked, and how its reply is read.

use super::*;

/// The schema of the tie-breaker's reply.
pub fn tiebreak_schema() -> Value {
    json!({
        "type": "object",
        "required": ["choice"],
        "additionalProperties": false,
        "properties": {"choice": {"type": "string", "enum": ["A", "B"]}}
    })
}

/// The context sent to the tie-breaker (docs/cognition.md §6.6 field list) with the two candidate descriptions.
pub fn tiebreak_context(message: &str, topic: &str, s: &RouterSignals, a: Mode, b: Mode) -> Value {
    json!({
        "message": message,
        "context_warmth": s.warmth(),
        "fact_count": s.fact_count,
        "working_memory_turns": s.working_memory_turns,
        "topic": topic,
        "is_new_topic": s.is_new_topic,
        "gist_count": s.gist_count,
        "has_question_mark": s.text.has_question_mark,
        "interrogative_words": s.text.interrogative_words,
        "greeting_pattern": s.text.greeting_pattern,
        "explicit_feedback": s.text.explicit_feedback,
        "information_density": s.text.information_density,
        "implicit_reference": s.text.implicit_reference,
        "intent_type": s.intent_type,
        "memory_confidence": s.memory_confidence,
        "A": format!("{a}: {}", a.description()),
        "B": format!("{b}: {}", b.description()),
    })
}

fn choice_of(v: &Value) -> Option<TieChoice> {
    let s = v.get("choice")?.as_str()?.trim();
    let s = s.trim_matches(|c: char| c == '"' || c == '\'' || c.is_whitespace());
    let lower = s.to_ascii_lowercase();
    let s = lower.strip_prefix("option").or_else(|| lower.strip_prefix("mode")).unwrap_or(&lower).trim();
    let mut chars = s.chars();
    let first = chars.next()?;
    if chars.next().is_some_and(|c| c.is_alphanumeric()) {
        return None;
    }
    match first {
        'a' => Some(TieChoice::A),
        'b' => Some(TieChoice::B),
        _ => None,
    }
}

/// The first balanced `{…}` in `text` (braces inside JSON strings ignored).
pub(super) fn first_object(text: &str) -> Option<&str> {
    let start = text.find('{')?;
    let (mut depth, mut in_str, mut escaped) = (0usize, false, false);
    for (i, c) in text[start..].char_indices() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[start..=start + i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// Stage 3: a letter after "choice"/"answer"/"option"/"pick", the whole reply being one letter, or
/// exactly one of the standalone capitals `A` / `B`.
fn letter_pattern(text: &str) -> Option<TieChoice> {
    let letter = |c: char| match c {
        'a' | 'A' => Some(TieChoice::A),
        'b' | 'B' => Some(TieChoice::B),
        _ => None,
    };
    let bare = text.trim().trim_matches(|c: char| !c.is_alphanumeric());
    if bare.len() == 1 {
        return bare.chars().next().and_then(letter);
    }
    let lower = text.to_ascii_lowercase();
    for key in ["choice", "answer", "option", "pick", "choose", "select"] {
        let mut from = 0;
        while let Some(pos) = lower[from..].find(key) {
            let after = &text[from + pos + key.len()..];
            let sep = |c: char| matches!(c, ' ' | ':' | '=' | '"' | '\'' | '*' | '-' | '>');
            let rest = after.trim_start_matches(sep);
            // "my answer is B"
            let rest = match rest.get(..3) {
                Some(w) if w.eq_ignore_ascii_case("is ") => rest[3..].trim_start_matches(sep),
                _ => rest,
            };
            let mut cs = rest.chars();
            if let Some(c) = cs.next()
                && !cs.next().is_some_and(|n| n.is_alphanumeric())
                && let Some(choice) = letter(c)
            {
                return Some(choice);
            }
            from += pos + key.len();
        }
    }
    let mut found = None;
    let bytes = text.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if (*b == b'A' || *b == b'B')
            && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
            && bytes.get(i + 1).is_none_or(|n| !n.is_ascii_alphanumeric())
        {
            let c = letter(*b as char);
            if found.is_some() && found != c {
                return None;
            }
            found = c;
        }
    }
    found
}

/// Parse the tie-breaker's reply: the whole reply as JSON `{"choice": "A"|"B"}`, then the first
/// `{…}` in it, then a letter pattern. `None` on failure (the caller keeps the higher score).
pub fn parse_tiebreak(reply: &str) -> Option<TieChoice> {
    if let Ok(v) = serde_json::from_str::<Value>(reply.trim()) {
        if let Some(c) = choice_of(&v) {
            return Some(c);
        }
    } else if let Some(obj) = first_object(reply)
        && let Ok(v) = serde_json::from_str::<Value>(obj)
        && let Some(c) = choice_of(&v)
    {
        return Some(c);
    }
    letter_pattern(reply)
}

/// [`parse_tiebreak`], then (small models often answer with the mode name) exactly one of the two
/// candidates' names in the reply.
pub fn parse_tiebreak_for(reply: &str, a: Mode, b: Mode) -> Option<TieChoice> {
    parse_tiebreak(reply).or_else(|| {
        let up = reply.to_ascii_uppercase();
        match (up.contains(a.as_str()), up.contains(b.as_str())) {
            (true, false) => Some(TieChoice::A),
            (false, true) => Some(TieChoice::B),
            _ => None,
        }
    })
}
