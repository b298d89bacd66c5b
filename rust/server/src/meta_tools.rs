//! The answers of `domains()` and `tools(domain)`, and the output budget every answer obeys.
//! These read the registry only; `run` lives in `calls`.

use ide_mcp_protocol::toon;
use serde_json::{json, Map, Value};

use crate::registry::{RegisteredTool, Registry};
use crate::server_name::ServerName;

/// `domains()`: a primer comment, then the server's live domains as a table.
pub fn domains_text(registry: &Registry, server: ServerName) -> String {
    let rows: Vec<Value> = registry
        .domains_on(server)
        .map(|domain| json!({ "name": domain.name, "description": domain.description }))
        .collect();
    let mut text = format!(
        "# IDE `{server}` server. Next: tools(domain) lists a domain's tools; run(tool, args) runs one.\n"
    );
    toon::encode_into(
        &json!({ "domains": rows }),
        &toon::EncodeOptions::default(),
        &mut text,
    );
    text
}

/// `tools(domain)`: each tool with its hints and the parameters its schema declares.
/// `Err` carries the message for an unknown domain.
pub fn tools_text(registry: &Registry, server: ServerName, domain: &str) -> Result<String, String> {
    let Some(found) = registry.domain(server, domain) else {
        let known: Vec<&str> = registry
            .domains_on(server)
            .map(|domain| domain.name.as_str())
            .collect();
        return Err(format!(
            "unknown domain `{domain}` on the `{server}` server; its domains are: {}",
            if known.is_empty() {
                "(none)".to_owned()
            } else {
                known.join(", ")
            }
        ));
    };
    let tools: Vec<Value> = found
        .tools
        .iter()
        .filter(|tool| !registry.is_withheld(tool))
        .map(|tool| tool_row(tool))
        .collect();
    let mut text = format!(
        "# Domain `{}` on the `{server}` server. Run a tool with run(tool, args).\n",
        found.name
    );
    toon::encode_into(
        &json!({ "domain": found.name, "description": found.description, "tools": tools }),
        &toon::EncodeOptions::default(),
        &mut text,
    );
    Ok(text)
}

fn tool_row(tool: &RegisteredTool) -> Value {
    let mut row = Map::new();
    row.insert("name".to_owned(), Value::from(&*tool.name));
    row.insert(
        "description".to_owned(),
        Value::from(tool.description.as_str()),
    );
    row.insert(
        "readOnly".to_owned(),
        Value::from(tool.annotations.read_only),
    );
    row.insert(
        "destructive".to_owned(),
        Value::from(tool.annotations.destructive),
    );
    row.insert(
        "parameters".to_owned(),
        Value::Array(parameters(&tool.input_schema)),
    );
    Value::Object(row)
}

/// The top-level parameters a schema declares: name, type, whether required, description.
pub fn parameters(schema: &Value) -> Vec<Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            json!({
                "name": name,
                "type": type_label(property),
                "required": required.contains(&name.as_str()),
                "description": property.get("description").and_then(Value::as_str).unwrap_or(""),
            })
        })
        .collect()
}

/// A short type label: `string`, `integer|null`, `array of string`, `one of a|b`.
fn type_label(property: &Value) -> String {
    if let Some(choices) = property.get("enum").and_then(Value::as_array) {
        let labels: Vec<String> = choices
            .iter()
            .map(|choice| match choice {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            })
            .collect();
        return format!("one of {}", labels.join("|"));
    }
    let base = match property.get("type") {
        Some(Value::String(name)) => name.clone(),
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        _ => "any".to_owned(),
    };
    if base == "array" {
        if let Some(items) = property.get("items") {
            return format!("array of {}", type_label(items));
        }
    }
    base
}

/// Cuts `text` so that it and the notice that says so fit in `budget` bytes. The notice comes
/// first: clients that show a model only the start of a long result (Claude Code keeps a
/// preview of about 2 KB of anything over its inline limit) must still show that it was cut
/// and how to narrow the request.
pub fn within_budget(text: String, budget: usize) -> String {
    if text.len() <= budget {
        return text;
    }
    let full_length = text.len();
    // The notice names how much is kept, which depends on the notice's own length: measured
    // once with the most it could say, it can only get shorter with the real figure.
    let longest_notice = cut_notice(full_length, budget).len();
    let mut cut = budget.saturating_sub(longest_notice);
    while cut > 0 && !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut result = cut_notice(full_length, cut);
    result.push_str(&text[..cut]);
    result
}

fn cut_notice(full_length: usize, kept: usize) -> String {
    format!(
        "# cut: the result was {full_length} bytes and only the first {kept} follow, to fit the \
         output budget. Narrow the request (a smaller range, a more specific pattern, fewer \
         items) to see the rest.\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_come_from_the_schema_properties() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "A file"},
                "lines": {"type": "array", "items": {"type": "integer"}},
                "mode": {"enum": ["fast", "full"]},
            },
            "required": ["path"],
        });
        let rows = parameters(&schema);
        assert_eq!(
            rows[0],
            json!({"name": "path", "type": "string", "required": true, "description": "A file"})
        );
        assert_eq!(rows[1]["type"], "array of integer");
        assert_eq!(rows[2]["type"], "one of fast|full");
        assert_eq!(rows[2]["required"], false);
    }

    #[test]
    fn a_result_within_budget_is_untouched() {
        assert_eq!(within_budget("abc".to_owned(), 3), "abc");
    }

    #[test]
    fn a_cut_result_says_so_first_and_how_to_narrow() {
        let cut = within_budget("é".repeat(1000), 500);
        assert!(cut.starts_with("# cut: the result was 2000 bytes"), "{cut}");
        assert!(cut.contains("Narrow the request"));
        assert!(cut.ends_with('é'));
        assert!(cut.len() <= 500, "{} bytes", cut.len());
    }

    #[test]
    fn the_default_budget_keeps_a_cut_result_inline_in_claude_code() {
        // Claude Code moves a result of more than about 50,000 characters to a file and shows
        // the model a 2 KB preview; a byte is at most a character.
        let budget = crate::ServerConfig::default().output_budget_bytes;
        assert!(budget <= 40_000, "{budget}");
        assert!(within_budget("x".repeat(1 << 20), budget).len() <= budget);
    }

    #[test]
    fn a_budget_smaller_than_the_notice_keeps_only_the_notice() {
        let cut = within_budget("x".repeat(100), 5);
        assert!(cut.starts_with("# cut: the result was 100 bytes and only the first 0"));
    }
}
