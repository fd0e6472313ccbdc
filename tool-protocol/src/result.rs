//! [`ToolCallResult`]: what every tool call returns, success or failure.

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::content::ToolContent;
use crate::error::ToolCallError;
use crate::request::ToolCallId;

/// Text of a success result whose handler returned no value.
pub const EMPTY_SUCCESS_TEXT: &str = "Tool completed successfully.";

/// A tool call result: `{ toolCallId?, content, structuredContent?, isError?, error? }`.
///
/// `isError` is derived from `error` on the wire, so the two can never disagree.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallResult {
    /// The provider correlation id of the call this answers.
    pub tool_call_id: Option<ToolCallId>,
    /// Human- and model-readable content blocks.
    pub content: Vec<ToolContent>,
    /// Machine-readable output; `Some(Value::Null)` is an explicit `null`.
    pub structured_content: Option<Value>,
    /// The failure, when the call failed.
    pub error: Option<ToolCallError>,
    /// Set when this result replays the recorded outcome of an earlier execution of the same
    /// operation (a retry with the same idempotency key, or a call that joined one in flight):
    /// nothing ran for this call. On the wire: `_meta: {"replayed": true, "originalAt"?: ms}`.
    pub replay: Option<Replay>,
}

/// What a replayed result says about the execution it replays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Replay {
    /// When the replayed outcome was recorded, ms since the Unix epoch, when known.
    pub original_at: Option<u64>,
}

impl Replay {
    /// A replay of an outcome recorded at `original_at` (ms since the Unix epoch), if known.
    pub fn new(original_at: Option<u64>) -> Self {
        Self { original_at }
    }
}

/// `_meta` key marking a replayed result.
pub const REPLAYED_META_KEY: &str = "replayed";
/// `_meta` key holding when a replayed outcome was recorded (ms since the Unix epoch).
pub const ORIGINAL_AT_META_KEY: &str = "originalAt";

impl ToolCallResult {
    /// The result as a `Result`, so a caller can use `?`: `Err` with the failure when the call
    /// failed, else the success itself.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_protocol::{ToolCallError, ToolCallResult, codes};
    /// fn run() -> Result<(), ToolCallError> {
    ///     let ok = ToolCallResult::success(json!({"n": 1})).into_result()?;
    ///     assert_eq!(ok.to_string(), r#"{"n":1}"#);
    ///     let failed = ToolCallResult::failure(ToolCallError::new(codes::TOOL_TIMEOUT, "too slow"));
    ///     assert_eq!(failed.to_string(), "[TOOL_TIMEOUT] too slow");
    ///     failed.into_result()?;
    ///     unreachable!()
    /// }
    /// assert_eq!(run().unwrap_err().code, codes::TOOL_TIMEOUT);
    /// ```
    pub fn into_result(self) -> Result<Self, ToolCallError> {
        match self.error {
            Some(error) => Err(error),
            None => Ok(self),
        }
    }

    /// A success carrying `value` as structured content and its JSON text as content
    /// (a string value is used as the text itself).
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_protocol::ToolCallResult;
    /// let result = ToolCallResult::success(json!({"path": "index.html", "revision": 3}));
    /// assert_eq!(tool_protocol::stringify_tool_content(&result.content), r#"{"path":"index.html","revision":3}"#);
    /// ```
    pub fn success(value: Value) -> Self {
        let text = match &value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        Self {
            tool_call_id: None,
            content: vec![ToolContent::text(text)],
            structured_content: Some(value),
            error: None,
            replay: None,
        }
    }

    /// A success without a value: a fixed text block and no structured content.
    pub fn empty_success() -> Self {
        Self {
            tool_call_id: None,
            content: vec![ToolContent::text(EMPTY_SUCCESS_TEXT)],
            structured_content: None,
            error: None,
            replay: None,
        }
    }

    /// A failure whose content is the error message.
    pub fn failure(error: ToolCallError) -> Self {
        Self {
            tool_call_id: None,
            content: vec![ToolContent::text(error.message.clone())],
            structured_content: None,
            error: Some(error),
            replay: None,
        }
    }

    /// The same result answering the call `id` (unchanged when `id` is `None`).
    #[must_use]
    pub fn with_tool_call_id(mut self, id: Option<ToolCallId>) -> Self {
        if id.is_some() {
            self.tool_call_id = id;
        }
        self
    }

    /// The same result marked as a replay of an outcome recorded at `original_at`.
    #[must_use]
    pub fn replayed(mut self, original_at: Option<u64>) -> Self {
        self.replay = Some(Replay::new(original_at));
        self
    }

    /// Whether this result replays an earlier execution (see [`ToolCallResult::replay`]).
    pub fn is_replay(&self) -> bool {
        self.replay.is_some()
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        self.error.is_some()
    }

