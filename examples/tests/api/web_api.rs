//! API tests of the realtime web-coding surface (`web.*`) on a real loopback studio: every
//! tool, the revision guard, the patch limits at their edges, the new revision returned after
//! the preview acknowledgement (headless and from a `surface=web` page), local-agent runs with
//! approvals, MCP clients, the preview routes and persistence.

use std::time::Duration;

use futures::StreamExt;
use live_code_studio::host::{self, RunningStudio, StudioOptions};
use live_code_studio::kit::preview_http::PREVIEW_CSP;
use serde_json::{Value, json};

use crate::support::http::{StudioClient, structured};
use crate::support::mcp::{Person, call, connect, error};

/// Generous bound of every poll: a liveness guard on a busy machine, not a timing assertion.
const POLL_ROUNDS: usize = 1_200;
const POLL_INTERVAL: Duration = Duration::from_millis(25);

const MUTATIONS: [&str; 5] = [
    "web.applyPatch",
    "web.writeFile",
    "web.setTheme",
    "web.addFeature",
    "web.updateHero",
];

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

    async fn workspace(&self) -> Value {
        structured(&self.call("web.getWorkspace", json!({})).await).clone()
    }

    async fn revision(&self) -> u64 {
        self.workspace().await["revision"].as_u64().unwrap()
    }

    async fn source(&self, path: &str) -> String {
        let read = self.call("web.readFile", json!({"path": path})).await;
        structured(&read)["source"].as_str().unwrap().to_owned()
    }

    async fn run(&self, prompt: &str) -> String {
        let (status, run) = self
            .post(
                "/api/agent/runs",
                json!({"prompt": prompt, "surface": "web"}),
            )
            .await;
        assert_eq!(status, 200, "{run}");
        run["runId"].as_str().unwrap().to_owned()
    }

    async fn wait_run(&self, run_id: &str) -> Value {
        for _ in 0..POLL_ROUNDS {
            let run = self.get(&format!("/api/agent/runs/{run_id}")).await;
            if run.get("report").is_some() {
                return run;
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
        panic!("run {run_id} did not finish");
    }

    async fn wait_approval(&self) -> Value {
        for _ in 0..POLL_ROUNDS {
            let pending = self.get("/api/approvals").await;
            if let Some(first) = pending.as_array().and_then(|list| list.first()) {
                return first.clone();
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
        panic!("no approval appeared");
    }

    async fn decide(&self, id: &str, decision: &str) {
        let (status, body) = self
            .post(
                &format!("/api/approvals/{id}"),
                json!({"decision": decision}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
    }
}

async fn start(data_dir: &std::path::Path) -> RunningStudio {
    host::start(StudioOptions::ephemeral(data_dir))
        .await
        .expect("studio starts")
}

fn error_code(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "expected an error: {result}");
    result["error"]["code"].as_str().unwrap()
}

/// Asserts a mutation result: the next revision, acknowledged (headlessly) before the answer.
fn assert_mutation(result: &Value, previous: u64, path: &str) -> u64 {
    let content = structured(result);
    let revision = content["revision"].as_u64().unwrap();
    assert_eq!(revision, previous + 1, "{content}");
    assert_eq!(content["path"], path);
    assert_eq!(content["preview"]["revision"], revision);
    assert_eq!(content["preview"]["status"], "compiled");
    assert_eq!(content["storageMode"], "sqlite");
    assert_eq!(content["activePath"], "index.html");
    revision
}

fn arguments_with_revision(tool: &str, revision: u64) -> Value {
    let mut arguments = match tool {
        "web.applyPatch" => {
            json!({"path": "index.html", "search": "Code the page", "replace": "Stale"})
        }
        "web.writeFile" => json!({"path": "app.js", "source": "// stale"}),
        "web.setTheme" => json!({"theme": "rose"}),
        "web.addFeature" => json!({"title": "Stale", "description": "Never added."}),
        "web.updateHero" => json!({"title": "Stale"}),
        other => panic!("not a mutation: {other}"),
    };
    arguments["expectedRevision"] = json!(revision);
    arguments
}

#[tokio::test]
async fn every_web_tool_answers_and_mutations_return_the_acknowledged_revision() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);

    let listed = client.get("/api/tools").await;
    let web_tools: Vec<&Value> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|tool| tool["name"].as_str().unwrap().starts_with("web."))
        .collect();
    assert_eq!(web_tools.len(), 7);
    for tool in &web_tools {
        let name = tool["name"].as_str().unwrap();
        let read_only = tool["annotations"]["readOnlyHint"] == true;
        assert_eq!(
            read_only,
            matches!(name, "web.getWorkspace" | "web.readFile"),
            "{name}: reads are allow, mutations local demo allow"
        );
        assert!(
            tool["outputSchema"].is_object(),
            "{name} has an output schema"
        );
        if !read_only {
            assert!(
                tool["inputSchema"]["properties"]["expectedRevision"].is_object(),
                "{name} takes the optional revision guard"
            );
        }
    }

    let workspace = client.workspace().await;
    let paths: Vec<&str> = workspace["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["index.html", "styles.css", "app.js"]);
    assert_eq!(workspace["activePath"], "index.html");
    assert_eq!(workspace["storageMode"], "sqlite");
    assert!(
        workspace["files"][0]["source"]
            .as_str()
            .unwrap()
            .contains("id=\"hero-title\"")
    );
    let mut revision = workspace["revision"].as_u64().unwrap();

    let read = client.call("web.readFile", json!({"path": "app.js"})).await;
    assert_eq!(structured(&read)["revision"], revision);
    assert_eq!(structured(&read)["language"], "javascript");
    assert!(
        structured(&read)["source"]
            .as_str()
            .unwrap()
            .contains("pulse")
    );

    let patched = client
        .call(
            "web.applyPatch",
            json!({"path": "index.html", "search": "Code the page", "replace": "Shape the page", "expectedRevision": revision}),
        )
        .await;
    revision = assert_mutation(&patched, revision, "index.html");
    assert_eq!(structured(&patched)["operation"], "patch");
    assert!(client.source("index.html").await.contains("Shape the page"));

    let written = client
        .call(
            "web.writeFile",
            json!({"path": "app.js", "source": "console.log('rewritten');\n", "expectedRevision": revision}),
        )
        .await;
    revision = assert_mutation(&written, revision, "app.js");
    assert_eq!(client.source("app.js").await, "console.log('rewritten');\n");

    let themed = client
        .call(
            "web.setTheme",
            json!({"theme": "rose", "expectedRevision": revision}),
        )
        .await;
    revision = assert_mutation(&themed, revision, "styles.css");
    assert!(
        client
            .source("styles.css")
            .await
            .contains("--accent: #f43f5e;")
    );

    // Without a guard the mutation runs on whatever is current.
    let featured = client
        .call(
            "web.addFeature",
            json!({"title": "Live <preview>", "description": "Escaped & shown."}),
        )
        .await;
    revision = assert_mutation(&featured, revision, "index.html");
    assert!(
        client
            .source("index.html")
            .await
            .contains("<h3>Live &lt;preview&gt;</h3>")
    );

    let hero = client
        .call(
            "web.updateHero",
            json!({"subtitle": "Acknowledged first.", "expectedRevision": revision}),
        )
        .await;
    revision = assert_mutation(&hero, revision, "index.html");
    let html = client.source("index.html").await;
    assert!(html.contains("<p id=\"hero-subtitle\">Acknowledged first.</p>"));
    assert!(html.contains("Shape the page"), "the title stays");

    assert_eq!(client.revision().await, revision);
    let state = client.get("/api/web/state").await;
    assert_eq!(state["revision"], revision);
    assert_eq!(state["files"].as_array().unwrap().len(), 3);

    // The standalone workspace is a different workspace with its own clock.
    let standalone = client.call("workspace.listFiles", json!({})).await;
    assert_eq!(
        structured(&standalone)["files"].as_array().unwrap().len(),
        4
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn stale_revisions_are_rejected_before_anything_changes() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let before = client.workspace().await;
    let revision = before["revision"].as_u64().unwrap();
    for tool in MUTATIONS {
        for stale in [revision - 1, revision + 1] {
            let result = client
                .call(tool, arguments_with_revision(tool, stale))
                .await;
            assert_eq!(error_code(&result), "WORKSPACE_REVISION_CONFLICT", "{tool}");
            assert_eq!(result["error"]["retryable"], true, "{tool}");
            let details = &result["error"]["details"];
            assert_eq!(details["expectedRevision"], stale, "{tool}: {details}");
            assert_eq!(details["currentRevision"], revision, "{tool}: {details}");
        }
    }
    let after = client.workspace().await;
    assert_eq!(after["revision"], revision, "no revision moved");
    assert_eq!(after["files"], before["files"], "no source changed");
    studio.shutdown().await;
}

#[tokio::test]
async fn patch_and_write_limits_hold_at_their_edges() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);

    // A file of exactly 20,000 characters: the longest search matches all of it.
    let block = "a".repeat(20_000);
    let written = client
        .call("web.writeFile", json!({"path": "app.js", "source": block}))
        .await;
    let revision = structured(&written)["revision"].as_u64().unwrap();
    let longest_replace = "b".repeat(20_000);
    let patched = client
        .call(
            "web.applyPatch",
            json!({"path": "app.js", "search": block, "replace": longest_replace, "expectedRevision": revision}),
        )
        .await;
    let revision = assert_mutation(&patched, revision, "app.js");
    assert_eq!(client.source("app.js").await, longest_replace);

    for arguments in [
        json!({"path": "app.js", "search": "b".repeat(20_001), "replace": ""}),
        json!({"path": "app.js", "search": "b", "replace": "c".repeat(20_001)}),
        json!({"path": "app.js", "search": "", "replace": "c"}),
        json!({"path": "app.js", "search": "b", "replace": "c", "occurrence": "some"}),
        json!({"path": "app.js", "search": "b", "replace": "c", "expectedRevision": -1}),
    ] {
        let result = client.call("web.applyPatch", arguments).await;
        assert_eq!(error_code(&result), "TOOL_VALIDATION_FAILED");
    }

    // The patched file must stay within 80,000 characters: growing to exactly 80,000 works,
    // one more character does not.
    let written = client
        .call(
            "web.writeFile",
            json!({"path": "app.js", "source": "c".repeat(79_999)}),
        )
        .await;
    let revision = assert_mutation(&written, revision, "app.js");
    let grown = client
        .call(
            "web.applyPatch",
            json!({"path": "app.js", "search": "c", "replace": "cc", "expectedRevision": revision}),
        )
        .await;
    let revision = assert_mutation(&grown, revision, "app.js");
    assert_eq!(client.source("app.js").await.len(), 80_000);
    let over = client
        .call(
            "web.applyPatch",
            json!({"path": "app.js", "search": "c", "replace": "cc", "expectedRevision": revision}),
        )
        .await;
    assert_eq!(error_code(&over), "WORKSPACE_SOURCE_LIMIT");
    assert_eq!(over["error"]["details"]["limit"], 80_000);
    let too_long = client
        .call(
            "web.writeFile",
            json!({"path": "app.js", "source": "c".repeat(80_001)}),
        )
        .await;
    assert_eq!(error_code(&too_long), "TOOL_VALIDATION_FAILED");

    // A miss names the path, never the search text.
    let secret = "not-in-the-file-4711";
    let missed = client
        .call(
            "web.applyPatch",
            json!({"path": "styles.css", "search": secret, "replace": "x"}),
        )
        .await;
    assert_eq!(error_code(&missed), "WORKSPACE_PATCH_NOT_FOUND");
    assert!(!missed.to_string().contains(secret));
    assert_eq!(missed["error"]["details"]["searchLength"], secret.len());

    let unknown = client
        .call(
            "web.writeFile",
            json!({"path": "extra.js", "source": "new"}),
        )
        .await;
    assert_eq!(
        error_code(&unknown),
        "WORKSPACE_FILE_NOT_FOUND",
        "only the three files exist"
    );
    let traversal = client
        .call("web.readFile", json!({"path": "../secret.txt"}))
        .await;
    assert_eq!(error_code(&traversal), "WORKSPACE_PATH_INVALID");
    assert_eq!(client.revision().await, revision, "failures change nothing");
    studio.shutdown().await;
}

#[tokio::test]
async fn a_missing_visual_target_is_a_coded_error() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    client
        .call(
            "web.writeFile",
            json!({"path": "styles.css", "source": "body { color: black; }"}),
        )
        .await;
    client
        .call(
            "web.writeFile",
            json!({"path": "index.html", "source": "<h1>No targets</h1>"}),
        )
        .await;
    let revision = client.revision().await;
    for (tool, arguments, target) in [
        ("web.setTheme", json!({"theme": "amber"}), "theme-tokens"),
        (
            "web.addFeature",
            json!({"title": "t", "description": "d"}),
            "feature-slot",
        ),
        ("web.updateHero", json!({"title": "t"}), "hero-title"),
    ] {
        let result = client.call(tool, arguments).await;
        assert_eq!(error_code(&result), "PREVIEW_TARGET_NOT_FOUND", "{tool}");
        assert_eq!(result["error"]["details"]["target"], target, "{tool}");
    }
    assert_eq!(client.revision().await, revision);
    studio.shutdown().await;
}

