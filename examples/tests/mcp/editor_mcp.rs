//! The Live Code Editor's `editor.*` catalog over MCP (streamable HTTP) on a real loopback
//! studio: the same tools, guards and approvals as the page and the local agent.

use live_code_studio::host::{self, RunningStudio, StudioOptions};
use serde_json::{Value, json};

use crate::support::mcp::{Person, call, connect, error};

const EDITOR_TOOLS: [&str; 12] = [
    "editor.getStatus",
    "editor.listFiles",
    "editor.openFile",
    "editor.getDocument",
    "editor.getPreviewStatus",
    "editor.setDocument",
    "editor.applyPatch",
    "editor.setScenario",
    "editor.resetDocument",
    "editor.revertFile",
    "editor.saveFile",
    "editor.saveAll",
];

async fn start(data_dir: &std::path::Path) -> RunningStudio {
    host::start(StudioOptions::ephemeral(data_dir))
        .await
        .expect("studio starts")
}

fn clocks(result: &Value) -> (u64, u64) {
    let content = &result["structuredContent"];
    (
        content["workspaceRevision"].as_u64().unwrap(),
        content["documentRevision"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn mcp_clients_use_the_editor_tools_with_both_clocks_and_approvals() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let person = Person::approving();
    let client = connect(&studio, person.clone()).await;
    let listed: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|tool| tool.name.to_string())
        .filter(|name| name.starts_with("editor."))
        .collect();
    assert_eq!(listed, EDITOR_TOOLS);

    let document = call(&client, "editor.getDocument", json!({})).await;
    assert_eq!(document["isError"], false, "{document}");
    let (workspace, revision) = clocks(&document);
    assert!(person.asked.lock().unwrap().is_empty(), "reads ask nobody");

    let stale = call(
        &client,
        "editor.setDocument",
        json!({"source": "<h1>Stale</h1>", "expectedDocumentRevision": revision + 1}),
    )
    .await;
    assert_eq!(error(&stale)["code"], "WORKSPACE_REVISION_CONFLICT");

    // Approved through the client's elicitation: both clocks move, the preview acknowledged.
    let written = call(
        &client,
        "editor.setDocument",
        json!({"source": "<h1>From MCP</h1>", "expectedDocumentRevision": revision}),
    )
    .await;
    assert_eq!(written["isError"], false, "{written}");
    let (next_workspace, next_revision) = clocks(&written);
    assert!(
        next_workspace > workspace && next_revision > revision,
        "{written}"
    );
    assert_eq!(
        written["structuredContent"]["preview"]["revision"],
        next_revision
    );
    assert!(
        person
            .asked
            .lock()
            .unwrap()
            .iter()
            .any(|message| message.contains("editor.setDocument"))
    );
    let reread = call(&client, "editor.getDocument", json!({})).await;
    assert_eq!(reread["structuredContent"]["source"], "<h1>From MCP</h1>");

    // Saving needs a folder the user opened: approved, then refused with a code, nothing written.
    let unsaved = call(&client, "editor.saveAll", json!({})).await;
    assert_eq!(unsaved["isError"], true, "{unsaved}");
    assert!(
        error(&unsaved)["code"]
            .as_str()
            .unwrap()
            .starts_with("WORKSPACE_"),
        "{unsaved}"
    );
    client.cancel().await.unwrap();

    // A client that cannot be asked is denied and the document stays.
    let absent = connect(&studio, Person::absent()).await;
    let denied = call(
        &absent,
        "editor.setDocument",
        json!({"source": "<h1>Denied</h1>"}),
    )
    .await;
    assert_eq!(error(&denied)["code"], "TOOL_POLICY_DENIED");
    let kept = call(&absent, "editor.getDocument", json!({})).await;
    assert_eq!(kept["structuredContent"]["source"], "<h1>From MCP</h1>");
    absent.cancel().await.unwrap();
    studio.shutdown().await;
}
