//! The `list` skill: named lists, fully deterministic (docs/cognition.md §7.4: create, add, remove,
//! check, uncheck, view, list_all, clear, delete, rename, history).
//!
//! A list named in an `add` is created on the fly; an action that names no list uses the
//! most recently touched one, so "what's on my list?" works with one list in use. Lists and
//! items are named the way people say them ("the bread", "milk" for "oat milk", "groceries"
//! for "shopping"), resolved by [`super::list_match`]; a name that fits several asks which.

use super::list_match::{Found, find_item, find_list, find_same, is_determiner, which};
use crate::cognition::act::skill::{SkillContext, SkillError, SkillOutput, opt_str_param, str_param, strings_param};
use crate::store::{ListChange, ListEntry, ListsRepo};
use rusqlite::Connection;
use serde_json::{Map, Value, json};

/// The list used when none is named and none exists yet.
pub const DEFAULT_LIST: &str = "todo";

/// The words the `action` parameter may say, as the planner prompt offers them.
pub const ACTIONS: [&str; 11] =
    ["create", "add", "remove", "check", "uncheck", "view", "list_all", "clear", "delete", "rename", "history"];

/// Changes shown by `history`.
const HISTORY_SHOWN: usize = 20;

/// A `list` call, parsed once from the model's parameters: each action with exactly the
/// parameters it uses, so no branch below reads the raw map or compares action strings.
///
/// Parsed by hand rather than by a serde-tagged enum: the planner's JSON follows the lenient
/// conventions every skill shares (`action` in any case and `view` when missing, blank strings
/// as absent, `items` as one string or an array), which a derived tag would reject.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ListRequest {
    ListAll,
    Create {
        name: String,
    },
    /// The rest act on one list: the name the user said, or `None` for the latest one.
    On {
        list: Option<String>,
        op: ListOp,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum ListOp {
    /// An `add` to a name that fits no list creates it.
    Add(Vec<String>),
    Mark(Mark, Vec<String>),
    View,
    Clear,
    Delete,
    Rename(String),
    History,
}

/// A change to items already on a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    Remove,
    Check,
    Uncheck,
}

impl Mark {
    fn as_str(self) -> &'static str {
        match self {
            Mark::Remove => "remove",
            Mark::Check => "check",
            Mark::Uncheck => "uncheck",
        }
    }
}

impl ListOp {
    fn as_str(&self) -> &'static str {
        match self {
            ListOp::Add(_) => "add",
            ListOp::Mark(m, _) => m.as_str(),
            ListOp::View => "view",
            ListOp::Clear => "clear",
            ListOp::Delete => "delete",
            ListOp::Rename(_) => "rename",
            ListOp::History => "history",
        }
    }
}

