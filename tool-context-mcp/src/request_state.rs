//! Sealed `requestState` of an approval asked with `input_required` (protocol 2026-07-28).
//!
//! The server keeps nothing between the two rounds of an approval: everything it needs on the
//! retry travels in the `requestState` the client echoes, sealed with HMAC-SHA256 by rmcp's
//! [`RequestStateCodec`] under a per-server [`RequestStateKey`] and bound (as associated data,
//! so it is authenticated but never readable) to the tool name, a digest of the call's
//! arguments and the requests' owner. It also carries an expiry and a random nonce.
//!
//! On the retry the state is opened against the retry's own tool, arguments and owner: a state
//! that was forged, altered, or is replayed against another tool, other arguments or another
//! owner fails authentication ([`MCP_REQUEST_STATE_INVALID`]); an authentic one past its expiry
//! is [`MCP_REQUEST_STATE_EXPIRED`]. The nonce is then redeemed once in a durable operation
//! store (an atomic claim of `mcp-request-state:<nonce>`), the only server-side memory: a second
//! use is [`MCP_REQUEST_STATE_REPLAYED`].
//!
//! Hosts that share the key accept each other's states; to share the replay guard too they
//! must share the durable store (the registry's, or [`McpToolServer::with_durable_store`]),
//! since a claim is only atomic within one store. With the same key and store it all survives a
//! restart.
//!
//! [`McpToolServer::with_durable_store`]: crate::McpToolServer::with_durable_store

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{RequestStateCodec, RequestStateError, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tool_durable_operations::{ClaimRequest, ClaimStatus, DurableOperationStore};
use tool_protocol::idempotency::tool_call_fingerprint;

/// `data.code` of a `requestState` that is not one this server sealed for this tool, these
/// arguments and this owner (forged, altered, truncated, or sealed under another key).
pub const MCP_REQUEST_STATE_INVALID: &str = "MCP_REQUEST_STATE_INVALID";
/// `data.code` of an authentic `requestState` whose approval window has passed.
pub const MCP_REQUEST_STATE_EXPIRED: &str = "MCP_REQUEST_STATE_EXPIRED";
/// `data.code` of an authentic `requestState` that was already used once.
pub const MCP_REQUEST_STATE_REPLAYED: &str = "MCP_REQUEST_STATE_REPLAYED";
/// How long an approval question stays answerable unless configured otherwise.
pub const DEFAULT_REQUEST_STATE_TTL: Duration = Duration::from_secs(15 * 60);
/// Key prefix of the replay-guard records in the durable store.
pub const REPLAY_KEY_PREFIX: &str = "mcp-request-state:";

const ASSOCIATED_DATA_LABEL: &str = "tool-context-mcp/approval/v1";
const REPLAY_FINGERPRINT: &str = "tool-context-mcp/request-state/v1";

/// The secret that seals `requestState`: at least [`RequestStateKey::MIN_LEN`] random bytes.
/// Give every host that should accept the others' states the same key (the studio keeps its
/// key in its private data directory). Never logged: `Debug` redacts it.
#[derive(Clone)]
pub struct RequestStateKey(Arc<[u8]>);

impl fmt::Debug for RequestStateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RequestStateKey(<redacted>)")
    }
}

/// A key shorter than [`RequestStateKey::MIN_LEN`] bytes.
#[derive(Debug, thiserror::Error)]
#[error("a requestState key needs at least {minimum} bytes, got {actual}")]
pub struct KeyTooShort {
    /// The minimum length.
    pub minimum: usize,
    /// The given length.
    pub actual: usize,
}

impl RequestStateKey {
    /// Minimum key length in bytes (HMAC-SHA256 wants a full block of entropy).
    pub const MIN_LEN: usize = RequestStateCodec::MIN_KEY_LENGTH;

    /// A fresh random key (the operating system's generator).
    ///
    /// ```
    /// use tool_context_mcp::RequestStateKey;
    /// let key = RequestStateKey::generate();
    /// assert_eq!(key.as_bytes().len(), RequestStateKey::MIN_LEN);
    /// assert_eq!(format!("{key:?}"), "RequestStateKey(<redacted>)");
    /// ```
    pub fn generate() -> Self {
        let mut bytes = [0_u8; Self::MIN_LEN];
        // The OS generator failing leaves no safe fallback for a signing key.
        getrandom::fill(&mut bytes).expect("the operating system's random generator failed");
        Self(Arc::from(bytes.as_slice()))
    }

