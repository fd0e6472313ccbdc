//! tools/call and tools/list requests, and the model's view of a tool call.

use std::fmt;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Number, Value};

use crate::definition::ToolDefinition;

/// The JSON-RPC method of a tool call.
pub const TOOLS_CALL_METHOD: &str = "tools/call";
/// The JSON-RPC method of a tool listing.
pub const TOOLS_LIST_METHOD: &str = "tools/list";

/// An identifier that is a JSON string or a (finite) JSON number, as JSON-RPC ids and
/// context revisions are.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StringOrNumber {
    /// A string id.
    String(String),
    /// A numeric id.
    Number(Number),
}

/// The provider's correlation id of a tool call.
pub type ToolCallId = StringOrNumber;

impl fmt::Display for StringOrNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::String(text) => f.write_str(text),
            Self::Number(number) => write!(f, "{number}"),
        }
    }
}

impl From<&str> for StringOrNumber {
    fn from(value: &str) -> Self {
        Self::String(value.to_owned())
    }
}

impl From<String> for StringOrNumber {
    fn from(value: String) -> Self {
        Self::String(value)
    }
}

impl From<u64> for StringOrNumber {
    fn from(value: u64) -> Self {
        Self::Number(value.into())
    }
}

/// A `tools/call` request: `{ id?, method: "tools/call", params: { name, arguments? } }`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRequest {
    /// Provider correlation id, echoed as the result's `toolCallId`.
    pub id: Option<ToolCallId>,
    /// Tool name.
    pub name: String,
    /// Arguments object; `None` when the request carried none (treated as `{}`).
    pub arguments: Option<Map<String, Value>>,
}

impl ToolCallRequest {
    /// A request with a name and arguments.
    pub fn new(name: impl Into<String>, arguments: Map<String, Value>) -> Self {
        Self {
            id: None,
            name: name.into(),
            arguments: Some(arguments),
        }
    }

    /// Sets the correlation id.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<ToolCallId>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// The arguments, or an empty object when none were sent.
    pub fn arguments_or_empty(&self) -> Map<String, Value> {
        self.arguments.clone().unwrap_or_default()
    }
}

#[derive(Serialize)]
struct CallParamsWire {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    arguments: Option<Map<String, Value>>,
}

#[derive(Serialize)]
struct CallWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<ToolCallId>,
    method: String,
    params: CallParamsWire,
}

impl Serialize for ToolCallRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        CallWire {
            id: self.id.clone(),
            method: TOOLS_CALL_METHOD.to_owned(),
            params: CallParamsWire {
                name: self.name.clone(),
                arguments: self.arguments.clone(),
            },
        }
        .serialize(serializer)
    }
}

/// A tool call as a model emits it: `{ id?, name, arguments? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelToolCall {
    /// Provider correlation id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<ToolCallId>,
    /// Tool name.
    pub name: String,
    /// Arguments object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
}

impl ModelToolCall {
    /// A call as a provider reports it: its correlation id, the tool name and the parsed
    /// arguments object.
    ///
    /// Providers send the arguments as JSON text (`function.arguments` in Chat Completions);
    /// parse and check that text first, with your own error for text that is not a JSON object
    /// (the tool loop answers it with `OPENROUTER_INVALID_TOOL_CALL`). A call without an id
    /// (some local runtimes omit it) is written as a struct literal with `id: None`.
    ///
    /// ```
    /// use serde_json::{Map, Value, json};
    /// use tool_protocol::{ModelToolCall, ToolCallRequest};
    ///
    /// let text = r#"{"path": "index.html"}"#; // function.arguments as the provider sent it
    /// let arguments: Map<String, Value> = serde_json::from_str(text).unwrap();
    /// let call = ModelToolCall::new("call_1", "workspace.readFile", arguments);
    /// assert_eq!(call.id, Some("call_1".into()));
    /// assert_eq!(
    ///     serde_json::to_value(&call).unwrap(),
    ///     json!({"id": "call_1", "name": "workspace.readFile", "arguments": {"path": "index.html"}})
    /// );
    /// let request = ToolCallRequest::from(call);
    /// assert_eq!(request.arguments_or_empty()["path"], "index.html");
    /// ```
    pub fn new(
        id: impl Into<ToolCallId>,
        name: impl Into<String>,
        arguments: Map<String, Value>,
    ) -> Self {
        Self {
            id: Some(id.into()),
            name: name.into(),
            arguments: Some(arguments),
        }
    }

