//! Lifecycle events of a tool call and their execution provenance.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::codes::{TOOL_CANCELLED, TOOL_EXECUTION_ABORTED, TOOL_EXECUTION_UNKNOWN, TOOL_TIMEOUT};
use crate::context::ToolCallContext;
use crate::request::{ToolCallId, ToolCallRequest};
use crate::result::ToolCallResult;

/// Schema version of [`ToolExecutionProvenance`].
pub const PROVENANCE_SCHEMA_VERSION: &str = "context-action-tool-execution-provenance.v1";
/// Phase of [`ToolExecutionProvenance`].
pub const PROVENANCE_PHASE: &str = "tool-call";
/// Longest execution owner id, in characters.
pub const MAX_OWNER_ID_CHARS: usize = 256;
/// Largest integer a JSON consumer in JavaScript can represent exactly (`Number.MAX_SAFE_INTEGER`);
/// provenance numbers stay within it.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// JSON Schema (draft 2020-12) of `context-action-tool-execution-provenance.v1`.
pub const PROVENANCE_JSON_SCHEMA: &str =
    include_str!("../schemas/tool-execution-provenance.v1.schema.json");

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

impl ProvenanceState {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::Unknown => "unknown",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        [
            Self::Pending,
            Self::Completed,
            Self::Failed,
            Self::Cancelled,
            Self::Unknown,
        ]
        .into_iter()
        .find(|state| state.as_str() == text)
    }

    /// The final state of a finished call: success is `completed`; `TOOL_TIMEOUT`,
    /// `TOOL_EXECUTION_ABORTED` and `TOOL_EXECUTION_UNKNOWN` are `unknown` (effects may exist
    /// that nobody observed); `TOOL_CANCELLED` is `cancelled`; every other error is `failed`.
    pub fn of_result(result: &ToolCallResult) -> Self {
        match result.error_code() {
            None => Self::Completed,
            Some(TOOL_TIMEOUT | TOOL_EXECUTION_ABORTED | TOOL_EXECUTION_UNKNOWN) => Self::Unknown,
            Some(TOOL_CANCELLED) => Self::Cancelled,
            Some(_) => Self::Failed,
        }
    }
}

