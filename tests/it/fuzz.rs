//! Property-based fuzzing of everything that reads text a user, a model or a file supplies
//! (issue 23, item 4): the config parser, the session-log reader, JSON extraction with the
//! schema validator and the plan parser, the natural-time parser, Markdown rendering and the
//! message box. The property is the same for each: any input returns (an error is fine),
//! without a panic and within the watchdog's bound. See [`crate::support::fuzz`] for the
//! driver and how to run the long form.

use crate::support::fuzz::Fuzz;
use chalie::cognition::act::plan::{parse_plan, plan_schema};
use chalie::config::Config;
use chalie::llm::schema::{extract_json, validate};
use chalie::tui::input::Input;
use chalie::tui::keymap::Command;
use chalie::tui::markdown::{Doc, render};
use chrono::{Local, TimeZone};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use std::path::Path;

fn lines_of(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

#[test]
fn fuzz_config_parser() {
    let seeds = vec![
        chalie::config::DEFAULT_CONFIG.to_string(),
        "[providers.ollama]\nkind = \"openai\"\nbase_url = \"http://localhost:11434/v1\"\napi_key_env = \"K\"\n\
         [models]\nprimary = \"ollama/qwen3:8b\"\nembedding = \"local/all-minilm-l6-v2\"\n[llm]\ntriage = \"llm\"\n\
         request_timeout_ms = 30000\nmax_retries = 2\n[keys]\nquit = [\"ctrl+c\", \"ctrl+q\"]\n\
         [router.weights.respond]\nquestion = 0.4\n"
            .to_string(),
    ];
    let dict = vec![
        "[providers.",
        "[models]",
        "[llm]",
        "[keys]",
        "[router.weights.",
        "kind = ",
        "\"openai\"",
        "\"local\"",
        "base_url",
        "api_key_env",
        "primary",
        "lightweight",
        "strong",
        "embedding",
        "triage",
        "= [",
        "= {",
        "\"\"\"",
        "'''",
        "[[",
        "]]",
        "a.b.c",
        "= true",
        "= 1979-05-27T07:32:00Z",
        "= inf",
        "= 0x7f",
        "sk-",
        "ctrl+",
        "alt+",
    ];
    Fuzz { name: "config", seeds, dict, max_len: 8 << 10 }.run(|text, _| {
        let config = Config::from_user_toml(Path::new("fuzz.toml"), text)
            .and_then(|c| c.checked(chalie::commands::CONFIG_CHECKS));
        if let Err(e) = config {
            let _ = e.to_string();
        }
    });
}

#[test]
fn fuzz_session_log_reader() {
    let sample = include_str!("../data/replay_session.jsonl");
    let lines = lines_of(sample);
    // Short logs: the header and a few events, so edits land near the structure.
    let mut seeds: Vec<String> = (1..lines.len())
        .step_by(7)
        .map(|i| format!("{}\n{}\n", lines[0], lines[i..(i + 5).min(lines.len())].join("\n")))
        .collect();
    seeds.push(sample.to_string());
    let dict = vec![
        "{\"type\":\"",
        "\"ts\":\"2026-11-21T08:55:42Z\"",
        "\"schema\":",
        "\"session_header\"",
        "\"user_message\"",
        "\"reply_done\"",
        "\"routed\"",
        "null",
        "[]",
        "{}",
        "\"text\":",
        ":-1",
        ":1e400",
        "\n{",
        "}\n",
    ];
    Fuzz { name: "session-log", seeds, dict, max_len: 64 << 10 }.run(|text, _| {
        if let Ok(log) = chalie::session::parse_log(text) {
            let _ = chalie::session::recorded_turns(&log);
        }
    });
}

#[test]
fn fuzz_json_extraction_schema_and_plan() {
    let seeds = vec![
        r#"{"actions":[{"skill":"recall","params":{"query":"tea"}},{"skill":"schedule","when":"tomorrow at 9"}]}"#.into(),
        "Sure! Here is the plan:\n```json\n{\"actions\": [{\"skill\": \"list\", \"params\": {\"op\": \"add\"}}]}\n```\nDone.".into(),
        r#"{"branch":"respond","mode":"RESPOND","tools":[],"skills":[],"confidence_internal":0.8,"effort_estimate":"light"}"#.into(),
        "<think>hmm {not json}</think> {\"a\": [1, 2, {\"b\": null}]} trailing }".into(),
    ];
    let dict = vec![
        "{",
        "}",
        "[",
        "]",
        "\"actions\"",
        "\"skill\"",
        "\"params\"",
        ":",
        ",",
        "null",
        "true",
        "1e999",
        "\"\\u0000\"",
        "\"\\ud800\"",
        "```json\n",
        "```",
        "[[[[[[[[[[[[[[[[",
        "{\"a\":{\"a\":{\"a\":",
    ];
    let schemas = [
        plan_schema(),
        chalie::cognition::intent::triage_schema(),
        chalie::cognition::router::tiebreak_schema(),
        chalie::memory::semantic::extraction_schema(),
    ];
    let allowed: Vec<String> =
        ["recall", "memorize", "list", "schedule", "introspect", "associate", "focus", "autobiography"]
            .map(String::from)
            .to_vec();
    Fuzz { name: "json-plan", seeds, dict, max_len: 16 << 10 }.run(|text, rng| {
        if let Ok(v) = extract_json(text) {
            let _ = validate(&v, rng.pick(&schemas));
            // A hostile value read as a schema: the validator may refuse, never fall over.
            let _ = validate(&v, &v);
            let _ = parse_plan(&v, &allowed);
        }
    });
}

#[test]
fn fuzz_natural_time_parser() {
    let seeds: Vec<String> = [
        "remind me tomorrow at 9 to call mum",
        "every Sunday evening water the plants",
        "in 2 hours",
        "next friday at 17:30",
        "on the 3rd of march at noon",
        "every 15 minutes",
        "at 25:99",
        "in 99999999999 days",
    ]
    .map(String::from)
    .to_vec();
    let dict = vec![
        "tomorrow",
        "today",
        "tonight",
        "next",
        "every",
        "in ",
        " at ",
        "am",
        "pm",
        "noon",
        "midnight",
        "monday",
        "sunday",
        "week",
        "month",
        "year",
        "minutes",
        "hours",
        "days",
        "2nd",
        "31st",
        "february 29",
        "12:00",
        "0:60",
        "99999999999999",
        "-5",
        "half past",
        "quarter to",
    ];
    Fuzz { name: "when", seeds, dict, max_len: 512 }.run(|text, rng| {
        // Any moment from 1970 to 2100, DST changes included.
        let secs = (rng.u64() % 4_102_444_800) as i64;
        let Some(now) = Local.timestamp_opt(secs, 0).single() else { return };
        if let Some(w) = chalie::when::parse_when(text, now) {
            let _ = chalie::when::humanize(w.due, now.naive_local());
            let _ = chalie::when::to_unix(w.due);
            if let Some(r) = &w.recurrence {
                let _ = r.advance(w.due);
                let _ = chalie::when::Recurrence::parse(&r.as_str());
            }
        }
        let _ = chalie::when::split_reminder(text, now);
        let _ = chalie::when::split_when(text, now);
        let _ = chalie::when::Recurrence::parse(text);
        let _ = chalie::when::parse_iso(text);
    });
}

#[test]
fn fuzz_markdown_rendering() {
    let seeds = vec![
        "# Title\n\nSome *emphasis* and **bold** and `code`.\n\n- one\n- two\n  1. nested\n\n> quoted\n\n```rust\nfn main() {}\n```\n\n| a | bb |\n|---|----|\n| 1 | 2 |\n\n---\n".to_string(),
        "1. first\n2. second\n   - [x] done\n   - [ ] todo\n\n~~gone~~ [link](http://x) ![img](y)\n".to_string(),
    ];
    let dict = vec![
        "**",
        "*",
        "_",
        "~~",
        "`",
        "```",
        "```rust\n",
        "~~~",
        "> ",
        "- ",
        "1. ",
        "| ",
        "|---|",
        "\n\n",
        "    ",
        "#",
        "<b>",
        "&amp;",
        "[x]",
        "\\",
        "***",
        "- [ ] ",
    ];
    Fuzz { name: "markdown", seeds, dict, max_len: 16 << 10 }.run(|text, rng| {
        let _ = render(text);
        let mut doc = Doc::new("", rng.chance(0.2));
        // Streamed in random chunks, prepared at random widths as it grows.
        let mut rest = text;
        while !rest.is_empty() {
            let mut cut = (1 + rng.below(64)).min(rest.len());
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            doc.push_str(&rest[..cut]);
            rest = &rest[cut..];
            let h = doc.prepare(rng.below(130) as u16);
            doc.rows(rng.below(h + 1), rng.below(40), &mut |_| {});
        }
        let h = doc.prepare(rng.below(130) as u16);
        doc.rows(0, h, &mut |_| {});
    });
}

const EDITING: &[Command] = &[
    Command::Send,
    Command::NewLine,
    Command::HistoryPrev,
    Command::HistoryNext,
    Command::Left,
    Command::Right,
    Command::WordLeft,
    Command::WordRight,
    Command::LineStart,
    Command::LineEnd,
    Command::DeleteBack,
    Command::DeleteForward,
    Command::DeleteWord,
    Command::ClearInput,
    Command::Up,
    Command::Down,
];

#[test]
fn fuzz_input_box() {
    let seeds = vec!["hello world".to_string(), "line one\nline two\n\n  indented 日本語 👍🏽".to_string()];
    let mut terminal = Terminal::new(TestBackend::new(60, 12)).unwrap();
    Fuzz { name: "input-box", seeds, dict: vec!["\u{1}", "\u{1b}[A", "\r"], max_len: 4 << 10 }.run(|text, rng| {
        let mut input = Input::default();
        // The text arrives as typed pieces and pastes, mixed with editing commands.
        let mut rest = text;
        for _ in 0..64 {
            if rng.chance(0.4) && !rest.is_empty() {
                let mut cut = (1 + rng.below(32)).min(rest.len());
                while !rest.is_char_boundary(cut) {
                    cut += 1;
                }
                input.insert(&rest[..cut]);
                rest = &rest[cut..];
            } else {
                let _ = input.handle(*rng.pick(EDITING));
            }
            let rows = input.prepare(rng.below(80) as u16, rng.below(12) as u16);
            if rng.chance(0.1) {
                let area = Rect::new(0, 0, 60, rows.clamp(1, 12));
                let _ = terminal.draw(|f| input.render(f, area, true, "hint"));
            }
        }
        assert!(!input.text().contains(|c: char| c.is_control() && c != '\n' && c != '\t'));
    });
}

#[test]
fn a_one_megabyte_paste_fills_the_box_and_renders() {
    let line = "2026-11-24 12:00:01 ERROR worker 7: \x1b[31mconnection reset\x1b[0m by peer\r\n";
    let paste = line.repeat((1 << 20) / line.len() + 1);
    let mut input = Input::default();
    input.insert(&paste);
    assert_eq!(input.text().lines().count(), paste.lines().count());
    assert!(!input.text().contains(['\x1b', '\r']));
    let rows = input.prepare(58, 10);
    assert_eq!(rows, 10);
    let mut terminal = Terminal::new(TestBackend::new(60, 12)).unwrap();
    terminal.draw(|f| input.render(f, Rect::new(0, 0, 60, 12), true, "hint")).unwrap();
    assert_eq!(input.handle(Command::Send).map(|t| t.len()), Some(input_len(&paste)));

    let mut doc = Doc::new(&paste, false);
    let h = doc.prepare(80);
    assert!(h >= paste.lines().count(), "{h}");
    let mut shown = 0;
    doc.rows(h - 5, 5, &mut |l| shown += usize::from(l.spans.iter().all(|s| !s.content.contains('\x1b'))));
    assert_eq!(shown, 5);
}

/// The length of `paste` as the box keeps it: escapes and carriage returns gone, trimmed.
fn input_len(paste: &str) -> usize {
    paste.replace("\r\n", "\n").chars().filter(|c| *c == '\n' || !c.is_control()).collect::<String>().trim().len()
}
