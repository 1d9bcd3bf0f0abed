//! The `list` skill: named lists, fully deterministic (parameters §5: create, add, remove,
//! check, uncheck, view, list_all, clear, delete, rename, history).
//!
//! A list named in an `add` is created on the fly; an action that names no list uses the
//! most recently touched one, so "what's on my list?" works with one list in use. Lists and
//! items are named the way people say them ("the bread", "milk" for "oat milk", "groceries"
//! for "shopping"), resolved by [`super::list_match`]; a name that fits several asks which.

use super::list_match::{Found, find_item, find_list, find_same, is_determiner, which};
use crate::cognition::act::skill::{SkillContext, SkillError, SkillOutput, opt_str_param, str_param, strings_param};
use crate::store::now_ts;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Map, Value, json};

/// The list used when none is named and none exists yet.
pub const DEFAULT_LIST: &str = "todo";

/// What a `list` call asks for; the parameter `action` names one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListAction {
    Create,
    Add,
    Remove,
    Check,
    Uncheck,
    View,
    ListAll,
    Clear,
    Delete,
    Rename,
    History,
}

impl ListAction {
    const ALL: [(&'static str, ListAction); 11] = [
        ("create", ListAction::Create),
        ("add", ListAction::Add),
        ("remove", ListAction::Remove),
        ("check", ListAction::Check),
        ("uncheck", ListAction::Uncheck),
        ("view", ListAction::View),
        ("list_all", ListAction::ListAll),
        ("clear", ListAction::Clear),
        ("delete", ListAction::Delete),
        ("rename", ListAction::Rename),
        ("history", ListAction::History),
    ];

    fn parse(p: &Map<String, Value>) -> Result<ListAction, SkillError> {
        let said = opt_str_param(p, "action").unwrap_or("view").to_ascii_lowercase();
        Self::ALL.iter().find(|(name, _)| *name == said).map(|(_, a)| *a).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|(n, _)| *n).collect();
            SkillError::Param { name: "action", problem: format!("`{said}` is not one of {}", names.join(", ")) }
        })
    }

    fn as_str(self) -> &'static str {
        Self::ALL.iter().find(|(_, a)| *a == self).map_or("view", |(n, _)| n)
    }
}

/// The stored list a spoken name refers to.
enum Lookup {
    Found(i64, String),
    /// Several lists fit (their names): ask which.
    Several(Vec<String>),
    Missing,
}

