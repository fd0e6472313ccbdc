//! Golden files for every provider export of one rich definition. Set `UPDATE_GOLDEN=1` to
//! rewrite them after an intended change, then review the diff.

use std::path::PathBuf;

use serde_json::{Value, json};
use tool_protocol::export::{
    OpenAiExportOptions, OpenAiToolNames, to_anthropic_tool_definitions, to_mcp_tools,
    to_openai_tool_definitions,
};
use tool_protocol::{ToolAnnotations, ToolDefinition};

fn rich_definition() -> ToolDefinition {
    ToolDefinition {
        name: "workspace.writeFile".into(),
        title: Some("Write file".into()),
        description: Some("Create or replace one workspace file at an expected revision.".into()),
        input_schema: json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "maxLength": 512, "pattern": "^[^/].*"},
                "content": {"type": "string", "maxLength": 1048576},
                "expectedRevision": {"type": "integer", "minimum": 0},
                "options": {
                    "type": "object",
                    "properties": {
                        "createDirectories": {"type": "boolean", "default": false},
                        "encoding": {"enum": ["utf-8"]}
                    }
                },
                "tags": {"type": "array", "maxItems": 8, "items": {"type": "string"}}
            },
            "required": ["path", "content"],
            "additionalProperties": false,
            "anyOf": [{"required": ["expectedRevision"]}, {"properties": {"path": {"pattern": "^scratch/"}}}]
        }),
        output_schema: Some(json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "revision": {"type": "integer"}},
            "required": ["path", "revision"]
        })),
        annotations: Some(ToolAnnotations {
            title: Some("Write file".into()),
            read_only_hint: Some(false),
            destructive_hint: Some(true),
            idempotent_hint: Some(true),
            open_world_hint: Some(false),
            untrusted_content_hint: None,
        }),
    }
}

fn assert_golden(file: &str, actual: &Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(file);
    let rendered = serde_json::to_string_pretty(actual).unwrap() + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &rendered).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    assert_eq!(rendered, expected, "golden file {file} differs");
}

#[test]
fn mcp_export_matches_golden() {
    assert_golden(
        "mcp.json",
        &serde_json::to_value(to_mcp_tools(&[rich_definition()])).unwrap(),
    );
}

#[test]
fn openai_export_matches_golden() {
    let tools = to_openai_tool_definitions(&[rich_definition()], &OpenAiExportOptions::default());
    assert_golden("openai.json", &serde_json::to_value(tools).unwrap());
}

#[test]
fn openai_strict_export_matches_golden() {
    let tools =
        to_openai_tool_definitions(&[rich_definition()], &OpenAiExportOptions { strict: true });
    assert_golden("openai-strict.json", &serde_json::to_value(tools).unwrap());
}

#[test]
fn anthropic_export_matches_golden() {
    assert_golden(
        "anthropic.json",
        &serde_json::to_value(to_anthropic_tool_definitions(&[rich_definition()])).unwrap(),
    );
}

#[test]
fn root_schema_constraints_survive_every_plain_export() {
    let definition = rich_definition();
    let catalog = [definition.clone()];
    let openai = to_openai_tool_definitions(&catalog, &OpenAiExportOptions::default());
    let anthropic = to_anthropic_tool_definitions(&catalog);
    assert_eq!(openai[0].function.parameters, definition.input_schema);
    assert_eq!(anthropic[0].input_schema, definition.input_schema);
    assert_eq!(to_mcp_tools(&catalog)[0], definition);
    let names = OpenAiToolNames::new(&catalog);
    assert_eq!(
        names.canonical_name(&openai[0].function.name),
        Some("workspace.writeFile")
    );
    assert_eq!(
        names.canonical_name(&anthropic[0].name),
        Some("workspace.writeFile")
    );
}

#[test]
fn the_mcp_export_round_trips_through_the_validator() {
    let wire = serde_json::to_value(to_mcp_tools(&[rich_definition()])).unwrap();
    let page = tool_protocol::parse_tool_list_result(&json!({"tools": wire})).unwrap();
    assert_eq!(page.tools, vec![rich_definition()]);
}