/// Reads socket messages until a `surface` event of `web` announces `revision`.
async fn wait_for_surface_revision<S>(socket: &mut S, revision: u64)
where
    S: futures::Stream<
            Item = Result<
                tokio_tungstenite::tungstenite::Message,
                tokio_tungstenite::tungstenite::Error,
            >,
        > + Unpin,
{
    while let Some(message) = socket.next().await {
        let message = message.expect("socket message");
        let Ok(text) = message.to_text() else {
            continue;
        };
        let event: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        if event["type"] == "surface"
            && event["surface"] == "web"
            && event["data"]["revision"] == revision
        {
            return;
        }
    }
    panic!("the socket closed before revision {revision} was announced");
}

#[tokio::test]
async fn with_a_web_page_attached_the_browser_acknowledgement_decides_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let revision = client.revision().await;
    let url = format!(
        "ws://127.0.0.1:{}/api/events?client=ui&surface=web&token={}",
        studio.addr.port(),
        studio.token()
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("websocket connects");
    let hello: Value =
        serde_json::from_str(socket.next().await.unwrap().unwrap().to_text().unwrap()).unwrap();
    assert_eq!(hello["type"], "hello", "the page is attached now");

    let call = {
        let client = Client::new(&studio);
        tokio::spawn(async move {
            client
                .call(
                    "web.setTheme",
                    json!({"theme": "violet", "expectedRevision": revision}),
                )
                .await
        })
    };
    let next = revision + 1;
    wait_for_surface_revision(&mut socket, next).await;
    assert!(!call.is_finished(), "the call waits for the page");

    // An acknowledgement of another revision is ignored; malformed ones are refused.
    let (status, stale) = client
        .post(
            "/api/web/preview/ack",
            json!({"type": "context-action.preview.ready", "revision": revision}),
        )
        .await;
    assert_eq!((status, stale["accepted"].clone()), (200, json!(false)));
    let (status, refused) = client
        .post("/api/web/preview/ack", json!({"type": "ready"}))
        .await;
    assert_eq!(status, 400);
    assert_eq!(refused["error"]["code"], "STUDIO_INVALID_PREVIEW_MESSAGE");
    assert!(!call.is_finished());

    let (status, accepted) = client
        .post(
            "/api/web/preview/ack",
            json!({"type": "context-action.preview.ready", "revision": next}),
        )
        .await;
    assert_eq!((status, accepted["accepted"].clone()), (200, json!(true)));
    let result = call.await.unwrap();
    let content = structured(&result);
    assert_eq!(content["revision"], next);
    assert_eq!(
        content["preview"],
        json!({"revision": next, "status": "ready"})
    );

    // A runtime error reported by the page fails the mutation with a coded preview error.
    let failing = {
        let client = Client::new(&studio);
        tokio::spawn(async move {
            client
                .call(
                    "web.writeFile",
                    json!({"path": "app.js", "source": "throw new Error('boom');", "expectedRevision": next}),
                )
                .await
        })
    };
    wait_for_surface_revision(&mut socket, next + 1).await;
    client
        .post(
            "/api/web/preview/ack",
            json!({"type": "context-action.preview.error", "revision": next + 1, "message": "boom"}),
        )
        .await;
    let result = failing.await.unwrap();
    assert_eq!(error_code(&result), "PREVIEW_RUNTIME_ERROR");
    assert_eq!(
        result["error"]["details"],
        json!({"revision": next + 1, "committed": true, "message": "boom", "previewAction": "refresh"}),
        "the write is applied; only its preview failed, with what it reported"
    );
    // The page forwards each runtime error report: kept for the current revision only, and
    // refused when it is out of shape.
    let report = |revision: u64, line: Value| {
        json!({"type": "context-action.preview.runtimeError", "revision": revision, "kind": "error",
            "message": "Uncaught Error: boom", "source": {"path": "app.js", "line": line, "column": 7}})
    };
    for (body, expected) in [
        (report(next + 1, json!(1)), (200, json!(true))),
        (report(next, json!(1)), (200, json!(false))),
    ] {
        let (status, answer) = client.post("/api/web/preview/ack", body).await;
        assert_eq!((status, answer["accepted"].clone()), expected, "{answer}");
    }
    let (status, refused) = client
        .post("/api/web/preview/ack", report(next + 1, json!(0)))
        .await;
    assert_eq!(status, 400);
    assert_eq!(refused["error"]["code"], "STUDIO_INVALID_PREVIEW_MESSAGE");
    let read = client.call("web.readFile", json!({"path": "app.js"})).await;
    assert_eq!(structured(&read)["source"], "throw new Error('boom');");
    studio.shutdown().await;
}

