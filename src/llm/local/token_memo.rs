//! Tokenized prompt pieces kept between calls.
//!
//! A reply's prompt is mostly what the last one was (the persona, the conversation so far,
//! the mode's prompt), and tokenizing it again is work done on the generation thread before
//! the first token, every call. Pieces are tokenized one by one already (template markers
//! apart from text), so a piece seen in one of the last few calls can be reused as it was.

use std::collections::HashMap;

/// Calls a piece is kept for after its last use: the reply, the prefill of the next one and a
/// helper call or two in between.
const CALLS_KEPT: u64 = 4;

pub(super) struct TokenMemo<T> {
    call: u64,
    /// By whether the piece's template markers are parsed, then its text: the tokens and the
    /// call that last used them.
    kept: [HashMap<String, (Vec<T>, u64)>; 2],
}

impl<T: Copy> TokenMemo<T> {
    pub(super) fn new() -> TokenMemo<T> {
        TokenMemo { call: 0, kept: [HashMap::new(), HashMap::new()] }
    }

    /// Append `text`'s tokens to `out`: the kept ones, else `tokenize(text)`'s (then kept).
    /// Short pieces are kept too. The template's markers are tokenized with special tokens
    /// parsed, and llama.cpp then looks for each of its special tokens in the text, so when
    /// they were tokenized afresh each call, a 618-token prompt took 0.43 ms to tokenize
    /// against 0.18 with them kept (`benches/local_chat.rs`, first token after a prefill).
    pub(super) fn extend(
        &mut self,
        out: &mut Vec<T>,
        special: bool,
        text: &str,
        tokenize: impl FnOnce(&str) -> Vec<T>,
    ) {
        let kept = &mut self.kept[usize::from(special)];
        match kept.get_mut(text) {
            Some((tokens, used)) => {
                *used = self.call;
                out.extend_from_slice(tokens);
            }
            None => {
                let tokens = tokenize(text);
                out.extend_from_slice(&tokens);
                kept.insert(text.to_owned(), (tokens, self.call));
            }
        }
    }

    /// Close a call: pieces no call used in the last [`CALLS_KEPT`] go.
    pub(super) fn end_call(&mut self) {
        let oldest = self.call.saturating_sub(CALLS_KEPT - 1);
        for kept in &mut self.kept {
            kept.retain(|_, (_, used)| *used >= oldest);
        }
        self.call += 1;
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.kept.iter().map(HashMap::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn chars(s: &str) -> Vec<u32> {
        s.chars().map(u32::from).collect()
    }

    #[test]
    fn a_piece_is_tokenized_once_while_calls_use_it_and_dropped_after() {
        let (memo, calls) = (&mut TokenMemo::new(), Cell::new(0));
        let long = "persona ".repeat(20);
        let tokenize = |s: &str| {
            calls.set(calls.get() + 1);
            chars(s)
        };
        for _ in 0..10 {
            let mut out = Vec::new();
            memo.extend(&mut out, true, "<|im_start|>", tokenize);
            memo.extend(&mut out, false, &long, tokenize);
            assert_eq!(out, [chars("<|im_start|>"), chars(&long)].concat());
            memo.end_call();
        }
        // The short marker and the long piece once each.
        assert_eq!(calls.get(), 2);
        // The same text with markers parsed is another piece.
        memo.extend(&mut Vec::new(), true, &long, tokenize);
        assert_eq!(calls.get(), 3);
        memo.end_call();
        for _ in 0..CALLS_KEPT {
            memo.end_call();
        }
        assert_eq!(memo.len(), 0, "unused for {CALLS_KEPT} calls, both go");
    }

    #[test]
    fn a_piece_unused_for_fewer_calls_than_kept_is_still_there() {
        let memo = &mut TokenMemo::new();
        memo.extend(&mut Vec::new(), false, "x", chars);
        memo.end_call();
        for _ in 0..CALLS_KEPT - 1 {
            memo.end_call();
        }
        memo.extend(&mut Vec::new(), false, "x", |_| panic!("kept, not tokenized again"));
    }
}
