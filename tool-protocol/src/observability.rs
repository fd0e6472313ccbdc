//! Audit redaction: what telemetry, traces and durable diagnostics may keep of a tool call.
//!
//! An [`ObservabilityPolicy`] (`context-action-tool-observability-policy.v1`) redacts
//! credential- and source-like fields and bounds depth, collection lengths, string lengths and
//! serialized UTF-8 bytes; it also carries retention metadata (`retentionMs`, `maxEntries`) for
//! the store that keeps observations. It is an observability boundary only: it never changes a
//! durable record or a result returned to a caller.
//!
//! ```
//! use serde_json::json;
//! use tool_protocol::observability::{ObservabilityPolicy, redact_value};
//! let policy = ObservabilityPolicy::default();
//! let redacted = redact_value(&json!({"path": "a.html", "access_token": "abc", "source": "<html>"}), &policy);
//! assert_eq!(redacted, json!({"path": "a.html", "access_token": "[access_token redacted]", "source": "[source redacted]"}));
//! ```

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::codes::is_audit_safe_error_code;
use crate::content::ToolContent;
use crate::error::ToolCallError;
use crate::event::{MAX_SAFE_INTEGER, ToolCallEvent, ToolCallEventType};
use crate::request::TOOLS_CALL_METHOD;
use crate::result::ToolCallResult;

/// Schema version of the policy metadata.
pub const OBSERVABILITY_POLICY_SCHEMA_VERSION: &str = "context-action-tool-observability-policy.v1";
/// Schema version of [`project_tool_call_observation`].
pub const OBSERVATION_SCHEMA_VERSION: &str = "context-action-tool-observation.v1";
/// Schema version of [`observation_sink_record`].
pub const OBSERVATION_SINK_SCHEMA_VERSION: &str = "context-action-tool-observation-sink.v1";

/// Default bound on serialized UTF-8 bytes.
pub const DEFAULT_MAX_BYTES: usize = 8192;
/// Default nesting depth kept (the root is depth 0).
pub const DEFAULT_MAX_DEPTH: usize = 6;
/// Default longest string kept, in characters.
pub const DEFAULT_MAX_STRING_LENGTH: usize = 512;
/// Default array entries kept.
pub const DEFAULT_MAX_ARRAY_ENTRIES: usize = 32;
/// Default object entries kept.
pub const DEFAULT_MAX_OBJECT_ENTRIES: usize = 64;
/// Default retention of an observation (15 minutes).
pub const DEFAULT_RETENTION_MS: u64 = 900_000;
/// Default number of observations a store keeps.
pub const DEFAULT_MAX_ENTRIES: usize = 256;
/// Largest `maxDepth` a policy accepts. Redaction recurses once per level, so an unbounded
/// depth would let a hostile value exhaust the stack; audit data never needs more.
pub const MAX_POLICY_DEPTH: usize = 64;

/// Keys redacted by exact (normalized) match in every policy.
pub const DEFAULT_REDACTED_KEYS: [&str; 11] = [
    "accesskey",
    "apikey",
    "authorization",
    "cookie",
    "password",
    "privatekey",
    "replace",
    "search",
    "secret",
    "source",
    "token",
];
/// A key whose normalized form contains one of these is redacted too (`access_token`,
/// `refreshToken`, `X-Api-Key`...). `search`, `replace` and `source` are exact-match only.
pub const REDACTED_KEY_FRAGMENTS: [&str; 8] = [
    "accesskey",
    "apikey",
    "authorization",
    "cookie",
    "password",
    "privatekey",
    "secret",
    "token",
];

/// Appended to a cut string.
pub const TRUNCATION_SUFFIX: &str = "… [truncated]";
/// Last entry of a cut array.
pub const ADDITIONAL_ENTRIES_MARKER: &str = "[additional entries redacted]";
/// Key marking a cut object.
pub const ADDITIONAL_FIELDS_KEY: &str = "_redacted";
/// Value under [`ADDITIONAL_FIELDS_KEY`] in a cut object.
pub const ADDITIONAL_FIELDS_MARKER: &str = "additional fields redacted";
/// Replaces a container nested at or beyond `maxDepth`.
pub const DEPTH_MARKER: &str = "[depth redacted]";
/// Last entry of a cut argument-name list.
pub const ADDITIONAL_ARGUMENT_NAMES_MARKER: &str = "[additional argument names redacted]";
/// Content and message of a sanitized diagnostic.
pub const DIAGNOSTIC_TEXT: &str = "Tool execution diagnostic retained in redacted form.";

/// Invalid policy settings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ObservabilityPolicyError(pub String);

/// Settings of a policy; `None` keeps the default. `redacted_keys` are added to
/// [`DEFAULT_REDACTED_KEYS`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObservabilityPolicyOptions {
    /// Bound on serialized UTF-8 bytes (positive safe integer).
    pub max_bytes: Option<u64>,
    /// Nesting depth kept (0 to [`MAX_POLICY_DEPTH`]).
    pub max_depth: Option<u64>,
    /// Longest string kept, in characters (positive).
    pub max_string_length: Option<u64>,
    /// Array entries kept (positive).
    pub max_array_entries: Option<u64>,
    /// Object entries kept (positive).
    pub max_object_entries: Option<u64>,
    /// Milliseconds an observation is retained (non-negative safe integer).
    pub retention_ms: Option<u64>,
    /// Observations a store keeps (positive).
    pub max_entries: Option<u64>,
    /// Extra keys to redact by exact (normalized) match.
    pub redacted_keys: Vec<String>,
}

