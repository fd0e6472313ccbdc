//! Tool results as the text of `tool` messages (CONTRACT 4): validated first, serialized
//! second, and a failure of either becomes a coded error the model can read.

use serde::Serialize;
use serde_json::{Value, json};
use tool_protocol::codes::{TOOL_RESULT_SERIALIZATION_FAILED, TOOL_RESULT_VALIDATION_FAILED};
use tool_protocol::{ToolCallError, ToolCallResult, stringify_tool_content};

use crate::toolset::validate_result;

/// Message sent when a result does not satisfy the canonical result contract.
pub const RESULT_VALIDATION_FAILED_MESSAGE: &str =
    "Tool result did not match the canonical result contract.";
/// Message sent when a result cannot be serialized.
pub const RESULT_SERIALIZATION_FAILED_MESSAGE: &str =
    "Tool result could not be serialized for the provider.";

/// The content of a tool message, and the error it reports (if any).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolMessage {
    /// JSON text sent as the `tool` message content.
    pub content: String,
    /// The error reported to the model, when the call failed or when its change was applied
    /// but a later step failed ([`ToolCallError::is_committed`]).
    pub error: Option<ToolCallError>,
}

/// The tool message of a result:
/// - an invalid result: `{"status":"error","code":"TOOL_RESULT_VALIDATION_FAILED","message":...}`;
/// - a committed error (the change is applied, only a later confirmation failed):
///   `{"status":"applied","previewConfirmed":false,"code","message","details"}`, without a
///   `retryable` flag, so the model never repeats an applied change;
/// - an error: `{"status":"error","code","message","retryable"?,"details"?}` (retried without
///   details if they cannot be serialized);
/// - a success: its `structuredContent`, else `{"status":"completed","content": <text>}`;
/// - an unserializable success: `TOOL_RESULT_SERIALIZATION_FAILED`.
pub fn tool_message(result: &ToolCallResult) -> ToolMessage {
    let Some(result) = validate_result(result) else {
        return error_message(ToolCallError::new(
            TOOL_RESULT_VALIDATION_FAILED,
            RESULT_VALIDATION_FAILED_MESSAGE,
        ));
    };
    match &result.error {
        Some(error) if error.is_committed() => applied_message(error.clone()),
        Some(error) => error_message(error.clone()),
        None => match &result.structured_content {
            Some(structured) => success_message(structured),
            None => success_message(
                &json!({"status": "completed", "content": stringify_tool_content(&result.content)}),
            ),
        },
    }
}

/// The message of a failed call (also used for calls the loop answers itself).
pub fn error_message(error: ToolCallError) -> ToolMessage {
    let content = serialize_error(&error, true)
        .or_else(|| serialize_error(&error, false))
        .unwrap_or_else(serialization_failed_content);
    ToolMessage {
        content,
        error: Some(error),
    }
}

/// The message of a call whose change was applied although its result is an error.
fn applied_message(error: ToolCallError) -> ToolMessage {
    let payload = json!({
        "status": "applied",
        "previewConfirmed": false,
        "code": error.code,
        "message": error.message,
        "details": error.details,
    });
    ToolMessage {
        content: payload.to_string(),
        error: Some(error),
    }
}

fn serialize_error(error: &ToolCallError, with_details: bool) -> Option<String> {
    #[derive(Serialize)]
    struct ErrorPayload<'a> {
        status: &'static str,
        code: &'a str,
        message: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        retryable: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none")]
        details: Option<&'a Value>,
    }
    let details = if with_details {
        error.details.as_ref()
    } else {
        None
    };
    serde_json::to_string(&ErrorPayload {
        status: "error",
        code: &error.code,
        message: &error.message,
        retryable: error.retryable,
        details,
    })
    .ok()
}

/// A success payload, or `TOOL_RESULT_SERIALIZATION_FAILED` when it cannot be serialized.
fn success_message<T: Serialize + ?Sized>(payload: &T) -> ToolMessage {
    match serde_json::to_string(payload) {
        Ok(content) => ToolMessage {
            content,
            error: None,
        },
        Err(_) => error_message(ToolCallError::new(
            TOOL_RESULT_SERIALIZATION_FAILED,
            RESULT_SERIALIZATION_FAILED_MESSAGE,
        )),
    }
}

fn serialization_failed_content() -> String {
    json!({"status": "error", "code": TOOL_RESULT_SERIALIZATION_FAILED, "message": RESULT_SERIALIZATION_FAILED_MESSAGE}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_protocol::ToolContent;

    #[test]
    fn a_denial_tells_the_model_who_decided() {
        let denied = ToolCallResult::failure(
            ToolCallError::new("TOOL_POLICY_DENIED", "Tool \"t\" was denied by a person")
                .with_retryable(false)
                .with_details(json!({"decidedBy": "person"})),
        );
        let content: Value = serde_json::from_str(&tool_message(&denied).content).unwrap();
        assert_eq!(content["code"], "TOOL_POLICY_DENIED");
        assert_eq!(content["details"]["decidedBy"], "person");
    }

    #[test]
    fn successes_send_structured_content_or_the_text() {
        let structured = tool_message(&ToolCallResult::success(
            json!({"path": "index.html", "revision": 3}),
        ));
        assert_eq!(
            structured,
            ToolMessage {
                content: r#"{"path":"index.html","revision":3}"#.into(),
                error: None
            }
        );
        let text = ToolCallResult {
            content: vec![ToolContent::text("a"), ToolContent::json(json!([1]))],
            ..ToolCallResult::empty_success()
        };
        assert_eq!(
            tool_message(&text).content,
            r#"{"status":"completed","content":"a\n[1]"}"#
        );
        assert_eq!(
            tool_message(&ToolCallResult::success(Value::Null)).content,
            "null"
        );
    }

    #[test]
    fn errors_forward_code_retryable_and_details() {
        let error = ToolCallError::new("WORKSPACE_REVISION_CONFLICT", "stale")
            .with_retryable(true)
            .with_details(json!({"expectedRevision": 1}));
        let message = tool_message(&ToolCallResult::failure(error.clone()));
        assert_eq!(
            message.content,
            r#"{"status":"error","code":"WORKSPACE_REVISION_CONFLICT","message":"stale","retryable":true,"details":{"expectedRevision":1}}"#
        );
        assert_eq!(message.error, Some(error));
        let bare = tool_message(&ToolCallResult::failure(ToolCallError::new("X", "m")));
        assert_eq!(
            bare.content,
            r#"{"status":"error","code":"X","message":"m"}"#
        );
    }

    #[test]
    fn invalid_results_are_reported_before_serialization() {
        let blank_code = ToolCallResult::failure(ToolCallError {
            code: " ".into(),
            ..ToolCallError::new("X", "m")
        });
        let message = tool_message(&blank_code);
        assert_eq!(
            message.content,
            r#"{"status":"error","code":"TOOL_RESULT_VALIDATION_FAILED","message":"Tool result did not match the canonical result contract."}"#
        );
        assert_eq!(message.error.unwrap().code, TOOL_RESULT_VALIDATION_FAILED);
    }

    #[test]
    fn unserializable_payloads_become_serialization_failures() {
        struct Unserializable;
        impl Serialize for Unserializable {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("not JSON"))
            }
        }
        let message = success_message(&Unserializable);
        assert_eq!(
            message.content,
            r#"{"status":"error","code":"TOOL_RESULT_SERIALIZATION_FAILED","message":"Tool result could not be serialized for the provider."}"#
        );
        assert_eq!(
            message.error.unwrap().code,
            TOOL_RESULT_SERIALIZATION_FAILED
        );
    }
}
