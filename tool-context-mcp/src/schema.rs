//! JSON Schema dialect conversion for MCP.
//!
//! MCP tool schemas (`inputSchema`, `outputSchema`) are read with JSON Schema 2020-12
//! semantics. Typed tools in `tool-context` derive draft-07 schemas with `schemars`, and
//! hand-written definitions may use draft-07 keywords too. Draft-07 keywords that 2020-12
//! dropped or renamed are rewritten here, once, when the catalog is exported:
//!
//! | draft-07                              | 2020-12                                   |
//! |---------------------------------------|-------------------------------------------|
//! | `$schema: http://json-schema.org/draft-07/schema#` | `$schema: https://json-schema.org/draft/2020-12/schema` (root only) |
//! | `definitions`                         | `$defs`                                   |
//! | `$ref: "#/definitions/X"`             | `$ref: "#/$defs/X"`                       |
//! | `items: [A, B]` (tuple form)          | `prefixItems: [A, B]`                     |
//! | `additionalItems: S` (with tuple `items`) | `items: S`                            |
//! | `dependencies: {k: [..]}`             | `dependentRequired: {k: [..]}`            |
//! | `dependencies: {k: {schema}}`         | `dependentSchemas: {k: {schema}}`         |
//!
//! Every other keyword means the same in both dialects and is kept as is, so validation by the
//! registry (which compiles the original schema) and by a 2020-12 client agree — except
//! `format` values outside [`KNOWN_FORMATS`] (`schemars` writes `uint64`, `uint32`, `uint`…),
//! which are dropped: they are annotations no validator checks, and clients that validate with
//! ajv (the TypeScript SDK) warn about every unknown one. The range they stand for is kept as
//! `minimum`/`maximum`, which `schemars` writes next to them.

use serde_json::{Map, Value};

/// `$schema` of JSON Schema 2020-12, the dialect MCP reads.
pub const JSON_SCHEMA_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// `format` values MCP clients' validators know: the JSON Schema 2020-12 formats and the
/// OpenAPI ones ajv-formats adds (`int32`, `int64`, `float`, `double`, `byte`, `binary`,
/// `password`). Any other `format` is dropped on export.
pub const KNOWN_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "binary",
    "password",
];

/// Keywords whose value is a single subschema.
const SCHEMA_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "items",
    "additionalItems",
];

/// Keywords whose value is an array of subschemas.
const SCHEMA_ARRAY_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];

/// Keywords whose value maps names to subschemas.
const SCHEMA_MAP_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "definitions",
    "$defs",
    "dependentSchemas",
];

/// Rewrites a root schema into JSON Schema 2020-12 (see the module table). The root gets the
/// 2020-12 `$schema`; a non-object schema (`true`/`false`) is returned unchanged.
///
/// ```
/// use serde_json::json;
/// use tool_context_mcp::schema::to_json_schema_2020_12;
/// let draft07 = json!({
///     "$schema": "http://json-schema.org/draft-07/schema#",
///     "type": "object",
///     "properties": {"occurrence": {"$ref": "#/definitions/Occurrence"}},
///     "definitions": {"Occurrence": {"enum": ["first", "all"]}}
/// });
/// assert_eq!(to_json_schema_2020_12(&draft07), json!({
///     "$schema": "https://json-schema.org/draft/2020-12/schema",
///     "type": "object",
///     "properties": {"occurrence": {"$ref": "#/$defs/Occurrence"}},
///     "$defs": {"Occurrence": {"enum": ["first", "all"]}}
/// }));
/// ```
pub fn to_json_schema_2020_12(schema: &Value) -> Value {
    let mut converted = convert_schema(schema);
    if let Value::Object(object) = &mut converted {
        object.insert("$schema".into(), Value::String(JSON_SCHEMA_2020_12.into()));
    }
    converted
}

