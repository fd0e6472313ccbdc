//! Validators for untrusted JSON: the one way a model's tool call, an MCP request or a
//! provider's tool list enters the system.
//!
//! Each `parse_*` function returns the typed value, or every [`ValidationIssue`] it found, each
//! located by a JSON pointer (RFC 6901). They are total on hostile input: nested values that a
//! typed result would copy are depth-checked without recursion ([`MAX_VALIDATION_DEPTH`]),
//! issue lists are bounded ([`MAX_ISSUES`]), and nothing panics.
//!
//! The rules are those of the reference guards (`isToolCallRequest`, `isToolListRequest`,
//! `isToolListResult`, `isToolCallResult`), tightened only where a typed value needs it: optional
//! text fields of a definition must be strings and annotation hints booleans. Unknown extra
//! properties are ignored, as the reference does. The `Deserialize` impls of the request, result,
//! error and definition types are implemented here on these functions, so serde and the
//! validators never disagree.
//!
//! ```
//! use serde_json::json;
//! use tool_protocol::validate::parse_tool_call_request;
//! let request = parse_tool_call_request(&json!({
//!     "id": 0, "method": "tools/call", "params": {"name": "workspace.readFile"}
//! })).unwrap();
//! assert_eq!(request.name, "workspace.readFile");
//!
//! let issues = parse_tool_call_request(&json!({"method": "tools/call", "params": {"name": " ", "arguments": []}}))
//!     .unwrap_err();
//! assert_eq!(issues[0].pointer, "/params/name");
//! assert_eq!(issues[1].pointer, "/params/arguments");
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::ToolContent;
use crate::definition::{ToolAnnotations, ToolDefinition};
use crate::error::ToolCallError;
use crate::request::{
    StringOrNumber, TOOLS_CALL_METHOD, TOOLS_LIST_METHOD, ToolCallId, ToolCallRequest,
    ToolListRequest, ToolListResult,
};
use crate::result::{ORIGINAL_AT_META_KEY, REPLAYED_META_KEY, Replay, ToolCallResult};

mod deserialize;

pub(crate) use deserialize::deserialize_validated;

/// Deepest nesting accepted inside any value a validator copies (arguments, schemas, JSON
/// content, structured content, error details), counted in objects/arrays; matches the default
/// recursion limit of `serde_json`'s parser.
pub const MAX_VALIDATION_DEPTH: usize = 128;

/// Most issues reported by one validation; once reached, validation stops and one final issue at
/// the root says that further issues were omitted (so a list holds at most `MAX_ISSUES + 1`
/// entries).
pub const MAX_ISSUES: usize = 64;

/// One reason a value was rejected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidationIssue {
    /// JSON pointer (RFC 6901) of the offending value; `""` is the root.
    pub pointer: String,
    /// What is wrong there.
    pub message: String,
}

impl ValidationIssue {
    /// An issue at `pointer`.
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ValidationIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(f, "{pointer}: {}", self.message)
    }
}

/// All issues as one line, `"; "`-separated (for error messages).
pub fn describe_issues(issues: &[ValidationIssue]) -> String {
    issues
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Appends `token` to `pointer`, escaping `~` and `/` as RFC 6901 requires.
pub fn pointer_child(pointer: &str, token: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    out.push('/');
    for ch in token.chars() {
        match ch {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            other => out.push(other),
        }
    }
    out
}

/// Whether `value` nests objects/arrays more than `limit` levels deep (a scalar has depth 0).
/// Iterative, so it is safe on values of any depth.
pub fn exceeds_depth(value: &Value, limit: usize) -> bool {
    // Only containers go on the stack, each with its own depth (a lone container has depth 1).
    let mut stack: Vec<(&Value, usize)> = Vec::new();
    if is_container(value) {
        stack.push((value, 1));
    }
    while let Some((node, depth)) = stack.pop() {
        if depth > limit {
            return true;
        }
        let nested = |child: &&Value| is_container(child);
        match node {
            Value::Array(items) => {
                stack.extend(items.iter().filter(nested).map(|child| (child, depth + 1)))
            }
            Value::Object(map) => {
                stack.extend(map.values().filter(nested).map(|child| (child, depth + 1)))
            }
            _ => {}
        }
    }
    false
}

fn is_container(value: &Value) -> bool {
    matches!(value, Value::Array(_) | Value::Object(_))
}

/// Collects issues up to [`MAX_ISSUES`].
#[derive(Debug, Default)]
pub(crate) struct Issues {
    list: Vec<ValidationIssue>,
    omitted: bool,
}

impl Issues {
    pub(crate) fn push(&mut self, pointer: &str, message: impl Into<String>) {
        if self.list.len() < MAX_ISSUES {
            self.list.push(ValidationIssue::new(pointer, message));
        } else {
            self.omitted = true;
        }
    }

    /// Whether the limit is reached; callers then stop walking the input, and the final list
    /// says that the rest was not checked.
    pub(crate) fn is_full(&mut self) -> bool {
        let full = self.list.len() >= MAX_ISSUES;
        self.omitted |= full;
        full
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// `Ok(value)` when nothing was found, else the issues. `value` is only `None` when an
    /// issue was recorded.
    pub(crate) fn finish<T>(mut self, value: Option<T>) -> Result<T, Vec<ValidationIssue>> {
        match value {
            Some(value) if self.list.is_empty() => Ok(value),
            _ => {
                if self.list.is_empty() {
                    self.list.push(ValidationIssue::new("", "value is invalid"));
                }
                if self.omitted {
                    let note =
                        format!("issue limit of {MAX_ISSUES} reached; further issues omitted");
                    self.list.push(ValidationIssue::new("", note));
                }
                Err(self.list)
            }
        }
    }
}

pub(crate) fn as_object<'a>(
    value: &'a Value,
    pointer: &str,
    issues: &mut Issues,
) -> Option<&'a Map<String, Value>> {
    let object = value.as_object();
    if object.is_none() {
        issues.push(pointer, "must be an object");
    }
    object
}