/// A validated redaction and retention policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservabilityPolicy {
    max_bytes: usize,
    max_depth: usize,
    max_string_length: usize,
    max_array_entries: usize,
    max_object_entries: usize,
    retention_ms: u64,
    max_entries: usize,
    redacted_keys: Vec<String>,
}

impl Default for ObservabilityPolicy {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_BYTES,
            max_depth: DEFAULT_MAX_DEPTH,
            max_string_length: DEFAULT_MAX_STRING_LENGTH,
            max_array_entries: DEFAULT_MAX_ARRAY_ENTRIES,
            max_object_entries: DEFAULT_MAX_OBJECT_ENTRIES,
            retention_ms: DEFAULT_RETENTION_MS,
            max_entries: DEFAULT_MAX_ENTRIES,
            redacted_keys: normalized_keys(DEFAULT_REDACTED_KEYS.iter().copied()),
        }
    }
}

impl ObservabilityPolicy {
    /// A policy from options, each checked against its constraint.
    pub fn new(options: &ObservabilityPolicyOptions) -> Result<Self, ObservabilityPolicyError> {
        let defaults = Self::default();
        let positive = |value: Option<u64>, default: usize, field: &str| {
            bounded(
                value,
                default as u64,
                1,
                MAX_SAFE_INTEGER,
                field,
                "a positive safe integer",
            )
        };
        Ok(Self {
            max_bytes: positive(options.max_bytes, defaults.max_bytes, "maxBytes")?,
            max_depth: bounded(
                options.max_depth,
                DEFAULT_MAX_DEPTH as u64,
                0,
                MAX_POLICY_DEPTH as u64,
                "maxDepth",
                "a non-negative integer of at most 64",
            )?,
            max_string_length: positive(
                options.max_string_length,
                defaults.max_string_length,
                "maxStringLength",
            )?,
            max_array_entries: positive(
                options.max_array_entries,
                defaults.max_array_entries,
                "maxArrayEntries",
            )?,
            max_object_entries: positive(
                options.max_object_entries,
                defaults.max_object_entries,
                "maxObjectEntries",
            )?,
            retention_ms: bounded(
                options.retention_ms,
                DEFAULT_RETENTION_MS,
                0,
                MAX_SAFE_INTEGER,
                "retentionMs",
                "a non-negative safe integer",
            )? as u64,
            max_entries: positive(options.max_entries, defaults.max_entries, "maxEntries")?,
            redacted_keys: normalized_keys(
                DEFAULT_REDACTED_KEYS
                    .iter()
                    .copied()
                    .chain(options.redacted_keys.iter().map(String::as_str)),
            ),
        })
    }

    /// A policy from JSON settings (`{maxBytes?, maxDepth?, maxStringLength?, maxArrayEntries?,
    /// maxObjectEntries?, retentionMs?, maxEntries?, redactedKeys?}`); unknown fields are rejected.
    pub fn from_value(value: &Value) -> Result<Self, ObservabilityPolicyError> {
        let Value::Object(map) = value else {
            return Err(ObservabilityPolicyError(
                "Observability policy must be an object.".into(),
            ));
        };
        let mut options = ObservabilityPolicyOptions::default();
        for (key, field) in map {
            let slot = match key.as_str() {
                "maxBytes" => &mut options.max_bytes,
                "maxDepth" => &mut options.max_depth,
                "maxStringLength" => &mut options.max_string_length,
                "maxArrayEntries" => &mut options.max_array_entries,
                "maxObjectEntries" => &mut options.max_object_entries,
                "retentionMs" => &mut options.retention_ms,
                "maxEntries" => &mut options.max_entries,
                "redactedKeys" => {
                    options.redacted_keys = redacted_keys_from(field)?;
                    continue;
                }
                other => {
                    return Err(ObservabilityPolicyError(format!(
                        "Observability policy contains unknown field: {other}"
                    )));
                }
            };
            *slot = Some(field.as_u64().ok_or_else(|| {
                ObservabilityPolicyError(format!("{key} must be a non-negative safe integer."))
            })?);
        }
        Self::new(&options)
    }

    /// Bound on serialized UTF-8 bytes.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }
    /// Nesting depth kept.
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }
    /// Longest string kept, in characters.
    pub fn max_string_length(&self) -> usize {
        self.max_string_length
    }
    /// Array entries kept.
    pub fn max_array_entries(&self) -> usize {
        self.max_array_entries
    }
    /// Object entries kept.
    pub fn max_object_entries(&self) -> usize {
        self.max_object_entries
    }
    /// Milliseconds an observation is retained.
    pub fn retention_ms(&self) -> u64 {
        self.retention_ms
    }
    /// Observations a store keeps.
    pub fn max_entries(&self) -> usize {
        self.max_entries
    }
    /// Normalized redacted keys, deduplicated and sorted.
    pub fn redacted_keys(&self) -> &[String] {
        &self.redacted_keys
    }

    /// The policy facts a store needs: `{schemaVersion, maxBytes, retentionMs, maxEntries}`.
    pub fn metadata(&self) -> Value {
        json!({
            "schemaVersion": OBSERVABILITY_POLICY_SCHEMA_VERSION,
            "maxBytes": self.max_bytes,
            "retentionMs": self.retention_ms,
            "maxEntries": self.max_entries,
        })
    }

    /// Whether a property with this key is redacted: its normalized form is a redacted key, or
    /// contains one of [`REDACTED_KEY_FRAGMENTS`].
    pub fn is_redacted_key(&self, key: &str) -> bool {
        let normalized = normalize_key(key);
        self.redacted_keys.binary_search(&normalized).is_ok()
            || REDACTED_KEY_FRAGMENTS
                .iter()
                .any(|fragment| normalized.contains(fragment))
    }
}

