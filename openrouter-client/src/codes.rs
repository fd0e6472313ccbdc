//! The `OPENROUTER_*` error codes, each with its retryable flag and when it fires.
//!
//! The first twelve match the reference implementation; [`OPENROUTER_PAYMENT_REQUIRED`],
//! [`OPENROUTER_REPEATED_TOOL_FAILURE`], [`OPENROUTER_CANCELLED`] and
//! [`OPENROUTER_TOOLS_UNSUPPORTED`] are additions of this crate.
//!
//! ## Every provider profile produces these codes
//!
//! The codes name the crate's failure kinds, not the provider: a generic OpenAI-compatible
//! endpoint, a llama.cpp server or Ollama fail with the same `OPENROUTER_*` codes, classified the
//! same way, so a caller handles one set:
//!
//! | Provider answer | Code |
//! |---|---|
//! | no key where the profile needs one, no model, a bad URL, a key for plain `http://` to a non-loopback host, HTTP 400/404/... | [`OPENROUTER_CONFIGURATION_ERROR`] |
//! | HTTP 401 / 402 / 403 | [`OPENROUTER_AUTHENTICATION_FAILED`] / [`OPENROUTER_PAYMENT_REQUIRED`] / [`OPENROUTER_ACCESS_DENIED`] |
//! | HTTP 429 (after retries, `Retry-After` honoured) | [`OPENROUTER_RATE_LIMITED`] |
//! | HTTP 5xx; a 2xx body whose `error` is an object without an HTTP `code` or a string (Ollama's native form); a choice that finished with `error`; an error event in an event stream | [`OPENROUTER_PROVIDER_ERROR`] (or the code of the body's HTTP `code`) |
//! | connection refused, unknown host | [`OPENROUTER_NETWORK_ERROR`] |
//! | the model cannot take tools (Ollama `does not support tools`, llama.cpp `tools param requires --jinja flag`, OpenRouter `No endpoints found that support tool use`, OpenAI `'tools' is not supported`) | [`OPENROUTER_TOOLS_UNSUPPORTED`] |
//! | an event stream without an error, malformed JSON or tool calls | [`OPENROUTER_INVALID_RESPONSE`] |

/// Missing API key or model, or an HTTP status that is not 401/402/403/429/5xx (400, 404, ...).
pub const OPENROUTER_CONFIGURATION_ERROR: &str = "OPENROUTER_CONFIGURATION_ERROR";
/// HTTP 401: the API key was rejected.
pub const OPENROUTER_AUTHENTICATION_FAILED: &str = "OPENROUTER_AUTHENTICATION_FAILED";
/// HTTP 402: the account has no credits left (addition of this crate).
pub const OPENROUTER_PAYMENT_REQUIRED: &str = "OPENROUTER_PAYMENT_REQUIRED";
/// HTTP 403: the key may not use this model or endpoint (moderation, region, data policy).
pub const OPENROUTER_ACCESS_DENIED: &str = "OPENROUTER_ACCESS_DENIED";
/// HTTP 429 after the transient retries were used.
pub const OPENROUTER_RATE_LIMITED: &str = "OPENROUTER_RATE_LIMITED";
/// HTTP 5xx (JSON or not) after the transient retries were used.
pub const OPENROUTER_PROVIDER_ERROR: &str = "OPENROUTER_PROVIDER_ERROR";
/// The request could not be sent or its body not read, after the transient retries.
pub const OPENROUTER_NETWORK_ERROR: &str = "OPENROUTER_NETWORK_ERROR";
/// The per-request timeout elapsed, after the transient retries.
pub const OPENROUTER_TIMEOUT: &str = "OPENROUTER_TIMEOUT";
/// A 2xx response that is not a valid chat completion (bad JSON, wrong role, malformed or
/// duplicate tool calls, oversized body).
pub const OPENROUTER_INVALID_RESPONSE: &str = "OPENROUTER_INVALID_RESPONSE";
/// A tool call's `function.arguments` is not JSON or not a JSON object; nothing of that
/// response ran.
pub const OPENROUTER_INVALID_TOOL_CALL: &str = "OPENROUTER_INVALID_TOOL_CALL";
/// A 2xx response without `choices[0].message`.
pub const OPENROUTER_NO_ASSISTANT_MESSAGE: &str = "OPENROUTER_NO_ASSISTANT_MESSAGE";
/// The run used all of its provider turns.
pub const OPENROUTER_TOOL_LOOP_LIMIT: &str = "OPENROUTER_TOOL_LOOP_LIMIT";
/// A response would take the run past its tool-call budget; none of its calls ran.
pub const OPENROUTER_TOOL_CALL_LIMIT: &str = "OPENROUTER_TOOL_CALL_LIMIT";
/// The same call (tool, arguments, error code) failed three times in one run (addition of
/// this crate: stops a model that repeats a failing call from burning the budget).
pub const OPENROUTER_REPEATED_TOOL_FAILURE: &str = "OPENROUTER_REPEATED_TOOL_FAILURE";
/// The caller cancelled the run (addition of this crate; never reported as a timeout).
pub const OPENROUTER_CANCELLED: &str = "OPENROUTER_CANCELLED";
/// The provider says the model cannot take tool definitions (addition of this crate: a model
/// choice to fix, so it is not retried even when the provider answered 5xx, as llama.cpp does).
pub const OPENROUTER_TOOLS_UNSUPPORTED: &str = "OPENROUTER_TOOLS_UNSUPPORTED";

