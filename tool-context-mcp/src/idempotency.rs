//! A client-chosen idempotency key on `tools/call`, so a retry after a lost response never runs
//! a mutation twice.
//!
//! The key travels in the request's `_meta` under [`IDEMPOTENCY_META_KEY`] (our namespace, like
//! `tool-context/error`; shaped after the request-idempotency proposal SEP-3182) and goes to the
//! registry's durable idempotency, scoped by tool and by who calls ([`scope`]: the request's
//! principal, or the server's request owner when unauthenticated), not by the transport's
//! session, since a retry after a lost response usually comes on a new connection:
//!
//! - the same key with the same arguments replays the recorded result, marked
//!   `_meta["tool-context/replay"]`, without asking for approval again or running again;
//! - the same key with other arguments is `TOOL_IDEMPOTENCY_CONFLICT`;
//! - the same key while the first call still runs waits for it (up to [`PENDING_WAIT`], the
//!   request's cancellation ends the wait) and answers what it recorded, replayed; past the
//!   bound it is `TOOL_IDEMPOTENCY_PENDING` (retryable, with the owner and lease end): never a
//!   second run;
//! - a key whose outcome is unknown is `TOOL_IDEMPOTENCY_UNKNOWN` until reconciled.
//!
//! Across `input_required` rounds the client sends the same key on each continuation: a round
//! that only asks the client claims nothing lasting (the claim is released as unstarted), so the
//! key identifies the one call that finally runs.
//!
//! Servers advertise it in their capabilities as
//! `experimental["tool-context/idempotency"] = {"metaKey": "tool-context/idempotency-key",
//! "maxKeyLength": 256}`.

use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tool_context::{ToolCallOptions, ToolRegistry};
use tool_protocol::idempotency::MAX_IDEMPOTENCY_KEY_CHARS;
use tool_protocol::{ToolCallError, ToolCallRequest, ToolCallResult, codes};

/// How long a keyed call waits for another call of its key that is still running.
pub const PENDING_WAIT: Duration = Duration::from_secs(30);
/// The first pause between looks at a running call's record; it doubles up to a second.
const FIRST_PAUSE: Duration = Duration::from_millis(50);
const LONGEST_PAUSE: Duration = Duration::from_secs(1);

/// The `_meta` key of a `tools/call` idempotency key.
pub const IDEMPOTENCY_META_KEY: &str = "tool-context/idempotency-key";
/// The name of the capability under `experimental`.
pub const IDEMPOTENCY_CAPABILITY: &str = "tool-context/idempotency";

/// The capability object servers advertise.
pub fn capability() -> Map<String, Value> {
    let Value::Object(object) = json!({
        "metaKey": IDEMPOTENCY_META_KEY,
        "maxKeyLength": MAX_IDEMPOTENCY_KEY_CHARS,
    }) else {
        unreachable!("a JSON object literal")
    };
    object
}

/// Runs a keyed call; while another call of its key still runs (`TOOL_IDEMPOTENCY_PENDING`),
/// looks again, with growing pauses, until that call recorded its outcome (this one then
/// replays it), `PENDING_WAIT` passed or `cancellation` fired (the pending answer stands).
/// The durable claim comes before any approval, so looking again never asks twice.
pub(crate) async fn call_waiting_for_pending(
    registry: &ToolRegistry,
    request: ToolCallRequest,
    options: ToolCallOptions,
    cancellation: &CancellationToken,
) -> ToolCallResult {
    let deadline = Instant::now() + PENDING_WAIT;
    let mut pause = FIRST_PAUSE;
    loop {
        let result = registry.call_tool(request.clone(), options.clone()).await;
        let pending = result.error_code() == Some(codes::TOOL_IDEMPOTENCY_PENDING);
        if !pending || Instant::now() + pause > deadline {
            return result;
        }
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = cancellation.cancelled() => return result,
        }
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

/// The session a wire-keyed call is recorded under: its owner's, so a retry on any connection
/// (or with no session) finds the first call, and another principal's key never does.
pub fn scope(owner: &str) -> String {
    format!("mcp-owner:{owner}")
}

/// The key a request's `_meta` carries, if any. A key that is not a string of 1 to 256 visible
/// ASCII characters (no spaces or control characters) is refused with `TOOL_INVALID_OPTIONS`.
pub fn key_of(meta: &Map<String, Value>) -> Result<Option<String>, ToolCallError> {
    let Some(value) = meta.get(IDEMPOTENCY_META_KEY) else {
        return Ok(None);
    };
    let key = value.as_str().filter(|key| is_wire_key(key));
    match key {
        Some(key) => Ok(Some(key.to_owned())),
        None => Err(ToolCallError::new(
            codes::TOOL_INVALID_OPTIONS,
            format!(
                "_meta[\"{IDEMPOTENCY_META_KEY}\"] must be a string of 1 to \
                 {MAX_IDEMPOTENCY_KEY_CHARS} visible ASCII characters."
            ),
        )
        .with_retryable(false)),
    }
}

/// The client's key, from the request's `_meta` (or the context's, where the transport moved
/// it).
pub(crate) fn key_of_request(
    params: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<Option<String>, ToolCallError> {
    match params.meta.as_ref() {
        Some(meta) if meta.0.contains_key(IDEMPOTENCY_META_KEY) => key_of(&meta.0),
        _ => key_of(&context.meta.0),
    }
}

fn is_wire_key(key: &str) -> bool {
    (1..=MAX_IDEMPOTENCY_KEY_CHARS).contains(&key.len())
        && key.bytes().all(|b| b.is_ascii_graphic())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(value: Value) -> Map<String, Value> {
        Map::from_iter([(IDEMPOTENCY_META_KEY.to_owned(), value)])
    }

    #[test]
    fn a_key_is_read_and_bad_keys_are_coded_errors() {
        assert_eq!(key_of(&Map::new()).unwrap(), None);
        assert_eq!(
            key_of(&meta(json!("order-42:retry"))).unwrap().as_deref(),
            Some("order-42:retry")
        );
        let longest = "k".repeat(MAX_IDEMPOTENCY_KEY_CHARS);
        assert_eq!(key_of(&meta(json!(longest))).unwrap(), Some(longest));
        for bad in [
            json!(""),
            json!("has space"),
            json!("tab\tkey"),
            json!("é"),
            json!(42),
            json!(null),
            json!("k".repeat(MAX_IDEMPOTENCY_KEY_CHARS + 1)),
        ] {
            let error = key_of(&meta(bad.clone())).unwrap_err();
            assert_eq!(error.code, codes::TOOL_INVALID_OPTIONS, "{bad}");
            assert_eq!(error.retryable, Some(false), "{bad}");
        }
    }
}