/// A required string that is not blank after trimming.
pub(crate) fn non_blank_string(
    map: &Map<String, Value>,
    key: &str,
    pointer: &str,
    issues: &mut Issues,
) -> Option<String> {
    match map.get(key) {
        Some(Value::String(text)) if !text.trim().is_empty() => Some(text.clone()),
        _ => {
            issues.push(&pointer_child(pointer, key), "must be a non-blank string");
            None
        }
    }
}

/// An optional string: absent is `Ok(None)`, present must be a string.
pub(crate) fn optional_string(
    map: &Map<String, Value>,
    key: &str,
    pointer: &str,
    issues: &mut Issues,
) -> Result<Option<String>, ()> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => {
            issues.push(
                &pointer_child(pointer, key),
                "must be a string when present",
            );
            Err(())
        }
    }
}

/// An optional boolean: absent is `Ok(None)`, present must be a boolean.
pub(crate) fn optional_bool(
    map: &Map<String, Value>,
    key: &str,
    pointer: &str,
    issues: &mut Issues,
) -> Result<Option<bool>, ()> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::Bool(flag)) => Ok(Some(*flag)),
        Some(_) => {
            issues.push(
                &pointer_child(pointer, key),
                "must be a boolean when present",
            );
            Err(())
        }
    }
}

/// The method field must equal `expected`.
fn expect_method(map: &Map<String, Value>, expected: &str, issues: &mut Issues) {
    if map.get("method").and_then(Value::as_str) != Some(expected) {
        issues.push("/method", format!("must be \"{expected}\""));
    }
}

/// A copy of a nested value, refused when it is nested deeper than [`MAX_VALIDATION_DEPTH`].
pub(crate) fn bounded_clone(value: &Value, pointer: &str, issues: &mut Issues) -> Option<Value> {
    if exceeds_depth(value, MAX_VALIDATION_DEPTH) {
        issues.push(
            pointer,
            format!("nests deeper than {MAX_VALIDATION_DEPTH} levels"),
        );
        return None;
    }
    Some(value.clone())
}

fn depth_message() -> String {
    format!("nests deeper than {MAX_VALIDATION_DEPTH} levels")
}

/// A tool call id: a string or a (finite) number. JSON numbers are always finite; `null`,
/// booleans, arrays and objects are rejected.
pub(crate) fn tool_call_id(
    value: &Value,
    pointer: &str,
    issues: &mut Issues,
) -> Option<ToolCallId> {
    match value {
        Value::String(text) => Some(StringOrNumber::String(text.clone())),
        Value::Number(number) => Some(StringOrNumber::Number(number.clone())),
        _ => {
            issues.push(pointer, "must be a string or a finite number");
            None
        }
    }
}

/// An optional id field: absent is `Ok(None)`.
pub(crate) fn optional_tool_call_id(
    map: &Map<String, Value>,
    key: &str,
    pointer: &str,
    issues: &mut Issues,
) -> Result<Option<ToolCallId>, ()> {
    match map.get(key) {
        None => Ok(None),
        Some(value) => tool_call_id(value, &pointer_child(pointer, key), issues)
            .map(Some)
            .ok_or(()),
    }
}

