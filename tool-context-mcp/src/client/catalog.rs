//! A server's tool list turned into registry tools. Everything in the list is untrusted input:
//! names are checked against the MCP tool-name rules, schemas are bounded in size and depth
//! before they are compiled, and a tool that fails any check is skipped with its reason
//! instead of failing the server (or panicking).

use std::collections::HashSet;
use std::sync::Arc;

use rmcp::model::Tool as RemoteTool;
use serde_json::Value;
use tool_context::{PolicyDecision, SkippedTool, Tool};
use tool_protocol::{ToolAnnotations, ToolDefinition};

use super::call::RemoteToolHandler;
use super::config::McpServerConfig;
use super::limits::ClientLimits;
use super::link::ServerLink;

/// The MCP rule for tool names: 1 to 128 of `A-Z a-z 0-9 _ - .`.
pub(crate) const MAX_REMOTE_NAME_CHARS: usize = 128;

/// The longest description kept (longer ones are cut, on a character boundary).
const MAX_DESCRIPTION_CHARS: usize = 4096;

/// The registry tools for `remote` (the server's list, in its order) and what was skipped.
pub(crate) fn registry_tools(
    config: &McpServerConfig,
    link: &Arc<ServerLink>,
    remote: Vec<RemoteTool>,
    limits: &ClientLimits,
) -> (Vec<Tool>, Vec<SkippedTool>) {
    let mut tools = Vec::new();
    let mut skipped = Vec::new();
    let mut seen = HashSet::new();
    for tool in remote {
        let remote_name = tool.name.to_string();
        if !config.mounts_tool(&remote_name) {
            continue;
        }
        let shown = printable(&remote_name);
        if let Err(reason) = check_name(&remote_name) {
            skipped.push(SkippedTool::new(shown, reason));
            continue;
        }
        if !seen.insert(remote_name.clone()) {
            skipped.push(SkippedTool::new(
                shown,
                "the server lists this name more than once; only the first is mounted",
            ));
            continue;
        }
        if tools.len() == limits.max_tools {
            skipped.push(SkippedTool::new(
                shown,
                format!(
                    "the server lists more than {} tools; the rest are not mounted",
                    limits.max_tools
                ),
            ));
            break;
        }
        let trusted = config.trusts_tool(&remote_name);
        let read_only = tool
            .annotations
            .as_ref()
            .and_then(|hints| hints.read_only_hint)
            == Some(true);
        match definition(&config.name, tool, trusted, limits) {
            Ok(definition) => {
                let handler = RemoteToolHandler::new(Arc::clone(link), &remote_name, read_only);
                let tool = Tool::from_handler(definition, handler);
                // Untrusted: no default, so the host's policy decides on a definition that
                // claims nothing (the standard policies then ask every origin but a person's
                // own direct call). Trusted: the person said it may run.
                tools.push(if trusted {
                    tool.default_policy(PolicyDecision::Allow)
                } else {
                    tool
                });
            }
            Err(reason) => skipped.push(SkippedTool::new(shown, reason)),
        }
    }
    (tools, skipped)
}

/// The registry name of `server`'s remote tool `tool`.
pub fn mounted_name(server: &str, tool: &str) -> String {
    format!("{server}.{tool}")
}

