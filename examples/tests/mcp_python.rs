//! The independent client: the Python `mcp` package drives `studio mcp` over stdio
//! (`tests/mcp_python/studio_mcp_client.py`; `scripts/test.sh` installs the package).

use std::process::Command;

#[test]
fn the_python_mcp_client_suite_passes_against_studio_mcp() {
    let root = tempfile::tempdir().unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/mcp_python/studio_mcp_client.py"
    );
    let output = Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_studio"))
        .arg(root.path())
        .output()
        .expect("python3 runs (install the client with `pip install mcp`)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "python MCP client failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(stdout.contains("python client suite passed"), "{stdout}");
}
