//! `POST /api/folder/upload` on a real loopback studio: a directory-upload list imports under
//! the folder-import limits (at their edges), invalid paths are reported and never imported,
//! an empty or unsupported upload leaves the workspace (and its folder link) untouched, the
//! result has no linked folder so saving goes to the browser-only checkpoint, and the raised
//! body limit holds at its edge. The last test drives the page's directory-upload input in
//! headless Chromium (ChromeDriver accepts a directory path for a `webkitdirectory` input).

use base64::Engine;
use live_code_editor::workspace::{
    MAX_ASSET_FILE_BYTES, MAX_IMPORT_FILES, MAX_LISTED_SKIPS, MAX_SCANNED_ENTRIES,
    MAX_TEXT_FILE_BYTES,
};
use live_code_studio::host::upload::{MAX_UPLOAD_BODY_BYTES, MAX_UPLOAD_ENTRIES};
use live_code_studio::host::{self, RunningStudio, StudioOptions};
use serde_json::{Value, json};

use crate::support::browser::{Browser, browser_slot};

struct Studio {
    studio: RunningStudio,
    _data: tempfile::TempDir,
    http: reqwest::Client,
}

impl Studio {
    async fn start(folder: Option<&std::path::Path>) -> Self {
        let data = tempfile::tempdir().unwrap();
        let studio = host::start(
            StudioOptions::ephemeral(data.path()).with_folder(folder.map(ToOwned::to_owned)),
        )
        .await
        .unwrap();
        Self {
            studio,
            _data: data,
            http: reqwest::Client::new(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.studio.addr.port())
    }

    async fn state(&self) -> Value {
        let response = self.http.get(self.url("/api/state")).send().await.unwrap();
        response.json().await.unwrap()
    }

    async fn post_raw(&self, path: &str, body: Vec<u8>) -> (u16, Value) {
        let response = self
            .http
            .post(self.url(path))
            .header("x-studio-token", self.studio.token())
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn upload(&self, body: &Value) -> (u16, Value) {
        self.post_raw("/api/folder/upload", serde_json::to_vec(body).unwrap())
            .await
    }

    async fn call(&self, name: &str, arguments: Value) -> Value {
        let body =
            json!({"method": "tools/call", "params": {"name": name, "arguments": arguments}});
        self.post_raw("/api/tools/call", serde_json::to_vec(&body).unwrap())
            .await
            .1
    }

    async fn paths(&self) -> Vec<String> {
        self.state().await["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|file| file["path"].as_str().unwrap().to_owned())
            .collect()
    }
}

fn file(path: &str, bytes: &[u8]) -> Value {
    json!({
        "path": path,
        "size": bytes.len(),
        "data": base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

fn upload(files: Vec<Value>) -> Value {
    json!({"rootName": "site", "files": files})
}

fn site() -> Vec<Value> {
    vec![
        file(
            "index.html",
            b"<link rel=stylesheet href=styles.css><h1>up</h1>",
        ),
        file("styles.css", b"h1{color:red}"),
        file("img/logo.png", &[0x89, b'P', b'N', b'G']),
        file("notes.exe", b"MZ"),
    ]
}

fn usize_of(bytes: u64) -> usize {
    usize::try_from(bytes).unwrap()
}

#[tokio::test]
async fn an_upload_replaces_the_workspace_and_reports_skipped_files() {
    let studio = Studio::start(None).await;
    let before = studio.state().await["status"]["revision"].as_u64().unwrap();
    let (status, outcome) = studio.upload(&upload(site())).await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["operation"], "import");
    assert_eq!(outcome["fileCount"], 3);
    assert_eq!(
        outcome["skipped"],
        json!(["notes.exe · unsupported file type"])
    );
    assert_eq!(outcome["folder"]["connected"], false);
    assert!(outcome["revision"].as_u64().unwrap() > before);
    assert_eq!(
        studio.paths().await,
        ["index.html", "styles.css", "img/logo.png"]
    );
    let read = studio
        .call("workspace.readFile", json!({"path": "styles.css"}))
        .await;
    assert_eq!(read["structuredContent"]["source"], "h1{color:red}");
    studio.studio.shutdown().await;
}

#[tokio::test]
async fn an_upload_unlinks_the_folder_and_saving_goes_to_the_checkpoint() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("index.html"), "<h1>on disk</h1>").unwrap();
    let studio = Studio::start(Some(folder.path())).await;
    assert_eq!(studio.state().await["status"]["folder"]["connected"], true);
    let (status, outcome) = studio.upload(&upload(site())).await;
    assert_eq!(status, 200, "{outcome}");
    let state = studio.state().await;
    assert_eq!(state["status"]["folder"]["connected"], false);
    let revision = state["status"]["revision"].as_u64().unwrap();
    let save = studio
        .call("workspace.saveAll", json!({"expectedRevision": revision}))
        .await;
    assert_eq!(
        save["error"]["code"], "WORKSPACE_FOLDER_NOT_CONNECTED",
        "{save}"
    );
    let checkpoint = studio
        .call(
            "workspace.saveCheckpoint",
            json!({"expectedRevision": revision}),
        )
        .await;
    assert_eq!(
        checkpoint["structuredContent"]["clean"], true,
        "{checkpoint}"
    );
    assert_eq!(
        std::fs::read_to_string(folder.path().join("index.html")).unwrap(),
        "<h1>on disk</h1>",
        "the old folder is not written"
    );
    assert!(!folder.path().join("styles.css").exists());
    studio.studio.shutdown().await;
}

#[tokio::test]
async fn empty_or_unsupported_uploads_leave_the_workspace_and_its_link_untouched() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("index.html"), "<h1>kept</h1>").unwrap();
    let studio = Studio::start(Some(folder.path())).await;
    let before = studio.state().await;
    for files in [
        vec![],
        vec![file("tool.exe", b"MZ"), file("../index.html", b"<p>")],
    ] {
        let (status, body) = studio.upload(&upload(files)).await;
        assert_eq!(status, 409, "{body}");
        assert_eq!(body["error"]["code"], "WORKSPACE_NO_SUPPORTED_FILES");
        assert_eq!(body["error"]["details"]["rootName"], "site");
    }
    let after = studio.state().await;
    assert_eq!(after["status"]["revision"], before["status"]["revision"]);
    assert_eq!(after["status"]["folder"]["connected"], true);
    assert_eq!(after["files"], before["files"]);
    studio.studio.shutdown().await;
}

#[tokio::test]
async fn traversal_and_nul_paths_are_invalid_entries_and_never_imported() {
    let studio = Studio::start(None).await;
    let mut files = vec![file("index.html", b"<p>ok</p>")];
    for path in ["../escape.css", "a/../../b.js", "evil\0.js", "..\\win.css"] {
        files.push(file(path, b"x"));
    }
    let (status, outcome) = studio.upload(&upload(files)).await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(
        outcome["skipped"],
        json!([
            "../escape.css · invalid workspace path",
            "a/../../b.js · invalid workspace path",
            "evil\0.js · invalid workspace path",
            "..\\win.css · invalid workspace path",
        ])
    );
    assert_eq!(studio.paths().await, ["index.html"]);
    studio.studio.shutdown().await;
}

#[tokio::test]
async fn a_stale_expected_revision_or_a_malformed_body_changes_nothing() {
    let studio = Studio::start(None).await;
    let before = studio.state().await;
    let revision = before["status"]["revision"].as_u64().unwrap();
    let mut stale = upload(site());
    stale["expectedRevision"] = json!(revision - 1);
    let (status, body) = studio.upload(&stale).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "WORKSPACE_REVISION_CONFLICT");
    let (status, body) = studio
        .post_raw("/api/folder/upload", b"{\"files\": 3}".to_vec())
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], "STUDIO_INVALID_UPLOAD");
    let without_token = studio
        .http
        .post(studio.url("/api/folder/upload"))
        .json(&upload(site()))
        .send()
        .await
        .unwrap();
    assert_eq!(without_token.status(), 401);
    assert_eq!(studio.state().await["files"], before["files"]);
    studio.studio.shutdown().await;
}

