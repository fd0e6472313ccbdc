//! The independent client: the Python `mcp` package (`tests/mcp_python/studio_mcp_client.py`;
//! `scripts/test.sh` installs it) drives `studio mcp` over stdio and a running studio's `/mcp`
//! over streamable HTTP.

use std::path::Path;
use std::process::{Command, Output};

use live_code_studio::host::{self, StudioOptions};

const INDEX: &str = "<!doctype html>\n<h1 id=\"hero-title\">Hello</h1>\n";

fn client() -> Command {
    let mut command = Command::new("python3");
    command.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/mcp_python/studio_mcp_client.py"
    ));
    command
}

fn assert_passed(output: &Output, marker: &str) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains(marker),
        "python MCP client failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
}

#[test]
fn the_python_mcp_client_suite_passes_against_studio_mcp() {
    let root = tempfile::tempdir().unwrap();
    let output = client()
        .arg("stdio")
        .arg(env!("CARGO_BIN_EXE_studio"))
        .arg(root.path())
        .output()
        .expect("python3 runs (install the client with `pip install mcp`)");
    assert_passed(&output, "studio stdio: python client suite passed");
}

fn write_site(folder: &Path) {
    std::fs::create_dir_all(folder).unwrap();
    std::fs::write(folder.join("index.html"), INDEX).unwrap();
    std::fs::write(folder.join("notes.txt"), "keep me\n").unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_mcp_client_suite_passes_over_http() {
    let root = tempfile::tempdir().unwrap();
    write_site(&root.path().join("site"));
    let studio = host::start(
        StudioOptions::ephemeral(&root.path().join("data")).with_folder(root.path().join("site")),
    )
    .await
    .unwrap();
    let mut command = client();
    command
        .arg("http")
        .arg(format!("http://127.0.0.1:{}/mcp", studio.addr.port()))
        .arg(studio.token());
    let output = tokio::task::spawn_blocking(move || command.output().expect("python3 runs"))
        .await
        .unwrap();
    assert_passed(&output, "studio http: python client suite passed");
    studio.shutdown().await;
}
