//! Copy out with OSC 52: the terminal itself sets its clipboard, so it works over SSH and
//! with no clipboard tool installed. Inside tmux the sequence is sent twice, as is and
//! wrapped for passthrough, so either tmux setting that lets it through
//! (`set-clipboard on` or `allow-passthrough on`) delivers it.

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

/// Terminals cap what one OSC 52 may carry (xterm: 100,000 bytes of base64); past this the
/// copy is refused with a notice rather than truncated.
pub const MAX_COPY_BYTES: usize = 74_000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CopyError {
    #[error("nothing to copy")]
    Empty,
    #[error("too long to copy through the terminal ({0} bytes, at most {MAX_COPY_BYTES})")]
    TooLong(usize),
}

/// The escape sequence(s) that put `text` on the clipboard; `tmux` when $TMUX is set.
pub fn osc52(text: &str, tmux: bool) -> Result<String, CopyError> {
    if text.is_empty() {
        return Err(CopyError::Empty);
    }
    if text.len() > MAX_COPY_BYTES {
        return Err(CopyError::TooLong(text.len()));
    }
    let plain = format!("\x1b]52;c;{}\x07", base64(text.as_bytes()));
    Ok(if tmux {
        // tmux passthrough: DCS tmux; <sequence with each ESC doubled> ST.
        format!("{plain}\x1bPtmux;{}\x1b\\", plain.replace('\x1b', "\x1b\x1b"))
    } else {
        plain
    })
}

/// The fenced and indented code blocks of a Markdown reply, joined by a blank line.
pub fn code_blocks(markdown: &str) -> String {
    let mut blocks: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_) | CodeBlockKind::Indented)) => {
                current = Some(String::new());
            }
            Event::Text(t) => {
                if let Some(c) = &mut current {
                    c.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(c) = current.take() {
                    blocks.push(c.trim_end_matches('\n').to_string());
                }
            }
            _ => {}
        }
    }
    blocks.join("\n\n")
}

/// Standard base64 with padding (RFC 4648), which OSC 52 takes.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

impl super::app::App {
    /// The copy keys: the escape sequence to write, or a notice saying why there is none.
    pub(crate) fn copy(&mut self, code_only: bool) -> Option<super::app::Action> {
        use crate::events::NoticeLevel;
        let Some(reply) = self.chat.focused_reply() else {
            self.status.notice(NoticeLevel::Warn, "no reply to copy");
            return None;
        };
        let text = if code_only { code_blocks(reply.body.text()) } else { reply.body.text().to_string() };
        let tmux = std::env::var_os("TMUX").is_some();
        match osc52(&text, tmux) {
            Ok(seq) => {
                let what = if code_only { "code" } else { "reply" };
                self.status
                    .notice(NoticeLevel::Info, &format!("copied the {what} ({} characters)", text.chars().count()));
                Some(super::app::Action::Copy(seq))
            }
            Err(CopyError::Empty) if code_only => {
                self.status.notice(NoticeLevel::Warn, "that reply has no code block");
                None
            }
            Err(e) => {
                self.status.notice(NoticeLevel::Warn, &e.to_string());
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (plain, encoded) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("foobar", "Zm9vYmFy")]
        {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain}");
        }
    }

    #[test]
    fn the_sequence_sets_the_clipboard_selection() {
        assert_eq!(osc52("hello", false).unwrap(), "\x1b]52;c;aGVsbG8=\x07");
        // Control characters travel inside the base64, never raw to the terminal.
        let s = osc52("a\x1b]0;x\x07b", false).unwrap();
        assert_eq!(s.matches('\x1b').count(), 1, "{s:?}");
        assert_eq!(osc52("", false), Err(CopyError::Empty));
        assert!(matches!(osc52(&"x".repeat(MAX_COPY_BYTES + 1), false), Err(CopyError::TooLong(_))));
    }

    #[test]
    fn inside_tmux_it_is_also_wrapped_for_passthrough() {
        let s = osc52("hi", true).unwrap();
        assert_eq!(s, "\x1b]52;c;aGk=\x07\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\");
    }

    #[test]
    fn code_blocks_are_taken_from_the_markdown() {
        let md = "Try this:\n\n```rust\nfn main() {}\n```\n\nand\n\n~~~\nls -l\n~~~\n";
        assert_eq!(code_blocks(md), "fn main() {}\n\nls -l");
        assert_eq!(code_blocks("no code here"), "");
    }
}
