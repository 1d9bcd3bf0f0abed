//! Hostile text and secrets through the real binary (issue 23): a model reply full of terminal
//! escape sequences must reach the terminal inert.

use crate::support::bin::{chalie, json_lines, text};
use crate::support::harness::triage_reply;
use crate::support::openai_double::{Double, Reply};
use std::path::Path;

/// A tokio runtime serving the double while the binary (a separate process) talks to it.
fn serve(script: Vec<Reply>) -> (tokio::runtime::Runtime, Double) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let double = rt.block_on(Double::start(script));
    (rt, double)
}

/// Every role at the double, deterministic memory extraction; `extra` goes into the provider.
fn configure(data: &Path, base_url: &str, extra: &str) {
    let config = format!(
        "[providers.double]\nkind = \"openai\"\nbase_url = \"{base_url}\"\n{extra}\
         [models]\nprimary = \"double/m\"\nlightweight = \"double/m\"\nstrong = \"double/m\"\nembedding = \"double/e\"\n\
         [llm]\ntriage = \"llm\"\nmemory_extraction = \"heuristic\"\n"
    );
    std::fs::write(data.join("config.toml"), config).unwrap();
}

/// Bytes a terminal would act on: C0 controls other than newline and tab, DEL, C1 controls.
fn live_controls(out: &[u8]) -> Vec<char> {
    text(out).chars().filter(|c| c.is_control() && *c != '\n' && *c != '\t').collect()
}

/// Retitle the window, clear the screen, home the cursor, an 8-bit CSI, a clipboard write.
const HOSTILE: &str = "Sure.\x1b]2;pwned\x07\x1b[2J\x1b[H \u{9b}31mred\x1b]52;c;ZXZpbA==\x07 done";

#[test]
fn ask_shows_a_replys_escape_sequences_instead_of_obeying_them() {
    let dir = tempfile::tempdir().unwrap();
    let (_rt, double) = serve(vec![
        triage_reply("RESPOND", &[]),
        Reply::text(HOSTILE),
        triage_reply("RESPOND", &[]),
        Reply::text(HOSTILE),
    ]);
    configure(dir.path(), &double.base_url(), "");
    let out = chalie(dir.path(), &["ask", "--thread", "t", "What is the capital of France?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(live_controls(&out.stdout), Vec::<char>::new(), "{:?}", text(&out.stdout));
    assert!(text(&out.stdout).contains("Sure.␛]2;pwned␇␛[2J␛[H ␛[31mred"), "{:?}", text(&out.stdout));

    // The JSON report carries the reply unchanged, with no raw control byte on the wire.
    let out = chalie(dir.path(), &["ask", "--json", "--thread", "t", "And the capital of Spain?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(live_controls(&out.stdout), Vec::<char>::new(), "{:?}", text(&out.stdout));
    assert_eq!(json_lines(&out)[0]["response"], HOSTILE);
}
