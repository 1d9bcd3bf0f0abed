//! The `autobiography` skill: a narrative of the user synthesised, without a model, from
//! what is stored — traits by category, recent salient episodes, the strongest concepts.
//! Cached in `kv_state` and rebuilt only when its sources changed.

use crate::cognition::act::skill::{SkillContext, SkillError, SkillOutput, opt_str_param};
use crate::store::{ConceptsRepo, EpisodesRepo, TraitsRepo, TurnRepo};
use rusqlite::Connection;
use serde_json::{Map, Value, json};

/// The six sections, in narrative order.
/// Trait keys that describe the user's work, whatever their category.
const WORK_KEYS: [&str; 4] = ["occupation", "employer", "job", "workplace"];

pub const SECTIONS: [&str; 6] = ["identity", "people", "work", "preferences", "interests", "recent"];

pub fn run(c: &Connection, p: &Map<String, Value>, _ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
    let section = opt_str_param(p, "section").map(str::to_ascii_lowercase);
    if let Some(s) = &section
        && !SECTIONS.contains(&s.as_str())
    {
        return Err(SkillError::Param { name: "section", problem: format!("one of {}", SECTIONS.join(", ")) });
    }
    let version = source_version(c)?;
    let repo = TurnRepo(c);
    let cached = repo.kv_get("autobiography", "narrative")?;
    let narrative = match cached.filter(|v| v["version"] == json!(version)) {
        Some(v) => v["sections"].clone(),
        None => {
            let sections = build(c)?;
            repo.kv_set("autobiography", "narrative", &json!({"version": version, "sections": sections}))
                .map_err(SkillError::Store)?;
            sections
        }
    };
    let wanted: Vec<&str> = match &section {
        Some(s) => vec![s.as_str()],
        None => SECTIONS.to_vec(),
    };
    let text: Vec<String> =
        wanted.iter().filter_map(|s| narrative[*s].as_str().filter(|t| !t.is_empty()).map(str::to_string)).collect();
    let summary = if text.is_empty() {
        "I don't know enough about you yet to tell your story.".to_string()
    } else {
        text.join(" ")
    };
    Ok(SkillOutput::new(summary, json!({"sections": narrative, "section": section})))
}

/// Changes whenever a source row changes: the newest update among traits, episodes, concepts.
fn source_version(c: &Connection) -> Result<String, SkillError> {
    let (t, e, k) = (TraitsRepo(c).version()?, EpisodesRepo(c).version()?, ConceptsRepo(c).version()?);
    Ok(format!("{}:{}/{}:{}/{}:{}", t.0, t.1, e.0, e.1, k.0, k.1))
}

fn build(c: &Connection) -> Result<Value, SkillError> {
    let traits = TraitsRepo(c).confident(0.3, 60)?;
    // Work is told by the trait's key (the chunker files occupation and employer under
    // `core`); every other section by the trait's category (docs/cognition.md §9.5 plus older names).
    let is_work = |key: &str| WORK_KEYS.contains(&key);
    let pick = |cats: &[&str]| -> Vec<String> {
        let work = cats.contains(&"work");
        traits
            .iter()
            .filter(|(k, _, cat)| {
                if work {
                    is_work(k) || cats.contains(&cat.as_str())
                } else {
                    !is_work(k) && cats.contains(&cat.as_str())
                }
            })
            .map(|(k, v, _)| {
                let k = k.trim_start_matches("note:").replace('_', " ");
                if k == "name" { format!("your name is {v}") } else { format!("{k}: {v}") }
            })
            .collect()
    };
    let sentence = |lead: &str, items: Vec<String>| {
        if items.is_empty() { String::new() } else { format!("{lead} {}.", items.join("; ")) }
    };
    let episodes = EpisodesRepo(c).most_salient_gists(3)?;
    let concepts = ConceptsRepo(c).strongest_names(6)?;
    Ok(json!({
        "identity": sentence("About you:", pick(&["identity", "core", "physical", "general"])),
        "people": sentence("The people in your life:", pick(&["relationship", "people", "family"])),
        "work": sentence("Your work:", pick(&["work", "project", "career"])),
        "preferences": sentence("You prefer:", pick(&["preference", "micro_preference", "communication_style", "behavioral_pattern", "communication", "style"])),
        "interests": sentence("You are interested in", concepts.into_iter().chain(pick(&["interest", "hobby"])).collect()),
        "recent": sentence("Recently:", episodes),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> SkillContext {
        SkillContext::new("t", "x", "t", chrono::Local::now())
    }

    #[test]
    fn narrative_from_traits_cached_until_they_change() {
        let c = crate::store::open_in_memory().unwrap();
        let empty = run(&c, &Map::new(), &ctx()).unwrap();
        assert!(empty.summary.starts_with("I don't know enough"));
        TurnRepo(&c).set_explicit_trait("name", "Ada", "identity").unwrap();
        let out = run(&c, &Map::new(), &ctx()).unwrap();
        assert_eq!(out.summary, "About you: your name is Ada.");
        let f = crate::store::fixtures::Fixture(&c);
        let columns: [(&str, &dyn rusqlite::ToSql); 5] = [
            ("trait_key", &"sister"),
            ("trait_value", &"Maria"),
            ("category", &"family"),
            ("created_at", &1),
            ("updated_at", &99_999_999_999i64),
        ];
        f.insert("user_traits", &columns);
        let people = run(&c, json!({"section": "people"}).as_object().unwrap(), &ctx()).unwrap();
        assert_eq!(people.summary, "The people in your life: sister: Maria.", "the cache was refreshed");
        assert!(run(&c, json!({"section": "astrology"}).as_object().unwrap(), &ctx()).is_err());
    }

    #[test]
    fn work_is_told_by_key_and_chunker_categories_find_their_sections() {
        let c = crate::store::open_in_memory().unwrap();
        for (k, v, cat) in [
            ("occupation", "nurse", "core"),
            ("hometown", "Lyon", "core"),
            ("allergy_peanuts", "peanuts", "physical"),
            ("format", "bullet points", "micro_preference"),
        ] {
            TurnRepo(&c).set_explicit_trait(k, v, cat).unwrap();
        }
        let section = |s: &str| run(&c, json!({"section": s}).as_object().unwrap(), &ctx()).unwrap().summary;
        assert_eq!(section("work"), "Your work: occupation: nurse.");
        let identity = section("identity");
        assert!(identity.contains("hometown: Lyon") && identity.contains("allergy peanuts: peanuts"), "{identity}");
        assert!(!identity.contains("nurse"), "work is not repeated under identity: {identity}");
        assert_eq!(section("preferences"), "You prefer: format: bullet points.");
    }
}
