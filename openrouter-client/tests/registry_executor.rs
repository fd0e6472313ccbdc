//! `RegistryExecutor` (feature `tool-context`): a registry as the loop's executor, on its own
//! and through the real loop against the fake provider.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use openrouter_tool_loop::codes::OPENROUTER_CANCELLED;
use openrouter_tool_loop::{ChatMessage, RegistryExecutor, RunOptions, RunRequest, ToolExecutor};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use support::{FakeOpenRouter, Reply};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tool_context::{Tool, ToolCallOptions, ToolInvocation, ToolRegistry};
use tool_protocol::export::OpenAiToolNames;
use tool_protocol::{
    ModelToolCall, ToolCallContext, ToolCallError, ToolCallMode, ToolCallSource, ToolDefinition,
    codes,
};

const WAIT: Duration = Duration::from_secs(10);

#[derive(Deserialize, JsonSchema)]
struct AddInput {
    a: i64,
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct AddOutput {
    sum: i64,
}

/// What the handlers saw.
#[derive(Default)]
struct Seen {
    /// `(tool, tool call id, context)` of every handler run.
    calls: Mutex<Vec<(String, Option<String>, ToolCallContext)>>,
    /// Notified when `slow.wait` starts.
    slow_started: Notify,
    /// Notified when `slow.wait` saw its cancellation.
    slow_cancelled: Notify,
}

impl Seen {
    fn record(&self, call: &ToolInvocation) {
        self.calls.lock().unwrap().push((
            call.tool_name.clone(),
            call.tool_call_id.as_ref().map(ToString::to_string),
            call.context.clone(),
        ));
    }

    fn names(&self) -> Vec<String> {
        let calls = self.calls.lock().unwrap();
        calls.iter().map(|(name, _, _)| name.clone()).collect()
    }

    fn last(&self) -> (String, Option<String>, ToolCallContext) {
        self.calls.lock().unwrap().last().cloned().expect("a call")
    }
}

/// `notes.add` (typed), `notes.slow` (waits for its cancellation) and `admin.reset`, which the
/// tests' filter excludes.
fn registry(seen: &Arc<Seen>) -> ToolRegistry {
    let add = {
        let seen = Arc::clone(seen);
        Tool::typed(
            "notes.add",
            "Adds two integers.",
            move |input: AddInput, call: ToolInvocation| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.record(&call);
                    Ok::<_, ToolCallError>(AddOutput {
                        sum: input.a + input.b,
                    })
                }
            },
        )
        .read_only()
    };
    let slow = {
        let seen = Arc::clone(seen);
        Tool::new(
            ToolDefinition::new(
                "notes.slow",
                "Waits until cancelled.",
                json!({"type": "object"}),
            ),
            move |_: Value, call: ToolInvocation| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.record(&call);
                    seen.slow_started.notify_one();
                    call.cancellation.cancelled().await;
                    seen.slow_cancelled.notify_one();
                    Ok::<_, ToolCallError>(json!({"finished": true}))
                }
            },
        )
        .read_only()
    };
    let reset = {
        let seen = Arc::clone(seen);
        Tool::new(
            ToolDefinition::new("admin.reset", "Resets.", json!({"type": "object"})),
            move |_: Value, call: ToolInvocation| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.record(&call);
                    Ok::<_, ToolCallError>(json!({"reset": true}))
                }
            },
        )
        .read_only()
    };
    ToolRegistry::builder()
        .tool(add)
        .tool(slow)
        .tool(reset)
        .build()
        .unwrap()
}