/// Validates a `tools/call` request (CONTRACT 2.5 `isToolCallRequest`): an object with
/// `method: "tools/call"`, `params` an object with a non-blank string `name`, `id` absent or a
/// string or finite number (`null` is rejected), and `arguments` absent or a plain object.
pub fn parse_tool_call_request(value: &Value) -> Result<ToolCallRequest, Vec<ValidationIssue>> {
    let mut issues = Issues::default();
    let request = tool_call_request(value, &mut issues);
    issues.finish(request)
}

fn tool_call_request(value: &Value, issues: &mut Issues) -> Option<ToolCallRequest> {
    let root = as_object(value, "", issues)?;
    expect_method(root, TOOLS_CALL_METHOD, issues);
    let id = optional_tool_call_id(root, "id", "", issues);
    let Some(params) = root.get("params").and_then(Value::as_object) else {
        issues.push("/params", "must be an object");
        return None;
    };
    let name = non_blank_string(params, "name", "/params", issues);
    let arguments = match params.get("arguments") {
        None => Ok(None),
        Some(value @ Value::Object(map)) => {
            if exceeds_depth(value, MAX_VALIDATION_DEPTH) {
                issues.push("/params/arguments", depth_message());
                Err(())
            } else {
                Ok(Some(map.clone()))
            }
        }
        Some(_) => {
            issues.push("/params/arguments", "must be a plain object when present");
            Err(())
        }
    };
    Some(ToolCallRequest {
        id: id.ok()?,
        name: name?,
        arguments: arguments.ok()?,
    })
}

/// Message of the error for a request that fails [`parse_tool_call_request`].
pub const INVALID_TOOL_CALL_REQUEST_MESSAGE: &str = "Invalid tools/call request.";

/// The `TOOL_VALIDATION_FAILED` error for a request that fails [`parse_tool_call_request`],
/// with the issues under `details.issues`.
///
/// ```
/// use serde_json::json;
/// use tool_protocol::validate::{invalid_tool_call_request_error, parse_tool_call_request};
/// let issues = parse_tool_call_request(&json!({"method": "tools/call"})).unwrap_err();
/// let error = invalid_tool_call_request_error(&issues);
/// assert_eq!(error.code, "TOOL_VALIDATION_FAILED");
/// assert_eq!(error.details.unwrap()["issues"][0]["pointer"], "/params");
/// ```
pub fn invalid_tool_call_request_error(issues: &[ValidationIssue]) -> ToolCallError {
    let issues: Vec<Value> = issues
        .iter()
        .map(|issue| serde_json::json!({"pointer": issue.pointer, "message": issue.message}))
        .collect();
    ToolCallError::canonical(
        crate::codes::TOOL_VALIDATION_FAILED,
        INVALID_TOOL_CALL_REQUEST_MESSAGE,
    )
    .with_details(serde_json::json!({ "issues": issues }))
}

/// Validates an optional `tools/list` request (CONTRACT 2.5 `isToolListRequest`). `None` means
/// no request was sent and yields `Ok(None)`; a present value (JSON `null` included) must be an
/// object with `method: "tools/list"` and `params` absent or an object whose `cursor` is absent
/// or a string.
pub fn parse_tool_list_request(
    value: Option<&Value>,
) -> Result<Option<ToolListRequest>, Vec<ValidationIssue>> {
    let Some(value) = value else { return Ok(None) };
    let mut issues = Issues::default();
    let request = tool_list_request(value, &mut issues);
    issues.finish(request).map(Some)
}

fn tool_list_request(value: &Value, issues: &mut Issues) -> Option<ToolListRequest> {
    let root = as_object(value, "", issues)?;
    expect_method(root, TOOLS_LIST_METHOD, issues);
    let cursor = match root.get("params") {
        None => None,
        Some(Value::Object(params)) => optional_string(params, "cursor", "/params", issues).ok()?,
        Some(_) => {
            issues.push("/params", "must be an object when present");
            return None;
        }
    };
    issues.is_empty().then_some(ToolListRequest { cursor })
}

/// Validates one `tools/list` result page (CONTRACT 2.5 `isToolListResult`): an object with a
/// `tools` array of valid definitions (see [`parse_tool_definition`]) and `nextCursor` absent or
/// a string.
pub fn parse_tool_list_result(value: &Value) -> Result<ToolListResult, Vec<ValidationIssue>> {
    let mut issues = Issues::default();
    let result = tool_list_result(value, &mut issues);
    issues.finish(result)
}

