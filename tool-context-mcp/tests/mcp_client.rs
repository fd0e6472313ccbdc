//! The MCP client against an independent server that misbehaves on purpose: a Python server
//! written with the `mcp` package (`tests/peers/python_misbehaving_server.py`), over stdio and
//! streamable HTTP. Every remote tool runs through the registry's pipeline: approvals by
//! default, coded errors with the server's name, cancellation reaching the server, an
//! ambiguous outcome recorded as unknown, bounded lists and schemas, reconnects.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tool_context::{
    BoxError, InteractionOutcome, InteractionRequest, QuestionAnswer, QuestionQueue,
    ToolCallOptions, ToolInteraction, ToolRegistry,
};
use tool_context_mcp::client::codes::{
    MCP_REMOTE_CONNECT_FAILED, MCP_REMOTE_INPUT_DECLINED, MCP_REMOTE_PROTOCOL_ERROR,
    MCP_REMOTE_RESULT_TOO_LARGE, MCP_REMOTE_TOOL_ERROR, MCP_REMOTE_UNAVAILABLE,
    MCP_SERVER_START_FAILED,
};
use tool_context_mcp::client::{
    ClientLimits, McpMounts, McpServersConfig, ServerState, ServerStatus,
};
use tool_durable_operations::{DurableOperationStore, MemoryBackend};
use tool_protocol::{ModelToolCall, ToolCallResult, codes};

fn peer_script() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/peers/python_misbehaving_server.py"
    )
    .to_owned()
}

/// Fast limits: short handshakes and reconnects, so a broken server settles quickly.
fn limits() -> ClientLimits {
    let mut limits = ClientLimits::default();
    limits.connect_timeout = Duration::from_secs(15);
    limits.reconnect_initial = Duration::from_millis(200);
    limits.reconnect_max = Duration::from_secs(1);
    limits
}

fn stdio_server(name: &str, mode: &str, extra: Value) -> Value {
    let mut server = json!({"command": "python3", "args": [peer_script(), mode]});
    merge(&mut server, extra);
    json!({ "mcpServers": { name: server } })
}

/// Both protocol revisions the Python `mcp` package speaks: the client is pinned to each.
const REVISIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];

fn stdio_server_on(revision: &str, name: &str, mode: &str, mut extra: Value) -> Value {
    extra["protocolVersion"] = json!(revision);
    stdio_server(name, mode, extra)
}

/// A registry with the Python server in `normal` mode mounted as `py` on `revision`.
async fn py_on(revision: &str, extra: Value) -> (ToolRegistry, McpMounts, ServerStatus) {
    let registry = registry();
    let config = stdio_server_on(revision, "py", "normal", extra);
    let (mounts, status) = mount(&registry, config, limits()).await;
    (registry, mounts, status)
}

fn merge(target: &mut Value, extra: Value) {
    if let (Value::Object(target), Value::Object(extra)) = (target, extra) {
        target.extend(extra);
    }
}

fn registry() -> ToolRegistry {
    ToolRegistry::builder().build().unwrap()
}

async fn mount(
    registry: &ToolRegistry,
    config: Value,
    limits: ClientLimits,
) -> (McpMounts, ServerStatus) {
    let config = McpServersConfig::from_json(&config).unwrap();
    let name = config.servers[0].name.clone();
    let mounts = McpMounts::new(registry, limits);
    mounts.apply(&config);
    let status = mounts
        .wait_until_settled(&name, Duration::from_secs(30))
        .await
        .unwrap();
    (mounts, status)
}

/// Answers every approval with a fixed outcome and remembers what it was asked.
#[derive(Clone)]
struct Person(InteractionOutcome, Arc<std::sync::Mutex<Vec<String>>>);

impl Person {
    fn approving() -> Self {
        Self(InteractionOutcome::Approved, Arc::default())
    }

