//! The fallbacks a turn can take, by name. The names are a contract: the audit row's
//! `fallback` column, the session log, `ask --json` and the triage calibration rows all carry
//! them as text, so each variant's [`Fallback::wire_name`] must never change.

use crate::llm::LlmError;
use std::borrow::Cow;
use std::fmt;

/// The pipeline stage whose model call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Embedding,
    Triage,
    Tiebreaker,
    ActPlan,
    Generation,
    /// The post-action critic's model check (skipped; the deterministic checks stood).
    Critic,
}

impl Stage {
    fn wire_name(self) -> &'static str {
        match self {
            Stage::Embedding => "embedding",
            Stage::Triage => "triage",
            Stage::Tiebreaker => "tiebreaker",
            Stage::ActPlan => "act_plan",
            Stage::Generation => "generation",
            Stage::Critic => "critic",
        }
    }
}

/// How a model call failed, coarsely: what a reader of the audit needs to tell a slow model
/// from a broken reply from a missing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    Timeout,
    InvalidOutput,
    Unavailable,
    Cancelled,
    Error,
    /// A rerun found no recorded output for the call (docs/cognition.md §15.5): not a failure
    /// of the model, which was never asked.
    Unrecorded,
}

impl Failure {
    pub fn of(e: &LlmError) -> Failure {
        if crate::llm::replay::is_unrecorded(e) {
            return Failure::Unrecorded;
        }
        match e {
            LlmError::Timeout { .. } => Failure::Timeout,
            LlmError::InvalidOutput { .. } | LlmError::Protocol { .. } | LlmError::Empty { .. } => {
                Failure::InvalidOutput
            }
            LlmError::Unreachable { .. } | LlmError::ModelUnavailable { .. } => Failure::Unavailable,
            LlmError::Cancelled => Failure::Cancelled,
            LlmError::Auth { .. } | LlmError::RateLimited { .. } | LlmError::Http { .. } | LlmError::Local(_) => {
                Failure::Error
            }
        }
    }

    fn wire_name(self) -> &'static str {
        match self {
            Failure::Timeout => "timeout",
            Failure::InvalidOutput => "invalid_output",
            Failure::Unavailable => "unavailable",
            Failure::Cancelled => "cancelled",
            Failure::Error => "error",
            Failure::Unrecorded => UNRECORDED,
        }
    }
}

/// The failure name of a rerun's call with no recording (a fallback reads `<stage>_unrecorded`).
pub const UNRECORDED: &str = "unrecorded";

/// One fallback that fired during a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// A model call failed or answered unusably; its deterministic stand-in ran
    /// (`<stage>_<failure>`: "triage_timeout", "embedding_invalid_output", …).
    Model(Stage, Failure),
    /// The built-in model does not plan: the deterministic planner took the command.
    ActPlanBuiltinModel,
    /// The model's plan did not parse against the offered skills.
    ActPlanInvalid,
    /// The model planned nothing.
    ActPlanEmpty,
    /// A consequential action would have relied on a doubtful memory: the user is asked first.
    ReliabilityCheck,
    /// A CLARIFY reply held no question; a deterministic one replaced it.
    ClarifyNoQuestion,
    /// The model returned an empty reply.
    GenerationEmpty,
    /// The reply stopped part-way (deadline or dropped stream) and what streamed is kept.
    GenerationCutOff,
    /// An MCP tool's server failed, hung or reported an error; the turn went on without it.
    McpTool,
}

impl Fallback {
    /// The fallback for a failed model call at `stage`.
    pub fn model(stage: Stage, e: &LlmError) -> Fallback {
        Fallback::Model(stage, Failure::of(e))
    }

    /// The stable name written to the audit, the log and `ask --json`.
    pub fn wire_name(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Fallback::Model(stage, failure) => {
                return Cow::Owned(format!("{}_{}", stage.wire_name(), failure.wire_name()));
            }
            Fallback::ActPlanBuiltinModel => "act_plan_builtin_model",
            Fallback::ActPlanInvalid => "act_plan_invalid",
            Fallback::ActPlanEmpty => "act_plan_empty",
            Fallback::ReliabilityCheck => "reliability_check",
            Fallback::ClarifyNoQuestion => "clarify_no_question",
            Fallback::GenerationEmpty => "generation_empty",
            Fallback::GenerationCutOff => "generation_cut_off",
            Fallback::McpTool => "mcp_tool",
        })
    }
}

impl fmt::Display for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.wire_name())
    }
}

/// The wire names of `fallbacks`, in order (the report's and the log's form).
pub fn wire_names(fallbacks: &[Fallback]) -> Vec<String> {
    fallbacks.iter().map(ToString::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_are_the_recorded_ones() {
        let t = LlmError::Timeout { provider: "p".into(), ms: 500 };
        assert_eq!(Fallback::model(Stage::Triage, &t).to_string(), "triage_timeout");
        let j = LlmError::InvalidOutput { what: "JSON".into(), detail: "x".into(), raw: "y".into() };
        assert_eq!(Fallback::model(Stage::Tiebreaker, &j).to_string(), "tiebreaker_invalid_output");
        let u = LlmError::Unreachable { provider: "p".into(), reason: "refused".into() };
        assert_eq!(Fallback::model(Stage::Generation, &u).to_string(), "generation_unavailable");
        // A rerun's missing recording is named apart from a model that is really unavailable.
        let replay = crate::llm::replay::REPLAY_PROVIDER.to_string();
        let missing = LlmError::ModelUnavailable {
            provider: replay.clone(),
            model: "m".into(),
            detail: crate::llm::replay::NO_RECORDING.into(),
        };
        assert_eq!(Fallback::model(Stage::Generation, &missing).to_string(), "generation_unrecorded");
        let recorded = crate::llm::replay::recorded_failure("model `m` is not available from x");
        assert_eq!(Fallback::model(Stage::Triage, &recorded).to_string(), "triage_unavailable");
        let table = [
            (Fallback::Model(Stage::Embedding, Failure::InvalidOutput), "embedding_invalid_output"),
            (Fallback::Model(Stage::Embedding, Failure::Unavailable), "embedding_unavailable"),
            (Fallback::Model(Stage::ActPlan, Failure::InvalidOutput), "act_plan_invalid_output"),
            (Fallback::Model(Stage::ActPlan, Failure::Cancelled), "act_plan_cancelled"),
            (Fallback::Model(Stage::Generation, Failure::Error), "generation_error"),
            (Fallback::ActPlanBuiltinModel, "act_plan_builtin_model"),
            (Fallback::ActPlanInvalid, "act_plan_invalid"),
            (Fallback::ActPlanEmpty, "act_plan_empty"),
            (Fallback::ReliabilityCheck, "reliability_check"),
            (Fallback::ClarifyNoQuestion, "clarify_no_question"),
            (Fallback::GenerationEmpty, "generation_empty"),
            (Fallback::GenerationCutOff, "generation_cut_off"),
            (Fallback::McpTool, "mcp_tool"),
        ];
        for (f, name) in table {
            assert_eq!(f.to_string(), name);
        }
    }
}
