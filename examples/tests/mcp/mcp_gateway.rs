//! `studio mcp` as an MCP gateway (issue 36): the Python `mcp` package
//! (`tests/mcp_python/studio_gateway_client.py`) connects to `studio mcp --mcp-config FILE`,
//! whose configuration mounts the Python test server; the remote tools are listed on the first
//! `tools/list`, and calling `py.echo` goes through the studio's approval (the client's
//! elicitation prompt) before it reaches the remote server.

use std::process::Command;

use crate::support::mcp::PYTHON_TEST_SERVER;

#[test]
fn a_python_client_calls_a_mounted_tool_through_studio_mcp_after_approving_it() {
    let root = tempfile::tempdir().unwrap();
    let output = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/mcp_python/studio_gateway_client.py"
        ))
        .arg(env!("CARGO_BIN_EXE_studio"))
        .arg(root.path())
        .arg(PYTHON_TEST_SERVER)
        .output()
        .expect("python3 runs (install the client with `pip install mcp`)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("studio gateway: python client suite passed"),
        "python MCP gateway client failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        !stderr.contains("sk-gateway-secret"),
        "the secret never reaches the logs:\n{stderr}"
    );
}
