//! Safe retries of a mounted tool's call, on servers that honour an idempotency key.
//!
//! A call whose connection is lost after it was sent may or may not have run. Against a server
//! that advertises the `tool-context/idempotency` extension ([`crate::idempotency`]), a mount
//! sends a fresh key with every call of a tool that is not read-only, and on such a loss resends
//! the same request, same key, once the server is reachable again (bounded attempts with backoff):
//! the server replays what already ran instead of running it twice. Against any other server the
//! loss stays `TOOL_EXECUTION_UNKNOWN`, as before.

use std::time::Duration;

use rmcp::Peer;
use rmcp::model::{MetaObject, RequestMetaObject};
use rmcp::service::RoleClient;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::link::ServerLink;
use crate::idempotency::{IDEMPOTENCY_CAPABILITY, IDEMPOTENCY_META_KEY};

/// Resends after a lost connection before the call's outcome is reported unknown.
pub(crate) const MAX_RESENDS: u32 = 3;
/// The wait before the first resend; each later one doubles it.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// How long one resend waits for its server to be connected again.
const RECONNECT_WAIT: Duration = Duration::from_secs(10);
/// How often that wait looks.
const RECONNECT_POLL: Duration = Duration::from_millis(50);

/// Whether the connected server honours idempotency keys.
pub(crate) fn advertises(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| {
        let capabilities = &info.capabilities;
        let listed = |map: &Option<std::collections::BTreeMap<String, Map<String, Value>>>| {
            map.as_ref()
                .is_some_and(|map| map.contains_key(IDEMPOTENCY_CAPABILITY))
        };
        listed(&capabilities.experimental) || listed(&capabilities.extensions)
    })
}

/// A new key for one logical call.
pub(crate) fn new_key() -> String {
    format!("tc-{}", uuid::Uuid::new_v4().simple())
}

/// The request `_meta` carrying `key`, merged into what the request already has.
pub(crate) fn with_key(meta: Option<RequestMetaObject>, key: &str) -> RequestMetaObject {
    let mut meta = meta.unwrap_or_else(|| RequestMetaObject(MetaObject(Map::new())));
    meta.0
        .0
        .insert(IDEMPOTENCY_META_KEY.to_owned(), Value::from(key));
    meta
}

/// Waits out the backoff of resend `attempt` (1-based), then for the server to be connected;
/// `None` when the call was cancelled or the server did not come back in time.
pub(crate) async fn reconnected(
    link: &ServerLink,
    attempt: u32,
    cancellation: &CancellationToken,
) -> Option<Peer<RoleClient>> {
    let backoff = FIRST_BACKOFF * 2_u32.saturating_pow(attempt.saturating_sub(1));
    let waiting = async {
        tokio::time::sleep(backoff).await;
        let deadline = tokio::time::Instant::now() + RECONNECT_WAIT;
        loop {
            if let Some(peer) = link.peer() {
                return Some(peer);
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(RECONNECT_POLL).await;
        }
    };
    tokio::select! {
        peer = waiting => peer,
        () = cancellation.cancelled() => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_joins_the_request_meta_it_finds() {
        let mut existing = Map::new();
        existing.insert("traceparent".into(), Value::from("00-abc-def-01"));
        let meta = with_key(Some(RequestMetaObject(MetaObject(existing))), "tc-1");
        assert_eq!(meta.0.0["traceparent"], "00-abc-def-01");
        assert_eq!(meta.0.0[IDEMPOTENCY_META_KEY], "tc-1");
        assert_eq!(with_key(None, "tc-2").0.0[IDEMPOTENCY_META_KEY], "tc-2");
        assert_ne!(new_key(), new_key());
        assert!(crate::idempotency::key_of(&with_key(None, &new_key()).0.0).is_ok());
    }
}
