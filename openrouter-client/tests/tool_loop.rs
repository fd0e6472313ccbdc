//! The tool loop against the fake server: parallel calls, names, budgets, argument checks,
//! result serialization, the repeated-failure guard, sessions and cancellation. Every test
//! asserts the exact number of HTTP requests and tool executions.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use openrouter_tool_loop::codes::*;
use openrouter_tool_loop::{
    ChatMessage, DataPolicy, MAX_TOOL_CALLS, MAX_TOOL_TURNS, OpenRouterClient, RunEvent,
    RunOptions, RunRequest, ToolCallStatus,
};
use serde_json::{Value, json};
use support::{FakeOpenRouter, FakeTools, Reply, definitions, provider_name};
use tokio_util::sync::CancellationToken;
use tool_protocol::{ToolCallMode, ToolCallSource};

const PROMPT_END: Duration = Duration::from_secs(10);

fn add_call(id: &str, a: i64) -> (String, String, String) {
    (
        id.to_owned(),
        provider_name("math.add"),
        json!({"a": a, "b": 1}).to_string(),
    )
}

fn calls(list: &[(String, String, String)]) -> Reply {
    let borrowed: Vec<(&str, &str, &str)> = list
        .iter()
        .map(|(i, n, a)| (i.as_str(), n.as_str(), a.as_str()))
        .collect();
    Reply::calls(&borrowed)
}

fn messages_of(body: &Value) -> Vec<ChatMessage> {
    serde_json::from_value(body["messages"].clone()).unwrap()
}

#[tokio::test]
async fn parallel_tool_calls_run_in_order_and_return_to_the_model() {
    let read = provider_name("workspace.readFile");
    let add = provider_name("math.add");
    let fake = FakeOpenRouter::start(vec![
        Reply::calls(&[
            ("call_1", &add, r#"{"a":2,"b":3}"#),
            ("call_2", &read, r#"{"path":"index.html"}"#),
        ]),
        Reply::text("  The sum is 5.  "),
    ])
    .await;
    let tools = FakeTools::default();
    let live = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&live);
    let options =
        RunOptions::default().on_event(move |event| sink.lock().unwrap().push(event.clone()));
    let request = RunRequest::new("Add 2 and 3, then read index.html").with_system("Be brief.");
    let done = fake.client().run(&tools, request, options).await.unwrap();

    assert_eq!(done.text, "The sum is 5.");
    assert_eq!(fake.request_count(), 2);
    assert_eq!(
        tools.names(),
        ["math.add", "workspace.readFile"],
        "canonical names reach the executor"
    );
    assert_eq!(done.trace.tool_names, ["math.add", "workspace.readFile"]);
    assert_eq!(done.trace.turns, 2);

    let tool_messages = [
        ChatMessage::tool("call_1", r#"{"sum":5.0}"#),
        ChatMessage::tool("call_2", r#"{"path":"index.html","text":"<h1>hi</h1>"}"#),
    ];
    let assistant = serde_json::from_value::<ChatMessage>(json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": add, "arguments": "{\"a\":2,\"b\":3}"}},
        {"id": "call_2", "type": "function", "function": {"name": read, "arguments": "{\"path\":\"index.html\"}"}}
    ]}))
    .unwrap();
    let final_message = ChatMessage::Assistant {
        content: Some("  The sum is 5.  ".into()),
        tool_calls: vec![],
    };
    let expected: Vec<ChatMessage> = [assistant.clone()]
        .into_iter()
        .chain(tool_messages.clone())
        .chain([final_message])
        .collect();
    assert_eq!(done.trace.messages, expected);

    let second = &fake.requests()[1].body;
    let mut sent = vec![
        ChatMessage::system("Be brief."),
        ChatMessage::user("Add 2 and 3, then read index.html"),
        assistant,
    ];
    sent.extend(tool_messages);
    assert_eq!(messages_of(second), sent);

    let contexts: Vec<_> = tools
        .calls
        .lock()
        .unwrap()
        .iter()
        .map(|(call, context)| (call.id.clone(), context.clone()))
        .collect();
    for (id, context) in &contexts {
        assert!(id.is_some());
        assert_eq!(context.source, Some(ToolCallSource::Model));
        assert_eq!(context.mode, Some(ToolCallMode::Agent));
        assert_eq!(
            context.session_id.as_deref(),
            Some(done.trace.session_id.as_str())
        );
    }
    assert_eq!(
        *live.lock().unwrap(),
        done.trace.transcript,
        "the callback saw every event live"
    );
    let kinds: Vec<&str> = done
        .trace
        .transcript
        .iter()
        .map(|event| match event {
            RunEvent::RunStarted { .. } => "start",
            RunEvent::ToolsListed { .. } => "list",
            RunEvent::RequestSent { .. } => "request",
            RunEvent::RetryScheduled { .. } => "retry",
            RunEvent::ResponseReceived { .. } => "response",
            RunEvent::ToolCallStarted { .. } => "call",
            RunEvent::ToolCallFinished { .. } => "result",
            RunEvent::RunCompleted { .. } => "done",
            RunEvent::RunFailed { .. } => "failed",
            RunEvent::TextDelta { .. } => "text",
            RunEvent::ToolCallStreamStarted { .. } => "announced",
            RunEvent::ToolCallArgumentsDelta { .. } => "arguments",
            RunEvent::ToolCallReady { .. } => "ready",
            RunEvent::Usage { .. } => "usage",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "start",
            "list",
            "request",
            "announced",
            "arguments",
            "announced",
            "arguments",
            "response",
            "ready",
            "ready",
            "call",
            "result",
            "call",
            "result",
            "request",
            "text",
            "response",
            "done"
        ]
    );
}

