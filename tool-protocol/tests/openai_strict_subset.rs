//! The OpenAI export with `strict: true` emits only what OpenAI's Structured Outputs strict
//! mode accepts (issue 39, defect 6): supported types and keywords, `additionalProperties:
//! false` and every property in `required` on every object (optional ones as a union with
//! null), supported string formats only, no `$schema`/`title`/`default`, no siblings of `$ref`.

use serde_json::{Map, Value, json};
use tool_protocol::ToolDefinition;
use tool_protocol::export::{OpenAiExportOptions, to_openai_tool_definitions};

/// Keywords OpenAI's strict mode documents as supported.
const SUPPORTED_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "description",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];
const SUPPORTED_TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "object", "array", "null",
];
const SUPPORTED_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// A schema as `schemars` writes it for a typed tool (draft-07, for deserialize).
fn schemars_like_schema() -> Value {
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "WriteInput",
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "maxLength": 160, "pattern": "^[^/]"},
            "expectedRevision": {"type": ["integer", "null"], "format": "uint64", "minimum": 0, "default": null},
            "count": {"type": "integer", "format": "uint32", "minimum": 0, "maximum": 4294967295u64, "default": 1},
            "at": {"type": "string", "format": "date-time"},
            "occurrence": {"description": "Which match.", "$ref": "#/definitions/Occurrence"},
            "range": {"anyOf": [{"$ref": "#/definitions/Range"}, {"type": "null"}]},
            "mode": {"oneOf": [{"type": "string", "const": "fast"}, {"type": "string", "const": "safe"}]},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 8, "default": []},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}, "title": "Labels"},
            "window": {"description": "Window.", "allOf": [{"$ref": "#/definitions/Range"}]}
        },
        "required": ["path", "count", "window"],
        "additionalProperties": false,
        "definitions": {
            "Occurrence": {"title": "Occurrence", "type": "string", "enum": ["first", "all"]},
            "Range": {
                "title": "Range",
                "type": "object",
                "properties": {"start": {"type": "integer", "format": "uint64", "minimum": 0}, "end": {"type": "integer", "format": "int64"}},
                "required": ["start"]
            }
        }
    })
}

fn strict_parameters(schema: Value) -> Value {
    let definition = ToolDefinition::new("workspace.write", "Write.", schema);
    let tools = to_openai_tool_definitions(&[definition], &OpenAiExportOptions { strict: true });
    assert_eq!(tools[0].function.strict, Some(true));
    tools[0].function.parameters.clone()
}

/// Checks one node (and its subschemas) against the strict-mode subset.
fn assert_in_subset(node: &Value, at: &str, root: &Value) {
    let Value::Object(map) = node else {
        panic!("{at}: a schema must be an object, got {node}");
    };
    for key in map.keys() {
        assert!(
            SUPPORTED_KEYWORDS.contains(&key.as_str()),
            "{at}: unsupported keyword {key:?} in {node}"
        );
    }
    if map.contains_key("$ref") {
        assert_eq!(map.len(), 1, "{at}: $ref with siblings: {node}");
        let target = map["$ref"].as_str().unwrap();
        let pointer = target.strip_prefix('#').unwrap();
        assert!(root.pointer(pointer).is_some(), "{at}: dangling {target}");
    }
    match map.get("type") {
        Some(Value::String(kind)) => assert!(SUPPORTED_TYPES.contains(&kind.as_str()), "{at}"),
        Some(Value::Array(kinds)) => assert!(
            kinds
                .iter()
                .all(|kind| SUPPORTED_TYPES.contains(&kind.as_str().unwrap())),
            "{at}"
        ),
        Some(other) => panic!("{at}: type {other}"),
        None => assert!(
            map.contains_key("anyOf") || map.contains_key("$ref"),
            "{at}: untyped schema {node}"
        ),
    }
    if let Some(format) = map.get("format") {
        assert!(
            SUPPORTED_FORMATS.contains(&format.as_str().unwrap()),
            "{at}: format {format}"
        );
    }
    let is_object = match map.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
        _ => false,
    };
    if is_object {
        assert_eq!(
            map.get("additionalProperties"),
            Some(&Value::Bool(false)),
            "{at}: open object"
        );
        let properties = map
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or_else(|| panic!("{at}: object without properties"));
        let required: Vec<&str> = map["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|name| name.as_str().unwrap())
            .collect();
        let names: Vec<&str> = properties.keys().map(String::as_str).collect();
        assert_eq!(required, names, "{at}: every property must be required");
    }
    for keyword in ["properties", "$defs"] {
        if let Some(Value::Object(entries)) = map.get(keyword) {
            for (name, schema) in entries {
                assert_in_subset(schema, &format!("{at}/{keyword}/{name}"), root);
            }
        }
    }
    if let Some(items) = map.get("items") {
        assert_in_subset(items, &format!("{at}/items"), root);
    }
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        for (index, branch) in branches.iter().enumerate() {
            assert_in_subset(branch, &format!("{at}/anyOf/{index}"), root);
        }
    }
}