fn check_name(name: &str) -> Result<(), String> {
    let length = name.chars().count();
    if length == 0 || length > MAX_REMOTE_NAME_CHARS {
        return Err(format!(
            "a tool name is 1 to {MAX_REMOTE_NAME_CHARS} characters; this one has {length}"
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(format!(
            "a tool name uses only letters, digits, '_', '-' and '.'; this one has {:?}",
            bad
        ));
    }
    Ok(())
}

/// A name safe to show: control characters escaped, cut to the name limit.
fn printable(name: &str) -> String {
    name.chars()
        .take(MAX_REMOTE_NAME_CHARS)
        .flat_map(char::escape_debug)
        .collect()
}

fn definition(
    server: &str,
    tool: RemoteTool,
    trusted: bool,
    limits: &ClientLimits,
) -> Result<ToolDefinition, String> {
    let input_schema = bounded_schema(Value::Object((*tool.input_schema).clone()), limits)
        .map_err(|reason| format!("input schema: {reason}"))?;
    let output_schema = tool
        .output_schema
        .map(|schema| bounded_schema(Value::Object((*schema).clone()), limits))
        .transpose()
        .map_err(|reason| format!("output schema: {reason}"))?;
    let description = tool
        .description
        .map(|text| text.chars().take(MAX_DESCRIPTION_CHARS).collect::<String>())
        .unwrap_or_default();
    let mut definition =
        ToolDefinition::new(mounted_name(server, &tool.name), description, input_schema);
    definition.title = tool.title.map(|title| title.chars().take(256).collect());
    definition.output_schema = output_schema;
    // A remote server's annotations are claims by another party. An untrusted server's
    // read-only and idempotent claims are dropped, so no policy skips an approval or retries
    // on their word; the descriptive hints stay. Whatever a remote tool returns came from
    // another party.
    let hints = tool.annotations.unwrap_or_default();
    definition.annotations = Some(ToolAnnotations {
        title: hints.title,
        read_only_hint: hints.read_only_hint.filter(|_| trusted),
        destructive_hint: hints.destructive_hint,
        idempotent_hint: hints.idempotent_hint.filter(|_| trusted),
        open_world_hint: hints.open_world_hint,
        untrusted_content_hint: Some(true),
    });
    Ok(definition)
}

/// The schema if it is within the size and depth bounds (compiling is the registry's job).
fn bounded_schema(schema: Value, limits: &ClientLimits) -> Result<Value, String> {
    let bytes = serde_json::to_vec(&schema).map_or(usize::MAX, |bytes| bytes.len());
    if bytes > limits.max_schema_bytes {
        return Err(format!(
            "{bytes} bytes, more than the {} bytes a remote schema may have",
            limits.max_schema_bytes
        ));
    }
    if depth(&schema, limits.max_schema_depth).is_none() {
        return Err(format!(
            "nested deeper than {} levels",
            limits.max_schema_depth
        ));
    }
    Ok(schema)
}

/// The nesting depth of `value`, or `None` past `limit` (iterative: a hostile schema cannot
/// exhaust the stack here).
fn depth(value: &Value, limit: usize) -> Option<usize> {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((value, level)) = stack.pop() {
        if level > limit {
            return None;
        }
        deepest = deepest.max(level);
        match value {
            Value::Object(map) => stack.extend(map.values().map(|child| (child, level + 1))),
            Value::Array(items) => stack.extend(items.iter().map(|child| (child, level + 1))),
            _ => {}
        }
    }
    Some(deepest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_follow_the_mcp_rules_and_show_escaped() {
        assert!(check_name("read_file").is_ok());
        assert!(check_name("a.b-c_1").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("has space").is_err());
        assert!(check_name(&"x".repeat(129)).is_err());
        assert_eq!(printable("ctl\u{7}x"), "ctl\\u{7}x");
    }

    #[test]
    fn schemas_are_bounded_in_size_and_depth() {
        let limits = ClientLimits::default();
        assert!(bounded_schema(json!({"type": "object"}), &limits).is_ok());
        let mut deep = json!({"type": "object"});
        for _ in 0..200 {
            deep = json!({"type": "object", "properties": {"x": deep}});
        }
        assert!(
            bounded_schema(deep, &limits)
                .unwrap_err()
                .contains("nested")
        );
        let wide: serde_json::Map<_, _> = (0..20_000)
            .map(|index| (format!("p{index}"), json!({"type": "string"})))
            .collect();
        let wide = json!({"type": "object", "properties": wide});
        assert!(bounded_schema(wide, &limits).unwrap_err().contains("bytes"));
    }
}