#[tokio::test]
async fn every_run_has_its_own_session_unless_one_is_given() {
    let add = add_call("c1", 1);
    let fake = FakeOpenRouter::start(vec![
        calls(std::slice::from_ref(&add)),
        Reply::text("a"),
        calls(&[add]),
        Reply::text("b"),
    ])
    .await;
    let tools = FakeTools::default();
    let client = fake.client();
    let first = client
        .run(&tools, RunRequest::new("x"), RunOptions::default())
        .await
        .unwrap();
    let second = client
        .run(
            &tools,
            RunRequest::new("x").with_session_id("session-42"),
            RunOptions::default(),
        )
        .await
        .unwrap();
    assert_ne!(first.trace.session_id, "session-42");
    assert_eq!(second.trace.session_id, "session-42");
    let sessions: Vec<_> = tools
        .calls
        .lock()
        .unwrap()
        .iter()
        .map(|(_, context)| context.session_id.clone().unwrap())
        .collect();
    assert_eq!(
        sessions,
        [first.trace.session_id.clone(), "session-42".to_owned()]
    );
    assert_eq!(fake.request_count(), 4);
}

#[tokio::test]
async fn the_request_payload_matches_the_golden_shape() {
    let fake = FakeOpenRouter::start(vec![Reply::text("ok"), Reply::text("ok")]).await;
    let tools = FakeTools::default();
    fake.client()
        .run(&tools, RunRequest::new("hi"), RunOptions::default())
        .await
        .unwrap();
    let zdr = OpenRouterClient::new(
        fake.config()
            .with_data_policy(DataPolicy::Zdr)
            .with_model("meta/llama:free"),
    )
    .unwrap();
    zdr.run(&tools, RunRequest::new("hi"), RunOptions::default())
        .await
        .unwrap();
    let requests = fake.requests();
    let expected_tools = support::exported_tools(&definitions());
    let sent_names: Vec<&str> = expected_tools
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        sent_names,
        [
            "math_add",
            "workspace_readFile",
            "fail_always",
            "write_unconfirmed",
            "bad_result",
            "slow_wait",
            "panic_now"
        ]
    );
    assert_eq!(
        requests[0].body,
        json!({
            "model": "openai/gpt-4o-mini",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": expected_tools,
            "tool_choice": "auto",
            "max_tokens": 1200
        })
    );
    assert_eq!(
        requests[1].body["provider"],
        json!({"data_collection": "deny", "zdr": true})
    );
    assert_eq!(requests[1].body["model"], "meta/llama:free");
    assert_eq!(tools.executions(), 0);
}

