//! `studio mcp` over stdio with an rmcp client: the binary serves the folder's workspace
//! headless, stdout carries only MCP, and approvals reach the client through elicitation.

mod mcp_support;

use std::process::Stdio;

use mcp_support::{Person, call, error, read};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ErrorCode};
use rmcp::service::ServiceError;
use serde_json::json;

fn spawn_studio(root: &std::path::Path) -> tokio::process::Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_studio"))
        .arg("mcp")
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
        json!({"approvalRoute": "unavailable"})
    );
    assert_eq!(read(&client, "notes.txt").await.1, "keep\n");
    client.cancel().await.unwrap();
    let _ = child.wait().await;
}