    /// A key from stored bytes.
    ///
    /// # Errors
    /// [`KeyTooShort`] below [`Self::MIN_LEN`] bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, KeyTooShort> {
        if bytes.len() < Self::MIN_LEN {
            return Err(KeyTooShort {
                minimum: Self::MIN_LEN,
                actual: bytes.len(),
            });
        }
        Ok(Self(Arc::from(bytes)))
    }

    /// The raw bytes (to store the key; keep them private).
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// What a sealed state is bound to: the retry must name the same tool with the same arguments
/// for the same owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    pub(crate) tool: String,
    pub(crate) argument_digest: String,
    pub(crate) owner: String,
}

impl Binding {
    pub(crate) fn new(
        tool: &str,
        arguments: Option<&serde_json::Map<String, Value>>,
        owner: &str,
    ) -> Self {
        let arguments = arguments.cloned().map(Value::Object).unwrap_or(json!({}));
        Self {
            tool: tool.to_owned(),
            argument_digest: tool_call_fingerprint(tool, &arguments),
            owner: owner.to_owned(),
        }
    }

    fn associated_data(&self) -> Vec<u8> {
        // NUL never occurs in a tool name, a digest or an owner id, so the fields cannot run
        // into each other.
        [
            ASSOCIATED_DATA_LABEL,
            &self.tool,
            &self.argument_digest,
            &self.owner,
        ]
        .join("\0")
        .into_bytes()
    }
}

/// The readable part of a sealed state (signed, not encrypted: nothing secret in it).
#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    nonce: String,
}

/// Seals and opens approval states; redeems each once.
#[derive(Clone)]
pub(crate) struct StateSeal {
    codec: RequestStateCodec,
    ttl: Duration,
}

impl fmt::Debug for StateSeal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateSeal")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl StateSeal {
    pub(crate) fn new(key: &RequestStateKey, ttl: Duration) -> Self {
        Self {
            // Length checked by `RequestStateKey`.
            codec: RequestStateCodec::new_unchecked(key.as_bytes().to_vec()),
            ttl: ttl.max(Duration::from_millis(1)),
        }
    }

    /// A new single-use state for `binding`.
    pub(crate) fn seal(&self, binding: &Binding) -> String {
        let payload = Payload {
            nonce: uuid::Uuid::new_v4().simple().to_string(),
        };
        let associated_data = binding.associated_data();
        let options = SealOptions::new()
            .associated_data(&associated_data)
            .ttl(self.ttl);
        self.codec
            .seal_json_with(&payload, &options)
            .expect("a string payload always serializes")
    }

    /// Opens `sealed` for `binding` and redeems it in `store`: `Ok` exactly once per state.
    pub(crate) async fn redeem(
        &self,
        sealed: &str,
        binding: &Binding,
        store: &DurableOperationStore,
    ) -> Result<(), McpError> {
        let payload: Payload = self
            .codec
            .open_json_with(sealed, &binding.associated_data())
            .map_err(refusal)?;
        let key = format!(
            "{REPLAY_KEY_PREFIX}{}",
            owner_scoped(&binding.owner, &payload.nonce)
        );
        let claim = store
            .claim(ClaimRequest {
                key: &key,
                fingerprint: REPLAY_FINGERPRINT,
                owner_id: "tool-context-mcp",
                lease: Some(self.ttl),
            })
            .await
            .map_err(|error| {
                McpError::internal_error(
                    format!("The approval could not be checked against replays: {error}"),
                    None,
                )
            })?;
        if claim.status != ClaimStatus::Owner {
            return Err(state_error(
                MCP_REQUEST_STATE_REPLAYED,
                "This requestState was already used: an approval answers one retry only. Call the tool again for a new approval.",
            ));
        }
        // Settled at once: the record only has to exist for the next claim to see it.
        let settled = store
            .complete(
                &key,
                &claim.record.owner_id,
                json!({"redeemed": true}),
                &claim.fence,
            )
            .await;
        if let Err(error) = settled {
            tracing::warn!(%error, "replay-guard record not settled; it stays pending until its lease ends");
        }
        Ok(())
    }
}

/// The nonce's record key, scoped by a digest of the owner so owners never collide.
fn owner_scoped(owner: &str, nonce: &str) -> String {
    let owner = hex::encode(Sha256::digest(owner.as_bytes()));
    format!("{}:{nonce}", &owner[..16])
}

/// One client-facing error per cause a client can act on; which check failed inside the codec
/// stays internal (rmcp's advice: no oracle on the seal).
fn refusal(error: RequestStateError) -> McpError {
    match error {
        RequestStateError::Expired => state_error(
            MCP_REQUEST_STATE_EXPIRED,
            "This requestState has expired: the approval was not answered in time. Call the tool again for a new approval.",
        ),
        other => {
            tracing::debug!(error = %other, "requestState refused");
            state_error(
                MCP_REQUEST_STATE_INVALID,
                "This requestState is not valid for this call: it was altered, or sealed for another tool, other arguments, another owner or another server key.",
            )
        }
    }
}

