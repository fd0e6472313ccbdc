//! Canonical tool definitions and results in MCP shape.
//!
//! # Results
//!
//! A success keeps its content blocks (text as is, JSON blocks as their compact JSON text,
//! since MCP has no JSON block) and its `structuredContent`, which the registry has already
//! checked against the tool's `outputSchema`.
//!
//! A failure is `isError: true` with no `structuredContent` (clients such as the TypeScript SDK
//! check any `structuredContent` against the tool's `outputSchema`, which describes successes
//! only). The coded error travels twice: as a second text block (its compact JSON, so a model
//! reads the code and details) and in `_meta` under [`ERROR_META_KEY`] (for programs):
//!
//! ```json
//! {
//!   "content": [
//!     {"type": "text", "text": "Workspace revision mismatch: expected 3, current 4. ..."},
//!     {"type": "text", "text": "{\"error\":{\"code\":\"WORKSPACE_REVISION_CONFLICT\",...}}"}
//!   ],
//!   "isError": true,
//!   "_meta": {
//!     "tool-context/error": {
//!       "code": "WORKSPACE_REVISION_CONFLICT",
//!       "message": "Workspace revision mismatch: expected 3, current 4. ...",
//!       "retryable": true,
//!       "details": {"expectedRevision": 3, "currentRevision": 4}
//!     }
//!   }
//! }
//! ```
//!
//! `retryable` and `details` are present exactly when the registry set them.
//!
//! A result that replays an earlier execution of the same operation (an idempotent retry)
//! carries `_meta["tool-context/replay"]: {"replayed": true, "originalAt"?: ms}`, success or
//! failure: nothing ran for this call.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use tool_protocol::{ToolCallResult, ToolDefinition, stringify_tool_content_block};

use crate::schema::to_json_schema_2020_12;

/// Key of the coded error in the JSON text block of an error result.
pub const ERROR_KEY: &str = "error";
/// `_meta` key of the coded error of an error result.
pub const ERROR_META_KEY: &str = "tool-context/error";
/// The `_meta` key of a replayed result's marker.
pub const REPLAY_META_KEY: &str = "tool-context/replay";

/// A canonical definition as an MCP tool: name, title (the definition's, else the
/// annotations'), description, 2020-12 `inputSchema` and `outputSchema`, and annotations.
///
/// `untrustedContentHint` has no MCP annotation and is not exported.
///
/// ```
/// use serde_json::json;
/// use tool_context_mcp::convert::mcp_tool;
/// use tool_protocol::ToolDefinition;
/// let tool = mcp_tool(&ToolDefinition::new("fs.read", "Reads a file.", json!({"type": "object"})));
/// assert_eq!(tool.name, "fs.read");
/// assert_eq!(tool.input_schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
/// ```
pub fn mcp_tool(definition: &ToolDefinition) -> Tool {
    let mut tool = Tool::new_with_raw(
        definition.name.clone(),
        definition.description.clone().map(Cow::Owned),
        Arc::new(schema_object(&definition.input_schema)),
    );
    let annotations = definition.annotations.as_ref();
    let title = definition
        .title
        .clone()
        .or_else(|| annotations.and_then(|a| a.title.clone()));
    if let Some(title) = &title {
        tool = tool.with_title(title.clone());
    }
    if let Some(output) = &definition.output_schema {
        tool = tool.with_raw_output_schema(Arc::new(schema_object(output)));
    }
    if let Some(annotations) = annotations {
        tool = tool.with_annotations(ToolAnnotations::from_raw(
            title,
            annotations.read_only_hint,
            annotations.destructive_hint,
            annotations.idempotent_hint,
            annotations.open_world_hint,
        ));
    }
    tool
}

/// A schema as the JSON object MCP carries (a boolean schema becomes `{}` or `{"not": {}}`).
fn schema_object(schema: &Value) -> JsonObject {
    match to_json_schema_2020_12(schema) {
        Value::Object(object) => object,
        Value::Bool(false) => json!({"not": {}}).as_object().cloned().unwrap_or_default(),
        _ => JsonObject::new(),
    }
}