#[tokio::test]
async fn file_count_and_per_file_size_limits_hold_at_their_edges() {
    let studio = Studio::start(None).await;
    let mut files: Vec<Value> = (0..MAX_IMPORT_FILES)
        .map(|index| file(&format!("f{index:03}.txt"), b"x"))
        .collect();
    files.push(file("one-too-many.txt", b"x"));
    let (status, outcome) = studio.upload(&upload(files)).await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["fileCount"], MAX_IMPORT_FILES);
    assert_eq!(
        outcome["skipped"],
        json!(["one-too-many.txt · file limit reached"])
    );

    let text = usize_of(MAX_TEXT_FILE_BYTES);
    let (status, outcome) = studio
        .upload(&upload(vec![
            file("edge.txt", &vec![b'a'; text]),
            file("over.txt", &vec![b'a'; text + 1]),
            file("index.html", b"<p>"),
        ]))
        .await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["fileCount"], 2);
    assert_eq!(outcome["skipped"], json!(["over.txt · larger than 512 KB"]));
    // A file the page lists without data (it is over every per-file limit) is judged on its size.
    let listed = json!({"path": "huge.png", "size": MAX_ASSET_FILE_BYTES + 1});
    let (status, outcome) = studio
        .upload(&upload(vec![file("index.html", b"<p>"), listed]))
        .await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["skipped"], json!(["huge.png · larger than 4 MB"]));
    studio.studio.shutdown().await;
}

