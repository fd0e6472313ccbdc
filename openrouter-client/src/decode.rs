//! Decoding a chat-completions response from its text, so a misconfigured endpoint or a
//! misbehaving provider becomes a coded error and never reaches a tool ambiguously.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::codes::OPENROUTER_INVALID_RESPONSE;
use crate::error::OpenRouterError;
use crate::events::TokenUsage;

/// Characters of a non-JSON error body quoted in the error message.
pub const ERROR_BODY_EXCERPT_CHARS: usize = 240;
/// Status given to an in-body `error` whose `code` is not an HTTP status.
pub const IN_BODY_ERROR_FALLBACK_STATUS: u16 = 502;

/// The assistant message of a response, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AssistantReply {
    /// Text of the message (`None` for `null` or absent).
    pub content: Option<String>,
    /// Tool calls in the order the provider sent them.
    pub tool_calls: Vec<ProviderToolCall>,
    /// The response's `usage`, when it has one.
    pub usage: Option<TokenUsage>,
    /// The model that answered (the response's `model`), when it says.
    pub model: Option<String>,
    /// The provider's id of the completion (the response's `id`), when it has one.
    pub id: Option<String>,
    /// Why the first choice stopped (`stop`, `tool_calls`, `length`), when it says.
    pub finish_reason: Option<String>,
}

/// A checked tool call as the provider named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderToolCall {
    /// Non-blank, trimmed, unique within the response.
    pub id: String,
    /// Provider-facing function name, non-blank and trimmed.
    pub name: String,
    /// The JSON arguments text (parsed later, before anything executes).
    pub arguments: String,
}

/// What a response body says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// A chat completion; `None` when `choices[0].message` is missing.
    Completion(Option<AssistantReply>),
    /// A failure, from a non-2xx status or a 2xx body carrying an `error` object.
    Failure {
        /// The HTTP status, or the status in the body's `error.code`.
        status: u16,
        /// The provider's message or a description of the body.
        message: String,
    },
}

/// Decodes a response body. `truncated` says the body was cut at the size limit.
pub fn decode_response(
    status: u16,
    body: &str,
    truncated: bool,
    limit: usize,
) -> Result<Decoded, OpenRouterError> {
    let ok = (200..300).contains(&status);
    if !ok {
        return Ok(Decoded::Failure {
            status,
            message: failure_message(status, body),
        });
    }
    if truncated {
        return Err(invalid(format!(
            "Endpoint response exceeded the {limit}-byte limit."
        )));
    }
    if is_event_stream(body) {
        return decode_event_stream(body);
    }
    let payload = parse_object(body).map_err(|json_ok| {
        invalid(if json_ok {
            "Endpoint returned a non-object JSON response.".to_owned()
        } else {
            format!("Endpoint returned an invalid JSON response (HTTP {status}). Check the chat-completions endpoint.")
        })
    })?;
    if let Some(failure) = body_error(&payload, status) {
        return Ok(failure);
    }
    decode_completion(&payload).map(Decoded::Completion)
}

/// The failure a 2xx object carries: a top-level `error` (an object, or a string as Ollama's
/// native API writes it), or a first choice that finished with an `error` (OpenRouter, when
/// the upstream provider fails after the response began).
pub(crate) fn body_error(payload: &Map<String, Value>, status: u16) -> Option<Decoded> {
    let choice_error = payload
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .and_then(|choice| choice.get("error"));
    match payload
        .get("error")
        .filter(|error| !error.is_null())
        .or(choice_error)
    {
        Some(Value::Object(error)) => Some(Decoded::Failure {
            status: in_body_status(error),
            message: error_message(error, status),
        }),
        Some(Value::String(message)) if !message.trim().is_empty() => Some(Decoded::Failure {
            status: IN_BODY_ERROR_FALLBACK_STATUS,
            message: message.trim().to_owned(),
        }),
        _ => None,
    }
}

/// Whether a body is a server-sent event stream (`data:` lines or `:` comments) rather than
/// one JSON document: a provider that streams although the loop did not ask it to.
fn is_event_stream(body: &str) -> bool {
    let start = body.trim_start();
    start.starts_with("data:") || start.starts_with(':') || start.starts_with("event:")
}

