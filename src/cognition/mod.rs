//! The per-message cognition pipeline (docs/architecture.md §3). Deterministic stages are
//! pure functions over plain structs, testable with no model and no database.

pub mod act;
pub mod adaptive;
pub mod boundary;
pub mod context;
pub mod drift;
pub mod intent;
pub mod onboarding;
pub mod pipeline;
pub mod regulator;
pub mod reply;
pub mod router;
pub mod self_model;
pub mod signals;
pub mod social;
pub mod stability;
pub mod tasks;
pub mod topic;
pub mod world;
