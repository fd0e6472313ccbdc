//! Provider exports of one complete definition list: MCP tools, OpenAI function tools and
//! Anthropic tools, each with a variant filtered by an allowlist.
//!
//! Every export starts from the same complete `&[ToolDefinition]` (the `tools/list` catalog),
//! copies each `inputSchema` as is (so root constraints such as `required`, `anyOf` or
//! `additionalProperties` survive) and only changes what a provider forces:
//!
//! * **Names.** OpenAI and Anthropic accept tool names matching `[A-Za-z0-9_-]{1,64}`, while
//!   canonical names contain dots (`workspace.readFile`). [`ProviderToolNames`] maps them
//!   reversibly; see its docs for the scheme. Because the mapping is built from the complete list
//!   and is deterministic, a filtered export and a later lookup agree on every name.
//! * **Strict mode** (OpenAI only) is applied only when [`OpenAiExportOptions::strict`] asks.
//!
//! ```
//! use serde_json::json;
//! use tool_protocol::ToolDefinition;
//! use tool_protocol::export::{OpenAiExportOptions, OpenAiToolNames, to_openai_tool_definitions};
//! let catalog = [ToolDefinition::new("workspace.readFile", "Read a file", json!({"type": "object"}))];
//! let tools = to_openai_tool_definitions(&catalog, &OpenAiExportOptions::default());
//! assert_eq!(tools[0].function.name, "workspace_readFile");
//! let names = OpenAiToolNames::new(&catalog);
//! assert_eq!(names.canonical_name("workspace_readFile"), Some("workspace.readFile"));
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::definition::ToolDefinition;

/// Longest provider tool name (OpenAI and Anthropic).
pub const MAX_PROVIDER_TOOL_NAME_CHARS: usize = 64;
/// Hex characters of the hash suffix that disambiguates a provider name.
pub const PROVIDER_NAME_HASH_CHARS: usize = 8;
/// Deepest schema nesting the strict-mode transform rewrites; deeper subschemas are copied
/// unchanged (a provider rejects such a schema rather than us overflowing the stack).
pub const MAX_STRICT_SCHEMA_DEPTH: usize = 64;

/// A requested tool is not in the complete definition list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    /// The allowlist names a tool the catalog does not have.
    #[error("Tool \"{0}\" is not available in registry")]
    NotAvailable(String),
}

/// Whether `name` is a valid provider tool name: 1 to 64 characters from `[A-Za-z0-9_-]`.
pub fn is_valid_provider_tool_name(name: &str) -> bool {
    (1..=MAX_PROVIDER_TOOL_NAME_CHARS).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A reversible mapping between canonical tool names and provider-safe names.
///
/// Scheme, applied to the distinct names of the complete list:
///
/// 1. *Sanitize*: every character outside `[A-Za-z0-9_-]` becomes `_`
///    (`workspace.readFile` → `workspace_readFile`; a valid name stays unchanged).
/// 2. A name keeps its sanitized form when that form is 1..=64 characters and no other name of
///    the list sanitizes to the same form.
/// 3. Every other name (a collision such as `a.b` vs `a_b`, an over-long or empty form) gets the
///    sanitized form cut to 55 characters plus `_` and the first 8 hex digits of the SHA-256 of
///    the canonical name (`a_b_1f0c…`). Should that still collide with a name already taken, the
///    hash input is extended with an attempt counter until it does not.
///
/// The result depends only on the set of names (not their order), every provider name is valid
/// and unique, and [`Self::canonical_name`] resolves a provider's tool call back to the canonical
/// name. Build it from the same complete list the export used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderToolNames {
    to_provider: HashMap<String, String>,
    to_canonical: HashMap<String, String>,
}

/// The OpenAI function-name mapping (the same scheme serves Anthropic).
pub type OpenAiToolNames = ProviderToolNames;

impl ProviderToolNames {
    /// Builds the mapping for every definition of the complete list.
    pub fn new(definitions: &[ToolDefinition]) -> Self {
        Self::from_names(
            definitions
                .iter()
                .map(|definition| definition.name.as_str()),
        )
    }

