//! The `list` skill: named lists, fully deterministic (parameters §5: create, add, remove,
//! check, uncheck, view, list_all, clear, delete, rename, history).
//!
//! A list named in an `add` is created on the fly; an action that names no list uses the
//! most recently touched one, so "what's on my list?" works with one list in use.

use crate::cognition::act::skill::{SkillContext, SkillError, SkillOutput, opt_str_param, str_param, strings_param};
use crate::store::now_ts;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Map, Value, json};

/// The list used when none is named and none exists yet.
pub const DEFAULT_LIST: &str = "todo";

pub fn run(c: &Connection, p: &Map<String, Value>, _ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let action = opt_str_param(p, "action").unwrap_or("view").to_ascii_lowercase();
    match action.as_str() {
        "list_all" => return list_all(c),
        "create" => {
            let name = clean_name(str_param(p, "name")?);
            let id = ensure(c, &name)?;
            return Ok(SkillOutput::new(format!("List \"{name}\" is ready."), json!({"list": name, "id": id})));
        }
        _ => {}
    }
    let name = match opt_str_param(p, "name") {
        Some(n) => clean_name(n),
        None => latest(c)?.unwrap_or_else(|| DEFAULT_LIST.to_string()),
    };
    let items = strings_param(p, "items");
    let now = now_ts();
    match action.as_str() {
        "add" => {
            require(&items, "add")?;
            let id = ensure(c, &name)?;
            let mut added = Vec::new();
            let mut already = Vec::new();
            for item in &items {
                let n = c.execute(
                    "INSERT INTO list_items (list_id, content, added_at, updated_at) VALUES (?1, ?2, ?3, ?3)
                     ON CONFLICT(list_id, content) DO NOTHING",
                    params![id, item, now],
                )?;
                if n == 1 {
                    history(c, id, "add", item)?;
                    added.push(item.clone());
                } else {
                    already.push(item.clone());
                }
            }
            touch(c, id)?;
            let mut summary = format!("Added {} to {name}.", join(&added));
            if added.is_empty() {
                summary = format!("{} already on {name}.", join(&already));
            } else if !already.is_empty() {
                summary.push_str(&format!(" Already there: {}.", join(&already)));
            }
            Ok(SkillOutput::new(
                summary,
                json!({"list": name, "added": added, "already": already, "items": view(c, id)?}),
            ))
        }
        "remove" | "check" | "uncheck" => {
            let id = existing(c, &name)?;
            require(&items, &action)?;
            let mut done = Vec::new();
            let mut missing = Vec::new();
            for item in &items {
                let n = match action.as_str() {
                    "remove" => c.execute(
                        "DELETE FROM list_items WHERE list_id = ?1 AND content = ?2 COLLATE NOCASE",
                        params![id, item],
                    )?,
                    other => c.execute(
                        "UPDATE list_items SET checked = ?3, updated_at = ?4 WHERE list_id = ?1 AND content = ?2 COLLATE NOCASE",
                        params![id, item, other == "check", now],
                    )?,
                };
                if n > 0 {
                    history(c, id, &action, item)?;
                    done.push(item.clone());
                } else {
                    missing.push(item.clone());
                }
            }
            touch(c, id)?;
            let (verb, prep) = match action.as_str() {
                "remove" => ("Removed", "from"),
                "check" => ("Checked off", "on"),
                _ => ("Unchecked", "on"),
            };
            let mut summary =
                if done.is_empty() { String::new() } else { format!("{verb} {} {prep} {name}.", join(&done)) };
            if !missing.is_empty() {
                summary = format!("{summary} Not on {name}: {}.", join(&missing)).trim().to_string();
            }
            Ok(SkillOutput::new(
                summary,
                json!({"list": name, "done": done, "missing": missing, "items": view(c, id)?}),
            ))
        }
        "view" => {
            let id = existing(c, &name)?;
            let items = view(c, id)?;
            let lines: Vec<String> = items
                .iter()
                .map(|i| {
                    format!(
                        "{} {}",
                        if i["checked"] == true { "[x]" } else { "[ ]" },
                        i["content"].as_str().unwrap_or("")
                    )
                })
                .collect();
            let summary = if lines.is_empty() {
                format!("{name} is empty.")
            } else {
                format!("{name} ({}): {}", lines.len(), lines.join("; "))
            };
            Ok(SkillOutput::new(summary, json!({"list": name, "items": items})))
        }
        "clear" => {
            let id = existing(c, &name)?;
            let n = c.execute("DELETE FROM list_items WHERE list_id = ?1", params![id])?;
            history(c, id, "clear", "")?;
            touch(c, id)?;
            Ok(SkillOutput::new(format!("Cleared {name} ({n} items)."), json!({"list": name, "removed": n})))
        }
        "delete" => {
            let id = existing(c, &name)?;
            c.execute("DELETE FROM lists WHERE id = ?1", params![id])?;
            Ok(SkillOutput::new(format!("Deleted the list {name}."), json!({"list": name, "deleted": true})))
        }
        "rename" => {
            let id = existing(c, &name)?;
            let new_name = clean_name(str_param(p, "new_name")?);
            c.execute("UPDATE lists SET name = ?2, updated_at = ?3 WHERE id = ?1", params![id, new_name, now])?;
            history(c, id, "rename", &new_name)?;
            Ok(SkillOutput::new(format!("Renamed {name} to {new_name}."), json!({"list": new_name, "old": name})))
        }
        "history" => {
            let id = existing(c, &name)?;
            let mut stmt = c.prepare_cached(
                "SELECT action, item, created_at FROM list_history WHERE list_id = ?1 ORDER BY id DESC LIMIT 20",
            )?;
            let rows: Vec<Value> = stmt
                .query_map(params![id], |r| {
                    Ok(json!({"action": r.get::<_, String>(0)?, "item": r.get::<_, Option<String>>(1)?, "at": r.get::<_, i64>(2)?}))
                })?
                .collect::<Result<_, _>>()?;
            let summary = format!("{} recent change(s) to {name}.", rows.len());
            Ok(SkillOutput::new(summary, json!({"list": name, "history": rows})))
        }
        other => Err(SkillError::Param {
            name: "action",
            problem: format!(
                "`{other}` is not one of create, add, remove, check, uncheck, view, list_all, clear, delete, rename, history"
            ),
        }),
    }
}