impl ListRequest {
    fn parse(p: &Map<String, Value>) -> Result<ListRequest, SkillError> {
        let said = opt_str_param(p, "action").unwrap_or("view").to_ascii_lowercase();
        let items = || -> Result<Vec<String>, SkillError> {
            let items = strings_param(p, "items");
            if items.is_empty() {
                return Err(SkillError::Param { name: "items", problem: format!("`{said}` needs at least one item") });
            }
            Ok(items)
        };
        let op = match said.as_str() {
            "list_all" => return Ok(ListRequest::ListAll),
            "create" => return Ok(ListRequest::Create { name: clean_name(str_param(p, "name")?) }),
            "add" => ListOp::Add(items()?),
            "remove" => ListOp::Mark(Mark::Remove, items()?),
            "check" => ListOp::Mark(Mark::Check, items()?),
            "uncheck" => ListOp::Mark(Mark::Uncheck, items()?),
            "view" => ListOp::View,
            "clear" => ListOp::Clear,
            "delete" => ListOp::Delete,
            "rename" => ListOp::Rename(clean_name(str_param(p, "new_name")?)),
            "history" => ListOp::History,
            _ => {
                let problem = format!("`{said}` is not one of {}", ACTIONS.join(", "));
                return Err(SkillError::Param { name: "action", problem });
            }
        };
        Ok(ListRequest::On { list: opt_str_param(p, "name").map(clean_name), op })
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
    let repo = ListsRepo(c);
    let (said, op) = match ListRequest::parse(p)? {
        ListRequest::ListAll => return list_all(&repo),
        ListRequest::Create { name } => {
            let id = repo.ensure(&name)?;
            return Ok(SkillOutput::new(format!("List \"{name}\" is ready."), json!({"list": name, "id": id})));
        }
        ListRequest::On { list, op } => (list, op),
    };
    let said = match said {
        Some(name) => name,
        None => repo.latest()?.unwrap_or_else(|| DEFAULT_LIST.to_string()),
    };
    // "groceries" finds the "shopping" list; an `add` to a name that fits none creates it.
    let (id, name) = match (lookup(&repo, &said)?, &op) {
        (Lookup::Found(id, name), _) => (id, name),
        (Lookup::Several(names), _) => {
            let data = json!({"action": op.as_str(), "list": said, "lists": names});
            return Ok(SkillOutput::clarify(which("list", &names), names, data));
        }
        (Lookup::Missing, ListOp::Add(_)) => (repo.ensure(&said)?, said),
        (Lookup::Missing, _) => return Err(SkillError::NotFound(format!("there is no list named \"{said}\""))),
    };
    match op {
        ListOp::Add(items) => add(&repo, id, &name, &items),
        ListOp::Mark(mark, items) => change(&repo, id, &name, mark, &items),
        ListOp::View => {
            let items = repo.entries(id)?;
            let lines: Vec<String> =
                items.iter().map(|i| format!("{} {}", if i.checked { "[x]" } else { "[ ]" }, i.content)).collect();
            let summary = if lines.is_empty() {
                format!("{name} is empty.")
            } else {
                format!("{name} ({}): {}", lines.len(), lines.join("; "))
            };
            Ok(SkillOutput::new(summary, json!({"list": name, "items": entries_json(&items)})))
        }
        ListOp::Clear => {
            let n = repo.clear(id)?;
            repo.record(id, "clear", "")?;
            repo.touch(id)?;
            Ok(SkillOutput::new(format!("Cleared {name} ({n} items)."), json!({"list": name, "removed": n})))
        }
        ListOp::Delete => {
            repo.delete(id)?;
            Ok(SkillOutput::new(format!("Deleted the list {name}."), json!({"list": name, "deleted": true})))
        }
        ListOp::Rename(new_name) => {
            repo.rename(id, &new_name)?;
            repo.record(id, "rename", &new_name)?;
            Ok(SkillOutput::new(format!("Renamed {name} to {new_name}."), json!({"list": new_name, "old": name})))
        }
        ListOp::History => {
            let rows: Vec<Value> = repo.history(id, HISTORY_SHOWN)?.iter().map(change_json).collect();
            let summary = format!("{} recent change(s) to {name}.", rows.len());
            Ok(SkillOutput::new(summary, json!({"list": name, "history": rows})))
        }
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

fn lookup(repo: &ListsRepo<'_>, said: &str) -> Result<Lookup, SkillError> {
    let lists = repo.names()?;
    let names: Vec<&str> = lists.iter().map(|(_, n)| n.as_str()).collect();
    Ok(match find_list(said, &names) {
        Found::One(i) => Lookup::Found(lists[i].0, lists[i].1.clone()),
        Found::Several(is) => Lookup::Several(is.iter().map(|&i| lists[i].1.clone()).collect()),
        Found::Nothing => Lookup::Missing,
    })
}

/// An item already there up to case, articles and number is not added twice.
fn add(repo: &ListsRepo<'_>, id: i64, name: &str, items: &[String]) -> Result<SkillOutput, SkillError> {
    let mut stored: Vec<String> = repo.contents(id)?.into_iter().map(|(_, s)| s).collect();
    let mut added = Vec::new();
    let mut already = Vec::new();
    for item in items {
        let fresh = find_same(item, &stored) == Found::Nothing && repo.add_item(id, item)?;
        if fresh {
            repo.record(id, "add", item)?;
            added.push(item.clone());
            stored.push(item.clone());
        } else {
            already.push(item.clone());
        }
    }
    repo.touch(id)?;
    let mut summary = format!("Added {} to {name}.", join(&added));
    if added.is_empty() {
        summary = format!("{} already on {name}.", join(&already));
    } else if !already.is_empty() {
        summary.push_str(&format!(" Already there: {}.", join(&already)));
    }
    let items = entries_json(&repo.entries(id)?);
    Ok(SkillOutput::new(summary, json!({"list": name, "added": added, "already": already, "items": items})))
}

/// Remove, check or uncheck the items the user named, each resolved by [`find_item`]. When
/// any of them fits several items nothing changes and the reply asks which was meant.
fn change(repo: &ListsRepo<'_>, id: i64, name: &str, mark: Mark, said: &[String]) -> Result<SkillOutput, SkillError> {
    let stored = repo.contents(id)?;
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
            "action": mark.as_str(),
            "list": name,
            "unclear": unclear.iter().map(|(item, cands)| json!({"item": item, "candidates": cands})).collect::<Vec<_>>(),
        });
        return Ok(SkillOutput::clarify(question, choices, data));
    }
    let mut done = Vec::new();
    for (item_id, content) in picked {
        match mark {
            Mark::Remove => repo.remove_item(*item_id)?,
            Mark::Check | Mark::Uncheck => repo.set_checked(*item_id, mark == Mark::Check)?,
        }
        repo.record(id, mark.as_str(), content)?;
        done.push(content.clone());
    }
    repo.touch(id)?;
    let (verb, prep) = match mark {
        Mark::Remove => ("Removed", "from"),
        Mark::Check => ("Checked off", "on"),
        Mark::Uncheck => ("Unchecked", "on"),
    };
    let mut summary = if done.is_empty() { String::new() } else { format!("{verb} {} {prep} {name}.", join(&done)) };
    if !missing.is_empty() {
        summary = format!("{summary} Not on {name}: {}.", join(&missing)).trim().to_string();
    }
    let items = entries_json(&repo.entries(id)?);
    Ok(SkillOutput::new(summary, json!({"list": name, "done": done, "missing": missing, "items": items})))
}

fn list_all(repo: &ListsRepo<'_>) -> Result<SkillOutput, SkillError> {
    let rows = repo.counts()?;
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

/// The items as the skill's data shows them (`ask --json`, the ACT pane).
fn entries_json(items: &[ListEntry]) -> Vec<Value> {
    items.iter().map(|i| json!({"content": i.content, "checked": i.checked})).collect()
}

fn change_json(c: &ListChange) -> Value {
    json!({"action": c.action, "item": c.item, "at": c.at})
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
