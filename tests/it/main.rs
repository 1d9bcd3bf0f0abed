//! Every integration test, in one binary: each module below was once a crate of its own, and
//! each of those linked the whole library with llama.cpp and candle, so linking dominated the
//! build of the test targets. Helpers shared by several modules live in [`support`].
//!
//! The runner is `cargo nextest run` (scripts/test.sh), which gives every test its own process.
//! Plain `cargo test --test it` also passes, with the tests on threads of one process: no test
//! sets environment variables or the current directory (child processes get theirs on their
//! `Command`), each tmux test runs its own server on its own socket, the models fetch takes a
//! file lock that also excludes threads, and the one stateful global, the built-in chat model
//! with its KV cache, is held by one test at a time.
//!
//! Unit tests follow one rule: a module's tests are inline in `#[cfg(test)] mod tests { .. }`
//! or, when large, in `<module>/tests.rs` declared `#[cfg(test)] mod tests;` (more than one file
//! becomes submodules of that `tests` module under `<module>/tests/`), never via `#[path]`.

mod support;

mod act;
mod adaptive;
mod chaos;
mod cli;
mod closed_pipe;
mod critic;
mod disk;
mod export;
mod forget;
mod fuzz;
mod graph_replay;
mod graph_router;
mod introspection;
mod kill9;
mod list_matching;
mod llm_layer;
mod llm_openai;
mod local_chat;
mod local_models;
mod long_session;
mod mcp;
mod memory_chunker;
mod memory_cli;
mod memory_embedding_space;
mod memory_episode_model;
mod memory_episodes;
mod memory_graph;
mod memory_semantic;
mod onboarding;
mod pipeline;
mod pipeline_degrade;
mod pipeline_local;
mod regulator;
mod replay;
mod routing_learning;
mod routing_reflection;
mod security;
mod shell;
mod tasks;
mod topic_chitchat;
mod topics_regulator;
mod tui_act_tmux;
mod tui_memory_tmux;
mod tui_replay_tmux;
mod tui_tmux;
mod uncertainty;