fn tool_list_result(value: &Value, issues: &mut Issues) -> Option<ToolListResult> {
    let root = as_object(value, "", issues)?;
    let next_cursor = optional_string(root, "nextCursor", "", issues);
    let Some(items) = root.get("tools").and_then(Value::as_array) else {
        issues.push("/tools", "must be an array");
        return None;
    };
    let mut tools = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        if issues.is_full() {
            break;
        }
        if let Some(tool) =
            tool_definition(item, &pointer_child("/tools", &index.to_string()), issues)
        {
            tools.push(tool);
        }
    }
    let next_cursor = next_cursor.ok()?;
    issues
        .is_empty()
        .then_some(ToolListResult { tools, next_cursor })
}

/// Validates one tool definition: an object with a non-blank string `name` and an object
/// `inputSchema`; `title`/`description` strings, `outputSchema` an object and `annotations` an
/// object of string `title` and boolean hints, each when present.
pub fn parse_tool_definition(value: &Value) -> Result<ToolDefinition, Vec<ValidationIssue>> {
    let mut issues = Issues::default();
    let definition = tool_definition(value, "", &mut issues);
    issues.finish(definition)
}

fn tool_definition(value: &Value, pointer: &str, issues: &mut Issues) -> Option<ToolDefinition> {
    let map = as_object(value, pointer, issues)?;
    let name = non_blank_string(map, "name", pointer, issues);
    let title = optional_string(map, "title", pointer, issues);
    let description = optional_string(map, "description", pointer, issues);
    let input_schema = schema(
        map.get("inputSchema"),
        &pointer_child(pointer, "inputSchema"),
        issues,
    );
    let output_schema = match map.get("outputSchema") {
        None => Ok(None),
        present => schema(present, &pointer_child(pointer, "outputSchema"), issues)
            .map(Some)
            .ok_or(()),
    };
    let annotations = match map.get("annotations") {
        None => Ok(None),
        Some(value) => tool_annotations(value, &pointer_child(pointer, "annotations"), issues)
            .map(Some)
            .ok_or(()),
    };
    Some(ToolDefinition {
        name: name?,
        title: title.ok()?,
        description: description.ok()?,
        input_schema: input_schema?,
        output_schema: output_schema.ok()?,
        annotations: annotations.ok()?,
    })
}

/// A JSON Schema that must be an object (root schemas of tools are always objects).
fn schema(value: Option<&Value>, pointer: &str, issues: &mut Issues) -> Option<Value> {
    match value {
        Some(schema @ Value::Object(_)) => bounded_clone(schema, pointer, issues),
        _ => {
            issues.push(pointer, "must be a JSON Schema object");
            None
        }
    }
}

fn tool_annotations(value: &Value, pointer: &str, issues: &mut Issues) -> Option<ToolAnnotations> {
    let map = as_object(value, pointer, issues)?;
    let title = optional_string(map, "title", pointer, issues);
    let mut hint = |key| optional_bool(map, key, pointer, issues);
    let read_only_hint = hint("readOnlyHint");
    let destructive_hint = hint("destructiveHint");
    let idempotent_hint = hint("idempotentHint");
    let open_world_hint = hint("openWorldHint");
    let untrusted_content_hint = hint("untrustedContentHint");
    Some(ToolAnnotations {
        title: title.ok()?,
        read_only_hint: read_only_hint.ok()?,
        destructive_hint: destructive_hint.ok()?,
        idempotent_hint: idempotent_hint.ok()?,
        open_world_hint: open_world_hint.ok()?,
        untrusted_content_hint: untrusted_content_hint.ok()?,
    })
}

/// Validates a `tools/call` result (CONTRACT 2.5 `isToolCallResult`): an object with a
/// `content` array of `{type: "text", text: string}` or `{type: "json", json}` blocks (the
/// `json` property must exist; its value may be `null`), `toolCallId` a valid id, `isError` a
/// boolean and `error` a valid [`ToolCallError`] when present, and `error` present exactly when
/// `isError` is `true`.
pub fn parse_tool_call_result(value: &Value) -> Result<ToolCallResult, Vec<ValidationIssue>> {
    let mut issues = Issues::default();
    let result = tool_call_result(value, &mut issues);
    issues.finish(result)
}