fn metadata(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

fn executor(seen: &Arc<Seen>) -> RegistryExecutor {
    RegistryExecutor::new(registry(seen))
        .only(|name| name.starts_with("notes."))
        .with_metadata(metadata(json!({"runId": "run-1", "agentRun": true})))
}

fn model_context(session: &str) -> ToolCallContext {
    ToolCallContext::new(ToolCallSource::Model, ToolCallMode::Agent).with_session(session)
}

fn add_call(id: &str) -> ModelToolCall {
    ModelToolCall::new(id, "notes.add", metadata(json!({"a": 2, "b": 3})))
}

#[tokio::test]
async fn lists_and_calls_the_registry_with_the_loops_context_and_metadata() {
    let seen = Arc::new(Seen::default());
    let executor = executor(&seen);
    let listed: Vec<String> = executor
        .list_tools()
        .await
        .into_iter()
        .map(|tool| tool.name)
        .collect();
    assert_eq!(listed, ["notes.add", "notes.slow"], "the filter narrows");
    assert_eq!(
        executor.registry().list_all_tools().len(),
        3,
        "the registry keeps its tools"
    );

    let mut context = model_context("session-7");
    context.metadata = Some(metadata(json!({"fromLoop": 1, "runId": "loop's"})));
    let result = executor
        .call_tool(add_call("call_1"), context, CancellationToken::new())
        .await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(result.structured_content, Some(json!({"sum": 5})));
    assert_eq!(
        result.tool_call_id,
        Some("call_1".into()),
        "the registry echoes the id"
    );
    let (name, id, seen_context) = seen.last();
    assert_eq!(
        (name.as_str(), id.as_deref()),
        ("notes.add", Some("call_1"))
    );
    assert_eq!(seen_context.source, Some(ToolCallSource::Model));
    assert_eq!(seen_context.mode, Some(ToolCallMode::Agent));
    assert_eq!(seen_context.session_id.as_deref(), Some("session-7"));
    assert_eq!(
        seen_context.metadata,
        Some(metadata(
            json!({"fromLoop": 1, "runId": "run-1", "agentRun": true})
        )),
        "the executor's metadata is merged in (its keys win)"
    );

    // A context without source and mode still reaches the handler as a model call.
    let result = executor
        .call_tool(
            add_call("call_2"),
            ToolCallContext::default(),
            CancellationToken::new(),
        )
        .await;
    assert!(!result.is_error());
    let (_, _, seen_context) = seen.last();
    assert_eq!(
        (seen_context.source, seen_context.mode),
        (Some(ToolCallSource::Model), Some(ToolCallMode::Agent))
    );
}

#[tokio::test]
async fn a_filtered_tool_is_neither_listed_nor_callable() {
    let seen = Arc::new(Seen::default());
    let executor = executor(&seen);
    assert!(executor.offers("notes.add"));
    assert!(!executor.offers("admin.reset"));
    let call = ModelToolCall::new("call_9", "admin.reset", Map::new());
    let result = executor
        .call_tool(call, model_context("s"), CancellationToken::new())
        .await;
    let error = result.error.clone().expect("an error result");
    assert_eq!(
        error.code,
        codes::TOOL_NOT_ALLOWED,
        "the tool exists but is excluded"
    );
    assert_eq!(
        error.message,
        "Tool \"admin.reset\" is not offered by this executor"
    );
    assert_eq!(result.tool_call_id, Some("call_9".into()));
    // A name the filter excludes and the registry lacks is not found.
    let missing = ModelToolCall::new("call_10", "admin.missing", Map::new());
    let result = executor
        .call_tool(missing, model_context("s"), CancellationToken::new())
        .await;
    assert_eq!(result.error_code(), Some(codes::TOOL_NOT_FOUND));
    // A name the filter passes goes to the registry, which does not know it either.
    let unknown = ModelToolCall::new("call_11", "notes.missing", Map::new());
    let result = executor
        .call_tool(unknown, model_context("s"), CancellationToken::new())
        .await;
    assert_eq!(result.error_code(), Some(codes::TOOL_NOT_FOUND));
    assert!(seen.names().is_empty(), "no handler ran");

    // Filters add up.
    let narrower = executor.clone().only(|name| name != "notes.slow");
    let listed: Vec<String> = narrower
        .list_tools()
        .await
        .into_iter()
        .map(|tool| tool.name)
        .collect();
    assert_eq!(listed, ["notes.add"]);
}

#[tokio::test]
async fn cancellation_reaches_the_handler() {
    let seen = Arc::new(Seen::default());
    let executor = executor(&seen);
    let cancel = CancellationToken::new();
    let call = ModelToolCall::new("call_s", "notes.slow", Map::new());
    let running = executor.call_tool(call, model_context("s"), cancel.clone());
    let canceller = async {
        seen.slow_started.notified().await;
        cancel.cancel();
        seen.slow_cancelled.notified().await;
    };
    let (result, ()) = tokio::time::timeout(WAIT, async { tokio::join!(running, canceller) })
        .await
        .expect("the handler saw the cancellation and the call ended");
    assert_eq!(result.error_code(), Some(codes::TOOL_CANCELLED));
}

#[tokio::test]
async fn per_call_options_apply_and_the_loops_context_wins() {
    let seen = Arc::new(Seen::default());
    // A template: a tiny output budget, and a context that the loop's replaces.
    let template = ToolCallOptions::default()
        .with_max_output_bytes(4)
        .with_context(ToolCallContext::new(
            ToolCallSource::Local,
            ToolCallMode::Direct,
        ));
    let executor = RegistryExecutor::new(registry(&seen)).with_call_options(template);
    let result = executor
        .call_tool(add_call("c1"), model_context("s"), CancellationToken::new())
        .await;
    assert_eq!(result.error_code(), Some(codes::TOOL_OUTPUT_LIMIT_EXCEEDED));
    let (_, _, seen_context) = seen.last();
    assert_eq!(seen_context.source, Some(ToolCallSource::Model));

    // Computed per call: a timeout for the slow tool only.
    let executor = RegistryExecutor::new(registry(&seen)).with_call_options_fn(|call| {
        if call.name == "notes.slow" {
            ToolCallOptions::default().with_timeout_ms(20)
        } else {
            ToolCallOptions::default()
        }
    });
    let slow = ModelToolCall::new("c2", "notes.slow", Map::new());
    let result = tokio::time::timeout(
        WAIT,
        executor.call_tool(slow, model_context("s"), CancellationToken::new()),
    )
    .await
    .unwrap();
    assert_eq!(result.error_code(), Some(codes::TOOL_TIMEOUT));
    let result = executor
        .call_tool(add_call("c3"), model_context("s"), CancellationToken::new())
        .await;
    assert_eq!(result.structured_content, Some(json!({"sum": 5})));
}

/// The provider-facing name of a listed tool.
async fn provider_name(executor: &RegistryExecutor, canonical: &str) -> String {
    let tools = executor.list_tools().await;
    OpenAiToolNames::new(&tools)
        .provider_name(canonical)
        .expect("a listed tool")
        .to_owned()
}

#[tokio::test]
async fn through_the_loop_only_offered_tools_are_sent_and_run() {
    let seen = Arc::new(Seen::default());
    let executor = executor(&seen);
    let add = provider_name(&executor, "notes.add").await;
    let fake = FakeOpenRouter::start(vec![
        Reply::calls(&[
            ("call_1", &add, r#"{"a":20,"b":22}"#),
            ("call_2", "admin_reset", "{}"),
        ]),
        Reply::text("42"),
    ])
    .await;
    let request = RunRequest::new("add").with_session_id("session-loop");
    let done = fake
        .client()
        .run(&executor, request, RunOptions::default())
        .await
        .unwrap();
    assert_eq!(done.text, "42");
    assert_eq!(done.trace.tool_names, ["notes.add"]);
    assert_eq!(seen.names(), ["notes.add"], "the excluded tool never ran");

    let sent: Vec<String> = fake.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(sent.len(), 2, "only the offered tools are sent: {sent:?}");
    assert!(sent.iter().all(|name| !name.contains("admin")));

    let (_, id, context) = seen.last();
    assert_eq!(id.as_deref(), Some("call_1"));
    assert_eq!(context.session_id.as_deref(), Some("session-loop"));
    assert_eq!(
        (context.source, context.mode),
        (Some(ToolCallSource::Model), Some(ToolCallMode::Agent))
    );
    assert_eq!(
        context.metadata,
        Some(metadata(json!({"runId": "run-1", "agentRun": true})))
    );
    let messages = &done.trace.messages;
    assert_eq!(messages[1], ChatMessage::tool("call_1", r#"{"sum":42}"#));
    let refused: Value = serde_json::from_str(match &messages[2] {
        ChatMessage::Tool { content, .. } => content,
        other => panic!("a tool message, not {other:?}"),
    })
    .unwrap();
    assert_eq!(refused["code"], codes::TOOL_NOT_FOUND);
}

#[tokio::test]
async fn through_the_loop_cancelling_the_run_reaches_the_handler() {
    let seen = Arc::new(Seen::default());
    let executor = executor(&seen);
    let slow = provider_name(&executor, "notes.slow").await;
    let fake = FakeOpenRouter::start(vec![
        Reply::calls(&[("call_1", &slow, "{}")]),
        Reply::text("never requested"),
    ])
    .await;
    let cancel = CancellationToken::new();
    let client = fake.client();
    let run = client.run(
        &executor,
        RunRequest::new("wait"),
        RunOptions::with_cancel(cancel.clone()),
    );
    let canceller = async {
        seen.slow_started.notified().await;
        cancel.cancel();
        seen.slow_cancelled.notified().await;
    };
    let (result, ()) = tokio::time::timeout(WAIT, async { tokio::join!(run, canceller) })
        .await
        .expect("the run ended and the handler saw the cancellation");
    assert_eq!(result.unwrap_err().error.code, OPENROUTER_CANCELLED);
    assert_eq!(fake.request_count(), 1);
}