pub fn run(c: &Connection, p: &Map<String, Value>, _ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let action = ListAction::parse(p)?;
    match action {
        ListAction::ListAll => return list_all(c),
        ListAction::Create => {
            let name = clean_name(str_param(p, "name")?);
            let id = ensure(c, &name)?;
            return Ok(SkillOutput::new(format!("List \"{name}\" is ready."), json!({"list": name, "id": id})));
        }
        _ => {}
    }
    let said = match opt_str_param(p, "name") {
        Some(n) => clean_name(n),
        None => latest(c)?.unwrap_or_else(|| DEFAULT_LIST.to_string()),
    };
    let items = strings_param(p, "items");
    if matches!(action, ListAction::Add | ListAction::Remove | ListAction::Check | ListAction::Uncheck) {
        require(&items, action)?;
    }
    // "groceries" finds the "shopping" list; an `add` to a name that fits none creates it.
    let (id, name) = match (lookup(c, &said)?, action) {
        (Lookup::Found(id, name), _) => (id, name),
        (Lookup::Several(names), _) => {
            let data = json!({"action": action.as_str(), "list": said, "lists": names});
            return Ok(SkillOutput::clarify(which("list", &names), names, data));
        }
        (Lookup::Missing, ListAction::Add) => (ensure(c, &said)?, said),
        (Lookup::Missing, _) => return Err(SkillError::NotFound(format!("there is no list named \"{said}\""))),
    };
    match action {
        ListAction::Add => add(c, id, &name, &items),
        ListAction::Remove | ListAction::Check | ListAction::Uncheck => change(c, id, &name, action, &items),
        ListAction::View => {
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
        ListAction::Clear => {
            let n = c.execute("DELETE FROM list_items WHERE list_id = ?1", params![id])?;
            history(c, id, "clear", "")?;
            touch(c, id)?;
            Ok(SkillOutput::new(format!("Cleared {name} ({n} items)."), json!({"list": name, "removed": n})))
        }
        ListAction::Delete => {
            c.execute("DELETE FROM lists WHERE id = ?1", params![id])?;
            Ok(SkillOutput::new(format!("Deleted the list {name}."), json!({"list": name, "deleted": true})))
        }
        ListAction::Rename => {
            let new_name = clean_name(str_param(p, "new_name")?);
            c.execute("UPDATE lists SET name = ?2, updated_at = ?3 WHERE id = ?1", params![id, new_name, now_ts()])?;
            history(c, id, "rename", &new_name)?;
            Ok(SkillOutput::new(format!("Renamed {name} to {new_name}."), json!({"list": new_name, "old": name})))
        }
        ListAction::History => {
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
        // Answered before a list was resolved.
        ListAction::ListAll | ListAction::Create => list_all(c),
    }
}

/// "my Shopping List" → "shopping": the bare name, lowercase.
pub fn clean_name(raw: &str) -> String {
    let mut words: Vec<&str> = raw.split_whitespace().collect();
    while words.first().is_some_and(|w| is_determiner(w)) {
        words.remove(0);
    }
    while words.len() > 1 && words.last().is_some_and(|w| w.eq_ignore_ascii_case("list")) {
        words.pop();
    }
    let name = words.join(" ").to_lowercase();
    if name.is_empty() || name == "list" { DEFAULT_LIST.to_string() } else { name }
}

fn require(items: &[String], action: ListAction) -> Result<(), SkillError> {
    if items.is_empty() {
        return Err(SkillError::Param {
            name: "items",
            problem: format!("`{}` needs at least one item", action.as_str()),
        });
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

fn lookup(c: &Connection, said: &str) -> Result<Lookup, SkillError> {
    let mut stmt = c.prepare_cached("SELECT id, name FROM lists ORDER BY id")?;
    let lists: Vec<(i64, String)> = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
    let names: Vec<&str> = lists.iter().map(|(_, n)| n.as_str()).collect();
    Ok(match find_list(said, &names) {
        Found::One(i) => Lookup::Found(lists[i].0, lists[i].1.clone()),
        Found::Several(is) => Lookup::Several(is.iter().map(|&i| lists[i].1.clone()).collect()),
        Found::Nothing => Lookup::Missing,
    })
}

/// The items of a list as (id, content), in the order they were added.
fn contents(c: &Connection, id: i64) -> Result<Vec<(i64, String)>, SkillError> {
    let mut stmt = c.prepare_cached("SELECT id, content FROM list_items WHERE list_id = ?1 ORDER BY id")?;
    Ok(stmt.query_map(params![id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?)
}

/// An item already there up to case, articles and number is not added twice.
fn add(c: &Connection, id: i64, name: &str, items: &[String]) -> Result<SkillOutput, SkillError> {
    let now = now_ts();
    let mut stored: Vec<String> = contents(c, id)?.into_iter().map(|(_, s)| s).collect();
    let mut added = Vec::new();
    let mut already = Vec::new();
    for item in items {
        let fresh = find_same(item, &stored) == Found::Nothing
            && c.execute(
                "INSERT INTO list_items (list_id, content, added_at, updated_at) VALUES (?1, ?2, ?3, ?3)
                 ON CONFLICT(list_id, content) DO NOTHING",
                params![id, item, now],
            )? == 1;
        if fresh {
            history(c, id, "add", item)?;
            added.push(item.clone());
            stored.push(item.clone());
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
    Ok(SkillOutput::new(summary, json!({"list": name, "added": added, "already": already, "items": view(c, id)?})))
}

/// Remove, check or uncheck the items the user named, each resolved by [`find_item`]. When
/// any of them fits several items nothing changes and the reply asks which was meant.
fn change(c: &Connection, id: i64, name: &str, action: ListAction, said: &[String]) -> Result<SkillOutput, SkillError> {
    let stored = contents(c, id)?;
    let texts: Vec<&str> = stored.iter().map(|(_, s)| s.as_str()).collect();
    let mut picked: Vec<&(i64, String)> = Vec::new();
    let mut missing = Vec::new();
    let mut unclear: Vec<(&String, Vec<String>)> = Vec::new();
    for item in said {
        match find_item(item, &texts) {
            Found::One(i) if !picked.contains(&&stored[i]) => picked.push(&stored[i]),
            Found::One(_) => {}
            Found::Several(is) => unclear.push((item, is.iter().map(|&i| stored[i].1.clone()).collect())),
            Found::Nothing => missing.push(item.clone()),
        }
    }
    if !unclear.is_empty() {
        let question = match unclear.as_slice() {
            [(_, candidates)] => which("one", candidates),
            _ => unclear.iter().map(|(item, cands)| which(&format!("\"{item}\""), cands)).collect::<Vec<_>>().join(" "),
        };
        let choices: Vec<String> = unclear.iter().flat_map(|(_, cands)| cands.iter().cloned()).collect();
        let data = json!({
            "action": action.as_str(),
            "list": name,
            "unclear": unclear.iter().map(|(item, cands)| json!({"item": item, "candidates": cands})).collect::<Vec<_>>(),
        });
        return Ok(SkillOutput::clarify(question, choices, data));
    }
    let now = now_ts();
    let mut done = Vec::new();
    for (item_id, content) in picked {
        match action {
            ListAction::Remove => c.execute("DELETE FROM list_items WHERE id = ?1", params![item_id])?,
            _ => c.execute(
                "UPDATE list_items SET checked = ?2, updated_at = ?3 WHERE id = ?1",
                params![item_id, action == ListAction::Check, now],
            )?,
        };
        history(c, id, action.as_str(), content)?;
        done.push(content.clone());
    }
    touch(c, id)?;
    let (verb, prep) = match action {
        ListAction::Remove => ("Removed", "from"),
        ListAction::Check => ("Checked off", "on"),
        _ => ("Unchecked", "on"),
    };
    let mut summary = if done.is_empty() { String::new() } else { format!("{verb} {} {prep} {name}.", join(&done)) };
    if !missing.is_empty() {
        summary = format!("{summary} Not on {name}: {}.", join(&missing)).trim().to_string();
    }
    Ok(SkillOutput::new(summary, json!({"list": name, "done": done, "missing": missing, "items": view(c, id)?})))
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
mod tests;
