//! A small keyword highlighter for code blocks in replies.
//!
//! A grammar-based highlighter (syntect, tree-sitter) would be more exact, but costs
//! megabytes of grammars and a long build for what the chat needs: keywords, strings,
//! comments, numbers and type names in the handful of languages a reply contains. This one
//! is a per-line scanner with one bit of state across lines (inside a block comment or a
//! triple-quoted string), so a streamed code block highlights line by line as it arrives.

use super::theme;
use ratatui::style::Style;
use ratatui::text::Span;

/// What a language looks like to the scanner.
struct Lang {
    line_comments: &'static [&'static str],
    block_comment: Option<(&'static str, &'static str)>,
    quotes: &'static [char],
    /// Python's `"""`/`'''` strings that span lines.
    triple_quotes: bool,
    keywords: &'static [&'static str],
    /// SQL keywords are case-insensitive.
    ignore_case: bool,
    /// `name!(` is a macro call (Rust).
    macros: bool,
}

const RUST: Lang = Lang {
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: &['"'],
    triple_quotes: false,
    keywords: &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
        "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self",
        "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while",
    ],
    ignore_case: false,
    macros: true,
};

const PYTHON: Lang = Lang {
    line_comments: &["#"],
    block_comment: None,
    quotes: &['"', '\''],
    triple_quotes: true,
    keywords: &[
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "match",
        "case", "nonlocal", "not", "or", "pass", "raise", "return", "self", "try", "while", "with", "yield",
    ],
    ignore_case: false,
    macros: false,
};

const C_LIKE: Lang = Lang {
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: &['"', '\'', '`'],
    triple_quotes: false,
    keywords: &[
        "abstract",
        "async",
        "auto",
        "await",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "class",
        "const",
        "constexpr",
        "continue",
        "default",
        "defer",
        "delete",
        "do",
        "double",
        "else",
        "enum",
        "export",
        "extends",
        "extern",
        "false",
        "final",
        "finally",
        "float",
        "for",
        "func",
        "function",
        "go",
        "if",
        "implements",
        "import",
        "in",
        "instanceof",
        "int",
        "interface",
        "let",
        "long",
        "map",
        "namespace",
        "new",
        "null",
        "nullptr",
        "package",
        "private",
        "protected",
        "public",
        "range",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "struct",
        "super",
        "switch",
        "template",
        "this",
        "throw",
        "throws",
        "true",
        "try",
        "type",
        "typedef",
        "typeof",
        "undefined",
        "union",
        "unsigned",
        "var",
        "void",
        "volatile",
        "while",
        "yield",
    ],
    ignore_case: false,
    macros: false,
};

const SHELL: Lang = Lang {
    line_comments: &["#"],
    block_comment: None,
    quotes: &['"', '\''],
    triple_quotes: false,
    keywords: &[
        "case", "do", "done", "echo", "elif", "else", "esac", "exit", "export", "fi", "for", "function", "if", "in",
        "local", "read", "return", "set", "then", "until", "while",
    ],
    ignore_case: false,
    macros: false,
};

const SQL: Lang = Lang {
    line_comments: &["--"],
    block_comment: Some(("/*", "*/")),
    quotes: &['\'', '"'],
    triple_quotes: false,
    keywords: &[
        "and",
        "as",
        "asc",
        "by",
        "create",
        "delete",
        "desc",
        "distinct",
        "drop",
        "from",
        "group",
        "having",
        "in",
        "index",
        "insert",
        "into",
        "is",
        "join",
        "key",
        "left",
        "limit",
        "not",
        "null",
        "on",
        "or",
        "order",
        "primary",
        "references",
        "select",
        "set",
        "table",
        "union",
        "update",
        "values",
        "where",
        "with",
    ],
    ignore_case: true,
    macros: false,
};

/// JSON, TOML, YAML, INI: strings, numbers, comments and literals.
const DATA: Lang = Lang {
    line_comments: &["#"],
    block_comment: None,
    quotes: &['"', '\''],
    triple_quotes: false,
    keywords: &["true", "false", "null", "yes", "no"],
    ignore_case: false,
    macros: false,
};

/// Unknown languages: strings and numbers only; guessing at comments would paint `#` in
/// Markdown or `//` in URLs.
const GENERIC: Lang = Lang {
    line_comments: &[],
    block_comment: None,
    quotes: &['"'],
    triple_quotes: false,
    keywords: &[],
    ignore_case: false,
    macros: false,
};

