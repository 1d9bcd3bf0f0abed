//! Cutting text to a character budget for prompts, stored summaries and narrow terminal cells.
//!
//! Budgets count `char`s, not bytes, so a cut never splits a multi-byte character, and the
//! marker of a cut is one `…` inside the budget: the result never exceeds `n` characters,
//! which is what a fixed-width column or a capped database field needs.

/// `s` unchanged when it has at most `n` characters; otherwise its first `n - 1` characters and
/// an ellipsis. A budget of zero leaves nothing, not even the ellipsis.
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    match n.checked_sub(1) {
        Some(kept) => s.chars().take(kept).chain(['…']).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::clip;

    #[test]
    fn short_text_is_unchanged() {
        assert_eq!(clip("eggs", 4), "eggs");
        assert_eq!(clip("eggs", 10), "eggs");
        assert_eq!(clip("", 0), "");
        assert_eq!(clip("", 3), "");
    }

    #[test]
    fn long_text_ends_in_one_ellipsis_within_the_budget() {
        assert_eq!(clip("scrambled eggs", 5), "scra…");
        assert_eq!(clip("eggs", 3), "eg…");
        assert_eq!(clip("eggs", 1), "…");
    }

    #[test]
    fn a_zero_budget_is_empty_instead_of_underflowing() {
        assert_eq!(clip("eggs", 0), "");
    }

    #[test]
    fn multi_byte_characters_count_once_and_are_never_split() {
        assert_eq!(clip("crème brûlée", 12), "crème brûlée");
        assert_eq!(clip("crème brûlée", 8), "crème b…");
        assert_eq!(clip("日本語のテキスト", 4), "日本語…");
        assert_eq!(clip("🥚🥚🥚", 2), "🥚…");
        for n in 0..10 {
            assert!(clip("naïve café 😀", n).chars().count() <= n, "n = {n}");
        }
    }

    #[test]
    fn surrounding_whitespace_is_kept_for_the_caller_to_trim() {
        assert_eq!(clip("  eggs  ", 8), "  eggs  ");
        assert_eq!(clip("  eggs  ", 4), "  e…");
    }
}
