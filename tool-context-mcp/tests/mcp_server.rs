//! An rmcp client against the adapter over both transports: discovery, calls, error split,
//! approvals (desk, elicitation, unavailable), progress, cancellation and sessions.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{Answer, Client, TRANSPORTS, TestClient, connect, desk, registry};
use rmcp::model::{
    CallToolRequestParams, ClientRequest, ErrorCode, PaginatedRequestParams, Request,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{Map, Value, json};
use tool_context::{ApprovalDecision, ApprovalQueue};
use tool_context_mcp::McpToolServer;
use tool_protocol::codes;

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

async fn call(client: &Client, name: &str, arguments: Value) -> Value {
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(args(arguments));
    serde_json::to_value(client.call_tool(params).await.unwrap()).unwrap()
}

fn error_code(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "{result}");
    result["_meta"]["tool-context/error"]["code"]
        .as_str()
        .unwrap()
}

fn setup() -> (Arc<common::Notes>, McpToolServer) {
    let notes = Arc::new(common::Notes::default());
    let server = McpToolServer::new(registry(&notes)).with_page_size(2);
    (notes, server)
}

#[tokio::test]
async fn tools_list_pages_canonical_definitions_in_2020_12() {
    for transport in TRANSPORTS {
        let (_notes, server) = setup();
        let client = connect(transport, &server, TestClient::new(Answer::Unsupported)).await;
        let mut names = Vec::new();
        let mut cursor = None;
        let mut pages = 0;
        loop {
            let page = client
                .list_tools(Some(
                    PaginatedRequestParams::default().with_cursor(cursor.clone()),
                ))
                .await
                .unwrap();
            pages += 1;
            assert!(page.tools.len() <= 2);
            names.extend(page.tools.iter().map(|tool| tool.name.to_string()));
            for tool in &page.tools {
                assert_eq!(
                    tool.input_schema["$schema"],
                    "https://json-schema.org/draft/2020-12/schema"
                );
                assert!(tool.input_schema.get("definitions").is_none());
            }
            cursor = page.next_cursor;
            if cursor.is_none() {
                break;
            }
        }
        assert_eq!(pages, 3, "{transport:?}");
        assert_eq!(
            names,
            [
                "notes.read",
                "notes.write",
                "notes.delete",
                "notes.slow",
                "session.whoami"
            ]
        );
        let all = client.list_all_tools().await.unwrap();
        let read = all.iter().find(|tool| tool.name == "notes.read").unwrap();
        let read = serde_json::to_value(read).unwrap();
        assert_eq!(read["annotations"]["readOnlyHint"], true);
        assert_eq!(read["description"], "Reads the note.");
        // The output enum is a `$ref` into `$defs`, as 2020-12 names it.
        let output = &read["outputSchema"];
        assert_eq!(
            output["properties"]["kind"]["$ref"], "#/$defs/Kind",
            "{output}"
        );
        assert!(output["$defs"]["Kind"].is_object());
        let delete = all.iter().find(|tool| tool.name == "notes.delete").unwrap();
        assert_eq!(
            delete.annotations.as_ref().unwrap().destructive_hint,
            Some(true)
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_foreign_cursor_is_invalid_params() {
    for transport in TRANSPORTS {
        let (_notes, server) = setup();
        let client = connect(transport, &server, TestClient::new(Answer::Unsupported)).await;
        let error = client
            .list_tools(Some(
                PaginatedRequestParams::default().with_cursor(Some("offset:99".into())),
            ))
            .await
            .unwrap_err();
        let ServiceError::McpError(error) = error else {
            panic!("{error:?}")
        };
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn reads_return_structured_content_matching_the_output_schema() {
    for transport in TRANSPORTS {
        let (notes, server) = setup();
        *notes.text.lock().unwrap() = "hello".into();
        let client = connect(transport, &server, TestClient::new(Answer::Unsupported)).await;
        let result = call(&client, "notes.read", json!({"name": "a"})).await;
        assert_eq!(result["isError"], false);
        assert_eq!(
            result["structuredContent"],
            json!({"name": "a", "text": "hello", "revision": 0, "kind": "plain"})
        );
        assert_eq!(
            result["content"][0]["text"],
            r#"{"name":"a","text":"hello","revision":0,"kind":"plain"}"#
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn unknown_tools_are_json_rpc_invalid_params() {
    for transport in TRANSPORTS {
        let (_notes, server) = setup();
        let client = connect(transport, &server, TestClient::new(Answer::Unsupported)).await;
        let error = client
            .call_tool(CallToolRequestParams::new("notes.nope"))
            .await
            .unwrap_err();
        let ServiceError::McpError(error) = error else {
            panic!("{error:?}")
        };
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{transport:?}");
        assert_eq!(error.data.unwrap()["code"], codes::TOOL_NOT_FOUND);
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn invalid_arguments_are_error_results_with_issues() {
    for transport in TRANSPORTS {
        let (_notes, server) = setup();
        let client = connect(transport, &server, TestClient::new(Answer::Approve)).await;
        let result = call(&client, "notes.write", json!({"name": "", "text": 3})).await;
        assert_eq!(error_code(&result), codes::TOOL_VALIDATION_FAILED);
        assert!(
            result["_meta"]["tool-context/error"]["details"]["issues"]
                .as_array()
                .is_some_and(|issues| !issues.is_empty())
        );
        // Validation runs before approval: nobody was asked.
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn writes_without_any_approver_are_denied_with_a_reason() {
    for transport in TRANSPORTS {
        let (notes, server) = setup();
        let client = connect(transport, &server, TestClient::new(Answer::Unsupported)).await;
        let result = call(
            &client,
            "notes.write",
            json!({"name": "a", "text": "x", "expectedRevision": 0}),
        )
        .await;
        assert_eq!(error_code(&result), codes::TOOL_POLICY_DENIED);
        let error = &result["_meta"]["tool-context/error"];
        assert_eq!(error["retryable"], false);
        assert_eq!(
            error["details"],
            json!({"approvalRoute": "unavailable", "decidedBy": "host"})
        );
        assert!(error["message"].as_str().unwrap().contains("elicitation"));
        assert_eq!(
            notes.text.lock().unwrap().as_str(),
            "",
            "a denied write changed nothing"
        );
        let result = call(&client, "notes.delete", json!({})).await;
        assert_eq!(error_code(&result), codes::TOOL_POLICY_DENIED);
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn elicitation_approves_and_progress_reports_the_wait() {
    for transport in TRANSPORTS {
        let (notes, server) = setup();
        let test_client = TestClient::new(Answer::Approve);
        let client = connect(transport, &server, test_client.clone()).await;
        let result = call(
            &client,
            "notes.write",
            json!({"name": "a", "text": "new", "expectedRevision": 0}),
        )
        .await;
        assert_eq!(result["isError"], false, "{result}");
        assert_eq!(result["structuredContent"], json!({"revision": 1}));
        assert_eq!(notes.text.lock().unwrap().as_str(), "new");
        let asked = test_client.elicitations.lock().unwrap().clone();
        assert_eq!(asked.len(), 1);
        assert!(asked[0].contains("\"notes.write\""), "{}", asked[0]);
        // The confirmation says what changes: short scalars as they are, content as size
        // and digest only.
        assert!(asked[0].contains("name: a"), "{}", asked[0]);
        assert!(
            asked[0].contains("text: 3 bytes, 1 line, sha256 "),
            "{}",
            asked[0]
        );
        assert!(asked[0].contains("expectedRevision: 0"), "{}", asked[0]);
        assert!(
            !asked[0].contains("new"),
            "content is summarized, never shown"
        );
        // A stale write is approved, then fails in the handler with its own code.
        let stale = call(
            &client,
            "notes.write",
            json!({"name": "a", "text": "old", "expectedRevision": 0}),
        )
        .await;
        assert_eq!(error_code(&stale), "NOTES_REVISION_CONFLICT");
        assert_eq!(stale["_meta"]["tool-context/error"]["retryable"], true);
        assert_eq!(
            stale["_meta"]["tool-context/error"]["details"],
            json!({"expectedRevision": 0, "currentRevision": 1})
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        let waiting = |message: &String| {
            message.starts_with("Waiting for approval of \"notes.write\" (elicitation)")
        };
        let progress = test_client.progress.lock().unwrap().clone();
        assert!(progress.iter().any(waiting), "{progress:?}");
        // The note reaches the client before the question does, so it never arrives last,
        // beside the result (a client that drops progress after the response would lose it).
        let when_asked = test_client.progress_when_asked.lock().unwrap().clone();
        assert!(
            when_asked
                .iter()
                .all(|received| received.iter().any(waiting)),
            "{transport:?}: progress received when each question came: {when_asked:?}"
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_declined_elicitation_denies() {
    for transport in TRANSPORTS {
        let (notes, server) = setup();
        *notes.text.lock().unwrap() = "kept".into();
        let client = connect(transport, &server, TestClient::new(Answer::Decline)).await;
        let result = call(&client, "notes.delete", json!({})).await;
        assert_eq!(error_code(&result), codes::TOOL_POLICY_DENIED);
        assert_eq!(
            result["_meta"]["tool-context/error"]["message"],
            "Tool \"notes.delete\" was denied by a person asked for approval"
        );
        assert_eq!(
            result["_meta"]["tool-context/error"]["details"]["decidedBy"],
            "person"
        );
        assert_eq!(
            notes.text.lock().unwrap().as_str(),
            "kept",
            "the declined delete did not run"
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn an_attended_desk_answers_before_elicitation() {
    for transport in TRANSPORTS {
        let notes = Arc::new(common::Notes::default());
        let queue = ApprovalQueue::new();
        let attended = Arc::new(AtomicBool::new(true));
        let server =
            McpToolServer::new(registry(&notes)).with_approval_desk(desk(&queue, &attended));
        let test_client = TestClient::new(Answer::Decline);
        let client = connect(transport, &server, test_client.clone()).await;
        let approver = {
            let queue = queue.clone();
            tokio::spawn(async move {
                let mut updates = queue.subscribe();
                let pending = updates
                    .wait_for(|pending| !pending.is_empty())
                    .await
                    .unwrap()
                    .clone();
                assert_eq!(pending[0].name, "notes.write");
                assert_eq!(pending[0].source.as_str(), "mcp");
                assert!(
                    pending[0]
                        .session_id
                        .as_deref()
                        .unwrap()
                        .starts_with("mcp-")
                );
                queue.resolve(&pending[0].id, ApprovalDecision::Allow)
            })
        };
        let result = call(
            &client,
            "notes.write",
            json!({"name": "a", "text": "desk", "expectedRevision": 0}),
        )
        .await;
        assert!(approver.await.unwrap());
        assert_eq!(result["isError"], false, "{result}");
        assert!(
            test_client.elicitations.lock().unwrap().is_empty(),
            "the desk answered, the client was not asked"
        );
        // Unattended: the client is asked (and declines).
        attended.store(false, Ordering::SeqCst);
        let result = call(
            &client,
            "notes.write",
            json!({"name": "a", "text": "x", "expectedRevision": 1}),
        )
        .await;
        assert_eq!(error_code(&result), codes::TOOL_POLICY_DENIED);
        assert_eq!(test_client.elicitations.lock().unwrap().len(), 1);
        assert!(queue.snapshot().is_empty());
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn notifications_cancelled_cancels_the_running_call() {
    for transport in TRANSPORTS {
        let (notes, server) = setup();
        let client = connect(transport, &server, TestClient::new(Answer::Unsupported)).await;
        let request = ClientRequest::CallToolRequest(Request::new(
            CallToolRequestParams::new("notes.slow").with_arguments(Map::new()),
        ));
        let started = notes.slow_started.notified();
        let handle = client
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .unwrap();
        tokio::time::timeout(Duration::from_secs(10), started)
            .await
            .expect("the call started");
        let seen = notes.slow_cancel_seen.notified();
        handle.cancel(Some("test".into())).await.unwrap();
        tokio::time::timeout(Duration::from_secs(10), seen)
            .await
            .expect("the handler saw the cancellation");
        assert!(notes.slow_cancelled.load(Ordering::SeqCst), "{transport:?}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn each_mcp_session_has_one_session_id_and_source_mcp() {
    for transport in TRANSPORTS {
        let (_notes, server) = setup();
        let first = connect(transport, &server, TestClient::new(Answer::Unsupported)).await;
        let second = connect(transport, &server, TestClient::new(Answer::Unsupported)).await;
        let a1 = call(&first, "session.whoami", json!({})).await;
        let a2 = call(&first, "session.whoami", json!({})).await;
        let b = call(&second, "session.whoami", json!({})).await;
        assert_eq!(a1["structuredContent"]["source"], "mcp");
        assert_eq!(
            a1["structuredContent"]["sessionId"],
            a2["structuredContent"]["sessionId"]
        );
        assert_ne!(
            a1["structuredContent"]["sessionId"],
            b["structuredContent"]["sessionId"]
        );
        assert!(
            a1["structuredContent"]["sessionId"]
                .as_str()
                .unwrap()
                .starts_with("mcp-")
        );
        first.cancel().await.unwrap();
        second.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn malformed_tools_call_requests_are_invalid_params_over_the_wire() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (_notes, server) = setup();
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_io);
        let _ = tool_context_mcp::serve_transport(&server, (read, write)).await;
    });
    let (read, mut write) = tokio::io::split(client_io);
    let mut lines = BufReader::new(read).lines();
    let mut send = async |message: Value| {
        write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}
    }}))
    .await;
    let initialized: Value =
        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(initialized["result"]["protocolVersion"], "2025-11-25");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    for (id, params) in [
        (2, json!({"arguments": {}})),
        (3, json!({"name": "notes.read", "arguments": [1]})),
        (4, json!({"name": 7})),
    ] {
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})).await;
        let response: Value =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(response["id"], id);
        assert_eq!(response["error"]["code"], -32602, "{response}");
    }
    send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "nope"}}))
        .await;
    let response: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(response["error"]["code"], -32602);
    assert_eq!(response["error"]["data"]["code"], codes::TOOL_NOT_FOUND);
}

async fn prompted(client: &TestClient) {
    while client.elicitations.lock().unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn cancelling_a_call_withdraws_its_open_elicitation() {
    for transport in TRANSPORTS {
        let (notes, server) = setup();
        let test_client = TestClient::new(Answer::Wait);
        let client = connect(transport, &server, test_client.clone()).await;
        let write = CallToolRequestParams::new("notes.write").with_arguments(args(
            json!({"name": "a", "text": "x", "expectedRevision": 0}),
        ));
        let handle = client
            .send_request_with_option(
                ClientRequest::CallToolRequest(Request::new(write)),
                PeerRequestOptions::no_options(),
            )
            .await
            .unwrap();
        tokio::time::timeout(Duration::from_secs(10), prompted(&test_client))
            .await
            .expect("the person was asked");
        let withdrawn = test_client.withdrawn.notified();
        handle.cancel(Some("changed my mind".into())).await.unwrap();
        tokio::time::timeout(Duration::from_secs(10), withdrawn)
            .await
            .expect("the prompt was withdrawn");
        assert_eq!(
            notes.text.lock().unwrap().as_str(),
            "",
            "{transport:?}: the cancelled write never ran"
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_call_timing_out_on_its_prompt_reports_timeout_and_withdraws_it() {
    for transport in TRANSPORTS {
        let notes = Arc::new(common::Notes::default());
        let server = McpToolServer::new(registry(&notes))
            .with_call_options(tool_context::ToolCallOptions::default().with_timeout_ms(300));
        let test_client = TestClient::new(Answer::Wait);
        let client = connect(transport, &server, test_client.clone()).await;
        let withdrawn = test_client.withdrawn.notified();
        let result = call(&client, "notes.delete", json!({})).await;
        assert_eq!(error_code(&result), codes::TOOL_TIMEOUT, "{transport:?}");
        assert_eq!(result["_meta"]["tool-context/error"]["retryable"], true);
        tokio::time::timeout(Duration::from_secs(10), withdrawn)
            .await
            .expect("the prompt was withdrawn");
        assert_eq!(test_client.elicitations.lock().unwrap().len(), 1);
        client.cancel().await.unwrap();
    }
}

/// A host that records every call's lifecycle and, like the studio's preview wait, adds a
/// `waiting` transition of its own when a call starts.
#[derive(Default)]
struct Host {
    seen: std::sync::Mutex<Vec<String>>,
}

impl tool_context_mcp::CallObserver for Host {
    fn call_started(&self, call: &tool_context_mcp::McpCall) {
        self.seen
            .lock()
            .unwrap()
            .push(format!("begin {}", call.tool()));
        assert!(call.session_id().starts_with("mcp-"));
        call.transition(tool_context_mcp::CallState::Waiting, "host check");
    }

    fn call_transition(
        &self,
        _call: &tool_context_mcp::McpCall,
        state: tool_context_mcp::CallState,
        detail: &str,
    ) {
        self.seen.lock().unwrap().push(format!("{state}: {detail}"));
    }

    fn call_finished(
        &self,
        call: &tool_context_mcp::McpCall,
        state: tool_context_mcp::CallState,
        result: &tool_protocol::ToolCallResult,
    ) {
        assert_eq!(tool_context_mcp::CallState::of_result(result), state);
        self.seen
            .lock()
            .unwrap()
            .push(format!("end {} {state}", call.tool()));
    }
}

/// Lifecycle notes (`<state>: <detail>`) among a client's progress messages.
fn lifecycle(client: &TestClient) -> Vec<String> {
    client
        .progress
        .lock()
        .unwrap()
        .iter()
        .filter(|message| {
            !message.starts_with("Waiting for approval") && !message.starts_with("Running")
        })
        .cloned()
        .collect()
}

#[tokio::test]
async fn lifecycle_transitions_reach_the_client_and_the_host_in_order() {
    for transport in TRANSPORTS {
        let notes = Arc::new(common::Notes::default());
        let host = Arc::new(Host::default());
        let observer = Arc::clone(&host);
        let server = McpToolServer::new(registry(&notes)).with_call_observer(SharedHost(observer));
        let test_client = TestClient::new(Answer::Approve);
        let client = connect(transport, &server, test_client.clone()).await;
        let result = call(
            &client,
            "notes.write",
            json!({"name": "a", "text": "new", "expectedRevision": 0}),
        )
        .await;
        assert_eq!(result["isError"], false, "{result}");
        // Notifications are handled on their own task: wait for the final one.
        tokio::time::timeout(Duration::from_secs(20), async {
            while !lifecycle(&test_client)
                .iter()
                .any(|note| note.starts_with("completed: "))
            {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("the final note arrives");
        assert_eq!(
            lifecycle(&test_client),
            [
                "started: notes.write",
                "waiting: host check",
                "approval: waiting on a person for notes.write",
                "started: approved; running notes.write",
                "completed: notes.write",
            ]
        );
        assert_eq!(
            *host.seen.lock().unwrap(),
            [
                "begin notes.write",
                "waiting: host check",
                "approval: waiting on a person for notes.write",
                "started: approved; running notes.write",
                "end notes.write completed",
            ]
        );
        client.cancel().await.unwrap();
    }
}

/// Shares one [`Host`] between the server and the test.
struct SharedHost(Arc<Host>);

impl tool_context_mcp::CallObserver for SharedHost {
    fn call_started(&self, call: &tool_context_mcp::McpCall) {
        self.0.call_started(call);
    }

    fn call_transition(
        &self,
        call: &tool_context_mcp::McpCall,
        state: tool_context_mcp::CallState,
        detail: &str,
    ) {
        self.0.call_transition(call, state, detail);
    }

    fn call_finished(
        &self,
        call: &tool_context_mcp::McpCall,
        state: tool_context_mcp::CallState,
        result: &tool_protocol::ToolCallResult,
    ) {
        self.0.call_finished(call, state, result);
    }
}

/// A short idle timeout stands in for the 5-minute default.
const SHORT_IDLE: Duration = Duration::from_millis(200);

#[tokio::test]
async fn a_session_waiting_on_an_approval_outlives_the_idle_timeout() {
    let notes = Arc::new(common::Notes::default());
    let queue = ApprovalQueue::new();
    let attended = Arc::new(AtomicBool::new(true));
    let server = McpToolServer::new(registry(&notes)).with_approval_desk(desk(&queue, &attended));
    let url = common::http_server_with_idle_timeout(&server, SHORT_IDLE).await;
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
    let client = rmcp::ServiceExt::serve(TestClient::new(Answer::Unsupported), transport)
        .await
        .unwrap();
    // The person answers long after the idle timeout; the call sent no progressToken, so
    // nothing but its open stream shows the session is in use.
    let approver = {
        let queue = queue.clone();
        tokio::spawn(async move {
            let mut updates = queue.subscribe();
            let pending = updates
                .wait_for(|pending| !pending.is_empty())
                .await
                .unwrap()
                .clone();
            tokio::time::sleep(SHORT_IDLE * 5).await;
            queue.resolve(&pending[0].id, ApprovalDecision::Allow)
        })
    };
    let result = call(
        &client,
        "notes.write",
        json!({"name": "a", "text": "late", "expectedRevision": 0}),
    )
    .await;
    assert!(approver.await.unwrap());
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(notes.text.lock().unwrap().as_str(), "late");
    // The session is still there for the next call.
    let read = call(&client, "notes.read", json!({"name": "a"})).await;
    assert_eq!(read["isError"], false, "{read}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_unused_session_still_closes_after_the_idle_timeout() {
    let (_notes, server) = setup();
    let url = common::http_server_with_idle_timeout(&server, SHORT_IDLE).await;
    let http = reqwest::Client::new();
    let post = |session: Option<String>, body: Value| {
        let mut request = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(&body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let initialized = post(
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}
        }}),
    )
    .await
    .unwrap();
    let session = initialized.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    drop(initialized.bytes().await.unwrap());
    let ready = post(
        Some(session.clone()),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await
    .unwrap();
    assert!(ready.status().is_success(), "{}", ready.status());
    tokio::time::sleep(SHORT_IDLE * 4).await;
    let late = post(
        Some(session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await
    .unwrap();
    assert_eq!(late.status(), 404, "the idle session was closed");
}

#[tokio::test]
async fn progress_keeps_coming_while_a_call_waits_for_its_approval() {
    for transport in TRANSPORTS {
        let notes = Arc::new(common::Notes::default());
        let queue = ApprovalQueue::new();
        let attended = Arc::new(AtomicBool::new(true));
        let server = McpToolServer::new(registry(&notes))
            .with_approval_desk(desk(&queue, &attended))
            .with_progress_interval(Duration::from_millis(20));
        let test_client = TestClient::new(Answer::Unsupported);
        let client = connect(transport, &server, test_client.clone()).await;
        let approver = {
            let (queue, progress) = (queue.clone(), test_client.progress.clone());
            tokio::spawn(async move {
                let mut updates = queue.subscribe();
                let pending = updates
                    .wait_for(|pending| !pending.is_empty())
                    .await
                    .unwrap()
                    .clone();
                // Answer only once heartbeats arrived during the wait.
                let heartbeats = || {
                    progress
                        .lock()
                        .unwrap()
                        .iter()
                        .filter(|note| note.as_str() == "Running \"notes.write\".")
                        .count()
                };
                while heartbeats() < 3 {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                queue.resolve(&pending[0].id, ApprovalDecision::Allow)
            })
        };
        let result = tokio::time::timeout(
            Duration::from_secs(20),
            call(
                &client,
                "notes.write",
                json!({"name": "a", "text": "x", "expectedRevision": 0}),
            ),
        )
        .await
        .expect("heartbeats reached the client while the call waited");
        assert!(approver.await.unwrap());
        assert_eq!(result["isError"], false, "{transport:?}: {result}");
        client.cancel().await.unwrap();
    }
}

/// A gateway's clients hear when mounted tools change: `notifications/tools/list_changed`
/// after `initialize` (2025-11-25) on both transports, and the next list shows the change.
#[tokio::test]
async fn mounting_tools_tells_connected_clients_to_list_again() {
    for transport in TRANSPORTS {
        let (_notes, server) = setup();
        let client = TestClient::new(Answer::Unsupported);
        let heard = Arc::clone(&client.list_changed);
        let connected = connect(transport, &server, client).await;
        let info = connected.peer().peer_info().unwrap();
        assert!(info.capabilities.tools.as_ref().unwrap().list_changed == Some(true));
        // A first list: the server has handled `notifications/initialized` by now.
        let before = connected.list_all_tools().await.unwrap();
        assert!(!before.iter().any(|tool| tool.name == "remote.echo"));
        let extra = tool_context::Tool::new(
            tool_protocol::ToolDefinition::new("remote.echo", "Echoes.", json!({"type": "object"})),
            |_: Value, _: tool_context::ToolInvocation| async {
                Ok::<_, tool_protocol::ToolCallError>(json!("echo"))
            },
        );
        server.registry().mount("remote", vec![extra]);
        tokio::time::timeout(Duration::from_secs(5), heard.notified())
            .await
            .unwrap_or_else(|_| panic!("{transport:?}: no tools/list_changed"));
        let tools = connected.list_all_tools().await.unwrap();
        assert!(
            tools.iter().any(|tool| tool.name == "remote.echo"),
            "{transport:?}"
        );
        connected.cancel().await.unwrap();
    }
}