/// An event stream is read for its error event (the way OpenAI-compatible servers and
/// OpenRouter report a failure mid-stream); a stream without one is not a completion the loop
/// can trust, so it is an invalid response.
fn decode_event_stream(body: &str) -> Result<Decoded, OpenRouterError> {
    let events = body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| *data != "[DONE]")
        .filter_map(|data| serde_json::from_str::<Map<String, Value>>(data).ok());
    for event in events {
        if let Some(failure) = body_error(&event, 200) {
            return Ok(failure);
        }
    }
    Err(invalid(
        "Endpoint answered with an event stream; the tool loop needs one JSON chat completion (is the endpoint forcing stream: true?).",
    ))
}

/// Parses a body as a JSON object; a blank body is `{}`. `Err(true)` for valid non-object
/// JSON, `Err(false)` for invalid JSON.
fn parse_object(body: &str) -> Result<Map<String, Value>, bool> {
    if body.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(body) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(true),
        Err(_) => Err(false),
    }
}

/// The message of a non-2xx response: the body's `error.message`, a quote of a non-JSON
/// body, or a generic text.
fn failure_message(status: u16, body: &str) -> String {
    match parse_object(body) {
        Ok(payload) => match payload.get("error") {
            Some(Value::Object(error)) => error_message(error, status),
            Some(Value::String(message)) if !message.trim().is_empty() => message.trim().to_owned(),
            _ => generic_failure(status),
        },
        Err(true) => generic_failure(status),
        Err(false) => format!(
            "Request failed with a non-JSON response (HTTP {status}): {}",
            excerpt(body)
        ),
    }
}

fn error_message(error: &Map<String, Value>, status: u16) -> String {
    match error.get("message") {
        Some(Value::String(message)) if !message.trim().is_empty() => message.trim().to_owned(),
        _ => generic_failure(status),
    }
}

fn generic_failure(status: u16) -> String {
    format!("Request failed (HTTP {status}).")
}

/// The status an in-body error stands for: its numeric `code` when that is an HTTP status.
fn in_body_status(error: &Map<String, Value>) -> u16 {
    error
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|code| u16::try_from(code).ok())
        .filter(|code| (400..=599).contains(code))
        .unwrap_or(IN_BODY_ERROR_FALLBACK_STATUS)
}

/// Whitespace collapsed to single spaces, cut to [`ERROR_BODY_EXCERPT_CHARS`], trimmed (the
/// cut can fall just after a collapsed space).
pub(crate) fn excerpt(body: &str) -> String {
    let cut: String = body
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(ERROR_BODY_EXCERPT_CHARS)
        .collect();
    cut.trim_end().to_owned()
}

fn invalid(message: impl Into<String>) -> OpenRouterError {
    OpenRouterError::new(OPENROUTER_INVALID_RESPONSE, message)
}

fn decode_completion(
    payload: &Map<String, Value>,
) -> Result<Option<AssistantReply>, OpenRouterError> {
    let first_choice = match payload.get("choices") {
        None => None,
        Some(Value::Array(choices)) => choices.first(),
        Some(_) => return Err(invalid("Provider returned a non-array choices value.")),
    };
    let usage = payload
        .get("usage")
        .and_then(Value::as_object)
        .map(usage_of);
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
    match first_choice.and_then(|choice| choice.get("message")) {
        Some(Value::Object(message)) => decode_assistant(message).map(|mut reply| {
            reply.usage = usage;
            reply.model = text(payload.get("model"));
            reply.id = text(payload.get("id"));
            reply.finish_reason = text(first_choice.and_then(|choice| choice.get("finish_reason")));
            Some(reply)
        }),
        _ => Ok(None),
    }
}

/// `usage` of a non-streamed response.
fn usage_of(usage: &Map<String, Value>) -> TokenUsage {
    let count = |name: &str| usage.get(name).and_then(Value::as_u64);
    TokenUsage {
        input_tokens: count("prompt_tokens"),
        output_tokens: count("completion_tokens"),
        total_tokens: count("total_tokens"),
    }
}

fn decode_assistant(message: &Map<String, Value>) -> Result<AssistantReply, OpenRouterError> {
    if message.get("role").and_then(Value::as_str) != Some("assistant") {
        return Err(invalid(
            "Provider returned a message without the assistant role.",
        ));
    }
    let content = match message.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(_) => return Err(invalid("Provider returned non-string assistant content.")),
    };
    let tool_calls = match message.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => decode_tool_calls(calls)?,
        Some(_) => {
            return Err(invalid(
                "Provider returned a non-array assistant tool_calls value.",
            ));
        }
    };
    Ok(AssistantReply {
        content,
        tool_calls,
        usage: None,
        model: None,
        id: None,
        finish_reason: None,
    })
}