fn lang_for(name: &str) -> &'static Lang {
    match name.trim().to_ascii_lowercase().as_str() {
        "rust" | "rs" => &RUST,
        "python" | "py" | "python3" => &PYTHON,
        "c" | "h" | "cpp" | "c++" | "cc" | "hpp" | "java" | "js" | "javascript" | "jsx" | "ts" | "typescript"
        | "tsx" | "go" | "golang" | "cs" | "csharp" | "kotlin" | "kt" | "swift" | "scala" | "dart" | "php" => &C_LIKE,
        "sh" | "bash" | "zsh" | "shell" | "console" | "fish" => &SHELL,
        "sql" | "sqlite" | "postgres" | "postgresql" | "mysql" => &SQL,
        "json" | "jsonc" | "toml" | "yaml" | "yml" | "ini" | "conf" => &DATA,
        _ => &GENERIC,
    }
}

/// Carried from one line of a code block to the next.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HlState {
    /// The closing delimiter we are inside of (`*/`, `"""`).
    open: Option<&'static str>,
}

/// Highlight one line of code in `lang` (a fence's info string, e.g. "rust").
pub fn line(code: &str, lang: &str, state: &mut HlState) -> Vec<Span<'static>> {
    let l = lang_for(lang);
    let mut out: Vec<Span<'static>> = Vec::new();
    let mut plain = String::new();
    let flush = |plain: &mut String, out: &mut Vec<Span<'static>>| {
        if !plain.is_empty() {
            out.push(Span::raw(std::mem::take(plain)));
        }
    };
    let mut rest = code;

    // Still inside a construct opened on an earlier line?
    if let Some(close) = state.open {
        let style = if close == "*/" { theme::code_comment() } else { theme::code_string() };
        match rest.find(close) {
            Some(i) => {
                out.push(Span::styled(rest[..i + close.len()].to_string(), style));
                rest = &rest[i + close.len()..];
                state.open = None;
            }
            None => {
                out.push(Span::styled(rest.to_string(), style));
                return out;
            }
        }
    }

    while let Some(c) = rest.chars().next() {
        if let Some(lc) = l.line_comments.iter().find(|p| rest.starts_with(**p)) {
            // `#` is a comment only at a word boundary in shells (`$#`, `a#b` are not).
            let boundary = plain.is_empty() || plain.ends_with(char::is_whitespace) || *lc != "#";
            if boundary {
                flush(&mut plain, &mut out);
                out.push(Span::styled(rest.to_string(), theme::code_comment()));
                return out;
            }
        }
        if let Some((open, close)) = l.block_comment
            && rest.starts_with(open)
        {
            flush(&mut plain, &mut out);
            match rest[open.len()..].find(close) {
                Some(i) => {
                    let end = open.len() + i + close.len();
                    out.push(Span::styled(rest[..end].to_string(), theme::code_comment()));
                    rest = &rest[end..];
                    continue;
                }
                None => {
                    out.push(Span::styled(rest.to_string(), theme::code_comment()));
                    state.open = Some(close);
                    return out;
                }
            }
        }
        if l.triple_quotes {
            let triple = if rest.starts_with("\"\"\"") {
                Some("\"\"\"")
            } else if rest.starts_with("'''") {
                Some("'''")
            } else {
                None
            };
            if let Some(q) = triple {
                flush(&mut plain, &mut out);
                match rest[3..].find(q) {
                    Some(i) => {
                        let end = 3 + i + 3;
                        out.push(Span::styled(rest[..end].to_string(), theme::code_string()));
                        rest = &rest[end..];
                        continue;
                    }
                    None => {
                        out.push(Span::styled(rest.to_string(), theme::code_string()));
                        state.open = Some(q);
                        return out;
                    }
                }
            }
        }
        if l.quotes.contains(&c) && !(c == '\'' && is_rust_lifetime(l, rest)) {
            flush(&mut plain, &mut out);
            let end = string_end(rest, c);
            out.push(Span::styled(rest[..end].to_string(), theme::code_string()));
            rest = &rest[end..];
            continue;
        }
        if c.is_ascii_digit() && !plain.ends_with(is_ident_char) {
            flush(&mut plain, &mut out);
            let end =
                rest.find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '.' || ch == '_')).unwrap_or(rest.len());
            out.push(Span::styled(rest[..end].to_string(), theme::code_number()));
            rest = &rest[end..];
            continue;
        }
        if is_ident_start(c) && !plain.ends_with(is_ident_char) {
            let end = rest.find(|ch: char| !is_ident_char(ch)).unwrap_or(rest.len());
            let word = &rest[..end];
            let style = word_style(l, word, &rest[end..]);
            match style {
                Some(style) => {
                    flush(&mut plain, &mut out);
                    let end = if l.macros && rest[end..].starts_with('!') { end + 1 } else { end };
                    out.push(Span::styled(rest[..end].to_string(), style));
                    rest = &rest[end..];
                }
                None => {
                    plain.push_str(word);
                    rest = &rest[end..];
                }
            }
            continue;
        }
        plain.push(c);
        rest = &rest[c.len_utf8()..];
    }
    flush(&mut plain, &mut out);
    out
}