fn bounded(
    value: Option<u64>,
    default: u64,
    min: u64,
    max: u64,
    field: &str,
    rule: &str,
) -> Result<usize, ObservabilityPolicyError> {
    let value = value.unwrap_or(default);
    if !(min..=max).contains(&value) {
        return Err(ObservabilityPolicyError(format!("{field} must be {rule}.")));
    }
    usize::try_from(value).map_err(|_| ObservabilityPolicyError(format!("{field} must be {rule}.")))
}

fn redacted_keys_from(value: &Value) -> Result<Vec<String>, ObservabilityPolicyError> {
    let items = value
        .as_array()
        .ok_or_else(|| ObservabilityPolicyError("redactedKeys must be an array.".into()))?;
    items
        .iter()
        .map(|item| {
            item.as_str().map(str::to_owned).ok_or_else(|| {
                ObservabilityPolicyError("redactedKeys must contain strings.".into())
            })
        })
        .collect()
}

/// A key in comparable form: trimmed, lowercase, without `-`, `_` and whitespace.
pub fn normalize_key(key: &str) -> String {
    key.trim()
        .chars()
        .filter(|ch| !matches!(ch, '-' | '_') && !ch.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

fn normalized_keys<'a>(keys: impl Iterator<Item = &'a str>) -> Vec<String> {
    keys.map(normalize_key)
        .filter(|key| !key.is_empty())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The redacted form of `value` (CONTRACT 2.13 order per node): a redacted key hides its value
/// as `"[<key> redacted]"`; scalars are kept, long strings cut with [`TRUNCATION_SUFFIX`]; a
/// container at depth ≥ `maxDepth` becomes [`DEPTH_MARKER`]; arrays and objects keep their
/// first entries and mark the cut.
pub fn redact_value(value: &Value, policy: &ObservabilityPolicy) -> Value {
    redact_node(value, 0, policy)
}

fn redact_node(value: &Value, depth: usize, policy: &ObservabilityPolicy) -> Value {
    match value {
        Value::String(text) => Value::String(truncate_text(text, policy.max_string_length)),
        Value::Array(_) | Value::Object(_) if depth >= policy.max_depth => {
            Value::String(DEPTH_MARKER.into())
        }
        Value::Array(items) => {
            let mut kept: Vec<Value> = items
                .iter()
                .take(policy.max_array_entries)
                .map(|item| redact_node(item, depth + 1, policy))
                .collect();
            if items.len() > policy.max_array_entries {
                kept.push(Value::String(ADDITIONAL_ENTRIES_MARKER.into()));
            }
            Value::Array(kept)
        }
        Value::Object(map) => {
            let mut kept: Map<String, Value> = map
                .iter()
                .take(policy.max_object_entries)
                .map(|(key, item)| {
                    let redacted = if policy.is_redacted_key(key) {
                        Value::String(format!("[{key} redacted]"))
                    } else {
                        redact_node(item, depth + 1, policy)
                    };
                    (key.clone(), redacted)
                })
                .collect();
            if map.len() > policy.max_object_entries {
                kept.insert(
                    ADDITIONAL_FIELDS_KEY.into(),
                    Value::String(ADDITIONAL_FIELDS_MARKER.into()),
                );
            }
            Value::Object(kept)
        }
        scalar => scalar.clone(),
    }
}

fn truncate_text(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}{TRUNCATION_SUFFIX}", &text[..end]),
        None => text.to_owned(),
    }
}

/// Pretty JSON (two-space indent) of the redacted value, at most `maxBytes` UTF-8 bytes: when
/// too large, the first fallback that fits of `{"_redacted": "observability payload exceeded
/// byte limit"}`, `"[observability payload redacted]"`, `{}` and `0`. Always valid JSON.
pub fn serialize_redacted(value: &Value, policy: &ObservabilityPolicy) -> String {
    fit_bytes(redact_value(value, policy), policy.max_bytes).1
}

/// An already-redacted value and its pretty JSON, replaced by the first fitting fallback when
/// the JSON exceeds `max_bytes`.
fn fit_bytes(value: Value, max_bytes: usize) -> (Value, String) {
    let text = pretty(&value);
    if text.len() <= max_bytes {
        return (value, text);
    }
    let fallbacks = [
        json!({ADDITIONAL_FIELDS_KEY: "observability payload exceeded byte limit"}),
        json!("[observability payload redacted]"),
        json!({}),
        json!(0),
    ];
    fallbacks
        .into_iter()
        .map(|fallback| (pretty(&fallback), fallback))
        .find(|(text, _)| text.len() <= max_bytes)
        .map_or_else(
            || (json!(0), "0".into()),
            |(text, fallback)| (fallback, text),
        )
}

