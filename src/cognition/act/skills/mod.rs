//! The innate skills, all non-LLM: each a [`SkillFn`](super::skill::SkillFn).

pub mod associate;
pub mod autobiography;
pub mod focus;
pub mod forget;
pub mod introspect;
pub mod list;
pub mod list_match;
pub mod memory;
pub mod read;
pub mod schedule;
pub mod task;