fn convert_schema(schema: &Value) -> Value {
    let Value::Object(object) = schema else {
        return schema.clone();
    };
    let mut out = Map::with_capacity(object.len());
    let tuple_items = object.get("items").is_some_and(Value::is_array);
    for (key, value) in object {
        match key.as_str() {
            // Only the root carries a dialect; nested draft-07 `$schema` markers are dropped.
            "$schema" => {}
            "definitions" | "$defs" => merge_defs(&mut out, value),
            "$ref" => {
                out.insert(key.clone(), convert_ref(value));
            }
            "items" if tuple_items => {
                out.insert("prefixItems".into(), convert_each(value));
            }
            "additionalItems" if tuple_items => {
                out.insert("items".into(), convert_schema(value));
            }
            // Without tuple `items` it has no effect in draft-07 either.
            "additionalItems" => {}
            "dependencies" => split_dependencies(&mut out, value),
            "format"
                if !value
                    .as_str()
                    .is_some_and(|format| KNOWN_FORMATS.contains(&format)) => {}
            key if SCHEMA_MAP_KEYWORDS.contains(&key) => {
                out.insert(key.to_owned(), convert_map(value));
            }
            key if SCHEMA_ARRAY_KEYWORDS.contains(&key) && value.is_array() => {
                out.insert(key.to_owned(), convert_each(value));
            }
            key if SCHEMA_KEYWORDS.contains(&key) => {
                out.insert(key.to_owned(), convert_schema(value));
            }
            // `const`, `enum`, `default`, `examples` and unknown keywords hold data, not schemas.
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

fn merge_defs(out: &mut Map<String, Value>, defs: &Value) {
    let Value::Object(converted) = convert_map(defs) else {
        return;
    };
    let target = out
        .entry("$defs")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(target) = target {
        target.extend(converted);
    }
}

fn convert_ref(reference: &Value) -> Value {
    match reference
        .as_str()
        .and_then(|text| text.strip_prefix("#/definitions/"))
    {
        Some(rest) => Value::String(format!("#/$defs/{rest}")),
        None => reference.clone(),
    }
}

fn convert_map(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(name, schema)| (name.clone(), convert_schema(schema)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn convert_each(value: &Value) -> Value {
    match value {
        Value::Array(schemas) => Value::Array(schemas.iter().map(convert_schema).collect()),
        other => other.clone(),
    }
}

/// `dependencies` splits by value kind: name lists become `dependentRequired`, schemas
/// `dependentSchemas`.
fn split_dependencies(out: &mut Map<String, Value>, dependencies: &Value) {
    let Value::Object(dependencies) = dependencies else {
        return;
    };
    for (name, dependency) in dependencies {
        let (keyword, value) = if dependency.is_array() {
            ("dependentRequired", dependency.clone())
        } else {
            ("dependentSchemas", convert_schema(dependency))
        };
        let target = out
            .entry(keyword)
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(target) = target {
            target.insert(name.clone(), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_refs_and_definitions_are_renamed() {
        let schema = json!({
            "type": "object",
            "properties": {
                "list": {"type": "array", "items": {"$ref": "#/definitions/Item"}},
                "either": {"anyOf": [{"$ref": "#/definitions/Item"}, {"type": "null"}]}
            },
            "definitions": {"Item": {"type": "object", "properties": {"next": {"$ref": "#/definitions/Item"}}}}
        });
        let converted = to_json_schema_2020_12(&schema);
        assert_eq!(
            converted["properties"]["list"]["items"]["$ref"],
            "#/$defs/Item"
        );
        assert_eq!(
            converted["properties"]["either"]["anyOf"][0]["$ref"],
            "#/$defs/Item"
        );
        assert_eq!(
            converted["$defs"]["Item"]["properties"]["next"]["$ref"],
            "#/$defs/Item"
        );
        assert!(converted.get("definitions").is_none());
        assert_eq!(converted["$schema"], JSON_SCHEMA_2020_12);
    }

    #[test]
    fn tuple_items_become_prefix_items() {
        let schema = json!({"type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": false});
        let converted = to_json_schema_2020_12(&schema);
        assert_eq!(
            converted["prefixItems"],
            json!([{"type": "string"}, {"type": "integer"}])
        );
        assert_eq!(converted["items"], json!(false));
        let list = to_json_schema_2020_12(
            &json!({"type": "array", "items": {"type": "string"}, "additionalItems": false}),
        );
        assert_eq!(list["items"], json!({"type": "string"}));
        assert!(list.get("additionalItems").is_none() && list.get("prefixItems").is_none());
    }

    #[test]
    fn dependencies_split_by_kind() {
        let schema =
            json!({"type": "object", "dependencies": {"a": ["b"], "c": {"required": ["d"]}}});
        let converted = to_json_schema_2020_12(&schema);
        assert_eq!(converted["dependentRequired"], json!({"a": ["b"]}));
        assert_eq!(
            converted["dependentSchemas"],
            json!({"c": {"required": ["d"]}})
        );
        assert!(converted.get("dependencies").is_none());
    }

    #[test]
    fn data_keywords_are_not_rewritten() {
        let schema = json!({"type": "object", "properties": {"r": {"const": {"$ref": "#/definitions/X"}, "default": {"items": [1]}}}});
        let converted = to_json_schema_2020_12(&schema);
        assert_eq!(
            converted["properties"]["r"]["const"],
            json!({"$ref": "#/definitions/X"})
        );
        assert_eq!(
            converted["properties"]["r"]["default"],
            json!({"items": [1]})
        );
    }

    #[test]
    fn unknown_formats_are_dropped_and_known_ones_kept() {
        let schema = json!({"type": "object", "properties": {
            "revision": {"type": "integer", "format": "uint64", "minimum": 0},
            "count": {"type": ["integer", "null"], "format": "uint", "minimum": 0},
            "at": {"type": "string", "format": "date-time"},
            "ratio": {"type": "number", "format": "double"},
            "format": {"type": "string", "format": "uint32"}
        }});
        let converted = to_json_schema_2020_12(&schema);
        let properties = &converted["properties"];
        assert_eq!(
            properties["revision"],
            json!({"type": "integer", "minimum": 0})
        );
        assert_eq!(
            properties["count"],
            json!({"type": ["integer", "null"], "minimum": 0})
        );
        assert_eq!(properties["at"]["format"], "date-time");
        assert_eq!(properties["ratio"]["format"], "double");
        // A property named `format` is a name, not the keyword.
        assert_eq!(properties["format"], json!({"type": "string"}));
    }

    #[test]
    fn schemas_already_in_2020_12_are_stable() {
        let schema = json!({"type": "object", "$defs": {"A": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/A"}}});
        let once = to_json_schema_2020_12(&schema);
        assert_eq!(to_json_schema_2020_12(&once), once);
        assert_eq!(to_json_schema_2020_12(&json!(true)), json!(true));
    }
}