#[tokio::test]
async fn history_is_sent_before_the_prompt() {
    let fake = FakeOpenRouter::start(vec![
        calls(&[add_call("c1", 1)]),
        Reply::text("first"),
        Reply::text("second"),
    ])
    .await;
    let tools = FakeTools::default();
    let client = fake.client();
    let first = client
        .run(&tools, RunRequest::new("one"), RunOptions::default())
        .await
        .unwrap();
    let mut history = vec![ChatMessage::user("one")];
    history.extend(first.trace.messages.clone());
    client
        .run(
            &tools,
            RunRequest::new("two").with_history(history.clone()),
            RunOptions::default(),
        )
        .await
        .unwrap();
    let mut expected = history;
    expected.push(ChatMessage::user("two"));
    assert_eq!(messages_of(&fake.requests()[2].body), expected);
    assert_eq!(fake.request_count(), 3);
    assert_eq!(tools.executions(), 1);
}

#[tokio::test]
async fn non_object_or_malformed_arguments_reject_the_response_before_anything_runs() {
    for bad in ["[1,2]", "null", "\"text\"", "{\"a\":", ""] {
        let fake = FakeOpenRouter::start(vec![calls(&[
            add_call("c1", 1),
            ("c2".into(), provider_name("math.add"), bad.into()),
        ])])
        .await;
        let tools = FakeTools::default();
        let failure = fake
            .client()
            .run(&tools, RunRequest::new("x"), RunOptions::default())
            .await
            .unwrap_err();
        assert_eq!(
            (failure.error.code, failure.error.retryable),
            (OPENROUTER_INVALID_TOOL_CALL, true),
            "{bad}"
        );
        assert_eq!(
            tools.executions(),
            0,
            "the valid first call did not run either ({bad})"
        );
        assert_eq!(fake.request_count(), 1);
        assert!(failure.trace.messages.is_empty());
    }
}