fn decode_tool_calls(calls: &[Value]) -> Result<Vec<ProviderToolCall>, OpenRouterError> {
    let mut seen = HashSet::new();
    let mut decoded = Vec::with_capacity(calls.len());
    for (index, call) in calls.iter().enumerate() {
        let call = decode_tool_call(index, call)?;
        if !seen.insert(call.id.clone()) {
            return Err(invalid(format!(
                "Provider returned duplicate tool call id \"{}\".",
                call.id
            )));
        }
        decoded.push(call);
    }
    Ok(decoded)
}

fn decode_tool_call(index: usize, call: &Value) -> Result<ProviderToolCall, OpenRouterError> {
    let id = non_blank(call.get("id")).ok_or_else(|| {
        invalid(format!(
            "Provider returned a tool call without a valid id at index {index}."
        ))
    })?;
    if call.get("type").and_then(Value::as_str) != Some("function") {
        return Err(invalid(format!(
            "Provider returned a non-function tool call at index {index}."
        )));
    }
    let function = call.get("function").and_then(Value::as_object);
    let name = non_blank(function.and_then(|function| function.get("name"))).ok_or_else(|| {
        invalid(format!(
            "Provider returned a tool call without a function name at index {index}."
        ))
    })?;
    let Some(Value::String(arguments)) = function.and_then(|function| function.get("arguments"))
    else {
        return Err(invalid(format!(
            "Provider returned non-string JSON arguments for tool \"{name}\"."
        )));
    };
    Ok(ProviderToolCall {
        id,
        name,
        arguments: arguments.clone(),
    })
}