fn pretty(value: &Value) -> String {
    // Serializing a `Value` cannot fail: its keys are strings and its numbers finite.
    serde_json::to_string_pretty(value).unwrap_or_else(|_| "0".into())
}

/// The `context-action-tool-observation.v1` projection of an event: names, ids, context
/// (metadata redacted), timing, provenance, the request's sorted argument *names* and the
/// result's shape. Never argument values, content, structured content or messages.
pub fn project_tool_call_observation(event: &ToolCallEvent, policy: &ObservabilityPolicy) -> Value {
    let text = |value: &str| Value::String(truncate_text(value, policy.max_string_length));
    let mut out = Map::new();
    out.insert("schemaVersion".into(), OBSERVATION_SCHEMA_VERSION.into());
    out.insert("type".into(), event_type_name(event.event_type).into());
    out.insert("traceId".into(), text(&event.trace_id));
    if let Some(id) = &event.tool_call_id {
        out.insert(
            "toolCallId".into(),
            redact_value(&serde_json::to_value(id).unwrap_or(Value::Null), policy),
        );
    }
    out.insert("name".into(), text(&event.name));
    if let Some(context) = &event.context {
        let mut projected = Map::new();
        if let Some(source) = context.source {
            projected.insert("source".into(), source.as_str().into());
        }
        if let Some(mode) = context.mode {
            projected.insert("mode".into(), mode.as_str().into());
        }
        if let Some(session_id) = &context.session_id {
            projected.insert("sessionId".into(), text(session_id));
        }
        if let Some(revision) = &context.revision {
            projected.insert(
                "revision".into(),
                redact_value(
                    &serde_json::to_value(revision).unwrap_or(Value::Null),
                    policy,
                ),
            );
        }
        if let Some(metadata) = &context.metadata {
            projected.insert(
                "metadata".into(),
                redact_value(&Value::Object(metadata.clone()), policy),
            );
        }
        out.insert("context".into(), Value::Object(projected));
    }
    out.insert("timestamp".into(), event.timestamp.into());
    if let Some(duration_ms) = event.duration_ms {
        out.insert("durationMs".into(), duration_ms.into());
    }
    out.insert(
        "provenance".into(),
        serde_json::to_value(&event.provenance).unwrap_or(Value::Null),
    );
    out.insert("request".into(), project_request(event, policy));
    if let Some(result) = &event.result {
        out.insert("result".into(), project_result(result, policy));
    }
    Value::Object(out)
}

fn event_type_name(event_type: ToolCallEventType) -> &'static str {
    match event_type {
        ToolCallEventType::Started => "started",
        ToolCallEventType::Completed => "completed",
        ToolCallEventType::Failed => "failed",
    }
}

fn project_request(event: &ToolCallEvent, policy: &ObservabilityPolicy) -> Value {
    let request = &event.request;
    let mut names: Vec<&String> = request
        .arguments
        .iter()
        .flat_map(|arguments| arguments.keys())
        .collect();
    names.sort();
    let mut argument_keys: Vec<Value> = names
        .iter()
        .take(policy.max_array_entries)
        .map(|name| Value::String(truncate_text(name, policy.max_string_length)))
        .collect();
    if names.len() > policy.max_array_entries {
        argument_keys.push(ADDITIONAL_ARGUMENT_NAMES_MARKER.into());
    }
    let mut out = Map::new();
    out.insert("method".into(), TOOLS_CALL_METHOD.into());
    if let Some(id) = &request.id {
        out.insert(
            "toolCallId".into(),
            redact_value(&serde_json::to_value(id).unwrap_or(Value::Null), policy),
        );
    }
    out.insert(
        "name".into(),
        Value::String(truncate_text(&request.name, policy.max_string_length)),
    );
    out.insert("argumentKeys".into(), Value::Array(argument_keys));
    Value::Object(out)
}

fn project_result(result: &ToolCallResult, policy: &ObservabilityPolicy) -> Value {
    let mut out = Map::new();
    out.insert("isError".into(), result.is_error().into());
    if let Some(error) = &result.error {
        if is_audit_safe_error_code(&error.code) {
            out.insert("errorCode".into(), error.code.clone().into());
        }
        if let Some(retryable) = error.retryable {
            out.insert("retryable".into(), retryable.into());
        }
    }
    let types: Vec<Value> = result
        .content
        .iter()
        .map(|block| match block {
            ToolContent::Text { .. } => "text",
            ToolContent::Json { .. } => "json",
        })
        .map(Value::from)
        .collect();
    out.insert(
        "contentTypes".into(),
        redact_value(&Value::Array(types), policy),
    );
    out.insert(
        "hasStructuredContent".into(),
        result.structured_content.is_some().into(),
    );
    Value::Object(out)
}

/// What an observation sink receives: `{schemaVersion, observationSchemaVersion,
/// serializedObservation, policy}`, the observation serialized within `maxBytes`.
pub fn observation_sink_record(event: &ToolCallEvent, policy: &ObservabilityPolicy) -> Value {
    let (_, serialized) = fit_bytes(
        project_tool_call_observation(event, policy),
        policy.max_bytes,
    );
    json!({
        "schemaVersion": OBSERVATION_SINK_SCHEMA_VERSION,
        "observationSchemaVersion": OBSERVATION_SCHEMA_VERSION,
        "serializedObservation": serialized,
        "policy": policy.metadata(),
    })
}

