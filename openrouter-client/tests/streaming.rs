//! Streamed responses (`stream: true`) against scripted fakes of every delta style, and the
//! calls of one response run concurrently.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use openrouter_tool_loop::codes::{
    OPENROUTER_CANCELLED, OPENROUTER_INVALID_RESPONSE, OPENROUTER_INVALID_TOOL_CALL,
    OPENROUTER_PROVIDER_ERROR, OPENROUTER_TIMEOUT,
};
use openrouter_tool_loop::{
    ChatMessage, OpenRouterClient, OpenRouterConfig, RunCompletion, RunEvent, RunFailure,
    RunOptions, RunRequest, TokenUsage, ToolExecutor,
};
use serde_json::{Value, json};
use support::{FakeOpenRouter, FakeTools, Reply, provider_name};
use tokio_util::sync::CancellationToken;
use tool_protocol::export::OpenAiToolNames;
use tool_protocol::idempotency::tool_call_fingerprint;
use tool_protocol::{
    ModelToolCall, ToolAnnotations, ToolCallContext, ToolCallResult, ToolDefinition,
};

fn text(content: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]})
}

fn call_start(index: usize, id: &str, name: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}}]})
}

fn call_arguments(index: usize, fragment: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}}]})
}

fn finish(reason: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

fn usage(input: u64, output: u64) -> Value {
    json!({"choices": [], "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output}})
}

fn streaming(fake: &FakeOpenRouter) -> OpenRouterConfig {
    fake.config().with_streaming(true)
}

type Outcome = (Result<RunCompletion, RunFailure>, Vec<RunEvent>);

async fn run_with(
    config: OpenRouterConfig,
    executor: &dyn ToolExecutor,
    cancel: CancellationToken,
    on_event: impl Fn(&RunEvent) + Send + Sync + 'static,
) -> Outcome {
    let client = OpenRouterClient::new(config).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let options = RunOptions::with_cancel(cancel).on_event(move |event| {
        sink.lock().unwrap().push(event.clone());
        on_event(event);
    });
    let outcome = client
        .run(executor, RunRequest::new("Add 2 and 3"), options)
        .await;
    let events = seen.lock().unwrap().clone();
    (outcome, events)
}

async fn run(config: OpenRouterConfig, tools: &FakeTools) -> Outcome {
    run_with(config, tools, CancellationToken::new(), |_| {}).await
}

fn texts(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            RunEvent::TextDelta { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn position(events: &[RunEvent], pick: impl Fn(&RunEvent) -> bool) -> usize {
    events.iter().position(pick).expect("the event was emitted")
}

#[tokio::test]
async fn openai_deltas_become_text_tool_calls_and_usage_before_anything_runs() {
    let add = provider_name("math.add");
    let read = provider_name("workspace.readFile");
    let fake = FakeOpenRouter::start(vec![
        Reply::sse(&[
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
            text("Let me "),
            text("add."),
            call_start(0, "c1", &add),
            call_arguments(0, "{\"a\": 2"),
            call_arguments(0, ", \"b\": 3}"),
            // Ollama style: the whole call in one chunk.
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "c2", "type": "function", "function": {"name": read, "arguments": "{\"path\":\"index.html\"}"}}]}}]}),
            finish("tool_calls"),
            usage(120, 30),
        ]),
        Reply::sse(&[text("The sum is 5."), finish("stop")]),
    ])
    .await;
    let tools = FakeTools::default();
    let (outcome, events) = run(streaming(&fake), &tools).await;
    let done = outcome.unwrap();
    assert_eq!(done.text, "The sum is 5.");
    assert_eq!(texts(&events), ["Let me ", "add.", "The sum is 5."]);
    assert_eq!(tools.names(), ["math.add", "workspace.readFile"]);
    let body = &fake.requests()[0].body;
    assert_eq!(
        (&body["stream"], &body["stream_options"]),
        (&json!(true), &json!({"include_usage": true}))
    );
    let started: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::ToolCallStreamStarted {
                index,
                tool_call_id,
                name,
                ..
            } => Some((*index, tool_call_id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        [(0, "c1", "math.add"), (1, "c2", "workspace.readFile")]
    );
    let deltas: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::ToolCallArgumentsDelta { index, delta, .. } => Some((*index, delta.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        deltas,
        [
            (0, "{\"a\": 2"),
            (0, ", \"b\": 3}"),
            (1, "{\"path\":\"index.html\"}")
        ]
    );
    let ready: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::ToolCallReady {
                name,
                arguments,
                digest,
                issues,
                ..
            } => Some((
                name.clone(),
                arguments.clone(),
                digest.clone(),
                issues.len(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(ready.len(), 2);
    let (name, arguments, digest, issues) = &ready[0];
    assert_eq!(Value::Object(arguments.clone()), json!({"a": 2, "b": 3}));
    assert_eq!(
        *digest,
        tool_call_fingerprint(name, &Value::Object(arguments.clone()))
    );
    assert_eq!(*issues, 0);
    let last_ready = events
        .iter()
        .rposition(|event| matches!(event, RunEvent::ToolCallReady { .. }))
        .unwrap();
    let first_run = position(&events, |event| {
        matches!(event, RunEvent::ToolCallStarted { .. })
    });
    assert!(
        last_ready < first_run,
        "every call is ready before any runs"
    );
    assert!(events.contains(&RunEvent::Usage {
        turn: 1,
        usage: TokenUsage::new(Some(120), Some(30), Some(150))
    }));
    // The assistant message the next turn sees is the assembled one.
    assert_eq!(
        serde_json::to_value(&done.trace.messages[0]).unwrap()["tool_calls"][0]["function"]["arguments"],
        "{\"a\": 2, \"b\": 3}"
    );
}

#[tokio::test]
async fn llama_cpp_token_fragments_over_crlf_split_anywhere_assemble_the_same_call() {
    let add = provider_name("math.add");
    let arguments = r#"{"a": 20, "b": 22}"#;
    let mut payloads = vec![call_start(0, "call_x", &add)];
    payloads.extend(arguments.chars().map(|c| call_arguments(0, &c.to_string())));
    payloads.push(finish("tool_calls"));
    let body: String = payloads
        .iter()
        .map(|payload| format!("data: {payload}\r\n\r\n"))
        .chain([
            ": keep-alive\r\n\r\n".to_owned(),
            "data: [DONE]\r\n\r\n".to_owned(),
        ])
        .collect();
    // Split the bytes at odd places: mid-line, mid-CRLF, mid-JSON.
    let chunks: Vec<String> = body
        .as_bytes()
        .chunks(7)
        .map(|chunk| String::from_utf8(chunk.to_vec()).unwrap())
        .collect();
    let fake = FakeOpenRouter::start(vec![
        Reply::chunks(chunks, Duration::ZERO, false),
        Reply::sse(&[text("42"), finish("stop")]),
    ])
    .await;
    let tools = FakeTools::default();
    let (outcome, events) = run(streaming(&fake), &tools).await;
    assert_eq!(outcome.unwrap().text, "42");
    let calls = tools.calls.lock().unwrap();
    assert_eq!(
        calls[0].0.arguments.clone().map(Value::Object),
        Some(json!({"a": 20, "b": 22}))
    );
    let partials: Vec<Value> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::ToolCallArgumentsDelta {
                partial: Some(partial),
                ..
            } => Some(Value::Object(partial.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        partials,
        [json!({"a": 20}), json!({"a": 20, "b": 22})],
        "a partial as each top-level field completes"
    );
}

#[tokio::test]
async fn a_call_without_index_or_repeated_ids_is_placed_by_its_id() {
    let add = provider_name("math.add");
    let whole = |id: &str, a: u32| json!({"choices": [{"delta": {"role": "assistant", "tool_calls": [{"id": id, "type": "function", "function": {"name": add, "arguments": format!("{{\"a\": {a}, \"b\": 1}}")}}]}}]});
    let fake = FakeOpenRouter::start(vec![
        Reply::sse(&[whole("o1", 1), whole("o2", 2), finish("tool_calls")]),
        Reply::sse(&[text("done"), finish("stop")]),
    ])
    .await;
    let tools = FakeTools::default();
    let (outcome, _) = run(streaming(&fake), &tools).await;
    assert_eq!(outcome.unwrap().text, "done");
    let calls = tools.calls.lock().unwrap();
    let ids: Vec<_> = calls.iter().map(|(call, _)| call.id.clone()).collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(
        serde_json::to_value(&ids).unwrap(),
        json!(["o1", "o2"]),
        "Ollama's whole calls without index"
    );
}

async fn expect_failure(script: Vec<Reply>, code: &str, says: &str) -> (FakeOpenRouter, FakeTools) {
    let fake = FakeOpenRouter::start(script).await;
    let tools = FakeTools::default();
    let (outcome, _) = run(
        streaming(&fake).with_request_timeout(Duration::from_millis(300)),
        &tools,
    )
    .await;
    let error = outcome.unwrap_err().error;
    assert_eq!(error.code, code, "{}", error.message);
    assert!(error.message.contains(says), "{}", error.message);
    assert_eq!(tools.executions(), 0, "nothing executed");
    (fake, tools)
}

#[tokio::test]
async fn untrustworthy_streams_are_coded_errors_and_nothing_runs() {
    let add = provider_name("math.add");
    let cases = [
        (
            vec![
                call_start(0, "c1", &add),
                call_start(1, "c2", &add),
                call_arguments(0, "{}"),
            ],
            OPENROUTER_INVALID_RESPONSE,
            "interleaved",
        ),
        (
            vec![
                call_start(0, "c1", &add),
                json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c9", "function": {"arguments": "{"}}]}}]}),
            ],
            OPENROUTER_INVALID_RESPONSE,
            "changed the id",
        ),
        (
            vec![call_start(0, "c1", &add), call_start(1, "c1", &add)],
            OPENROUTER_INVALID_RESPONSE,
            "duplicate tool call id",
        ),
        (
            vec![call_start(2, "c1", &add)],
            OPENROUTER_INVALID_RESPONSE,
            "index 2 before index 0",
        ),
        (
            vec![call_start(0, "c1", &add), call_arguments(0, "[1]")],
            OPENROUTER_INVALID_TOOL_CALL,
            "non-object JSON",
        ),
    ];
    for (payloads, code, says) in cases {
        // Each stream is sent twice: a retry must not hide it (no tool call announced in some).
        let replies = vec![
            Reply::sse(&payloads),
            Reply::sse(&payloads),
            Reply::sse(&payloads),
        ];
        expect_failure(replies, code, says).await;
    }
    let not_json = Reply::chunks(
        vec![
            "data: {\"choices\": [\n\n".into(),
            "data: [DONE]\n\n".into(),
        ],
        Duration::ZERO,
        false,
    );
    expect_failure(
        vec![not_json.clone(), not_json.clone(), not_json],
        OPENROUTER_INVALID_RESPONSE,
        "not a JSON object",
    )
    .await;
}

#[tokio::test]
async fn arguments_that_can_never_parse_stop_the_stream_at_once() {
    let add = provider_name("math.add");
    let chunks = vec![
        format!("data: {}\n\n", call_start(0, "c1", &add)),
        format!("data: {}\n\n", call_arguments(0, "{\"a\": tx")),
    ];
    // The body then stays open for a minute: only an early refusal ends the run quickly.
    let started = std::time::Instant::now();
    let (fake, _) = expect_failure(
        vec![Reply::chunks(chunks, Duration::ZERO, true)],
        OPENROUTER_INVALID_TOOL_CALL,
        "invalid JSON arguments",
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn a_stream_cut_short_is_retried_only_before_a_tool_call_was_announced() {
    let add = provider_name("math.add");
    // Text only, then the body ends without [DONE] or a finish reason: retried.
    let cut_text = Reply::chunks(
        vec![format!("data: {}\n\n", text("Half an ans"))],
        Duration::ZERO,
        false,
    );
    let fake = FakeOpenRouter::start(vec![
        cut_text,
        Reply::sse(&[text("Whole."), finish("stop")]),
    ])
    .await;
    let tools = FakeTools::default();
    let (outcome, events) = run(streaming(&fake), &tools).await;
    assert_eq!(outcome.unwrap().text, "Whole.");
    let retry = position(&events, |event| {
        matches!(event, RunEvent::RetryScheduled { .. })
    });
    let first_text = position(&events, |event| matches!(event, RunEvent::TextDelta { .. }));
    assert!(
        first_text < retry,
        "the retry voids the text streamed before it"
    );
    // A tool call was announced: the cut stream is a final error, not replayed.
    let cut_call = Reply::chunks(
        vec![
            format!("data: {}\n\n", call_start(0, "c1", &add)),
            format!("data: {}\n\n", call_arguments(0, "{\"a\": 1, \"b\": 2}")),
        ],
        Duration::ZERO,
        false,
    );
    let (fake, _) = expect_failure(
        vec![cut_call, Reply::sse(&[text("never"), finish("stop")])],
        OPENROUTER_INVALID_RESPONSE,
        "not retried",
    )
    .await;
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn an_error_event_after_200_is_a_provider_failure() {
    let add = provider_name("math.add");
    let error = json!({"error": {"code": 502, "message": "Upstream went away"}});
    // Before any tool call: retried like a 502, then the coded failure.
    expect_failure(
        vec![
            Reply::sse(&[text("Hel"), error.clone()]),
            Reply::sse(&[text("Hel"), error.clone()]),
            Reply::sse(&[text("Hel"), error.clone()]),
        ],
        OPENROUTER_PROVIDER_ERROR,
        "Upstream went away",
    )
    .await;
    // After a tool call was announced: one request, no replay.
    let (fake, _) = expect_failure(
        vec![
            Reply::sse(&[call_start(0, "c1", &add), error.clone()]),
            Reply::sse(&[text("never"), finish("stop")]),
        ],
        OPENROUTER_PROVIDER_ERROR,
        "Upstream went away",
    )
    .await;
    assert_eq!(fake.request_count(), 1);
    // llama.cpp's `error:` field.
    let llama = Reply::chunks(
        vec!["error: {\"code\": 500, \"message\": \"context overflow\"}\n\n".into()],
        Duration::ZERO,
        false,
    );
    expect_failure(
        vec![llama.clone(), llama.clone(), llama],
        OPENROUTER_PROVIDER_ERROR,
        "context overflow",
    )
    .await;
}

#[tokio::test]
async fn silence_trips_the_idle_timeout_and_keep_alives_the_overall_cap() {
    let silent = || {
        Reply::chunks(
            vec![format!("data: {}\n\n", text("a"))],
            Duration::ZERO,
            true,
        )
    };
    expect_failure(
        vec![silent(), silent(), silent()],
        OPENROUTER_TIMEOUT,
        "sent nothing for 300ms mid-stream",
    )
    .await;
    // Keep-alive comments every 20 ms forever: never idle, stopped by the overall cap.
    let keep_alive: Vec<String> =
        std::iter::repeat_n(": OPENROUTER PROCESSING\n\n".to_owned(), 10_000).collect();
    let fake = FakeOpenRouter::start(vec![Reply::chunks(
        keep_alive,
        Duration::from_millis(20),
        false,
    )])
    .await;
    let tools = FakeTools::default();
    let config = streaming(&fake).with_stream_timeout(Duration::from_millis(400));
    let (outcome, _) = run(config, &tools).await;
    let error = outcome.unwrap_err().error;
    assert_eq!(error.code, OPENROUTER_TIMEOUT);
    assert!(error.message.contains("400ms overall"), "{}", error.message);
}

#[tokio::test]
async fn a_fifty_megabyte_stream_stops_at_the_response_limit() {
    let chunk = format!("data: {}\n\n", text(&"x".repeat(64 * 1024)));
    let count = 50 * 1024 * 1024 / chunk.len();
    let fake = FakeOpenRouter::start(vec![Reply::chunks(
        std::iter::repeat_n(chunk, count).collect(),
        Duration::ZERO,
        false,
    )])
    .await;
    let tools = FakeTools::default();
    let (outcome, events) = run(streaming(&fake), &tools).await;
    let error = outcome.unwrap_err().error;
    assert_eq!(error.code, OPENROUTER_INVALID_RESPONSE);
    assert!(error.message.contains("byte limit"), "{}", error.message);
    let streamed: usize = texts(&events).iter().map(String::len).sum();
    assert!(streamed <= openrouter_tool_loop::MAX_RESPONSE_BODY_BYTES);
}

#[tokio::test]
async fn cancel_mid_stream_aborts_the_request_at_once() {
    let fake = FakeOpenRouter::start(vec![Reply::chunks(
        vec![format!("data: {}\n\n", text("Once upon"))],
        Duration::ZERO,
        true,
    )])
    .await;
    let tools = FakeTools::default();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let started = std::time::Instant::now();
    let config = streaming(&fake).with_request_timeout(Duration::from_secs(30));
    let (outcome, events) = run_with(config, &tools, cancel, move |event| {
        if matches!(event, RunEvent::TextDelta { .. }) {
            trigger.cancel();
        }
    })
    .await;
    assert_eq!(outcome.unwrap_err().error.code, OPENROUTER_CANCELLED);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(texts(&events), ["Once upon"]);
}

#[tokio::test]
async fn arguments_that_fail_the_schema_are_ready_with_issues_and_never_run() {
    let add = provider_name("math.add");
    let fake = FakeOpenRouter::start(vec![
        Reply::sse(&[
            call_start(0, "c1", &add),
            call_arguments(0, "{\"a\": \"two\"}"),
            finish("tool_calls"),
        ]),
        Reply::sse(&[text("Sorry."), finish("stop")]),
    ])
    .await;
    let tools = FakeTools::default();
    let (outcome, events) = run(streaming(&fake), &tools).await;
    let done = outcome.unwrap();
    assert_eq!(tools.executions(), 0);
    let issues = events
        .iter()
        .find_map(|event| match event {
            RunEvent::ToolCallReady { issues, .. } => Some(issues.clone()),
            _ => None,
        })
        .unwrap();
    assert!(!issues.is_empty());
    let ChatMessage::Tool { content, .. } = &done.trace.messages[1] else {
        panic!("{:?}", done.trace.messages)
    };
    let message: Value = serde_json::from_str(content).unwrap();
    assert_eq!(message["code"], "TOOL_VALIDATION_FAILED", "{message}");
}

/// Tools that record how many calls run at once: `gate.read` (read-only) and `gate.write`.
#[derive(Default)]
struct Gate {
    running: AtomicUsize,
    most: AtomicUsize,
    order: Mutex<Vec<String>>,
}

#[async_trait]
impl ToolExecutor for Gate {
    async fn list_tools(&self) -> Vec<ToolDefinition> {
        gate_definitions()
    }

    async fn call_tool(
        &self,
        call: ModelToolCall,
        _: ToolCallContext,
        _: CancellationToken,
    ) -> ToolCallResult {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        let n = call
            .arguments
            .as_ref()
            .and_then(|a| a["n"].as_u64())
            .unwrap_or(0);
        self.order.lock().unwrap().push(format!("start {n}"));
        tokio::time::sleep(Duration::from_millis(60)).await;
        self.order.lock().unwrap().push(format!("end {n}"));
        self.running.fetch_sub(1, Ordering::SeqCst);
        ToolCallResult::success(json!({"n": n}))
    }
}

fn gate_definitions() -> Vec<ToolDefinition> {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let read_only = ToolAnnotations {
        read_only_hint: Some(true),
        ..ToolAnnotations::default()
    };
    let mut read = ToolDefinition::new("gate.read", "Reads.", schema.clone());
    read.annotations = Some(read_only);
    vec![read, ToolDefinition::new("gate.write", "Writes.", schema)]
}

fn gate_calls(calls: &[(&str, u32)]) -> Reply {
    let names = OpenAiToolNames::new(&gate_definitions());
    let mut payloads = Vec::new();
    for (index, (tool, n)) in calls.iter().enumerate() {
        let name = names.provider_name(tool).unwrap();
        payloads.push(call_start(index, &format!("g{n}"), name));
        payloads.push(call_arguments(index, &format!("{{\"n\": {n}}}")));
    }
    payloads.push(finish("tool_calls"));
    Reply::sse(&payloads)
}

#[tokio::test]
async fn read_only_calls_run_together_up_to_the_cap_and_writes_run_alone_in_order() {
    let script = || {
        vec![
            gate_calls(&[
                ("gate.read", 1),
                ("gate.read", 2),
                ("gate.read", 3),
                ("gate.write", 4),
                ("gate.read", 5),
            ]),
            Reply::sse(&[text("ok"), finish("stop")]),
        ]
    };
    let fake = FakeOpenRouter::start(script()).await;
    let gate = Gate::default();
    let config = streaming(&fake).with_max_parallel_tool_calls(2);
    let (outcome, _) = run_with(config, &gate, CancellationToken::new(), |_| {}).await;
    let done = outcome.unwrap();
    assert_eq!(gate.most.load(Ordering::SeqCst), 2, "the cap holds");
    let order = gate.order.lock().unwrap().clone();
    let at = |entry: &str| order.iter().position(|e| e == entry).unwrap();
    assert!(
        at("start 2") < at("end 1"),
        "reads 1 and 2 overlap: {order:?}"
    );
    assert!(
        at("end 3") < at("start 4"),
        "the write waits for the reads: {order:?}"
    );
    assert!(at("end 4") < at("start 5"), "and runs alone: {order:?}");
    let answered: Vec<_> = done
        .trace
        .messages
        .iter()
        .filter_map(|message| match message {
            ChatMessage::Tool { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(answered, ["g1", "g2", "g3", "g4", "g5"], "provider order");
    // With a cap of one, nothing overlaps.
    let fake = FakeOpenRouter::start(script()).await;
    let gate = Gate::default();
    let config = streaming(&fake).with_max_parallel_tool_calls(1);
    run_with(config, &gate, CancellationToken::new(), |_| {})
        .await
        .0
        .unwrap();
    assert_eq!(gate.most.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn cancel_stops_every_concurrent_call() {
    let fake = FakeOpenRouter::start(vec![gate_calls(&[("gate.read", 1), ("gate.read", 2)])]).await;
    let gate = Gate::default();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let (outcome, events) = run_with(streaming(&fake), &gate, cancel, move |event| {
        if matches!(event, RunEvent::ToolCallStarted { .. }) {
            trigger.cancel();
        }
    })
    .await;
    let failure = outcome.unwrap_err();
    assert_eq!(failure.error.code, OPENROUTER_CANCELLED);
    let cancelled = events
        .iter()
        .filter(|event| {
            matches!(
                event,
                RunEvent::ToolCallFinished {
                    status: openrouter_tool_loop::ToolCallStatus::Cancelled,
                    ..
                }
            )
        })
        .count();
    assert_eq!(cancelled, 2, "{events:?}");
    let answered = failure
        .trace
        .messages
        .iter()
        .filter(|message| matches!(message, ChatMessage::Tool { .. }))
        .count();
    assert_eq!(answered, 2, "every call still answered");
}

#[tokio::test]
async fn a_stream_over_the_call_budget_stops_at_the_call_that_breaks_it() {
    let add = provider_name("math.add");
    let chunks: Vec<String> = (0..13)
        .flat_map(|index| {
            [
                call_start(index, &format!("c{index}"), &add),
                call_arguments(index, "{\"a\": 1, \"b\": 1}"),
            ]
        })
        .map(|payload| format!("data: {payload}\n\n"))
        .collect();
    // The body stays open after the 13th call: only an early stop ends the run quickly.
    let started = std::time::Instant::now();
    let (fake, _) = expect_failure(
        vec![Reply::chunks(chunks, Duration::ZERO, true)],
        openrouter_tool_loop::codes::OPENROUTER_TOOL_CALL_LIMIT,
        "asked for 13 call(s) after 0 completed; none of them ran",
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(fake.request_count(), 1);
}
