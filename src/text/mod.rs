//! Shared text vocabulary: how a message is lowercased, split into words and matched against
//! phrases, and which words carry content. A leaf: it imports nothing from the crate, so the
//! memory layer and cognition can both read text the same way without depending on each other.

pub mod clip;
mod content;
pub mod needles;
mod phrases;
pub mod privacy;
mod scan;
pub mod terminal;

pub use content::is_content_word;
pub use phrases::PhraseSet;
pub use scan::{find_phrase, has_any, normalize, phrase_at, starts_with_any, words};