/// The form of a failed or ambiguous result a durable record may keep: fixed text content, no
/// correlation id or structured content, and the error's code (always whole: a replay in
/// another process must see the contract code, so no string limit or redaction applies to it),
/// retryable flag and redacted, byte-bounded details; its message is replaced by the fixed text.
/// A result without an error stays without one (a result cannot be an error without an error
/// object in this contract).
pub fn sanitize_tool_call_diagnostic(
    result: &ToolCallResult,
    policy: &ObservabilityPolicy,
) -> ToolCallResult {
    let error = result.error.as_ref().map(|error| ToolCallError {
        code: error.code.clone(),
        message: DIAGNOSTIC_TEXT.into(),
        retryable: error.retryable,
        details: error
            .details
            .as_ref()
            .map(|details| fit_bytes(redact_value(details, policy), policy.max_bytes).0),
    });
    ToolCallResult {
        tool_call_id: None,
        content: vec![ToolContent::text(DIAGNOSTIC_TEXT)],
        structured_content: None,
        error,
        replay: None,
    }
}

/// A stable reason for a durable record, naming only an audit-safe error code (never the
/// handler's message).
///
/// ```
/// use tool_protocol::{ToolCallError, ToolCallResult};
/// use tool_protocol::observability::sanitize_tool_call_diagnostic_reason;
/// let timeout = ToolCallResult::failure(ToolCallError::new("TOOL_TIMEOUT", "secret detail"));
/// assert_eq!(sanitize_tool_call_diagnostic_reason(&timeout), "Tool execution ended with TOOL_TIMEOUT; reconcile before retrying.");
/// ```
pub fn sanitize_tool_call_diagnostic_reason(result: &ToolCallResult) -> String {
    match result
        .error_code()
        .filter(|code| is_audit_safe_error_code(code))
    {
        Some(code) => format!("Tool execution ended with {code}; reconcile before retrying."),
        None => "Tool execution ended with an ambiguous outcome; reconcile before retrying.".into(),
    }
}

