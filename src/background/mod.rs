//! Background tasks that run beside the conversation (design: drift engine, persistent
//! task worker, routing regulators, scheduler). Each is a tokio task that does its
//! database work on the database thread and reports through the event bus.

pub mod scheduler;