fn state_error(code: &str, message: &str) -> McpError {
    McpError::invalid_params(message.to_owned(), Some(json!({ "code": code })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc as StdArc;
    use tool_durable_operations::MemoryBackend;

    fn store() -> DurableOperationStore {
        DurableOperationStore::new(StdArc::new(MemoryBackend::new()))
    }

    fn code(error: &McpError) -> &str {
        error.data.as_ref().unwrap()["code"].as_str().unwrap()
    }

    fn binding(text: &str) -> Binding {
        let arguments = json!({"name": "a", "text": text});
        Binding::new("notes.write", arguments.as_object(), "owner-1")
    }

    #[test]
    fn short_keys_are_refused() {
        assert!(RequestStateKey::from_bytes(&[7; 31]).is_err());
        assert!(RequestStateKey::from_bytes(&[7; 32]).is_ok());
    }

    #[test]
    fn the_argument_digest_ignores_key_order() {
        let one = Binding::new("t", json!({"a": 1, "b": 2}).as_object(), "o");
        let two = Binding::new("t", json!({"b": 2, "a": 1}).as_object(), "o");
        assert_eq!(one, two);
        assert_eq!(
            Binding::new("t", None, "o"),
            Binding::new("t", json!({}).as_object(), "o")
        );
    }

    #[tokio::test]
    async fn a_state_redeems_once_then_is_replayed() {
        let seal = StateSeal::new(&RequestStateKey::generate(), DEFAULT_REQUEST_STATE_TTL);
        let store = store();
        let state = seal.seal(&binding("x"));
        seal.redeem(&state, &binding("x"), &store).await.unwrap();
        let replay = seal
            .redeem(&state, &binding("x"), &store)
            .await
            .unwrap_err();
        assert_eq!(code(&replay), MCP_REQUEST_STATE_REPLAYED);
    }

    #[tokio::test]
    async fn other_arguments_tools_owners_and_keys_are_invalid() {
        let key = RequestStateKey::generate();
        let seal = StateSeal::new(&key, DEFAULT_REQUEST_STATE_TTL);
        let store = store();
        let state = seal.seal(&binding("x"));
        let mut other_owner = binding("x");
        other_owner.owner = "owner-2".into();
        let mut other_tool = binding("x");
        other_tool.tool = "notes.delete".into();
        for wrong in [binding("y"), other_owner, other_tool] {
            let error = seal.redeem(&state, &wrong, &store).await.unwrap_err();
            assert_eq!(code(&error), MCP_REQUEST_STATE_INVALID);
        }
        let other_key = StateSeal::new(&RequestStateKey::generate(), DEFAULT_REQUEST_STATE_TTL);
        let error = other_key
            .redeem(&state, &binding("x"), &store)
            .await
            .unwrap_err();
        assert_eq!(code(&error), MCP_REQUEST_STATE_INVALID);
        let mut altered = state.clone().into_bytes();
        let middle = altered.len() / 2;
        altered[middle] = if altered[middle] == b'A' { b'B' } else { b'A' };
        let altered = String::from_utf8(altered).unwrap();
        let error = seal
            .redeem(&altered, &binding("x"), &store)
            .await
            .unwrap_err();
        assert_eq!(code(&error), MCP_REQUEST_STATE_INVALID);
        // None of the refusals used the state up.
        seal.redeem(&state, &binding("x"), &store).await.unwrap();
    }

    #[tokio::test]
    async fn an_expired_state_is_refused_as_expired() {
        let seal = StateSeal::new(&RequestStateKey::generate(), Duration::from_millis(1));
        let state = seal.seal(&binding("x"));
        tokio::time::sleep(Duration::from_millis(20)).await;
        let error = seal
            .redeem(&state, &binding("x"), &store())
            .await
            .unwrap_err();
        assert_eq!(code(&error), MCP_REQUEST_STATE_EXPIRED);
    }

    #[tokio::test]
    async fn the_same_key_opens_states_across_seals() {
        let key = RequestStateKey::from_bytes(&[9; 32]).unwrap();
        let state = StateSeal::new(&key, DEFAULT_REQUEST_STATE_TTL).seal(&binding("x"));
        let restarted = StateSeal::new(
            &RequestStateKey::from_bytes(&[9; 32]).unwrap(),
            DEFAULT_REQUEST_STATE_TTL,
        );
        restarted
            .redeem(&state, &binding("x"), &store())
            .await
            .unwrap();
    }
}
