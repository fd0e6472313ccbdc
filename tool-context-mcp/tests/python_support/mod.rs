//! Running a Python `mcp` SDK peer script against a served registry (shared by the Python peer
//! tests; `scripts/test.sh` installs the package).

use rmcp::transport::StreamableHttpServerConfig;
use tool_context_mcp::{McpToolServer, streamable_http_service};

/// Serves `server` over streamable HTTP on a free loopback port; returns its `/mcp` URL.
pub async fn serve(server: &McpToolServer) -> String {
    let service = streamable_http_service(server, StreamableHttpServerConfig::default());
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://127.0.0.1:{port}/mcp")
}

/// Runs `tests/peers/<script>` with `url`; fails the test unless it exits 0 and prints
/// `passed`. Returns its standard output.
#[allow(dead_code)] // a test binary that passes several URLs uses `run_peer_with` only
pub async fn run_peer(script: &str, url: &str) -> String {
    run_peer_with(script, &[url]).await
}

/// [`run_peer`] with several arguments (the URLs of several servers).
pub async fn run_peer_with(script: &str, args: &[&str]) -> String {
    let path = format!("{}/tests/peers/{script}", env!("CARGO_MANIFEST_DIR"));
    let output = tokio::process::Command::new("python3")
        .arg(path)
        .args(args)
        .output()
        .await
        .expect("python3 runs (install the client with `pip install mcp`)");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "python peer {script} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(stdout.contains("passed"), "{stdout}");
    stdout
}
