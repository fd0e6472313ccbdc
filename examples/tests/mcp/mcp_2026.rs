//! The studio's `/mcp` on protocol 2026-07-28, in raw JSON-RPC: discovery without a session,
//! and an approval asked with `input_required` before a restart and answered after it (the
//! sealing key lives in the data directory, the single-use record in its durable store).

use live_code_studio::host::mcp_state_key::MCP_STATE_KEY_FILE;
use live_code_studio::host::{self, RunningStudio, StudioOptions};
use serde_json::{Value, json};

const VERSION: &str = "2026-07-28";

async fn studio(data: &std::path::Path) -> RunningStudio {
    let options = StudioOptions::ephemeral(data);
    host::start(options).await.unwrap()
}

/// One self-contained 2026-07-28 request (token, `_meta`, standard headers); the response.
async fn send(studio: &RunningStudio, id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "studio-2026-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    });
    let mut request = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{}/mcp", studio.addr.port()))
        .header("x-studio-token", studio.token())
        .header("accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", VERSION)
        .header("Mcp-Method", method);
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        request = request.header("Mcp-Name", name);
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let response = request.json(&body).send().await.unwrap();
    assert!(response.headers().get("mcp-session-id").is_none());
    let text = response.text().await.unwrap();
    let messages: Vec<Value> = match serde_json::from_str::<Value>(&text) {
        Ok(message) => vec![message],
        Err(_) => text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect(),
    };
    messages
        .into_iter()
        .find(|message| message["id"] == json!(id))
        .unwrap_or_else(|| panic!("no answer to {method}: {text}"))
}

#[tokio::test]
async fn an_input_required_approval_survives_a_studio_restart_once() {
    let data = tempfile::tempdir().unwrap();
    let first = studio(data.path()).await;
    let discovered = send(&first, 1, "server/discover", json!({})).await;
    let versions = discovered["result"]["supportedVersions"].clone();
    assert!(
        versions.as_array().unwrap().contains(&json!(VERSION)),
        "{discovered}"
    );

    let call = json!({"name": "workspace.createFile",
        "arguments": {"path": "notes.txt", "source": "asked before the restart"}});
    let asked = send(&first, 2, "tools/call", call.clone()).await;
    let asked = &asked["result"];
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    assert_eq!(
        asked["inputRequests"]["approval"]["method"],
        "elicitation/create"
    );
    // The confirmation carries the proposed change (issue 34), described before anything ran.
    let message = asked["inputRequests"]["approval"]["params"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("Proposed change:\nadded notes.txt +1 −0"),
        "{message}"
    );
    assert!(
        message.contains("  + asked before the restart"),
        "{message}"
    );
    assert!(data.path().join(MCP_STATE_KEY_FILE).exists());
    let mut retry = call.clone();
    retry["requestState"] = asked["requestState"].clone();
    retry["inputResponses"] = json!({"approval": {"action": "accept", "content": {}}});
    first.shutdown().await;

    let second = studio(data.path()).await;
    let done = send(&second, 3, "tools/call", retry.clone()).await;
    assert_eq!(done["result"]["isError"], false, "{done}");
    let read = send(
        &second,
        4,
        "tools/call",
        json!({"name": "workspace.readFile", "arguments": {"path": "notes.txt"}}),
    )
    .await;
    assert_eq!(
        read["result"]["structuredContent"]["source"], "asked before the restart",
        "{read}"
    );
    let replay = send(&second, 5, "tools/call", retry).await;
    assert_eq!(
        replay["error"]["data"]["code"], "MCP_REQUEST_STATE_REPLAYED",
        "{replay}"
    );
    second.shutdown().await;
}
