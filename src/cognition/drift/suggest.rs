//! SUGGEST's tool (docs/cognition.md §19): the tool the activated concepts point at. An MCP
//! tool the hub lists wins when a concept's word is a word of its name or description, so
//! the suggestion names something the user can actually run; otherwise the innate skills'
//! fixed table stands, and with neither SUGGEST is gated out ("no tool fits").

use crate::mcp::ToolInfo;

/// Words too common in tool descriptions to say that a concept fits one.
const STOP: [&str; 12] = ["the", "and", "for", "with", "from", "this", "that", "your", "into", "text", "back", "tool"];

fn words(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 3 && !STOP.contains(&w.as_str()))
}

/// The skill of the first listed MCP tool a concept name shares a word with.
pub fn mcp_hint(names: &[String], tools: &[ToolInfo]) -> Option<String> {
    names.iter().flat_map(|n| words(n).collect::<Vec<_>>()).find_map(|w| {
        tools.iter().find(|t| words(&t.name).chain(words(&t.description)).any(|tw| tw == w)).map(ToolInfo::skill)
    })
}

/// The innate skill a concept name points at.
pub fn innate_hint(names: &[String]) -> Option<String> {
    const TOOLS: [(&str, &str); 6] = [
        ("remind", "reminder"),
        ("deadline", "reminder"),
        ("appointment", "reminder"),
        ("shopping", "list"),
        ("groceries", "list"),
        ("focus", "focus session"),
    ];
    names.iter().find_map(|n| {
        let n = n.to_lowercase();
        TOOLS.iter().find(|(w, _)| n.contains(w)).map(|(_, t)| (*t).to_string())
    })
}

/// SUGGEST's tool: a fitting MCP tool first, then an innate skill.
pub fn hint(names: &[String], tools: &[ToolInfo]) -> Option<String> {
    mcp_hint(names, tools).or_else(|| innate_hint(names))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> ToolInfo {
        ToolInfo {
            server: "web".into(),
            name: name.into(),
            description: description.into(),
            schema: serde_json::json!({"type": "object"}),
            read_only: true,
        }
    }

    #[test]
    fn a_fitting_mcp_tool_is_named_before_the_innate_table() {
        let tools = [tool("search_flights", "Find flights between two airports"), tool("weather", "The forecast")];
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(hint(&names(&["Lisbon flights"]), &tools).as_deref(), Some("mcp.web.search_flights"));
        assert_eq!(hint(&names(&["rain", "weather"]), &tools).as_deref(), Some("mcp.web.weather"));
        assert_eq!(hint(&names(&["shopping"]), &tools).as_deref(), Some("list"), "no tool fits: the table");
        assert_eq!(hint(&names(&["shopping"]), &[]).as_deref(), Some("list"));
        assert_eq!(hint(&names(&["the tool"]), &tools), None, "common words fit nothing");
        assert_eq!(hint(&names(&["poetry"]), &tools), None);
    }
}