#[tokio::test]
async fn preview_routes_serve_the_current_revision_only() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let revision = client.revision().await;

    let document = client.get_raw(&format!("/web/preview/{revision}")).await;
    assert_eq!(document.status(), 200);
    assert_eq!(
        document.headers()["content-security-policy"],
        PREVIEW_CSP,
        "always sandboxed, no network"
    );
    assert_eq!(document.headers()["x-content-type-options"], "nosniff");
    let html = document.text().await.unwrap();
    assert!(html.contains("Code the page while it runs"));
    assert!(
        html.contains("context-action.preview.ready"),
        "carries the bridge"
    );
    assert!(html.contains(&revision.to_string()));

    let key = studio.state.security.preview_key().to_owned();
    let unkeyed = client
        .get_raw(&format!("/web/preview/{revision}/assets/styles.css"))
        .await;
    assert_eq!(unkeyed.status(), 404, "the preview key is needed");
    let asset = client
        .get_raw(&format!("/web/preview/{revision}/assets/{key}/styles.css"))
        .await;
    assert_eq!(asset.status(), 200);
    assert!(
        asset.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/css")
    );
    let missing = client
        .get_raw(&format!("/web/preview/{revision}/assets/{key}/none.png"))
        .await;
    assert_eq!(missing.status(), 404);

    client.call("web.setTheme", json!({"theme": "amber"})).await;
    let superseded = client.get_raw(&format!("/web/preview/{revision}")).await;
    assert_eq!(superseded.status(), 410);
    assert!(
        superseded
            .text()
            .await
            .unwrap()
            .contains(&format!("superseded by revision {}", revision + 1))
    );
    // A theme change edits stylesheets only: the preview of `revision` swaps them in place and
    // keeps loading its assets; a script edit ends that, and its assets are superseded.
    let swapped_asset = client
        .get_raw(&format!("/web/preview/{revision}/assets/{key}/styles.css"))
        .await;
    assert_eq!(swapped_asset.status(), 200);
    let current = client
        .get_raw(&format!("/web/preview/{}", revision + 1))
        .await;
    assert_eq!(current.status(), 200);
    assert!(current.text().await.unwrap().contains("#f59e0b"));
    client
        .call(
            "web.writeFile",
            json!({"path": "app.js", "source": "// reloads"}),
        )
        .await;
    for stale in [revision, revision + 1] {
        let old_asset = client
            .get_raw(&format!("/web/preview/{stale}/assets/{key}/styles.css"))
            .await;
        assert_eq!(old_asset.status(), 410, "revision {stale}");
    }

    let page = client.get_raw("/web").await;
    assert_eq!(page.status(), 200);
    let page = page.text().await.unwrap();
    assert!(page.contains(studio.token()), "the page carries the token");
    assert!(page.contains("/ui/web/main.js"));
    for asset in ["/ui/web/main.js", "/ui/lib/surface.js", "/ui/web.css"] {
        assert_eq!(client.get_raw(asset).await.status(), 200, "{asset}");
    }
    studio.shutdown().await;
}

