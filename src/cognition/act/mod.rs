//! The ACT loop's deterministic parts (docs/cognition.md §7): the plan contract,
//! fatigue and termination, the deterministic planner, the dispatcher and the innate skills.
//! The loop itself, which needs the models and the database, is in `pipeline::act`.

pub mod critic;
pub mod critic_answer;
pub mod dispatch;
pub mod mcp;
pub mod plan;
pub mod planner;
pub mod skill;
pub mod skills;
