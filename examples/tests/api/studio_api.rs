//! API-level tests of the studio host on a real loopback server.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use live_code_studio::host::{self, RunningStudio, StudioOptions};
use serde_json::{Value, json};

use crate::support;
use crate::support::http::{StudioClient, structured};

/// The studio's API with this suite's helpers.
type Client = StudioClient<Suite>;
/// Marks this suite's helpers on [`StudioClient`].
enum Suite {}

impl Client {
    async fn get(&self, path: &str) -> Value {
        self.http
            .get(format!("{}{path}", self.base))
            .header("x-studio-token", &self.token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    async fn put(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::PUT, path, body).await
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("x-studio-token", &self.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn run(&self, prompt: &str) -> String {
        let (status, run) = self
            .post("/api/agent/runs", json!({"prompt": prompt}))
            .await;
        assert_eq!(status, 200, "{run}");
        run["runId"].as_str().unwrap().to_owned()
    }

    async fn wait_run(&self, run_id: &str) -> Value {
        for _ in 0..200 {
            let run = self.get(&format!("/api/agent/runs/{run_id}")).await;
            if run.get("report").is_some() {
                return run;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("run {run_id} did not finish");
    }

    /// Like [`Self::wait_run`] for a run that waits out a preview acknowledgement timeout.
    async fn wait_run_longer(&self, run_id: &str) -> Value {
        for _ in 0..1_200 {
            let run = self.get(&format!("/api/agent/runs/{run_id}")).await;
            if run.get("report").is_some() {
                return run;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("run {run_id} did not finish");
    }

    async fn wait_approval(&self) -> Value {
        for _ in 0..200 {
            let pending = self.get("/api/approvals").await;
            if let Some(first) = pending.as_array().and_then(|list| list.first()) {
                return first.clone();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("no approval appeared");
    }
}

async fn start(data_dir: &std::path::Path, folder: Option<&std::path::Path>) -> RunningStudio {
    host::start(StudioOptions::ephemeral(data_dir).with_folder(folder.map(ToOwned::to_owned)))
        .await
        .expect("studio starts")
}

#[tokio::test]
async fn the_status_aware_sequence_runs_through_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);

    let tools = client.get("/api/tools").await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let standalone = names
        .iter()
        .filter(|name| name.starts_with("workspace.") || name.starts_with("preview."))
        .count();
    assert_eq!(standalone, 23);
    assert!(names.contains(&"workspace.applyPatch") && names.contains(&"preview.updateHero"));

    let status = client.call("workspace.getStatus", json!({})).await;
    let revision = structured(&status)["revision"].as_u64().unwrap();
    assert_eq!(structured(&status)["storageMode"], "sqlite");
    let files = client.call("workspace.listFiles", json!({})).await;
    assert_eq!(structured(&files)["files"].as_array().unwrap().len(), 4);
    let opened = client
        .call(
            "workspace.openFile",
            json!({"path": "index.html", "expectedRevision": revision}),
        )
        .await;
    assert_eq!(structured(&opened)["activePath"], "index.html");
    let read = client
        .call("workspace.readFile", json!({"path": "index.html"}))
        .await;
    let revision = structured(&read)["revision"].as_u64().unwrap();
    assert!(
        structured(&read)["source"]
            .as_str()
            .unwrap()
            .contains("Ship a page")
    );

    let patched = client.call("workspace.applyPatch", json!({"path": "index.html", "search": "Ship a page", "replace": "Build a page", "expectedRevision": revision})).await;
    let after = structured(&patched);
    assert_eq!(after["revision"].as_u64().unwrap(), revision + 1);
    assert_eq!(
        after["preview"]["revision"].as_u64().unwrap(),
        revision + 1,
        "the preview acknowledged the new revision"
    );
    assert_eq!(
        after["preview"]["status"], "compiled",
        "no browser attached: acknowledged headlessly"
    );

    let stale = client
        .call(
            "workspace.writeFile",
            json!({"path": "index.html", "source": "x", "expectedRevision": revision}),
        )
        .await;
    assert_eq!(stale["error"]["code"], "WORKSPACE_REVISION_CONFLICT");
    assert_eq!(stale["error"]["retryable"], true);

    let saved = client
        .call(
            "workspace.saveCheckpoint",
            json!({"expectedRevision": revision + 1}),
        )
        .await;
    assert!(
        structured(&saved)["dirtyPaths"]
            .as_array()
            .is_none_or(Vec::is_empty)
            || saved.get("isError").is_none()
    );

    let preview = client
        .http
        .get(format!("{}/preview/{}", client.base, revision + 1))
        .send()
        .await
        .unwrap();
    assert!(
        preview.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .starts_with("sandbox allow-scripts")
    );
    assert!(preview.text().await.unwrap().contains("Build a page"));
    studio.shutdown().await;
}

#[tokio::test]
async fn model_mutations_wait_for_approval_and_denials_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);

    let run_id = client.run("make it rose").await;
    let approval = client.wait_approval().await;
    assert_eq!(approval["name"], "preview.setTheme");
    assert_eq!(approval["source"], "model");
    assert!(
        approval["safeArgumentPreview"]
            .as_str()
            .unwrap()
            .starts_with("theme: rose"),
        "{approval}"
    );
    let (status, _) = client
        .post(
            &format!("/api/approvals/{}", approval["id"].as_str().unwrap()),
            json!({"decision": "allow"}),
        )
        .await;
    assert_eq!(status, 200);
    let run = client.wait_run(&run_id).await;
    assert_eq!(run["state"], "completed", "{run}");
    let css = client
        .call("workspace.readFile", json!({"path": "styles.css"}))
        .await;
    assert!(
        structured(&css)["source"]
            .as_str()
            .unwrap()
            .contains("--accent: #f43f5e")
    );

    let run_id = client.run(r#"set the hero title to "Denied title""#).await;
    let approval = client.wait_approval().await;
    client
        .post(
            &format!("/api/approvals/{}", approval["id"].as_str().unwrap()),
            json!({"decision": "deny"}),
        )
        .await;
    let run = client.wait_run(&run_id).await;
    assert_eq!(run["state"], "denied");
    assert_eq!(run["report"]["outcome"]["status"], "denied");
    assert_eq!(run["report"]["outcome"]["decidedBy"], "person");
    let html = client
        .call("workspace.readFile", json!({"path": "index.html"}))
        .await;
    assert!(
        !structured(&html)["source"]
            .as_str()
            .unwrap()
            .contains("Denied title"),
        "a denied call never runs"
    );

    let trace = client.get("/api/trace").await;
    let kinds: Vec<&str> = trace["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"agent.request")
            && kinds.contains(&"tools/list")
            && kinds.contains(&"tools/call")
    );
    let text = trace.to_string();
    assert!(
        !text.contains("Denied title") && !text.contains("--accent"),
        "the trace holds no argument values or sources"
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn approvals_are_answered_over_the_websocket_and_runs_can_be_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);
    let url = format!(
        "ws://127.0.0.1:{}/api/events?token={}",
        studio.addr.port(),
        studio.token()
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("websocket connects");
    let hello: Value =
        serde_json::from_str(socket.next().await.unwrap().unwrap().to_text().unwrap()).unwrap();
    assert_eq!(hello["type"], "hello");

    let run_id = client
        .run(r#"add a feature "Sockets" "Approved over the socket""#)
        .await;
    let approval_id = loop {
        let message: Value =
            serde_json::from_str(socket.next().await.unwrap().unwrap().to_text().unwrap()).unwrap();
        if message["type"] == "approvals"
            && let Some(first) = message["pending"].as_array().and_then(|p| p.first())
        {
            break first["id"].as_str().unwrap().to_owned();
        }
    };
    let answer = json!({"type": "approval", "id": approval_id, "decision": "allow"}).to_string();
    socket
        .send(tokio_tungstenite::tungstenite::Message::Text(answer.into()))
        .await
        .unwrap();
    assert_eq!(client.wait_run(&run_id).await["state"], "completed");

    let run_id = client.run("make it emerald").await;
    client.wait_approval().await;
    let (status, _) = client
        .post(&format!("/api/agent/runs/{run_id}/cancel"), json!({}))
        .await;
    assert_eq!(status, 200);
    let run = client.wait_run(&run_id).await;
    assert_eq!(run["state"], "cancelled", "{run}");
    assert!(
        client
            .get("/api/approvals")
            .await
            .as_array()
            .unwrap()
            .is_empty(),
        "cancelling removes the pending approval"
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn forged_hosts_origins_and_missing_tokens_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);
    let url = format!("{}/api/tools", client.base);
    let forged = client
        .http
        .get(&url)
        .header("host", "attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 403);
    let foreign = client
        .http
        .get(&url)
        .header("origin", "http://attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    let untokened = client
        .http
        .post(format!("{}/api/tools/call", client.base))
        .json(&json!({"method": "tools/call", "params": {"name": "workspace.getStatus"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(untokened.status(), 401);
    let body: Value = untokened.json().await.unwrap();
    assert_eq!(body["error"]["code"], "STUDIO_TOKEN_REQUIRED");
    assert!(
        tokio_tungstenite::connect_async(format!(
            "ws://127.0.0.1:{}/api/events",
            studio.addr.port()
        ))
        .await
        .is_err()
    );
    let token_file = std::fs::read_to_string(dir.path().join(host::TOKEN_FILE)).unwrap();
    assert_eq!(
        token_file,
        studio.token(),
        "local clients find the token in the data directory"
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn a_restart_restores_the_workspace_from_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);
    let created = client
        .call(
            "workspace.createFile",
            json!({"path": "notes/todo.md", "source": "- persist me"}),
        )
        .await;
    structured(&created);
    studio.shutdown().await;

    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);
    let read = client
        .call("workspace.readFile", json!({"path": "notes/todo.md"}))
        .await;
    assert_eq!(structured(&read)["source"], "- persist me");
    studio.shutdown().await;
}

#[tokio::test]
async fn a_folder_opens_saves_and_reloads() {
    let dir = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(
        folder.path().join("index.html"),
        "<h1 id=\"hero-title\">On disk</h1>",
    )
    .unwrap();
    std::fs::write(folder.path().join("app.js"), "console.log('hi');").unwrap();
    let studio = start(dir.path(), Some(folder.path())).await;
    let client = Client::new(&studio);
    let status = client.call("workspace.getStatus", json!({})).await;
    assert_eq!(structured(&status)["folder"]["connected"], true);
    let revision = structured(&status)["revision"].as_u64().unwrap();
    let written = client.call("workspace.writeFile", json!({"path": "app.js", "source": "console.log('saved');", "expectedRevision": revision})).await;
    let revision = structured(&written)["revision"].as_u64().unwrap();
    let saved = client
        .call("workspace.saveAll", json!({"expectedRevision": revision}))
        .await;
    assert_eq!(structured(&saved)["savedPaths"], json!(["app.js"]));
    assert_eq!(
        std::fs::read_to_string(folder.path().join("app.js")).unwrap(),
        "console.log('saved');"
    );

    std::fs::write(
        folder.path().join("index.html"),
        "<h1 id=\"hero-title\">Changed outside</h1>",
    )
    .unwrap();
    let reloaded = client.call("workspace.reloadFolder", json!({})).await;
    structured(&reloaded);
    let read = client
        .call("workspace.readFile", json!({"path": "index.html"}))
        .await;
    assert!(
        structured(&read)["source"]
            .as_str()
            .unwrap()
            .contains("Changed outside")
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn an_unanswered_approval_times_out_as_a_typed_retryable_failure() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);
    let (status, run) = client
        .post(
            "/api/agent/runs",
            json!({"prompt": "make it amber", "timeoutMs": 300}),
        )
        .await;
    assert_eq!(status, 200, "{run}");
    let run = client.wait_run(run["runId"].as_str().unwrap()).await;
    assert_eq!(run["state"], "failed", "{run}");
    let outcome = &run["report"]["outcome"];
    assert_eq!(outcome["code"], "TOOL_TIMEOUT");
    assert_eq!(outcome["retryable"], true);
    assert_eq!(outcome["actions"], json!(["retry"]));
    assert!(
        client
            .get("/api/approvals")
            .await
            .as_array()
            .unwrap()
            .is_empty(),
        "the timed-out approval is withdrawn"
    );
    let css = client
        .call("workspace.readFile", json!({"path": "styles.css"}))
        .await;
    assert!(
        !structured(&css)["source"]
            .as_str()
            .unwrap()
            .contains("#f59e0b"),
        "nothing ran"
    );
    studio.shutdown().await;
}

/// Sixteen concurrent writers against a page that acknowledges only odd revisions: every
/// answer is a success, a revision conflict that changed nothing, or a committed preview failure
/// whose change is in the final file.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_are_never_told_an_applied_change_failed() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);
    let url = format!(
        "ws://127.0.0.1:{}/api/events?token={}&client=ui",
        studio.addr.port(),
        studio.token()
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("websocket connects");
    let acker = tokio::spawn({
        let client = Client::new(&studio);
        async move {
            while let Some(Ok(frame)) = socket.next().await {
                let Ok(text) = frame.to_text() else { continue };
                let message: Value = serde_json::from_str(text).unwrap_or_default();
                let revision = message["revision"].as_u64().unwrap_or(0);
                if message["type"] == "workspace" && revision % 2 == 1 {
                    let ack = json!({"type": "context-action.preview.ready", "revision": revision});
                    client.post("/api/preview/ack", ack).await;
                }
            }
        }
    });
    let start_revision =
        structured(&client.call("workspace.getStatus", json!({})).await)["revision"]
            .as_u64()
            .unwrap();
    let writers: Vec<_> = (0..16)
        .map(|writer| {
            let client = Client::new(&studio);
            tokio::spawn(async move {
                let marker = format!("/* writer {writer} */");
                let mut arguments = json!({"path": "app.js", "search": "const", "replace": format!("{marker}const"), "occurrence": "first"});
                if writer % 2 == 0 {
                    arguments["expectedRevision"] = json!(start_revision);
                }
                (marker, client.call("workspace.applyPatch", arguments).await)
            })
        })
        .collect();
    let mut results = Vec::new();
    for writer in writers {
        results.push(writer.await.unwrap());
    }
    let final_source = structured(
        &client
            .call("workspace.readFile", json!({"path": "app.js"}))
            .await,
    )["source"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut committed = 0;
    for (marker, result) in &results {
        let applied = final_source.contains(marker.as_str());
        match result["error"]["code"].as_str() {
            None => assert!(applied, "{marker} succeeded: {result}"),
            Some("WORKSPACE_REVISION_CONFLICT") => {
                assert!(!applied, "{marker} changed nothing: {result}");
                assert_eq!(result["error"]["details"].get("committed"), None);
            }
            Some(
                "PREVIEW_ACK_TIMEOUT" | "PREVIEW_REVISION_SUPERSEDED" | "PREVIEW_RUNTIME_ERROR",
            ) => {
                assert_eq!(result["error"]["details"]["committed"], true, "{result}");
                // Applied: repeating it would apply it twice, so it is never retryable.
                assert_eq!(result["error"]["retryable"], false, "{result}");
                assert_eq!(result["error"]["details"]["previewAction"], "refresh");
                assert!(result["error"]["details"]["revision"].as_u64() > Some(start_revision));
                assert!(applied, "{marker} is applied: {result}");
                committed += 1;
            }
            Some(other) => panic!("unexpected outcome {other}: {result}"),
        }
    }
    assert!(committed > 0, "even revisions are never acknowledged");
    acker.abort();
    studio.shutdown().await;
}

#[tokio::test]
async fn a_committed_mutation_whose_preview_is_not_confirmed_completes_the_run_as_applied() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);
    // An attached page that never acknowledges: the mutation commits, its preview times out.
    let url = format!(
        "ws://127.0.0.1:{}/api/events?token={}&client=ui",
        studio.addr.port(),
        studio.token()
    );
    let (_socket, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("websocket connects");
    let before = structured(&client.call("workspace.getStatus", json!({})).await)["revision"]
        .as_u64()
        .unwrap();
    let run_id = client.run("make it amber").await;
    let approval = client.wait_approval().await;
    let id = approval["id"].as_str().unwrap();
    let (status, _) = client
        .post(
            &format!("/api/approvals/{id}"),
            json!({"decision": "allow"}),
        )
        .await;
    assert_eq!(status, 200);
    let run = client.wait_run_longer(&run_id).await;
    assert_eq!(run["state"], "completed", "{run}");
    let outcome = &run["report"]["outcome"];
    assert_eq!(outcome["actions"], json!(["refresh-preview"]), "{run}");
    let message = outcome["message"].as_str().unwrap();
    assert!(message.contains("preview did not confirm"), "{message}");
    let last = run["report"]["steps"].as_array().unwrap().last().unwrap();
    assert_eq!(
        (
            &last["tool"],
            &last["ok"],
            &last["committed"],
            &last["code"]
        ),
        (
            &json!("preview.setTheme"),
            &json!(true),
            &json!(true),
            &json!("PREVIEW_ACK_TIMEOUT")
        ),
        "{run}"
    );
    assert_eq!(run["report"]["revision"], before + 1, "{run}");
    let status = client.call("workspace.getStatus", json!({})).await;
    assert_eq!(
        structured(&status)["revision"],
        before + 1,
        "applied once, never retried"
    );
    let css = client
        .call("workspace.readFile", json!({"path": "styles.css"}))
        .await;
    assert!(
        structured(&css)["source"]
            .as_str()
            .unwrap()
            .contains("#f59e0b")
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn without_usable_storage_every_result_says_memory_mode() {
    let dir = tempfile::tempdir().unwrap();
    let blocked = dir.path().join("not-a-directory");
    std::fs::write(&blocked, "a file where the data directory should be").unwrap();
    let studio = start(&blocked, None).await;
    let client = Client::new(&studio);
    let status = client.call("workspace.getStatus", json!({})).await;
    assert_eq!(structured(&status)["storageMode"], "memory");
    let error = structured(&status)["storageError"].as_str().unwrap();
    assert!(
        error.contains("could not be created") && error.chars().count() <= 240,
        "{error}"
    );
    let written = client
        .call(
            "workspace.createFile",
            json!({"path": "memo.md", "source": "kept in memory"}),
        )
        .await;
    assert_eq!(
        structured(&written)["storageMode"],
        "memory",
        "mutation results carry the mode too"
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn run_metadata_is_bounded_and_a_selection_must_validate() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);
    let limit = live_code_studio::host::server::MAX_RUN_METADATA_BYTES;
    // `{"note":"…"}` is 11 bytes of JSON around the string.
    let sized =
        |bytes: usize| json!({"prompt": "status", "metadata": {"note": "x".repeat(bytes - 11)}});

    let (status, run) = client.post("/api/agent/runs", sized(limit)).await;
    assert_eq!(status, 200, "exactly at the limit: {run}");
    client.wait_run(run["runId"].as_str().unwrap()).await;
    let (status, refused) = client.post("/api/agent/runs", sized(limit + 1)).await;
    assert_eq!(status, 400);
    assert_eq!(refused["error"]["code"], "STUDIO_INVALID_METADATA");

    let (status, refused) = client
        .post(
            "/api/agent/runs",
            json!({"prompt": "status", "metadata": [1]}),
        )
        .await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (400, &json!("STUDIO_INVALID_METADATA"))
    );
    let (status, refused) = client
        .post(
            "/api/agent/runs",
            json!({"prompt": "make the selected element red", "metadata": {"selection": {"selector": "h1"}}}),
        )
        .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["code"], "PREVIEW_SELECTION_INVALID");
    studio.shutdown().await;
}

/// The run's final outcome, after it finished.
async fn outcome_of(client: &Client, prompt: &str) -> Value {
    let run_id = client.run(prompt).await;
    let run = client.wait_run(&run_id).await;
    run["report"]["outcome"].clone()
}

#[tokio::test]
async fn the_local_agent_never_claims_a_prompt_it_did_not_act_on() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);

    // Unknown prompts end as their own outcome, call nothing, and say what the agent can do.
    for prompt in ["make it ocean blue", "add a dark mode toggle"] {
        let run_id = client.run(prompt).await;
        let run = client.wait_run(&run_id).await;
        assert_eq!(run["state"], "not-understood", "{run}");
        assert_eq!(run["report"]["steps"], json!([]), "{run}");
        let message = run["report"]["outcome"]["message"].as_str().unwrap();
        assert!(message.contains("did not understand"), "{message}");
        assert!(
            message.contains("make it violet, emerald, amber or rose"),
            "{message}"
        );
        assert!(message.contains("connect a model provider"), "{message}");
        assert!(!message.contains("Done"), "{message}");
        let trace = client.get("/api/trace").await;
        let row = trace["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["traceId"] == run_id.as_str())
            .cloned()
            .unwrap();
        assert_eq!(row["status"], "not-understood", "{row}");
    }

    // Reads show what was read.
    let app = structured(
        &client
            .call("workspace.readFile", json!({"path": "app.js"}))
            .await,
    )["source"]
        .as_str()
        .unwrap()
        .to_owned();
    let read = outcome_of(&client, "read app.js").await;
    assert_eq!(read["status"], "completed", "{read}");
    let shown = read["message"].as_str().unwrap();
    assert!(shown.starts_with("app.js · "), "{shown}");
    assert!(shown.contains(app.lines().next().unwrap()), "{shown}");
    let status = outcome_of(&client, "what is the workspace status?").await;
    let summary = status["message"].as_str().unwrap();
    assert!(summary.starts_with("Workspace revision "), "{summary}");
    assert!(summary.contains("active index.html"), "{summary}");
    assert!(summary.contains("Preview: revision"), "{summary}");

    // "download index.html" hands the file to the page once approved.
    let run_id = client.run("download index.html").await;
    let approval = client.wait_approval().await;
    assert_eq!(approval["name"], "workspace.downloadFile");
    client
        .post(
            &format!("/api/approvals/{}", approval["id"].as_str().unwrap()),
            json!({"decision": "allow"}),
        )
        .await;
    let download = client.wait_run(&run_id).await["report"]["outcome"].clone();
    assert_eq!(download["download"]["fileName"], "index.html", "{download}");
    assert!(
        download["download"]["content"]
            .as_str()
            .unwrap()
            .contains("hero-title")
    );

    // "replace" patches the file holding the text, not the open one.
    structured(
        &client
            .call("workspace.openFile", json!({"path": "styles.css"}))
            .await,
    );
    let run_id = client.run(r#"replace "Ship" with "Build""#).await;
    let approval = client.wait_approval().await;
    assert_eq!(approval["name"], "workspace.applyPatch");
    assert!(
        approval["safeArgumentPreview"]
            .as_str()
            .unwrap()
            .contains("path: index.html"),
        "{approval}"
    );
    client
        .post(
            &format!("/api/approvals/{}", approval["id"].as_str().unwrap()),
            json!({"decision": "deny"}),
        )
        .await;
    assert_eq!(client.wait_run(&run_id).await["state"], "denied");
    let nowhere = outcome_of(&client, r#"replace "Nowhere to be found" with "x""#).await;
    assert_eq!(nowhere["code"], "WORKSPACE_PATCH_NOT_FOUND", "{nowhere}");

    // On a person's own site, a visual prompt whose target is missing says so, unasked.
    let revision =
        structured(&client.call("workspace.getStatus", json!({})).await)["revision"].clone();
    structured(
        &client
            .call(
                "workspace.writeFile",
                json!({"path": "styles.css", "source": "body { color: navy; }\n", "expectedRevision": revision}),
            )
            .await,
    );
    let theme = outcome_of(&client, "make it rose").await;
    assert_eq!(theme["status"], "failed", "{theme}");
    assert_eq!(theme["code"], "PREVIEW_TARGET_NOT_FOUND");
    assert!(
        theme["message"]
            .as_str()
            .unwrap()
            .contains("styles.css has no --accent and --accent-soft"),
        "{theme}"
    );
    assert_eq!(
        client.get("/api/approvals").await,
        json!([]),
        "nothing was asked"
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn preview_get_status_reports_the_bounded_preview_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);
    let clean = client.call("preview.getStatus", json!({})).await;
    assert_eq!(structured(&clean)["diagnostics"], json!([]), "{clean}");
    assert_eq!(structured(&clean)["diagnosticCount"], 0);

    let scripts: String = (0..30)
        .map(|n| format!("<script src=\"missing-{n}.js\"></script>\n"))
        .collect();
    let revision =
        structured(&client.call("workspace.getStatus", json!({})).await)["revision"].clone();
    structured(
        &client
            .call(
                "workspace.writeFile",
                json!({"path": "index.html", "source": format!("<h1>x</h1>\n{scripts}"), "expectedRevision": revision}),
            )
            .await,
    );
    let status = client.call("preview.getStatus", json!({})).await;
    let status = structured(&status);
    assert_eq!(status["diagnosticCount"], 30, "{status}");
    let shown = status["diagnostics"].as_array().unwrap();
    assert_eq!(shown.len(), 20, "bounded");
    assert_eq!(shown[0]["requestedPath"], "missing-0.js");
    assert_eq!(shown[0]["sourcePath"], "index.html");
    studio.shutdown().await;
}

#[tokio::test]
async fn unknown_routes_and_the_favicon_answer_404_without_leaking_anything() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);
    for path in ["/favicon.ico", "/nope", "/api/nope", "/ui/nope/../../x"] {
        let response = client
            .http
            .get(format!("{}{path}", client.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 404, "{path}");
        let body = response.text().await.unwrap();
        assert!(body.contains("STUDIO_NOT_FOUND"), "{path}: {body}");
        for leak in ["MCP", "token", studio.token()] {
            assert!(!body.contains(leak), "{path} leaks {leak}: {body}");
        }
    }
    let (status, body) = client.post("/api/nope", json!({})).await;
    assert_eq!(status, 404, "{body}");
    // The guards still come first: a foreign host learns nothing, and real routes keep
    // their checks.
    let forged = client
        .http
        .get(format!("{}/nope", client.base))
        .header("host", "attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 403);
    let untokened_mcp = client
        .http
        .post(format!("{}/mcp", client.base))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(untokened_mcp.status(), 401);
    let untokened_stream = client
        .http
        .get(format!("{}/mcp/", client.base))
        .send()
        .await
        .unwrap();
    assert_eq!(
        untokened_stream.status(),
        401,
        "every /mcp path keeps its token check"
    );
    // The pages name a favicon the studio serves.
    for page in ["/", "/editor", "/web"] {
        let html = client
            .http
            .get(format!("{}{page}", client.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            html.contains(r#"<link rel="icon" href="/ui/favicon.svg""#),
            "{page}"
        );
    }
    let icon = client
        .http
        .get(format!("{}/ui/favicon.svg", client.base))
        .send()
        .await
        .unwrap();
    assert_eq!(icon.status(), 200);
    assert_eq!(icon.headers()["content-type"], "image/svg+xml");
    studio.shutdown().await;
}

/// A page attached to `surface` over the event socket (as a browser tab is).
async fn attach_page(
    studio: &RunningStudio,
    surface: &str,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    let url = format!(
        "ws://127.0.0.1:{}/api/events?token={}&client=ui&surface={surface}",
        studio.addr.port(),
        studio.token()
    );
    tokio_tungstenite::connect_async(url)
        .await
        .expect("websocket connects")
        .0
}

#[tokio::test]
async fn an_approval_whose_page_is_gone_expires_with_a_coded_denial_unless_another_page_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    studio.state.orphan_grace.set(Duration::from_millis(300));
    let client = Client::new(&studio);
    let page = attach_page(&studio, "workspace").await;
    let run_id = client.run("make it amber").await;
    let approval = client.wait_approval().await;

    // The asking page crashes (its socket drops, no cancel): the approval expires.
    drop(page);
    let run = client.wait_run(&run_id).await;
    assert_eq!(run["state"], "denied", "{run}");
    let message = run["report"]["outcome"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("The approval expired: the page that asked for it closed"),
        "{message}"
    );
    assert_eq!(client.get("/api/approvals").await, json!([]));
    let last = run["report"]["steps"].as_array().unwrap().last().unwrap();
    assert_eq!(
        (&last["tool"], &last["code"]),
        (&json!("preview.setTheme"), &json!("TOOL_POLICY_DENIED")),
        "{run}"
    );
    assert_eq!(approval["name"], "preview.setTheme");

    // With another page of the surface open, the approval waits for its person.
    let first = attach_page(&studio, "workspace").await;
    let second = attach_page(&studio, "workspace").await;
    let run_id = client.run("make it rose").await;
    let approval = client.wait_approval().await;
    drop(first);
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(client.get("/api/approvals").await[0]["id"], approval["id"]);
    let id = approval["id"].as_str().unwrap();
    let (status, _) = client
        .post(&format!("/api/approvals/{id}"), json!({"decision": "deny"}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(client.wait_run(&run_id).await["state"], "denied");
    drop(second);

    // A run started with no page attached (an API client) is not a page's: it keeps waiting.
    let run_id = client.run("make it violet").await;
    let approval = client.wait_approval().await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(client.get("/api/approvals").await[0]["id"], approval["id"]);
    let id = approval["id"].as_str().unwrap();
    client
        .post(&format!("/api/approvals/{id}"), json!({"decision": "deny"}))
        .await;
    assert_eq!(client.wait_run(&run_id).await["state"], "denied");
    studio.shutdown().await;
}

#[tokio::test]
async fn a_typing_burst_of_direct_writes_is_one_undo_step() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);
    let read = |value: Value| {
        value["structuredContent"]["source"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let original = read(
        client
            .call("workspace.readFile", json!({"path": "styles.css"}))
            .await,
    );
    // The page's idle flushes while a person types: one write per keystroke or two.
    for typed in ["/* a", "/* ab", "/* abc */"] {
        let written = client
            .call(
                "workspace.writeFile",
                json!({"path": "styles.css", "source": format!("{original}{typed}")}),
            )
            .await;
        assert_ne!(written["isError"], json!(true), "{written}");
    }
    let undone = client.call("workspace.undo", json!({})).await;
    assert_ne!(undone["isError"], json!(true), "{undone}");
    assert_eq!(
        read(
            client
                .call("workspace.readFile", json!({"path": "styles.css"}))
                .await
        ),
        original,
        "one undo takes back the whole burst"
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn tool_effects_say_whether_undo_brings_the_change_back() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let effects = Client::new(&studio).get("/api/tools/effects").await;
    let effect = |name: &str| effects[name].as_str().unwrap_or_default().to_owned();
    assert!(
        effect("workspace.deleteFile").contains("Undo brings it back"),
        "{effects}"
    );
    assert!(
        effect("editor.revertFile").contains("the editor has no undo")
            && !effect("editor.revertFile").contains("Undo brings"),
        "{effects}"
    );
    assert!(
        effects.get("workspace.readFile").is_none(),
        "read-only tools have no effect"
    );
    studio.shutdown().await;
}

/// A provider run against `script`, with the provider settings pointed at it.
async fn provider_run(
    client: &Client,
    script: support::echo_provider::Script,
    prompt: &str,
) -> String {
    let (base, _) = support::echo_provider::serve_script(script).await;
    let (status, settings) = client
        .put(
            "/api/settings",
            json!({"provider": "llamacpp", "baseUrl": base, "model": "smol"}),
        )
        .await;
    assert_eq!(status, 200, "{settings}");
    let (status, run) = client
        .post(
            "/api/agent/runs",
            json!({"prompt": prompt, "agent": "openrouter"}),
        )
        .await;
    assert_eq!(status, 200, "{run}");
    run["runId"].as_str().unwrap().to_owned()
}

/// The run's views until it finishes (sampled every 5 ms), the last one finished.
async fn views_until_finished(client: &Client, run_id: &str) -> Vec<Value> {
    let mut views = Vec::new();
    for _ in 0..2_000 {
        let view = client.get(&format!("/api/agent/runs/{run_id}")).await;
        let finished = view.get("report").is_some();
        views.push(view);
        if finished {
            return views;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("run {run_id} did not finish");
}

const STREAMED_REPLY: &str = "The theme is rose now.\n\nIt applies to `styles.css`:\n\n```css\n:root { --accent: #f43f5e; }\n```\nDone.";

#[tokio::test]
async fn a_provider_run_streams_its_text_into_the_run_view_and_runs_only_the_arguments_shown() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);
    let script =
        support::echo_provider::Script::new("setTheme", json!({"theme": "rose"}), STREAMED_REPLY)
            .streamed(Duration::from_millis(25), 5);
    let run_id = provider_run(&client, script, "make it rose").await;

    let approval = client.wait_approval().await;
    let id = approval["id"].as_str().unwrap();
    let view = client.get(&format!("/api/agent/runs/{run_id}")).await;
    let call = &view["toolCalls"][0];
    assert_eq!(call["name"], "preview.setTheme", "{view}");
    assert_eq!(call["argumentsText"], r#"{"theme":"rose"}"#, "{view}");
    let review = client.get(&format!("/api/approvals/{id}/diff")).await;
    assert_eq!(review["arguments"], json!({"theme": "rose"}), "{review}");
    assert_eq!(
        review["argumentsDigest"], call["digest"],
        "the card's digest is the one the stream announced"
    );

    // Arguments other than the ones shown never run, and the approval stays pending.
    let (status, refused) = client
        .post(
            &format!("/api/approvals/{id}"),
            json!({"decision": "allow", "argumentsDigest": "sha256:0000"}),
        )
        .await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "APPROVAL_ARGUMENTS_CHANGED");
    assert_eq!(client.wait_approval().await["id"], approval["id"]);
    let (status, _) = client
        .post(
            &format!("/api/approvals/{id}"),
            json!({"decision": "allow", "argumentsDigest": review["argumentsDigest"]}),
        )
        .await;
    assert_eq!(status, 200);

    // The reply streams into the view while the run is running.
    let views = views_until_finished(&client, &run_id).await;
    let last = views.last().unwrap();
    assert_eq!(last["state"], "completed", "{last}");
    assert_eq!(last["streamedText"], STREAMED_REPLY);
    assert_eq!(last["report"]["outcome"]["message"], STREAMED_REPLY);
    assert_eq!(last["toolCalls"][0]["status"], "completed", "{last}");
    let growing: std::collections::BTreeSet<usize> = views
        .iter()
        .filter(|view| view.get("report").is_none())
        .filter_map(|view| view["streamedText"].as_str())
        .filter(|text| !text.is_empty())
        .inspect(|text| assert!(STREAMED_REPLY.starts_with(text), "{text:?}"))
        .map(str::len)
        .collect();
    assert!(
        growing.range(..STREAMED_REPLY.len()).count() >= 3,
        "the text grew before the run ended: {growing:?}"
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn cancelling_a_streaming_run_keeps_its_partial_text() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);
    let script = support::echo_provider::Script::new(
        "readFile",
        json!({"path": "index.html"}),
        STREAMED_REPLY,
    )
    .streamed(Duration::from_millis(40), 3);
    let run_id = provider_run(&client, script, "read the page").await;
    let partial = loop {
        let view = client.get(&format!("/api/agent/runs/{run_id}")).await;
        assert!(
            view.get("report").is_none(),
            "finished before any text: {view}"
        );
        if view["streamedText"]
            .as_str()
            .is_some_and(|text| text.len() > 6)
        {
            break view;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert_eq!(
        partial["toolCalls"][0]["name"], "workspace.readFile",
        "{partial}"
    );
    let (status, _) = client
        .post(&format!("/api/agent/runs/{run_id}/cancel"), json!({}))
        .await;
    assert_eq!(status, 200);
    let run = client.wait_run(&run_id).await;
    assert_eq!(run["state"], "cancelled", "{run}");
    let text = run["streamedText"].as_str().unwrap();
    assert!(
        !text.is_empty() && text.len() < STREAMED_REPLY.len() && STREAMED_REPLY.starts_with(text),
        "the partial text stays: {text:?}"
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn the_local_agent_streams_its_calls_and_reply_like_a_provider() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path(), None).await;
    let client = Client::new(&studio);
    let mut events = studio.state.hub.subscribe();
    let run_id = client.run("make it rose").await;
    let approval = client.wait_approval().await;
    let id = approval["id"].as_str().unwrap();
    let view = client.get(&format!("/api/agent/runs/{run_id}")).await;
    // The plan reads the status first, then asks to set the theme.
    let calls = view["toolCalls"].as_array().unwrap();
    assert_eq!(calls[0]["name"], "workspace.getStatus", "{view}");
    assert_eq!(calls[0]["status"], "completed", "{view}");
    let call = &calls[1];
    assert_eq!(call["name"], "preview.setTheme", "{view}");
    assert_eq!(call["argumentsText"], r#"{"theme":"rose"}"#, "{view}");
    assert_eq!(
        call["status"], "running",
        "asking a person is part of running: {view}"
    );
    let review = client.get(&format!("/api/approvals/{id}/diff")).await;
    assert_eq!(review["argumentsDigest"], call["digest"], "{review}");
    let (status, refused) = client
        .post(
            &format!("/api/approvals/{id}"),
            json!({"decision": "allow", "argumentsDigest": "sha256:other"}),
        )
        .await;
    assert_eq!(status, 409, "{refused}");
    let (status, _) = client
        .post(
            &format!("/api/approvals/{id}"),
            json!({"decision": "allow", "argumentsDigest": call["digest"]}),
        )
        .await;
    assert_eq!(status, 200);
    let run = client.wait_run(&run_id).await;
    assert_eq!(run["state"], "completed", "{run}");
    assert_eq!(run["streamedText"], run["report"]["outcome"]["message"]);
    // The page got the same story as events, in order, before the run's final state.
    let mut kinds = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(5), events.recv())
            .await
            .expect("the run's final state is announced")
            .unwrap();
        let event = serde_json::to_value(event).unwrap();
        if event["type"] == "agentStream" && event["runId"] == run_id.as_str() {
            kinds.push(event["event"]["type"].as_str().unwrap().to_owned());
        }
        if event["type"] == "agent" && event["run"]["state"] == "completed" {
            assert!(
                event["run"].get("streamedText").is_none(),
                "lifecycle events stay small: {event}"
            );
            break;
        }
    }
    let call = [
        "toolCallStreamStarted",
        "toolCallArgumentsDelta",
        "toolCallReady",
        "toolCallStarted",
        "toolCallFinished",
    ];
    assert_eq!(kinds, [&call[..], &call[..], &["textDelta"]].concat());
    studio.shutdown().await;
}
