//! The studio's HTTP surface probed as an attacker on loopback would: framing headers, the
//! token's only places, the endpoint a key may go to, stale preview paths, compile
//! amplification and the data directory's permissions.

use std::time::Duration;

use live_code_studio::host::{self, RunningStudio, StudioOptions};
use serde_json::{Value, json};

async fn start(data: &std::path::Path) -> RunningStudio {
    host::start(StudioOptions::ephemeral(data))
        .await
        .expect("studio starts")
}

fn url(studio: &RunningStudio, path: &str) -> String {
    format!("{}{}", studio.url(), path.trim_start_matches('/'))
}

async fn get(studio: &RunningStudio, path: &str) -> reqwest::Response {
    reqwest::get(url(studio, path)).await.expect("GET")
}

fn header<'a>(response: &'a reqwest::Response, name: &str) -> &'a str {
    response
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
}

async fn revision(studio: &RunningStudio) -> u64 {
    let state: Value = get(studio, "/api/state").await.json().await.unwrap();
    state["status"]["revision"].as_u64().unwrap()
}

#[tokio::test]
async fn studio_pages_cannot_be_framed_and_previews_only_by_the_studio() {
    let data = tempfile::tempdir().unwrap();
    let studio = start(data.path()).await;
    for page in ["/", "/editor", "/web", "/ui/app.js", "/api/state"] {
        let response = get(&studio, page).await;
        assert_eq!(response.status(), 200, "{page}");
        assert_eq!(
            header(&response, "content-security-policy"),
            "frame-ancestors 'none'",
            "{page}"
        );
        assert_eq!(header(&response, "x-frame-options"), "DENY", "{page}");
        assert_eq!(
            header(&response, "cross-origin-resource-policy"),
            "same-origin",
            "{page}"
        );
    }
    let preview = get(&studio, &format!("/preview/{}", revision(&studio).await)).await;
    assert_eq!(preview.status(), 200);
    let csp = header(&preview, "content-security-policy");
    assert!(csp.contains("frame-ancestors 'self'"), "{csp}");
    assert!(csp.starts_with("sandbox allow-scripts"), "{csp}");
    assert_eq!(header(&preview, "x-frame-options"), "SAMEORIGIN");
    assert_eq!(
        header(&preview, "cross-origin-resource-policy"),
        "same-origin"
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn a_preview_asset_needs_the_launch_key_and_the_current_revision() {
    let data = tempfile::tempdir().unwrap();
    let studio = start(data.path()).await;
    let rev = revision(&studio).await;
    let key = studio.state.security.preview_key().to_owned();
    let current = get(&studio, &format!("/preview/{rev}/assets/{key}/app.js")).await;
    assert_eq!(current.status(), 200);
    for stale in [0, rev - 1, rev + 1] {
        let response = get(&studio, &format!("/preview/{stale}/assets/{key}/app.js")).await;
        assert_eq!(response.status(), 410, "revision {stale}");
    }
    for unkeyed in [
        format!("/preview/{rev}/assets/app.js"),
        format!("/preview/{rev}/assets/{}/app.js", "0".repeat(32)),
    ] {
        assert_eq!(get(&studio, &unkeyed).await.status(), 404, "{unkeyed}");
    }
    studio.shutdown().await;
}

/// Writes a workspace file through the registry, as a direct local call.
async fn write_file(studio: &RunningStudio, path: &str, source: &str) {
    let response = reqwest::Client::new()
        .post(url(studio, "/api/tools/call"))
        .header("x-studio-token", studio.token())
        .json(&json!({"method": "tools/call", "params": {"name": "workspace.writeFile", "arguments": {"path": path, "source": source}}}))
        .send()
        .await
        .expect("tools/call");
    let result: Value = response.json().await.expect("tools/call JSON");
    assert_ne!(result["isError"], true, "{result}");
}

#[tokio::test]
async fn a_preview_that_took_newer_stylesheets_in_place_still_loads_its_assets() {
    let data = tempfile::tempdir().unwrap();
    let studio = start(data.path()).await;
    let key = studio.state.security.preview_key().to_owned();
    let shown = revision(&studio).await;
    write_file(&studio, "styles.css", "body { color: rgb(1, 2, 3); }").await;
    write_file(&studio, "styles.css", "body { color: rgb(4, 5, 6); }").await;
    let styled = revision(&studio).await;
    assert_eq!(styled, shown + 2);
    // The document of `shown` swapped its stylesheets up to `styled`: its images, scripts and
    // lazy assets are the same files, so they still load.
    for live in [shown, shown + 1, styled] {
        let response = get(&studio, &format!("/preview/{live}/assets/{key}/app.js")).await;
        assert_eq!(response.status(), 200, "revision {live}");
    }
    write_file(&studio, "app.js", "console.log('reloads');").await;
    let reloaded = revision(&studio).await;
    for stale in [shown, styled] {
        let response = get(&studio, &format!("/preview/{stale}/assets/{key}/app.js")).await;
        assert_eq!(
            response.status(),
            410,
            "revision {stale} after a script edit"
        );
    }
    let current = get(&studio, &format!("/preview/{reloaded}/assets/{key}/app.js")).await;
    assert_eq!(current.status(), 200);
    studio.shutdown().await;
}

#[tokio::test]
async fn a_preview_revision_compiles_once_however_often_it_is_requested() {
    let data = tempfile::tempdir().unwrap();
    let studio = start(data.path()).await;
    let rev = revision(&studio).await;
    let before = studio.state.previews.compiles();
    let path = format!("/preview/{rev}");
    let requests = (0..16).map(|_| get(&studio, &path));
    for response in futures::future::join_all(requests).await {
        assert_eq!(response.status(), 200);
    }
    assert_eq!(studio.state.previews.compiles(), before + 1);
    for stale in [0, rev + 1] {
        let response = get(&studio, &format!("/preview/{stale}")).await;
        assert_eq!(response.status(), 410);
    }
    assert_eq!(
        studio.state.previews.compiles(),
        before + 1,
        "a stale revision is refused before compiling"
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn the_token_is_taken_from_the_header_only() {
    let data = tempfile::tempdir().unwrap();
    let studio = start(data.path()).await;
    let http = reqwest::Client::new();
    let call =
        json!({"method": "tools/call", "params": {"name": "workspace.getStatus", "arguments": {}}});
    let in_query = http
        .post(url(
            &studio,
            &format!("/api/tools/call?token={}", studio.token()),
        ))
        .json(&call)
        .send()
        .await
        .unwrap();
    assert_eq!(in_query.status(), 401);
    let body: Value = in_query.json().await.unwrap();
    assert_eq!(body["error"]["code"], "STUDIO_TOKEN_REQUIRED");
    let in_header = http
        .post(url(&studio, "/api/tools/call"))
        .header("x-studio-token", studio.token())
        .json(&call)
        .send()
        .await
        .unwrap();
    assert_eq!(in_header.status(), 200);
    studio.shutdown().await;
}

#[tokio::test]
async fn the_key_cannot_be_pointed_at_another_host() {
    let data = tempfile::tempdir().unwrap();
    let studio = start(data.path()).await;
    let http = reqwest::Client::new();
    for endpoint in [
        "http://127.0.0.1.evil.example/x",
        "http://localhostevil.example/v1",
        "http://127.0.0.1@evil.example/v1",
    ] {
        let response = http
            .put(url(&studio, "/api/settings"))
            .header("x-studio-token", studio.token())
            .json(&json!({"endpoint": endpoint, "apiKey": "sk-test-not-real"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "{endpoint}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(
            body["error"]["code"], "STUDIO_INVALID_SETTINGS",
            "{endpoint}"
        );
    }
    let settings: Value = get(&studio, "/api/settings").await.json().await.unwrap();
    assert_eq!(settings["hasApiKey"], false, "nothing was applied");
    studio.shutdown().await;
}

#[cfg(unix)]
#[tokio::test]
async fn the_data_directory_and_its_files_are_owner_only() {
    use std::os::unix::fs::PermissionsExt;

    let base = tempfile::tempdir().unwrap();
    let data = base.path().join("studio-data");
    let studio = start(&data).await;
    let http = reqwest::Client::new();
    let saved = http
        .put(url(&studio, "/api/settings"))
        .header("x-studio-token", studio.token())
        .json(&json!({"model": "openai/gpt-4o-mini"}))
        .send()
        .await
        .unwrap();
    assert_eq!(saved.status(), 200);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&data), 0o700);
    for file in [
        "workspace.sqlite",
        "durable-operations.sqlite",
        "settings.json",
        host::TOKEN_FILE,
    ] {
        assert_eq!(mode(&data.join(file)), 0o600, "{file}");
    }
    for entry in std::fs::read_dir(&data).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            assert_eq!(mode(&path) & 0o077, 0, "{} is private", path.display());
        }
    }
    studio.shutdown().await;
}

async fn send(
    studio: &RunningStudio,
    method: reqwest::Method,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> (u16, String, Value) {
    let response = reqwest::Client::new()
        .request(method, url(studio, path))
        .header("x-studio-token", studio.token())
        .header("content-type", content_type)
        .header("accept", "application/json, text/event-stream")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let kind = header(&response, "content-type").to_owned();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{status} not JSON: {text}"));
    (status, kind, body)
}

#[tokio::test]
async fn every_rejected_body_gets_a_coded_json_error() {
    use reqwest::Method;
    let data = tempfile::tempdir().unwrap();
    let studio = start(data.path()).await;
    let json = "application/json";
    let huge = format!("{{\"prompt\": \"{}\"}}", "x".repeat(3 * 1024 * 1024)).into_bytes();
    // method, path, content type, body, expected status and code
    type Case<'a> = (Method, &'a str, &'a str, Vec<u8>, u16, &'a str);
    let cases: Vec<Case<'_>> = vec![
        (
            Method::POST,
            "/api/tools/call",
            json,
            b"{not json".to_vec(),
            400,
            "STUDIO_BAD_REQUEST",
        ),
        (
            Method::POST,
            "/api/tools/call",
            "text/plain",
            b"{}".to_vec(),
            415,
            "STUDIO_UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            Method::POST,
            "/api/agent/runs",
            json,
            br#"{"prompt": 5}"#.to_vec(),
            422,
            "STUDIO_INVALID_REQUEST",
        ),
        (
            Method::POST,
            "/api/agent/runs",
            json,
            huge,
            413,
            "STUDIO_BODY_TOO_LARGE",
        ),
        (
            Method::POST,
            "/api/folder/open",
            json,
            br#"{"path": "/x", "surprise": 1}"#.to_vec(),
            422,
            "STUDIO_INVALID_REQUEST",
        ),
        (
            Method::POST,
            "/api/approvals/x",
            "text/plain",
            b"deny".to_vec(),
            415,
            "STUDIO_UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            Method::PUT,
            "/api/tools/call",
            json,
            b"{}".to_vec(),
            405,
            "STUDIO_METHOD_NOT_ALLOWED",
        ),
    ];
    for (method, path, kind, body, status, code) in cases {
        let (got, content_type, answer) = send(&studio, method.clone(), path, kind, body).await;
        assert_eq!(
            (got, answer["error"]["code"].as_str()),
            (status, Some(code)),
            "{method} {path}: {answer}"
        );
        assert!(content_type.contains("json"), "{method} {path}");
        assert_eq!(answer["error"]["retryable"], false);
    }
    studio.shutdown().await;
}

#[tokio::test]
async fn mcp_answers_unreadable_requests_with_json_rpc_errors() {
    use reqwest::Method;
    let data = tempfile::tempdir().unwrap();
    let studio = start(data.path()).await;
    for (kind, body) in [
        ("application/json", b"{not json".to_vec()),
        ("text/plain", b"{}".to_vec()),
    ] {
        let (status, content_type, answer) = send(&studio, Method::POST, "/mcp", kind, body).await;
        assert!((400..500).contains(&status), "{status}");
        assert!(content_type.contains("json"), "{content_type}");
        assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
        assert!(answer["error"]["code"].as_i64().unwrap() < 0, "{answer}");
    }
    studio.shutdown().await;
}
