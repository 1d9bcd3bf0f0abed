//! The words every layer shares: plain data types (with their serde names) that the engine
//! produces and the events, the store, the session log and the UI carry. A leaf: it imports
//! nothing from the crate, so any layer may use it (docs/architecture.md §2).

pub mod drift;
pub mod graph;
pub mod mode;
pub mod regulator;
pub mod report;
pub mod snapshot;
pub mod tasks;
pub mod triage;

pub use mode::{Mode, ModeScores};