/// "my Shopping List" → "shopping": the bare name, lowercase.
pub fn clean_name(raw: &str) -> String {
    let mut words: Vec<&str> = raw.split_whitespace().collect();
    while words.first().is_some_and(|w| matches!(w.to_ascii_lowercase().as_str(), "my" | "the" | "a" | "our")) {
        words.remove(0);
    }
    while words.len() > 1 && words.last().is_some_and(|w| w.eq_ignore_ascii_case("list")) {
        words.pop();
    }
    let name = words.join(" ").to_lowercase();
    if name.is_empty() || name == "list" { DEFAULT_LIST.to_string() } else { name }
}

fn require(items: &[String], action: &str) -> Result<(), SkillError> {
    if items.is_empty() {
        return Err(SkillError::Param { name: "items", problem: format!("`{action}` needs at least one item") });
    }
    Ok(())
}

fn ensure(c: &Connection, name: &str) -> Result<i64, SkillError> {
    let now = now_ts();
    c.execute(
        "INSERT INTO lists (name, created_at, updated_at) VALUES (?1, ?2, ?2) ON CONFLICT(name) DO NOTHING",
        params![name, now],
    )?;
    Ok(c.query_row("SELECT id FROM lists WHERE name = ?1", params![name], |r| r.get(0))?)
}

fn existing(c: &Connection, name: &str) -> Result<i64, SkillError> {
    c.query_row("SELECT id FROM lists WHERE name = ?1", params![name], |r| r.get(0))
        .optional()?
        .ok_or_else(|| SkillError::NotFound(format!("there is no list named \"{name}\"")))
}

fn latest(c: &Connection) -> Result<Option<String>, SkillError> {
    Ok(c.query_row("SELECT name FROM lists ORDER BY updated_at DESC, id DESC LIMIT 1", [], |r| r.get(0)).optional()?)
}

fn touch(c: &Connection, id: i64) -> Result<(), SkillError> {
    c.execute("UPDATE lists SET updated_at = ?2 WHERE id = ?1", params![id, now_ts()])?;
    Ok(())
}

fn history(c: &Connection, id: i64, action: &str, item: &str) -> Result<(), SkillError> {
    c.execute(
        "INSERT INTO list_history (list_id, action, item, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![id, action, item, now_ts()],
    )?;
    Ok(())
}

