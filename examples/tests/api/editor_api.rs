//! API tests of the Live Code Editor surface (`editor.*`) on a real loopback studio.

use std::time::Duration;

use futures::StreamExt;
use live_code_studio::host::{self, RunningStudio, StudioOptions};
use live_code_studio::kit::preview_http::PREVIEW_CSP;
use serde_json::{Value, json};

use crate::support::http::StudioClient;

/// The studio's API with this suite's helpers.
type Client = StudioClient<Suite>;
/// Marks this suite's helpers on [`StudioClient`].
enum Suite {}

impl Client {
    async fn get(&self, path: &str) -> Value {
        self.http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    async fn get_raw(&self, path: &str) -> reqwest::Response {
        self.http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap()
    }

    async fn ok(&self, name: &str, arguments: Value) -> Value {
        let result = self.call(name, arguments).await;
        assert!(
            result.get("isError").is_none(),
            "{name} failed unexpectedly: {result}"
        );
        result["structuredContent"].clone()
    }

    async fn error_code(&self, name: &str, arguments: Value) -> String {
        let result = self.call(name, arguments).await;
        assert_eq!(result["isError"], true, "{name} should fail: {result}");
        result["error"]["code"].as_str().unwrap().to_owned()
    }

    async fn document(&self) -> Value {
        self.ok("editor.getDocument", json!({})).await
    }
}

async fn start(data_dir: &std::path::Path) -> RunningStudio {
    host::start(StudioOptions::ephemeral(data_dir))
        .await
        .expect("studio starts")
}

fn revisions(result: &Value) -> (u64, u64) {
    (
        result["workspaceRevision"].as_u64().unwrap(),
        result["documentRevision"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn the_two_clocks_move_separately_in_every_result() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let studio_revision = client.ok("workspace.getStatus", json!({})).await["revision"].clone();

    let status = client.ok("editor.getStatus", json!({})).await;
    assert_eq!(status["storageMode"], "sqlite");
    assert_eq!(status["activePath"], "index.html");
    assert_eq!(status["scenario"], "counter");
    assert_eq!(status["folder"]["connected"], false);
    assert_eq!(status["browserAttached"], false);
    let (workspace, document) = revisions(&status);

    let listed = client.ok("editor.listFiles", json!({})).await;
    let paths: Vec<&str> = listed["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["index.html", "styles.css", "app.js", "assets/logo.svg"]
    );
    assert_eq!(revisions(&listed), (workspace, document));

    let opened = client
        .ok("editor.openFile", json!({"path": "styles.css"}))
        .await;
    assert_eq!(opened["activePath"], "styles.css");
    assert_eq!(
        revisions(&opened),
        (workspace, document + 1),
        "selection moves only the document clock"
    );
    assert_eq!(
        opened["preview"],
        json!({"revision": document + 1, "status": "compiled"}),
        "no page attached: acknowledged headlessly"
    );

    let scenario = client
        .ok("editor.setScenario", json!({"scenario": "greeting"}))
        .await;
    assert_eq!(revisions(&scenario), (workspace, document + 2));
    assert_eq!(scenario["scenario"], "greeting");

    let written = client
        .ok(
            "editor.setDocument",
            json!({"source": "body { color: red; }\n", "expectedDocumentRevision": document + 2}),
        )
        .await;
    assert_eq!(revisions(&written), (workspace + 1, document + 3));
    assert_eq!(written["dirtyPaths"], json!(["styles.css"]));
    assert_eq!(written["preview"]["revision"], document + 3);

    let read = client.document().await;
    assert_eq!(read["source"], "body { color: red; }\n");
    assert_eq!(read["language"], "css");
    assert_eq!(read["dirty"], true);
    assert_eq!(revisions(&read), (workspace + 1, document + 3));
    let preview = client.ok("editor.getPreviewStatus", json!({})).await;
    assert_eq!(preview["preview"]["revision"], document + 3);

    assert_eq!(
        client.ok("workspace.getStatus", json!({})).await["revision"],
        studio_revision,
        "the standalone workspace is a different workspace"
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn a_stale_document_revision_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let before = client.document().await;
    let (workspace, document) = revisions(&before);
    let stale = document - 1;

    let result = client
        .call(
            "editor.setDocument",
            json!({"source": "<p>lost</p>", "expectedDocumentRevision": stale}),
        )
        .await;
    let error = &result["error"];
    assert_eq!(error["code"], "WORKSPACE_REVISION_CONFLICT");
    assert_eq!(error["retryable"], true);
    assert_eq!(
        error["details"],
        json!({"expectedRevision": stale, "currentRevision": document, "clock": "document"})
    );
    for (name, arguments) in [
        (
            "editor.applyPatch",
            json!({"search": "Counter", "replace": "X", "expectedDocumentRevision": stale}),
        ),
        (
            "editor.setScenario",
            json!({"scenario": "todo-list", "expectedDocumentRevision": stale}),
        ),
        (
            "editor.resetDocument",
            json!({"expectedDocumentRevision": stale}),
        ),
    ] {
        assert_eq!(
            client.error_code(name, arguments).await,
            "WORKSPACE_REVISION_CONFLICT"
        );
    }
    let after = client.document().await;
    assert_eq!(after["source"], before["source"]);
    assert_eq!(after["scenario"], "counter");
    assert_eq!(revisions(&after), (workspace, document));
    studio.shutdown().await;
}

#[tokio::test]
async fn open_file_takes_text_files_only() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let before = revisions(&client.ok("editor.getStatus", json!({})).await);

    let asset = client
        .call("editor.openFile", json!({"path": "assets/logo.svg"}))
        .await;
    assert_eq!(asset["error"]["code"], "WORKSPACE_FILE_TYPE_CONFLICT");
    assert_eq!(asset["error"]["details"]["actualKind"], "asset");
    assert_eq!(
        client
            .error_code("editor.openFile", json!({"path": "missing.js"}))
            .await,
        "WORKSPACE_FILE_NOT_FOUND"
    );
    assert_eq!(
        client
            .error_code("editor.openFile", json!({"path": "../secret.js"}))
            .await,
        "WORKSPACE_PATH_INVALID"
    );
    let status = client.ok("editor.getStatus", json!({})).await;
    assert_eq!(status["activePath"], "index.html");
    assert_eq!(revisions(&status), before, "a refused open changes nothing");
    studio.shutdown().await;
}

#[tokio::test]
async fn scenarios_are_preview_data_and_reset_restores_their_example() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);

    let selected = client
        .ok("editor.setScenario", json!({"scenario": "todo-list"}))
        .await;
    let document = selected["documentRevision"].as_u64().unwrap();
    let page = client
        .get_raw(&format!("/editor/preview/{document}"))
        .await
        .text()
        .await
        .unwrap();
    assert!(page.contains(r#"data-scenario="todo-list""#), "{page}");
    assert!(page.contains(r#"id="editor-scenario""#));
    assert!(page.contains("Review the patch"), "the scenario's data");
    assert_eq!(
        client
            .error_code("editor.setScenario", json!({"scenario": "runScript"}))
            .await,
        "TOOL_VALIDATION_FAILED",
        "only the fixed scenarios exist"
    );

    client
        .ok("editor.setDocument", json!({"source": "<p>scratch</p>"}))
        .await;
    let reset = client.ok("editor.resetDocument", json!({})).await;
    assert_eq!(reset["operation"], "resetDocument");
    let html = client.document().await;
    assert!(
        html["source"].as_str().unwrap().contains("To-do runner"),
        "the todo-list example replaced the scratch source"
    );
    client
        .ok("editor.openFile", json!({"path": "app.js"}))
        .await;
    client.ok("editor.resetDocument", json!({})).await;
    assert!(
        client.document().await["source"]
            .as_str()
            .unwrap()
            .contains("open of")
    );
    let tools = client.get("/api/tools").await;
    assert!(
        !tools.to_string().contains("runScript"),
        "no tool runs scripts"
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn patch_and_source_limits_hold_at_the_edge() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);

    let long = "a".repeat(20_000);
    client
        .ok(
            "editor.setDocument",
            json!({"source": format!("<p>{long}</p>")}),
        )
        .await;
    let patched = client
        .ok(
            "editor.applyPatch",
            json!({"search": long, "replace": "b".repeat(20_000)}),
        )
        .await;
    assert_eq!(patched["operation"], "applyPatch");
    for arguments in [
        json!({"search": "b".repeat(20_001), "replace": ""}),
        json!({"search": "b", "replace": "c".repeat(20_001)}),
        json!({"search": "", "replace": "c"}),
    ] {
        assert_eq!(
            client.error_code("editor.applyPatch", arguments).await,
            "TOOL_VALIDATION_FAILED"
        );
    }
    let missing = client
        .call(
            "editor.applyPatch",
            json!({"search": "no such text", "replace": "x"}),
        )
        .await;
    assert_eq!(missing["error"]["code"], "WORKSPACE_PATCH_NOT_FOUND");
    assert!(
        !missing.to_string().contains("no such text"),
        "the search text is never echoed"
    );

    let full = "c".repeat(80_000);
    client
        .ok("editor.setDocument", json!({"source": full}))
        .await;
    assert_eq!(
        client
            .error_code("editor.setDocument", json!({"source": "c".repeat(80_001)}))
            .await,
        "TOOL_VALIDATION_FAILED"
    );
    let before = revisions(&client.document().await);
    assert_eq!(
        client
            .error_code("editor.applyPatch", json!({"search": "c", "replace": "cc"}))
            .await,
        "WORKSPACE_SOURCE_LIMIT",
        "a patch may not grow the document past 80,000 characters"
    );
    let after = client.document().await;
    assert_eq!(after["source"].as_str().unwrap().len(), 80_000);
    assert_eq!(revisions(&after), before);
    studio.shutdown().await;
}

#[tokio::test]
async fn preview_routes_serve_the_current_document_and_refuse_superseded_ones() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let document = client.ok("editor.getStatus", json!({})).await["documentRevision"]
        .as_u64()
        .unwrap();

    let page = client.get_raw(&format!("/editor/preview/{document}")).await;
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["content-security-policy"], PREVIEW_CSP);
    assert_eq!(page.headers()["cache-control"], "no-store");
    let html = page.text().await.unwrap();
    assert!(html.contains("Counter runner") && html.contains("data-scenario=\"counter\""));
    let key = studio.state.security.preview_key();
    let asset_url = format!("/editor/preview/{document}/assets/{key}/assets/logo.svg");
    assert!(html.contains(&asset_url), "assets resolve under the route");
    let asset = client.get_raw(&asset_url).await;
    assert_eq!(asset.status(), 200);
    assert_eq!(asset.headers()["content-type"], "image/svg+xml");
    let unkeyed = format!("/editor/preview/{document}/assets/assets/logo.svg");
    assert_eq!(
        client.get_raw(&unkeyed).await.status(),
        404,
        "the key is needed"
    );

    let changed = client
        .ok("editor.setScenario", json!({"scenario": "greeting"}))
        .await;
    let current = changed["documentRevision"].as_u64().unwrap();
    let gone = client.get_raw(&format!("/editor/preview/{document}")).await;
    assert_eq!(gone.status(), 410);
    assert!(
        gone.text()
            .await
            .unwrap()
            .contains(&format!("superseded by revision {current}"))
    );

    let (status, stale) = client
        .post(
            "/api/editor/preview/ack",
            json!({"type": "context-action.preview.ready", "revision": document}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(stale["accepted"], false, "stale revisions are ignored");
    let (_, failed) = client
        .post(
            "/api/editor/preview/ack",
            json!({"type": "context-action.preview.error", "revision": current, "message": "boom"}),
        )
        .await;
    assert_eq!(failed["accepted"], true);
    let (status, reported) = client
        .post(
            "/api/editor/preview/ack",
            json!({"type": "context-action.preview.runtimeError", "revision": current,
                "kind": "console", "message": "boom", "source": null}),
        )
        .await;
    assert_eq!(
        (status, reported["accepted"].clone()),
        (200, json!(true)),
        "{reported}"
    );
    let preview = client.ok("editor.getPreviewStatus", json!({})).await;
    assert_eq!(
        preview["preview"],
        json!({"revision": current, "status": "error", "message": "boom"})
    );
    let (status, invalid) = client
        .post("/api/editor/preview/ack", json!({"type": "other"}))
        .await;
    assert_eq!(status, 400);
    assert_eq!(invalid["error"]["code"], "STUDIO_INVALID_PREVIEW_MESSAGE");
    studio.shutdown().await;
}

#[tokio::test]
async fn an_attached_page_acknowledges_document_revisions_from_its_iframe() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let url = format!(
        "ws://127.0.0.1:{}/api/events?token={}&client=ui&surface=editor",
        studio.addr.port(),
        studio.token()
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("websocket connects");
    let hello: Value =
        serde_json::from_str(socket.next().await.unwrap().unwrap().to_text().unwrap()).unwrap();
    assert_eq!(hello["type"], "hello");
    assert_eq!(
        client.ok("editor.getStatus", json!({})).await["browserAttached"],
        true
    );

    let patch = tokio::spawn({
        let client = Client::new(&studio);
        async move {
            client
                .call(
                    "editor.applyPatch",
                    json!({"search": "Counter runner", "replace": "Browser runner", "occurrence": "all"}),
                )
                .await
        }
    });
    let published = loop {
        let message: Value =
            serde_json::from_str(socket.next().await.unwrap().unwrap().to_text().unwrap()).unwrap();
        if message["type"] == "surface"
            && message["surface"] == "editor"
            && message["data"]["change"] == "document"
        {
            break message["data"].clone();
        }
    };
    let revision = published["documentRevision"].as_u64().unwrap();
    assert_eq!(
        published["preview"],
        json!({"revision": revision, "status": "waiting"})
    );
    assert_eq!(published["dirtyPaths"], json!(["index.html"]));
    let page = client
        .get_raw(&format!("/editor/preview/{revision}"))
        .await
        .text()
        .await
        .unwrap();
    assert!(page.contains("Browser runner"));
    let (_, ack) = client
        .post(
            "/api/editor/preview/ack",
            json!({"type": "context-action.preview.ready", "revision": revision}),
        )
        .await;
    assert_eq!(ack["accepted"], true);
    let result = patch.await.unwrap();
    assert_eq!(
        result["structuredContent"]["preview"],
        json!({"revision": revision, "status": "ready"}),
        "the mutation reported the browser's acknowledgement: {result}"
    );
    let acked = loop {
        let message: Value =
            serde_json::from_str(socket.next().await.unwrap().unwrap().to_text().unwrap()).unwrap();
        if message["type"] == "surface"
            && message["surface"] == "editor"
            && message["data"]["change"] == "preview"
        {
            break message["data"].clone();
        }
    };
    assert_eq!(acked["preview"]["status"], "ready");

    // A page reporting a runtime error does not undo the patch: the result says it is applied.
    let failing = tokio::spawn({
        let client = Client::new(&studio);
        async move {
            client
                .call(
                    "editor.applyPatch",
                    json!({"search": "Browser runner", "replace": "Broken runner", "occurrence": "all"}),
                )
                .await
        }
    });
    let next = loop {
        let message: Value =
            serde_json::from_str(socket.next().await.unwrap().unwrap().to_text().unwrap()).unwrap();
        if message["type"] == "surface"
            && message["data"]["change"] == "document"
            && message["data"]["documentRevision"].as_u64() > Some(revision)
        {
            break message["data"]["documentRevision"].as_u64().unwrap();
        }
    };
    client
        .post(
            "/api/editor/preview/ack",
            json!({"type": "context-action.preview.error", "revision": next, "message": "boom"}),
        )
        .await;
    let result = failing.await.unwrap();
    let error = &result["error"];
    assert_eq!(error["code"], "PREVIEW_RUNTIME_ERROR", "{result}");
    assert_eq!(error["details"]["committed"], true, "{result}");
    assert_eq!(error["details"]["revision"], next);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("The change was applied")
    );
    let document = client.ok("editor.getDocument", json!({})).await;
    assert!(
        document["source"]
            .as_str()
            .unwrap()
            .contains("Broken runner")
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn the_local_agent_runs_the_editor_sequence_with_approvals() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let (status, run) = client
        .post(
            "/api/agent/runs",
            json!({"prompt": r#"in app.js replace "Count" with "Total""#, "surface": "editor"}),
        )
        .await;
    assert_eq!(status, 200, "{run}");
    let run_id = run["runId"].as_str().unwrap().to_owned();

    let (finished, approved) = approve_until_done(&client, &run_id).await;
    assert_eq!(finished["state"], "completed", "{finished}");
    assert_eq!(approved, ["editor.openFile", "editor.applyPatch"]);
    let steps: Vec<&str> = finished["report"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| step["tool"].as_str().unwrap())
        .collect();
    assert_eq!(
        steps,
        [
            "editor.getStatus",
            "editor.listFiles",
            "editor.openFile",
            "editor.getDocument",
            "editor.applyPatch"
        ]
    );
    let document = client.document().await;
    assert_eq!(document["activePath"], "app.js");
    let source = document["source"].as_str().unwrap();
    assert!(source.contains("'Total'") && !source.contains("'Count'"));
    studio.shutdown().await;
}

#[tokio::test]
async fn the_catalog_lists_every_editor_tool_with_schemas_and_policies() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let tools = client.get("/api/tools").await;
    let editor: Vec<&Value> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|tool| tool["name"].as_str().unwrap().starts_with("editor."))
        .collect();
    let find = |name: &str| {
        editor
            .iter()
            .find(|tool| tool["name"] == name)
            .unwrap_or_else(|| panic!("{name} is listed"))
    };
    for name in [
        "editor.getStatus",
        "editor.listFiles",
        "editor.getDocument",
        "editor.getPreviewStatus",
    ] {
        assert_eq!(find(name)["annotations"]["readOnlyHint"], true, "{name}");
        assert!(find(name)["outputSchema"].is_object(), "{name}");
    }
    for name in [
        "editor.openFile",
        "editor.setDocument",
        "editor.applyPatch",
        "editor.setScenario",
        "editor.resetDocument",
    ] {
        let tool = find(name);
        assert_ne!(tool["annotations"]["readOnlyHint"], true, "{name}");
        let output = &tool["outputSchema"];
        for field in [
            "activePath",
            "workspaceRevision",
            "documentRevision",
            "preview",
        ] {
            assert!(
                output["properties"].get(field).is_some(),
                "{name} output declares {field}"
            );
        }
    }
    let scenario = find("editor.setScenario")["inputSchema"].to_string();
    for name in ["counter", "greeting", "todo-list"] {
        assert!(scenario.contains(&format!("\"{name}\"")), "{scenario}");
    }
    studio.shutdown().await;
}

#[tokio::test]
async fn opening_a_folder_replaces_the_editor_workspace_and_an_empty_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("index.html"), "<h1>From disk</h1>").unwrap();
    std::fs::write(folder.path().join("NOTES.md"), "# notes").unwrap();
    let empty = tempfile::tempdir().unwrap();
    let before = client.ok("editor.getStatus", json!({})).await;

    let (status, refused) = client
        .post(
            "/api/editor/folder/open",
            json!({"path": empty.path().to_str().unwrap()}),
        )
        .await;
    assert_eq!(status, 409);
    assert_eq!(refused["error"]["code"], "WORKSPACE_NO_SUPPORTED_FILES");
    let untouched = client.ok("editor.getStatus", json!({})).await;
    assert_eq!(revisions(&untouched), revisions(&before));
    assert_eq!(untouched["folder"]["connected"], false);
    let (status, missing) = client
        .post(
            "/api/editor/folder/open",
            json!({"path": folder.path().join("absent").to_str().unwrap()}),
        )
        .await;
    assert_eq!(status, 400, "{missing}");

    let (status, opened) = client
        .post(
            "/api/editor/folder/open",
            json!({"path": folder.path().to_str().unwrap(), "expectedWorkspaceRevision": before["workspaceRevision"]}),
        )
        .await;
    assert_eq!(status, 200, "{opened}");
    assert_eq!(opened["import"]["fileCount"], 2);
    let context = &opened["context"];
    assert_eq!(context["activePath"], "index.html");
    assert!(
        context["documentRevision"].as_u64().unwrap()
            > before["documentRevision"].as_u64().unwrap(),
        "new files are a new document revision"
    );
    let status = client.ok("editor.getStatus", json!({})).await;
    assert_eq!(status["folder"]["connected"], true);
    assert_eq!(status["fileCount"], 2);
    assert!(
        client.document().await["source"]
            .as_str()
            .unwrap()
            .contains("From disk")
    );

    client
        .ok("editor.openFile", json!({"path": "NOTES.md"}))
        .await;
    let reset = client.call("editor.resetDocument", json!({})).await;
    assert_eq!(reset["error"]["code"], "WORKSPACE_FILE_TYPE_CONFLICT");
    assert_eq!(
        reset["error"]["details"]["reason"],
        "EDITOR_SCENARIO_EXAMPLE_MISSING"
    );

    let state = client.get("/api/editor/state").await;
    assert_eq!(state["status"]["activePath"], "NOTES.md");
    assert_eq!(state["document"]["source"], "# notes");
    assert_eq!(state["files"].as_array().unwrap().len(), 2);
    assert_eq!(state["scenarios"].as_array().unwrap().len(), 3);
    assert!(state["approvals"].is_array());
    studio.shutdown().await;
}

#[tokio::test]
async fn the_editor_files_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    client
        .ok("editor.openFile", json!({"path": "app.js"}))
        .await;
    client
        .ok(
            "editor.setDocument",
            json!({"source": "console.log('kept');\n"}),
        )
        .await;
    studio.shutdown().await;

    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let document = client.document().await;
    assert_eq!(document["activePath"], "app.js");
    assert_eq!(document["source"], "console.log('kept');\n");
    assert_eq!(document["storageMode"], "sqlite");
    let studio_files = client.ok("workspace.listFiles", json!({})).await;
    assert!(
        !studio_files.to_string().contains("assets/logo.svg"),
        "the standalone workspace keeps its own files"
    );
    studio.shutdown().await;
}

/// Allows every approval the run asks for until the run ends; returns the run and the
/// approved tool names in order.
async fn approve_until_done(client: &Client, run_id: &str) -> (Value, Vec<String>) {
    let mut approved = Vec::new();
    loop {
        let run = client.get(&format!("/api/agent/runs/{run_id}")).await;
        if run.get("report").is_some() {
            return (run, approved);
        }
        let pending = client.get("/api/approvals").await;
        if let Some(approval) = pending.as_array().and_then(|list| list.first()) {
            assert_eq!(approval["source"], "model", "agent calls are model calls");
            approved.push(approval["name"].as_str().unwrap().to_owned());
            let id = approval["id"].as_str().unwrap();
            client
                .post(
                    &format!("/api/approvals/{id}"),
                    json!({"decision": "allow"}),
                )
                .await;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test]
async fn the_local_agent_saves_the_open_document_to_the_opened_folder() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("index.html"), "<h1>Disk</h1>").unwrap();
    let (status, opened) = client
        .post(
            "/api/editor/folder/open",
            json!({"path": folder.path().to_str().unwrap()}),
        )
        .await;
    assert_eq!(status, 200, "{opened}");
    client
        .ok("editor.setDocument", json!({"source": "<h1>Saved</h1>"}))
        .await;

    let (status, run) = client
        .post(
            "/api/agent/runs",
            json!({"prompt": "save", "surface": "editor"}),
        )
        .await;
    assert_eq!(status, 200, "{run}");
    let (run, approved) = approve_until_done(&client, run["runId"].as_str().unwrap()).await;
    assert_eq!(run["state"], "completed", "{run}");
    assert_eq!(approved, ["editor.saveFile"]);
    assert_eq!(
        std::fs::read_to_string(folder.path().join("index.html")).unwrap(),
        "<h1>Saved</h1>"
    );
    let status = client.ok("editor.getStatus", json!({})).await;
    assert_eq!(status["dirtyPaths"], json!([]));
    studio.shutdown().await;
}

#[tokio::test]
async fn the_editor_agent_never_claims_a_prompt_it_did_not_act_on() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let run = |prompt: &'static str| {
        let client = &client;
        async move {
            let (status, run) = client
                .post(
                    "/api/agent/runs",
                    json!({"prompt": prompt, "surface": "editor"}),
                )
                .await;
            assert_eq!(status, 200, "{run}");
            approve_until_done(client, run["runId"].as_str().unwrap()).await
        }
    };
    let (unknown, asked) = run("make it ocean blue").await;
    assert_eq!(unknown["state"], "not-understood", "{unknown}");
    assert!(asked.is_empty());
    let reply = unknown["report"]["outcome"]["message"].as_str().unwrap();
    assert!(reply.contains("local editor agent understands"), "{reply}");
    let (download, _) = run("download index.html").await;
    assert_eq!(download["state"], "not-understood", "{download}");
    assert!(
        download["report"]["outcome"]["message"]
            .as_str()
            .unwrap()
            .contains("no download tool")
    );
    let (status, _) = run("what is the editor status?").await;
    let summary = status["report"]["outcome"]["message"].as_str().unwrap();
    assert!(
        summary.starts_with("Workspace revision ") && summary.contains("document revision"),
        "{summary}"
    );
    let (missing, asked) = run("open notes.md").await;
    assert_eq!(
        missing["report"]["outcome"]["code"], "WORKSPACE_FILE_NOT_FOUND",
        "{missing}"
    );
    assert!(
        asked.is_empty(),
        "no approval for a call that can only fail"
    );
    studio.shutdown().await;
}