/// One row of [`OPENROUTER_ERROR_CODES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenRouterCodeInfo {
    /// The stable code string.
    pub code: &'static str,
    /// Whether an error with this code may succeed when the caller retries.
    pub retryable: bool,
}

/// Every `OPENROUTER_*` code with its retryable flag.
pub const OPENROUTER_ERROR_CODES: &[OpenRouterCodeInfo] = &[
    row(OPENROUTER_CONFIGURATION_ERROR, false),
    row(OPENROUTER_AUTHENTICATION_FAILED, false),
    row(OPENROUTER_PAYMENT_REQUIRED, false),
    row(OPENROUTER_ACCESS_DENIED, false),
    row(OPENROUTER_RATE_LIMITED, true),
    row(OPENROUTER_PROVIDER_ERROR, true),
    row(OPENROUTER_NETWORK_ERROR, true),
    row(OPENROUTER_TIMEOUT, true),
    row(OPENROUTER_INVALID_RESPONSE, false),
    row(OPENROUTER_INVALID_TOOL_CALL, true),
    row(OPENROUTER_NO_ASSISTANT_MESSAGE, true),
    row(OPENROUTER_TOOL_LOOP_LIMIT, false),
    row(OPENROUTER_TOOL_CALL_LIMIT, false),
    row(OPENROUTER_REPEATED_TOOL_FAILURE, false),
    row(OPENROUTER_CANCELLED, true),
    row(OPENROUTER_TOOLS_UNSUPPORTED, false),
];

const fn row(code: &'static str, retryable: bool) -> OpenRouterCodeInfo {
    OpenRouterCodeInfo { code, retryable }
}

/// The retryable flag of a code; `false` for strings that are not `OPENROUTER_*` codes.
pub fn is_retryable_code(code: &str) -> bool {
    OPENROUTER_ERROR_CODES
        .iter()
        .any(|info| info.code == code && info.retryable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_code_is_listed_once_with_its_flag() {
        let codes: HashSet<_> = OPENROUTER_ERROR_CODES
            .iter()
            .map(|info| info.code)
            .collect();
        assert_eq!(codes.len(), 16);
        assert!(!is_retryable_code(OPENROUTER_TOOLS_UNSUPPORTED));
        assert!(codes.iter().all(|code| code.starts_with("OPENROUTER_")));
        assert!(is_retryable_code(OPENROUTER_RATE_LIMITED));
        assert!(is_retryable_code(OPENROUTER_INVALID_TOOL_CALL));
        assert!(!is_retryable_code(OPENROUTER_PAYMENT_REQUIRED));
        assert!(!is_retryable_code(OPENROUTER_INVALID_RESPONSE));
        assert!(!is_retryable_code("TOOL_TIMEOUT"));
    }
}
