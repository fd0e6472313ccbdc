//! Protocol 2026-07-28 over streamable HTTP, on the wire: discovery, per-request `_meta`,
//! sessionless requests, `input_required` approvals with sealed `requestState`, and tasks backed
//! by durable operation records (in memory and in SQLite across a restart).

mod wire;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use std::time::Duration;
use wire::{
    VERSION, Wire, elicitation_client, poll_until_terminal, response_with_id, retry, serve,
    task_client,
};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tool_context::{ReadOnlyOrDirectLocal, Tool, ToolInvocation, ToolRegistry};
use tool_context_mcp::request_state::{
    MCP_REQUEST_STATE_EXPIRED, MCP_REQUEST_STATE_INVALID, MCP_REQUEST_STATE_REPLAYED,
};
use tool_context_mcp::tasks::MCP_TASK_NOT_FOUND;
use tool_context_mcp::{McpToolServer, RequestStateKey};
use tool_durable_operations::DurableOperationStore;
use tool_durable_operations::backend::sqlite::SqliteBackend;
use tool_protocol::ToolCallError;

#[derive(Deserialize, JsonSchema)]
struct Empty {}

#[derive(Deserialize, JsonSchema)]
struct Write {
    text: String,
}

/// What the tools touch: a counter of writes and a gate the waiting tool waits on.
#[derive(Default)]
struct Work {
    writes: AtomicU64,
    /// How many times `work.wait` started.
    waits: AtomicU64,
    gate: Notify,
}

fn registry(work: &Arc<Work>, store: Option<Arc<DurableOperationStore>>) -> ToolRegistry {
    let write = {
        let work = work.clone();
        Tool::typed(
            "work.write",
            "Writes.",
            move |input: Write, _call: ToolInvocation| {
                let work = work.clone();
                async move {
                    let count = work.writes.fetch_add(1, Ordering::SeqCst) + 1;
                    Ok::<_, ToolCallError>(json!({"writes": count, "text": input.text}))
                }
            },
        )
    };
    let wait = {
        let work = work.clone();
        Tool::typed("work.wait", "Waits for the gate.", move |_input: Empty, call: ToolInvocation| {
            let work = work.clone();
            async move {
                work.waits.fetch_add(1, Ordering::SeqCst);
                tokio::select! {
                    () = work.gate.notified() => Ok(json!({"done": true})),
                    () = call.cancellation.cancelled() => Err(ToolCallError::new("WORK_STOPPED", "stopped")),
                }
            }
        })
        .read_only()
    };
    let read = Tool::typed(
        "work.read",
        "Reads.",
        |_input: Empty, _call: ToolInvocation| async move {
            Ok::<_, ToolCallError>(json!({"ok": true}))
        },
    )
    .read_only();
    let mut builder = ToolRegistry::builder()
        .tools([write, wait, read])
        .policy(ReadOnlyOrDirectLocal);
    if let Some(store) = store {
        builder = builder.durable_store(store);
    }
    builder.build().unwrap()
}

fn write_call(text: &str) -> Value {
    json!({"name": "work.write", "arguments": {"text": text}})
}

