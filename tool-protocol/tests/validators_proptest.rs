//! Property tests: every validator is total on arbitrary JSON (deep nesting and huge strings
//! included), and valid values round-trip through serde unchanged.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tool_protocol::approval::parse_tool_approval_snapshot;
use tool_protocol::event::parse_tool_execution_provenance;
use tool_protocol::observability::{ObservabilityPolicy, redact_value, serialize_redacted};
use tool_protocol::validate::{
    MAX_ISSUES, MAX_VALIDATION_DEPTH, parse_tool_call_error, parse_tool_call_request,
    parse_tool_call_result, parse_tool_definition, parse_tool_list_request, parse_tool_list_result,
};
use tool_protocol::{ToolCallRequest, ToolCallResult, ToolListResult};

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("tools/call"),
            Just("tools/list"),
            Just("text"),
            Just("json"),
            Just(" "),
            Just("")
        ]
        .prop_map(|text| Value::String(text.into())),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// Keys biased towards the contract's field names so random values reach deep rules.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "id", "method", "params", "name", "arguments", "cursor", "tools", "nextCursor", "inputSchema",
            "outputSchema", "annotations", "content", "type", "text", "json", "toolCallId", "isError", "error",
            "code", "message", "retryable", "details", "structuredContent", "schemaVersion", "ownerId", "state",
            "source", "mode", "argumentKeys", "createdAt", "description", "token",
        ])
        .prop_map(str::to_owned),
        1 => ".{0,8}",
    ]
}

/// Runs every parser and the redaction on `value`; none may panic.
fn run_everything(value: &Value) {
    let _ = parse_tool_call_request(value);
    let _ = parse_tool_list_request(Some(value));
    let _ = parse_tool_list_result(value);
    let _ = parse_tool_call_result(value);
    let _ = parse_tool_definition(value);
    let _ = parse_tool_call_error(value);
    let _ = parse_tool_approval_snapshot(value);
    let _ = parse_tool_execution_provenance(value, "provenance");
    let policy = ObservabilityPolicy::default();
    let _ = redact_value(value, &policy);
    let serialized = serialize_redacted(value, &policy);
    assert!(serialized.len() <= policy.max_bytes());
}

fn valid_request() -> impl Strategy<Value = Value> {
    let id = prop_oneof![
        Just(None),
        ".{0,8}".prop_map(|id| Some(json!(id))),
        any::<i64>().prop_map(|id| Some(json!(id))),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|id| Some(json!(id))),
    ];
    let arguments = prop::option::of(prop::collection::vec((key(), arbitrary_json()), 0..5));
    ("[a-z][a-z0-9._-]{0,20}", id, arguments).prop_map(|(name, id, arguments)| {
        let mut params = Map::new();
        params.insert("name".into(), json!(name));
        if let Some(arguments) = arguments {
            params.insert(
                "arguments".into(),
                Value::Object(arguments.into_iter().collect()),
            );
        }
        let mut request = Map::new();
        if let Some(id) = id {
            request.insert("id".into(), id);
        }
        request.insert("method".into(), json!("tools/call"));
        request.insert("params".into(), Value::Object(params));
        Value::Object(request)
    })
}

fn valid_result() -> impl Strategy<Value = Value> {
    let block = prop_oneof![
        ".{0,16}".prop_map(|text| json!({"type": "text", "text": text})),
        arbitrary_json().prop_map(|value| json!({"type": "json", "json": value})),
    ];
    let error = prop::option::of((
        "[A-Z_]{1,12}",
        ".{1,12}",
        prop::option::of(any::<bool>()),
        prop::option::of(arbitrary_json()),
    ));
    (
        prop::option::of("[a-z0-9]{1,8}"),
        prop::collection::vec(block, 0..4),
        prop::option::of(arbitrary_json()),
        error,
    )
        .prop_map(|(id, content, structured, error)| {
            let mut result = Map::new();
            if let Some(id) = id {
                result.insert("toolCallId".into(), json!(id));
            }
            result.insert("content".into(), Value::Array(content));
            if let Some(structured) = structured {
                result.insert("structuredContent".into(), structured);
            }
            if let Some((code, message, retryable, details)) = error {
                result.insert("isError".into(), json!(true));
                let mut error = Map::new();
                error.insert("code".into(), json!(code));
                error.insert("message".into(), json!(format!("m{message}")));
                if let Some(retryable) = retryable {
                    error.insert("retryable".into(), json!(retryable));
                }
                if let Some(details) = details {
                    error.insert("details".into(), details);
                }
                result.insert("error".into(), Value::Object(error));
            }
            Value::Object(result)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn validators_are_total_on_arbitrary_json(value in arbitrary_json()) {
        run_everything(&value);
        run_everything(&json!({"method": "tools/call", "params": value.clone()}));
        run_everything(&json!({"tools": [value.clone()], "content": [value]}));
    }

    #[test]
    fn whatever_validates_round_trips(value in arbitrary_json()) {
        if let Ok(request) = parse_tool_call_request(&value) {
            let wire = serde_json::to_value(&request).unwrap();
            prop_assert_eq!(parse_tool_call_request(&wire).unwrap(), request);
        }
        if let Ok(result) = parse_tool_call_result(&value) {
            let wire = serde_json::to_value(&result).unwrap();
            prop_assert_eq!(parse_tool_call_result(&wire).unwrap(), result);
        }
    }

    #[test]
    fn valid_requests_round_trip_exactly(wire in valid_request()) {
        let request = parse_tool_call_request(&wire).unwrap();
        prop_assert_eq!(&serde_json::to_value(&request).unwrap(), &wire);
        let text = wire.to_string();
        prop_assert_eq!(serde_json::from_str::<ToolCallRequest>(&text).unwrap(), request);
    }

    #[test]
    fn valid_results_round_trip_exactly(wire in valid_result()) {
        let result = parse_tool_call_result(&wire).unwrap();
        prop_assert_eq!(&serde_json::to_value(&result).unwrap(), &wire);
        prop_assert_eq!(serde_json::from_value::<ToolCallResult>(wire).unwrap(), result);
    }

}

proptest! {
    // Each case copies several strings of up to 300k characters; a few cases cover the edges.
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn huge_strings_are_handled(length in 0usize..300_000, fill in prop::char::any()) {
        let huge: String = std::iter::repeat_n(fill, length).collect();
        let value = json!({"method": "tools/call", "params": {"name": huge.clone(), "arguments": {huge.clone(): huge.clone()}}});
        let parsed = parse_tool_call_request(&value);
        prop_assert_eq!(parsed.is_ok(), !huge.trim().is_empty());
        run_everything(&value);
        run_everything(&json!({"content": [{"type": "text", "text": huge.clone()}], "isError": true, "error": {"code": huge.clone(), "message": huge}}));
    }
}

/// A value nested `levels` deep, built without recursion (`json!` would serialize the inner
/// value recursively).
fn nested(levels: usize) -> Value {
    (0..levels).fold(Value::from("leaf"), |inner, index| {
        if index % 2 == 0 {
            Value::Array(vec![inner])
        } else {
            object([("k", inner)])
        }
    })
}

fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect(),
    )
}

