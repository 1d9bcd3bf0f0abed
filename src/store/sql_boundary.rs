//! SQL lives in the store: a test that reads every `.rs` file under `src/` and fails, naming
//! file and line, for any SQL statement outside `src/store/`. Comment lines are skipped (prose
//! may name a statement); string contents are not, which is where statements are.

use std::path::Path;

/// Whether `line` holds the start of a SQL statement.
fn has_statement(line: &str) -> bool {
    const OPENERS: [&str; 5] = ["SELECT ", "INSERT INTO ", "INSERT OR ", "DELETE FROM ", "REPLACE INTO "];
    if OPENERS.iter().any(|o| line.contains(o)) {
        return true;
    }
    // `UPDATE <table> SET`
    line.match_indices("UPDATE ").any(|(i, m)| {
        let rest = &line[i + m.len()..];
        let table_len = rest.bytes().take_while(|b| b.is_ascii_lowercase() || *b == b'_').count();
        table_len > 0 && rest[table_len..].starts_with(" SET ")
    })
}

/// `file:line: text` of every statement outside the store.
fn violations(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    crate::layering::rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut found = Vec::new();
    for path in files {
        let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        if rel.starts_with("src/store/") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if !code.starts_with("//") && has_statement(code) {
                found.push(format!("{rel}:{}: {}", n + 1, code));
            }
        }
    }
    found
}

#[test]
fn sql_statements_live_only_in_the_store() {
    let found = violations(Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(found.is_empty(), "SQL outside src/store/ (add a repository method instead):\n{}", found.join("\n"));
}

#[test]
fn statement_lines_are_told_from_prose() {
    assert!(has_statement(r#"c.execute("DELETE FROM gists WHERE id = ?1", [id])"#));
    assert!(has_statement(r#""UPDATE user_traits SET confidence = ?2 WHERE id = ?1""#));
    assert!(has_statement("\"SELECT id FROM episodes"));
    assert!(!has_statement("the UPDATE of a row sets it"));
    assert!(!has_statement("UPDATE Gists SET"), "SQL table names are lower case");
}
