//! Strings that must not outlive the moment they were typed: passwords and PINs given in a
//! sentence, API keys and tokens, payment card numbers (Luhn-checked, so an order number of the
//! same length is left alone) and national id numbers (US SSN, UK National Insurance, Spanish
//! DNI shapes). Pure and conservative: a miss leaves a secret where a forget can still remove
//! it, while a false hit only masks an innocent word, so the shapes are tight rather than broad.
//!
//! Callers: the memory extractors (a trait, fact or gist carrying one is dropped), the
//! diagnostics log writer (masked), and chat history at session end when
//! `[privacy] keep_secrets_in_history` is off.

use regex::Regex;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

/// What a masked secret is replaced with.
pub const MASK: &str = "[secret]";

/// Which kind of secret a span is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretKind {
    Password,
    ApiKey,
    CardNumber,
    NationalId,
}

impl SecretKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SecretKind::Password => "password",
            SecretKind::ApiKey => "api key",
            SecretKind::CardNumber => "card number",
            SecretKind::NationalId => "id number",
        }
    }
}

fn re(s: &str) -> Regex {
    Regex::new(s).unwrap_or_else(|e| panic!("a literal regex must compile: {e}"))
}

// "my password is hunter2", "pin: 4921", "passcode = 0000": the value after the cue word.
static PASSWORD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:password|passwd|passcode|passphrase|pin(?:\s+(?:code|number))?|pw)\b(?:\s+(?:for|to|of)\s+[\w' -]{1,30}?)?\s*(?:is|was|=|:)\s*(?:now\s+)?[`'\x22]?(?P<v>[^\s`'\x22]{3,64})",
    )
});
static API_KEY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:sk-(?:proj-|live-|test-)?[A-Za-z0-9_-]{16,}|(?:AKIA|ASIA)[A-Z0-9]{16}|gh[pousr]_[A-Za-z0-9]{30,}|xox[abpr]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20}|sk_(?:live|test)_[A-Za-z0-9]{16,})\b",
    )
});
// A long run of mixed letters and digits (a bare token someone pasted) counts only after a
// cue word: "api key", "token", "secret".
static CUED_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(?:api[\s_-]?key|token|secret|access[\s_-]?key)\b[^\n]{0,20}?(?P<v>[A-Za-z0-9_\-]{20,})")
});
static CARD: LazyLock<Regex> = LazyLock::new(|| re(r"\b\d(?:[ -]?\d){12,18}\b"));
static SSN: LazyLock<Regex> = LazyLock::new(|| re(r"\b(\d{3})[- ](\d{2})[- ](\d{4})\b"));
static NINO: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b"));
static DNI: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\b\d{8}-?[TRWAGMYFPDXBNJZSQVHLCKE]\b"));

/// Whether the digits of `s` pass the Luhn check (what every payment card number does).
pub fn luhn(s: &str) -> bool {
    let digits: Vec<u32> = s.chars().filter_map(|c| c.to_digit(10)).collect();
    if digits.len() < 13 {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 { x - 9 } else { x }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Every secret in `text`: byte ranges (sorted, not overlapping) with their kind.
pub fn find_secrets(text: &str) -> Vec<(Range<usize>, SecretKind)> {
    let mut out: Vec<(Range<usize>, SecretKind)> = Vec::new();
    for c in PASSWORD.captures_iter(text) {
        if let Some(v) = c.name("v") {
            // "4921," or "hunter2." ends at the word, not the punctuation after it.
            let kept = v.as_str().trim_end_matches(['.', ',', ';', ':', ')']).len();
            if kept >= 3 {
                out.push((v.start()..v.start() + kept, SecretKind::Password));
            }
        }
    }
    for m in API_KEY.find_iter(text) {
        out.push((m.range(), SecretKind::ApiKey));
    }
    for c in CUED_TOKEN.captures_iter(text) {
        if let Some(v) = c.name("v").filter(|v| v.as_str().chars().any(|ch| ch.is_ascii_digit())) {
            out.push((v.range(), SecretKind::ApiKey));
        }
    }
    for m in CARD.find_iter(text) {
        if luhn(m.as_str()) {
            out.push((m.range(), SecretKind::CardNumber));
        }
    }
    for c in SSN.captures_iter(text) {
        // Never issued: area 000, 666 or 9xx, group 00, serial 0000.
        let (a, g, s) = (&c[1], &c[2], &c[3]);
        if a != "000" && a != "666" && !a.starts_with('9') && g != "00" && s != "0000" {
            out.push((c.get(0).map_or(0..0, |m| m.range()), SecretKind::NationalId));
        }
    }
    for m in NINO.find_iter(text).chain(DNI.find_iter(text)) {
        out.push((m.range(), SecretKind::NationalId));
    }
    out.sort_by_key(|(r, _)| (r.start, std::cmp::Reverse(r.end)));
    let mut merged: Vec<(Range<usize>, SecretKind)> = Vec::new();
    for (r, k) in out {
        match merged.last_mut() {
            Some((last, _)) if r.start < last.end => last.end = last.end.max(r.end),
            _ => merged.push((r, k)),
        }
    }
    merged
}

/// Whether `text` holds anything [`find_secrets`] finds.
pub fn has_secret(text: &str) -> bool {
    !find_secrets(text).is_empty()
}

/// `text` with every secret replaced by [`MASK`] (borrowed when there is none).
pub fn mask(text: &str) -> Cow<'_, str> {
    let found = find_secrets(text);
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (r, _) in found {
        out.push_str(&text[at..r.start]);
        out.push_str(MASK);
        at = r.end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// `text` with every case-insensitive occurrence of each of `needles` replaced by `with`,
/// inside words too. For raw text whose escapes may sit against a needle (a diagnostics log
/// line's `\nJordan`): over-redacting a log costs nothing. Stored memory uses
/// [`replace_words_ci`]. ASCII case folding only, so byte offsets stay valid for any UTF-8.
pub fn replace_all_ci(text: &str, needles: &[String], with: &str) -> Option<String> {
    replace_hits(text, needles, with, false)
}

/// [`replace_all_ci`] for whole words only: an occurrence counts where the needle does not
/// run on into a longer word, so forgetting "Zed5" leaves "Zed50", and "Ann" leaves
/// "planning"; "Zed5's" and "cousin-zed5-lives" still lose it. Only the needle's own word
/// edges are checked: a needle ending in "!" may be followed by anything.
pub fn replace_words_ci(text: &str, needles: &[String], with: &str) -> Option<String> {
    replace_hits(text, needles, with, true)
}

/// Whether [`replace_words_ci`] would change `text`.
pub fn contains_word_ci(text: &str, needles: &[String]) -> bool {
    let lower = text.to_ascii_lowercase();
    needles.iter().map(|n| n.to_ascii_lowercase()).any(|n| !hits_of(text, &lower, &n, true).is_empty())
}

/// Where `needle` (lowercase) occurs in `text`, whose ASCII-lowercase copy is `lower`.
fn hits_of(text: &str, lower: &str, needle: &str, words: bool) -> Vec<Range<usize>> {
    let mut hits = Vec::new();
    if needle.is_empty() {
        return hits;
    }
    let wordy = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let runs_on = |inside: Option<char>, outside: Option<char>| wordy(inside) && wordy(outside);
    let mut from = 0;
    while let Some(i) = lower[from..].find(needle) {
        let r = from + i..from + i + needle.len();
        from = r.end;
        if words
            && (runs_on(needle.chars().next(), text[..r.start].chars().next_back())
                || runs_on(needle.chars().next_back(), text[r.end..].chars().next()))
        {
            continue;
        }
        hits.push(r);
    }
    hits
}

fn replace_hits(text: &str, needles: &[String], with: &str, words: bool) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let mut hits: Vec<Range<usize>> = Vec::new();
    for n in needles.iter().map(|n| n.to_ascii_lowercase()) {
        hits.extend(hits_of(text, &lower, &n, words));
    }
    if hits.is_empty() {
        return None;
    }
    hits.sort_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for r in hits {
        if r.start < at {
            at = at.max(r.end);
            continue;
        }
        out.push_str(&text[at..r.start]);
        out.push_str(with);
        at = r.end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// Whether `text` holds any of `needles`, ignoring ASCII case, inside words too: a cheap
/// superset test before [`replace_words_ci`] or [`replace_all_ci`] decides.
pub fn contains_any_ci(text: &str, needles: &[String]) -> bool {
    let lower = text.to_ascii_lowercase();
    needles.iter().any(|n| !n.is_empty() && lower.contains(&n.to_ascii_lowercase()))
}

/// Strings a forget removed from the database, waiting for the session-log writer to remove
/// them from the files too. They cannot travel on the event bus: the bus is what the log
/// records. Kept in memory only, taken once.
static HANDED_OVER: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Leave `needles` for [`take_handed_over`].
pub fn hand_over(needles: &[String]) {
    if let Ok(mut v) = HANDED_OVER.lock() {
        v.extend(needles.iter().cloned());
    }
}

/// Everything handed over since the last call.
pub fn take_handed_over() -> Vec<String> {
    HANDED_OVER.lock().map(|mut v| std::mem::take(&mut *v)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(t: &str) -> Vec<(&str, SecretKind)> {
        find_secrets(t).into_iter().map(|(r, k)| (&t[r], k)).collect()
    }

    #[test]
    fn passwords_and_pins_after_a_cue() {
        assert_eq!(kinds("my wifi password is hunter22!"), [("hunter22!", SecretKind::Password)]);
        assert_eq!(kinds("The PIN for my bank card is 4921"), [("4921", SecretKind::Password)]);
        assert_eq!(kinds("pin: 0000"), [("0000", SecretKind::Password)]);
        assert!(kinds("I forgot my password again").is_empty());
        assert!(kinds("pin the poster on the wall").is_empty());
    }

    #[test]
    fn keys_cards_and_ids() {
        assert_eq!(kinds("use sk-proj-AbCdEf0123456789xyz please")[0].1, SecretKind::ApiKey);
        assert_eq!(kinds("AKIAIOSFODNN7EXAMPLE")[0].1, SecretKind::ApiKey);
        assert_eq!(kinds("card 4111 1111 1111 1111 exp 12/29"), [("4111 1111 1111 1111", SecretKind::CardNumber)]);
        assert!(kinds("order 4111 1111 1111 1112").is_empty(), "fails Luhn");
        assert_eq!(kinds("ssn 123-45-6789"), [("123-45-6789", SecretKind::NationalId)]);
        assert!(kinds("call 666-12-3456").is_empty(), "never-issued area");
        assert_eq!(kinds("NI number AB 12 34 56 C")[0].1, SecretKind::NationalId);
        assert_eq!(kinds("DNI 12345678Z")[0].1, SecretKind::NationalId);
        assert!(kinds("I have 3 cats and 12 fish, born 1990").is_empty());
    }

    #[test]
    fn masking_and_replacing() {
        assert_eq!(mask("pin is 4921, ssn 123-45-6789"), "pin is [secret], ssn [secret]");
        assert!(matches!(mask("nothing here"), Cow::Borrowed(_)));
        let n = vec!["jordan".to_string()];
        assert_eq!(replace_all_ci("Jordan said JORDAN", &n, "[x]").as_deref(), Some("[x] said [x]"));
        assert_eq!(replace_all_ci("nobody", &n, "[x]"), None);
        let z = vec!["Zed5".to_string(), "hunter22!".to_string()];
        assert_eq!(
            replace_words_ci("Zed50 and zed5's cousin-zed5-x", &z, "[x]").as_deref(),
            Some("Zed50 and [x]'s cousin-[x]-x")
        );
        assert_eq!(
            replace_words_ci("pw hunter22!x", &z, "[x]").as_deref(),
            Some("pw [x]x"),
            "a needle's own edge only"
        );
        assert_eq!(replace_words_ci("Zed50 only", &z, "[x]"), None);
        assert_eq!(replace_all_ci("Zed50", &z, "[x]").as_deref(), Some("[x]0"), "raw text: inside words too");
        assert!(contains_word_ci("é Zed5.", &z) && !contains_word_ci("éZed5", &z) && !contains_word_ci("Zed5é", &z));
        assert!(!contains_word_ci("planning", &["Ann".to_string()]));
        assert!(contains_any_ci("hi JoRdAn", &n));
        assert!(luhn("4111111111111111") && !luhn("4111111111111112"));
    }
}
