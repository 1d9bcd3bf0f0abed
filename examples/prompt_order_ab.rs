//! A small A/B of where the turn's sections go in the reply prompt, on the built-in model
//! (session 21 moved them after the message so the message could be decoded while it was
//! typed; session 22 put them back before it, as their own system message: `split` below).
//! Each case is a message whose good reply uses one line of the sections (an allergy, a name,
//! a fact of the conversation); the same request is generated greedily in two layouts:
//! - `after` (session 21's layout): persona, turns, mode prompt, message, sections;
//! - `before` (the layout before session 21): persona, turns, mode prompt and sections as one
//!   system message, message;
//! - `split` (the layout in use): persona, turns, mode prompt, sections as a system message of
//!   their own, message.
//!
//! A reply counts as using the sections when it names the case's word. Greedy, so a rerun
//! gives the same replies. `cargo run --release --example prompt_order_ab` (needs the built-in
//! models: `CHALIE_MODELS_DIR`).

use chalie::cognition::pipeline::prompts::{GenerationInput, generation_request};
use chalie::cognition::router::Mode;
use chalie::llm::local::{CHAT_MODEL, LocalChat};
use chalie::llm::{ChatRequest, ChatRole};
use chalie::store::{TopicContext, TraitRow, WmEntry};
use tokio_util::sync::CancellationToken;

struct Case {
    traits: &'static [(&'static str, &'static str)],
    facts: &'static [(&'static str, &'static str)],
    message: &'static str,
    /// Any of these in the reply (lowercase) counts as using the sections.
    uses: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        traits: &[("allergy", "peanuts")],
        facts: &[],
        message: "Can you suggest a snack for my hike tomorrow?",
        uses: &["peanut", "allerg"],
    },
    Case {
        traits: &[("name", "Ada")],
        facts: &[],
        message: "Write a one-line good-morning note for me to put on my fridge.",
        uses: &["ada"],
    },
    Case {
        traits: &[("diet", "vegetarian")],
        facts: &[],
        message: "What should I cook for dinner tonight?",
        uses: &["vegetarian", "vegetable", "tofu", "lentil", "bean"],
    },
    Case {
        traits: &[],
        facts: &[("destination", "Lisbon"), ("month", "October")],
        message: "What clothes should I pack for the trip?",
        uses: &["lisbon", "october", "autumn", "fall"],
    },
    Case {
        traits: &[],
        facts: &[("sister", "does not eat meat, loves fish")],
        message: "Where should my sister and I eat on our first night?",
        uses: &["fish", "seafood", "meat", "vegetarian"],
    },
    Case {
        traits: &[("city", "Oslo")],
        facts: &[],
        message: "Is it a good weekend for a picnic where I live?",
        uses: &["oslo", "norway"],
    },
    Case {
        traits: &[("pet", "a dog called Max")],
        facts: &[],
        message: "Any ideas for a rainy Sunday at home?",
        uses: &["max", "dog"],
    },
    Case {
        traits: &[],
        facts: &[("budget", "thirty euros a day")],
        message: "Can we afford a nice dinner out on the trip?",
        uses: &["thirty", "30", "budget"],
    },
    Case {
        traits: &[("job", "nurse on night shifts")],
        facts: &[],
        message: "How can I sleep better this week?",
        uses: &["night", "shift", "nurse"],
    },
    Case {
        traits: &[("language", "learning Portuguese")],
        facts: &[],
        message: "What could I practise on the flight?",
        uses: &["portugu"],
    },
];

/// Whether `r` (the layout in use) has a sections message: the system message before the
/// message, after the mode's (the persona, at 0, is never the mode's prompt).
fn has_sections(r: &ChatRequest) -> bool {
    let n = r.messages.len();
    n >= 4 && r.messages[n - 2].role == ChatRole::System && r.messages[n - 3].role == ChatRole::System
}

/// The layout before session 21: the sections join the mode's prompt before the message.
fn before(split: &ChatRequest) -> ChatRequest {
    let mut r = split.clone();
    if has_sections(&r) {
        let n = r.messages.len();
        let sections = r.messages.remove(n - 2).content;
        let mode = &mut r.messages[n - 3];
        mode.content = format!("{}\n\n{sections}", mode.content);
    }
    r
}

/// Session 21's layout: the sections after the message.
fn after(split: &ChatRequest) -> ChatRequest {
    let mut r = split.clone();
    if has_sections(&r) {
        let n = r.messages.len();
        let sections = r.messages.remove(n - 2);
        r.messages.push(sections);
    }
    r
}

fn main() -> anyhow::Result<()> {
    let dir =
        std::env::var_os("CHALIE_MODELS_DIR").map(std::path::PathBuf::from).unwrap_or_else(|| "target/models".into());
    let chat = LocalChat::load(&dir.join(CHAT_MODEL).join("SmolLM2-135M-Instruct.Q4_1.gguf"))?;
    let rt = tokio::runtime::Runtime::new()?;
    let history = vec![
        WmEntry { role: "user".into(), content: "Hi, I have a few questions this week.".into(), created_at: 1 },
        WmEntry { role: "assistant".into(), content: "Of course, ask away.".into(), created_at: 2 },
    ];
    let (mut used_after, mut used_before, mut used_split) = (0, 0, 0);
    for (i, case) in CASES.iter().enumerate() {
        let traits: Vec<TraitRow> = case
            .traits
            .iter()
            .map(|(k, v)| TraitRow {
                key: k.to_string(),
                value: v.to_string(),
                category: "general".into(),
                confidence: 1.0,
                reliability: "reliable".into(),
                until: None,
            })
            .collect();
        let topic = TopicContext {
            facts: case.facts.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            ..Default::default()
        };
        let input = GenerationInput {
            mode: Mode::Respond,
            user_text: case.message,
            working_memory: &history,
            traits: &traits,
            topic: &topic,
            memories: &[],
            prompt_tokens: case.message.split_whitespace().count(),
            notes: &[],
            style: &[],
        };
        let mut split = generation_request(&input);
        split.temperature = 0.0;
        split.max_tokens = 96;
        let reply = |r: &ChatRequest| -> anyhow::Result<String> {
            Ok(rt.block_on(chat.generate(r, &mut |_| {}, &CancellationToken::new()))?.text)
        };
        let (a, b, c) = (reply(&after(&split))?, reply(&before(&split))?, reply(&split)?);
        let uses = |t: &str| case.uses.iter().any(|w| t.to_lowercase().contains(w));
        used_after += usize::from(uses(&a));
        used_before += usize::from(uses(&b));
        used_split += usize::from(uses(&c));
        println!("case {i}: {:?}", case.message);
        println!("  after  [{}]: {}", if uses(&a) { "uses" } else { "----" }, a.replace('\n', " "));
        println!("  before [{}]: {}", if uses(&b) { "uses" } else { "----" }, b.replace('\n', " "));
        println!("  split  [{}]: {}", if uses(&c) { "uses" } else { "----" }, c.replace('\n', " "));
    }
    println!(
        "sections used: after the message {used_after}/{n}, before it {used_before}/{n}, before it apart {used_split}/{n}",
        n = CASES.len()
    );
    Ok(())
}