pub(crate) fn non_blank(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(body: &str) -> Result<Decoded, OpenRouterError> {
        decode_response(200, body, false, 1024)
    }

    fn ok_message(message: Value) -> Result<Decoded, OpenRouterError> {
        ok(&json!({"choices": [{"message": message}]}).to_string())
    }

    fn invalid_message(result: Result<Decoded, OpenRouterError>) -> String {
        let error = result.unwrap_err();
        assert_eq!(error.code, OPENROUTER_INVALID_RESPONSE);
        assert!(!error.retryable);
        error.message
    }

    #[test]
    fn decodes_text_and_tool_calls() {
        let decoded = ok_message(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": " c1 ", "type": "function", "function": {"name": " read_file ", "arguments": "{\"path\":\"a\"}"}}
        ]}))
        .unwrap();
        let Decoded::Completion(Some(reply)) = decoded else {
            panic!("{decoded:?}")
        };
        assert_eq!(reply.content, None);
        assert_eq!(
            reply.tool_calls,
            vec![ProviderToolCall {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: "{\"path\":\"a\"}".into()
            }]
        );
        let text = ok_message(json!({"role": "assistant", "content": "hi"})).unwrap();
        assert_eq!(
            text,
            Decoded::Completion(Some(AssistantReply {
                content: Some("hi".into()),
                tool_calls: vec![],
                usage: None,
                model: None,
                id: None,
                finish_reason: None,
            }))
        );
    }

    #[test]
    fn blank_and_choiceless_bodies_have_no_message() {
        assert_eq!(ok("  ").unwrap(), Decoded::Completion(None));
        assert_eq!(ok(r#"{"choices": []}"#).unwrap(), Decoded::Completion(None));
        assert_eq!(
            ok(r#"{"choices": [{"message": "text"}]}"#).unwrap(),
            Decoded::Completion(None)
        );
    }

    #[test]
    fn rejects_bodies_that_are_not_completions() {
        assert_eq!(
            invalid_message(ok("<html>")),
            "Endpoint returned an invalid JSON response (HTTP 200). Check the chat-completions endpoint."
        );
        assert_eq!(
            invalid_message(ok(r#"{"choices": [{"mess"#)),
            "Endpoint returned an invalid JSON response (HTTP 200). Check the chat-completions endpoint."
        );
        assert_eq!(
            invalid_message(ok("[1]")),
            "Endpoint returned a non-object JSON response."
        );
        assert_eq!(
            invalid_message(ok(r#"{"choices": {}}"#)),
            "Provider returned a non-array choices value."
        );
        assert_eq!(
            invalid_message(decode_response(200, "{}", true, 7)),
            "Endpoint response exceeded the 7-byte limit."
        );
    }

    #[test]
    fn rejects_untrustworthy_messages() {
        let call = |id: Value, kind: Value, name: Value, arguments: Value| json!({"role": "assistant", "tool_calls": [{"id": id, "type": kind, "function": {"name": name, "arguments": arguments}}]});
        let cases = [
            (
                json!({"role": "user", "content": "x"}),
                "Provider returned a message without the assistant role.",
            ),
            (
                json!({"content": "x"}),
                "Provider returned a message without the assistant role.",
            ),
            (
                json!({"role": "assistant", "content": 3}),
                "Provider returned non-string assistant content.",
            ),
            (
                json!({"role": "assistant", "tool_calls": {}}),
                "Provider returned a non-array assistant tool_calls value.",
            ),
            (
                call(json!(" "), json!("function"), json!("t"), json!("{}")),
                "Provider returned a tool call without a valid id at index 0.",
            ),
            (
                call(json!(7), json!("function"), json!("t"), json!("{}")),
                "Provider returned a tool call without a valid id at index 0.",
            ),
            (
                call(json!("c"), json!("code"), json!("t"), json!("{}")),
                "Provider returned a non-function tool call at index 0.",
            ),
            (
                call(json!("c"), json!("function"), json!(""), json!("{}")),
                "Provider returned a tool call without a function name at index 0.",
            ),
            (
                call(json!("c"), json!("function"), json!("t"), json!({})),
                "Provider returned non-string JSON arguments for tool \"t\".",
            ),
        ];
        for (message, expected) in cases {
            assert_eq!(
                invalid_message(ok_message(message.clone())),
                expected,
                "{message}"
            );
        }
        let missing_id = json!({"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "t", "arguments": "{}"}}]});
        assert_eq!(
            invalid_message(ok_message(missing_id)),
            "Provider returned a tool call without a valid id at index 0."
        );
        let function = json!({"name": "t", "arguments": "{}"});
        let duplicate = json!({"role": "assistant", "tool_calls": [
            {"id": "a", "type": "function", "function": function},
            {"id": " a", "type": "function", "function": function}
        ]});
        assert_eq!(
            invalid_message(ok_message(duplicate)),
            "Provider returned duplicate tool call id \"a\"."
        );
    }

    #[test]
    fn failures_carry_the_provider_message() {
        let failure = |status, body| decode_response(status, body, false, 1024).unwrap();
        assert_eq!(
            failure(429, r#"{"error": {"message": " Rate limit exceeded "}}"#),
            Decoded::Failure {
                status: 429,
                message: "Rate limit exceeded".into()
            }
        );
        assert_eq!(
            failure(500, ""),
            Decoded::Failure {
                status: 500,
                message: "Request failed (HTTP 500).".into()
            }
        );
        assert_eq!(
            failure(404, "[]"),
            Decoded::Failure {
                status: 404,
                message: "Request failed (HTTP 404).".into()
            }
        );
        let html = format!("<html>\n  <body>{}</body></html>", "x".repeat(400));
        let Decoded::Failure { message, .. } = failure(502, &html) else {
            panic!()
        };
        let prefix = "Request failed with a non-JSON response (HTTP 502): ";
        assert!(
            message.starts_with(&format!("{prefix}<html> <body>xx")),
            "{message}"
        );
        assert_eq!(
            message.chars().count(),
            prefix.chars().count() + ERROR_BODY_EXCERPT_CHARS
        );
    }

    #[test]
    fn an_excerpt_cut_at_a_collapsed_space_is_trimmed() {
        // Found by the openrouter_decode fuzz target: the cut fell on the space that joins two
        // words, so the quote ended in a space the documentation says is trimmed.
        let body = format!("{} b", "a".repeat(ERROR_BODY_EXCERPT_CHARS - 1));
        let Decoded::Failure { message, .. } = decode_response(500, &body, false, 1024).unwrap()
        else {
            panic!()
        };
        let prefix = "Request failed with a non-JSON response (HTTP 500): ";
        assert_eq!(
            message,
            format!("{prefix}{}", "a".repeat(ERROR_BODY_EXCERPT_CHARS - 1))
        );
    }

    #[test]
    fn an_ok_body_with_an_error_object_is_a_failure() {
        assert_eq!(
            ok(r#"{"error": {"code": 402, "message": "Insufficient credits"}}"#).unwrap(),
            Decoded::Failure {
                status: 402,
                message: "Insufficient credits".into()
            }
        );
        assert_eq!(
            ok(r#"{"error": {"code": "server_error"}}"#).unwrap(),
            Decoded::Failure {
                status: 502,
                message: "Request failed (HTTP 200).".into()
            }
        );
        assert_eq!(
            ok(r#"{"error": null, "choices": []}"#).unwrap(),
            Decoded::Completion(None)
        );
    }
}