    /// [`new`](Self::new) from any `Serialize` value, such as `json!({..})` or a struct of
    /// the tool's arguments: no map to build by hand. A value that does not serialize to a JSON
    /// object is `TOOL_VALIDATION_FAILED` (not retryable), saying what it was.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_protocol::ModelToolCall;
    ///
    /// let call = ModelToolCall::json("call_1", "notes.append", json!({"text": "hi"})).unwrap();
    /// assert_eq!(call.arguments.unwrap()["text"], "hi");
    /// let refused = ModelToolCall::json("call_2", "notes.append", json!(["hi"])).unwrap_err();
    /// assert_eq!(refused.code, "TOOL_VALIDATION_FAILED");
    /// ```
    pub fn json(
        id: impl Into<ToolCallId>,
        name: impl Into<String>,
        arguments: impl Serialize,
    ) -> Result<Self, crate::ToolCallError> {
        let refused = |what: &str| {
            crate::ToolCallError::new(
                crate::codes::TOOL_VALIDATION_FAILED,
                format!("Tool call arguments must be a JSON object, not {what}."),
            )
            .with_retryable(false)
        };
        match serde_json::to_value(arguments) {
            Ok(Value::Object(map)) => Ok(Self::new(id, name, map)),
            Ok(Value::Array(_)) => Err(refused("an array")),
            Ok(Value::String(_)) => Err(refused("a string")),
            Ok(Value::Number(_)) => Err(refused("a number")),
            Ok(Value::Bool(_)) => Err(refused("a boolean")),
            Ok(Value::Null) => Err(refused("null")),
            Err(error) => Err(refused(&format!(
                "a value that failed to serialize ({error})"
            ))),
        }
    }
}

impl From<ModelToolCall> for ToolCallRequest {
    /// The canonical request of a model call: missing arguments become `{}`.
    fn from(call: ModelToolCall) -> Self {
        Self {
            id: call.id,
            name: call.name,
            arguments: Some(call.arguments.unwrap_or_default()),
        }
    }
}

/// A `tools/list` request: `{ method: "tools/list", params?: { cursor? } }`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolListRequest {
    /// Opaque cursor from a previous page's `nextCursor`.
    pub cursor: Option<String>,
}

impl ToolListRequest {
    /// The request for the page after `cursor`.
    pub fn after(cursor: impl Into<String>) -> Self {
        Self {
            cursor: Some(cursor.into()),
        }
    }
}

#[derive(Serialize)]
struct ListParamsWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cursor: Option<String>,
}

#[derive(Serialize)]
struct ListWire {
    method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    params: Option<ListParamsWire>,
}

impl Serialize for ToolListRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let params = self.cursor.clone().map(|cursor| ListParamsWire {
            cursor: Some(cursor),
        });
        ListWire {
            method: TOOLS_LIST_METHOD.to_owned(),
            params,
        }
        .serialize(serializer)
    }
}

/// One page of a tool listing: `{ tools, nextCursor? }`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolListResult {
    /// The definitions on this page.
    pub tools: Vec<ToolDefinition>,
    /// Cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_request_uses_the_wire_shape() {
        let request = ToolCallRequest::new(
            "workspace.readFile",
            json!({"path": "a"}).as_object().unwrap().clone(),
        )
        .with_id(7u64);
        let wire = serde_json::to_value(&request).unwrap();
        assert_eq!(
            wire,
            json!({"id": 7, "method": "tools/call", "params": {"name": "workspace.readFile", "arguments": {"path": "a"}}})
        );
        assert_eq!(
            serde_json::from_value::<ToolCallRequest>(wire).unwrap(),
            request
        );
    }

    #[test]
    fn model_calls_get_empty_arguments() {
        let request: ToolCallRequest = ModelToolCall {
            id: None,
            name: "t".into(),
            arguments: None,
        }
        .into();
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            json!({"method": "tools/call", "params": {"name": "t", "arguments": {}}})
        );
    }

    #[test]
    fn list_request_adds_params_only_with_a_cursor() {
        assert_eq!(
            serde_json::to_value(ToolListRequest::default()).unwrap(),
            json!({"method": "tools/list"})
        );
        assert_eq!(
            serde_json::to_value(ToolListRequest::after("offset:2")).unwrap(),
            json!({"method": "tools/list", "params": {"cursor": "offset:2"}})
        );
        assert!(
            serde_json::from_value::<ToolListRequest>(json!({"method": "tools/call"})).is_err()
        );
    }

    #[test]
    fn ids_display_as_text() {
        assert_eq!(StringOrNumber::from(3u64).to_string(), "3");
        assert_eq!(StringOrNumber::from("call_1").to_string(), "call_1");
    }
}
