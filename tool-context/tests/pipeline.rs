//! The call pipeline: lookup, allowlist, request and option checks, strict validation,
//! handler results, output checks, events and correlation.

mod common;

use std::time::Duration;

use common::{Counter, Recorder, echo_tool, object, path_schema, request};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Value, json};
use tool_context::{
    AllowAll, BuildError, HandlerOutput, PolicyDecision, Tool, ToolCallOptions, ToolInvocation,
    ToolNamePatterns, ToolRegistry, ValidationMode,
};
use tool_protocol::{
    ModelToolCall, ProvenanceState, ToolCallContext, ToolCallError, ToolCallEventType,
    ToolCallMode, ToolCallResult, ToolCallSource, ToolContent, ToolDefinition, codes,
};

fn registry_with(tool: Tool, recorder: &Recorder) -> ToolRegistry {
    ToolRegistry::builder()
        .tool(tool)
        .policy(AllowAll)
        .observer(recorder.clone())
        .build()
        .unwrap()
}

#[tokio::test]
async fn prototype_and_unknown_names_are_not_found_and_never_run() {
    let counter = Counter::default();
    let recorder = Recorder::default();
    let registry = registry_with(echo_tool("echo", &counter), &recorder);
    for name in [
        "toString",
        "constructor",
        "__proto__",
        "hasOwnProperty",
        "valueOf",
        "missing",
        "Echo",
        "echo ",
    ] {
        let result = registry
            .call_tool(
                request(name, json!({"path": "a"})).with_id(name),
                ToolCallOptions::default(),
            )
            .await;
        assert_eq!(result.error_code(), Some(codes::TOOL_NOT_FOUND), "{name}");
        assert_eq!(
            result.error.as_ref().unwrap().message,
            format!("Tool \"{name}\" not found in registry")
        );
        assert_eq!(result.tool_call_id, Some(name.into()));
    }
    assert_eq!(counter.get(), 0);
    assert_eq!(
        recorder
            .types()
            .iter()
            .filter(|kind| **kind == ToolCallEventType::Failed)
            .count(),
        8
    );
}

