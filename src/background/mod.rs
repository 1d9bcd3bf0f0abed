//! Background work beside the conversation: every task is one entry of the
//! [`registry`], run by one of the two loops of [`worker`] (a queue worker or a periodic
//! task), and reports what it last did on the [`board`], which [`status`] prints.
//!
//! Groups: the memory workers (`memory::workers`, which sits above this layer and builds
//! its group from these parts) start once the engine's models are known; the reminder
//! [`scheduler`] starts with the front-end. Engines still to come (drift, regulator
//! bookkeeping, uncertainty detection, the task worker, the routing regulator) are each one
//! more [`WorkerId`] and one entry in their group.

pub mod board;
pub mod checkpoint;
pub mod registry;
pub mod scheduler;
pub mod status;
pub mod worker;

pub use board::{RunState, WorkerBoard, WorkerStatus};
pub use registry::{Registry, RegistryError, Running, WorkerId, worker_for};
pub use status::{StatusReport, report};
pub use worker::{PeriodicTask, QueueWorker, Ran, claim_and_run};

#[cfg(test)]
mod tests;