#[tokio::test]
async fn discovery_reports_both_revisions_tools_and_tasks_without_a_session() {
    let work = Arc::new(Work::default());
    let url = serve(&McpToolServer::new(registry(&work, None))).await;
    let wire = Wire::new(&url, json!({}));
    let discovered = wire.result("server/discover", json!({})).await;
    let versions = discovered["supportedVersions"].as_array().unwrap();
    assert!(versions.contains(&json!("2026-07-28")), "{discovered}");
    assert!(versions.contains(&json!("2025-11-25")), "{discovered}");
    assert!(discovered["capabilities"]["tools"].is_object());
    assert!(discovered["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object());
    assert_eq!(
        discovered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "tool-context-mcp"
    );
    let tools = wire.result("tools/list", json!({})).await;
    assert_eq!(tools["tools"].as_array().unwrap().len(), 3);
    let read = wire
        .result("tools/call", json!({"name": "work.read", "arguments": {}}))
        .await;
    assert_eq!(read["structuredContent"], json!({"ok": true}));
}

#[tokio::test]
async fn a_request_without_its_meta_is_refused() {
    let work = Arc::new(Work::default());
    let url = serve(&McpToolServer::new(registry(&work, None))).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": VERSION}}});
    let text = reqwest::Client::new()
        .post(&url)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", VERSION)
        .header("Mcp-Method", "tools/list")
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let response = response_with_id(&text, 1).unwrap();
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clientCapabilities")
    );
}

#[tokio::test]
async fn an_approval_is_one_input_required_round_then_single_use() {
    let work = Arc::new(Work::default());
    let url = serve(&McpToolServer::new(registry(&work, None))).await;
    let wire = Wire::new(&url, elicitation_client());
    let call = write_call("hello");
    let asked = wire.result("tools/call", call.clone()).await;
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let form = &asked["inputRequests"]["approval"];
    assert_eq!(form["method"], "elicitation/create");
    assert!(
        form["params"]["message"]
            .as_str()
            .unwrap()
            .contains("work.write")
    );
    assert_eq!(form["params"]["requestedSchema"]["type"], "object");
    assert_eq!(
        work.writes.load(Ordering::SeqCst),
        0,
        "nothing ran before the answer"
    );
    let state = &asked["requestState"];
    assert!(state.is_string());

    let done = wire
        .result("tools/call", retry(&call, state, "accept"))
        .await;
    assert_eq!(done["structuredContent"]["writes"], 1, "{done}");
    assert_eq!(done["isError"], json!(false));

    let replay = wire
        .error_code("tools/call", retry(&call, state, "accept"))
        .await;
    assert_eq!(replay, MCP_REQUEST_STATE_REPLAYED);
    assert_eq!(
        work.writes.load(Ordering::SeqCst),
        1,
        "a replay never runs the call"
    );
}

#[tokio::test]
async fn a_declined_approval_denies_and_altered_states_are_refused() {
    let work = Arc::new(Work::default());
    let url = serve(&McpToolServer::new(registry(&work, None))).await;
    let wire = Wire::new(&url, elicitation_client());
    let call = write_call("hello");
    let state = wire.result("tools/call", call.clone()).await["requestState"].clone();

    // Other arguments, another tool, a tampered state: refused, and the state is not used up.
    let other = wire
        .error_code("tools/call", retry(&write_call("other"), &state, "accept"))
        .await;
    assert_eq!(other, MCP_REQUEST_STATE_INVALID);
    let mut tampered = state.as_str().unwrap().to_owned();
    tampered.insert(tampered.len() / 2, 'x');
    let tampered = wire
        .error_code("tools/call", retry(&call, &json!(tampered), "accept"))
        .await;
    assert_eq!(tampered, MCP_REQUEST_STATE_INVALID);

    let declined = wire
        .result("tools/call", retry(&call, &state, "decline"))
        .await;
    assert_eq!(declined["isError"], true, "{declined}");
    // The code travels in the result (where exactly is the error-result format's business).
    let text = serde_json::to_string(&declined).unwrap();
    assert!(text.contains("TOOL_POLICY_DENIED"), "{declined}");
    assert_eq!(work.writes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_expired_state_is_refused_as_expired() {
    let work = Arc::new(Work::default());
    let server =
        McpToolServer::new(registry(&work, None)).with_request_state_ttl(Duration::from_millis(1));
    let wire = Wire::new(&serve(&server).await, elicitation_client());
    let call = write_call("late");
    let state = wire.result("tools/call", call.clone()).await["requestState"].clone();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let expired = wire
        .error_code("tools/call", retry(&call, &state, "accept"))
        .await;
    assert_eq!(expired, MCP_REQUEST_STATE_EXPIRED);
    assert_eq!(work.writes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_client_that_cannot_answer_forms_is_denied_with_the_reason() {
    let work = Arc::new(Work::default());
    let wire = Wire::new(
        &serve(&McpToolServer::new(registry(&work, None))).await,
        json!({}),
    );
    let denied = wire.result("tools/call", write_call("x")).await;
    assert_eq!(denied["isError"], true, "{denied}");
    let text = serde_json::to_string(&denied).unwrap();
    assert!(
        text.contains("TOOL_POLICY_DENIED") && text.contains("unavailable"),
        "{text}"
    );
}

#[tokio::test]
async fn hosts_sharing_the_key_and_store_accept_each_others_states() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite_store(&dir.path().join("ops.db")).await;
    let key = RequestStateKey::from_bytes(&[42; 32]).unwrap();
    let work = Arc::new(Work::default());
    let first = McpToolServer::new(registry(&work, Some(store.clone())))
        .with_request_state_key(key.clone());
    let second =
        McpToolServer::new(registry(&work, Some(store.clone()))).with_request_state_key(key);
    let stranger = McpToolServer::new(registry(&work, Some(store)));
    let (first, second, stranger) = (
        Wire::new(&serve(&first).await, elicitation_client()),
        Wire::new(&serve(&second).await, elicitation_client()),
        Wire::new(&serve(&stranger).await, elicitation_client()),
    );
    let call = write_call("shared");
    let state = first.result("tools/call", call.clone()).await["requestState"].clone();
    let other_key = stranger
        .error_code("tools/call", retry(&call, &state, "accept"))
        .await;
    assert_eq!(other_key, MCP_REQUEST_STATE_INVALID);
    let done = second
        .result("tools/call", retry(&call, &state, "accept"))
        .await;
    assert_eq!(done["structuredContent"]["writes"], 1, "{done}");
    // The replay guard is the shared store: the first host refuses the used state too.
    let replay = first
        .error_code("tools/call", retry(&call, &state, "accept"))
        .await;
    assert_eq!(replay, MCP_REQUEST_STATE_REPLAYED);
}

async fn sqlite_store(path: &std::path::Path) -> Arc<DurableOperationStore> {
    let backend = SqliteBackend::open(path).await.unwrap();
    Arc::new(DurableOperationStore::new(Arc::new(backend)))
}

fn fast_tasks(server: McpToolServer) -> McpToolServer {
    // Generous: a quick call must answer in its request even on a loaded machine.
    server.with_task_after(Duration::from_millis(1_000))
}

#[tokio::test]
async fn a_long_call_becomes_a_task_polled_to_completion() {
    let work = Arc::new(Work::default());
    let wire = Wire::new(
        &serve(&fast_tasks(McpToolServer::new(registry(&work, None)))).await,
        task_client(),
    );
    let quick = wire
        .result("tools/call", json!({"name": "work.read", "arguments": {}}))
        .await;
    assert_eq!(
        quick["structuredContent"],
        json!({"ok": true}),
        "a quick call answers at once"
    );

    let handle = wire
        .result("tools/call", json!({"name": "work.wait", "arguments": {}}))
        .await;
    assert_eq!(handle["resultType"], "task", "{handle}");
    let task_id = handle["taskId"].as_str().unwrap().to_owned();
    assert_eq!(handle["status"], "working");
    let working = wire.result("tasks/get", json!({"taskId": task_id})).await;
    assert_eq!(working["status"], "working", "{working}");
    let listed = wire.result("tasks/list", json!({})).await;
    assert!(
        listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|task| task["taskId"] == task_id.as_str()),
        "{listed}"
    );

    work.gate.notify_one();
    let done = poll_until_terminal(&wire, &task_id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"], json!({"done": true}));
    let result = wire
        .result("tasks/result", json!({"taskId": task_id}))
        .await;
    assert_eq!(
        result["structuredContent"],
        json!({"done": true}),
        "{result}"
    );

    let missing = wire
        .error_code("tasks/get", json!({"taskId": "not-a-task"}))
        .await;
    assert_eq!(missing, MCP_TASK_NOT_FOUND);
}

#[tokio::test]
async fn a_retried_keyed_call_gets_the_same_task_and_runs_once() {
    let work = Arc::new(Work::default());
    let store = Arc::new(DurableOperationStore::new(Arc::new(
        tool_durable_operations::MemoryBackend::new(),
    )));
    let server = fast_tasks(McpToolServer::new(registry(&work, Some(store))));
    let wire = Wire::new(&serve(&server).await, task_client());
    let keyed = json!({
        "name": "work.wait",
        "arguments": {},
        "_meta": {"tool-context/idempotency-key": "wait-once"},
    });
    let handle = wire.result("tools/call", keyed.clone()).await;
    assert_eq!(handle["resultType"], "task", "{handle}");
    let task_id = handle["taskId"].as_str().unwrap().to_owned();

    // The handle was lost: the client sends the call again with its key.
    let again = wire.result("tools/call", keyed.clone()).await;
    assert_eq!(again["resultType"], "task", "{again}");
    assert_eq!(again["taskId"], task_id.as_str(), "the same task: {again}");
    assert_eq!(again["status"], "working", "{again}");

    work.gate.notify_one();
    let done = poll_until_terminal(&wire, &task_id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(work.waits.load(Ordering::SeqCst), 1, "the call ran once");
    // Once finished, the retry replays in its request.
    let replayed = wire.result("tools/call", keyed).await;
    assert_eq!(
        replayed["structuredContent"],
        json!({"done": true}),
        "{replayed}"
    );
    assert_eq!(work.waits.load(Ordering::SeqCst), 1);
    let listed = wire.result("tasks/list", json!({})).await;
    assert_eq!(
        listed["tasks"].as_array().unwrap().len(),
        1,
        "one task: {listed}"
    );
}

#[tokio::test]
async fn a_cancelled_task_ends_cancelled() {
    let work = Arc::new(Work::default());
    let wire = Wire::new(
        &serve(&fast_tasks(McpToolServer::new(registry(&work, None)))).await,
        task_client(),
    );
    let handle = wire
        .result("tools/call", json!({"name": "work.wait", "arguments": {}}))
        .await;
    let task_id = handle["taskId"].as_str().unwrap().to_owned();
    wire.result("tasks/cancel", json!({"taskId": task_id}))
        .await;
    let ended = poll_until_terminal(&wire, &task_id).await;
    assert_eq!(ended["status"], "cancelled", "{ended}");
}

#[tokio::test]
async fn tasks_belong_to_their_owner() {
    let work = Arc::new(Work::default());
    let store = Arc::new(DurableOperationStore::new(Arc::new(
        tool_durable_operations::MemoryBackend::new(),
    )));
    let alice = fast_tasks(McpToolServer::new(registry(&work, None)))
        .with_durable_store(store.clone())
        .with_request_owner("alice");
    let bob = McpToolServer::new(registry(&work, None))
        .with_durable_store(store)
        .with_request_owner("bob");
    let (alice, bob) = (
        Wire::new(&serve(&alice).await, task_client()),
        Wire::new(&serve(&bob).await, task_client()),
    );
    let handle = alice
        .result("tools/call", json!({"name": "work.wait", "arguments": {}}))
        .await;
    let task_id = handle["taskId"].as_str().unwrap().to_owned();
    assert_eq!(
        bob.error_code("tasks/get", json!({"taskId": task_id}))
            .await,
        MCP_TASK_NOT_FOUND
    );
    assert!(
        bob.result("tasks/list", json!({})).await["tasks"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    work.gate.notify_one();
    assert_eq!(
        poll_until_terminal(&alice, &task_id).await["status"],
        "completed"
    );
}

#[tokio::test]
async fn a_task_in_sqlite_survives_a_restart_and_is_read_by_another_host() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ops.db");
    let work = Arc::new(Work::default());
    let task_id = {
        let first = fast_tasks(McpToolServer::new(registry(
            &work,
            Some(sqlite_store(&path).await),
        )));
        let wire = Wire::new(&serve(&first).await, task_client());
        let handle = wire
            .result("tools/call", json!({"name": "work.wait", "arguments": {}}))
            .await;
        let task_id = handle["taskId"].as_str().unwrap().to_owned();
        work.gate.notify_one();
        assert_eq!(
            poll_until_terminal(&wire, &task_id).await["status"],
            "completed"
        );
        first.registry().shutdown();
        task_id
    };
    // A new process: a fresh registry and server on the same database file.
    let restarted = McpToolServer::new(registry(
        &Arc::new(Work::default()),
        Some(sqlite_store(&path).await),
    ));
    let wire = Wire::new(&serve(&restarted).await, task_client());
    let task = wire.result("tasks/get", json!({"taskId": task_id})).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["result"]["structuredContent"], json!({"done": true}));
}

/// rmcp's own client on 2026-07-28: `server/discover` instead of `initialize`, and its
/// multi-round-trip driver answers the approval form through its elicitation handler.
#[derive(Clone)]
struct Accepting;

impl rmcp::ClientHandler for Accepting {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let capabilities = rmcp::model::ClientCapabilities::builder()
            .enable_elicitation()
            .build();
        rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("rmcp-discover-test", "0"),
        )
    }

    async fn create_elicitation(
        &self,
        _request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::service::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        Ok(rmcp::model::ElicitResult::new(
            rmcp::model::ElicitationAction::Accept,
        ))
    }
}

/// rmcp's client on 2026-07-28 only, answering approvals with [`Accepting`].
async fn discovering_client(
    url: String,
) -> rmcp::service::RunningService<rmcp::RoleClient, Accepting> {
    use rmcp::ClientServiceExt;
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
    Accepting
        .serve_with_lifecycle(
            transport,
            rmcp::ClientLifecycleMode::Discover {
                preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("a 2026-07-28 client connects with server/discover")
}

#[tokio::test]
async fn a_client_that_only_speaks_2026_07_28_connects_and_gets_approvals() {
    use rmcp::model::CallToolRequestParams;
    let work = Arc::new(Work::default());
    let url = serve(&McpToolServer::new(registry(&work, None))).await;
    let client = discovering_client(url).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 3);
    let arguments = json!({"text": "via rmcp"}).as_object().cloned().unwrap();
    let written = client
        .call_tool(CallToolRequestParams::new("work.write").with_arguments(arguments))
        .await
        .unwrap();
    assert_eq!(written.structured_content.unwrap()["writes"], 1);
    client.cancel().await.unwrap();
}

async fn postgres_store(table: &str) -> Arc<DurableOperationStore> {
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let backend =
        tool_durable_operations::backend::postgres::PostgresBackend::connect(&url, table, 4)
            .await
            .expect("PostgreSQL answers (DATABASE_URL or the local default)");
    backend.apply_schema().await.unwrap();
    Arc::new(DurableOperationStore::new(Arc::new(backend)))
}

#[tokio::test]
async fn a_task_in_postgres_survives_a_restart_and_its_approval_replay_guard_too() {
    let table = format!("mcp_tasks_{}", uuid::Uuid::new_v4().simple());
    let key = RequestStateKey::from_bytes(&[7; 32]).unwrap();
    let work = Arc::new(Work::default());
    let (task_id, call, state) = {
        let first = fast_tasks(McpToolServer::new(registry(
            &work,
            Some(postgres_store(&table).await),
        )))
        .with_request_state_key(key.clone());
        let wire = Wire::new(&serve(&first).await, task_client());
        let handle = wire
            .result("tools/call", json!({"name": "work.wait", "arguments": {}}))
            .await;
        let task_id = handle["taskId"].as_str().unwrap().to_owned();
        work.gate.notify_one();
        assert_eq!(
            poll_until_terminal(&wire, &task_id).await["status"],
            "completed"
        );
        // Without the tasks extension, so the approved write answers in the request.
        let wire = Wire::new(&wire.url, elicitation_client());
        let call = write_call("before the restart");
        let state = wire.result("tools/call", call.clone()).await["requestState"].clone();
        let done = wire
            .result("tools/call", retry(&call, &state, "accept"))
            .await;
        assert_eq!(done["structuredContent"]["writes"], 1, "{done}");
        first.registry().shutdown();
        (task_id, call, state)
    };
    let restarted = McpToolServer::new(registry(&work, Some(postgres_store(&table).await)))
        .with_request_state_key(key);
    let wire = Wire::new(&serve(&restarted).await, task_client());
    let task = wire.result("tasks/get", json!({"taskId": task_id})).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["result"]["structuredContent"], json!({"done": true}));
    let replay = wire
        .error_code("tools/call", retry(&call, &state, "accept"))
        .await;
    assert_eq!(replay, MCP_REQUEST_STATE_REPLAYED);
    assert_eq!(work.writes.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_answered_retry_is_not_asked_again_at_a_desk_that_became_attended() {
    use std::sync::atomic::AtomicBool;
    let work = Arc::new(Work::default());
    let queue = tool_context::ApprovalQueue::new();
    let attended = Arc::new(AtomicBool::new(false));
    let desk = {
        let attended = attended.clone();
        tool_context_mcp::ApprovalDesk::new(queue.clone(), move || attended.load(Ordering::SeqCst))
    };
    let server = McpToolServer::new(registry(&work, None)).with_approval_desk(desk);
    let wire = Wire::new(&serve(&server).await, elicitation_client());
    let call = write_call("answered");
    let state = wire.result("tools/call", call.clone()).await["requestState"].clone();
    attended.store(true, Ordering::SeqCst);
    // Nobody answers the desk's queue: asking it again would hang this call.
    let done = tokio::time::timeout(
        Duration::from_secs(10),
        wire.result("tools/call", retry(&call, &state, "accept")),
    )
    .await
    .expect("the client's answer decides; the desk is not asked again");
    assert_eq!(done["structuredContent"]["writes"], 1, "{done}");
    assert!(queue.snapshot().is_empty());
}

/// On 2026-07-28 a client asks for `tools/list_changed` on a `subscriptions/listen` stream;
/// mounting tools sends it there.
#[tokio::test]
async fn a_2026_07_28_subscription_hears_mounted_tools() {
    use rmcp::model::{ServerNotification, SubscriptionFilter};
    let work = Arc::new(Work::default());
    let server = McpToolServer::new(registry(&work, None));
    let client = discovering_client(serve(&server).await).await;
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let mut subscription = client.peer().listen(filter).await.unwrap();
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));
    let extra = tool_context::Tool::new(
        tool_protocol::ToolDefinition::new("remote.echo", "Echoes.", json!({"type": "object"})),
        |_: Value, _: tool_context::ToolInvocation| async {
            Ok::<_, tool_protocol::ToolCallError>(json!("echo"))
        },
    );
    server.registry().mount("remote", vec![extra]);
    let heard = tokio::time::timeout(std::time::Duration::from_secs(5), subscription.next())
        .await
        .expect("tools/list_changed on the subscription")
        .unwrap();
    assert!(
        matches!(
            heard,
            Some(ServerNotification::ToolListChangedNotification(_))
        ),
        "{heard:?}"
    );
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|tool| tool.name == "remote.echo"));
    client.cancel().await.unwrap();
}

/// A keyed call across its `input_required` round, on two hosts sharing the key and the store,
/// on every backend (issue 56): the round asks and claims nothing lasting; the continuation
/// sent to the other host runs the call once; a retry of that continuation (its answer lost)
/// and a fresh send of the key (the client lost its state) both replay the result instead of
/// running again or asking again.
/// One fresh store per backend: memory, SQLite (a file in `dir`), Redis and PostgreSQL (a
/// unique prefix and table named after `name`: the servers are shared).
async fn every_backend(
    dir: &std::path::Path,
    name: &str,
) -> Vec<(&'static str, Arc<DurableOperationStore>)> {
    let redis = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let unique = uuid::Uuid::new_v4().simple().to_string();
    vec![
        (
            "memory",
            Arc::new(DurableOperationStore::new(Arc::new(
                tool_durable_operations::MemoryBackend::new(),
            ))),
        ),
        (
            "sqlite",
            sqlite_store(&dir.join(format!("{name}.db"))).await,
        ),
        ("redis", {
            let backend = tool_durable_operations::backend::redis::RedisBackend::connect(
                &redis,
                &format!("{name}-{unique}:"),
            )
            .await
            .expect("Redis answers (REDIS_URL or the local default)");
            Arc::new(DurableOperationStore::new(Arc::new(backend)))
        }),
        (
            "postgres",
            postgres_store(&format!("{name}_{unique}")).await,
        ),
    ]
}

/// A keyed call that became a task, retried on another host sharing the store (its handle was
/// lost), is the same task on every backend; once done, a retry replays; it ran once.
#[tokio::test]
async fn a_retried_keyed_task_is_the_same_task_on_another_host_on_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    for (backend, store) in every_backend(dir.path(), "tasks").await {
        let work = Arc::new(Work::default());
        let host = || fast_tasks(McpToolServer::new(registry(&work, Some(store.clone()))));
        let (first, second) = (
            Wire::new(&serve(&host()).await, task_client()),
            Wire::new(&serve(&host()).await, task_client()),
        );
        let keyed = json!({
            "name": "work.wait",
            "arguments": {},
            "_meta": {"tool-context/idempotency-key": format!("wait-{backend}")},
        });
        let handle = first.result("tools/call", keyed.clone()).await;
        assert_eq!(handle["resultType"], "task", "{backend}: {handle}");
        let task_id = handle["taskId"].as_str().unwrap().to_owned();

        let again = second.result("tools/call", keyed.clone()).await;
        assert_eq!(again["taskId"], task_id.as_str(), "{backend}: {again}");
        work.gate.notify_one();
        let done = poll_until_terminal(&second, &task_id).await;
        assert_eq!(done["status"], "completed", "{backend}: {done}");
        let replayed = second.result("tools/call", keyed).await;
        assert_eq!(
            replayed["structuredContent"],
            json!({"done": true}),
            "{backend}: {replayed}"
        );
        assert_eq!(work.waits.load(Ordering::SeqCst), 1, "{backend}: ran once");
    }
}

