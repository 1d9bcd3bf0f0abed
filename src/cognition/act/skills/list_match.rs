//! Matching what a person says ("take the bread off", "cancel the dentist one", "my groceries
//! list") against what is stored ("bread", "call the dentist", "shopping"). People drop or add
//! articles and possessives, switch between singular and plural, and name an item by its head
//! noun ("milk" for "oat milk"); an exact string comparison answers "not on the list" to all of
//! those. Pure functions over the stored strings, so every skill that resolves a spoken
//! reference uses the same rules and they can be tested without a database.
//!
//! Every matcher works in tiers, most literal first, and the first tier with any hit decides:
//! a closer reading never loses to a looser one, and a looser reading that fits several things
//! is reported as [`Found::Several`] so the caller asks instead of guessing.

/// What a spoken reference resolved to, as indices into the stored strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    One(usize),
    /// Several fit equally well: the caller changes nothing and asks which (in stored order).
    Several(Vec<usize>),
    Nothing,
}

/// Leading words that point at a thing without naming it. "of" counts only after one of the
/// others ("some of the eggs"), so a title such as "Of Mice and Men" keeps its first word.
const DETERMINERS: &[&str] = &[
    "the", "a", "an", "some", "my", "our", "your", "his", "her", "their", "this", "that", "these", "those", "any",
    "all",
];

/// Plurals that no suffix rule produces.
const IRREGULAR: &[(&str, &str)] = &[
    ("mouse", "mice"),
    ("child", "children"),
    ("person", "people"),
    ("foot", "feet"),
    ("tooth", "teeth"),
    ("goose", "geese"),
    ("man", "men"),
    ("woman", "women"),
];

/// List names people use for the same list; the first of each group is its canonical key.
const LIST_SYNONYMS: &[&[&str]] =
    &[&["shopping", "grocery", "groceries", "groceryshopping"], &["todo", "todos", "task", "tasks", "thingstodo"]];

/// Whether `word` (any case) is one of the leading words [`key`] drops.
pub fn is_determiner(word: &str) -> bool {
    DETERMINERS.contains(&word.to_lowercase().as_str())
}

/// Lowercase words, split on anything that is neither a letter, a digit nor an inner apostrophe.
fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The words that name the thing: [`words`] without the leading determiners and possessives
/// (all of them kept when nothing else is left, so "that" still names an item called "that").
pub fn key(s: &str) -> Vec<String> {
    let all = words(s);
    let skip = all
        .iter()
        .enumerate()
        .take_while(|(i, w)| DETERMINERS.contains(&w.as_str()) || (*i > 0 && w.as_str() == "of"))
        .count();
    if skip == all.len() { all } else { all[skip..].to_vec() }
}

/// One word equal to another up to number: "egg"/"eggs", "tomato"/"tomatoes", "box"/"boxes",
/// "berry"/"berries", "loaf"/"loaves", "knife"/"knives", and a few irregular nouns.
pub fn same_word(a: &str, b: &str) -> bool {
    a == b || plural_of(a, b) || plural_of(b, a)
}

/// Whether `p` is a plural of `s`.
fn plural_of(s: &str, p: &str) -> bool {
    if s.chars().count() < 2 {
        return false;
    }
    if IRREGULAR.contains(&(s, p)) {
        return true;
    }
    let Some(stem) = p.strip_suffix('s') else { return false };
    if stem == s || stem.strip_suffix('e') == Some(s) {
        return true;
    }
    let ies = p.strip_suffix("ies").filter(|st| !st.is_empty());
    let ves = p.strip_suffix("ves").filter(|st| !st.is_empty());
    ies.is_some_and(|st| s.strip_suffix('y') == Some(st))
        || ves.is_some_and(|st| s.strip_suffix('f') == Some(st) || s.strip_suffix("fe") == Some(st))
}

fn same_words(a: &[String], b: &[String]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_word(x, y))
}

/// `needle` as consecutive whole words of `hay`.
fn contains_words(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| same_words(w, needle))
}

/// `needle` as the last words of `hay`: the head noun of an English noun phrase comes last.
fn ends_with_words(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.len() >= needle.len() && same_words(&hay[hay.len() - needle.len()..], needle)
}