    fn asked(&self) -> Vec<String> {
        self.1.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl ToolInteraction for Person {
    async fn interact(
        &self,
        request: &InteractionRequest,
        _cancellation: &CancellationToken,
    ) -> Result<InteractionOutcome, BoxError> {
        self.1.lock().unwrap().push(request.name.clone());
        Ok(self.0.clone())
    }
}

async fn call(
    registry: &ToolRegistry,
    name: &str,
    arguments: Value,
    options: ToolCallOptions,
) -> ToolCallResult {
    let call: ModelToolCall =
        serde_json::from_value(json!({"id": "c1", "name": name, "arguments": arguments})).unwrap();
    registry.execute_model_tool_call(call, options).await
}

fn approved(person: &Person) -> ToolCallOptions {
    ToolCallOptions::default().with_interaction(Arc::new(person.clone()))
}

fn code(result: &ToolCallResult) -> &str {
    result
        .error
        .as_ref()
        .map_or("", |error| error.code.as_str())
}

#[tokio::test]
async fn remote_tools_are_mounted_by_name_and_every_one_asks_first_read_only_included() {
    for revision in REVISIONS {
        remote_tools_are_mounted_by_name_and_every_one_asks_first_read_only_included_on(revision)
            .await;
    }
}

async fn remote_tools_are_mounted_by_name_and_every_one_asks_first_read_only_included_on(
    revision: &str,
) {
    let (registry, _mounts, status) = py_on(revision, json!({})).await;
    assert_eq!(status.state, ServerState::Ready, "{status:?}");
    assert_eq!(status.protocol_version.as_deref(), Some(revision));
    for name in [
        "py.echo",
        "py.add",
        "py.write_note",
        "py.read_only",
        "py.fail",
    ] {
        assert!(
            registry.tool_names().contains(&name.to_owned()),
            "{name} in {:?}",
            registry.tool_names()
        );
    }
    // No person to ask: even the tool the server calls read-only is not run.
    let unasked = call(
        &registry,
        "py.read_only",
        json!({}),
        ToolCallOptions::default(),
    )
    .await;
    assert_eq!(code(&unasked), codes::TOOL_APPROVAL_REQUIRED, "{unasked:?}");
    let person = Person::approving();
    let echoed = call(
        &registry,
        "py.echo",
        json!({"text": "hi"}),
        approved(&person),
    )
    .await;
    assert!(echoed.error.is_none(), "{echoed:?}");
    assert_eq!(echoed.structured_content.unwrap()["text"], "hi");
    assert_eq!(person.asked(), ["py.echo"]);
    // Strict validation runs on the remote schema before anything is sent.
    let invalid = call(&registry, "py.add", json!({"a": "one"}), approved(&person)).await;
    assert_eq!(code(&invalid), codes::TOOL_VALIDATION_FAILED, "{invalid:?}");
    // Provider exports stay reversible for dotted names.
    let names = registry.provider_tool_names();
    let safe = registry
        .to_openai_tools(&Default::default())
        .into_iter()
        .map(|tool| tool.function.name)
        .find(|name| names.canonical_name(name) == Some("py.echo"));
    assert!(safe.is_some());
}

#[tokio::test]
async fn a_trusted_server_runs_without_asking_and_a_disabled_tool_is_not_mounted() {
    let registry = registry();
    let extra = json!({"trusted": true, "disabledTools": ["write_note"]});
    let (_mounts, _) = mount(&registry, stdio_server("py", "normal", extra), limits()).await;
    assert!(!registry.tool_names().contains(&"py.write_note".to_owned()));
    let added = call(
        &registry,
        "py.add",
        json!({"a": 2, "b": 3}),
        ToolCallOptions::default(),
    )
    .await;
    assert!(added.error.is_none(), "{added:?}");
}

#[tokio::test]
async fn remote_errors_are_coded_with_the_servers_name() {
    for revision in REVISIONS {
        remote_errors_are_coded_with_the_servers_name_on(revision).await;
    }
}

async fn remote_errors_are_coded_with_the_servers_name_on(revision: &str) {
    let (registry, _mounts, _) = py_on(revision, json!({"trusted": true})).await;
    let failed = call(&registry, "py.fail", json!({}), ToolCallOptions::default()).await;
    let error = failed.error.clone().unwrap();
    assert_eq!(error.code, MCP_REMOTE_TOOL_ERROR, "{failed:?}");
    assert_eq!(error.retryable, Some(false));
    assert_eq!(error.details.as_ref().unwrap()["server"], "py");
    assert!(error.message.contains("it broke"), "{}", error.message);
    let refused = call(
        &registry,
        "py.jsonrpc_error",
        json!({}),
        ToolCallOptions::default(),
    )
    .await;
    let error = refused.error.unwrap();
    assert_eq!(error.code, MCP_REMOTE_PROTOCOL_ERROR);
    assert_eq!(error.details.unwrap()["jsonrpcCode"], -32001);
    // The server is still there for the next call.
    let echoed = call(
        &registry,
        "py.echo",
        json!({"text": "after"}),
        ToolCallOptions::default(),
    )
    .await;
    assert!(echoed.error.is_none(), "{echoed:?}");
}

#[tokio::test]
async fn a_timeout_cancels_the_remote_call_on_the_server() {
    for revision in REVISIONS {
        a_timeout_cancels_the_remote_call_on_the_server_on(revision).await;
    }
}

async fn a_timeout_cancels_the_remote_call_on_the_server_on(revision: &str) {
    let dir = tempfile::tempdir().unwrap();
    let cancel_file = dir.path().join("cancelled");
    let extra = json!({"trusted": true, "env": {"CANCEL_FILE": cancel_file.to_string_lossy()}});
    let (registry, _mounts, _) = py_on(revision, extra).await;
    let options = ToolCallOptions::default().with_timeout_ms(300);
    let slow = call(&registry, "py.slow", json!({"ms": 20_000}), options).await;
    assert_eq!(code(&slow), codes::TOOL_TIMEOUT, "{slow:?}");
    let seen = wait_for(|| {
        std::fs::read_to_string(&cancel_file)
            .unwrap_or_default()
            .contains("cancelled")
    })
    .await;
    assert!(seen, "the server never saw notifications/cancelled");
}

#[tokio::test]
async fn a_server_that_dies_mid_call_leaves_an_unknown_record_and_comes_back() {
    for revision in REVISIONS {
        a_server_that_dies_mid_call_leaves_an_unknown_record_and_comes_back_on(revision).await;
    }
}

async fn a_server_that_dies_mid_call_leaves_an_unknown_record_and_comes_back_on(revision: &str) {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    let store = Arc::new(DurableOperationStore::new(Arc::new(MemoryBackend::new())));
    let registry = ToolRegistry::builder()
        .durable_store(Arc::clone(&store))
        .build()
        .unwrap();
    let extra = json!({"trusted": true, "env": {"NOTES_FILE": notes.to_string_lossy()}});
    let (mounts, _) = mount(
        &registry,
        stdio_server_on(revision, "py", "normal", extra),
        limits(),
    )
    .await;
    let keyed = ToolCallOptions::default().with_idempotency_key("die-once");
    let died = call(&registry, "py.die", json!({}), keyed.clone()).await;
    assert_eq!(code(&died), codes::TOOL_EXECUTION_UNKNOWN, "{died:?}");
    assert_eq!(died.error.unwrap().details.unwrap()["server"], "py");
    // The same key never runs again silently: the record asks for reconciliation.
    let retried = call(&registry, "py.die", json!({}), keyed).await;
    assert_eq!(
        code(&retried),
        codes::TOOL_IDEMPOTENCY_UNKNOWN,
        "{retried:?}"
    );
    // The supervisor reconnects and the tools work again.
    let back = wait_for_state(&mounts, "py", |state| *state == ServerState::Ready).await;
    assert!(back, "{:?}", mounts.status("py"));
    let echoed = call(
        &registry,
        "py.echo",
        json!({"text": "back"}),
        ToolCallOptions::default(),
    )
    .await;
    assert!(echoed.error.is_none(), "{echoed:?}");
}

#[tokio::test]
async fn while_a_server_is_down_its_tools_fail_fast_and_retryable() {
    let registry = registry();
    let mut slow_reconnects = limits();
    slow_reconnects.reconnect_initial = Duration::from_secs(30);
    slow_reconnects.reconnect_max = Duration::from_secs(30);
    let (mounts, _) = mount(
        &registry,
        stdio_server("py", "normal", json!({"trusted": true})),
        slow_reconnects,
    )
    .await;
    let _ = call(&registry, "py.die", json!({}), ToolCallOptions::default()).await;
    let down = wait_for_state(&mounts, "py", |state| {
        matches!(state, ServerState::Unavailable { .. })
    })
    .await;
    assert!(down, "{:?}", mounts.status("py"));
    assert!(
        registry.tool_names().contains(&"py.echo".to_owned()),
        "listed while down"
    );
    let started = std::time::Instant::now();
    let refused = call(
        &registry,
        "py.echo",
        json!({"text": "x"}),
        ToolCallOptions::default(),
    )
    .await;
    let error = refused.error.unwrap();
    assert_eq!(
        (error.code.as_str(), error.retryable),
        (MCP_REMOTE_UNAVAILABLE, Some(true))
    );
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[tokio::test]
async fn list_changed_swaps_the_servers_tools() {
    for revision in REVISIONS {
        list_changed_swaps_the_servers_tools_on(revision).await;
    }
}

async fn list_changed_swaps_the_servers_tools_on(revision: &str) {
    let (registry, _mounts, _) = py_on(revision, json!({"trusted": true})).await;
    assert!(!registry.tool_names().contains(&"py.added_later".to_owned()));
    let changes = registry.catalog_changes();
    let changed = call(
        &registry,
        "py.change",
        json!({}),
        ToolCallOptions::default(),
    )
    .await;
    assert!(changed.error.is_none(), "{changed:?}");
    let appeared = wait_for(|| registry.tool_names().contains(&"py.added_later".to_owned())).await;
    assert!(appeared, "{:?}", registry.tool_names());
    assert!(changes.has_changed().unwrap());
    let added = call(
        &registry,
        "py.added_later",
        json!({}),
        ToolCallOptions::default(),
    )
    .await;
    assert!(added.error.is_none(), "{added:?}");
}

#[tokio::test]
async fn a_server_that_hangs_or_talks_garbage_fails_with_a_code_and_others_keep_working() {
    let registry = registry();
    let mut quick = limits();
    // Short enough that the hanging server fails within the test, long enough for a Python
    // server to start on a loaded two-core machine (3 s was not: the good one timed out too).
    quick.connect_timeout = Duration::from_secs(10);
    let config = json!({"mcpServers": {
        "hangs": {"command": "python3", "args": [peer_script(), "hang"]},
        "garbage": {"command": "python3", "args": [peer_script(), "garbage"]},
        "good": {"command": "python3", "args": [peer_script(), "normal"], "trusted": true},
        "missing": {"command": "/nonexistent/mcp-server"}
    }});
    let mounts = McpMounts::new(&registry, quick);
    mounts.apply(&McpServersConfig::from_json(&config).unwrap());
    for name in ["hangs", "garbage", "missing"] {
        let status = mounts
            .wait_until_settled(name, Duration::from_secs(30))
            .await
            .unwrap();
        match &status.state {
            ServerState::Failed { code, message, .. } => {
                // Local commands: a start failure, not a remote one (issue 55, E12).
                assert_eq!(code, MCP_SERVER_START_FAILED, "{name}: {message}");
            }
            other => panic!("{name}: {other:?}"),
        }
        assert!(status.tools.is_empty());
    }
    let good = mounts
        .wait_until_settled("good", Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(good.state, ServerState::Ready, "the good server connects");
    let echoed = call(
        &registry,
        "good.echo",
        json!({"text": "fine"}),
        ToolCallOptions::default(),
    )
    .await;
    assert!(echoed.error.is_none(), "{echoed:?}");
    let masked = serde_json::to_string(&mounts.statuses()).unwrap();
    assert!(masked.contains("\"state\":\"failed\""), "{masked}");
}

#[tokio::test]
async fn huge_and_endless_tool_lists_are_bounded() {
    let registry = registry();
    let mut small = limits();
    small.max_tools = 150;
    small.max_pages = 20;
    let config = json!({"mcpServers": {
        "huge": {"command": "python3", "args": [peer_script(), "huge_list"]},
        "endless": {"command": "python3", "args": [peer_script(), "endless_pages"]}
    }});
    let mounts = McpMounts::new(&registry, small);
    mounts.apply(&McpServersConfig::from_json(&config).unwrap());
    let huge = mounts
        .wait_until_settled("huge", Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(huge.state, ServerState::Ready, "{huge:?}");
    assert_eq!(huge.tools.len(), 150);
    assert!(
        huge.skipped
            .iter()
            .any(|skipped| skipped.reason.contains("more than 150 tools")),
        "{:?}",
        huge.skipped
    );
    let endless = mounts
        .wait_until_settled("endless", Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(endless.tools.len(), 20, "{endless:?}");
    assert!(
        endless
            .skipped
            .iter()
            .any(|skipped| skipped.reason.contains("past 20 pages"))
    );
}

#[tokio::test]
async fn bad_names_and_schemas_are_skipped_with_reasons() {
    let registry = registry();
    let config = json!({"mcpServers": {
        "names": {"command": "python3", "args": [peer_script(), "bad_names"]},
        "schemas": {"command": "python3", "args": [peer_script(), "bad_schemas"]}
    }});
    let mounts = McpMounts::new(&registry, limits());
    mounts.apply(&McpServersConfig::from_json(&config).unwrap());
    let names = mounts
        .wait_until_settled("names", Duration::from_secs(30))
        .await
        .unwrap();
    let mut mounted = names.tools.clone();
    mounted.sort();
    assert_eq!(mounted, ["names.a.b", "names.dup", "names.ok"], "{names:?}");
    let reasons: Vec<&str> = names
        .skipped
        .iter()
        .map(|skipped| skipped.reason.as_str())
        .collect();
    assert_eq!(names.skipped.len(), 4, "{reasons:?}");
    assert!(
        names
            .skipped
            .iter()
            .any(|skipped| skipped.name == "ctl\\u{7}x"),
        "{:?}",
        names.skipped
    );
    let schemas = mounts
        .wait_until_settled("schemas", Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(schemas.tools, ["schemas.ok"], "{schemas:?}");
    assert_eq!(schemas.skipped.len(), 4, "{:?}", schemas.skipped);
    let ok = call(
        &registry,
        "schemas.ok",
        json!({}),
        approved(&Person::approving()),
    )
    .await;
    assert!(ok.error.is_none(), "{ok:?}");
}

#[tokio::test]
async fn a_hundred_megabyte_result_is_refused_without_taking_the_server_down() {
    let registry = registry();
    let (_mounts, _) = mount(
        &registry,
        stdio_server("py", "big_result", json!({"trusted": true})),
        limits(),
    )
    .await;
    let options = ToolCallOptions::default().with_timeout_ms(20_000);
    let started = std::time::Instant::now();
    let flood = call(&registry, "py.flood", json!({}), options).await;
    let error = flood.error.expect("a 100 MB result never arrives whole");
    assert_eq!(error.code, MCP_REMOTE_RESULT_TOO_LARGE, "{error:?}");
    assert!(
        error.message.contains("more than the 16777216 bytes"),
        "{}",
        error.message
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "answered when the line ended, not at the call's timeout"
    );
    // The connection stays up: the next call is answered.
    let ok = call(&registry, "py.ok", json!({}), ToolCallOptions::default()).await;
    assert!(ok.error.is_none(), "{ok:?}");
}

#[tokio::test]
async fn streamable_http_servers_mount_too() {
    for revision in REVISIONS {
        streamable_http_servers_mount_too_on(revision).await;
    }
}

async fn streamable_http_servers_mount_too_on(revision: &str) {
    let port = free_port();
    let mut child = tokio::process::Command::new("python3")
        .args([
            peer_script(),
            "normal".into(),
            "--http".into(),
            port.to_string(),
        ])
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let registry = registry();
    let config = json!({"mcpServers": {"web": {"url": url, "protocolVersion": revision, "headers": {"Authorization": "Bearer not-a-secret-test-token"}}}});
    let mounts = McpMounts::new(&registry, limits());
    mounts.apply(&McpServersConfig::from_json(&config).unwrap());
    let ready = wait_for_state(&mounts, "web", |state| *state == ServerState::Ready).await;
    assert!(ready, "{:?}", mounts.status("web"));
    let echoed = call(
        &registry,
        "web.echo",
        json!({"text": "over http"}),
        approved(&Person::approving()),
    )
    .await;
    assert_eq!(echoed.structured_content.unwrap()["text"], "over http");
    child.kill().await.unwrap();
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn wait_for(mut check: impl FnMut() -> bool) -> bool {
    for _ in 0..200 {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    check()
}

async fn wait_for_state(
    mounts: &McpMounts,
    name: &str,
    want: impl Fn(&ServerState) -> bool,
) -> bool {
    let mut changes = mounts.changes();
    let waited = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if mounts
                .status(name)
                .is_some_and(|status| want(&status.state))
            {
                return;
            }
            let _ = changes.changed().await;
        }
    });
    waited.await.is_ok()
}

/// A server's own question during a call is never answered for the person: on 2026-07-28 its
/// `input_required` round is declined with a code; on 2025-11-25 (where the server asks
/// although we never offered elicitation) the `elicitation/create` is declined and the result
/// the server then gives carries a note saying so.
#[tokio::test]
async fn a_servers_question_during_a_call_is_never_accepted_on_the_persons_behalf() {
    for revision in REVISIONS {
        let (registry, _mounts, _) = py_on(revision, json!({"trusted": true})).await;
        let asked = call(&registry, "py.ask", json!({}), ToolCallOptions::default()).await;
        if revision == "2026-07-28" {
            let error = asked
                .error
                .clone()
                .expect("an input round is declined with a code");
            assert_eq!(error.code, MCP_REMOTE_INPUT_DECLINED, "{error:?}");
        } else {
            assert_eq!(
                asked.structured_content.as_ref().unwrap()["action"],
                "decline"
            );
            let text = tool_protocol::stringify_tool_content(&asked.content);
            assert!(
                text.contains("asked for input during this call (\"python-misbehaving-server asks: may I go on?\"); it was declined"),
                "{text}"
            );
        }
        assert!(!format!("{asked:?}").contains("\"accept\""), "{asked:?}");
    }
}

/// With someone to ask (`answer_questions_with`), a server's question during a call reaches the
/// person as that call's question, on both revisions (2025-11-25: an `elicitation/create`,
/// 2026-07-28: an `input_required` round answered by resending the call), and the person's
/// answer is what the server gets: accepted values, or a decline.
#[tokio::test]
async fn a_servers_question_during_a_call_reaches_the_person_and_their_answer_the_server() {
    for revision in REVISIONS {
        let registry = registry();
        let questions = QuestionQueue::new();
        let mounts = McpMounts::new(&registry, limits());
        mounts.answer_questions_with(Arc::new(questions.clone()));
        let config = stdio_server_on(revision, "py", "normal", json!({"trusted": true}));
        mounts.apply(&McpServersConfig::from_json(&config).unwrap());
        mounts
            .wait_until_settled("py", Duration::from_secs(30))
            .await
            .unwrap();
        for (answer, expected) in [
            (
                QuestionAnswer::Accept(json!({"confirm": true}).as_object().unwrap().clone()),
                json!({"action": "accept", "content": {"confirm": true}}),
            ),
            (
                QuestionAnswer::Decline,
                json!({"action": "decline", "content": null}),
            ),
        ] {
            let person = {
                let questions = questions.clone();
                tokio::spawn(async move {
                    let mut updates = questions.subscribe();
                    let asked = updates
                        .wait_for(|pending| !pending.is_empty())
                        .await
                        .unwrap()[0]
                        .clone();
                    questions.answer(&asked.id, answer).unwrap();
                    asked
                })
            };
            let result = call(&registry, "py.ask", json!({}), ToolCallOptions::default()).await;
            let asked = person.await.unwrap();
            assert_eq!(asked.name, "py.ask", "{revision}");
            assert_eq!(asked.asked_by, "MCP server \"py\"");
            assert_eq!(
                asked.message,
                "python-misbehaving-server asks: may I go on?"
            );
            assert_eq!(asked.tool_call_id, Some("c1".into()));
            assert_eq!(
                asked.requested_schema["properties"]["confirm"]["type"], "boolean",
                "{asked:?}"
            );
            assert!(result.error.is_none(), "{revision}: {result:?}");
            assert_eq!(
                result.structured_content.as_ref().unwrap(),
                &expected,
                "{revision}"
            );
            assert!(
                !tool_protocol::stringify_tool_content(&result.content)
                    .contains("was declined: no person"),
                "{revision}: {result:?}"
            );
        }
        assert!(questions.snapshot().is_empty());
    }
}

/// A server that redirects to another origin never gets our configured headers there: the
/// redirect is not followed, and the mount fails with a code.
#[tokio::test]
async fn a_redirect_to_another_origin_is_not_followed_with_the_configured_headers() {
    let seen: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let recorder = {
        let seen = Arc::clone(&seen);
        axum::Router::new().fallback(move |headers: axum::http::HeaderMap| {
            let seen = Arc::clone(&seen);
            async move {
                let names = headers.keys().map(|name| name.to_string());
                seen.lock().unwrap().extend(names);
                axum::http::StatusCode::NOT_FOUND
            }
        })
    };
    let other_origin = serve_router(recorder).await;
    let redirecting = axum::Router::new().fallback(move || {
        let to = format!("{other_origin}/mcp");
        async move {
            (
                axum::http::StatusCode::TEMPORARY_REDIRECT,
                [(axum::http::header::LOCATION, to)],
            )
        }
    });
    let url = format!("{}/mcp", serve_router(redirecting).await);
    let registry = registry();
    let mut quick = limits();
    quick.connect_timeout = Duration::from_secs(5);
    let config =
        json!({"mcpServers": {"moved": {"url": url, "headers": {"X-Api-Key": "k-123456"}}}});
    let mounts = McpMounts::new(&registry, quick);
    mounts.apply(&McpServersConfig::from_json(&config).unwrap());
    let status = mounts
        .wait_until_settled("moved", Duration::from_secs(20))
        .await
        .unwrap();
    assert!(
        matches!(&status.state, ServerState::Failed { code, .. } if code == MCP_REMOTE_CONNECT_FAILED),
        "{status:?}"
    );
    assert!(
        seen.lock().unwrap().is_empty(),
        "another origin got {:?}",
        seen.lock().unwrap()
    );
}

/// Serves `router` on a loopback port; returns `http://127.0.0.1:<port>`.
async fn serve_router(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    tokio::spawn(async move { axum::serve(listener, router).await });
    origin
}