#[tokio::test]
async fn the_total_and_scan_limits_hold_at_their_edges() {
    let studio = Studio::start(None).await;
    let asset = usize_of(MAX_ASSET_FILE_BYTES);
    let mut files: Vec<Value> = (0..3)
        .map(|index| file(&format!("a{index}.png"), &vec![0; asset]))
        .collect();
    files.push(file("z.txt", b"x"));
    let (status, outcome) = studio.upload(&upload(files)).await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["fileCount"], 3, "exactly 12 MiB fits");
    assert_eq!(
        outcome["skipped"],
        json!(["z.txt · workspace limit reached"])
    );

    let mut files = vec![file("index.html", b"<p>")];
    files.extend((1..MAX_SCANNED_ENTRIES).map(|index| file(&format!("d/x{index}.bin"), b"")));
    files.push(file("d/late.css", b"x"));
    let (status, outcome) = studio.upload(&upload(files)).await;
    assert_eq!(status, 200, "{outcome}");
    let skipped = outcome["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), MAX_LISTED_SKIPS, "the list is bounded");
    assert_eq!(
        outcome["skippedCount"], MAX_SCANNED_ENTRIES,
        "the count is not"
    );
    assert_eq!(
        outcome["skippedByReason"],
        json!({"unsupported": MAX_SCANNED_ENTRIES - 1, "scanLimit": 1})
    );
    studio.studio.shutdown().await;
}

#[tokio::test]
async fn the_body_and_entry_limits_are_coded_errors_at_their_edges() {
    let studio = Studio::start(None).await;
    // A body of exactly the limit is read (the padding field is ignored); one byte more is not.
    let body_of = |length: usize| {
        let head =
            br#"{"rootName":"site","files":[{"path":"index.html","size":1,"data":"eA=="}],"pad":""#;
        let mut body = head.to_vec();
        body.resize(length - 2, b'x');
        body.extend_from_slice(b"\"}");
        body
    };
    let (status, outcome) = studio
        .post_raw("/api/folder/upload", body_of(MAX_UPLOAD_BODY_BYTES))
        .await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["fileCount"], 1);
    let (status, body) = studio
        .post_raw("/api/folder/upload", body_of(MAX_UPLOAD_BODY_BYTES + 1))
        .await;
    assert_eq!(status, 413);
    assert_eq!(body["error"]["code"], "STUDIO_UPLOAD_TOO_LARGE");
    assert_eq!(
        body["error"]["details"]["maxBodyBytes"],
        MAX_UPLOAD_BODY_BYTES
    );

    let listed = |count: usize| {
        let files: Vec<Value> = (0..count)
            .map(|index| json!({"path": format!("f{index}.bin"), "size": 0}))
            .collect();
        upload(files)
    };
    let (status, body) = studio.upload(&listed(MAX_UPLOAD_ENTRIES + 1)).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["error"]["code"], "STUDIO_UPLOAD_TOO_LARGE");
    assert_eq!(body["error"]["details"]["maxEntries"], MAX_UPLOAD_ENTRIES);
    let (status, body) = studio.upload(&listed(MAX_UPLOAD_ENTRIES)).await;
    assert_eq!(status, 409, "listed, judged and found unsupported: {body}");
    assert_eq!(body["error"]["code"], "WORKSPACE_NO_SUPPORTED_FILES");
    // The page reads the limits it builds requests with from the same constants.
    let limits: Value = studio
        .http
        .get(studio.url("/api/folder/upload"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(limits["maxBodyBytes"], MAX_UPLOAD_BODY_BYTES);
    assert_eq!(limits["maxFileBytes"], MAX_ASSET_FILE_BYTES);
    studio.studio.shutdown().await;
}

#[tokio::test]
async fn the_page_uploads_a_folder_through_its_directory_input() {
    let _slot = browser_slot().await;
    let studio = Studio::start(None).await;
    let site = tempfile::tempdir().unwrap();
    let root = site.path().join("site");
    std::fs::create_dir_all(root.join("css")).unwrap();
    std::fs::write(root.join("index.html"), "<h1 id=hero-title>Uploaded</h1>").unwrap();
    std::fs::write(root.join("css/site.css"), "h1{color:teal}").unwrap();
    std::fs::write(root.join("tool.exe"), "MZ").unwrap();
    let browser = Browser::launch(1280, 800).await;
    browser.goto(&studio.studio.url()).await;
    browser
        .wait_for(
            "the page to load",
            "return document.body.dataset.ready === 'true';",
        )
        .await;
    browser
        .type_into("#folder-upload", &root.display().to_string())
        .await;
    browser
        .wait_for(
            "the skipped-file report in the chat",
            "return [...document.querySelectorAll('#chat-log .entry-text')]\
             .some((entry) => entry.textContent.includes('tool.exe · unsupported file type'));",
        )
        .await;
    let mut paths = studio.paths().await;
    paths.sort();
    assert_eq!(
        paths,
        ["css/site.css", "index.html"],
        "the top folder name is stripped"
    );
    assert_eq!(studio.state().await["status"]["folder"]["connected"], false);
    browser.close().await;
    studio.studio.shutdown().await;
}
