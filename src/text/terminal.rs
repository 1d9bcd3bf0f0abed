//! Text on its way to a terminal. A model's reply, a stored memory, a replayed message: any of
//! them may carry control characters, and a terminal obeys those (ESC [2J clears the screen,
//! ESC ]2;… retitles the window, OSC 52 writes the clipboard). Every place that prints text we
//! did not write passes it through [`safe`] first.
//!
//! Each control character is replaced on its own by a visible stand-in, never by parsing the
//! sequence it starts: the result does not depend on how a streamed reply was cut into chunks,
//! a half-sent sequence cannot slip through, and the reader still sees that the text held one.

use std::borrow::Cow;

/// `s` with every control character made visible: C0 controls (other than newline and tab)
/// become their Unicode control pictures (ESC → `␛`), DEL becomes `␡`, and a C1 control
/// (U+0080..U+009F, the 8-bit forms of ESC-sequences) becomes `␛` plus its 7-bit letter
/// (U+009B CSI → `␛[`). Carriage returns are dropped: a lone one would let a line overwrite
/// itself, and in CRLF it carries nothing.
pub fn safe(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_care) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push_safe(c, &mut out);
    }
    Cow::Owned(out)
}

/// Whether `c` may not be printed as it is.
fn needs_care(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

fn push_safe(c: char, out: &mut String) {
    match c as u32 {
        _ if !needs_care(c) => out.push(c),
        0x0D => {}
        // U+2400..U+241F are the pictures of NUL..US, in order.
        n @ 0x00..=0x1F => out.push(char::from_u32(0x2400 + n).unwrap_or('\u{FFFD}')),
        0x7F => out.push('\u{2421}'),
        n @ 0x80..=0x9F => {
            out.push('\u{241B}');
            out.push(char::from_u32(n - 0x40).unwrap_or('\u{FFFD}'));
        }
        _ => out.push('\u{FFFD}'),
    }
}

/// One line of JSON (already serialised) made safe for a terminal. serde_json escapes C0
/// controls but writes DEL and C1 controls as raw bytes, which some terminals obey; outside
/// strings JSON has no such characters, so escaping them as `\u00XX` keeps the same value.
pub fn safe_json(line: &str) -> Cow<'_, str> {
    if !line.chars().any(char::is_control) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 16);
    for c in line.chars() {
        if c.is_control() {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No byte a terminal would act on: no C0 but newline/tab, no DEL, no C1.
    fn inert(s: &str) -> bool {
        !s.chars().any(needs_care)
    }

    #[test]
    fn escape_sequences_become_visible_text() {
        let reply = "Hi\x1b]2;pwned\x07 there\x1b[2J\x1b[H\u{9b}31m done";
        let out = safe(reply);
        assert!(inert(&out), "{out:?}");
        assert_eq!(out, "Hi␛]2;pwned␇ there␛[2J␛[H␛[31m done");
    }

    #[test]
    fn plain_text_newlines_and_tabs_pass_unchanged_and_unallocated() {
        let s = "Paris,\tFrance\nline two — ünïcödé 日本";
        assert!(matches!(safe(s), Cow::Borrowed(x) if x == s));
    }

    #[test]
    fn carriage_returns_and_every_control_are_handled() {
        assert_eq!(safe("a\r\nb\rc"), "a\nbc");
        let all: String = (0u32..0xA0).filter_map(char::from_u32).collect();
        let out = safe(&all);
        assert!(inert(&out), "{out:?}");
        assert_eq!(safe("\0\x7f"), "␀␡");
    }

    #[test]
    fn any_split_of_a_stream_sanitises_like_the_whole() {
        let reply = "a\x1b[2Jb\u{9d}0;t\x07c";
        let whole = safe(reply).into_owned();
        for (cut, _) in reply.char_indices() {
            let (x, y) = reply.split_at(cut);
            assert_eq!(format!("{}{}", safe(x), safe(y)), whole, "cut at {cut}");
        }
    }

    #[test]
    fn json_lines_keep_their_value_and_lose_raw_controls() {
        let v = serde_json::json!({ "response": "x\u{9b}2J\u{7f}y\x1b]0;t\x07" });
        let line = serde_json::to_string(&v).unwrap();
        assert!(line.contains('\u{9b}'), "serde_json writes C1 raw: {line:?}");
        let safe = safe_json(&line);
        assert!(!safe.chars().any(char::is_control), "{safe:?}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&safe).unwrap(), v);
    }
}
