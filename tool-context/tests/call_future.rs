//! The call future: small (it is moved on every await that nests it), lazy (nothing starts
//! before its first poll), and an unobserved call, which moves the request's parts into the
//! handler instead of copying them, answers exactly as an observed one.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use common::{Recorder, request};
use serde_json::{Value, json};
use tool_context::{
    AllowAll, BoxError, PolicyDecision, PolicyRequest, Tool, ToolCallOptions, ToolInvocation,
    ToolPolicy, ToolRegistry, TraceId,
};
use tool_protocol::{ToolCallError, ToolCallEventType, ToolDefinition, codes};

/// What the handler saw: its arguments, trace id and tool call id.
type Seen = Arc<Mutex<Vec<(Value, TraceId, Option<String>)>>>;

fn echo(seen: &Seen) -> Tool {
    let seen = seen.clone();
    Tool::new(
        ToolDefinition::new("echo", "Echoes.", json!({"type": "object"})),
        move |arguments: Value, call: ToolInvocation| {
            let seen = seen.clone();
            async move {
                let id = call.tool_call_id.as_ref().map(ToString::to_string);
                seen.lock()
                    .unwrap()
                    .push((arguments.clone(), call.trace_id, id));
                if arguments.get("wait_ms").is_some() {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Ok::<_, ToolCallError>(json!({"echo": arguments}))
            }
        },
    )
}

#[test]
fn the_call_future_stays_small() {
    let registry = ToolRegistry::builder()
        .tools([echo(&Seen::default())])
        .policy(AllowAll)
        .build()
        .unwrap();
    let call = registry.call_tool(request("echo", json!({})), ToolCallOptions::default());
    let size = std::mem::size_of_val(&call);
    // 4,008 bytes before the entry points stopped wrapping the pipeline in async layers, and
    // 1,512 before the run's state was boxed: the caller moves a pointer and a tag.
    assert!(size <= 32, "the call future is {size} bytes");
}

#[tokio::test(start_paused = true)]
async fn the_deadline_starts_at_the_first_poll_not_at_creation() {
    let registry = ToolRegistry::builder()
        .tools([echo(&Seen::default())])
        .policy(AllowAll)
        .build()
        .unwrap();
    let options = ToolCallOptions::default().with_timeout_ms(50);
    let call = registry.call_tool(request("echo", json!({"wait_ms": 10})), options);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let result = call.await;
    assert!(!result.is_error(), "{result:?}");
}

#[tokio::test]
async fn observed_and_unobserved_calls_give_the_handler_and_the_caller_the_same() {
    let sent = json!({"path": "a.txt", "n": 3});
    let mut answers = Vec::new();
    for observed in [false, true] {
        let seen = Seen::default();
        let recorder = Recorder::default();
        let builder = ToolRegistry::builder()
            .tools([echo(&seen)])
            .policy(AllowAll);
        let builder = if observed {
            builder.observer(recorder.clone())
        } else {
            builder
        };
        let registry = builder.build().unwrap();
        let result = registry
            .call_tool(
                request("echo", sent.clone()).with_id("call_7"),
                ToolCallOptions::default(),
            )
            .await;
        assert!(!result.is_error(), "{result:?}");
        assert_eq!(result.tool_call_id.as_ref().unwrap().to_string(), "call_7");
        let (arguments, trace_id, id) = seen.lock().unwrap()[0].clone();
        assert_eq!(arguments, sent);
        assert_eq!(id.as_deref(), Some("call_7"));
        if observed {
            let events = recorder.events();
            let completed = events.last().unwrap();
            assert_eq!(completed.event_type, ToolCallEventType::Completed);
            assert_eq!(completed.trace_id, trace_id, "the handler's trace id");
            assert_eq!(
                Value::Object(completed.request.arguments.clone().unwrap()),
                sent,
                "the event carries the arguments the handler took"
            );
        }
        answers.push(result.structured_content);
    }
    assert_eq!(answers[0], answers[1]);
}

/// Decides without waiting by panicking.
struct PanicsNow;

#[async_trait]
impl ToolPolicy for PanicsNow {
    async fn decide(&self, _request: PolicyRequest<'_>) -> Result<PolicyDecision, BoxError> {
        Ok(PolicyDecision::Allow)
    }

    fn decide_now(&self, _request: &PolicyRequest<'_>) -> Option<Result<PolicyDecision, BoxError>> {
        panic!("a policy bug");
    }
}

#[tokio::test]
async fn a_policy_that_panics_deciding_now_fails_the_call_as_policy_failed() {
    let seen = Seen::default();
    let registry = ToolRegistry::builder()
        .tools([echo(&seen)])
        .policy(PanicsNow)
        .build()
        .unwrap();
    let result = registry
        .call_tool(request("echo", json!({})), ToolCallOptions::default())
        .await;
    let error = result.error.expect("a failure");
    assert_eq!(error.code, codes::TOOL_POLICY_FAILED);
    assert_eq!(error.message, "Tool policy panicked.");
    assert!(seen.lock().unwrap().is_empty(), "the handler never ran");
}
