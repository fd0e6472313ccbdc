//! `editor.saveFile` / `editor.saveAll` on a real loopback studio: folder writes through a
//! fault-injecting folder, durable records with session-scoped keys, approval for model and MCP
//! calls, and recovery of unknown saves by read-back.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex};

use live_code_editor::workspace::ImportGuard;
use live_code_editor::workspace::folder::FolderAdapter;
use live_code_editor::workspace::manager::{WorkspaceDocumentManager, WriteOptions};
use live_code_editor::workspace::os_folder::{FolderFs, OsFolder, OsFs};
use live_code_studio::host::{self, RunningStudio, StudioOptions};
use live_code_studio::surfaces::editor::saves::{MAX_MANIFEST_FILES, SaveRecord};
use serde_json::{Value, json};
use tool_context::ToolCallOptions;
use tool_durable_operations::OperationState;
use tool_protocol::{ToolCallContext, ToolCallMode, ToolCallSource};

use crate::support::http::error_of;

/// What a write of one file name does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Creating the temporary file is refused by the OS (confirmed: nothing written).
    DenyWrite,
    /// The rename happens, then reports an error (the bytes landed; the outcome is ambiguous).
    ErrorAfterRename,
    /// The rename reports an error without renaming (nothing landed; still ambiguous).
    ErrorInsteadOfRename,
}

/// A [`FolderFs`] that counts completed renames per file name and injects faults by name.
#[derive(Debug, Default)]
struct FaultFs {
    faults: Mutex<HashMap<String, Fault>>,
    renames: Mutex<HashMap<String, usize>>,
}

impl FaultFs {
    fn set(&self, name: &str, fault: Fault) {
        self.faults.lock().unwrap().insert(name.to_owned(), fault);
    }

    fn clear(&self) {
        self.faults.lock().unwrap().clear();
    }

    fn fault(&self, path: &Path) -> Option<Fault> {
        let name = path.file_name()?.to_str()?;
        let faults = self.faults.lock().unwrap();
        faults.get(name).copied().or_else(|| {
            // Temporary siblings are `.<name>.<pid>-<n>.lce-tmp`.
            faults
                .iter()
                .find(|(target, _)| name.starts_with(&format!(".{target}.")))
                .map(|(_, fault)| *fault)
        })
    }

    /// Completed renames onto `name`.
    fn writes(&self, name: &str) -> usize {
        self.renames.lock().unwrap().get(name).copied().unwrap_or(0)
    }

    fn count(&self, to: &Path) {
        let name = to.file_name().unwrap().to_string_lossy().into_owned();
        *self.renames.lock().unwrap().entry(name).or_default() += 1;
    }
}

impl FolderFs for FaultFs {
    fn write_new(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        if self.fault(path) == Some(Fault::DenyWrite) {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        OsFs.write_new(path, bytes)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        match self.fault(to) {
            Some(Fault::ErrorAfterRename) => {
                OsFs.rename(from, to)?;
                self.count(to);
                Err(io::Error::other("injected error after rename"))
            }
            Some(Fault::ErrorInsteadOfRename) => Err(io::Error::other("injected rename failure")),
            _ => {
                OsFs.rename(from, to)?;
                self.count(to);
                Ok(())
            }
        }
    }
}

struct Harness {
    studio: RunningStudio,
    http: reqwest::Client,
    base: String,
    fs: Arc<FaultFs>,
    root: tempfile::TempDir,
    _data: tempfile::TempDir,
}

const SITE: &[(&str, &str)] = &[
    ("app.js", "console.log(1);"),
    (
        "index.html",
        "<link rel=stylesheet href=styles.css><h1>Site</h1>",
    ),
    ("styles.css", "h1 { color: teal; }"),
];

/// A studio whose editor is linked to a temporary folder holding `files`.
async fn harness(files: &[(&str, &str)]) -> Harness {
    let data = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    for (path, source) in files {
        fs::write(root.path().join(path), source).unwrap();
    }
    let studio = host::start(StudioOptions::ephemeral(data.path()))
        .await
        .expect("studio starts");
    let fs = Arc::new(FaultFs::default());
    let fault_fs: Arc<dyn FolderFs> = fs.clone();
    let folder: Arc<dyn FolderAdapter> =
        Arc::new(OsFolder::with_fs(root.path(), fault_fs).unwrap());
    studio
        .state
        .editor
        .manager()
        .open_folder(folder, ImportGuard::default())
        .await
        .expect("folder links");
    studio.state.editor.publish_change().await;
    Harness {
        base: format!("http://127.0.0.1:{}", studio.addr.port()),
        http: reqwest::Client::new(),
        studio,
        fs,
        root,
        _data: data,
    }
}

impl Harness {
    fn manager(&self) -> &Arc<WorkspaceDocumentManager> {
        self.studio.state.editor.manager()
    }

