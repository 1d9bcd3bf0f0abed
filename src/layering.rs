//! The layering rule, checked: each top-level module may import only modules of a lower
//! layer, so the module graph has no cycle and the lower layers (store, config, llm) never
//! reach up into cognition, memory or the TUI. The rooms and the reasons for this order are
//! in docs/architecture.md; a new top-level module must be given a layer here.
//!
//! Run it alone with `cargo nextest run -E 'test(layering)'`. It reads the `crate::` paths in
//! every file under src/ (comments skipped), test code included: a test that needs a higher
//! layer belongs to that layer or to tests/.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lowest first. A module may import modules of a strictly lower layer only; layer 0 are
/// leaves, which import nothing from the crate.
const LAYERS: &[(&str, u8)] = &[
    // Leaves: the shared vocabulary, text utilities, the natural-time parser, private files.
    ("vocab", 0),
    ("text", 0),
    ("when", 0),
    ("files", 0),
    ("layering", 0),
    // Logging set-up writes its private file through `files` and masks secrets with `text`.
    ("logging", 1),
    ("config", 1),
    ("store", 2),
    // What the engine did, and the bus that carries it.
    ("events", 3),
    ("llm", 4),
    // MCP servers' tools, for ACT: configuration in, typed errors out.
    ("mcp", 4),
    // The session log (reads and writes events) and the background-work machinery.
    ("session", 5),
    ("background", 5),
    ("memory", 6),
    ("cognition", 7),
    ("runtime", 8),
    ("tui", 9),
    // The command-line front-end: argument types, then one module per subcommand (the default
    // one runs the TUI).
    ("cli", 10),
    ("commands", 11),
];

/// The top-level module a file under src/ belongs to (`None` for lib.rs and main.rs).
fn top_module(rel: &Path) -> Option<String> {
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib" && name != "main").then(|| name.to_string())
}

/// The code of a Rust file without `//` comments (doc comments included) and string literals,
/// so prose and messages that mention `crate::x` do not count as imports.
fn code_only(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                let mut escaped = false;
                for inner in chars.by_ref() {
                    match inner {
                        '\\' if !escaped => escaped = true,
                        '"' if !escaped => break,
                        _ => escaped = false,
                    }
                }
            }
            // A char literal of a quote ('"' or '\"') must not open a string.
            '\'' if matches!(chars.peek(), Some('"') | Some('\\')) => {
                out.push(c);
                while let Some(inner) = chars.next() {
                    if inner == '\'' {
                        break;
                    }
                    if inner == '\\' {
                        chars.next();
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// Every top-level module named after `crate::` in `code`, including the heads of a grouped
/// import (`use crate::{a::X, b::{Y, Z}}` names `a` and `b`).
fn crate_targets(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::` or `mycrate::`
        }
        let tail = rest.trim_start();
        if let Some(group) = tail.strip_prefix('{') {
            // Heads of the group: identifiers at depth 0 right after the `{` or a `,`.
            let mut depth = 0usize;
            let mut expect_head = true;
            let mut i = 0;
            let bytes = group.as_bytes();
            while i < bytes.len() {
                let c = bytes[i] as char;
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => expect_head = true,
                    c if expect_head && (c.is_alphabetic() || c == '_') => {
                        found.insert(ident(&group[i..]));
                        expect_head = false;
                    }
                    _ => {}
                }
                i += 1;
            }
        } else {
            found.insert(ident(tail));
        }
    }
    found
}

/// Every `.rs` file under `dir` (also the SQL-boundary test's walk).
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// module → (imported module → the files that import it).
fn import_graph(src: &Path) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for path in files {
        let rel = path.strip_prefix(src).unwrap_or(&path).to_path_buf();
        let Some(from) = top_module(&rel) else { continue };
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let node = graph.entry(from.clone()).or_default();
        for to in crate_targets(&code_only(&text)) {
            if to != from {
                node.entry(to).or_default().insert(rel.display().to_string());
            }
        }
    }
    graph
}

#[test]
fn layering_every_import_points_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = import_graph(&src);
    let layer: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    let mut problems = Vec::new();
    for (from, targets) in &graph {
        let Some(&lf) = layer.get(from.as_str()) else {
            problems.push(format!("src/{from} has no layer: add it to LAYERS in src/layering.rs"));
            continue;
        };
        for (to, files) in targets {
            // Macros exported at the crate root (`crate::describe!`) are not modules.
            let Some(&lt) = layer.get(to.as_str()) else { continue };
            if lt >= lf {
                let files: Vec<&str> = files.iter().map(String::as_str).collect();
                problems.push(format!("{from} (layer {lf}) imports {to} (layer {lt}) in {}", files.join(", ")));
            }
        }
    }
    assert!(problems.is_empty(), "imports that point up or sideways:\n  {}", problems.join("\n  "));
}

#[test]
fn layering_reader_finds_grouped_and_inline_paths_but_not_comments() {
    let code = code_only(
        "use crate::{store::Db, cognition::{router::Mode, topic}};\n\
         // use crate::tui::App;\n\
         let x = crate::memory::recall(\"crate::session\");\n\
         macro_rules! m { () => { $crate::events::EventBus::new() } }\n",
    );
    let found: Vec<String> = crate_targets(&code).into_iter().collect();
    assert_eq!(found, ["cognition", "memory", "store"]);
}