#[tokio::test]
async fn twelve_calls_run_and_a_thirteenth_is_rejected_before_any_runs() {
    let twelve: Vec<_> = (0..12).map(|i| add_call(&format!("c{i}"), i)).collect();
    let fake = FakeOpenRouter::start(vec![calls(&twelve), Reply::text("done")]).await;
    let tools = FakeTools::default();
    let done = fake
        .client()
        .run(&tools, RunRequest::new("x"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(tools.executions(), MAX_TOOL_CALLS);
    assert_eq!(done.text, "done");

    let thirteen: Vec<_> = (0..13).map(|i| add_call(&format!("c{i}"), i)).collect();
    let fake = FakeOpenRouter::start(vec![calls(&thirteen)]).await;
    let tools = FakeTools::default();
    let failure = fake
        .client()
        .run(&tools, RunRequest::new("x"), RunOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        (failure.error.code, failure.error.retryable),
        (OPENROUTER_TOOL_CALL_LIMIT, false)
    );
    assert_eq!(tools.executions(), 0);
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn the_call_budget_spans_turns() {
    let batch = |turn: usize, n: usize| {
        calls(
            &(0..n)
                .map(|i| add_call(&format!("t{turn}c{i}"), i as i64))
                .collect::<Vec<_>>(),
        )
    };
    let fake = FakeOpenRouter::start(vec![batch(1, 7), batch(2, 6)]).await;
    let tools = FakeTools::default();
    let failure = fake
        .client()
        .run(&tools, RunRequest::new("x"), RunOptions::default())
        .await
        .unwrap_err();
    assert_eq!(failure.error.code, OPENROUTER_TOOL_CALL_LIMIT);
    assert_eq!(
        tools.executions(),
        7,
        "the second response ran none of its six calls"
    );
    assert_eq!(fake.request_count(), 2);

    let fake = FakeOpenRouter::start(vec![
        batch(1, 7),
        batch(2, 5),
        Reply::text("exactly twelve"),
    ])
    .await;
    let tools = FakeTools::default();
    let done = fake
        .client()
        .run(&tools, RunRequest::new("x"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(done.text, "exactly twelve");
    assert_eq!(tools.executions(), 12);
}

#[tokio::test]
async fn five_turns_is_the_limit() {
    let turn = |i: i64| calls(&[add_call(&format!("c{i}"), i)]);
    let fake = FakeOpenRouter::start((0..5).map(turn).collect()).await;
    let tools = FakeTools::default();
    let failure = fake
        .client()
        .run(&tools, RunRequest::new("x"), RunOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        (failure.error.code, failure.error.retryable),
        (OPENROUTER_TOOL_LOOP_LIMIT, false)
    );
    assert_eq!(failure.error.message, "Tool loop reached the 5-turn limit.");
    assert_eq!(fake.request_count(), MAX_TOOL_TURNS as usize);
    assert_eq!(tools.executions(), 5);
    assert_eq!(failure.trace.turns, 5);

    let mut script: Vec<Reply> = (0..4).map(turn).collect();
    script.push(Reply::text(""));
    let fake = FakeOpenRouter::start(script).await;
    let tools = FakeTools::default();
    let done = fake
        .client()
        .run(&tools, RunRequest::new("x"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(done.text, "OpenRouter completed 4 tool call(s).");
    assert_eq!(fake.request_count(), 5);
    assert_eq!(tools.executions(), 4);
}

#[tokio::test]
async fn unknown_names_and_failures_are_tool_errors_the_model_can_read() {
    let fake = FakeOpenRouter::start(vec![
        Reply::calls(&[
            ("c1", "no_such_tool", "{}"),
            ("c2", &provider_name("fail.always"), r#"{"path":"x"}"#),
            ("c3", &provider_name("bad.result"), "{}"),
        ]),
        Reply::text("sorry"),
    ])
    .await;
    let tools = FakeTools::default();
    let done = fake
        .client()
        .run(&tools, RunRequest::new("x"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(done.text, "sorry");
    assert_eq!(
        tools.names(),
        ["fail.always", "bad.result"],
        "the unknown name never reached the executor"
    );
    assert_eq!(fake.request_count(), 2);
    let sent = messages_of(&fake.requests()[1].body);
    assert_eq!(
        &sent[2..],
        [
            ChatMessage::tool(
                "c1",
                r#"{"status":"error","code":"TOOL_NOT_FOUND","message":"Tool \"no_such_tool\" not found in registry"}"#
            ),
            ChatMessage::tool(
                "c2",
                r#"{"status":"error","code":"WORKSPACE_FILE_NOT_FOUND","message":"Workspace file not found: x","retryable":false,"details":{"path":"x"}}"#
            ),
            ChatMessage::tool(
                "c3",
                r#"{"status":"error","code":"TOOL_RESULT_VALIDATION_FAILED","message":"Tool result did not match the canonical result contract."}"#
            ),
        ]
    );
    let finished: Vec<_> = done
        .trace
        .transcript
        .iter()
        .filter_map(|event| match event {
            RunEvent::ToolCallFinished {
                name, status, code, ..
            } => Some((name.clone(), *status, code.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        [
            (
                "no_such_tool".to_owned(),
                ToolCallStatus::Failed,
                Some("TOOL_NOT_FOUND".to_owned())
            ),
            (
                "fail.always".to_owned(),
                ToolCallStatus::Failed,
                Some("WORKSPACE_FILE_NOT_FOUND".to_owned())
            ),
            (
                "bad.result".to_owned(),
                ToolCallStatus::Failed,
                Some("TOOL_RESULT_VALIDATION_FAILED".to_owned())
            ),
        ]
    );
}

#[tokio::test]
async fn the_same_failing_call_three_times_ends_the_run() {
    let fail = |id: &str, path: &str| {
        (
            id.to_owned(),
            provider_name("fail.always"),
            json!({"path": path}).to_string(),
        )
    };
    let fake = FakeOpenRouter::start(vec![
        calls(&[fail("c1", "x"), fail("c2", "y")]),
        calls(&[fail("c3", "x")]),
        calls(&[fail("c4", "x"), add_call("c5", 1)]),
    ])
    .await;
    let tools = FakeTools::default();
    let failure = fake
        .client()
        .run(&tools, RunRequest::new("x"), RunOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        (failure.error.code, failure.error.retryable),
        (OPENROUTER_REPEATED_TOOL_FAILURE, false)
    );
    assert_eq!(
        failure.error.message,
        "Tool \"fail.always\" failed 3 times with the same arguments and error code WORKSPACE_FILE_NOT_FOUND; the run stopped."
    );
    assert_eq!(
        tools.names(),
        ["fail.always", "fail.always", "fail.always", "fail.always"],
        "math.add after the third failure never ran"
    );
    assert_eq!(fake.request_count(), 3);
    let last_two: Vec<_> = failure
        .trace
        .messages
        .iter()
        .rev()
        .take(2)
        .rev()
        .cloned()
        .collect();
    assert_eq!(
        last_two[1],
        ChatMessage::tool(
            "c5",
            r#"{"status":"error","code":"OPENROUTER_REPEATED_TOOL_FAILURE","message":"Tool call was not executed because the run stopped.","retryable":false}"#
        ),
        "the skipped call is still answered"
    );
}

#[tokio::test]
async fn a_committed_result_reaches_the_model_as_applied_and_is_no_failure() {
    let write = |id: &str| {
        (
            id.to_owned(),
            provider_name("write.unconfirmed"),
            r#"{"path":"x"}"#.to_owned(),
        )
    };
    let fake = FakeOpenRouter::start(vec![
        calls(&[write("c1"), write("c2"), write("c3")]),
        Reply::text("applied"),
    ])
    .await;
    let tools = FakeTools::default();
    let done = fake
        .client()
        .run(&tools, RunRequest::new("x"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(
        done.text, "applied",
        "the repeated-failure guard did not fire"
    );
    assert_eq!(tools.executions(), 3);
    let sent = messages_of(&fake.requests()[1].body);
    assert_eq!(
        sent[2],
        ChatMessage::tool(
            "c1",
            r#"{"status":"applied","previewConfirmed":false,"code":"PREVIEW_ACK_TIMEOUT","message":"The change was applied as revision 4; only the preview confirmation failed.","details":{"revision":4,"timeoutMs":2500,"committed":true}}"#
        ),
        "applied, not an error, and no retryable flag inviting a repeat"
    );
    let finished: Vec<_> = done
        .trace
        .transcript
        .iter()
        .filter_map(|event| match event {
            RunEvent::ToolCallFinished {
                status,
                code,
                retryable,
                ..
            } => Some((*status, code.clone(), *retryable)),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished[0],
        (
            ToolCallStatus::Completed,
            Some("PREVIEW_ACK_TIMEOUT".to_owned()),
            None
        )
    );
}

#[tokio::test]
async fn two_identical_failures_do_not_stop_the_run() {
    let fail = |id: &str| {
        (
            id.to_owned(),
            provider_name("fail.always"),
            r#"{"path":"x"}"#.to_owned(),
        )
    };
    let fake = FakeOpenRouter::start(vec![
        calls(&[fail("c1"), fail("c2")]),
        Reply::text("gave up"),
    ])
    .await;
    let tools = FakeTools::default();
    let done = fake
        .client()
        .run(&tools, RunRequest::new("x"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(done.text, "gave up");
    assert_eq!(tools.executions(), 2);
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn cancellation_during_a_tool_call_stops_the_run() {
    let slow = ("c1".to_owned(), provider_name("slow.wait"), "{}".to_owned());
    let fake = FakeOpenRouter::start(vec![
        calls(&[slow, add_call("c2", 1)]),
        Reply::text("never requested"),
    ])
    .await;
    let tools = FakeTools::default();
    let cancel = CancellationToken::new();
    let client = fake.client();
    let run = client.run(
        &tools,
        RunRequest::new("x"),
        RunOptions::with_cancel(cancel.clone()),
    );
    let canceller = async {
        tools.slow_started.notified().await;
        cancel.cancel();
    };
    let (result, ()) = tokio::time::timeout(PROMPT_END, async { tokio::join!(run, canceller) })
        .await
        .unwrap();
    let failure = result.unwrap_err();
    assert_eq!(failure.error.code, OPENROUTER_CANCELLED);
    assert_eq!(
        tools.names(),
        ["slow.wait"],
        "the second call never started"
    );
    assert_eq!(fake.request_count(), 1);
    assert_eq!(
        &failure.trace.messages[1..],
        [
            ChatMessage::tool(
                "c1",
                r#"{"status":"error","code":"TOOL_CANCELLED","message":"Tool call cancelled.","retryable":true}"#
            ),
            ChatMessage::tool(
                "c2",
                r#"{"status":"error","code":"OPENROUTER_CANCELLED","message":"Tool call was not executed because the run stopped.","retryable":true}"#
            ),
        ]
    );
    assert!(failure.trace.transcript.iter().any(|e| matches!(
        e,
        RunEvent::ToolCallFinished {
            status: ToolCallStatus::Cancelled,
            ..
        }
    )));
}

#[tokio::test]
async fn an_already_cancelled_run_sends_nothing() {
    let fake = FakeOpenRouter::start(vec![Reply::text("never")]).await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let tools = FakeTools::default();
    let failure = fake
        .client()
        .run(
            &tools,
            RunRequest::new("x"),
            RunOptions::with_cancel(cancel),
        )
        .await
        .unwrap_err();
    assert_eq!(failure.error.code, OPENROUTER_CANCELLED);
    assert_eq!(fake.request_count(), 0);
    assert_eq!(tools.executions(), 0);
}

#[tokio::test]
async fn a_panicking_tool_becomes_a_tool_error_and_the_run_goes_on() {
    let fake = FakeOpenRouter::start(vec![
        Reply::calls(&[("c1", &provider_name("panic.now"), "{}")]),
        Reply::text("recovered"),
    ])
    .await;
    let tools = FakeTools::default();
    let done = fake
        .client()
        .run(&tools, RunRequest::new("x"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(done.text, "recovered");
    assert_eq!(tools.executions(), 1);
    assert_eq!(fake.request_count(), 2);
    assert_eq!(
        messages_of(&fake.requests()[1].body)[2],
        ChatMessage::tool(
            "c1",
            r#"{"status":"error","code":"TOOL_EXECUTION_FAILED","message":"Tool execution failed unexpectedly.","retryable":false}"#
        )
    );
}

/// Two canonical names that sanitize to the same provider form.
struct CollidingTools {
    called: std::sync::Mutex<Vec<String>>,
}

#[openrouter_tool_loop::async_trait]
impl openrouter_tool_loop::ToolExecutor for CollidingTools {
    async fn list_tools(&self) -> Vec<tool_protocol::ToolDefinition> {
        ["a.b", "a_b"]
            .iter()
            .map(|name| {
                tool_protocol::ToolDefinition::new(*name, "collides", json!({"type": "object"}))
            })
            .collect()
    }

    async fn call_tool(
        &self,
        call: tool_protocol::ModelToolCall,
        _: tool_protocol::ToolCallContext,
        _: CancellationToken,
    ) -> tool_protocol::ToolCallResult {
        self.called.lock().unwrap().push(call.name.clone());
        tool_protocol::ToolCallResult::success(json!({"tool": call.name}))
    }
}

#[tokio::test]
async fn colliding_names_map_back_to_their_own_tools() {
    let tools = CollidingTools {
        called: std::sync::Mutex::new(Vec::new()),
    };
    let names = tool_protocol::export::OpenAiToolNames::new(
        &openrouter_tool_loop::ToolExecutor::list_tools(&tools).await,
    );
    let dotted = names.provider_name("a.b").unwrap().to_owned();
    let underscored = names.provider_name("a_b").unwrap().to_owned();
    assert_ne!(dotted, underscored);
    let fake = FakeOpenRouter::start(vec![
        Reply::calls(&[("c1", &underscored, "{}"), ("c2", &dotted, "{}")]),
        Reply::text("ok"),
    ])
    .await;
    let done = fake
        .client()
        .run(&tools, RunRequest::new("x"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(*tools.called.lock().unwrap(), ["a_b", "a.b"]);
    assert_eq!(done.trace.tool_names, ["a_b", "a.b"]);
    let sent: Vec<String> = fake.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(sent, [dotted, underscored]);
    assert_eq!(fake.request_count(), 2);
}