    async fn edit(&self, path: &str, source: &str) {
        self.manager()
            .write_file(path, source, WriteOptions::default())
            .await
            .expect("edit applies");
    }

    async fn dirty(&self) -> Vec<String> {
        self.manager().status().await.dirty_paths
    }

    fn disk(&self, path: &str) -> Option<String> {
        fs::read_to_string(self.root.path().join(path)).ok()
    }

    /// A palette call (`local`/`direct`, session `studio-ui`) through `POST /api/tools/call`.
    async fn palette(&self, name: &str, arguments: Value) -> Value {
        let body =
            json!({"method": "tools/call", "params": {"name": name, "arguments": arguments}});
        self.post("/api/tools/call", body).await.1
    }

    /// A registry call with an explicit origin and session.
    async fn call(&self, context: ToolCallContext, name: &str, arguments: Value) -> Value {
        let request =
            json!({"method": "tools/call", "params": {"name": name, "arguments": arguments}});
        let result = self
            .studio
            .state
            .registry
            .call_tool_value(&request, ToolCallOptions::default().with_context(context))
            .await;
        serde_json::to_value(result).unwrap()
    }

    /// A direct local call in `session` (runs without approval).
    async fn direct(&self, session: &str, name: &str, arguments: Value) -> Value {
        let context =
            ToolCallContext::new(ToolCallSource::Local, ToolCallMode::Direct).with_session(session);
        self.call(context, name, arguments).await
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .header("x-studio-token", self.studio.token())
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn unknown_saves(&self) -> Value {
        self.http
            .get(format!("{}/api/editor/saves", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    async fn recover(&self, key: &str) -> (u16, Value) {
        self.post("/api/editor/saves/recover", json!({"key": key}))
            .await
    }

    async fn record(&self, key: &str) -> Option<(OperationState, Option<SaveRecord>)> {
        let store = self.studio.state.editor.saves().store();
        let record = store.get(key).await.unwrap()?;
        Some((record.state, SaveRecord::of_operation(&record)))
    }
}

fn saved(result: &Value) -> &Value {
    assert!(
        result.get("isError").is_none(),
        "unexpected error: {result}"
    );
    &result["structuredContent"]
}

fn key_of(result: &Value) -> String {
    saved(result)["operationKeys"][0]
        .as_str()
        .unwrap()
        .to_owned()
}

fn strings(value: &Value) -> Vec<String> {
    serde_json::from_value(value.clone()).unwrap()
}

#[tokio::test]
async fn save_file_writes_only_that_path_and_clears_only_it() {
    let h = harness(SITE).await;
    h.edit("styles.css", "h1 { color: red; }").await;
    h.edit("app.js", "console.log(2);").await;

    let result = h
        .palette("editor.saveFile", json!({"path": "styles.css"}))
        .await;

    let content = saved(&result);
    assert_eq!(content["operation"], "saveFile");
    assert_eq!(content["savedPaths"], json!(["styles.css"]));
    assert_eq!(content["replayedPaths"], json!([]));
    assert_eq!(content["dirtyPaths"], json!(["app.js"]));
    for field in [
        "activePath",
        "workspaceRevision",
        "documentRevision",
        "preview",
    ] {
        assert!(content.get(field).is_some(), "{field} missing: {content}");
    }
    assert_eq!(h.disk("styles.css").unwrap(), "h1 { color: red; }");
    assert_eq!(h.disk("app.js").unwrap(), "console.log(1);");
    assert_eq!(h.dirty().await, ["app.js"]);
    let (state, record) = h.record(&key_of(&result)).await.unwrap();
    assert_eq!(state, OperationState::Completed);
    let record = record.unwrap();
    assert_eq!(record.tool, "editor.saveFile");
    assert_eq!(record.session.as_deref(), Some("studio-ui"));
    assert_eq!(record.completed_paths, ["styles.css"]);
    assert_eq!(record.manifest[0].length, 18);
}

#[tokio::test]
async fn saves_refuse_without_a_folder_a_text_file_or_the_current_revision() {
    let h = harness(SITE).await;
    h.edit("app.js", "console.log(2);").await;
    let revision = h.manager().revision().await;

    let stale = h
        .palette(
            "editor.saveAll",
            json!({"expectedWorkspaceRevision": revision - 1}),
        )
        .await;
    assert_eq!(error_of(&stale)["code"], "WORKSPACE_REVISION_CONFLICT");
    let missing = h
        .palette("editor.saveFile", json!({"path": "nope.css"}))
        .await;
    assert_eq!(error_of(&missing)["code"], "WORKSPACE_FILE_NOT_FOUND");
    let invalid = h
        .palette("editor.saveFile", json!({"path": "../x.css"}))
        .await;
    assert_eq!(error_of(&invalid)["code"], "WORKSPACE_PATH_INVALID");
    h.manager().disconnect_folder().await;
    let unlinked = h.palette("editor.saveAll", json!({})).await;
    assert_eq!(
        error_of(&unlinked)["code"],
        "WORKSPACE_FOLDER_NOT_CONNECTED"
    );

    assert_eq!(h.fs.writes("app.js"), 0);
    assert_eq!(h.dirty().await, ["app.js"]);
    assert_eq!(h.unknown_saves().await["unknown"], json!([]));
}

#[tokio::test]
async fn save_all_partial_failure_keeps_written_files_clean_and_the_rest_dirty() {
    let h = harness(SITE).await;
    h.edit("app.js", "console.log(2);").await;
    h.edit("index.html", "<h1>New</h1>").await;
    h.edit("styles.css", "h1 { color: red; }").await;
    h.fs.set("index.html", Fault::DenyWrite);

    let result = h.palette("editor.saveAll", json!({})).await;

    let error = error_of(&result);
    assert_eq!(
        error["code"], "WORKSPACE_FOLDER_PERMISSION_DENIED",
        "{result}"
    );
    assert_eq!(error["details"]["completedPaths"], json!(["app.js"]));
    assert_eq!(error["details"]["state"], "failed");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .ends_with("Completed before the failure: app.js."),
        "{error}"
    );
    assert_eq!(h.dirty().await, ["index.html", "styles.css"]);
    assert_eq!(h.disk("app.js").unwrap(), "console.log(2);");
    assert_eq!(h.disk("styles.css").unwrap(), "h1 { color: teal; }");
    let key = error["details"]["operationKey"].as_str().unwrap();
    let (state, record) = h.record(key).await.unwrap();
    assert_eq!(state, OperationState::Failed);
    let record = record.unwrap();
    assert_eq!(record.completed_paths, ["app.js"]);
    assert_eq!(record.failed_path.as_deref(), Some("index.html"));

    h.fs.clear();
    let retry = h.palette("editor.saveAll", json!({})).await;
    assert_eq!(
        saved(&retry)["savedPaths"],
        json!(["index.html", "styles.css"])
    );
    assert!(h.dirty().await.is_empty());
    assert_eq!(h.fs.writes("app.js"), 1, "the retry is scoped to the rest");

    let nothing = h.palette("editor.saveAll", json!({})).await;
    assert_eq!(saved(&nothing)["savedPaths"], json!([]));
    assert_eq!(saved(&nothing)["operationKeys"], json!([]));
    assert_eq!(h.fs.writes("index.html"), 1);
}

#[tokio::test]
async fn a_same_session_retry_replays_and_a_new_session_or_content_writes_again() {
    let h = harness(SITE).await;
    h.edit("styles.css", "h1 { color: red; }").await;
    let args = json!({"path": "styles.css"});

    let first = h.direct("session-a", "editor.saveFile", args.clone()).await;
    let retry = h.direct("session-a", "editor.saveFile", args.clone()).await;

    assert_eq!(h.fs.writes("styles.css"), 1, "the retry wrote nothing");
    assert_eq!(saved(&retry)["replayedPaths"], json!(["styles.css"]));
    assert_eq!(key_of(&retry), key_of(&first));

    let other = h.direct("session-b", "editor.saveFile", args.clone()).await;
    assert_eq!(h.fs.writes("styles.css"), 2);
    assert_ne!(key_of(&other), key_of(&first));
    assert_eq!(saved(&other)["replayedPaths"], json!([]));

    h.edit("styles.css", "h1 { color: blue; }").await;
    let changed = h.direct("session-a", "editor.saveFile", args.clone()).await;
    assert_eq!(h.fs.writes("styles.css"), 3);
    assert_ne!(key_of(&changed), key_of(&first));

    // The folder no longer holds the replayed bytes: the next generation writes them again.
    h.edit("styles.css", "h1 { color: red; }").await;
    fs::write(h.root.path().join("styles.css"), "changed outside").unwrap();
    let rewritten = h.direct("session-a", "editor.saveFile", args).await;
    assert_eq!(h.fs.writes("styles.css"), 4);
    assert_eq!(key_of(&rewritten), format!("{}#1", key_of(&first)));
    assert_eq!(h.disk("styles.css").unwrap(), "h1 { color: red; }");
}

#[tokio::test]
async fn a_model_save_waits_for_approval_and_a_denial_writes_nothing() {
    let h = Arc::new(harness(SITE).await);
    h.edit("styles.css", "h1 { color: red; }").await;
    let mut approvals = h.studio.state.approvals.subscribe();

    for (source, decision) in [
        (ToolCallSource::Model, "deny"),
        (ToolCallSource::Mcp, "allow"),
    ] {
        let call = {
            let h = Arc::clone(&h);
            tokio::spawn(async move {
                let context = ToolCallContext::new(source, ToolCallMode::Agent).with_session("run");
                h.call(context, "editor.saveFile", json!({"path": "styles.css"}))
                    .await
            })
        };
        let pending = approvals
            .wait_for(|pending| !pending.is_empty())
            .await
            .unwrap()
            .clone();
        assert_eq!(pending[0].name, "editor.saveFile");
        assert_eq!(
            h.fs.writes("styles.css"),
            0,
            "nothing is written before the decision"
        );
        let id = pending[0].id.clone();
        let (status, _) = h
            .post(
                &format!("/api/approvals/{id}"),
                json!({"decision": decision}),
            )
            .await;
        assert_eq!(status, 200);
        let result = call.await.unwrap();
        if decision == "deny" {
            assert_eq!(error_of(&result)["code"], "TOOL_POLICY_DENIED", "{result}");
            assert_eq!(h.fs.writes("styles.css"), 0);
            assert_eq!(h.dirty().await, ["styles.css"]);
            assert_eq!(h.disk("styles.css").unwrap(), "h1 { color: teal; }");
        } else {
            assert_eq!(saved(&result)["savedPaths"], json!(["styles.css"]));
            assert_eq!(h.fs.writes("styles.css"), 1);
        }
    }
}

/// Starts a save whose write of `path` fails with `fault`; returns the unknown record's key.
async fn unknown_save(h: &Harness, tool: &str, args: Value, path: &str, fault: Fault) -> String {
    h.fs.set(path, fault);
    let result = h.palette(tool, args).await;
    h.fs.clear();
    let error = error_of(&result);
    assert_eq!(error["code"], "WORKSPACE_SIDE_EFFECT_UNKNOWN", "{result}");
    assert_eq!(error["details"]["state"], "unknown");
    error["details"]["operationKey"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn an_unknown_save_is_recovered_when_the_bytes_match() {
    let h = harness(SITE).await;
    h.edit("styles.css", "h1 { color: red; }").await;
    let args = json!({"path": "styles.css"});
    let key = unknown_save(
        &h,
        "editor.saveFile",
        args.clone(),
        "styles.css",
        Fault::ErrorAfterRename,
    )
    .await;
    assert_eq!(h.dirty().await, ["styles.css"]);

    let listed = h.unknown_saves().await;
    assert_eq!(listed["unknown"][0]["key"], key.as_str(), "{listed}");
    let manifest = &listed["unknown"][0]["save"]["manifest"];
    assert_eq!(manifest[0]["path"], "styles.css");
    assert_eq!(manifest[0]["length"], 18);
    assert!(
        manifest[0]["sha256"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );

    // The same save again is refused until recovered, without writing.
    let blocked = h.palette("editor.saveFile", args.clone()).await;
    assert_eq!(error_of(&blocked)["details"]["operationKey"], key.as_str());
    assert_eq!(h.fs.writes("styles.css"), 1);

    let (status, recovered) = h.recover(&key).await;
    assert_eq!(status, 200, "{recovered}");
    assert_eq!(recovered["state"], "completed");
    assert_eq!(recovered["cleanedPaths"], json!(["styles.css"]));
    assert!(h.dirty().await.is_empty());
    assert_eq!(h.record(&key).await.unwrap().0, OperationState::Completed);
    assert_eq!(h.unknown_saves().await["unknown"], json!([]));
    let (status, again) = h.recover(&key).await;
    assert_eq!(
        (status, &again["recovered"]),
        (200, &json!(false)),
        "{again}"
    );
    assert_eq!(again["state"], "completed");

    let replayed = h.palette("editor.saveFile", args).await;
    assert_eq!(saved(&replayed)["replayedPaths"], json!(["styles.css"]));
    assert_eq!(
        h.fs.writes("styles.css"),
        1,
        "recovery and replay never write"
    );
}

#[tokio::test]
async fn an_unknown_save_whose_file_is_missing_stays_unknown() {
    let h = harness(SITE).await;
    h.manager()
        .create_file("extra.css", "p { margin: 0; }", None)
        .await
        .unwrap();
    let key = unknown_save(
        &h,
        "editor.saveFile",
        json!({"path": "extra.css"}),
        "extra.css",
        Fault::ErrorInsteadOfRename,
    )
    .await;

    let (status, body) = h.recover(&key).await;

    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "EDITOR_SAVE_FILE_MISSING");
    assert_eq!(body["error"]["details"]["path"], "extra.css");
    assert_eq!(h.record(&key).await.unwrap().0, OperationState::Unknown);
    assert_eq!(h.unknown_saves().await["unknown"][0]["key"], key.as_str());
    assert!(h.dirty().await.contains(&"extra.css".to_owned()));

    // Read-back goes through the folder the save wrote to, never another one.
    let other = tempfile::tempdir().unwrap();
    fs::write(other.path().join("index.html"), "<p>other</p>").unwrap();
    let other_folder: Arc<dyn FolderAdapter> = Arc::new(OsFolder::open(other.path()).unwrap());
    let discard = ImportGuard::default().discarding(true);
    h.manager()
        .open_folder(other_folder, discard)
        .await
        .unwrap();
    let (status, body) = h.recover(&key).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "EDITOR_SAVE_FOLDER_MISMATCH");
    assert_eq!(h.record(&key).await.unwrap().0, OperationState::Unknown);
}

#[tokio::test]
async fn recovery_refuses_keys_that_are_not_editor_saves() {
    let h = harness(SITE).await;
    let (status, body) = h.recover("workspace.saveAll:x").await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (400, &json!("EDITOR_SAVE_RECOVER_INVALID"))
    );
    let (status, body) = h.recover("editor.saveFile:none").await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!("EDITOR_SAVE_NOT_FOUND"))
    );
}

#[tokio::test]
async fn an_unknown_save_whose_file_differs_stays_unknown_until_an_operator_fails_it() {
    let h = harness(SITE).await;
    h.edit("styles.css", "h1 { color: red; }").await;
    let args = json!({"path": "styles.css"});
    let key = unknown_save(
        &h,
        "editor.saveFile",
        args.clone(),
        "styles.css",
        Fault::ErrorInsteadOfRename,
    )
    .await;

    let (status, body) = h.recover(&key).await;

    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "EDITOR_SAVE_FILE_MISMATCH");
    assert_eq!(body["error"]["details"]["path"], "styles.css");
    assert_eq!(body["error"]["details"]["files"][0]["actual"]["length"], 19);
    assert_eq!(h.record(&key).await.unwrap().0, OperationState::Unknown);
    assert_eq!(h.dirty().await, ["styles.css"]);