/// A canonical result as an MCP `CallToolResult` (see the module docs for the error shape).
///
/// ```
/// use serde_json::json;
/// use tool_context_mcp::convert::mcp_result;
/// use tool_protocol::{ToolCallError, ToolCallResult};
/// let failed = mcp_result(ToolCallResult::failure(
///     ToolCallError::new("TOOL_TIMEOUT", "Tool call timed out after 5ms.").with_retryable(true),
/// ));
/// assert_eq!(failed.is_error, Some(true));
/// assert_eq!(failed.structured_content, None);
/// assert_eq!(failed.meta.unwrap().0["tool-context/error"], json!({
///     "code": "TOOL_TIMEOUT", "message": "Tool call timed out after 5ms.", "retryable": true
/// }));
/// ```
pub fn mcp_result(result: ToolCallResult) -> CallToolResult {
    let replay = result.replay.map(replay_marker);
    let mut converted = mcp_outcome(result);
    if let Some(marker) = replay {
        converted
            .meta
            .get_or_insert_with(MetaObject::new)
            .0
            .insert(REPLAY_META_KEY.to_owned(), marker);
    }
    converted
}

/// The replay marker as MCP carries it.
fn replay_marker(replay: tool_protocol::Replay) -> Value {
    let mut marker = json!({ "replayed": true });
    if let Some(at) = replay.original_at {
        marker["originalAt"] = Value::from(at);
    }
    marker
}