/// Whether `owner_id` is canonical: no surrounding whitespace, 1 to 256 characters, no NUL.
pub fn is_canonical_owner_id(owner_id: &str) -> bool {
    let length = owner_id.chars().count();
    owner_id.trim() == owner_id
        && (1..=MAX_OWNER_ID_CHARS).contains(&length)
        && !owner_id.contains('\0')
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

impl ToolExecutionProvenance {
    /// The provenance of a `started` event: `pending`, nothing used, no time elapsed.
    pub fn started(
        owner_id: impl Into<String>,
        timeout_ms: Option<u64>,
        max_output_bytes: Option<u64>,
    ) -> Self {
        Self {
            owner_id: owner_id.into(),
            state: ProvenanceState::Pending,
            timeout_ms,
            max_output_bytes,
            used_output_bytes: 0,
            elapsed_ms: 0,
        }
    }

    /// The provenance of the final event: same owner and budgets, the final state, bytes and time.
    #[must_use]
    pub fn finished(
        &self,
        state: ProvenanceState,
        used_output_bytes: u64,
        elapsed_ms: u64,
    ) -> Self {
        Self {
            state,
            used_output_bytes,
            elapsed_ms,
            ..self.clone()
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProvenanceWire {
    schema_version: &'static str,
    phase: &'static str,
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
            schema_version: PROVENANCE_SCHEMA_VERSION,
            phase: PROVENANCE_PHASE,
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
    /// Accepts exactly what [`parse_tool_execution_provenance`] accepts.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        parse_tool_execution_provenance(&value, "provenance").map_err(D::Error::custom)
    }
}

const PROVENANCE_FIELDS: [&str; 8] = [
    "schemaVersion",
    "phase",
    "ownerId",
    "state",
    "timeoutMs",
    "maxOutputBytes",
    "usedOutputBytes",
    "elapsedMs",
];

/// Validates untrusted provenance (CONTRACT 2.4 `parseToolExecutionProvenance`). `path` names
/// the value in messages, e.g. `provenance.elapsedMs must be a non-negative safe integer`.
///
/// Rejects non-objects, unknown fields, another schema version or phase, a non-canonical owner
/// id, an unknown state, and numbers that are not safe integers in range (`maxOutputBytes`
/// must be positive). An integral float such as `3.0` counts as the integer 3, as in JSON
/// consumers that do not distinguish them.
///
/// ```
/// use serde_json::json;
/// use tool_protocol::event::parse_tool_execution_provenance;
/// let error = parse_tool_execution_provenance(&json!({"schemaVersion": "x"}), "provenance").unwrap_err();
/// assert_eq!(error, "provenance.schemaVersion must be context-action-tool-execution-provenance.v1");
/// ```
pub fn parse_tool_execution_provenance(
    value: &Value,
    path: &str,
) -> Result<ToolExecutionProvenance, String> {
    let Value::Object(map) = value else {
        return Err(format!("{path} must be an object"));
    };
    if let Some(unknown) = map
        .keys()
        .find(|key| !PROVENANCE_FIELDS.contains(&key.as_str()))
    {
        return Err(format!("{path} contains unknown field: {unknown}"));
    }
    if map.get("schemaVersion").and_then(Value::as_str) != Some(PROVENANCE_SCHEMA_VERSION) {
        return Err(format!(
            "{path}.schemaVersion must be {PROVENANCE_SCHEMA_VERSION}"
        ));
    }
    if map.get("phase").and_then(Value::as_str) != Some(PROVENANCE_PHASE) {
        return Err(format!("{path}.phase must be {PROVENANCE_PHASE}"));
    }
    let owner_id = match map.get("ownerId").and_then(Value::as_str) {
        Some(owner_id) if is_canonical_owner_id(owner_id) => owner_id.to_owned(),
        _ => return Err(format!("{path}.ownerId must be canonical text")),
    };
    let state = map
        .get("state")
        .and_then(Value::as_str)
        .and_then(ProvenanceState::parse)
        .ok_or_else(|| {
            format!("{path}.state must be one of pending, completed, failed, cancelled, unknown")
        })?;
    Ok(ToolExecutionProvenance {
        owner_id,
        state,
        timeout_ms: optional_integer(map, "timeoutMs", path, 0)?,
        max_output_bytes: optional_integer(map, "maxOutputBytes", path, 1)?,
        used_output_bytes: required_integer(map, "usedOutputBytes", path)?,
        elapsed_ms: required_integer(map, "elapsedMs", path)?,
    })
}

fn required_integer(map: &Map<String, Value>, key: &str, path: &str) -> Result<u64, String> {
    optional_integer(map, key, path, 0)?.ok_or_else(|| integer_message(path, key, 0))
}

/// An absent field is `None`; a present one must be a safe integer of at least `minimum`.
fn optional_integer(
    map: &Map<String, Value>,
    key: &str,
    path: &str,
    minimum: u64,
) -> Result<Option<u64>, String> {
    let Some(value) = map.get(key) else {
        return Ok(None);
    };
    safe_integer(value)
        .filter(|number| *number >= minimum)
        .map(Some)
        .ok_or_else(|| integer_message(path, key, minimum))
}

fn integer_message(path: &str, key: &str, minimum: u64) -> String {
    let kind = if minimum == 0 {
        "non-negative"
    } else {
        "positive"
    };
    format!("{path}.{key} must be a {kind} safe integer")
}

/// A non-negative integer no larger than [`MAX_SAFE_INTEGER`], given as an integer or an
/// integral float.
pub(crate) fn safe_integer(value: &Value) -> Option<u64> {
    let number = value.as_number()?;
    let integer = match number.as_u64() {
        Some(integer) => integer,
        None => {
            let float = number.as_f64()?;
            if float.fract() != 0.0 || !(0.0..=MAX_SAFE_INTEGER as f64).contains(&float) {
                return None;
            }
            float as u64
        }
    };
    (integer <= MAX_SAFE_INTEGER).then_some(integer)
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

    fn valid() -> Value {
        json!({"schemaVersion": PROVENANCE_SCHEMA_VERSION, "phase": "tool-call", "ownerId": "o", "state": "pending", "usedOutputBytes": 0, "elapsedMs": 0})
    }

    fn error_with(key: &str, value: Value) -> String {
        let mut provenance = valid();
        provenance[key] = value;
        parse_tool_execution_provenance(&provenance, "provenance").unwrap_err()
    }

    #[test]
    fn parser_messages_follow_the_contract() {
        assert_eq!(
            parse_tool_execution_provenance(&json!([]), "p").unwrap_err(),
            "p must be an object"
        );
        assert_eq!(
            error_with("arguments", json!({})),
            "provenance contains unknown field: arguments"
        );
        assert_eq!(
            error_with("phase", json!("x")),
            "provenance.phase must be tool-call"
        );
        assert_eq!(
            error_with("ownerId", json!(" o")),
            "provenance.ownerId must be canonical text"
        );
        assert_eq!(
            error_with("ownerId", json!("")),
            "provenance.ownerId must be canonical text"
        );
        assert_eq!(
            error_with("ownerId", json!("a\0b")),
            "provenance.ownerId must be canonical text"
        );
        assert_eq!(
            error_with("ownerId", json!(1)),
            "provenance.ownerId must be canonical text"
        );
        assert_eq!(
            error_with("state", json!("done")),
            "provenance.state must be one of pending, completed, failed, cancelled, unknown"
        );
        assert_eq!(
            error_with("elapsedMs", json!(-1)),
            "provenance.elapsedMs must be a non-negative safe integer"
        );
        assert_eq!(
            error_with("elapsedMs", json!(0.5)),
            "provenance.elapsedMs must be a non-negative safe integer"
        );
        assert_eq!(
            error_with("usedOutputBytes", json!("1")),
            "provenance.usedOutputBytes must be a non-negative safe integer"
        );
        assert_eq!(
            error_with("timeoutMs", json!(null)),
            "provenance.timeoutMs must be a non-negative safe integer"
        );
        assert_eq!(
            error_with("maxOutputBytes", json!(0)),
            "provenance.maxOutputBytes must be a positive safe integer"
        );
        let mut missing = valid();
        missing.as_object_mut().unwrap().remove("elapsedMs");
        assert_eq!(
            parse_tool_execution_provenance(&missing, "provenance").unwrap_err(),
            "provenance.elapsedMs must be a non-negative safe integer"
        );
    }

    #[test]
    fn numbers_are_bounded_by_the_safe_integer_edge() {
        let mut provenance = valid();
        provenance["elapsedMs"] = json!(MAX_SAFE_INTEGER);
        provenance["timeoutMs"] = json!(0);
        provenance["maxOutputBytes"] = json!(1);
        provenance["usedOutputBytes"] = json!(3.0);
        let parsed = parse_tool_execution_provenance(&provenance, "provenance").unwrap();
        assert_eq!(
            (
                parsed.elapsed_ms,
                parsed.timeout_ms,
                parsed.max_output_bytes,
                parsed.used_output_bytes
            ),
            (MAX_SAFE_INTEGER, Some(0), Some(1), 3)
        );
        assert_eq!(
            error_with("elapsedMs", json!(MAX_SAFE_INTEGER + 1)),
            "provenance.elapsedMs must be a non-negative safe integer"
        );
    }

    #[test]
    fn owner_ids_are_canonical_up_to_256_characters() {
        assert!(is_canonical_owner_id(&"é".repeat(256)));
        assert!(!is_canonical_owner_id(&"é".repeat(257)));
        assert!(!is_canonical_owner_id("a "));
        assert!(is_canonical_owner_id("studio:1"));
    }

    #[test]
    fn final_states_follow_the_error_code() {
        use crate::error::ToolCallError;
        let state = |code: &str| {
            ProvenanceState::of_result(&ToolCallResult::failure(ToolCallError::new(code, "m")))
        };
        assert_eq!(
            ProvenanceState::of_result(&ToolCallResult::empty_success()),
            ProvenanceState::Completed
        );
        assert_eq!(state(TOOL_TIMEOUT), ProvenanceState::Unknown);
        assert_eq!(state(TOOL_EXECUTION_ABORTED), ProvenanceState::Unknown);
        assert_eq!(state(TOOL_EXECUTION_UNKNOWN), ProvenanceState::Unknown);
        assert_eq!(state(TOOL_CANCELLED), ProvenanceState::Cancelled);
        assert_eq!(state("TOOL_POLICY_DENIED"), ProvenanceState::Failed);
        assert_eq!(state("WORKSPACE_EMPTY"), ProvenanceState::Failed);
    }

    #[test]
    fn started_and_finished_keep_owner_and_budgets() {
        let started = ToolExecutionProvenance::started("o", Some(10), Some(20));
        assert_eq!(started.state, ProvenanceState::Pending);
        let done = started.finished(ProvenanceState::Completed, 5, 7);
        assert_eq!(
            (
                done.owner_id.as_str(),
                done.timeout_ms,
                done.max_output_bytes,
                done.used_output_bytes,
                done.elapsed_ms
            ),
            ("o", Some(10), Some(20), 5, 7)
        );
    }

    #[test]
    fn emitted_provenance_satisfies_the_shipped_schema() {
        let schema: Value = serde_json::from_str(PROVENANCE_JSON_SCHEMA).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let started = ToolExecutionProvenance::started("studio:1", Some(0), None);
        let samples = [
            started.clone(),
            started.finished(ProvenanceState::Completed, 120, 35),
            ToolExecutionProvenance::started("o", None, Some(1)).finished(
                ProvenanceState::Unknown,
                4096,
                MAX_SAFE_INTEGER,
            ),
        ];
        for provenance in samples {
            let wire = serde_json::to_value(&provenance).unwrap();
            assert!(validator.is_valid(&wire), "{wire}");
        }
        for (key, bad) in [
            ("ownerId", json!(" o")),
            ("ownerId", json!("")),
            ("state", json!("done")),
            ("maxOutputBytes", json!(0)),
            ("extra", json!(1)),
            ("elapsedMs", json!(0.5)),
        ] {
            let mut wire = valid();
            wire[key] = bad;
            assert!(!validator.is_valid(&wire), "{wire}");
            assert!(
                parse_tool_execution_provenance(&wire, "p").is_err(),
                "{wire}"
            );
        }
    }
}