fn accepts_null(schema: &Value, root: &Value) -> bool {
    let map: &Map<String, Value> = schema.as_object().unwrap();
    let typed_null = match map.get("type") {
        Some(Value::String(kind)) => kind == "null",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "null"),
        _ => false,
    };
    let enum_ok = map
        .get("enum")
        .and_then(Value::as_array)
        .is_none_or(|values| values.contains(&Value::Null));
    (typed_null && enum_ok)
        || map
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(|branch| accepts_null(branch, root)))
        || map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|target| root.pointer(target.strip_prefix('#').unwrap()))
            .is_some_and(|target| accepts_null(target, root))
}

#[test]
fn openai_strict_export_stays_inside_the_documented_subset() {
    let parameters = strict_parameters(schemars_like_schema());
    assert_in_subset(&parameters, "#", &parameters);
    let properties = &parameters["properties"];
    // Unsupported formats go, the range they stand for stays; supported formats stay.
    assert_eq!(
        properties["expectedRevision"],
        json!({"type": ["integer", "null"], "minimum": 0})
    );
    assert_eq!(properties["at"]["format"], "date-time");
    assert_eq!(
        properties["count"],
        json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64})
    );
    // Optional properties become required and nullable; required ones stay non-null.
    for optional in [
        "expectedRevision",
        "at",
        "occurrence",
        "range",
        "mode",
        "tags",
        "labels",
    ] {
        assert!(
            accepts_null(&properties[optional], &parameters),
            "{optional} must accept null: {}",
            properties[optional]
        );
    }
    for required in ["path", "count", "window"] {
        assert!(
            !accepts_null(&properties[required], &parameters),
            "{required}"
        );
    }
    // `$ref` siblings move beside an `anyOf`; draft-07 definitions become `$defs`.
    assert_eq!(properties["occurrence"]["description"], "Which match.");
    assert_eq!(
        parameters["$defs"]["Occurrence"],
        json!({"type": "string", "enum": ["first", "all"]})
    );
    assert!(parameters.get("definitions").is_none());
    // A one-branch `allOf` (draft-07's `$ref` with siblings) becomes a one-branch `anyOf`.
    assert_eq!(
        properties["window"],
        json!({"description": "Window.", "anyOf": [{"$ref": "#/$defs/Range"}]})
    );
    // `oneOf` becomes `anyOf`.
    assert!(properties["mode"].get("oneOf").is_none());
}

#[test]
fn the_strict_export_leaves_the_plain_export_and_the_catalog_alone() {
    let schema = schemars_like_schema();
    let definition = ToolDefinition::new("workspace.write", "Write.", schema.clone());
    let plain = to_openai_tool_definitions(
        std::slice::from_ref(&definition),
        &OpenAiExportOptions::default(),
    );
    assert_eq!(plain[0].function.parameters, schema);
    let _ = strict_parameters(schema.clone());
    assert_eq!(definition.input_schema, schema);
}