#[tokio::test]
async fn local_agent_runs_on_the_web_surface_wait_for_approval() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let revision = client.revision().await;

    let run_id = client.run("make it rose").await;
    let approval = client.wait_approval().await;
    assert_eq!(approval["name"], "web.setTheme");
    assert_eq!(approval["source"], "model");
    assert_eq!(approval["mode"], "agent");
    assert_eq!(
        approval["argumentKeys"],
        json!(["theme", "expectedRevision"])
    );
    assert!(
        approval["safeArgumentPreview"]
            .as_str()
            .unwrap()
            .starts_with("theme: rose"),
        "{approval}"
    );
    assert_eq!(
        client.revision().await,
        revision,
        "nothing changes before approval"
    );
    client
        .decide(approval["id"].as_str().unwrap(), "allow")
        .await;
    let run = client.wait_run(&run_id).await;
    assert_eq!(run["state"], "completed", "{run}");
    let steps: Vec<&str> = run["report"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| step["tool"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["web.getWorkspace", "web.setTheme"]);
    assert_eq!(run["report"]["revision"], revision + 1);
    assert!(client.source("styles.css").await.contains("#f43f5e"));

    // The patch recipe reads the file first and is denied without a change.
    let run_id = client.run(r#"replace "Pulses" with "Beats""#).await;
    let approval = client.wait_approval().await;
    assert_eq!(approval["name"], "web.applyPatch");
    assert!(
        approval["safeArgumentPreview"]
            .as_str()
            .unwrap()
            .contains("path: index.html"),
        "{approval}"
    );
    assert!(
        !approval.to_string().contains("Pulses"),
        "approvals never show patch text"
    );
    client
        .decide(approval["id"].as_str().unwrap(), "deny")
        .await;
    let run = client.wait_run(&run_id).await;
    assert_eq!(run["state"], "denied", "{run}");
    let steps: Vec<&str> = run["report"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| step["tool"].as_str().unwrap())
        .collect();
    assert_eq!(
        steps,
        ["web.getWorkspace", "web.readFile", "web.applyPatch"]
    );
    assert!(client.source("index.html").await.contains("Pulses"));

    // Reads need no approval.
    let run_id = client.run("read app.js").await;
    let run = client.wait_run(&run_id).await;
    assert_eq!(run["state"], "completed", "{run}");

    // Cancelling a run waiting for approval removes the approval and changes nothing.
    let before = client.revision().await;
    let run_id = client.run(r#"add a feature "Cancelled""#).await;
    client.wait_approval().await;
    let (status, _) = client
        .post(&format!("/api/agent/runs/{run_id}/cancel"), json!({}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(client.wait_run(&run_id).await["state"], "cancelled");
    assert!(
        client
            .get("/api/approvals")
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(client.revision().await, before);

    // Each run is one session in the trace, with its agent.request row and web.* calls only.
    let trace = client.get("/api/trace").await;
    let rows = trace["rows"].as_array().unwrap();
    let run_rows: Vec<&Value> = rows
        .iter()
        .filter(|row| row["kind"] == "agent.request")
        .collect();
    assert_eq!(run_rows.len(), 4);
    for row in rows.iter().filter(|row| row["kind"] == "tools/call") {
        assert!(row["name"].as_str().unwrap().starts_with("web."), "{row}");
        assert!(!row.to_string().contains("Pulses"), "rows carry no values");
    }
    assert!(trace["sessions"].as_array().unwrap().len() >= 4);

    let (status, refused) = client
        .post(
            "/api/agent/runs",
            json!({"prompt": "make it rose", "surface": "elsewhere"}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(refused["error"]["code"], "STUDIO_INVALID_SURFACE");
    studio.shutdown().await;
}

#[tokio::test]
async fn the_web_workspace_survives_a_restart_and_falls_back_to_memory() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    client
        .call(
            "web.updateHero",
            json!({"title": "Persisted across launches"}),
        )
        .await;
    let revision = client.revision().await;
    studio.shutdown().await;

    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    assert!(
        client
            .source("index.html")
            .await
            .contains("Persisted across launches")
    );
    assert!(
        client.revision().await > revision,
        "the clock stays monotonic"
    );
    studio.shutdown().await;

    let blocked = dir.path().join("not-a-directory");
    std::fs::write(&blocked, "a file where the data directory should be").unwrap();
    let studio = start(&blocked).await;
    let client = Client::new(&studio);
    let workspace = client.workspace().await;
    assert_eq!(workspace["storageMode"], "memory");
    assert!(
        workspace["storageError"]
            .as_str()
            .unwrap()
            .contains("could not be created")
    );
    let themed = client.call("web.setTheme", json!({"theme": "amber"})).await;
    assert_eq!(structured(&themed)["storageMode"], "memory");
    studio.shutdown().await;
}

#[tokio::test]
async fn mcp_clients_use_the_same_web_tools_and_guards() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let person = Person::approving();
    let client = connect(&studio, person.clone()).await;
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|tool| tool.name.to_string())
        .filter(|name| name.starts_with("web."))
        .collect();
    assert_eq!(
        names,
        [
            "web.getWorkspace",
            "web.readFile",
            "web.applyPatch",
            "web.writeFile",
            "web.setTheme",
            "web.addFeature",
            "web.updateHero"
        ]
    );
    let workspace = call(&client, "web.getWorkspace", json!({})).await;
    assert_eq!(workspace["isError"], false, "{workspace}");
    let revision = workspace["structuredContent"]["revision"].as_u64().unwrap();

    let stale = call(
        &client,
        "web.updateHero",
        json!({"title": "Stale", "expectedRevision": revision - 1}),
    )
    .await;
    assert_eq!(error(&stale)["code"], "WORKSPACE_REVISION_CONFLICT");
    assert_eq!(
        Client::new(&studio).revision().await,
        revision,
        "a stale call changes nothing, even once approved"
    );

    // Without a page, the MCP client's own person approves through elicitation.
    let themed = call(
        &client,
        "web.setTheme",
        json!({"theme": "violet", "expectedRevision": revision}),
    )
    .await;
    assert_eq!(themed["isError"], false, "{themed}");
    assert_eq!(themed["structuredContent"]["revision"], revision + 1);
    assert_eq!(themed["structuredContent"]["preview"]["status"], "compiled");
    assert!(
        person
            .asked
            .lock()
            .unwrap()
            .iter()
            .any(|message| message.contains("web.setTheme"))
    );
    client.cancel().await.unwrap();

    // A client that cannot be asked is denied and nothing changes.
    let absent = connect(&studio, Person::absent()).await;
    let denied = call(
        &absent,
        "web.writeFile",
        json!({"path": "app.js", "source": "// denied"}),
    )
    .await;
    assert_eq!(error(&denied)["code"], "TOOL_POLICY_DENIED");
    assert_eq!(
        Client::new(&studio).revision().await,
        revision + 1,
        "the denied write changed nothing"
    );
    absent.cancel().await.unwrap();
    studio.shutdown().await;
}