/// The success or failure itself (see [`mcp_result`]).
fn mcp_outcome(result: ToolCallResult) -> CallToolResult {
    let content: Vec<ContentBlock> = result
        .content
        .iter()
        .map(|block| ContentBlock::text(stringify_tool_content_block(block)))
        .collect();
    match result.error {
        None => {
            let mut converted = CallToolResult::success(content);
            // MCP's `structuredContent` is a JSON object (clients validate it as one): a
            // scalar or array value travels as its text content only.
            converted.structured_content = result.structured_content.filter(Value::is_object);
            converted
        }
        Some(error) => {
            let coded = json!(error);
            let mut content = content;
            content.push(ContentBlock::text(json!({ ERROR_KEY: coded }).to_string()));
            let mut converted = CallToolResult::error(content);
            let mut meta = MetaObject::new();
            meta.0.insert(ERROR_META_KEY.to_owned(), coded);
            converted.meta = Some(meta);
            converted
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_protocol::{ToolAnnotations as Hints, ToolCallError, ToolContent};

    #[test]
    fn definitions_keep_title_schemas_and_annotations() {
        let mut definition = ToolDefinition::new(
            "workspace.readFile",
            "Reads a file.",
            json!({
                "$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                "properties": {"path": {"type": "string"}}, "required": ["path"]
            }),
        );
        definition.output_schema =
            Some(json!({"type": "object", "definitions": {"A": {"type": "string"}}}));
        definition.annotations = Some(Hints {
            title: Some("Read file".into()),
            read_only_hint: Some(true),
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            open_world_hint: Some(false),
            untrusted_content_hint: Some(true),
        });
        let tool = serde_json::to_value(mcp_tool(&definition)).unwrap();
        assert_eq!(tool["name"], "workspace.readFile");
        assert_eq!(tool["title"], "Read file");
        assert_eq!(tool["description"], "Reads a file.");
        assert_eq!(tool["inputSchema"]["required"], json!(["path"]));
        assert_eq!(
            tool["inputSchema"]["$schema"],
            crate::schema::JSON_SCHEMA_2020_12
        );
        assert_eq!(
            tool["outputSchema"]["$defs"],
            json!({"A": {"type": "string"}})
        );
        assert_eq!(
            tool["annotations"],
            json!({
                "title": "Read file", "readOnlyHint": true, "destructiveHint": false,
                "idempotentHint": true, "openWorldHint": false
            })
        );
    }

    #[test]
    fn a_definition_title_wins_over_the_annotation_title() {
        let mut definition = ToolDefinition::new("t", "d", json!({"type": "object"}));
        definition.title = Some("Own".into());
        definition.annotations = Some(Hints {
            title: Some("Hint".into()),
            ..Hints::default()
        });
        let tool = mcp_tool(&definition);
        assert_eq!(tool.title.as_deref(), Some("Own"));
        assert!(
            mcp_tool(&ToolDefinition::new("t", "d", json!({"type": "object"})))
                .annotations
                .is_none()
        );
    }

    #[test]
    fn successes_keep_content_and_structured_content() {
        let result = mcp_result(ToolCallResult::success(json!({"path": "a", "revision": 3})));
        let wire = serde_json::to_value(&result).unwrap();
        assert_eq!(wire["isError"], false);
        assert_eq!(
            wire["content"],
            json!([{"type": "text", "text": "{\"path\":\"a\",\"revision\":3}"}])
        );
        assert_eq!(
            wire["structuredContent"],
            json!({"path": "a", "revision": 3})
        );
        let mut blocks = ToolCallResult::empty_success();
        blocks.content.push(ToolContent::json(json!([1, 2])));
        let wire = serde_json::to_value(mcp_result(blocks)).unwrap();
        assert_eq!(wire["content"][1], json!({"type": "text", "text": "[1,2]"}));
        assert!(wire.get("structuredContent").is_none());
    }

    #[test]
    fn errors_carry_code_retryable_and_details_in_content_and_meta_not_structured_content() {
        let error = ToolCallError::new(
            "WORKSPACE_REVISION_CONFLICT",
            "Workspace revision mismatch.",
        )
        .with_retryable(true)
        .with_details(json!({"expectedRevision": 1, "currentRevision": 2}));
        let coded = json!({
            "code": "WORKSPACE_REVISION_CONFLICT", "message": "Workspace revision mismatch.", "retryable": true,
            "details": {"expectedRevision": 1, "currentRevision": 2}
        });
        let wire = serde_json::to_value(mcp_result(ToolCallResult::failure(error))).unwrap();
        assert_eq!(wire["isError"], true);
        // A client validating `structuredContent` against the tool's `outputSchema` gets none.
        assert!(wire.get("structuredContent").is_none(), "{wire}");
        assert_eq!(
            wire["content"][0],
            json!({"type": "text", "text": "Workspace revision mismatch."})
        );
        let text: Value =
            serde_json::from_str(wire["content"][1]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, json!({ERROR_KEY: coded}));
        assert_eq!(wire["_meta"][ERROR_META_KEY], coded);
        let bare = serde_json::to_value(mcp_result(ToolCallResult::failure(ToolCallError::new(
            "X", "m",
        ))))
        .unwrap();
        assert_eq!(
            bare["_meta"][ERROR_META_KEY],
            json!({"code": "X", "message": "m"})
        );
    }

    #[test]
    fn only_an_object_value_is_structured_content() {
        let text = mcp_result(ToolCallResult::success(json!("first\n")));
        assert_eq!(text.structured_content, None);
        let wire = serde_json::to_value(&text).unwrap();
        assert_eq!(wire["content"][0]["text"], "first\n");
        let count = mcp_result(ToolCallResult::success(json!(3)));
        assert_eq!(count.structured_content, None);
        let object = mcp_result(ToolCallResult::success(json!({"n": 3})));
        assert_eq!(object.structured_content, Some(json!({"n": 3})));
    }

    #[test]
    fn a_replay_is_marked_in_meta_on_success_and_failure() {
        let success = mcp_result(ToolCallResult::success(json!(1)).replayed(Some(7)));
        let wire = serde_json::to_value(success).unwrap();
        assert_eq!(
            wire["_meta"][REPLAY_META_KEY],
            json!({"replayed": true, "originalAt": 7})
        );
        let failure =
            mcp_result(ToolCallResult::failure(ToolCallError::new("X", "m")).replayed(None));
        let wire = serde_json::to_value(failure).unwrap();
        assert_eq!(wire["_meta"][REPLAY_META_KEY], json!({"replayed": true}));
        assert_eq!(wire["_meta"][ERROR_META_KEY]["code"], "X");
        let fresh = serde_json::to_value(mcp_result(ToolCallResult::success(json!(1)))).unwrap();
        assert!(fresh.get("_meta").is_none());
    }
}
