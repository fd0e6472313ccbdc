//! The running studio's `/mcp` endpoint (streamable HTTP) with an rmcp client: the token and
//! Host/Origin guard, the shared registry, and approvals through the studio's queue while a
//! page is attached, elicitation otherwise, an explained denial when neither is possible.

use live_code_editor::workspace::bridge::PreviewStatus;
use live_code_studio::host::{self, RunningStudio, StudioOptions};
use serde_json::json;
use tool_context::ApprovalDecision;

use crate::support::mcp::{Person, call, connect, error, read};

async fn studio() -> (RunningStudio, tempfile::TempDir) {
    let data = tempfile::tempdir().unwrap();
    let options = StudioOptions::ephemeral(data.path());
    (host::start(options).await.unwrap(), data)
}

fn mcp_url(studio: &RunningStudio) -> String {
    format!("http://127.0.0.1:{}/mcp", studio.addr.port())
}

fn initialize_body() -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}
    }})
}

#[tokio::test]
async fn mcp_requests_need_the_token_and_the_studio_origin() {
    let (studio, _data) = studio().await;
    let http = reqwest::Client::new();
    let post = |token: Option<&str>, origin: Option<&str>| {
        let mut request = http
            .post(mcp_url(&studio))
            .header("accept", "application/json, text/event-stream")
            .json(&initialize_body());
        if let Some(token) = token {
            request = request.header("x-studio-token", token);
        }
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    // A missing or wrong token is an authentication failure: 401 with a Bearer challenge.
    let missing = post(None, None).await.unwrap();
    assert_eq!(missing.status(), 401);
    let challenge = missing.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    let body: serde_json::Value = missing.json().await.unwrap();
    assert_eq!(body["error"]["code"], "STUDIO_TOKEN_REQUIRED");
    let wrong = post(Some("not-the-token"), None).await.unwrap();
    assert_eq!(wrong.status(), 401);
    assert!(wrong.headers().contains_key("www-authenticate"));
    let foreign = post(Some(studio.token()), Some("http://evil.example"))
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    let body: serde_json::Value = foreign.json().await.unwrap();
    assert_eq!(body["error"]["code"], "STUDIO_FOREIGN_ORIGIN");
    // Reads of the endpoint (the session event stream) need the token too.
    let stream = http
        .get(mcp_url(&studio))
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 401);
    let own = post(
        Some(studio.token()),
        Some(&format!("http://127.0.0.1:{}", studio.addr.port())),
    )
    .await
    .unwrap();
    assert_eq!(own.status(), 200);
    studio.shutdown().await;
}

#[tokio::test]
async fn a_bearer_token_authenticates_and_a_session_can_be_deleted() {
    let (studio, _data) = studio().await;
    let http = reqwest::Client::new();
    let initialized = http
        .post(mcp_url(&studio))
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {}", studio.token()))
        .json(&initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(initialized.status(), 200);
    let session = initialized.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let wrong_bearer = http
        .post(mcp_url(&studio))
        .header("accept", "application/json, text/event-stream")
        .header("authorization", "Bearer not-the-token")
        .json(&initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_bearer.status(), 401);
    let deleted = http
        .delete(mcp_url(&studio))
        .header("authorization", format!("Bearer {}", studio.token()))
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(
        [200, 204].contains(&deleted.status().as_u16()),
        "DELETE answered {}: {}",
        deleted.status(),
        deleted.text().await.unwrap()
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn unknown_paths_such_as_oauth_discovery_are_404() {
    let (studio, _data) = studio().await;
    let http = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{}", studio.addr.port());
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
    ] {
        // What an MCP client's OAuth discovery sends: a plain GET, no token.
        let discovery = http.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(discovery.status(), 404, "GET {path}");
        let body: serde_json::Value = discovery.json().await.unwrap();
        assert_eq!(body["error"]["code"], "STUDIO_NOT_FOUND");
        let tokened = http
            .post(format!("{base}{path}"))
            .header("authorization", format!("Bearer {}", studio.token()))
            .send()
            .await
            .unwrap();
        assert_eq!(tokened.status(), 404, "POST {path}");
    }
    studio.shutdown().await;
}

/// Every `format` value (a string under a `format` key) in a schema.
fn formats(schema: &serde_json::Value, found: &mut Vec<String>) {
    match schema {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("format", serde_json::Value::String(format)) => found.push(format.clone()),
                    _ => formats(value, found),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|item| formats(item, found)),
        _ => {}
    }
}

#[tokio::test]
async fn the_catalog_schemas_use_only_formats_validators_know() {
    let (studio, _data) = studio().await;
    let client = connect(&studio, Person::absent()).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.len() > 20, "the whole catalog is listed");
    let mut found = Vec::new();
    for tool in &tools {
        formats(
            &serde_json::Value::Object((*tool.input_schema).clone()),
            &mut found,
        );
        if let Some(output) = &tool.output_schema {
            formats(&serde_json::Value::Object((**output).clone()), &mut found);
        }
    }
    let unknown: Vec<&String> = found
        .iter()
        .filter(|format| !tool_context_mcp::schema::KNOWN_FORMATS.contains(&format.as_str()))
        .collect();
    assert!(unknown.is_empty(), "formats ajv does not know: {unknown:?}");
    client.cancel().await.unwrap();
    studio.shutdown().await;
}