fn tool_call_result(value: &Value, issues: &mut Issues) -> Option<ToolCallResult> {
    let root = as_object(value, "", issues)?;
    let tool_call_id = optional_tool_call_id(root, "toolCallId", "", issues);
    let is_error = optional_bool(root, "isError", "", issues);
    let error = match root.get("error") {
        None => Ok(None),
        Some(value) => tool_call_error(value, "/error", issues).map(Some).ok_or(()),
    };
    match (is_error, root.contains_key("error")) {
        (Ok(Some(true)), false) => issues.push("/error", "must be present when isError is true"),
        (Ok(None | Some(false)), true) => {
            issues.push("/isError", "must be true when error is present")
        }
        _ => {}
    }
    let structured_content = match root.get("structuredContent") {
        None => Ok(None),
        Some(value) => bounded_clone(value, "/structuredContent", issues)
            .map(Some)
            .ok_or(()),
    };
    let content = content_blocks(root.get("content"), issues);
    let replay = result_replay(root.get("_meta"), issues);
    Some(ToolCallResult {
        tool_call_id: tool_call_id.ok()?,
        content: content?,
        structured_content: structured_content.ok()?,
        error: error.ok()?,
        replay: replay.ok()?,
    })
}

/// The replay marker of a result's `_meta` (other `_meta` keys are ignored): `replayed` a
/// boolean and `originalAt` a non-negative integer when present.
fn result_replay(meta: Option<&Value>, issues: &mut Issues) -> Result<Option<Replay>, ()> {
    let Some(meta) = meta else {
        return Ok(None);
    };
    let Some(meta) = as_object(meta, "/_meta", issues) else {
        return Err(());
    };
    let replayed = optional_bool(meta, REPLAYED_META_KEY, "/_meta", issues)?;
    let original_at = match meta.get(ORIGINAL_AT_META_KEY) {
        None => None,
        Some(at) => match at.as_u64() {
            Some(at) => Some(at),
            None => {
                issues.push("/_meta/originalAt", "must be a non-negative integer");
                return Err(());
            }
        },
    };
    Ok((replayed == Some(true)).then(|| Replay::new(original_at)))
}

fn content_blocks(value: Option<&Value>, issues: &mut Issues) -> Option<Vec<ToolContent>> {
    let Some(items) = value.and_then(Value::as_array) else {
        issues.push("/content", "must be an array");
        return None;
    };
    let mut blocks = Vec::with_capacity(items.len());
    let mut valid = true;
    for (index, item) in items.iter().enumerate() {
        if issues.is_full() {
            return None;
        }
        match content_block(item, &pointer_child("/content", &index.to_string()), issues) {
            Some(block) => blocks.push(block),
            None => valid = false,
        }
    }
    valid.then_some(blocks)
}

fn content_block(value: &Value, pointer: &str, issues: &mut Issues) -> Option<ToolContent> {
    let map = as_object(value, pointer, issues)?;
    match map.get("type").and_then(Value::as_str) {
        Some("text") => match map.get("text") {
            Some(Value::String(text)) => Some(ToolContent::Text { text: text.clone() }),
            _ => {
                issues.push(&pointer_child(pointer, "text"), "must be a string");
                None
            }
        },
        Some("json") => match map.get("json") {
            Some(json) => bounded_clone(json, &pointer_child(pointer, "json"), issues)
                .map(|json| ToolContent::Json { json }),
            None => {
                issues.push(
                    &pointer_child(pointer, "json"),
                    "must be present (null is allowed)",
                );
                None
            }
        },
        _ => {
            issues.push(
                &pointer_child(pointer, "type"),
                "must be \"text\" or \"json\"",
            );
            None
        }
    }
}

/// Validates a [`ToolCallError`]: an object with non-blank string `code` and `message`,
/// `retryable` a boolean when present and any `details` (an explicit `null` is kept).
pub fn parse_tool_call_error(value: &Value) -> Result<ToolCallError, Vec<ValidationIssue>> {
    let mut issues = Issues::default();
    let error = tool_call_error(value, "", &mut issues);
    issues.finish(error)
}

fn tool_call_error(value: &Value, pointer: &str, issues: &mut Issues) -> Option<ToolCallError> {
    let map = as_object(value, pointer, issues)?;
    let code = non_blank_string(map, "code", pointer, issues);
    let message = non_blank_string(map, "message", pointer, issues);
    let retryable = optional_bool(map, "retryable", pointer, issues);
    let details = match map.get("details") {
        None => Ok(None),
        Some(value) => bounded_clone(value, &pointer_child(pointer, "details"), issues)
            .map(Some)
            .ok_or(()),
    };
    Some(ToolCallError {
        code: code?,
        message: message?,
        retryable: retryable.ok()?,
        details: details.ok()?,
    })
}

