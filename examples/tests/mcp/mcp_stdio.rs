//! `studio mcp` over stdio with an rmcp client: the binary serves the folder's workspace
//! headless, stdout carries only MCP, and approvals reach the client through elicitation.

use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ErrorCode};
use rmcp::service::ServiceError;
use serde_json::json;

use crate::support::mcp::{Person, call, error, read};

fn spawn_studio(root: &std::path::Path) -> tokio::process::Child {
    spawn_studio_with(root, &[])
}

fn spawn_studio_with(root: &std::path::Path, extra: &[&str]) -> tokio::process::Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_studio"))
        .arg("mcp")
        .args(extra)
        .arg("--folder")
        .arg(root.join("site"))
        .arg("--data-dir")
        .arg(root.join("data"))
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

fn site() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("site")).unwrap();
    std::fs::write(root.path().join("site/index.html"), "<h1>folder</h1>\n").unwrap();
    std::fs::write(root.path().join("site/notes.txt"), "keep\n").unwrap();
    root
}

#[tokio::test]
async fn studio_mcp_serves_the_folder_and_asks_the_client_to_approve() {
    let root = site();
    let mut child = spawn_studio(root.path());
    let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let person = Person::approving();
    // Info-level logging is on: a single log line on stdout would break the handshake.
    let client = person.clone().serve(transport).await.unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "live-code-studio");
    let (revision, source) = read(&client, "index.html").await;
    assert_eq!(source, "<h1>folder</h1>\n");
    let written = call(
        &client,
        "workspace.writeFile",
        json!({"path": "index.html", "source": "<h1>mcp</h1>\n", "expectedRevision": revision}),
    )
    .await;
    assert_eq!(written["isError"], false, "{written}");
    assert_eq!(read(&client, "index.html").await.1, "<h1>mcp</h1>\n");
    assert_eq!(person.asked.lock().unwrap().len(), 1);
    let unknown = client
        .call_tool(CallToolRequestParams::new("workspace.nope"))
        .await
        .unwrap_err();
    let ServiceError::McpError(unknown) = unknown else {
        panic!("{unknown:?}")
    };
    assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(unknown.data.unwrap()["code"], "TOOL_NOT_FOUND");
    client.cancel().await.unwrap();
    let status = tokio::time::timeout(std::time::Duration::from_secs(20), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(
        status.success(),
        "studio mcp exits cleanly when stdin closes: {status}"
    );
}

#[tokio::test]
async fn studio_mcp_denies_mutations_when_nobody_can_approve() {
    let root = site();
    let mut child = spawn_studio(root.path());
    let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = Person::absent().serve(transport).await.unwrap();
    let result = call(
        &client,
        "workspace.deleteFile",
        json!({"path": "notes.txt"}),
    )
    .await;
    assert_eq!(error(&result)["code"], "TOOL_POLICY_DENIED");
    assert_eq!(
        error(&result)["details"],
        json!({"approvalRoute": "unavailable", "decidedBy": "host"})
    );
    // The denial names the real ways to approve, not a page this process does not have.
    let message = error(&result)["message"].as_str().unwrap().to_owned();
    assert!(message.contains("supports elicitation"), "{message}");
    assert!(message.contains("studio mcp --approve-with"), "{message}");
    assert_eq!(read(&client, "notes.txt").await.1, "keep\n");
    client.cancel().await.unwrap();
    let _ = child.wait().await;
}

async fn running_studio() -> (live_code_studio::host::RunningStudio, tempfile::TempDir) {
    let data = tempfile::tempdir().unwrap();
    let options = live_code_studio::host::StudioOptions::ephemeral(data.path());
    (live_code_studio::host::start(options).await.unwrap(), data)
}

#[tokio::test(flavor = "multi_thread")]
async fn approve_with_asks_a_running_studios_page() {
    let (studio, _data) = running_studio().await;
    let url = format!("http://127.0.0.1:{}", studio.addr.port());
    let root = site();
    let mut child = spawn_studio_with(
        root.path(),
        &["--approve-with", &url, "--token", studio.token()],
    );
    let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = Person::absent().serve(transport).await.unwrap();

    // No page open on the running studio: a clear, retryable failure, and nothing changes.
    let unattended = call(
        &client,
        "workspace.deleteFile",
        json!({"path": "notes.txt"}),
    )
    .await;
    assert_eq!(
        error(&unattended)["code"],
        "TOOL_POLICY_FAILED",
        "{unattended}"
    );
    assert_eq!(error(&unattended)["retryable"], true);
    assert!(
        error(&unattended)["message"]
            .as_str()
            .unwrap()
            .contains("No studio page is open"),
        "{unattended}"
    );
    assert_eq!(read(&client, "notes.txt").await.1, "keep\n");

    // With a page open, the running studio's queue shows the call and the person decides.
    let _page = studio.state.pages.attach();
    let approvals = studio.state.approvals.clone();
    let decide = |decision| {
        let approvals = approvals.clone();
        tokio::spawn(async move {
            let mut updates = approvals.subscribe();
            let pending = updates
                .wait_for(|pending| !pending.is_empty())
                .await
                .unwrap()
                .clone();
            assert_eq!(pending[0].source.as_str(), "mcp");
            // Reviewed as a call that runs elsewhere: never narrowed, and said so.
            let call = approvals
                .pending_call(&pending[0].id)
                .expect("kept for review");
            assert!(!call.accepts_changes);
            assert!(!approvals.resolve_with_changes(
                &pending[0].id,
                tool_context::ApprovedChanges {
                    arguments: call.arguments.clone(),
                    note: String::new(),
                },
            ));
            let name = pending[0].name.clone();
            assert!(approvals.resolve(&pending[0].id, decision));
            name
        })
    };
    let denier = decide(tool_context::ApprovalDecision::Deny);
    let denied = call(
        &client,
        "workspace.deleteFile",
        json!({"path": "notes.txt"}),
    )
    .await;
    assert_eq!(denier.await.unwrap(), "workspace.deleteFile");
    assert_eq!(error(&denied)["code"], "TOOL_POLICY_DENIED", "{denied}");
    assert_eq!(read(&client, "notes.txt").await.1, "keep\n");
    let approver = decide(tool_context::ApprovalDecision::Allow);
    let deleted = call(
        &client,
        "workspace.deleteFile",
        json!({"path": "notes.txt"}),
    )
    .await;
    assert_eq!(approver.await.unwrap(), "workspace.deleteFile");
    assert_eq!(deleted["isError"], false, "{deleted}");
    client.cancel().await.unwrap();
    let _ = child.wait().await;
    studio.shutdown().await;
}
