//! The getting-started agent (`src/bin/agent_quickstart.rs`) run the way a newcomer runs it:
//! a keyed append approved on stdin, the same key from a second process replaying without
//! asking or running, a refusal that says a person decided, the provider loop calling the tool
//! through an OpenAI-compatible endpoint, and the registry over stdio MCP with the Python client.

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::support;

const BIN: &str = env!("CARGO_BIN_EXE_agent_quickstart");

/// Runs the agent in `dir` with `args`, writing `stdin` (then closing it).
async fn agent(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(BIN)
        .arg(dir)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).await.unwrap();
    drop(input);
    let output = child.wait_with_output().await.unwrap();
    assert!(output.status.success(), "{output:?}");
    output
}

fn result(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap()
}

fn notes(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("notes.txt")).unwrap_or_default()
}

#[tokio::test]
async fn a_keyed_append_runs_once_across_two_processes_and_a_refusal_says_who_decided() {
    let dir = tempfile::tempdir().unwrap();
    let first = agent(dir.path(), &["append", "note-1", "hello"], "y\n").await;
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(stderr.contains("approve notes.append"), "{stderr}");
    let ran = result(&first);
    assert_eq!(ran["structuredContent"], 1, "{ran}");
    assert!(ran.get("_meta").is_none(), "{ran}");

    // A second process, same key: the SQLite record replays; nobody is asked, nothing runs.
    let second = agent(dir.path(), &["append", "note-1", "hello"], "").await;
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        !stderr.contains("approve"),
        "a replay asks nobody: {stderr}"
    );
    let replayed = result(&second);
    assert_eq!(replayed["structuredContent"], 1, "{replayed}");
    assert_eq!(replayed["_meta"]["replayed"], true, "{replayed}");
    assert!(replayed["_meta"]["originalAt"].is_u64(), "{replayed}");
    assert_eq!(notes(dir.path()), "hello\n");

    let refused = result(&agent(dir.path(), &["append", "note-2", "nope"], "n\n").await);
    assert_eq!(refused["error"]["code"], "TOOL_POLICY_DENIED", "{refused}");
    assert_eq!(
        refused["error"]["details"]["decidedBy"], "person",
        "{refused}"
    );
    assert_eq!(notes(dir.path()), "hello\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_provider_loop_calls_the_typed_tool_after_approval() {
    let dir = tempfile::tempdir().unwrap();
    let (base, requests) =
        support::echo_provider::serve_calling("append", "from the model", "Added it.").await;
    let output = agent(
        dir.path(),
        &[
            "ask",
            &base,
            "test/model",
            "Add a note saying: from the model",
        ],
        "y\n",
    )
    .await;
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "Added it.");
    assert_eq!(notes(dir.path()), "from the model\n");
    let offered: Vec<String> = requests.lock().unwrap()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(offered.len(), 2, "{offered:?}");
}

#[tokio::test]
async fn the_registry_serves_the_python_mcp_client_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "first\n").unwrap();
    let output = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/mcp_python/quickstart_client.py"
        ))
        .arg(BIN)
        .arg(dir.path())
        .output()
        .await
        .expect("python3 runs (scripts/test.sh installs the mcp package)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("quickstart stdio: python client passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        notes(dir.path()),
        "first\n",
        "the declined append did not run"
    );
}