#[tokio::test]
async fn a_keyed_call_runs_once_across_its_input_round_on_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    for (backend, store) in every_backend(dir.path(), "rounds").await {
        let key = RequestStateKey::from_bytes(&[7; 32]).unwrap();
        let work = Arc::new(Work::default());
        let host = |store: &Arc<DurableOperationStore>| {
            McpToolServer::new(registry(&work, Some(store.clone())))
                .with_request_state_key(key.clone())
        };
        let (first, second) = (
            Wire::new(&serve(&host(&store)).await, elicitation_client()),
            Wire::new(&serve(&host(&store)).await, elicitation_client()),
        );
        let mut call = write_call("keyed");
        call["_meta"] = json!({"tool-context/idempotency-key": format!("round-{backend}")});
        let asked = first.result("tools/call", call.clone()).await;
        assert_eq!(asked["resultType"], "input_required", "{backend}: {asked}");
        let state = asked["requestState"].clone();
        assert_eq!(work.writes.load(Ordering::SeqCst), 0, "{backend}");

        let done = second
            .result("tools/call", retry(&call, &state, "accept"))
            .await;
        assert_eq!(done["structuredContent"]["writes"], 1, "{backend}: {done}");

        let resent = first
            .result("tools/call", retry(&call, &state, "accept"))
            .await;
        assert_eq!(
            resent["structuredContent"]["writes"], 1,
            "{backend}: {resent}"
        );
        assert_eq!(
            resent["_meta"]["tool-context/replay"]["replayed"], true,
            "{backend}: {resent}"
        );

        let fresh = second.result("tools/call", call.clone()).await;
        assert_eq!(
            fresh["structuredContent"]["writes"], 1,
            "{backend}: {fresh}"
        );
        assert_ne!(
            fresh["resultType"], "input_required",
            "{backend}: asked again: {fresh}"
        );
        assert_eq!(work.writes.load(Ordering::SeqCst), 1, "{backend}: ran once");

        // A used state approves nothing: a declined continuation sent again with its key and
        // an `accept` runs nothing.
        let mut declined = write_call("declined");
        declined["_meta"] = json!({"tool-context/idempotency-key": format!("no-{backend}")});
        let state = first.result("tools/call", declined.clone()).await["requestState"].clone();
        let no = second
            .result("tools/call", retry(&declined, &state, "decline"))
            .await;
        assert_eq!(no["isError"], true, "{backend}: {no}");
        let again = first
            .result("tools/call", retry(&declined, &state, "accept"))
            .await;
        assert_ne!(
            again["isError"], false,
            "{backend}: a used state approved: {again}"
        );
        assert_eq!(
            work.writes.load(Ordering::SeqCst),
            1,
            "{backend}: nothing more ran"
        );
    }
}
