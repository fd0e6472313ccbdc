//! The OpenRouter response decoder: every byte a provider (or a misconfigured endpoint) sends
//! back goes through `decode_response` before any tool runs. Input: one byte choosing the HTTP
//! status and the truncation flag, then the body. An accepted completion carries exactly the
//! provider's calls, each with a non-blank trimmed id unique in the response (no duplicate id
//! ever reaches a tool), and every outcome has the documented shape.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use openrouter_tool_loop::codes::OPENROUTER_INVALID_RESPONSE;
use openrouter_tool_loop::{
    Decoded, ERROR_BODY_EXCERPT_CHARS, IN_BODY_ERROR_FALLBACK_STATUS, decode_response,
};
use serde_json::Value;

const STATUSES: [u16; 16] = [
    200, 200, 200, 200, 201, 204, 299, 100, 302, 400, 401, 402, 429, 500, 502, 503,
];
const LIMIT: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let Ok(body) = std::str::from_utf8(body) else {
        return;
    };
    let status = STATUSES[usize::from(selector & 0x0f)];
    let truncated = selector & 0x10 != 0;
    let ok = (200..300).contains(&status);
    match decode_response(status, body, truncated, LIMIT) {
        Ok(Decoded::Failure {
            status: reported,
            message,
        }) => assert_failure(status, reported, &message, body),
        Ok(Decoded::Completion(reply)) => {
            assert!(ok && !truncated, "a completion from HTTP {status}");
            let calls = reply.map(|reply| reply.tool_calls).unwrap_or_default();
            assert_calls_are_the_providers(body, &calls);
        }
        Err(error) => {
            assert!(ok, "HTTP {status} must decode to a failure, not {error:?}");
            assert_eq!(error.code, OPENROUTER_INVALID_RESPONSE);
            assert!(!error.retryable, "{error:?}");
            assert!(!error.message.trim().is_empty());
        }
    }
});

fn assert_failure(status: u16, reported: u16, message: &str, body: &str) {
    assert!(!message.trim().is_empty(), "a failure without a message");
    if (200..300).contains(&status) {
        // An in-body error object: its code when that is an HTTP error status.
        assert!(
            (400..=599).contains(&reported) || reported == IN_BODY_ERROR_FALLBACK_STATUS,
            "in-body error reported as HTTP {reported}"
        );
        assert!(
            carries_in_body_error(body),
            "a 2xx failure without an in-body error: {body:?}"
        );
    } else {
        assert_eq!(reported, status, "the failure must keep the HTTP status");
        if serde_json::from_str::<Value>(body).is_err() && !body.trim().is_empty() {
            // A quoted non-JSON body is cut to the excerpt length.
            let prefix = format!("Request failed with a non-JSON response (HTTP {status}): ");
            let quoted = message
                .strip_prefix(&prefix)
                .unwrap_or_else(|| panic!("unexpected non-JSON failure message {message:?}"));
            assert!(quoted.chars().count() <= ERROR_BODY_EXCERPT_CHARS);
            assert_eq!(quoted.trim(), quoted);
        }
    }
}

/// Whether a 2xx body reports an error itself: a JSON object (or, for a provider that streams,
/// a `data:` event) whose `error`, or whose first choice's `error`, is an object or a non-blank
/// string.
fn carries_in_body_error(body: &str) -> bool {
    let documents: Vec<Value> = match serde_json::from_str::<Value>(body) {
        Ok(document) => vec![document],
        Err(_) => body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect(),
    };
    documents.iter().any(|document| {
        [&document["error"], &document["choices"][0]["error"]]
            .into_iter()
            .any(|error| {
                error.is_object() || error.as_str().is_some_and(|text| !text.trim().is_empty())
            })
    })
}

/// Re-reads the body independently: the decoded calls are the provider's, in order, with
/// trimmed non-blank ids (distinct) and names, and the raw argument text.
fn assert_calls_are_the_providers(body: &str, calls: &[openrouter_tool_loop::ProviderToolCall]) {
    let raw = if body.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str::<Value>(body).expect("a completion is JSON")
    };
    let raw_calls = raw["choices"][0]["message"]["tool_calls"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(calls.len(), raw_calls.len(), "calls were dropped or added");
    let mut ids = HashSet::new();
    for (call, raw_call) in calls.iter().zip(&raw_calls) {
        assert!(
            !call.id.is_empty() && call.id.trim() == call.id,
            "id {:?}",
            call.id
        );
        assert!(
            ids.insert(call.id.as_str()),
            "duplicate tool call id {:?}",
            call.id
        );
        assert_eq!(
            Some(call.id.as_str()),
            raw_call["id"].as_str().map(str::trim)
        );
        assert!(!call.name.is_empty() && call.name.trim() == call.name);
        assert_eq!(
            Some(call.name.as_str()),
            raw_call["function"]["name"].as_str().map(str::trim)
        );
        assert_eq!(
            Some(call.arguments.as_str()),
            raw_call["function"]["arguments"].as_str()
        );
        assert_eq!(raw_call["type"], "function");
    }
}