#[tokio::test]
async fn the_studio_registry_is_served_with_source_mcp() {
    let (studio, _data) = studio().await;
    let client = connect(&studio, Person::absent()).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<String> = tools.iter().map(|tool| tool.name.to_string()).collect();
    assert_eq!(names, studio.state.registry.tool_names());
    let (revision, source) = read(&client, "index.html").await;
    assert!(revision >= 1 && !source.is_empty());
    let sessions = studio.state.trace.sessions();
    let sessions = serde_json::to_value(&sessions).unwrap().to_string();
    assert!(
        sessions.contains("mcp-"),
        "the MCP session shows in the trace: {sessions}"
    );
    client.cancel().await.unwrap();
    studio.shutdown().await;
}

#[tokio::test]
async fn without_a_page_or_elicitation_writes_are_denied_and_change_nothing() {
    let (studio, _data) = studio().await;
    let client = connect(&studio, Person::absent()).await;
    let (revision, source) = read(&client, "index.html").await;
    let result = call(
        &client,
        "workspace.writeFile",
        json!({"path": "index.html", "source": "x", "expectedRevision": revision}),
    )
    .await;
    let error = error(&result);
    assert_eq!(error["code"], "TOOL_POLICY_DENIED");
    assert_eq!(
        error["details"],
        json!({"approvalRoute": "unavailable", "decidedBy": "host"})
    );
    assert!(
        studio.state.approvals.snapshot().is_empty(),
        "nothing waits in the studio queue"
    );
    assert_eq!(read(&client, "index.html").await, (revision, source));
    client.cancel().await.unwrap();
    studio.shutdown().await;
}

#[tokio::test]
async fn with_a_page_attached_the_studio_queue_decides() {
    let (studio, _data) = studio().await;
    // A studio page routes approvals to the studio's queue; rendering the workspace preview, it
    // also acknowledges revisions (below) instead of the headless compiler.
    let _page = studio.state.pages.attach();
    let _viewer = studio.state.workspace.viewers().attach();
    let person = Person::approving();
    let client = connect(&studio, person.clone()).await;
    let (revision, _) = read(&client, "styles.css").await;
    let approvals = studio.state.approvals.clone();
    let approver = tokio::spawn(async move {
        let mut updates = approvals.subscribe();
        let pending = updates
            .wait_for(|pending| !pending.is_empty())
            .await
            .unwrap()
            .clone();
        assert_eq!(pending[0].name, "workspace.writeFile");
        assert_eq!(pending[0].source.as_str(), "mcp");
        // Values are shown, sources never (the card's diff shows the change).
        let preview = pending[0].safe_argument_preview.as_deref().unwrap_or("");
        assert!(preview.contains("path: styles.css"), "{preview}");
        assert!(!preview.contains("source"), "{preview}");
        approvals.resolve(&pending[0].id, ApprovalDecision::Allow)
    });
    // The attached page renders the new revision and acknowledges it once the call has
    // reported a progress heartbeat while waiting for that acknowledgement.
    let manager = studio.state.workspace.manager().clone();
    let progress = person.progress.clone();
    let before = revision;
    let page = tokio::spawn(async move {
        let heartbeat = "Running \"workspace.writeFile\".";
        while !progress
            .lock()
            .unwrap()
            .iter()
            .any(|message| message == heartbeat)
        {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let revision = manager.status().await.revision;
        assert!(revision > before, "the write moved the revision");
        manager.acknowledge_preview(revision, PreviewStatus::Ready)
    });
    let result = call(
        &client,
        "workspace.writeFile",
        json!({"path": "styles.css", "source": "body{}", "expectedRevision": revision}),
    )
    .await;
    assert!(approver.await.unwrap());
    assert!(
        page.await.unwrap(),
        "the acknowledgement was for the current revision"
    );
    assert_eq!(result["isError"], false, "{result}");
    assert!(
        person.asked.lock().unwrap().is_empty(),
        "the page answered; the client was not asked"
    );
    let progress = person.progress.lock().unwrap().clone();
    assert!(
        progress
            .iter()
            .any(|message| message
                .starts_with("Waiting for approval of \"workspace.writeFile\" (desk)")),
        "{progress:?}"
    );
    assert!(
        progress
            .iter()
            .any(|message| message == "Running \"workspace.writeFile\"."),
        "heartbeat while the preview ack is awaited: {progress:?}"
    );
    assert_eq!(read(&client, "styles.css").await.1, "body{}");
    client.cancel().await.unwrap();
    studio.shutdown().await;
}

#[tokio::test]
async fn without_a_page_elicitation_approves_and_stale_writes_conflict() {
    let (studio, _data) = studio().await;
    let person = Person::approving();
    let client = connect(&studio, person.clone()).await;
    let (revision, _) = read(&client, "index.html").await;
    let written = call(
        &client,
        "workspace.writeFile",
        json!({"path": "index.html", "source": "<h1>mcp</h1>", "expectedRevision": revision}),
    )
    .await;
    assert_eq!(written["isError"], false, "{written}");
    let (current, source) = read(&client, "index.html").await;
    assert_eq!(source, "<h1>mcp</h1>");
    let stale = call(
        &client,
        "workspace.writeFile",
        json!({"path": "index.html", "source": "old", "expectedRevision": revision}),
    )
    .await;
    let error = error(&stale);
    assert_eq!(error["code"], "WORKSPACE_REVISION_CONFLICT");
    assert_eq!(error["retryable"], true);
    assert_eq!(error["details"]["expectedRevision"], revision);
    assert_eq!(error["details"]["currentRevision"], current);
    let asked = person.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2);
    assert!(
        asked[0].contains("workspace.writeFile") && asked[0].contains("path: index.html"),
        "{}",
        asked[0]
    );
    client.cancel().await.unwrap();
    studio.shutdown().await;
}
