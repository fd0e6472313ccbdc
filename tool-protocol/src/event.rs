//! Lifecycle events of a tool call and their execution provenance.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::context::ToolCallContext;
use crate::request::{ToolCallId, ToolCallRequest};
use crate::result::ToolCallResult;

/// Schema version of [`ToolExecutionProvenance`].
pub const PROVENANCE_SCHEMA_VERSION: &str = "context-action-tool-execution-provenance.v1";
/// Phase of [`ToolExecutionProvenance`].
pub const PROVENANCE_PHASE: &str = "tool-call";

/// Execution state recorded in provenance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProvenanceState {
    /// The call has started.
    Pending,
    /// The call succeeded.
    Completed,
    /// The call failed with a definite outcome.
    Failed,
    /// The caller cancelled the call.
    Cancelled,
    /// The outcome may include effects that were not observed (timeout, abort, unknown).
    Unknown,
}

/// Who ran a call, under which budgets, and how it ended. Never carries arguments,
/// credentials or result payloads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolExecutionProvenance {
    /// Execution owner id (canonical: trimmed, 1..=256 chars, no NUL).
    pub owner_id: String,
    /// Execution state.
    pub state: ProvenanceState,
    /// The call's timeout budget, when one was set.
    pub timeout_ms: Option<u64>,
    /// The call's output budget, when one was set.
    pub max_output_bytes: Option<u64>,
    /// UTF-8 bytes of the result surface.
    pub used_output_bytes: u64,
    /// Wall-clock milliseconds since the call started.
    pub elapsed_ms: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ProvenanceWire {
    schema_version: String,
    phase: String,
    owner_id: String,
    state: ProvenanceState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_output_bytes: Option<u64>,
    used_output_bytes: u64,
    elapsed_ms: u64,
}

impl Serialize for ToolExecutionProvenance {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ProvenanceWire {
            schema_version: PROVENANCE_SCHEMA_VERSION.to_owned(),
            phase: PROVENANCE_PHASE.to_owned(),
            owner_id: self.owner_id.clone(),
            state: self.state,
            timeout_ms: self.timeout_ms,
            max_output_bytes: self.max_output_bytes,
            used_output_bytes: self.used_output_bytes,
            elapsed_ms: self.elapsed_ms,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolExecutionProvenance {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = ProvenanceWire::deserialize(deserializer)?;
        if wire.schema_version != PROVENANCE_SCHEMA_VERSION || wire.phase != PROVENANCE_PHASE {
            return Err(D::Error::custom(
                "unsupported provenance schemaVersion or phase",
            ));
        }
        Ok(Self {
            owner_id: wire.owner_id,
            state: wire.state,
            timeout_ms: wire.timeout_ms,
            max_output_bytes: wire.max_output_bytes,
            used_output_bytes: wire.used_output_bytes,
            elapsed_ms: wire.elapsed_ms,
        })
    }
}

/// Kind of a lifecycle event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCallEventType {
    /// The call passed request and option validation and started.
    Started,
    /// The call finished with a success result.
    Completed,
    /// The call finished with an error result.
    Failed,
}

/// A lifecycle event: `started`, then exactly one of `completed` or `failed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallEvent {
    /// Event kind.
    #[serde(rename = "type")]
    pub event_type: ToolCallEventType,
    /// Registry-assigned id unique per call, so a missing or reused provider id never merges
    /// two calls.
    pub trace_id: String,
    /// Provider correlation id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<ToolCallId>,
    /// Tool name.
    pub name: String,
    /// The canonical request (observers must redact it before storing anything).
    pub request: ToolCallRequest,
    /// Call context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ToolCallContext>,
    /// Milliseconds since the Unix epoch.
    pub timestamp: u64,
    /// Execution provenance.
    pub provenance: ToolExecutionProvenance,
    /// Duration of the call (finish events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The result (finish events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ToolCallResult>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn provenance_serializes_with_its_schema_and_phase() {
        let provenance = ToolExecutionProvenance {
            owner_id: "studio:1".into(),
            state: ProvenanceState::Pending,
            timeout_ms: Some(0),
            max_output_bytes: None,
            used_output_bytes: 0,
            elapsed_ms: 0,
        };
        let wire = serde_json::to_value(&provenance).unwrap();
        assert_eq!(
            wire,
            json!({"schemaVersion": PROVENANCE_SCHEMA_VERSION, "phase": "tool-call", "ownerId": "studio:1", "state": "pending", "timeoutMs": 0, "usedOutputBytes": 0, "elapsedMs": 0})
        );
        assert_eq!(
            serde_json::from_value::<ToolExecutionProvenance>(wire).unwrap(),
            provenance
        );
    }

    #[test]
    fn provenance_rejects_unknown_fields_and_versions() {
        let base = json!({"schemaVersion": PROVENANCE_SCHEMA_VERSION, "phase": "tool-call", "ownerId": "o", "state": "failed", "usedOutputBytes": 1, "elapsedMs": 2});
        let mut extra = base.clone();
        extra["arguments"] = json!({});
        assert!(serde_json::from_value::<ToolExecutionProvenance>(extra).is_err());
        let mut wrong = base;
        wrong["phase"] = json!("other");
        assert!(serde_json::from_value::<ToolExecutionProvenance>(wrong).is_err());
    }
}