fn view(c: &Connection, id: i64) -> Result<Vec<Value>, SkillError> {
    let mut stmt = c.prepare_cached("SELECT content, checked FROM list_items WHERE list_id = ?1 ORDER BY id")?;
    let rows = stmt
        .query_map(params![id], |r| Ok(json!({"content": r.get::<_, String>(0)?, "checked": r.get::<_, bool>(1)?})))?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

fn list_all(c: &Connection) -> Result<SkillOutput, SkillError> {
    let mut stmt = c.prepare_cached(
        "SELECT l.name, COUNT(i.id) FROM lists l LEFT JOIN list_items i ON i.list_id = l.id
         GROUP BY l.id ORDER BY l.updated_at DESC",
    )?;
    let rows: Vec<(String, i64)> = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
    let summary = if rows.is_empty() {
        "No lists yet.".to_string()
    } else {
        rows.iter().map(|(n, k)| format!("{n} ({k})")).collect::<Vec<_>>().join(", ")
    };
    Ok(SkillOutput::new(
        summary,
        json!({"lists": rows.iter().map(|(n, k)| json!({"name": n, "items": k})).collect::<Vec<_>>()}),
    ))
}

/// "eggs, milk and bread" for summaries.
fn join(items: &[String]) -> String {
    match items {
        [] => "nothing".into(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Local;

    fn ctx() -> SkillContext {
        SkillContext { thread_id: "t".into(), exchange_id: "x".into(), topic: "t".into(), now: Local::now() }
    }

    fn call(c: &Connection, v: Value) -> Result<SkillOutput, SkillError> {
        run(c, v.as_object().unwrap(), &ctx())
    }

    #[test]
    fn add_view_remove_check_and_history() {
        let c = crate::store::open_in_memory().unwrap();
        let out = call(&c, json!({"action": "add", "name": "my Shopping list", "items": ["eggs", "milk"]})).unwrap();
        assert_eq!(out.summary, "Added eggs and milk to shopping.");
        let out = call(&c, json!({"action": "add", "items": ["Milk", "bread"]})).unwrap();
        assert_eq!(out.data["added"], json!(["bread"]), "case-insensitive duplicate, default = latest list");
        assert_eq!(out.data["already"], json!(["Milk"]));
        let out = call(&c, json!({"action": "remove", "name": "shopping", "items": ["EGGS", "caviar"]})).unwrap();
        assert_eq!(out.data["done"], json!(["EGGS"]));
        assert_eq!(out.data["missing"], json!(["caviar"]));
        call(&c, json!({"action": "check", "items": ["bread"]})).unwrap();
        let out = call(&c, json!({"action": "view"})).unwrap();
        assert_eq!(out.summary, "shopping (2): [ ] milk; [x] bread");
        let out = call(&c, json!({"action": "history", "name": "shopping"})).unwrap();
        assert_eq!(out.data["history"].as_array().unwrap().len(), 5);
    }

    #[test]
    fn edge_cases() {
        let c = crate::store::open_in_memory().unwrap();
        assert!(matches!(call(&c, json!({"action": "view"})), Err(SkillError::NotFound(_))));
        assert!(matches!(call(&c, json!({"action": "add", "items": []})), Err(SkillError::Param { .. })));
        assert!(matches!(call(&c, json!({"action": "fly"})), Err(SkillError::Param { name: "action", .. })));
        call(&c, json!({"action": "create", "name": "books"})).unwrap();
        assert_eq!(call(&c, json!({"action": "view", "name": "books"})).unwrap().summary, "books is empty.");
        call(&c, json!({"action": "rename", "name": "books", "new_name": "reading list"})).unwrap();
        assert_eq!(call(&c, json!({"action": "list_all"})).unwrap().summary, "reading (0)");
        call(&c, json!({"action": "delete", "name": "reading"})).unwrap();
        assert_eq!(call(&c, json!({"action": "list_all"})).unwrap().summary, "No lists yet.");
    }

    #[test]
    fn names_are_cleaned() {
        assert_eq!(clean_name("my Shopping List"), "shopping");
        assert_eq!(clean_name("the list"), DEFAULT_LIST);
        assert_eq!(clean_name("Packing"), "packing");
    }
}
