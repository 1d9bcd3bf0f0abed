//! Helpers shared by the test modules: the real binary, the scripted OpenAI double, an engine
//! harness over it, the built-in models, a private tmux server and a word-hash embedder.

pub mod bin;
pub mod chaos;
pub mod fuzz;
pub mod harness;
pub mod mcp_server;
pub mod models;
pub mod openai_double;
pub mod tmux;
pub mod word_hash;