fn word_style(l: &Lang, word: &str, after: &str) -> Option<Style> {
    let is_keyword = if l.ignore_case {
        l.keywords.iter().any(|k| k.eq_ignore_ascii_case(word))
    } else {
        l.keywords.contains(&word)
    };
    if is_keyword {
        Some(theme::code_keyword())
    } else if l.macros && after.starts_with('!') && !after.starts_with("!=") {
        Some(theme::code_macro())
    } else if !std::ptr::eq(l, &GENERIC)
        && !std::ptr::eq(l, &DATA)
        && word.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && word.chars().any(|c| c.is_ascii_lowercase())
    {
        Some(theme::code_type())
    } else {
        None
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `'a` in Rust is a lifetime (or a char literal `'a'`, which `string_end` handles).
fn is_rust_lifetime(l: &Lang, rest: &str) -> bool {
    if !l.macros {
        return false;
    }
    let mut it = rest.chars().skip(1);
    match (it.next(), it.next()) {
        (Some(a), Some(b)) => is_ident_start(a) && b != '\'',
        _ => false,
    }
}

/// The byte index just past the string starting at `rest` (quote `q`), honouring
/// backslash escapes; the end of the line when unterminated.
fn string_end(rest: &str, q: char) -> usize {
    let mut escaped = false;
    for (i, c) in rest.char_indices().skip(1) {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == q {
            return i + c.len_utf8();
        }
    }
    rest.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn styled(code: &str, lang: &str) -> Vec<(String, Style)> {
        let mut st = HlState::default();
        line(code, lang, &mut st).into_iter().map(|s| (s.content.into_owned(), s.style)).collect()
    }

    #[test]
    fn rust_keywords_strings_comments_macros() {
        let spans = styled(r#"let x = format!("a \"b\"", 42); // done"#, "rust");
        let text: String = spans.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(text, r#"let x = format!("a \"b\"", 42); // done"#, "nothing lost");
        assert!(spans.contains(&("let".into(), theme::code_keyword())));
        assert!(spans.contains(&("format!".into(), theme::code_macro())));
        assert!(spans.contains(&(r#""a \"b\"""#.into(), theme::code_string())));
        assert!(spans.contains(&("42".into(), theme::code_number())));
        assert!(spans.contains(&("// done".into(), theme::code_comment())));
        // Lifetimes are not strings; identifiers with digits are not numbers.
        let spans = styled("fn f<'a>(x1: &'a str) -> Vec<u8>", "rs");
        assert!(!spans.iter().any(|(_, s)| *s == theme::code_string()), "{spans:?}");
        assert!(spans.contains(&("Vec".into(), theme::code_type())));
    }

    #[test]
    fn state_carries_block_comments_and_triple_quotes() {
        let mut st = HlState::default();
        line("int a; /* start", "c", &mut st);
        assert!(st.open.is_some());
        let spans = line("still */ int b;", "c", &mut st);
        assert_eq!(spans[0].content, "still */");
        assert_eq!(spans[0].style, theme::code_comment());
        assert!(st.open.is_none());

        let mut st = HlState::default();
        line("doc = \"\"\"first", "python", &mut st);
        let spans = line("second\"\"\" + x", "python", &mut st);
        assert_eq!(spans[0].style, theme::code_string());
        assert!(st.open.is_none());
    }

    #[test]
    fn unknown_languages_and_multibyte_text_are_safe() {
        let text: String = styled("naïve → “quoted” # not a comment 12", "").into_iter().map(|(t, _)| t).collect();
        assert_eq!(text, "naïve → “quoted” # not a comment 12");
        let sql = styled("CREATE TABLE t -- all", "sql");
        assert_eq!(sql[0], ("CREATE".into(), theme::code_keyword()));
        let sh = styled("echo $# # count", "bash");
        assert_eq!(sh.last().unwrap(), &("# count".into(), theme::code_comment()));
    }
}
