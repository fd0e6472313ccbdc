//! Transport behaviour against the fake server: status classification, retries, timeouts,
//! malformed responses and cancellation. Every test asserts the exact number of HTTP
//! requests and tool executions.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use openrouter_tool_loop::codes::*;
use openrouter_tool_loop::{
    ApiKey, OpenRouterClient, OpenRouterError, RetryPolicy, RetryReason, RunEvent, RunFailure,
    RunOptions, RunRequest,
};
use serde_json::json;
use support::{FakeOpenRouter, FakeTools, Reply, provider_name};
use tokio_util::sync::CancellationToken;

/// Guards tests that must end promptly (cancellation); a bound, not a measurement.
const PROMPT_END: Duration = Duration::from_secs(10);

async fn run_failing(
    fake: &FakeOpenRouter,
    client: &OpenRouterClient,
    tools: &FakeTools,
) -> RunFailure {
    let failure = client
        .run(tools, RunRequest::new("hi"), RunOptions::default())
        .await
        .expect_err("the run should fail");
    assert_eq!(fake.unused_replies(), 0, "every scripted reply is consumed");
    failure
}

fn retries(failure: &RunFailure) -> Vec<(u32, u64, RetryReason, &'static str)> {
    failure
        .trace
        .transcript
        .iter()
        .filter_map(|event| match event {
            RunEvent::RetryScheduled {
                attempt,
                delay_ms,
                reason,
                code,
                max_attempts,
                ..
            } => {
                assert_eq!(*max_attempts, 2);
                Some((*attempt, *delay_ms, *reason, *code))
            }
            _ => None,
        })
        .collect()
}

fn assert_error(error: &OpenRouterError, code: &str, retryable: bool, status: Option<u16>) {
    assert_eq!(
        (error.code, error.retryable, error.status),
        (code, retryable, status),
        "{error}"
    );
}