/// Checks a typed page against the same rules as [`parse_tool_list_result`]: typed values can
/// still carry a blank name or a non-object schema.
pub fn check_tool_list_result(page: &ToolListResult) -> Result<(), Vec<ValidationIssue>> {
    let mut issues = Issues::default();
    for (index, tool) in page.tools.iter().enumerate() {
        if issues.is_full() {
            break;
        }
        let pointer = pointer_child("/tools", &index.to_string());
        if tool.name.trim().is_empty() {
            issues.push(
                &pointer_child(&pointer, "name"),
                "must be a non-blank string",
            );
        }
        if !tool.input_schema.is_object() {
            issues.push(
                &pointer_child(&pointer, "inputSchema"),
                "must be a JSON Schema object",
            );
        }
        if tool
            .output_schema
            .as_ref()
            .is_some_and(|schema| !schema.is_object())
        {
            issues.push(
                &pointer_child(&pointer, "outputSchema"),
                "must be a JSON Schema object",
            );
        }
    }
    issues.finish(Some(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pointers(issues: &[ValidationIssue]) -> Vec<&str> {
        issues.iter().map(|issue| issue.pointer.as_str()).collect()
    }

    fn nested_arrays(levels: usize) -> Value {
        (0..levels).fold(Value::Null, |inner, _| Value::Array(vec![inner]))
    }

    #[test]
    fn call_request_accepts_the_documented_shapes() {
        let full = json!({"id": "c1", "method": "tools/call", "params": {"name": "t", "arguments": {"a": 1}}});
        let request = parse_tool_call_request(&full).unwrap();
        assert_eq!(request.id, Some("c1".into()));
        assert_eq!(request.arguments.unwrap()["a"], 1);
        let minimal =
            parse_tool_call_request(&json!({"method": "tools/call", "params": {"name": "t"}}))
                .unwrap();
        assert_eq!((minimal.id, minimal.arguments), (None, None));
        assert_eq!(
            parse_tool_call_request(
                &json!({"id": 0, "method": "tools/call", "params": {"name": "t"}})
            )
            .unwrap()
            .id,
            Some(0u64.into())
        );
        let float = parse_tool_call_request(
            &json!({"id": -1.5, "method": "tools/call", "params": {"name": "t"}}),
        )
        .unwrap();
        assert_eq!(float.id.unwrap().to_string(), "-1.5");
        let extra =
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "t", "_meta": {}}});
        assert!(parse_tool_call_request(&extra).is_ok());
    }

    #[test]
    fn call_request_rejects_each_rule_with_a_pointer() {
        let cases = [
            (json!(null), ""),
            (json!([]), ""),
            (
                json!({"method": "tools/list", "params": {"name": "t"}}),
                "/method",
            ),
            (json!({"params": {"name": "t"}}), "/method"),
            (json!({"method": "tools/call"}), "/params"),
            (json!({"method": "tools/call", "params": []}), "/params"),
            (
                json!({"method": "tools/call", "params": {"name": ""}}),
                "/params/name",
            ),
            (
                json!({"method": "tools/call", "params": {"name": " \t"}}),
                "/params/name",
            ),
            (
                json!({"method": "tools/call", "params": {"name": 3}}),
                "/params/name",
            ),
            (
                json!({"id": null, "method": "tools/call", "params": {"name": "t"}}),
                "/id",
            ),
            (
                json!({"id": true, "method": "tools/call", "params": {"name": "t"}}),
                "/id",
            ),
            (
                json!({"id": {}, "method": "tools/call", "params": {"name": "t"}}),
                "/id",
            ),
            (
                json!({"method": "tools/call", "params": {"name": "t", "arguments": []}}),
                "/params/arguments",
            ),
            (
                json!({"method": "tools/call", "params": {"name": "t", "arguments": null}}),
                "/params/arguments",
            ),
            (
                json!({"method": "tools/call", "params": {"name": "t", "arguments": "{}"}}),
                "/params/arguments",
            ),
        ];
        for (value, pointer) in cases {
            let issues = parse_tool_call_request(&value).unwrap_err();
            assert_eq!(pointers(&issues), [pointer], "{value}");
        }
    }

    #[test]
    fn all_issues_are_reported_together() {
        let issues = parse_tool_call_request(
            &json!({"id": null, "method": 1, "params": {"name": "", "arguments": 1}}),
        )
        .unwrap_err();
        assert_eq!(
            pointers(&issues),
            ["/method", "/id", "/params/name", "/params/arguments"]
        );
    }

    #[test]
    fn argument_depth_is_bounded_at_the_edge() {
        let call = |arguments: Value| json!({"method": "tools/call", "params": {"name": "t", "arguments": arguments}});
        let at_limit = json!({"a": nested_arrays(MAX_VALIDATION_DEPTH - 1)});
        assert!(parse_tool_call_request(&call(at_limit)).is_ok());
        let over = json!({"a": nested_arrays(MAX_VALIDATION_DEPTH)});
        let issues = parse_tool_call_request(&call(over)).unwrap_err();
        assert_eq!(pointers(&issues), ["/params/arguments"]);
        assert!(issues[0].message.contains("128"));
    }

    #[test]
    fn depth_counts_containers_only() {
        assert!(!exceeds_depth(&json!(1), 0));
        assert!(exceeds_depth(&json!([]), 0));
        assert!(!exceeds_depth(&json!({"a": [1]}), 2));
        assert!(exceeds_depth(&json!({"a": [[1]]}), 2));
    }

    #[test]
    fn list_request_absent_is_no_request_and_null_is_rejected() {
        assert_eq!(parse_tool_list_request(None), Ok(None));
        assert_eq!(
            pointers(&parse_tool_list_request(Some(&Value::Null)).unwrap_err()),
            [""]
        );
        assert_eq!(
            parse_tool_list_request(Some(&json!({"method": "tools/list"}))),
            Ok(Some(ToolListRequest::default()))
        );
        assert_eq!(
            parse_tool_list_request(Some(
                &json!({"method": "tools/list", "params": {"cursor": "offset:2"}})
            )),
            Ok(Some(ToolListRequest::after("offset:2")))
        );
        assert_eq!(
            parse_tool_list_request(Some(&json!({"method": "tools/list", "params": {}}))),
            Ok(Some(ToolListRequest::default()))
        );
        let cases = [
            (json!({"method": "tools/call"}), "/method"),
            (json!({"method": "tools/list", "params": null}), "/params"),
            (json!({"method": "tools/list", "params": "x"}), "/params"),
            (
                json!({"method": "tools/list", "params": {"cursor": 2}}),
                "/params/cursor",
            ),
            (
                json!({"method": "tools/list", "params": {"cursor": null}}),
                "/params/cursor",
            ),
        ];
        for (value, pointer) in cases {
            assert_eq!(
                pointers(&parse_tool_list_request(Some(&value)).unwrap_err()),
                [pointer],
                "{value}"
            );
        }
    }

    #[test]
    fn list_result_checks_every_tool() {
        let page = json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "nextCursor": "offset:1"});
        let parsed = parse_tool_list_result(&page).unwrap();
        assert_eq!(parsed.tools[0].name, "a");
        assert_eq!(parsed.next_cursor.as_deref(), Some("offset:1"));
        assert!(parse_tool_list_result(&json!({"tools": []})).is_ok());
        let cases = [
            (json!({}), vec!["/tools"]),
            (json!({"tools": {}}), vec!["/tools"]),
            (json!({"tools": [], "nextCursor": 1}), vec!["/nextCursor"]),
            (json!({"tools": [1]}), vec!["/tools/0"]),
            (
                json!({"tools": [{"name": " ", "inputSchema": {}}]}),
                vec!["/tools/0/name"],
            ),
            (
                json!({"tools": [{"name": "a"}]}),
                vec!["/tools/0/inputSchema"],
            ),
            (
                json!({"tools": [{"name": "a", "inputSchema": true}]}),
                vec!["/tools/0/inputSchema"],
            ),
            (
                json!({"tools": [{"name": "a", "inputSchema": {}, "outputSchema": []}]}),
                vec!["/tools/0/outputSchema"],
            ),
            (
                json!({"tools": [{"name": "a", "inputSchema": {}, "description": 1}]}),
                vec!["/tools/0/description"],
            ),
            (
                json!({"tools": [{"name": "a", "inputSchema": {}, "title": null}]}),
                vec!["/tools/0/title"],
            ),
            (
                json!({"tools": [{"name": "a", "inputSchema": {}, "annotations": []}]}),
                vec!["/tools/0/annotations"],
            ),
            (
                json!({"tools": [{"name": "a", "inputSchema": {}, "annotations": {"readOnlyHint": "yes"}}]}),
                vec!["/tools/0/annotations/readOnlyHint"],
            ),
            (
                json!({"tools": [{"name": "a", "inputSchema": {}}, {"name": "", "inputSchema": {}}]}),
                vec!["/tools/1/name"],
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(
                pointers(&parse_tool_list_result(&value).unwrap_err()),
                expected,
                "{value}"
            );
        }
    }

    #[test]
    fn issue_lists_are_bounded() {
        let tools: Vec<Value> = (0..500).map(|_| json!({"name": ""})).collect();
        let issues = parse_tool_list_result(&json!({"tools": tools})).unwrap_err();
        assert_eq!(issues.len(), MAX_ISSUES + 1);
        assert!(
            issues[MAX_ISSUES]
                .message
                .contains("further issues omitted")
        );
        let exactly: Vec<Value> = (0..MAX_ISSUES).map(|_| json!(1)).collect();
        assert_eq!(
            parse_tool_list_result(&json!({"tools": exactly}))
                .unwrap_err()
                .len(),
            MAX_ISSUES
        );
    }

    #[test]
    fn call_result_rules() {
        let ok = json!({"toolCallId": 4, "content": [{"type": "text", "text": "a"}, {"type": "json", "json": null}], "structuredContent": null});
        let result = parse_tool_call_result(&ok).unwrap();
        assert_eq!(result.content[1], ToolContent::json(Value::Null));
        assert_eq!(result.structured_content, Some(Value::Null));
        let failed = json!({"content": [], "isError": true, "error": {"code": "X", "message": "m", "retryable": false, "details": null}});
        let error = parse_tool_call_result(&failed).unwrap().error.unwrap();
        assert_eq!(
            (error.retryable, error.details),
            (Some(false), Some(Value::Null))
        );
        assert!(parse_tool_call_result(&json!({"content": [], "isError": false})).is_ok());
        let cases = [
            (json!({}), vec!["/content"]),
            (json!({"content": {}}), vec!["/content"]),
            (
                json!({"content": [], "toolCallId": null}),
                vec!["/toolCallId"],
            ),
            (
                json!({"content": [], "isError": "true", "error": {"code": "X", "message": "m"}}),
                vec!["/isError"],
            ),
            (json!({"content": [], "isError": true}), vec!["/error"]),
            (
                json!({"content": [], "error": {"code": "X", "message": "m"}}),
                vec!["/isError"],
            ),
            (
                json!({"content": [], "isError": false, "error": {"code": "X", "message": "m"}}),
                vec!["/isError"],
            ),
            (
                json!({"content": [], "isError": true, "error": {"code": " ", "message": "m"}}),
                vec!["/error/code"],
            ),
            (
                json!({"content": [], "isError": true, "error": {"code": "X", "message": ""}}),
                vec!["/error/message"],
            ),
            (
                json!({"content": [], "isError": true, "error": {"code": "X", "message": "m", "retryable": 1}}),
                vec!["/error/retryable"],
            ),
            (
                json!({"content": [], "isError": true, "error": "X"}),
                vec!["/error"],
            ),
            (
                json!({"content": [{"type": "json"}]}),
                vec!["/content/0/json"],
            ),
            (
                json!({"content": [{"type": "text"}]}),
                vec!["/content/0/text"],
            ),
            (
                json!({"content": [{"type": "text", "text": 1}]}),
                vec!["/content/0/text"],
            ),
            (
                json!({"content": [{"type": "image", "data": ""}]}),
                vec!["/content/0/type"],
            ),
            (json!({"content": ["text"]}), vec!["/content/0"]),
        ];
        for (value, expected) in cases {
            assert_eq!(
                pointers(&parse_tool_call_result(&value).unwrap_err()),
                expected,
                "{value}"
            );
        }
    }

    #[test]
    fn nested_payloads_of_results_are_depth_bounded() {
        let deep = nested_arrays(MAX_VALIDATION_DEPTH + 1);
        let json_block = json!({"content": [{"type": "json", "json": deep}]});
        assert_eq!(
            pointers(&parse_tool_call_result(&json_block).unwrap_err()),
            ["/content/0/json"]
        );
        let structured = json!({"content": [], "structuredContent": deep});
        assert_eq!(
            pointers(&parse_tool_call_result(&structured).unwrap_err()),
            ["/structuredContent"]
        );
        let details = json!({"content": [], "isError": true, "error": {"code": "X", "message": "m", "details": deep}});
        assert_eq!(
            pointers(&parse_tool_call_result(&details).unwrap_err()),
            ["/error/details"]
        );
    }

    #[test]
    fn pointers_escape_tilde_and_slash() {
        assert_eq!(pointer_child("/a", "b/c~d"), "/a/b~1c~0d");
        assert_eq!(ValidationIssue::new("", "m").to_string(), "(root): m");
        assert_eq!(
            describe_issues(&[
                ValidationIssue::new("/a", "x"),
                ValidationIssue::new("/b", "y")
            ]),
            "/a: x; /b: y"
        );
    }

    #[test]
    fn typed_pages_are_checked_like_wire_pages() {
        let mut page = ToolListResult {
            tools: vec![ToolDefinition::new("a", "d", json!({}))],
            next_cursor: None,
        };
        assert!(check_tool_list_result(&page).is_ok());
        page.tools[0].name = " ".into();
        page.tools[0].input_schema = json!(true);
        assert_eq!(
            pointers(&check_tool_list_result(&page).unwrap_err()),
            ["/tools/0/name", "/tools/0/inputSchema"]
        );
    }
}
