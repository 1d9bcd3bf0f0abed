//! Memory layers beyond the turn: the episodic worker that turns each exchange into a
//! durable episode (with its embedding), and hybrid recall across every layer.
//!
//! See docs/cognition.md §9 for the layers and their numbers.

pub mod chunk_model;
pub mod chunker;
pub mod concepts;
pub mod decay;
pub mod episode_model;
pub mod episodic;
pub mod extract;
pub mod forget;
pub mod graph;
pub mod identity;
pub mod patterns;
pub mod recall;
pub mod reembed;
pub mod semantic;
pub mod semantic_store;
pub mod shortterm;
pub mod style;
pub mod traits;
pub mod uncertainty;
pub mod warmth;
pub mod workers;

pub use episodic::{EpisodeDraft, SalienceFactors, build_episode};
pub use recall::{Hit, ScoreParts, SourceRank, hybrid_recall};
pub use workers::{run_episodic_worker, run_workers};