#[tokio::test]
async fn a_429_then_success_retries_once() {
    let fake = FakeOpenRouter::start(vec![Reply::rate_limited(None), Reply::text("Hello.")]).await;
    let tools = FakeTools::default();
    let done = fake
        .client()
        .run(&tools, RunRequest::new("hi"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(done.text, "Hello.");
    assert_eq!(fake.request_count(), 2);
    assert_eq!(tools.executions(), 0);
    let retry_events: Vec<_> = done
        .trace
        .transcript
        .iter()
        .filter(|e| matches!(e, RunEvent::RetryScheduled { .. }))
        .collect();
    assert_eq!(
        retry_events,
        [&RunEvent::RetryScheduled {
            turn: 1,
            attempt: 1,
            max_attempts: 2,
            delay_ms: 1,
            reason: RetryReason::Provider,
            code: OPENROUTER_RATE_LIMITED
        }]
    );
}

#[tokio::test]
async fn three_429s_exhaust_the_two_retries() {
    let fake = FakeOpenRouter::start(vec![
        Reply::rate_limited(None),
        Reply::rate_limited(None),
        Reply::rate_limited(None),
    ])
    .await;
    let tools = FakeTools::default();
    let failure = run_failing(&fake, &fake.client(), &tools).await;
    assert_error(&failure.error, OPENROUTER_RATE_LIMITED, true, Some(429));
    assert_eq!(failure.error.message, "Rate limit exceeded");
    assert_eq!(
        failure.error.to_string(),
        "[OPENROUTER_RATE_LIMITED] Rate limit exceeded"
    );
    assert_eq!(fake.request_count(), 3);
    assert_eq!(tools.executions(), 0);
    assert_eq!(
        retries(&failure),
        [
            (1, 1, RetryReason::Provider, OPENROUTER_RATE_LIMITED),
            (2, 2, RetryReason::Provider, OPENROUTER_RATE_LIMITED)
        ]
    );
    assert!(matches!(
        failure.trace.transcript.last(),
        Some(RunEvent::RunFailed {
            code: OPENROUTER_RATE_LIMITED,
            retryable: true,
            ..
        })
    ));
}

#[tokio::test]
async fn server_errors_are_retried_then_reported_with_a_body_excerpt() {
    let html = "<html>\n<body>Bad   gateway</body>\n</html>";
    let fake = FakeOpenRouter::start(vec![
        Reply::status(500, json!({})),
        Reply::status(503, json!({"error": {"message": "Upstream overloaded"}})),
        Reply::raw(502, "text/html", html),
    ])
    .await;
    let tools = FakeTools::default();
    let failure = run_failing(&fake, &fake.client(), &tools).await;
    assert_error(&failure.error, OPENROUTER_PROVIDER_ERROR, true, Some(502));
    assert_eq!(
        failure.error.message,
        "Request failed with a non-JSON response (HTTP 502): <html> <body>Bad gateway</body> </html>"
    );
    assert_eq!(fake.request_count(), 3);
    assert_eq!(tools.executions(), 0);
}

#[tokio::test]
async fn a_single_500_then_success_completes() {
    let fake = FakeOpenRouter::start(vec![Reply::status(500, json!({})), Reply::text("ok")]).await;
    let tools = FakeTools::default();
    let done = fake
        .client()
        .run(&tools, RunRequest::new("hi"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(done.text, "ok");
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let cases = [
        (
            401,
            OPENROUTER_AUTHENTICATION_FAILED,
            "No auth credentials found",
        ),
        (402, OPENROUTER_PAYMENT_REQUIRED, "Insufficient credits"),
        (
            403,
            OPENROUTER_ACCESS_DENIED,
            "Model blocked by data policy",
        ),
        (400, OPENROUTER_CONFIGURATION_ERROR, "Invalid model"),
        (404, OPENROUTER_CONFIGURATION_ERROR, "Not found"),
    ];
    for (status, code, message) in cases {
        let fake = FakeOpenRouter::start(vec![Reply::status(
            status,
            json!({"error": {"code": status, "message": message}}),
        )])
        .await;
        let tools = FakeTools::default();
        let failure = run_failing(&fake, &fake.client(), &tools).await;
        assert_error(&failure.error, code, false, Some(status));
        assert_eq!(failure.error.message, message);
        assert_eq!(fake.request_count(), 1, "{status}");
        assert_eq!(tools.executions(), 0);
        assert!(retries(&failure).is_empty());
    }
}

#[tokio::test]
async fn the_key_and_attribution_headers_are_sent() {
    let fake = FakeOpenRouter::start(vec![Reply::text("ok")]).await;
    let client = OpenRouterClient::new(
        fake.config()
            .with_attribution("https://example.test/app", "Tool Loop Tests"),
    )
    .unwrap();
    client
        .run(
            &FakeTools::default(),
            RunRequest::new("hi"),
            RunOptions::default(),
        )
        .await
        .unwrap();
    let headers = &fake.requests()[0].headers;
    assert_eq!(
        headers["authorization"],
        format!("Bearer {}", support::TEST_KEY)
    );
    assert_eq!(headers["http-referer"], "https://example.test/app");
    assert_eq!(headers["x-title"], "Tool Loop Tests");
    assert_eq!(headers["content-type"], "application/json");
}

#[tokio::test]
async fn a_missing_key_fails_before_any_request() {
    let fake = FakeOpenRouter::start(vec![]).await;
    let mut config = fake.config();
    config.api_key = ApiKey::new("  ");
    let tools = FakeTools::default();
    let failure = OpenRouterClient::new(config)
        .unwrap()
        .run(&tools, RunRequest::new("hi"), RunOptions::default())
        .await
        .unwrap_err();
    assert_error(&failure.error, OPENROUTER_CONFIGURATION_ERROR, false, None);
    assert_eq!(failure.error.message, "API key is not configured.");
    assert_eq!(fake.request_count(), 0);
    let bad_endpoint = OpenRouterClient::new(fake.config().with_endpoint("not a url")).unwrap();
    let failure = bad_endpoint
        .run(&tools, RunRequest::new("hi"), RunOptions::default())
        .await
        .unwrap_err();
    assert_eq!(failure.error.code, OPENROUTER_CONFIGURATION_ERROR);
    assert_eq!(fake.request_count(), 0);
}

#[tokio::test]
async fn html_instead_of_json_is_an_invalid_response() {
    let fake = FakeOpenRouter::start(vec![Reply::raw(
        200,
        "text/html",
        "<!doctype html><title>Sign in</title>",
    )])
    .await;
    let tools = FakeTools::default();
    let failure = run_failing(&fake, &fake.client(), &tools).await;
    assert_error(&failure.error, OPENROUTER_INVALID_RESPONSE, false, None);
    assert_eq!(
        failure.error.message,
        "Endpoint returned an invalid JSON response (HTTP 200). Check the chat-completions endpoint."
    );
    assert_eq!(fake.request_count(), 1);
    assert_eq!(tools.executions(), 0);
}

#[tokio::test]
async fn a_truncated_json_body_is_an_invalid_response() {
    let body = r#"{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"math.add","#;
    let fake = FakeOpenRouter::start(vec![Reply::raw(200, "application/json", body)]).await;
    let tools = FakeTools::default();
    let failure = run_failing(&fake, &fake.client(), &tools).await;
    assert_error(&failure.error, OPENROUTER_INVALID_RESPONSE, false, None);
    assert_eq!(fake.request_count(), 1);
    assert_eq!(tools.executions(), 0);
}

#[tokio::test]
async fn a_body_over_the_size_limit_is_an_invalid_response_and_one_at_it_is_read() {
    let reply = Reply::text("x");
    let Reply::Json(_, body) = &reply else {
        unreachable!()
    };
    let exact = body.to_string().len();
    let fake = FakeOpenRouter::start(vec![reply.clone(), reply]).await;
    let tools = FakeTools::default();
    let mut config = fake.config();
    config.max_response_bytes = exact;
    let done = OpenRouterClient::new(config.clone())
        .unwrap()
        .run(&tools, RunRequest::new("hi"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(done.text, "x");
    config.max_response_bytes = exact - 1;
    let failure = OpenRouterClient::new(config)
        .unwrap()
        .run(&tools, RunRequest::new("hi"), RunOptions::default())
        .await
        .unwrap_err();
    assert_error(&failure.error, OPENROUTER_INVALID_RESPONSE, false, None);
    assert_eq!(
        failure.error.message,
        format!("Endpoint response exceeded the {}-byte limit.", exact - 1)
    );
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn malformed_tool_calls_are_invalid_responses_and_nothing_runs() {
    let add = provider_name("math.add");
    let function = json!({"name": add, "arguments": "{\"a\":1,\"b\":2}"});
    let message = |tool_calls: serde_json::Value| json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": tool_calls}}]});
    let cases = [
        (
            message(
                json!([{"id": "c1", "type": "function", "function": function}, {"id": "c1", "type": "function", "function": function}]),
            ),
            "Provider returned duplicate tool call id \"c1\".",
        ),
        (
            message(
                json!([{"id": "c1", "type": "function", "function": function}, {"type": "function", "function": function}]),
            ),
            "Provider returned a tool call without a valid id at index 1.",
        ),
        (
            json!({"choices": [{"message": {"role": "user", "content": "hi"}}]}),
            "Provider returned a message without the assistant role.",
        ),
        (
            json!({"choices": [{"message": {"role": "assistant", "content": ["x"]}}]}),
            "Provider returned non-string assistant content.",
        ),
    ];
    for (body, expected) in cases {
        let fake = FakeOpenRouter::start(vec![Reply::status(200, body)]).await;
        let tools = FakeTools::default();
        let failure = run_failing(&fake, &fake.client(), &tools).await;
        assert_error(&failure.error, OPENROUTER_INVALID_RESPONSE, false, None);
        assert_eq!(failure.error.message, expected);
        assert_eq!(fake.request_count(), 1);
        assert_eq!(tools.executions(), 0);
        assert!(failure.trace.messages.is_empty());
    }
}

#[tokio::test]
async fn a_response_without_a_message_is_retryable_no_assistant_message() {
    let fake = FakeOpenRouter::start(vec![Reply::status(200, json!({"choices": []}))]).await;
    let tools = FakeTools::default();
    let failure = run_failing(&fake, &fake.client(), &tools).await;
    assert_error(&failure.error, OPENROUTER_NO_ASSISTANT_MESSAGE, true, None);
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn an_ok_response_with_an_error_body_is_classified_by_its_code() {
    let in_body = |code: u16, message: &str| {
        Reply::status(200, json!({"error": {"code": code, "message": message}}))
    };
    let fake = FakeOpenRouter::start(vec![in_body(402, "Insufficient credits")]).await;
    let tools = FakeTools::default();
    let failure = run_failing(&fake, &fake.client(), &tools).await;
    assert_error(
        &failure.error,
        OPENROUTER_PAYMENT_REQUIRED,
        false,
        Some(402),
    );
    assert_eq!(fake.request_count(), 1);

    let fake = FakeOpenRouter::start(vec![
        in_body(429, "slow down"),
        in_body(502, "upstream"),
        in_body(429, "still slow"),
    ])
    .await;
    let failure = run_failing(&fake, &fake.client(), &tools).await;
    assert_error(&failure.error, OPENROUTER_RATE_LIMITED, true, Some(429));
    assert_eq!(failure.error.message, "still slow");
    assert_eq!(fake.request_count(), 3);
    assert_eq!(tools.executions(), 0);

    let fake =
        FakeOpenRouter::start(vec![in_body(503, "overloaded"), Reply::text("recovered")]).await;
    let done = fake
        .client()
        .run(&tools, RunRequest::new("hi"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(done.text, "recovered");
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn hangs_past_the_timeout_are_retried_then_reported_as_timeouts() {
    let fake = FakeOpenRouter::start(vec![Reply::Hang, Reply::Hang, Reply::Hang]).await;
    let client = OpenRouterClient::new(
        fake.config()
            .with_request_timeout(Duration::from_millis(150)),
    )
    .unwrap();
    let tools = FakeTools::default();
    let failure = run_failing(&fake, &client, &tools).await;
    assert_error(&failure.error, OPENROUTER_TIMEOUT, true, None);
    assert_eq!(failure.error.message, "Request timed out after 150ms.");
    assert!(!failure.error.is_cancelled());
    assert_eq!(fake.request_count(), 3);
    assert_eq!(tools.executions(), 0);
    assert_eq!(
        retries(&failure),
        [
            (1, 1, RetryReason::Timeout, OPENROUTER_TIMEOUT),
            (2, 2, RetryReason::Timeout, OPENROUTER_TIMEOUT)
        ]
    );
}

#[tokio::test]
async fn a_hang_then_an_answer_completes() {
    let fake = FakeOpenRouter::start(vec![Reply::Hang, Reply::text("late but fine")]).await;
    let client = OpenRouterClient::new(
        fake.config()
            .with_request_timeout(Duration::from_millis(1_000)),
    )
    .unwrap();
    let done = client
        .run(
            &FakeTools::default(),
            RunRequest::new("hi"),
            RunOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(done.text, "late but fine");
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn network_failures_are_retried_then_reported() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = format!(
        "http://{}/api/v1/chat/completions",
        listener.local_addr().unwrap()
    );
    drop(listener);
    let fake = FakeOpenRouter::start(vec![]).await;
    let client = OpenRouterClient::new(fake.config().with_endpoint(closed)).unwrap();
    let tools = FakeTools::default();
    let failure = client
        .run(&tools, RunRequest::new("hi"), RunOptions::default())
        .await
        .unwrap_err();
    assert_error(&failure.error, OPENROUTER_NETWORK_ERROR, true, None);
    assert!(
        failure
            .error
            .message
            .starts_with("Network request failed: "),
        "{}",
        failure.error.message
    );
    let sent = failure
        .trace
        .transcript
        .iter()
        .filter(|e| matches!(e, RunEvent::RequestSent { .. }))
        .count();
    assert_eq!(sent, 3);
    assert_eq!(
        retries(&failure).iter().map(|r| r.2).collect::<Vec<_>>(),
        [RetryReason::Network, RetryReason::Network]
    );
}

#[tokio::test]
async fn a_body_cut_off_by_the_connection_is_a_retried_network_error() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/v1/chat/completions",
        listener.local_addr().unwrap()
    );
    let accepted = Arc::new(Mutex::new(0));
    let counter = Arc::clone(&accepted);
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            *counter.lock().unwrap() += 1;
            let mut buffer = vec![0u8; 64 * 1024];
            let _ = socket.read(&mut buffer).await;
            let _ = socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{\"choices\":[").await;
            drop(socket);
        }
    });
    let fake = FakeOpenRouter::start(vec![]).await;
    let client = OpenRouterClient::new(fake.config().with_endpoint(url)).unwrap();
    let tools = FakeTools::default();
    let failure = client
        .run(&tools, RunRequest::new("hi"), RunOptions::default())
        .await
        .unwrap_err();
    assert_error(&failure.error, OPENROUTER_NETWORK_ERROR, true, None);
    assert_eq!(*accepted.lock().unwrap(), 3);
    assert_eq!(tools.executions(), 0);
}

#[tokio::test]
async fn retry_after_is_honoured_within_the_cap() {
    let fake = FakeOpenRouter::start(vec![
        Reply::rate_limited(Some("0")),
        Reply::rate_limited(Some("30")),
        Reply::text("ok"),
    ])
    .await;
    let slow_backoff = RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_secs(5),
        max_delay: Duration::from_millis(40),
    };
    let client = OpenRouterClient::new(fake.config().with_retry(slow_backoff)).unwrap();
    let done = client
        .run(
            &FakeTools::default(),
            RunRequest::new("hi"),
            RunOptions::default(),
        )
        .await
        .unwrap();
    let delays: Vec<u64> = done
        .trace
        .transcript
        .iter()
        .filter_map(|event| match event {
            RunEvent::RetryScheduled { delay_ms, .. } => Some(*delay_ms),
            _ => None,
        })
        .collect();
    assert_eq!(
        delays,
        [0, 40],
        "Retry-After 0 waits nothing; 30 s is capped"
    );
    assert_eq!(fake.request_count(), 3);
}

#[tokio::test]
async fn cancellation_during_backoff_stops_the_run() {
    let fake =
        FakeOpenRouter::start(vec![Reply::rate_limited(None), Reply::text("never sent")]).await;
    let long_backoff = RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_secs(60),
        max_delay: Duration::from_secs(60),
    };
    let client = OpenRouterClient::new(fake.config().with_retry(long_backoff)).unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let options = RunOptions::with_cancel(cancel).on_event(move |event| {
        if matches!(event, RunEvent::RetryScheduled { .. }) {
            trigger.cancel();
        }
    });
    let tools = FakeTools::default();
    let failure = tokio::time::timeout(
        PROMPT_END,
        client.run(&tools, RunRequest::new("hi"), options),
    )
    .await
    .unwrap()
    .unwrap_err();
    assert_error(&failure.error, OPENROUTER_CANCELLED, true, None);
    assert!(failure.error.is_cancelled());
    assert_eq!(fake.request_count(), 1);
    assert_eq!(tools.executions(), 0);
}

#[tokio::test]
async fn cancellation_aborts_a_hanging_request() {
    let fake = FakeOpenRouter::start(vec![Reply::Hang]).await;
    let client = fake.client();
    let cancel = CancellationToken::new();
    let tools = FakeTools::default();
    let run = client.run(
        &tools,
        RunRequest::new("hi"),
        RunOptions::with_cancel(cancel.clone()),
    );
    let canceller = async {
        fake.hanging.notified().await;
        cancel.cancel();
    };
    let (result, ()) = tokio::time::timeout(PROMPT_END, async { tokio::join!(run, canceller) })
        .await
        .unwrap();
    let failure = result.unwrap_err();
    assert_error(&failure.error, OPENROUTER_CANCELLED, true, None);
    assert_eq!(fake.request_count(), 1);
    assert!(
        retries(&failure).is_empty(),
        "cancellation is never retried nor reported as a timeout"
    );
}