/// The first tier that any stored string passes decides.
fn first_tier<S: AsRef<str>>(items: &[S], tiers: &[&dyn Fn(&str) -> bool]) -> Found {
    for tier in tiers {
        let hits: Vec<usize> = items.iter().enumerate().filter(|(_, s)| tier(s.as_ref())).map(|(i, _)| i).collect();
        match hits.len() {
            0 => continue,
            1 => return Found::One(hits[0]),
            _ => return Found::Several(hits),
        }
    }
    Found::Nothing
}

fn literal(query: &str) -> impl Fn(&str) -> bool + '_ {
    move |s: &str| s.trim().to_lowercase() == query.trim().to_lowercase()
}

/// A list item named by `query`: the same text ignoring case; else the same words ignoring
/// determiners, possessives and number ("the bread" → "bread", "eggs" → "egg"); else an item
/// whose head noun phrase it is ("milk" → "oat milk", not "milk chocolate"); else an item that
/// has it as whole words anywhere ("milk" → "milk chocolate", never "milkshake mix").
pub fn find_item<S: AsRef<str>>(query: &str, items: &[S]) -> Found {
    let q = key(query);
    if q.is_empty() {
        return Found::Nothing;
    }
    let same = |s: &str| same_words(&key(s), &q);
    let head = |s: &str| ends_with_words(&key(s), &q);
    let inside = |s: &str| contains_words(&key(s), &q);
    first_tier(items, &[&literal(query), &same, &head, &inside])
}

/// A stored item that is the same as `query` up to case, determiners and number: what an
/// `add` treats as already there ("the eggs" when "egg" is on the list), without the looser
/// tiers of [`find_item`] (adding "milk" next to "oat milk" is a new item).
pub fn find_same<S: AsRef<str>>(query: &str, items: &[S]) -> Found {
    let q = key(query);
    if q.is_empty() {
        return Found::Nothing;
    }
    let same = |s: &str| same_words(&key(s), &q);
    first_tier(items, &[&literal(query), &same])
}

/// A free-text description (a reminder's message) named by `query`: the same text; else the
/// same words as [`find_item`] reads them; else one contained in the other as whole words
/// ("dentist" → "call the dentist", "call mum tomorrow" → "call mum"). There is no head-noun
/// tier: the last word of "call mum about the party" is not what it is about.
pub fn find_phrase<S: AsRef<str>>(query: &str, phrases: &[S]) -> Found {
    let q = key(query);
    if q.is_empty() {
        return Found::Nothing;
    }
    let same = |s: &str| same_words(&key(s), &q);
    let either = |s: &str| {
        let k = key(s);
        contains_words(&k, &q) || (k.concat().chars().count() >= 3 && contains_words(&q, &k))
    };
    first_tier(phrases, &[&literal(query), &same, &either])
}

/// A list's name with the words "list"/"lists" and everything [`key`] drops removed, joined
/// without spaces so "to-do", "to do" and "todo" agree.
fn list_words(name: &str) -> Vec<String> {
    let mut k = key(name);
    while k.len() > 1 && k.last().is_some_and(|w| w == "list" || w == "lists") {
        k.pop();
    }
    k
}

/// The synonym group a list name belongs to, or the name itself.
fn list_canon(name: &str) -> String {
    let joined = list_words(name).concat();
    LIST_SYNONYMS.iter().find(|group| group.contains(&joined.as_str())).map_or(joined, |group| group[0].to_string())
}

/// A stored list named by `query`: the same name; else the same words up to number
/// ("book" → "books"); else a common synonym ("groceries" → "shopping", "tasks" → "todo").
pub fn find_list<S: AsRef<str>>(query: &str, names: &[S]) -> Found {
    let q = list_words(query);
    if q.is_empty() {
        return Found::Nothing;
    }
    let canon = list_canon(query);
    let same = |s: &str| same_words(&list_words(s), &q);
    let synonym = |s: &str| list_canon(s) == canon;
    first_tier(names, &[&literal(query), &same, &synonym])
}

/// `which("one", ["oat milk", "almond milk"])` → "Which one: oat milk or almond milk?": the
/// question an ambiguous reference gets.
pub fn which(what: &str, candidates: &[String]) -> String {
    let options = match candidates {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    };
    format!("Which {what}: {options}?")
}

#[cfg(test)]
mod tests;