#[tokio::test]
async fn the_allowlist_hides_tools_from_discovery_and_execution() {
    let counter = Counter::default();
    let mut allowed = vec!["visible".to_owned()];
    let registry = ToolRegistry::builder()
        .tool(echo_tool("visible", &counter))
        .tool(echo_tool("hidden", &counter))
        .allowed_tool_names(allowed.clone())
        .policy(AllowAll)
        .build()
        .unwrap();
    // The allowlist is a snapshot: changing the caller's list later changes nothing.
    allowed.push("hidden".into());
    assert_eq!(registry.tool_names(), ["visible"]);
    assert!(registry.tool_definition("hidden").is_none());
    assert_eq!(registry.list_all_tools().len(), 1);
    let hidden = registry
        .call_tool(
            request("hidden", json!({"path": "a"})),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(hidden.error_code(), Some(codes::TOOL_NOT_ALLOWED));
    assert_eq!(
        hidden.error.unwrap().message,
        "Tool \"hidden\" is not allowed in this registry"
    );
    let visible = registry
        .call_tool(
            request("visible", json!({"path": "a"})),
            ToolCallOptions::default(),
        )
        .await;
    assert!(!visible.is_error());
    assert_eq!(counter.get(), 1);
}

#[tokio::test]
async fn a_callers_allowlist_narrows_the_registrys_for_that_call_only() {
    let counter = Counter::default();
    let registry = ToolRegistry::builder()
        .tool(echo_tool("notes.read", &counter))
        .tool(echo_tool("notes.write", &counter))
        .policy(AllowAll)
        .build()
        .unwrap();
    let readers =
        ToolCallOptions::default().with_allowed_tools(ToolNamePatterns::new(["notes.read"]));
    let refused = registry
        .call_tool(
            request("notes.write", json!({"path": "a"})),
            readers.clone(),
        )
        .await;
    assert_eq!(refused.error_code(), Some(codes::TOOL_NOT_ALLOWED));
    assert_eq!(counter.get(), 0, "a refused call never reaches its handler");
    let read = registry
        .call_tool(request("notes.read", json!({"path": "a"})), readers)
        .await;
    assert!(!read.is_error());
    // Another caller without the narrowing still reaches every tool.
    let write = registry
        .call_tool(
            request("notes.write", json!({"path": "a"})),
            ToolCallOptions::default(),
        )
        .await;
    assert!(!write.is_error());
    assert_eq!(counter.get(), 2);
}

#[tokio::test]
async fn invalid_requests_fail_without_events_and_keep_a_usable_id() {
    let counter = Counter::default();
    let recorder = Recorder::default();
    let registry = registry_with(echo_tool("echo", &counter), &recorder);
    let blank = registry
        .call_tool(
            request("  ", json!({})).with_id("c1"),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(blank.error_code(), Some(codes::TOOL_VALIDATION_FAILED));
    assert_eq!(
        blank.error.as_ref().unwrap().message,
        "Invalid tools/call request."
    );
    assert_eq!(blank.tool_call_id, Some("c1".into()));
    let cases = [
        (json!(null), None),
        (json!([]), None),
        (
            json!({"id": "c2", "method": "tools/list", "params": {"name": "echo"}}),
            Some(json!("c2")),
        ),
        (
            json!({"id": 7, "method": "tools/call", "params": {"name": "echo", "arguments": []}}),
            Some(json!(7)),
        ),
        (
            json!({"id": {"x": 1}, "method": "tools/call", "params": {"name": ""}}),
            None,
        ),
        (json!({"method": "tools/call"}), None),
    ];
    for (raw, id) in cases {
        let result = registry
            .call_tool_value(&raw, ToolCallOptions::default())
            .await;
        assert_eq!(
            result.error_code(),
            Some(codes::TOOL_VALIDATION_FAILED),
            "{raw}"
        );
        assert_eq!(
            result
                .tool_call_id
                .map(|id| serde_json::to_value(id).unwrap()),
            id,
            "{raw}"
        );
    }
    let valid = registry
        .call_tool_value(&json!({"id": 0, "method": "tools/call", "params": {"name": "echo", "arguments": {"path": "a"}}}), ToolCallOptions::default())
        .await;
    assert!(!valid.is_error());
    assert_eq!(valid.tool_call_id, Some(0u64.into()));
    assert_eq!(
        recorder.types(),
        [ToolCallEventType::Started, ToolCallEventType::Completed]
    );
    assert_eq!(counter.get(), 1);
}

#[tokio::test]
async fn invalid_options_fail_before_any_event() {
    let counter = Counter::default();
    let recorder = Recorder::default();
    let registry = registry_with(echo_tool("echo", &counter), &recorder);
    let bad = [
        ToolCallOptions::default().with_timeout_ms(-1),
        ToolCallOptions::default().with_timeout_ms(2_147_483_648),
        ToolCallOptions::default().with_max_output_bytes(0),
        ToolCallOptions::default().with_idempotency_key(" "),
        ToolCallOptions::default().with_idempotency_key("k".repeat(257)),
        ToolCallOptions::default().with_execution_owner_id("\0"),
        ToolCallOptions::from_json(&json!({"timeout": 2_147_483_648_i64})).unwrap(),
    ];
    for options in bad {
        let result = registry
            .call_tool(request("echo", json!({"path": "a"})).with_id("c"), options)
            .await;
        assert_eq!(result.error_code(), Some(codes::TOOL_INVALID_OPTIONS));
        assert_eq!(result.error.unwrap().retryable, Some(false));
        assert_eq!(result.tool_call_id, Some("c".into()));
    }
    assert!(recorder.events().is_empty());
    assert_eq!(counter.get(), 0);
    let edge = registry
        .call_tool(
            request("echo", json!({"path": "a"})),
            ToolCallOptions::default().with_timeout_ms(2_147_483_647),
        )
        .await;
    assert!(!edge.is_error());
}

#[tokio::test]
async fn strict_mode_rejects_invalid_arguments_with_issues_before_the_policy() {
    let counter = Counter::default();
    let policy_calls = Counter::default();
    let seen = policy_calls.clone();
    let registry = ToolRegistry::builder()
        .tool(echo_tool("echo", &counter))
        .policy(CountingPolicy(seen))
        .build()
        .unwrap();
    let result = registry
        .call_tool(
            request("echo", json!({"path": "", "count": 0, "extra": true})),
            ToolCallOptions::default(),
        )
        .await;
    let error = result.error.unwrap();
    assert_eq!(error.code, codes::TOOL_VALIDATION_FAILED);
    assert_eq!(error.message, "Tool \"echo\" arguments failed validation");
    let issues = error.details.unwrap()["issues"].as_array().unwrap().clone();
    assert_eq!(issues.len(), 3);
    assert!(issues.iter().any(|issue| issue["pointer"] == "/count"));
    let missing = registry
        .call_tool(
            tool_protocol::ToolCallRequest {
                id: None,
                name: "echo".into(),
                arguments: None,
            },
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(missing.error_code(), Some(codes::TOOL_VALIDATION_FAILED));
    assert_eq!(policy_calls.get(), 0);
    assert_eq!(counter.get(), 0);
}

struct CountingPolicy(Counter);

#[async_trait::async_trait]
impl tool_context::ToolPolicy for CountingPolicy {
    async fn decide(
        &self,
        _request: tool_context::PolicyRequest<'_>,
    ) -> Result<PolicyDecision, tool_context::BoxError> {
        self.0.bump();
        Ok(PolicyDecision::Allow)
    }
}

#[tokio::test]
async fn warn_and_silent_modes_dispatch_invalid_arguments() {
    for mode in [ValidationMode::Warn, ValidationMode::Silent] {
        let counter = Counter::default();
        let registry = ToolRegistry::builder()
            .tool(echo_tool("echo", &counter))
            .validation_mode(mode)
            .policy(AllowAll)
            .build()
            .unwrap();
        let result = registry
            .call_tool(
                request("echo", json!({"count": "x"})),
                ToolCallOptions::default(),
            )
            .await;
        assert!(!result.is_error(), "{mode:?}");
        assert_eq!(result.structured_content, Some(json!({"count": "x"})));
        assert_eq!(counter.get(), 1);
    }
}

#[tokio::test]
async fn handler_errors_keep_code_retryable_details_and_handler_id() {
    let failing = Tool::new(
        ToolDefinition::new("write", "w", json!({"type": "object"})),
        |arguments: Value, _call: ToolInvocation| async move {
            match arguments["kind"].as_str() {
                Some("domain") => Err::<Value, _>(
                    ToolCallError::new("WORKSPACE_REVISION_CONFLICT", "stale")
                        .with_retryable(true)
                        .with_details(json!({"expectedRevision": 1})),
                ),
                Some("unknown") => Err(ToolCallError::new(
                    codes::TOOL_EXECUTION_UNKNOWN,
                    "partial write",
                )),
                Some("panic") => panic!("handler bug"),
                _ => Err(ToolCallError::new("", "disk full")),
            }
        },
    );
    let recorder = Recorder::default();
    let registry = registry_with(failing, &recorder);
    let call = |kind: &str| {
        registry.call_tool(
            request("write", json!({"kind": kind})),
            ToolCallOptions::default(),
        )
    };
    let domain = call("domain").await.error.unwrap();
    assert_eq!(
        (domain.code.as_str(), domain.retryable),
        ("WORKSPACE_REVISION_CONFLICT", Some(true))
    );
    assert_eq!(domain.details, Some(json!({"expectedRevision": 1})));
    let generic = call("generic").await.error.unwrap();
    assert_eq!(
        (generic.code.as_str(), generic.retryable),
        (codes::TOOL_EXECUTION_FAILED, Some(false))
    );
    assert_eq!(
        generic.details,
        Some(json!({"handlerId": "write", "message": "disk full"}))
    );
    let panicked = call("panic").await.error.unwrap();
    assert_eq!(panicked.code, codes::TOOL_EXECUTION_FAILED);
    assert_eq!(
        call("unknown").await.error_code(),
        Some(codes::TOOL_EXECUTION_UNKNOWN)
    );
    let states: Vec<_> = recorder
        .events()
        .iter()
        .filter(|event| event.result.is_some())
        .map(|event| event.provenance.state)
        .collect();
    assert_eq!(
        states,
        [
            ProvenanceState::Failed,
            ProvenanceState::Failed,
            ProvenanceState::Failed,
            ProvenanceState::Unknown
        ]
    );
}

#[tokio::test]
async fn handlers_return_values_nothing_or_full_results() {
    let tool = Tool::new(
        ToolDefinition::new("shape", "s", json!({"type": "object"})),
        |arguments: Value, _call: ToolInvocation| async move {
            Ok::<_, ToolCallError>(match arguments["shape"].as_str().unwrap_or_default() {
                "value" => HandlerOutput::Value(json!({"ok": true})),
                "empty" => HandlerOutput::Empty,
                "full" => ToolCallResult {
                    tool_call_id: Some("stale".into()),
                    content: vec![ToolContent::json(json!([1]))],
                    structured_content: None,
                    error: None,
                    replay: None,
                }
                .into(),
                "full-error" => ToolCallResult::failure(
                    ToolCallError::new("APP_BUSY", "busy").with_retryable(true),
                )
                .into(),
                // Fields are public: a handler can still build a blank code by hand.
                _ => ToolCallResult::failure(ToolCallError {
                    code: " ".into(),
                    ..ToolCallError::new("X", "m")
                })
                .into(),
            })
        },
    );
    let registry = registry_with(tool, &Recorder::default());
    let call = |shape: &str| {
        registry.call_tool(
            request("shape", json!({"shape": shape})),
            ToolCallOptions::default(),
        )
    };
    assert_eq!(
        call("value").await.structured_content,
        Some(json!({"ok": true}))
    );
    let empty = call("empty").await;
    assert_eq!(
        empty.content,
        [ToolContent::text("Tool completed successfully.")]
    );
    assert_eq!(empty.structured_content, None);
    let full = call("full").await;
    assert_eq!(full.content, [ToolContent::json(json!([1]))]);
    assert_eq!(
        full.tool_call_id, None,
        "a handler cannot forge the correlation id"
    );
    assert_eq!(
        call("full-error").await.error.unwrap(),
        ToolCallError::new("APP_BUSY", "busy").with_retryable(true)
    );
    assert_eq!(
        call("broken").await.error_code(),
        Some(codes::TOOL_RESULT_VALIDATION_FAILED)
    );
}

#[derive(Deserialize, JsonSchema)]
struct SearchInput {
    query: String,
    #[serde(default = "default_max")]
    max_results: u32,
}

fn default_max() -> u32 {
    10
}

#[derive(Serialize, JsonSchema)]
struct SearchOutput {
    query: String,
    max_results: u32,
}

async fn search(input: SearchInput, _call: ToolInvocation) -> Result<SearchOutput, ToolCallError> {
    Ok(SearchOutput {
        query: input.query.trim().to_owned(),
        max_results: input.max_results,
    })
}

#[derive(Serialize, JsonSchema)]
struct Unserializable {
    #[serde(serialize_with = "refuse")]
    value: u32,
}

fn refuse<S: Serializer>(_value: &u32, _serializer: S) -> Result<S::Ok, S::Error> {
    Err(serde::ser::Error::custom("cannot serialize"))
}

async fn broken(
    _input: SearchInput,
    _call: ToolInvocation,
) -> Result<Unserializable, ToolCallError> {
    Ok(Unserializable { value: 1 })
}

#[tokio::test]
async fn typed_tools_derive_schemas_apply_defaults_and_check_serialization() {
    let registry = ToolRegistry::builder()
        .tool(Tool::typed("search", "Searches.", search).read_only())
        .tool(Tool::typed("broken", "Breaks.", broken).read_only())
        .build()
        .unwrap();
    let definition = registry.tool_definition("search").unwrap();
    assert_eq!(definition.input_schema["required"], json!(["query"]));
    assert!(definition.output_schema.is_some());
    let result = registry
        .call_tool(
            request("search", json!({"query": "  laptop  "})),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(
        result.structured_content,
        Some(json!({"query": "laptop", "max_results": 10}))
    );
    let invalid = registry
        .call_tool(
            request("search", json!({"query": 3})),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(invalid.error_code(), Some(codes::TOOL_VALIDATION_FAILED));
    let unserializable = registry
        .call_tool(
            request("broken", json!({"query": "q"})),
            ToolCallOptions::default(),
        )
        .await;
    assert_eq!(
        unserializable.error_code(),
        Some(codes::TOOL_RESULT_SERIALIZATION_FAILED)
    );
}

#[tokio::test]
async fn output_schemas_reject_invalid_results() {
    let tool = Tool::new(
        ToolDefinition::new("count", "c", json!({"type": "object"})),
        |arguments: Value, _call: ToolInvocation| async move {
            Ok::<_, ToolCallError>(if arguments["empty"] == true {
                HandlerOutput::Empty
            } else {
                HandlerOutput::Value(arguments["value"].clone())
            })
        },
    )
    .output_schema(
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
    );
    let registry = registry_with(tool, &Recorder::default());
    let call = |arguments: Value| {
        registry.call_tool(request("count", arguments), ToolCallOptions::default())
    };
    assert!(!call(json!({"value": {"n": 1}})).await.is_error());
    let invalid = call(json!({"value": {"n": "one"}})).await.error.unwrap();
    assert_eq!(invalid.code, codes::TOOL_OUTPUT_VALIDATION_FAILED);
    assert_eq!(invalid.message, "Tool \"count\" returned an invalid result");
    assert_eq!(invalid.details.unwrap()["issues"][0]["pointer"], "/n");
    assert_eq!(
        call(json!({"empty": true})).await.error_code(),
        Some(codes::TOOL_OUTPUT_VALIDATION_FAILED)
    );
}

#[tokio::test]
async fn output_budgets_are_enforced_at_the_exact_edge() {
    let recorder = Recorder::default();
    let registry = registry_with(echo_tool("echo", &Counter::default()), &recorder);
    let arguments = json!({"path": "abc"});
    let size = ToolCallResult::success(arguments.clone()).output_bytes() as i64;
    let at_limit = registry
        .call_tool(
            request("echo", arguments.clone()),
            ToolCallOptions::default().with_max_output_bytes(size),
        )
        .await;
    assert!(!at_limit.is_error());
    let over = registry
        .call_tool(
            request("echo", arguments),
            ToolCallOptions::default().with_max_output_bytes(size - 1),
        )
        .await;
    let error = over.error.unwrap();
    assert_eq!(error.code, codes::TOOL_OUTPUT_LIMIT_EXCEEDED);
    assert_eq!(error.retryable, Some(false));
    assert_eq!(
        error.message,
        format!("Tool call output exceeded the {}-byte limit.", size - 1)
    );
    assert_eq!(
        error.details,
        Some(json!({"maxOutputBytes": size - 1, "usedOutputBytes": size}))
    );
    let finished = recorder.events().into_iter().last().unwrap();
    assert_eq!(finished.provenance.max_output_bytes, Some(size as u64 - 1));
    assert_eq!(finished.provenance.used_output_bytes, size as u64);
    assert_eq!(finished.provenance.state, ProvenanceState::Failed);
}

#[tokio::test]
async fn events_carry_request_context_provenance_and_unique_trace_ids() {
    let recorder = Recorder::default();
    let registry = ToolRegistry::builder()
        .tool(echo_tool("echo", &Counter::default()))
        .policy(AllowAll)
        .observer(|_: &tool_protocol::ToolCallEvent| panic!("a broken observer"))
        .observer(recorder.clone())
        .execution_owner_id("studio:1")
        .build()
        .unwrap();
    for _ in 0..2 {
        let result = registry
            .call_tool(
                request("echo", json!({"path": "a"})).with_id("same"),
                ToolCallOptions::default().with_timeout_ms(60_000),
            )
            .await;
        assert!(!result.is_error());
    }
    let overridden = registry
        .call_tool(
            request("echo", json!({"path": "a"})),
            ToolCallOptions::default().with_execution_owner_id(" worker-2 "),
        )
        .await;
    assert!(!overridden.is_error());
    let events = recorder.events();
    assert_eq!(events.len(), 6);
    let (started, completed) = (&events[0], &events[1]);
    assert_eq!(started.event_type, ToolCallEventType::Started);
    assert_eq!(started.provenance.state, ProvenanceState::Pending);
    assert_eq!(
        (
            started.provenance.used_output_bytes,
            started.provenance.elapsed_ms
        ),
        (0, 0)
    );
    assert_eq!(started.provenance.owner_id, "studio:1");
    assert_eq!(started.provenance.timeout_ms, Some(60_000));
    assert_eq!(
        started.context.as_ref().unwrap().source,
        Some(ToolCallSource::Mcp)
    );
    assert_eq!(
        started.request.arguments,
        Some(object(json!({"path": "a"})))
    );
    assert_eq!(completed.provenance.state, ProvenanceState::Completed);
    assert_eq!(completed.trace_id, started.trace_id);
    assert!(completed.duration_ms.is_some());
    assert_eq!(
        completed.provenance.used_output_bytes,
        completed.result.as_ref().unwrap().output_bytes() as u64
    );
    assert_ne!(
        events[2].trace_id, started.trace_id,
        "a reused provider id never merges two calls"
    );
    assert_eq!(events[4].provenance.owner_id, "worker-2");
    assert!(
        registry.execution_owner_id().starts_with("tool-context:")
            || registry.execution_owner_id() == "studio:1"
    );
}

#[tokio::test]
async fn model_calls_default_to_model_agent_context() {
    let recorder = Recorder::default();
    let registry = registry_with(echo_tool("echo", &Counter::default()), &recorder);
    let call = ModelToolCall {
        id: Some("m1".into()),
        name: "echo".into(),
        arguments: Some(object(json!({"path": "a"}))),
    };
    registry
        .execute_model_tool_call(call.clone(), ToolCallOptions::default())
        .await;
    let session = ToolCallContext {
        mode: Some(ToolCallMode::Direct),
        ..ToolCallContext::default()
    }
    .with_session("s1");
    registry
        .execute_model_tool_call(call, ToolCallOptions::default().with_context(session))
        .await;
    let contexts: Vec<_> = recorder
        .events()
        .iter()
        .map(|event| event.context.clone().unwrap())
        .collect();
    assert_eq!(
        (contexts[0].source, contexts[0].mode),
        (Some(ToolCallSource::Model), Some(ToolCallMode::Agent))
    );
    assert_eq!(
        (contexts[2].source, contexts[2].mode),
        (Some(ToolCallSource::Model), Some(ToolCallMode::Direct))
    );
    assert_eq!(contexts[2].session_id.as_deref(), Some("s1"));
}

#[tokio::test]
async fn parallel_results_correlate_by_tool_call_id() {
    let tool = Tool::new(
        ToolDefinition::new("slow", "s", json!({"type": "object"})),
        |arguments: Value, _call: ToolInvocation| async move {
            let n = arguments["n"].as_u64().unwrap();
            tokio::time::sleep(Duration::from_millis((n * 7919) % 23)).await;
            Ok::<_, ToolCallError>(json!({"n": n}))
        },
    );
    let registry = registry_with(tool, &Recorder::default());
    let calls = (0..64u64).map(|n| {
        let registry = registry.clone();
        tokio::spawn(async move {
            let id = format!("call_{n}");
            (
                id.clone(),
                registry
                    .call_tool(
                        request("slow", json!({"n": n})).with_id(id),
                        ToolCallOptions::default(),
                    )
                    .await,
            )
        })
    });
    for (n, call) in calls.enumerate() {
        let (id, result) = call.await.unwrap();
        assert_eq!(result.tool_call_id, Some(id.into()));
        assert_eq!(result.structured_content, Some(json!({"n": n})));
    }
}

#[test]
fn registration_errors_are_build_errors() {
    let tool = |definition: ToolDefinition| {
        Tool::new(definition, |_: Value, _: ToolInvocation| async {
            Ok::<_, ToolCallError>(())
        })
    };
    let build = |tools: Vec<Tool>| ToolRegistry::builder().tools(tools).build().map(|_| ());
    let schema = path_schema();
    assert_eq!(
        build(vec![tool(ToolDefinition::new(" ", "d", schema.clone()))]),
        Err(BuildError::BlankToolName)
    );
    assert_eq!(
        build(vec![
            tool(ToolDefinition::new("a", "d", schema.clone())),
            tool(ToolDefinition::new("a", "d", schema.clone()))
        ]),
        Err(BuildError::DuplicateTool("a".into()))
    );
    for bad in [
        json!({"$ref": "https://example.com/s.json"}),
        json!({"$ref": "file:///etc/passwd"}),
        json!({"type": "array"}),
        json!(true),
        json!({"minLength": "x"}),
    ] {
        assert!(
            matches!(
                build(vec![tool(ToolDefinition::new("a", "d", bad.clone()))]),
                Err(BuildError::InvalidInputSchema { .. })
            ),
            "{bad}"
        );
    }
    let bad_output = tool(ToolDefinition::new("a", "d", schema)).output_schema(json!({"type": 5}));
    assert!(matches!(
        build(vec![bad_output]),
        Err(BuildError::InvalidOutputSchema { .. })
    ));
    assert_eq!(
        ToolRegistry::builder().page_size(0).build().map(|_| ()),
        Err(BuildError::ZeroPageSize)
    );
    assert_eq!(
        ToolRegistry::builder()
            .execution_owner_id(" ")
            .build()
            .map(|_| ()),
        Err(BuildError::InvalidOwnerId)
    );
    let zero = tool_context::IdempotencyConfig {
        max_entries: 0,
        ..Default::default()
    };
    assert!(matches!(
        ToolRegistry::builder().idempotency(zero).build(),
        Err(BuildError::Idempotency(_))
    ));
}