    let (status, failed) = h
        .post(
            "/api/editor/saves/recover",
            json!({"key": key, "resolution": "failed"}),
        )
        .await;
    assert_eq!((status, failed["state"].clone()), (200, json!("failed")));
    let retry = h.palette("editor.saveFile", args).await;
    assert_eq!(key_of(&retry), format!("{key}#1"));
    assert_eq!(h.disk("styles.css").unwrap(), "h1 { color: red; }");
    assert!(h.dirty().await.is_empty());
}

#[tokio::test]
async fn recovery_checks_every_file_of_a_partial_save_all() {
    let h = harness(SITE).await;
    h.edit("app.js", "console.log(2);").await;
    h.edit("index.html", "<h1>New</h1>").await;
    h.edit("styles.css", "h1 { color: red; }").await;
    let key = unknown_save(
        &h,
        "editor.saveAll",
        json!({}),
        "index.html",
        Fault::ErrorAfterRename,
    )
    .await;
    assert_eq!(h.dirty().await, ["index.html", "styles.css"]);
    let (_, record) = h.record(&key).await.unwrap();
    let record = record.unwrap();
    assert_eq!(record.completed_paths, ["app.js"]);
    assert_eq!(record.manifest.len(), 3);

    let (status, body) = h.recover(&key).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "EDITOR_SAVE_FILE_MISMATCH");
    assert_eq!(body["error"]["details"]["path"], "styles.css");
    let states: Vec<&str> = body["error"]["details"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["matches", "matches", "different"]);