/// Takes a deep value apart iteratively: the derived `Drop` of `Value` recurses.
fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(node) = stack.pop() {
        match node {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, item)| item)),
            _ => {}
        }
    }
}

#[test]
fn very_deep_values_are_rejected_without_recursion() {
    const LEVELS: usize = 100_000;
    let arguments = object([("a", nested(LEVELS))]);
    let params = object([("name", json!("t")), ("arguments", arguments)]);
    let request = object([("method", json!("tools/call")), ("params", params)]);
    let issues = parse_tool_call_request(&request).unwrap_err();
    assert_eq!(issues[0].pointer, "/params/arguments");
    dismantle(request);

    let block = object([("type", json!("json")), ("json", nested(LEVELS))]);
    let result = object([("content", Value::Array(vec![block]))]);
    assert_eq!(
        parse_tool_call_result(&result).unwrap_err()[0].pointer,
        "/content/0/json"
    );
    let policy = ObservabilityPolicy::default();
    let redacted = redact_value(&result, &policy);
    assert!(serialize_redacted(&result, &policy).len() <= policy.max_bytes());
    assert!(redacted.to_string().contains("[depth redacted]"));
    dismantle(result);

    let schema = object([("properties", nested(LEVELS))]);
    let page = object([(
        "tools",
        Value::Array(vec![object([
            ("name", json!("t")),
            ("inputSchema", schema),
        ])]),
    )]);
    assert_eq!(
        parse_tool_list_result(&page).unwrap_err()[0].pointer,
        "/tools/0/inputSchema"
    );
    dismantle(page);
}

#[test]
fn the_depth_limit_is_exact_for_every_copied_payload() {
    let at_limit = nested(MAX_VALIDATION_DEPTH - 1);
    let over = nested(MAX_VALIDATION_DEPTH);
    let request = |inner: &Value| json!({"method": "tools/call", "params": {"name": "t", "arguments": {"a": inner}}});
    assert!(parse_tool_call_request(&request(&at_limit)).is_ok());
    assert!(parse_tool_call_request(&request(&over)).is_err());
    let structured = |inner: &Value| json!({"content": [], "structuredContent": [inner]});
    assert!(parse_tool_call_result(&structured(&at_limit)).is_ok());
    assert!(parse_tool_call_result(&structured(&over)).is_err());
}

#[test]
fn wide_hostile_pages_stop_at_the_issue_bound() {
    let tools: Vec<Value> = (0..100_000).map(|index| json!({"name": index})).collect();
    let issues = parse_tool_list_result(&json!({"tools": tools})).unwrap_err();
    assert_eq!(issues.len(), MAX_ISSUES + 1);
    let page: ToolListResult = serde_json::from_value(json!({"tools": []})).unwrap();
    assert!(page.tools.is_empty());
}

/// Found by the tools_list fuzz target: a schema number read from JSON text did not survive
/// being written and read again (serde_json's default float parser is off by one ULP for some
/// inputs), so an accepted page changed on its way through a transport.
#[test]
fn accepted_values_survive_a_text_round_trip() {
    let text = r#"{"tools":[{"name":"t","inputSchema":{"type":"object","maxLength":1.0488888884888889e+89}}]}"#;
    let page = parse_tool_list_result(&serde_json::from_str(text).unwrap()).unwrap();
    let written = serde_json::to_string(&page).unwrap();
    let again = parse_tool_list_result(&serde_json::from_str(&written).unwrap()).unwrap();
    assert_eq!(again, page, "{written}");
}