    /// Builds the mapping for a set of canonical names.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let names: BTreeSet<&str> = names.into_iter().collect();
        let mut by_form: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for name in &names {
            by_form.entry(sanitize(name)).or_default().push(name);
        }
        let mut mapping = Self::default();
        let mut needs_hash = Vec::new();
        for (form, owners) in by_form {
            match owners.as_slice() {
                [only] if is_valid_provider_tool_name(&form) => mapping.insert(only, form),
                _ => needs_hash.extend(owners),
            }
        }
        needs_hash.sort_unstable();
        for name in needs_hash {
            let provider = (0u64..)
                .map(|attempt| hashed_name(name, attempt))
                .find(|candidate| !mapping.to_canonical.contains_key(candidate))
                .unwrap_or_default();
            mapping.insert(name, provider);
        }
        mapping
    }

    fn insert(&mut self, canonical: &str, provider: String) {
        self.to_canonical
            .insert(provider.clone(), canonical.to_owned());
        self.to_provider.insert(canonical.to_owned(), provider);
    }

    /// The provider name of a canonical tool name; `None` for names outside the list.
    pub fn provider_name(&self, canonical: &str) -> Option<&str> {
        self.to_provider.get(canonical).map(String::as_str)
    }

    /// The canonical name of a provider tool name; `None` for names the mapping never issued.
    pub fn canonical_name(&self, provider: &str) -> Option<&str> {
        self.to_canonical.get(provider).map(String::as_str)
    }

    /// Number of mapped names.
    pub fn len(&self) -> usize {
        self.to_provider.len()
    }

    /// Whether no names are mapped.
    pub fn is_empty(&self) -> bool {
        self.to_provider.is_empty()
    }
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || ch == '_' || ch == '-' {
                ch
            } else {
                '_'
            }
        })
        .collect()
}

fn hashed_name(name: &str, attempt: u64) -> String {
    let mut hasher = Sha256::new();
    hasher.update(name.as_bytes());
    if attempt > 0 {
        hasher.update(format!("\0{attempt}").as_bytes());
    }
    let digest = hex::encode(hasher.finalize());
    let keep = MAX_PROVIDER_TOOL_NAME_CHARS - PROVIDER_NAME_HASH_CHARS - 1;
    let prefix: String = sanitize(name).chars().take(keep).collect();
    format!("{prefix}_{}", &digest[..PROVIDER_NAME_HASH_CHARS])
}

/// The MCP `tools/list` view of the catalog: the definitions themselves, in catalog order.
pub fn to_mcp_tools(definitions: &[ToolDefinition]) -> Vec<ToolDefinition> {
    definitions.to_vec()
}

/// [`to_mcp_tools`] restricted to `allowlist` (catalog order, each tool once).
pub fn to_mcp_tools_filtered<S: AsRef<str>>(
    definitions: &[ToolDefinition],
    allowlist: &[S],
) -> Result<Vec<ToolDefinition>, ExportError> {
    Ok(select(definitions, allowlist)?
        .into_iter()
        .cloned()
        .collect())
}

/// Options of the OpenAI export.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenAiExportOptions {
    /// Apply OpenAI strict mode: `strict: true`, and parameters inside OpenAI's Structured
    /// Outputs subset: every object closed with all properties required (optional ones
    /// nullable), unsupported keywords and formats dropped (see [`to_strict_schema`]).
    pub strict: bool,
}

/// An OpenAI function tool: `{ type: "function", function: { name, description?, parameters, strict? } }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenAiToolDefinition {
    /// Always `"function"`.
    #[serde(rename = "type")]
    pub tool_type: String,
    /// The function.
    pub function: OpenAiFunction,
}

/// The function of an [`OpenAiToolDefinition`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenAiFunction {
    /// Provider-safe name (see [`ProviderToolNames`]).
    pub name: String,
    /// The tool description; omitted when the definition has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The input schema (transformed only in strict mode).
    pub parameters: Value,
    /// `true` in strict mode; omitted otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