    // A new save of the rest is a new record; afterwards the folder confirms the old one.
    let rest = h.palette("editor.saveAll", json!({})).await;
    assert_eq!(
        saved(&rest)["savedPaths"],
        json!(["index.html", "styles.css"])
    );
    let (status, body) = h.recover(&key).await;
    assert_eq!((status, body["state"].clone()), (200, json!("completed")));
    assert_eq!(
        body["confirmedPaths"],
        json!(["app.js", "index.html", "styles.css"])
    );
}

#[tokio::test]
async fn save_all_splits_records_at_the_manifest_bound() {
    let files: Vec<(String, String)> = (0..=MAX_MANIFEST_FILES)
        .map(|index| (format!("f{index:03}.js"), format!("let v = {index};")))
        .collect();
    let mut site: Vec<(&str, &str)> = files
        .iter()
        .map(|(path, source)| (path.as_str(), source.as_str()))
        .collect();
    site.push(("index.html", "<h1>Many</h1>"));
    let h = harness(&site).await;
    let manifests = |result: Value| {
        let h = &h;
        async move {
            let mut sizes = Vec::new();
            for key in strings(&saved(&result)["operationKeys"]) {
                sizes.push(h.record(&key).await.unwrap().1.unwrap().manifest.len());
            }
            sizes
        }
    };

    for (path, _) in &files[..MAX_MANIFEST_FILES] {
        h.edit(path, "let v = 'edge';").await;
    }
    let edge = h.palette("editor.saveAll", json!({})).await;
    assert_eq!(manifests(edge).await, [MAX_MANIFEST_FILES]);

    for (path, _) in &files {
        h.edit(path, "let v = 'over';").await;
    }
    let over = h.palette("editor.saveAll", json!({})).await;
    assert_eq!(
        saved(&over)["savedPaths"].as_array().unwrap().len(),
        MAX_MANIFEST_FILES + 1
    );
    assert_eq!(manifests(over).await, [MAX_MANIFEST_FILES, 1]);
    assert!(h.dirty().await.is_empty());
}