/// Whether an observation made at `observed_at` is still retained at `now` (both in ms): always
/// when the clock went backwards, else while `now - observed_at < retentionMs`.
pub fn is_observation_retained(observed_at: u64, now: u64, policy: &ObservabilityPolicy) -> bool {
    now < observed_at || now - observed_at < policy.retention_ms
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{ToolCallContext, ToolCallMode, ToolCallSource};
    use crate::event::ToolExecutionProvenance;
    use crate::request::ToolCallRequest;

    fn policy(options: ObservabilityPolicyOptions) -> ObservabilityPolicy {
        ObservabilityPolicy::new(&options).unwrap()
    }

    #[test]
    fn defaults_follow_the_contract() {
        let policy = ObservabilityPolicy::default();
        assert_eq!(
            (
                policy.max_bytes(),
                policy.max_depth(),
                policy.max_string_length(),
                policy.max_array_entries(),
                policy.max_object_entries(),
                policy.retention_ms(),
                policy.max_entries()
            ),
            (8192, 6, 512, 32, 64, 900_000, 256)
        );
        assert_eq!(
            policy.redacted_keys(),
            [
                "accesskey",
                "apikey",
                "authorization",
                "cookie",
                "password",
                "privatekey",
                "replace",
                "search",
                "secret",
                "source",
                "token"
            ]
        );
        assert_eq!(
            ObservabilityPolicy::new(&ObservabilityPolicyOptions::default()).unwrap(),
            policy
        );
        assert_eq!(
            policy.metadata(),
            json!({"schemaVersion": OBSERVABILITY_POLICY_SCHEMA_VERSION, "maxBytes": 8192, "retentionMs": 900000, "maxEntries": 256})
        );
    }

    #[test]
    fn custom_keys_are_normalized_deduplicated_and_sorted() {
        let policy = policy(ObservabilityPolicyOptions {
            redacted_keys: vec![
                " Session-ID ".into(),
                "session_id".into(),
                "  ".into(),
                "TOKEN".into(),
            ],
            ..Default::default()
        });
        assert!(policy.redacted_keys().contains(&"sessionid".to_owned()));
        assert_eq!(
            policy.redacted_keys().len(),
            DEFAULT_REDACTED_KEYS.len() + 1
        );
        assert!(
            policy
                .redacted_keys()
                .windows(2)
                .all(|pair| pair[0] < pair[1])
        );
        assert!(policy.is_redacted_key("sessionId"));
    }

    #[test]
    fn every_limit_is_validated_at_its_edge() {
        let check = |options: ObservabilityPolicyOptions| {
            ObservabilityPolicy::new(&options).map_err(|error| error.0)
        };
        assert_eq!(
            check(ObservabilityPolicyOptions {
                max_bytes: Some(0),
                ..Default::default()
            })
            .unwrap_err(),
            "maxBytes must be a positive safe integer."
        );
        assert!(
            check(ObservabilityPolicyOptions {
                max_bytes: Some(1),
                ..Default::default()
            })
            .is_ok()
        );
        assert!(
            check(ObservabilityPolicyOptions {
                max_bytes: Some(MAX_SAFE_INTEGER),
                ..Default::default()
            })
            .is_ok()
        );
        assert!(
            check(ObservabilityPolicyOptions {
                max_bytes: Some(MAX_SAFE_INTEGER + 1),
                ..Default::default()
            })
            .is_err()
        );
        assert!(
            check(ObservabilityPolicyOptions {
                max_depth: Some(0),
                ..Default::default()
            })
            .is_ok()
        );
        assert!(
            check(ObservabilityPolicyOptions {
                max_depth: Some(64),
                ..Default::default()
            })
            .is_ok()
        );
        assert_eq!(
            check(ObservabilityPolicyOptions {
                max_depth: Some(65),
                ..Default::default()
            })
            .unwrap_err(),
            "maxDepth must be a non-negative integer of at most 64."
        );
        assert_eq!(
            check(ObservabilityPolicyOptions {
                max_string_length: Some(0),
                ..Default::default()
            })
            .unwrap_err(),
            "maxStringLength must be a positive safe integer."
        );
        assert_eq!(
            check(ObservabilityPolicyOptions {
                max_array_entries: Some(0),
                ..Default::default()
            })
            .unwrap_err(),
            "maxArrayEntries must be a positive safe integer."
        );
        assert_eq!(
            check(ObservabilityPolicyOptions {
                max_object_entries: Some(0),
                ..Default::default()
            })
            .unwrap_err(),
            "maxObjectEntries must be a positive safe integer."
        );
        assert_eq!(
            check(ObservabilityPolicyOptions {
                max_entries: Some(0),
                ..Default::default()
            })
            .unwrap_err(),
            "maxEntries must be a positive safe integer."
        );
        assert!(
            check(ObservabilityPolicyOptions {
                retention_ms: Some(0),
                ..Default::default()
            })
            .is_ok()
        );
        assert_eq!(
            check(ObservabilityPolicyOptions {
                retention_ms: Some(MAX_SAFE_INTEGER + 1),
                ..Default::default()
            })
            .unwrap_err(),
            "retentionMs must be a non-negative safe integer."
        );
    }

    #[test]
    fn json_settings_are_parsed_with_contract_messages() {
        let parsed = ObservabilityPolicy::from_value(
            &json!({"maxBytes": 2400, "maxEntries": 24, "redactedKeys": ["x-trace"]}),
        )
        .unwrap();
        assert_eq!((parsed.max_bytes(), parsed.max_entries()), (2400, 24));
        assert!(parsed.is_redacted_key("X_Trace"));
        let error = |value: Value| ObservabilityPolicy::from_value(&value).unwrap_err().0;
        assert_eq!(
            error(json!({"redactedKeys": "token"})),
            "redactedKeys must be an array."
        );
        assert_eq!(
            error(json!({"redactedKeys": [1]})),
            "redactedKeys must contain strings."
        );
        assert_eq!(
            error(json!({"retentionMs": -1})),
            "retentionMs must be a non-negative safe integer."
        );
        assert_eq!(
            error(json!({"maxBytes": 0})),
            "maxBytes must be a positive safe integer."
        );
        assert_eq!(
            error(json!({"maxbytes": 1})),
            "Observability policy contains unknown field: maxbytes"
        );
        assert_eq!(error(json!([])), "Observability policy must be an object.");
    }

    #[test]
    fn keys_are_redacted_by_exact_match_or_fragment() {
        let policy = ObservabilityPolicy::default();
        for key in [
            "access_token",
            "refreshToken",
            "X-Api-Key",
            "Authorization",
            "set-cookie",
            "db_password",
            "PRIVATE_KEY",
            "clientSecret",
            "source",
            "Search",
            "replace",
        ] {
            assert!(policy.is_redacted_key(key), "{key}");
        }
        for key in ["path", "sourceMap", "searchTerm", "replacement", "name"] {
            assert!(!policy.is_redacted_key(key), "{key}");
        }
        let redacted = redact_value(
            &json!({"headers": {"Authorization": "Bearer x", "accept": "json"}, "sourceMap": true}),
            &policy,
        );
        assert_eq!(
            redacted,
            json!({"headers": {"Authorization": "[Authorization redacted]", "accept": "json"}, "sourceMap": true})
        );
    }

    #[test]
    fn strings_are_cut_at_the_edge() {
        let policy = policy(ObservabilityPolicyOptions {
            max_string_length: Some(3),
            ..Default::default()
        });
        assert_eq!(redact_value(&json!("héé"), &policy), json!("héé"));
        assert_eq!(
            redact_value(&json!("héél"), &policy),
            json!("héé… [truncated]")
        );
        assert_eq!(
            redact_value(&json!([null, true, 1.5]), &policy),
            json!([null, true, 1.5])
        );
    }

    #[test]
    fn depth_is_bounded_from_the_root() {
        let policy = policy(ObservabilityPolicyOptions {
            max_depth: Some(2),
            ..Default::default()
        });
        assert_eq!(
            redact_value(&json!({"a": {"b": {"c": 1}, "s": "x"}}), &policy),
            json!({"a": {"b": DEPTH_MARKER, "s": "x"}})
        );
        let zero = super::tests::policy(ObservabilityPolicyOptions {
            max_depth: Some(0),
            ..Default::default()
        });
        assert_eq!(redact_value(&json!({"a": 1}), &zero), json!(DEPTH_MARKER));
        assert_eq!(redact_value(&json!("scalar"), &zero), json!("scalar"));
    }

    #[test]
    fn collections_are_cut_at_the_edge() {
        let policy = policy(ObservabilityPolicyOptions {
            max_array_entries: Some(2),
            max_object_entries: Some(2),
            ..Default::default()
        });
        assert_eq!(redact_value(&json!([1, 2]), &policy), json!([1, 2]));
        assert_eq!(
            redact_value(&json!([1, 2, 3]), &policy),
            json!([1, 2, ADDITIONAL_ENTRIES_MARKER])
        );
        assert_eq!(
            redact_value(&json!({"a": 1, "b": 2}), &policy),
            json!({"a": 1, "b": 2})
        );
        assert_eq!(
            redact_value(&json!({"a": 1, "b": 2, "c": 3}), &policy),
            json!({"a": 1, "b": 2, "_redacted": ADDITIONAL_FIELDS_MARKER})
        );
    }

    #[test]
    fn serialization_is_byte_bounded_with_fallbacks() {
        let value = json!({"note": "x".repeat(100)});
        let fits = pretty(&redact_value(&value, &ObservabilityPolicy::default()));
        let exact = policy(ObservabilityPolicyOptions {
            max_bytes: Some(fits.len() as u64),
            ..Default::default()
        });
        assert_eq!(serialize_redacted(&value, &exact), fits);
        let cases = [
            (
                fits.len() as u64 - 1,
                "{\n  \"_redacted\": \"observability payload exceeded byte limit\"\n}",
            ),
            (40, "\"[observability payload redacted]\""),
            (5, "{}"),
            (1, "0"),
        ];
        for (max_bytes, expected) in cases {
            let bounded = policy(ObservabilityPolicyOptions {
                max_bytes: Some(max_bytes),
                ..Default::default()
            });
            let text = serialize_redacted(&value, &bounded);
            assert_eq!(text, expected, "max_bytes {max_bytes}");
            assert!(text.len() as u64 <= max_bytes);
            assert!(serde_json::from_str::<Value>(&text).is_ok());
        }
    }

    fn sample_event() -> ToolCallEvent {
        let arguments = json!({"path": "index.html", "source": "<script>secret()</script>", "apiKey": "sk-123"});
        let mut request = ToolCallRequest::new(
            "workspace.writeFile",
            arguments.as_object().unwrap().clone(),
        )
        .with_id("call_1");
        request.name = "workspace.writeFile".into();
        let mut context =
            ToolCallContext::new(ToolCallSource::Model, ToolCallMode::Agent).with_session("s1");
        context.metadata = Some(
            json!({"user": "ann", "cookie": "c=1"})
                .as_object()
                .unwrap()
                .clone(),
        );
        let result = ToolCallResult::failure(
            ToolCallError::new(
                "WORKSPACE_REVISION_CONFLICT",
                "stale revision of secret.txt",
            )
            .with_retryable(false)
            .with_details(json!({"expected": 2, "token": "t"})),
        );
        ToolCallEvent {
            event_type: ToolCallEventType::Failed,
            trace_id: "trace-1".into(),
            tool_call_id: Some("call_1".into()),
            name: "workspace.writeFile".into(),
            request,
            context: Some(context),
            timestamp: 1000,
            provenance: ToolExecutionProvenance::started("studio:1", None, None).finished(
                crate::event::ProvenanceState::Failed,
                10,
                3,
            ),
            duration_ms: Some(3),
            result: Some(result),
        }
    }

    #[test]
    fn observations_keep_argument_names_only() {
        let observation =
            project_tool_call_observation(&sample_event(), &ObservabilityPolicy::default());
        let text = observation.to_string();
        for secret in [
            "index.html",
            "secret()",
            "sk-123",
            "stale revision",
            "c=1",
            "\"t\"",
        ] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
        assert_eq!(observation["schemaVersion"], OBSERVATION_SCHEMA_VERSION);
        assert_eq!(observation["type"], "failed");
        assert_eq!(
            observation["request"],
            json!({"method": "tools/call", "toolCallId": "call_1", "name": "workspace.writeFile", "argumentKeys": ["apiKey", "path", "source"]})
        );
        assert_eq!(
            observation["result"],
            json!({"isError": true, "errorCode": "WORKSPACE_REVISION_CONFLICT", "retryable": false, "contentTypes": ["text"], "hasStructuredContent": false})
        );
        assert_eq!(
            observation["context"],
            json!({"source": "model", "mode": "agent", "sessionId": "s1", "metadata": {"user": "ann", "cookie": "[cookie redacted]"}})
        );
        assert_eq!(observation["provenance"]["state"], "failed");
        assert_eq!(observation["durationMs"], 3);
    }

    #[test]
    fn argument_names_and_unsafe_codes_are_bounded() {
        let mut event = sample_event();
        let many: Map<String, Value> = (0..40)
            .map(|index| (format!("k{index:02}"), Value::Null))
            .collect();
        event.request.arguments = Some(many);
        event.result = Some(ToolCallResult::failure(ToolCallError::new(
            "bad code!",
            "m",
        )));
        let observation = project_tool_call_observation(&event, &ObservabilityPolicy::default());
        let keys = observation["request"]["argumentKeys"].as_array().unwrap();
        assert_eq!(keys.len(), DEFAULT_MAX_ARRAY_ENTRIES + 1);
        assert_eq!(
            keys[DEFAULT_MAX_ARRAY_ENTRIES],
            ADDITIONAL_ARGUMENT_NAMES_MARKER
        );
        assert!(observation["result"].get("errorCode").is_none());
    }

    #[test]
    fn sink_records_carry_bounded_serialized_observations() {
        let small = policy(ObservabilityPolicyOptions {
            max_bytes: Some(2400),
            max_entries: Some(24),
            ..Default::default()
        });
        let record = observation_sink_record(&sample_event(), &small);
        assert_eq!(record["schemaVersion"], OBSERVATION_SINK_SCHEMA_VERSION);
        assert_eq!(record["policy"]["maxEntries"], 24);
        let serialized = record["serializedObservation"].as_str().unwrap();
        assert!(serialized.len() <= 2400);
        assert_eq!(
            serde_json::from_str::<Value>(serialized).unwrap(),
            project_tool_call_observation(&sample_event(), &small)
        );
        let tiny = policy(ObservabilityPolicyOptions {
            max_bytes: Some(40),
            ..Default::default()
        });
        assert_eq!(
            observation_sink_record(&sample_event(), &tiny)["serializedObservation"],
            "\"[observability payload redacted]\""
        );
    }

    #[test]
    fn diagnostics_keep_code_retryable_and_redacted_details_only() {
        let result = sample_event()
            .result
            .unwrap()
            .with_tool_call_id(Some("call_1".into()));
        let diagnostic = sanitize_tool_call_diagnostic(&result, &ObservabilityPolicy::default());
        assert_eq!(
            serde_json::to_value(&diagnostic).unwrap(),
            json!({"content": [{"type": "text", "text": DIAGNOSTIC_TEXT}], "isError": true, "error": {"code": "WORKSPACE_REVISION_CONFLICT", "message": DIAGNOSTIC_TEXT, "retryable": false, "details": {"expected": 2, "token": "[token redacted]"}}})
        );
        let huge = ToolCallResult::failure(
            ToolCallError::new("X", "m").with_details(json!({"blob": "y".repeat(400)})),
        );
        let tiny = policy(ObservabilityPolicyOptions {
            max_bytes: Some(64),
            ..Default::default()
        });
        assert_eq!(
            sanitize_tool_call_diagnostic(&huge, &tiny)
                .error
                .unwrap()
                .details,
            Some(json!({"_redacted": "observability payload exceeded byte limit"}))
        );
        let success = ToolCallResult::success(json!({"secret": 1}));
        let sanitized = sanitize_tool_call_diagnostic(&success, &ObservabilityPolicy::default());
        assert_eq!(
            (sanitized.error, sanitized.structured_content),
            (None, None)
        );
    }

    #[test]
    fn diagnostics_keep_the_error_code_whole_under_any_string_limit() {
        let tiny = policy(ObservabilityPolicyOptions {
            max_string_length: Some(4),
            ..Default::default()
        });
        let failure = ToolCallResult::failure(
            ToolCallError::new("WORKSPACE_WRITE_FAILED", "disk full")
                .with_details(json!({"path": "index.html"})),
        );
        let error = sanitize_tool_call_diagnostic(&failure, &tiny)
            .error
            .unwrap();
        assert_eq!(error.code, "WORKSPACE_WRITE_FAILED");
        assert_eq!(error.details, Some(json!({"path": "inde… [truncated]"})));
        let tokenish = ToolCallResult::failure(ToolCallError::new("TOKEN_EXPIRED", "m"));
        assert_eq!(
            sanitize_tool_call_diagnostic(&tokenish, &ObservabilityPolicy::default())
                .error
                .unwrap()
                .code,
            "TOKEN_EXPIRED"
        );
    }

    #[test]
    fn diagnostic_reasons_name_only_safe_codes() {
        let reason = |code: &str| {
            sanitize_tool_call_diagnostic_reason(&ToolCallResult::failure(ToolCallError::new(
                code, "leak",
            )))
        };
        assert_eq!(
            reason("TOOL_EXECUTION_UNKNOWN"),
            "Tool execution ended with TOOL_EXECUTION_UNKNOWN; reconcile before retrying."
        );
        let ambiguous =
            "Tool execution ended with an ambiguous outcome; reconcile before retrying.";
        assert_eq!(reason("has space"), ambiguous);
        assert_eq!(reason(&"A".repeat(129)), ambiguous);
        assert_eq!(
            sanitize_tool_call_diagnostic_reason(&ToolCallResult::empty_success()),
            ambiguous
        );
    }

    #[test]
    fn retention_is_exclusive_at_the_edge() {
        let policy = ObservabilityPolicy::default();
        assert!(is_observation_retained(
            1000,
            1000 + DEFAULT_RETENTION_MS - 1,
            &policy
        ));
        assert!(!is_observation_retained(
            1000,
            1000 + DEFAULT_RETENTION_MS,
            &policy
        ));
        assert!(is_observation_retained(5000, 1000, &policy));
        let none = super::tests::policy(ObservabilityPolicyOptions {
            retention_ms: Some(0),
            ..Default::default()
        });
        assert!(!is_observation_retained(1000, 1000, &none));
    }
}