/// OpenAI function tools for the whole catalog, named by [`OpenAiToolNames::new`] of the same list.
pub fn to_openai_tool_definitions(
    definitions: &[ToolDefinition],
    options: &OpenAiExportOptions,
) -> Vec<OpenAiToolDefinition> {
    let names = ProviderToolNames::new(definitions);
    definitions
        .iter()
        .map(|definition| openai_tool(definition, &names, options))
        .collect()
}

/// [`to_openai_tool_definitions`] restricted to `allowlist` (catalog order, each tool once);
/// names are still derived from the complete list.
pub fn to_openai_tool_definitions_filtered<S: AsRef<str>>(
    definitions: &[ToolDefinition],
    allowlist: &[S],
    options: &OpenAiExportOptions,
) -> Result<Vec<OpenAiToolDefinition>, ExportError> {
    let names = ProviderToolNames::new(definitions);
    Ok(select(definitions, allowlist)?
        .into_iter()
        .map(|definition| openai_tool(definition, &names, options))
        .collect())
}

fn openai_tool(
    definition: &ToolDefinition,
    names: &ProviderToolNames,
    options: &OpenAiExportOptions,
) -> OpenAiToolDefinition {
    let parameters = if options.strict {
        to_strict_schema(&definition.input_schema)
    } else {
        definition.input_schema.clone()
    };
    OpenAiToolDefinition {
        tool_type: "function".to_owned(),
        function: OpenAiFunction {
            name: provider_name_of(definition, names),
            description: definition.description.clone(),
            parameters,
            strict: options.strict.then_some(true),
        },
    }
}

/// An Anthropic tool: `{ name, description?, input_schema }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnthropicToolDefinition {
    /// Provider-safe name (see [`ProviderToolNames`]; Anthropic has the same name rule).
    pub name: String,
    /// The tool description; omitted when the definition has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The input schema, as is.
    pub input_schema: Value,
}

/// Anthropic tools for the whole catalog, named by [`ProviderToolNames::new`] of the same list.
pub fn to_anthropic_tool_definitions(
    definitions: &[ToolDefinition],
) -> Vec<AnthropicToolDefinition> {
    let names = ProviderToolNames::new(definitions);
    definitions
        .iter()
        .map(|definition| anthropic_tool(definition, &names))
        .collect()
}

/// [`to_anthropic_tool_definitions`] restricted to `allowlist` (catalog order, each tool once).
pub fn to_anthropic_tool_definitions_filtered<S: AsRef<str>>(
    definitions: &[ToolDefinition],
    allowlist: &[S],
) -> Result<Vec<AnthropicToolDefinition>, ExportError> {
    let names = ProviderToolNames::new(definitions);
    Ok(select(definitions, allowlist)?
        .into_iter()
        .map(|definition| anthropic_tool(definition, &names))
        .collect())
}

fn anthropic_tool(
    definition: &ToolDefinition,
    names: &ProviderToolNames,
) -> AnthropicToolDefinition {
    AnthropicToolDefinition {
        name: provider_name_of(definition, names),
        description: definition.description.clone(),
        input_schema: definition.input_schema.clone(),
    }
}

fn provider_name_of(definition: &ToolDefinition, names: &ProviderToolNames) -> String {
    // Every definition of the list is in the mapping built from that list.
    names
        .provider_name(&definition.name)
        .unwrap_or(&definition.name)
        .to_owned()
}

/// The definitions named by `allowlist`, in catalog order and each once; a name outside the
/// catalog is an error.
fn select<'a, S: AsRef<str>>(
    definitions: &'a [ToolDefinition],
    allowlist: &[S],
) -> Result<Vec<&'a ToolDefinition>, ExportError> {
    let wanted: BTreeSet<&str> = allowlist.iter().map(AsRef::as_ref).collect();
    if let Some(missing) = wanted.iter().find(|name| {
        !definitions
            .iter()
            .any(|definition| definition.name == **name)
    }) {
        return Err(ExportError::NotAvailable((*missing).to_owned()));
    }
    let mut seen = BTreeSet::new();
    Ok(definitions
        .iter()
        .filter(|definition| {
            wanted.contains(definition.name.as_str()) && seen.insert(definition.name.as_str())
        })
        .collect())
}

