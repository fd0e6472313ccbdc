//! The studio never discards an acknowledged edit silently: restarts (SIGTERM, and `kill -9`
//! in the middle of `saveAll`) keep unsaved work, and every import route refuses to replace it
//! without `discardChanges: true`. Real temp folders, the real SQLite files, the real binary.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use live_code_studio::host::{self, RunningStudio, StudioOptions, TOKEN_FILE};
use serde_json::{Value, json};

use crate::support::process::wait_for_url;

/// A studio reached over HTTP (in this process or a child), with its token.
struct Client {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl Client {
    fn new(base: String, token: String) -> Self {
        Self {
            http: reqwest::Client::new(),
            base,
            token,
        }
    }

    fn of(studio: &RunningStudio) -> Self {
        Self::new(
            format!("http://127.0.0.1:{}", studio.addr.port()),
            studio.token().to_owned(),
        )
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .header("x-studio-token", &self.token)
            .json(&body)
            .send()
            .await
            .expect("the studio answers");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn call(&self, name: &str, arguments: Value) -> Value {
        let request =
            json!({"method": "tools/call", "params": {"name": name, "arguments": arguments}});
        self.post("/api/tools/call", request).await.1
    }

    /// A successful call's structured content.
    async fn ok(&self, name: &str, arguments: Value) -> Value {
        let result = self.call(name, arguments).await;
        assert!(result.get("isError").is_none(), "{name}: {result}");
        result["structuredContent"].clone()
    }

    async fn status(&self) -> Value {
        self.ok("workspace.getStatus", json!({})).await
    }

    async fn source(&self, path: &str) -> String {
        let read = self.ok("workspace.readFile", json!({"path": path})).await;
        read["source"].as_str().unwrap().to_owned()
    }

    async fn write(&self, path: &str, source: &str) {
        self.ok(
            "workspace.writeFile",
            json!({"path": path, "source": source}),
        )
        .await;
    }
}

fn site(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, source) in files {
        std::fs::write(dir.path().join(path), source).unwrap();
    }
    dir
}

fn small_site() -> tempfile::TempDir {
    site(&[
        ("index.html", "<h1>On disk</h1><script src=app.js></script>"),
        ("app.js", "let clicks = 0;"),
    ])
}

fn on_disk(folder: &Path, path: &str) -> String {
    std::fs::read_to_string(folder.join(path)).unwrap()
}

async fn start(data: &Path, folder: Option<&Path>) -> RunningStudio {
    host::start(StudioOptions::ephemeral(data).with_folder(folder.map(Path::to_path_buf)))
        .await
        .expect("studio starts")
}

/// The studio binary serving the UI on a free port, as a person runs it.
struct ChildStudio {
    child: Child,
    client: Client,
    stdout: std::sync::mpsc::Receiver<String>,
}

impl ChildStudio {
    fn spawn(data: &Path, folder: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_studio"))
            .args(["--port", "0", "--data-dir"])
            .arg(data)
            .arg("--folder")
            .arg(folder)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("studio binary starts");
        let (base, stdout) = wait_for_url(&mut child);
        let token = std::fs::read_to_string(data.join(TOKEN_FILE)).expect("token file");
        Self {
            child,
            client: Client::new(base, token),
            stdout,
        }
    }

    /// The lines printed since the URL.
    fn printed(&self) -> Vec<String> {
        self.stdout.try_iter().collect()
    }

    fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(sent.success());
        self.child.wait().unwrap()
    }