    /// The error code, when the call failed.
    pub fn error_code(&self) -> Option<&str> {
        self.error.as_ref().map(|error| error.code.as_str())
    }

    /// The JSON surface that output budgets measure: `{content, structuredContent?}`.
    pub fn output_surface(&self) -> Value {
        let mut surface = serde_json::Map::new();
        surface.insert(
            "content".into(),
            serde_json::to_value(&self.content).unwrap_or(Value::Null),
        );
        if let Some(structured) = &self.structured_content {
            surface.insert("structuredContent".into(), structured.clone());
        }
        Value::Object(surface)
    }

    /// UTF-8 bytes of the compact JSON of [`Self::output_surface`].
    pub fn output_bytes(&self) -> usize {
        self.output_surface().to_string().len()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<ToolCallId>,
    content: Vec<ToolContent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    structured_content: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    is_error: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<ToolCallError>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Value>,
}

impl Serialize for ToolCallResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ResultWire {
            tool_call_id: self.tool_call_id.clone(),
            content: self.content.clone(),
            structured_content: self.structured_content.clone(),
            is_error: self.error.as_ref().map(|_| true),
            error: self.error.clone(),
            meta: self.replay.map(|replay| replay_meta(&replay)),
        }
        .serialize(serializer)
    }
}

/// The `_meta` object of a replayed result.
fn replay_meta(replay: &Replay) -> Value {
    let mut meta = serde_json::Map::new();
    meta.insert(REPLAYED_META_KEY.into(), Value::Bool(true));
    if let Some(at) = replay.original_at {
        meta.insert(ORIGINAL_AT_META_KEY.into(), Value::from(at));
    }
    Value::Object(meta)
}

/// A failure shows as its error (`[CODE] message`); a success as the text of its content.
impl std::fmt::Display for ToolCallResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.error {
            Some(error) => error.fmt(f),
            None => f.write_str(&crate::stringify_tool_content(&self.content)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn success_text_follows_the_value() {
        assert_eq!(
            ToolCallResult::success(json!("done")).content,
            vec![ToolContent::text("done")]
        );
        let empty = ToolCallResult::empty_success();
        assert_eq!(empty.content, vec![ToolContent::text(EMPTY_SUCCESS_TEXT)]);
        assert!(empty.structured_content.is_none());
        let null = ToolCallResult::success(Value::Null);
        assert_eq!(
            serde_json::to_value(&null).unwrap(),
            json!({"content": [{"type": "text", "text": "null"}], "structuredContent": null})
        );
    }

    #[test]
    fn failures_carry_is_error_on_the_wire() {
        let result = ToolCallResult::failure(ToolCallError::new("X", "bad").with_retryable(true))
            .with_tool_call_id(Some("c1".into()));
        let wire = serde_json::to_value(&result).unwrap();
        assert_eq!(wire["isError"], true);
        assert_eq!(wire["toolCallId"], "c1");
        assert_eq!(
            serde_json::from_value::<ToolCallResult>(wire).unwrap(),
            result
        );
    }

    #[test]
    fn a_replay_says_so_in_its_meta_and_reads_back() {
        let replayed = ToolCallResult::success(json!(1)).replayed(Some(1_700_000_000_000));
        let wire = serde_json::to_value(&replayed).unwrap();
        assert_eq!(
            wire["_meta"],
            json!({"replayed": true, "originalAt": 1_700_000_000_000_u64})
        );
        assert_eq!(
            serde_json::from_value::<ToolCallResult>(wire).unwrap(),
            replayed
        );
        let unknown_time = ToolCallResult::empty_success().replayed(None);
        let wire = serde_json::to_value(&unknown_time).unwrap();
        assert_eq!(wire["_meta"], json!({"replayed": true}));
        assert_eq!(
            serde_json::from_value::<ToolCallResult>(wire).unwrap(),
            unknown_time
        );
        let fresh = serde_json::to_value(ToolCallResult::success(json!(1))).unwrap();
        assert!(fresh.get("_meta").is_none());
    }

    #[test]
    fn is_error_and_error_must_agree() {
        assert!(
            serde_json::from_value::<ToolCallResult>(json!({"content": [], "isError": true}))
                .is_err()
        );
        assert!(
            serde_json::from_value::<ToolCallResult>(
                json!({"content": [], "error": {"code": "X", "message": "m"}})
            )
            .is_err()
        );
    }

    #[test]
    fn output_bytes_measure_content_and_structured_content() {
        let result = ToolCallResult::success(json!({"a": "é"}));
        let expected =
            r#"{"content":[{"type":"text","text":"{\"a\":\"é\"}"}],"structuredContent":{"a":"é"}}"#;
        assert_eq!(result.output_bytes(), expected.len());
        assert_eq!(result.clone().with_tool_call_id(None), result);
    }
}