/// `format` values OpenAI strict mode accepts (on strings); any other `format` (`schemars`
/// writes `uint64`, `uint32`, `int64`…) is dropped, as the MCP export drops the formats its
/// clients do not know. The range such a format stands for stays as `minimum`/`maximum`.
pub const OPENAI_STRICT_FORMATS: &[&str] = &[
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

/// Keywords OpenAI strict mode accepts: the structure (`type`, `properties`, `required`,
/// `additionalProperties`, `items`, `enum`, `const`, `anyOf`, `$ref`, `$defs`), `description`,
/// and the constraints it documents as supported (strings: `pattern`, `format`; numbers:
/// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`; arrays:
/// `minItems`, `maxItems`). Every other keyword is dropped by [`to_strict_schema`].
pub const OPENAI_STRICT_KEYWORDS: &[&str] = &[
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

/// The OpenAI strict-mode form of a schema (OpenAI's Structured Outputs subset of JSON Schema):
///
/// * every object schema (one declaring `type: "object"`) lists `properties` (`{}` when it had
///   none: a map cannot be expressed), has `additionalProperties: false` and `required` naming
///   every property; a property that was optional becomes a union with `null` (`type:
///   ["integer", "null"]`, `null` added to an `enum`, or an `anyOf` branch `{"type": "null"}`);
/// * `oneOf` becomes `anyOf`, and a one-branch `allOf` (how draft-07 wraps a `$ref` that has
///   siblings) becomes a one-branch `anyOf`; a `$ref` keeps no siblings (they move beside an
///   `anyOf` around it); draft-07 `definitions` become `$defs` and their `$ref`s follow;
/// * `format` values outside [`OPENAI_STRICT_FORMATS`] and keywords outside
///   [`OPENAI_STRICT_KEYWORDS`] are dropped: `$schema`, `title`, `default`, `examples`,
///   `minLength`/`maxLength`, `uniqueItems`, `not`, `if`/`then`/`else`, several-branch
///   `allOf`, …; so is an `anyOf` beside an own `type` (a constraint on that type, such as
///   "one of these properties is required", which strict mode cannot state).
///
/// Recursion follows `properties`, `items`, `anyOf` and `$defs`, down to
/// [`MAX_STRICT_SCHEMA_DEPTH`]. The registry still validates every call against the original
/// schema, so a dropped constraint is enforced there.
///
/// Strict mode makes optional properties required: a model then sends `null` for an argument
/// it leaves out, which the original schema accepts only where it allows `null` (an `Option`
/// field does); only opt in for tools whose schemas accept that.
///
/// ```
/// use serde_json::json;
/// use tool_protocol::export::to_strict_schema;
/// let strict = to_strict_schema(&json!({
///     "$schema": "http://json-schema.org/draft-07/schema#",
///     "title": "Input",
///     "type": "object",
///     "properties": {"a": {"type": "string"}, "n": {"type": "integer", "format": "uint64", "minimum": 0, "default": null}},
///     "required": ["a"]
/// }));
/// assert_eq!(strict, json!({
///     "type": "object",
///     "properties": {"a": {"type": "string"}, "n": {"type": ["integer", "null"], "minimum": 0}},
///     "required": ["a", "n"],
///     "additionalProperties": false
/// }));
/// ```
pub fn to_strict_schema(schema: &Value) -> Value {
    strict_schema(schema, 0)
}

fn strict_schema(schema: &Value, depth: usize) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    if depth >= MAX_STRICT_SCHEMA_DEPTH {
        return schema.clone();
    }
    let typed = map.contains_key("type");
    let mut out = Map::with_capacity(map.len() + 2);
    let mut definitions: Option<Map<String, Value>> = None;
    for (key, value) in map {
        match key.as_str() {
            "properties" => {
                out.insert(key.clone(), map_values(value, depth));
            }
            "$defs" | "definitions" => {
                if let Value::Object(converted) = map_values(value, depth) {
                    definitions.get_or_insert_with(Map::new).extend(converted);
                }
            }
            "items" => {
                out.insert(key.clone(), map_items(value, depth));
            }
            "anyOf" | "oneOf" if !typed => {
                let Value::Array(branches) = map_items(value, depth) else {
                    continue;
                };
                match out.get_mut("anyOf") {
                    Some(Value::Array(existing)) => existing.extend(branches),
                    _ => {
                        out.insert("anyOf".into(), Value::Array(branches));
                    }
                }
            }
            "allOf"
                if !typed
                    && value.as_array().is_some_and(|all| all.len() == 1)
                    && !map.contains_key("anyOf")
                    && !map.contains_key("oneOf") =>
            {
                out.insert("anyOf".into(), map_items(value, depth));
            }
            // Beside an own `type`, an `allOf` of several, or a one-branch `allOf` beside an
            // `anyOf`: constraints strict mode cannot state.
            "anyOf" | "oneOf" | "allOf" => {}
            "$ref" => {
                out.insert(key.clone(), convert_ref(value));
            }
            "format"
                if !value
                    .as_str()
                    .is_some_and(|format| OPENAI_STRICT_FORMATS.contains(&format)) => {}
            "additionalProperties" | "required" => {}
            key if OPENAI_STRICT_KEYWORDS.contains(&key) => {
                out.insert(key.to_owned(), value.clone());
            }
            _ => {}
        }
    }
    if let Some(definitions) = definitions {
        out.insert("$defs".into(), Value::Object(definitions));
    }
    if declares_object_type(map) {
        let originally_required: BTreeSet<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let properties = out
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if !properties.is_object() {
            *properties = Value::Object(Map::new());
        }
        let mut required = Vec::new();
        if let Value::Object(properties) = properties {
            for (name, property) in properties.iter_mut() {
                if !originally_required.contains(name.as_str()) {
                    make_nullable(property);
                }
                required.push(Value::String(name.clone()));
            }
        }
        out.insert("required".into(), Value::Array(required));
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    if out.contains_key("$ref") && out.len() > 1 {
        let reference = out.shift_remove("$ref").unwrap_or_default();
        let branch = Value::Object(Map::from_iter([("$ref".to_owned(), reference)]));
        match out.get_mut("anyOf") {
            // `$ref` beside `anyOf`: both must hold, which strict mode cannot say; the
            // reference is the more specific of the two.
            Some(existing) => *existing = Value::Array(vec![branch]),
            None => {
                out.insert("anyOf".into(), Value::Array(vec![branch]));
            }
        }
    }
    Value::Object(out)
}

/// Makes a (converted) property schema also accept `null`, unless it already does.
fn make_nullable(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    let null = Value::String("null".into());
    match map.get_mut("type") {
        Some(Value::String(kind)) if kind == "null" => return,
        Some(Value::String(kind)) => {
            let kind = Value::String(std::mem::take(kind));
            map.insert("type".into(), Value::Array(vec![kind, null]));
            add_null_to_enum(map);
            return;
        }
        Some(Value::Array(kinds)) => {
            if !kinds.contains(&null) {
                kinds.push(null);
            }
            add_null_to_enum(map);
            return;
        }
        _ => {}
    }
    let null_branch = Value::Object(Map::from_iter([("type".to_owned(), null)]));
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        if !branches.iter().any(is_null_schema) {
            branches.push(null_branch);
        }
        return;
    }
    // An untyped schema without `anyOf` (`$ref` alone, `const`, `enum`): wrap it.
    let description = map.shift_remove("description");
    let inner = Value::Object(std::mem::take(map));
    map.insert("anyOf".into(), Value::Array(vec![inner, null_branch]));
    if let Some(description) = description {
        map.insert("description".into(), description);
    }
}

fn add_null_to_enum(map: &mut Map<String, Value>) {
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    if let Some(constant) = map.shift_remove("const") {
        map.insert("enum".into(), Value::Array(vec![constant, Value::Null]));
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type") == Some(&Value::String("null".into()))
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

/// `type: "object"` or a type list containing `"object"`. Fragments without a type (such as an
/// `anyOf` branch adding a `pattern` to one property) are constraints, not object schemas, and
/// closing them would reject valid objects.
fn declares_object_type(map: &Map<String, Value>) -> bool {
    match map.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
        _ => false,
    }
}

fn map_values(value: &Value, depth: usize) -> Value {
    match value {
        Value::Object(entries) => Value::Object(
            entries
                .iter()
                .map(|(key, item)| (key.clone(), strict_schema(item, depth + 1)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn map_items(value: &Value, depth: usize) -> Value {
    match value {
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| strict_schema(item, depth + 1))
                .collect(),
        ),
        other => strict_schema(other, depth + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str) -> ToolDefinition {
        ToolDefinition::new(name, format!("{name} tool"), json!({"type": "object"}))
    }

    #[test]
    fn valid_names_stay_and_dots_become_underscores() {
        let names = ProviderToolNames::from_names(["search_web", "workspace.readFile", "a-b"]);
        assert_eq!(names.provider_name("search_web"), Some("search_web"));
        assert_eq!(
            names.provider_name("workspace.readFile"),
            Some("workspace_readFile")
        );
        assert_eq!(names.provider_name("a-b"), Some("a-b"));
        assert_eq!(
            names.canonical_name("workspace_readFile"),
            Some("workspace.readFile")
        );
        assert_eq!(names.canonical_name("workspace.readFile"), None);
        assert_eq!(names.provider_name("missing"), None);
        assert_eq!(names.len(), 3);
    }

    #[test]
    fn colliding_names_get_distinct_hash_suffixes() {
        let names = ProviderToolNames::from_names(["a.b", "a_b", "a b"]);
        let mapped: BTreeSet<&str> = ["a.b", "a_b", "a b"]
            .iter()
            .map(|name| names.provider_name(name).unwrap())
            .collect();
        assert_eq!(mapped.len(), 3);
        for name in ["a.b", "a_b", "a b"] {
            let provider = names.provider_name(name).unwrap();
            assert!(is_valid_provider_tool_name(provider));
            assert!(
                provider.starts_with("a_b_") && provider.len() == 4 + PROVIDER_NAME_HASH_CHARS,
                "{provider}"
            );
            assert_eq!(names.canonical_name(provider), Some(name));
        }
    }

    #[test]
    fn the_mapping_ignores_order_and_duplicates() {
        let forward = ProviderToolNames::from_names(["x.y", "x_y", "z"]);
        let backward = ProviderToolNames::from_names(["z", "x_y", "x.y", "z"]);
        assert_eq!(forward, backward);
    }

    #[test]
    fn names_are_bounded_at_64_characters() {
        let at_limit = "a".repeat(64);
        let over = "a".repeat(65);
        let names = ProviderToolNames::from_names([at_limit.as_str(), over.as_str(), "", "é"]);
        assert_eq!(names.provider_name(&at_limit), Some(at_limit.as_str()));
        let long = names.provider_name(&over).unwrap();
        assert_eq!(long.len(), 64);
        assert!(is_valid_provider_tool_name(long));
        assert!(is_valid_provider_tool_name(
            names.provider_name("").unwrap()
        ));
        assert_eq!(names.provider_name("é"), Some("_"));
    }

    #[test]
    fn a_hashed_name_never_takes_an_existing_plain_name() {
        let victim = hashed_name("a.b", 0);
        let names = ProviderToolNames::from_names(["a.b", "a_b", victim.as_str()]);
        assert_eq!(names.provider_name(&victim), Some(victim.as_str()));
        assert_ne!(names.provider_name("a.b"), Some(victim.as_str()));
        assert_eq!(names.len(), 3);
        assert_eq!(names.to_canonical.len(), 3);
    }

    #[test]
    fn validity_of_provider_names() {
        assert!(is_valid_provider_tool_name("a"));
        assert!(!is_valid_provider_tool_name(""));
        assert!(!is_valid_provider_tool_name("a.b"));
        assert!(is_valid_provider_tool_name(&"z".repeat(64)));
        assert!(!is_valid_provider_tool_name(&"z".repeat(65)));
    }

    #[test]
    fn filtered_exports_follow_catalog_order_and_reject_unknown_names() {
        let catalog = [tool("b.one"), tool("a.two"), tool("c.three")];
        let picked = to_openai_tool_definitions_filtered(
            &catalog,
            &["c.three", "b.one", "c.three"],
            &OpenAiExportOptions::default(),
        )
        .unwrap();
        let names: Vec<&str> = picked
            .iter()
            .map(|tool| tool.function.name.as_str())
            .collect();
        assert_eq!(names, ["b_one", "c_three"]);
        let error =
            to_anthropic_tool_definitions_filtered(&catalog, &["a.two", "nope"]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "Tool \"nope\" is not available in registry"
        );
        assert_eq!(
            to_mcp_tools_filtered(&catalog, &["a.two"]).unwrap(),
            vec![catalog[1].clone()]
        );
        assert!(
            to_mcp_tools_filtered::<&str>(&catalog, &[])
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn filtered_names_come_from_the_complete_list() {
        let catalog = [tool("a.b"), tool("a_b")];
        let full = to_anthropic_tool_definitions(&catalog);
        let filtered = to_anthropic_tool_definitions_filtered(&catalog, &["a.b"]).unwrap();
        assert_eq!(filtered[0], full[0]);
        assert_ne!(filtered[0].name, "a_b");
    }

    #[test]
    fn plain_export_preserves_the_schema_and_omits_missing_descriptions() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"required": ["a"]}]});
        let mut definition = ToolDefinition::new("t", "d", schema.clone());
        definition.description = None;
        let openai = to_openai_tool_definitions(
            std::slice::from_ref(&definition),
            &OpenAiExportOptions::default(),
        );
        assert_eq!(
            serde_json::to_value(&openai[0]).unwrap(),
            json!({"type": "function", "function": {"name": "t", "parameters": schema}})
        );
        let anthropic = to_anthropic_tool_definitions(&[definition]);
        assert_eq!(
            serde_json::to_value(&anthropic[0]).unwrap(),
            json!({"name": "t", "input_schema": schema})
        );
    }

    #[test]
    fn strict_mode_is_recursive_and_explicit() {
        let schema = json!({
            "type": "object",
            "properties": {
                "file": {"type": "object", "properties": {"path": {"type": "string"}, "size": {"type": "integer"}}, "additionalProperties": true},
                "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
                "either": {"anyOf": [{"type": "object", "properties": {"x": {}}}, {"type": "string"}, {"properties": {"y": {}}}]}
            },
            "required": ["file"],
            "$defs": {"empty": {"type": "object"}}
        });
        let strict = to_strict_schema(&schema);
        assert_eq!(strict["required"], json!(["file", "tags", "either"]));
        assert_eq!(strict["additionalProperties"], false);
        assert_eq!(
            strict["properties"]["file"]["required"],
            json!(["path", "size"])
        );
        assert_eq!(strict["properties"]["file"]["additionalProperties"], false);
        assert_eq!(
            strict["properties"]["tags"]["items"]["required"],
            json!(["k"])
        );
        assert_eq!(
            strict["properties"]["either"]["anyOf"][0]["required"],
            json!(["x"])
        );
        assert_eq!(
            strict["properties"]["either"]["anyOf"][1],
            json!({"type": "string"})
        );
        assert_eq!(
            strict["$defs"]["empty"],
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
        );
        let definition = ToolDefinition::new("t", "d", schema.clone());
        let plain = to_openai_tool_definitions(
            std::slice::from_ref(&definition),
            &OpenAiExportOptions { strict: false },
        );
        assert_eq!(plain[0].function.parameters, schema);
        assert_eq!(plain[0].function.strict, None);
        let opted =
            to_openai_tool_definitions(&[definition], &OpenAiExportOptions { strict: true });
        assert_eq!(opted[0].function.parameters, strict);
        assert_eq!(opted[0].function.strict, Some(true));
    }

    #[test]
    fn strict_mode_is_depth_bounded() {
        let deep = (0..200).fold(
            json!({"type": "string"}),
            |inner, _| json!({"type": "object", "properties": {"n": inner}}),
        );
        let strict = to_strict_schema(&deep);
        assert_eq!(strict["additionalProperties"], false);
        let mut node = &strict;
        for _ in 0..MAX_STRICT_SCHEMA_DEPTH {
            node = &node["properties"]["n"];
        }
        assert!(node.get("additionalProperties").is_none());
    }
}