    fn kill_9(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

#[tokio::test]
async fn an_edit_survives_a_sigterm_restart_with_the_same_folder() {
    let (data, folder) = (tempfile::tempdir().unwrap(), small_site());
    let first = ChildStudio::spawn(data.path(), folder.path());
    first.client.write("app.js", "let clicks = 1;").await;
    assert_eq!(first.client.status().await["dirtyPaths"], json!(["app.js"]));
    assert!(first.terminate().success(), "SIGTERM is a clean stop");

    let second = ChildStudio::spawn(data.path(), folder.path());
    let status = second.client.status().await;
    assert_eq!(status["dirtyPaths"], json!(["app.js"]), "{status}");
    assert_eq!(status["folder"]["connected"], true);
    assert_eq!(status["resumed"]["unsavedPaths"], json!(["app.js"]));
    assert_eq!(second.client.source("app.js").await, "let clicks = 1;");
    let printed = second.printed().join("\n");
    assert!(
        printed.contains("kept 1 unsaved change(s) from the last session"),
        "{printed}"
    );
    let saved = second.client.ok("workspace.saveAll", json!({})).await;
    assert_eq!(saved["clean"], true);
    assert_eq!(on_disk(folder.path(), "app.js"), "let clicks = 1;");
    second.terminate();
}

#[tokio::test]
async fn a_kill_9_during_save_all_loses_nothing_and_marks_only_recorded_saves_clean() {
    const FILES: usize = 150;
    let names: Vec<String> = (0..FILES).map(|i| format!("part{i:03}.js")).collect();
    let mut files: Vec<(&str, &str)> = names.iter().map(|name| (name.as_str(), "old")).collect();
    files.push(("index.html", "<p>parts</p>"));
    let (data, folder) = (tempfile::tempdir().unwrap(), site(&files));
    let first = ChildStudio::spawn(data.path(), folder.path());
    for name in &names {
        first.client.write(name, &format!("new {name}")).await;
    }
    let saving = {
        let client = Client::new(first.client.base.clone(), first.client.token.clone());
        tokio::spawn(async move {
            let _ = client.call("workspace.saveAll", json!({})).await;
        })
    };
    let started = std::time::Instant::now();
    // Files are written in path order, each marked saved before the next write begins, so once
    // three hold new bytes at least the first two were recorded.
    let written = |names: &[String]| {
        names
            .iter()
            .filter(|name| on_disk(folder.path(), name).starts_with("new"))
            .count()
    };
    while written(&names) < 3 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no write began"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    first.kill_9();
    saving.abort();

    let studio = start(data.path(), Some(folder.path())).await;
    let client = Client::of(&studio);
    let status = client.status().await;
    let dirty: Vec<&str> = status["dirtyPaths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|path| path.as_str().unwrap())
        .collect();
    assert!(!dirty.is_empty(), "the kill landed before the save ended");
    assert!(dirty.len() < FILES, "at least one write was recorded");
    for name in &names {
        let wanted = format!("new {name}");
        assert_eq!(client.source(name).await, wanted, "{name} kept");
        if !dirty.contains(&name.as_str()) {
            assert_eq!(
                on_disk(folder.path(), name),
                wanted,
                "clean {name} is on disk"
            );
        }
    }
    let saved = client.ok("workspace.saveAll", json!({})).await;
    assert_eq!(saved["clean"], true, "{saved}");
    for name in &names {
        assert_eq!(on_disk(folder.path(), name), format!("new {name}"));
    }
    studio.shutdown().await;
}

/// A studio linked to `folder` with `app.js` edited (dirty).
async fn dirty_studio(data: &Path, folder: &Path) -> (RunningStudio, Client) {
    let studio = start(data, Some(folder)).await;
    let client = Client::of(&studio);
    client.write("app.js", "let clicks = 2;").await;
    (studio, client)
}

fn assert_refused(body: &Value, operation: &str) {
    let error = if body.get("error").is_some() {
        &body["error"]
    } else {
        body
    };
    assert_eq!(error["code"], "WORKSPACE_FOLDER_STATE_CONFLICT", "{body}");
    assert_eq!(error["retryable"], false, "{body}");
    assert_eq!(error["details"]["operation"], operation, "{body}");
    assert_eq!(error["details"]["dirtyPaths"], json!(["app.js"]), "{body}");
}

#[tokio::test]
async fn opening_the_same_folder_over_an_edit_is_refused_and_undo_still_works() {
    let (data, folder) = (tempfile::tempdir().unwrap(), small_site());
    let (studio, client) = dirty_studio(data.path(), folder.path()).await;
    let revision = client.status().await["revision"].clone();
    let path = folder.path().display().to_string();
    let (status, body) = client
        .post(
            "/api/folder/open",
            json!({"path": path, "expectedRevision": revision}),
        )
        .await;
    assert_eq!(status, 409);
    assert_refused(&body, "open");
    assert_eq!(client.source("app.js").await, "let clicks = 2;");
    client.ok("workspace.undo", json!({})).await;
    assert_eq!(client.source("app.js").await, "let clicks = 0;");
    client.ok("workspace.redo", json!({})).await;

    let revision = client.status().await["revision"].clone();
    let (status, body) = client
        .post(
            "/api/folder/open",
            json!({"path": path, "expectedRevision": revision, "discardChanges": true}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(client.source("app.js").await, "let clicks = 0;");
    studio.shutdown().await;
}

#[tokio::test]
async fn reload_upload_reset_and_another_folder_are_refused_over_an_edit() {
    let (data, folder) = (tempfile::tempdir().unwrap(), small_site());
    let other = small_site();
    let (studio, client) = dirty_studio(data.path(), folder.path()).await;

    let reload = client.call("workspace.reloadFolder", json!({})).await;
    assert_refused(&reload, "reload");
    let (status, body) = client
        .post(
            "/api/folder/open",
            json!({"path": other.path().display().to_string()}),
        )
        .await;
    assert_eq!(status, 409);
    assert_refused(&body, "open");
    let upload = json!({"rootName": "up", "files": [
        {"path": "index.html", "size": 9, "data": "PHA+dXA8L3A+"}
    ]});
    let (status, body) = client.post("/api/folder/upload", upload.clone()).await;
    assert_eq!(status, 409, "{body}");
    assert_refused(&body, "import");
    client.ok("workspace.disconnectFolder", json!({})).await;
    let reset = client.call("workspace.reset", json!({})).await;
    assert_refused(&reset, "reset");
    assert_eq!(client.source("app.js").await, "let clicks = 2;", "kept");

    let mut discarding = upload;
    discarding["discardChanges"] = json!(true);
    let (status, body) = client.post("/api/folder/upload", discarding).await;
    assert_eq!(status, 200, "{body}");
    client
        .ok("workspace.reset", json!({"discardChanges": false}))
        .await;
    studio.shutdown().await;
}

#[tokio::test]
async fn a_model_call_that_discards_still_waits_for_approval() {
    use tool_context::ToolCallOptions;
    use tool_protocol::{ToolCallContext, ToolCallMode, ToolCallSource};

    let (data, folder) = (tempfile::tempdir().unwrap(), small_site());
    let (studio, client) = dirty_studio(data.path(), folder.path()).await;
    let state = studio.state.clone();
    let call = tokio::spawn(async move {
        let request = json!({"method": "tools/call", "params": {
            "name": "workspace.reloadFolder", "arguments": {"discardChanges": true}}});
        let context = ToolCallContext::new(ToolCallSource::Model, ToolCallMode::Agent);
        let options = ToolCallOptions::default().with_context(context);
        state.registry.call_tool_value(&request, options).await
    });
    let pending = loop {
        let pending = studio.state.approvals.snapshot();
        if let Some(first) = pending.first() {
            break first.clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let pending = serde_json::to_value(&pending).unwrap();
    assert_eq!(pending["name"], "workspace.reloadFolder", "{pending}");
    studio.state.approvals.close();
    let result = serde_json::to_value(call.await.unwrap()).unwrap();
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(client.source("app.js").await, "let clicks = 2;", "kept");
    studio.shutdown().await;
}

#[tokio::test]
async fn start_up_over_unsaved_work_from_elsewhere_is_refused_unless_discarded() {
    let (data, folder) = (tempfile::tempdir().unwrap(), small_site());
    let other = small_site();
    let (studio, _client) = dirty_studio(data.path(), folder.path()).await;
    studio.shutdown().await;
    let refused =
        host::start(StudioOptions::ephemeral(data.path()).with_folder(other.path().to_owned()))
            .await
            .expect_err("start-up refuses");
    assert!(
        refused.contains("WORKSPACE_FOLDER_STATE_CONFLICT"),
        "{refused}"
    );
    assert!(refused.contains("--discard-changes"), "{refused}");
    let kept = start(data.path(), Some(folder.path())).await;
    assert_eq!(Client::of(&kept).source("app.js").await, "let clicks = 2;");
    kept.shutdown().await;
    let replaced = host::start(
        StudioOptions::ephemeral(data.path())
            .with_folder(other.path().to_owned())
            .with_discard_changes(true),
    )
    .await
    .expect("an explicit discard starts");
    let status = Client::of(&replaced).status().await;
    assert_eq!(status["isDirty"], false);
    replaced.shutdown().await;
}

#[tokio::test]
async fn opening_a_missing_path_or_a_file_is_folder_not_found() {
    let data = tempfile::tempdir().unwrap();
    let folder = small_site();
    let studio = start(data.path(), None).await;
    let client = Client::of(&studio);
    let missing: PathBuf = folder.path().join("missing");
    for (path, reason) in [
        (missing, "no such folder"),
        (folder.path().join("app.js"), "it is not a folder"),
    ] {
        let (status, body) = client
            .post(
                "/api/folder/open",
                json!({"path": path.display().to_string()}),
            )
            .await;
        assert_eq!(status, 404, "{body}");
        assert_eq!(body["error"]["code"], "WORKSPACE_FOLDER_NOT_FOUND");
        assert_eq!(body["error"]["retryable"], false);
        assert_eq!(body["error"]["details"]["reason"], reason);
    }
    studio.shutdown().await;
}

#[tokio::test]
async fn an_open_reports_skipped_files_by_reason() {
    let data = tempfile::tempdir().unwrap();
    let folder = site(&[
        ("index.html", "<p>"),
        ("tool.exe", "MZ"),
        ("data.json", "\0\0"),
    ]);
    std::os::unix::fs::symlink("/etc/hostname", folder.path().join("link.css")).unwrap();
    let studio = start(data.path(), None).await;
    let (status, body) = Client::of(&studio)
        .post(
            "/api/folder/open",
            json!({"path": folder.path().display().to_string()}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["skippedCount"], 3, "{body}");
    assert_eq!(
        body["skippedByReason"],
        json!({"unsupported": 1, "binary": 1, "symlink": 1})
    );
    assert_eq!(body["skipped"].as_array().unwrap().len(), 3);
    studio.shutdown().await;
}
