//! `studio tools`: the CLI command bridge, run as the real binary on temp workspaces.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use live_code_studio::host::{self, StudioOptions};
use serde_json::Value;
use tool_protocol::ToolListResult;

/// Tools of the studio registry: 23 `workspace.*`/`preview.*`, 11 `editor.*` and 7 `web.*`.
const CATALOG_SIZE: usize = 42;
const INDEX: &str = "<h1 id=\"hero-title\">On disk</h1>";
const STYLES: &str = "h1 { color: black; }";

fn studio_command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_studio"));
    command
        .args(args)
        .env_remove("STUDIO_TOKEN")
        .env("RUST_LOG", "off")
        .stdin(Stdio::null());
    command
}

/// Runs `studio ARGS` with stdin not a terminal (so approvals are never prompted).
fn studio(args: &[&str]) -> Output {
    studio_command(args).output().expect("studio runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn ok_json(output: &Output) -> Value {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        stdout(output),
        stderr(output)
    );
    serde_json::from_str(&stdout(output)).expect("stdout is JSON")
}

/// A folder with a tiny site and an empty data directory.
struct Workspace {
    folder: tempfile::TempDir,
    data: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Self {
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("index.html"), INDEX).unwrap();
        std::fs::write(folder.path().join("styles.css"), STYLES).unwrap();
        Self {
            folder,
            data: tempfile::tempdir().unwrap(),
        }
    }

    fn folder(&self) -> &str {
        self.folder.path().to_str().unwrap()
    }

    fn data(&self) -> &str {
        self.data.path().to_str().unwrap()
    }

    /// `studio tools ARGS --data-dir D` (the stored workspace, no folder re-import).
    fn tools(&self, args: &[&str]) -> Output {
        let mut all = vec!["tools"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--data-dir", self.data()]);
        studio(&all)
    }

    /// The same, opening the folder first.
    fn tools_in_folder(&self, args: &[&str]) -> Output {
        let mut all = args.to_vec();
        all.extend_from_slice(&["--folder", self.folder()]);
        self.tools(&all)
    }

    fn read(&self, path: &str) -> Value {
        let args = format!(r#"{{"path":"{path}"}}"#);
        ok_json(&self.tools(&["call", "workspace.readFile", "--args", &args]))
    }

    fn revision(&self) -> u64 {
        let status = ok_json(&self.tools(&["call", "workspace.getStatus"]));
        status["revision"].as_u64().expect("revision")
    }

    fn disk(&self, path: &str) -> String {
        std::fs::read_to_string(self.folder.path().join(path)).unwrap()
    }
}

#[test]
fn list_prints_tagged_lines_and_canonical_json() {
    let workspace = Workspace::new();
    let listed = workspace.tools_in_folder(&["list"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    let text = stdout(&listed);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), CATALOG_SIZE, "{text}");
    let line = |name: &str| {
        *lines
            .iter()
            .find(|line| line.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} listed"))
    };
    assert!(line("workspace.readFile").contains("  [read-only]  "));
    assert!(line("workspace.writeFile").contains("  [approval]  "));

    let json = workspace.tools(&["list", "--json"]);
    let listing: ToolListResult = serde_json::from_value(ok_json(&json)).expect("tools/list");
    assert_eq!(listing.tools.len(), CATALOG_SIZE);
    assert!(listing.next_cursor.is_none());
}

#[test]
fn a_read_runs_without_approval() {
    let workspace = Workspace::new();
    let read = ok_json(&workspace.tools_in_folder(&[
        "call",
        "workspace.readFile",
        "--args",
        r#"{"path":"index.html"}"#,
    ]));
    assert_eq!(read["source"], INDEX);
}

/// Unsaved paths of the stored workspace.
fn dirty_paths(workspace: &Workspace) -> Value {
    ok_json(&workspace.tools(&["call", "workspace.getStatus"]))["dirtyPaths"].clone()
}

#[test]
fn a_mutation_is_refused_without_approve_and_runs_with_it() {
    let workspace = Workspace::new();
    ok_json(&workspace.tools_in_folder(&["call", "workspace.getStatus"]));
    let write = r#"{"path":"styles.css","source":"h1 { color: red; }"}"#;

    let refused = workspace.tools(&["call", "workspace.writeFile", "--args", write]);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    assert!(
        stderr(&refused).contains("TOOL_POLICY_DENIED: "),
        "{}",
        stderr(&refused)
    );
    assert!(
        stderr(&refused).contains("--approve"),
        "the denial explains the way out"
    );
    assert!(stdout(&refused).is_empty());
    assert_eq!(workspace.read("styles.css")["source"], STYLES);
    assert_eq!(dirty_paths(&workspace), serde_json::json!([]));

    let before = workspace.revision();
    let approved =
        ok_json(&workspace.tools(&["call", "workspace.writeFile", "--args", write, "--approve"]));
    let after = approved["revision"].as_u64().expect("revision");
    assert!(after > before, "{before} -> {after}");
    assert_eq!(workspace.read("styles.css")["source"], "h1 { color: red; }");
    assert_eq!(dirty_paths(&workspace), serde_json::json!(["styles.css"]));
    assert_eq!(
        workspace.disk("styles.css"),
        STYLES,
        "no --save: the folder is untouched"
    );
}

#[test]
fn a_stale_expected_revision_is_a_coded_conflict() {
    let workspace = Workspace::new();
    ok_json(&workspace.tools_in_folder(&["call", "workspace.getStatus"]));
    // Every headless invocation reopens the workspace, which starts a new revision epoch, so a
    // revision read by an earlier invocation is stale.
    let stale = workspace.revision().to_string();
    let conflict = workspace.tools(&[
        "call",
        "workspace.writeFile",
        "--args",
        r#"{"path":"styles.css","source":"h1 { color: blue; }"}"#,
        "--expected-revision",
        &stale,
        "--approve",
    ]);
    assert_eq!(conflict.status.code(), Some(1));
    assert!(
        stderr(&conflict).contains("WORKSPACE_REVISION_CONFLICT: "),
        "{}",
        stderr(&conflict)
    );
    assert!(stdout(&conflict).is_empty());
    assert_eq!(workspace.read("styles.css")["source"], STYLES);
    assert_eq!(dirty_paths(&workspace), serde_json::json!([]));
}

#[test]
fn save_writes_an_approved_mutation_back_to_the_folder() {
    let workspace = Workspace::new();
    let written = ok_json(&workspace.tools_in_folder(&[
        "call",
        "workspace.writeFile",
        "--args",
        r#"{"path":"styles.css","source":"h1 { color: green; }"}"#,
        "--approve",
        "--save",
    ]));
    assert!(written["revision"].as_u64().is_some());
    assert_eq!(workspace.disk("styles.css"), "h1 { color: green; }");
}

#[test]
fn usage_errors_exit_2_and_run_nothing() {
    let workspace = Workspace::new();
    for args in [
        vec!["call"],
        vec!["call", "workspace.readFile", "--args", "[1]"],
        vec!["call", "workspace.readFile", "--args", "{nope"],
        vec![
            "call",
            "workspace.writeFile",
            "--args",
            r#"{"expectedRevision":1}"#,
            "--expected-revision",
            "2",
        ],
        vec!["call", "workspace.getStatus", "--save"],
        vec!["list", "--token", "t"],
        vec!["list", "--url", "http://127.0.0.1:9", "--folder", "x"],
        vec!["list", "--url", "ftp://127.0.0.1:9"],
        vec!["frobnicate"],
    ] {
        let output = workspace.tools(&args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(stdout(&output).is_empty(), "{args:?}");
    }
    assert_eq!(workspace.disk("styles.css"), STYLES);
}

#[test]
fn an_unknown_tool_is_a_tool_error() {
    let workspace = Workspace::new();
    let output = workspace.tools_in_folder(&["call", "workspace.nope"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("TOOL_NOT_FOUND: "),
        "{}",
        stderr(&output)
    );
}

/// Runs `studio tools ARGS` against a running studio without blocking its runtime.
async fn remote(args: Vec<String>, token: Option<&str>) -> Output {
    let token = token.map(ToOwned::to_owned);
    tokio::task::spawn_blocking(move || {
        let mut command = studio_command(&[]);
        command.arg("tools").args(&args);
        if let Some(token) = token {
            command.env("STUDIO_TOKEN", token);
        }
        command.output().expect("studio runs")
    })
    .await
    .unwrap()
}

fn remote_args(url: &str, args: &[&str], data_dir: &Path) -> Vec<String> {
    let mut all: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    all.extend(["--url".to_owned(), url.to_owned()]);
    all.extend(["--data-dir".to_owned(), data_dir.display().to_string()]);
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_studio_is_driven_with_its_url_and_token() {
    let workspace = Workspace::new();
    let studio = host::start(
        StudioOptions::ephemeral(workspace.data.path())
            .with_folder(workspace.folder.path().to_owned()),
    )
    .await
    .expect("studio starts");
    let url = studio.url();
    let token = studio.token().to_owned();
    let elsewhere = tempfile::tempdir().unwrap();
    let args = |list: &[&str]| remote_args(&url, list, elsewhere.path());

    let listing = remote(args(&["list", "--json"]), Some(&token)).await;
    let listing: ToolListResult = serde_json::from_value(ok_json(&listing)).unwrap();
    assert_eq!(listing.tools.len(), CATALOG_SIZE);

    let read = args(&[
        "call",
        "workspace.readFile",
        "--args",
        r#"{"path":"index.html"}"#,
    ]);
    assert_eq!(
        ok_json(&remote(read.clone(), Some(&token)).await)["source"],
        INDEX
    );
    let tokenless = remote(read, None).await;
    assert_eq!(tokenless.status.code(), Some(1));
    assert!(
        stderr(&tokenless).contains("STUDIO_TOKEN_REQUIRED"),
        "{}",
        stderr(&tokenless)
    );

    let write = r#"{"path":"styles.css","source":"h1 { color: red; }"}"#;
    let stored = studio.state.workspace.manager().status().await.revision;
    let refused = remote(
        args(&["call", "workspace.writeFile", "--args", write]),
        Some(&token),
    )
    .await;
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("TOOL_POLICY_DENIED: "),
        "{}",
        stderr(&refused)
    );
    assert_eq!(
        studio.state.workspace.manager().status().await.revision,
        stored,
        "a refused call never reaches the studio"
    );

    // A running studio keeps its revision between calls, so the guard is usable across them.
    let current = stored.to_string();
    let stale = remote(
        args(&[
            "call",
            "workspace.writeFile",
            "--args",
            write,
            "--expected-revision",
            "1",
            "--approve",
        ]),
        Some(&token),
    )
    .await;
    assert_eq!(stale.status.code(), Some(1));
    assert!(
        stderr(&stale).contains("WORKSPACE_REVISION_CONFLICT: "),
        "{}",
        stderr(&stale)
    );
    let approved = remote(
        args(&[
            "call",
            "workspace.writeFile",
            "--args",
            write,
            "--expected-revision",
            &current,
            "--approve",
        ]),
        Some(&token),
    )
    .await;
    let revision = ok_json(&approved)["revision"].as_u64().unwrap();
    assert!(revision > stored, "{stored} -> {revision}");
    assert_eq!(
        studio.state.workspace.manager().status().await.revision,
        revision
    );

    // Without --token or STUDIO_TOKEN, the token file in the studio's data directory is used.
    let from_file = remote(
        remote_args(
            &url,
            &[
                "call",
                "workspace.readFile",
                "--args",
                r#"{"path":"styles.css"}"#,
            ],
            workspace.data.path(),
        ),
        None,
    )
    .await;
    assert_eq!(ok_json(&from_file)["source"], "h1 { color: red; }");
    studio.shutdown().await;
}

/// Runs `studio tools ARGS --data-dir D` on a pseudo-terminal (util-linux `script`), typing
/// `answer` at the approval prompt.
fn on_terminal(workspace: &Workspace, args: &[&str], answer: &str) -> Output {
    use std::io::Write;
    let quote = |arg: &str| format!("'{}'", arg.replace('\'', r"'\''"));
    let mut line = vec![quote(env!("CARGO_BIN_EXE_studio")), "tools".to_owned()];
    line.extend(args.iter().map(|arg| quote(arg)));
    line.extend(["--data-dir".to_owned(), quote(workspace.data())]);
    let mut child = Command::new("script")
        .args(["-qec", &line.join(" "), "/dev/null"])
        .env_remove("STUDIO_TOKEN")
        .env("RUST_LOG", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux script runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{answer}\n").as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn an_interactive_terminal_is_asked_y_or_n() {
    let workspace = Workspace::new();
    ok_json(&workspace.tools_in_folder(&["call", "workspace.getStatus"]));
    let write = |source: &str| format!(r#"{{"path":"styles.css","source":"{source}"}}"#);

    let denied = on_terminal(
        &workspace,
        &["call", "workspace.writeFile", "--args", &write("no")],
        "n",
    );
    let text = stdout(&denied);
    assert_eq!(denied.status.code(), Some(1), "{text}");
    assert!(
        text.contains("Allow workspace.writeFile (path, source)? [y/N]"),
        "{text}"
    );
    assert!(text.contains("TOOL_POLICY_DENIED: "), "{text}");
    assert!(!text.contains("--approve"), "a person was asked: no hint");
    assert_eq!(workspace.read("styles.css")["source"], STYLES);

    let approved = on_terminal(
        &workspace,
        &["call", "workspace.writeFile", "--args", &write("yes")],
        "y",
    );
    assert_eq!(approved.status.code(), Some(0), "{}", stdout(&approved));
    assert_eq!(workspace.read("styles.css")["source"], "yes");

    let read_only = on_terminal(&workspace, &["call", "workspace.getStatus"], "n");
    assert_eq!(read_only.status.code(), Some(0));
    assert!(
        !stdout(&read_only).contains("[y/N]"),
        "read-only tools never ask"
    );
}

#[test]
fn a_headless_edit_is_kept_for_its_folder_and_another_folder_needs_discard_changes() {
    let workspace = Workspace::new();
    let edit = r#"{"path":"styles.css","source":"h1 { color: red; }"}"#;
    let written =
        workspace.tools_in_folder(&["call", "workspace.writeFile", "--args", edit, "--approve"]);
    ok_json(&written);
    // The same folder again: the unsaved edit is resumed, not re-imported over.
    let status = ok_json(&workspace.tools_in_folder(&["call", "workspace.getStatus"]));
    assert_eq!(
        status["dirtyPaths"],
        serde_json::json!(["styles.css"]),
        "{status}"
    );
    assert_eq!(
        status["resumed"]["unsavedPaths"],
        serde_json::json!(["styles.css"])
    );

    let other = Workspace::new();
    let elsewhere = ["call", "workspace.getStatus", "--folder", other.folder()];
    let refused = workspace.tools(&elsewhere);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    let message = stderr(&refused);
    assert!(
        message.contains("WORKSPACE_FOLDER_STATE_CONFLICT"),
        "{message}"
    );
    assert!(message.contains("--discard-changes"), "{message}");
    assert_eq!(
        workspace.read("styles.css")["source"],
        "h1 { color: red; }",
        "the refusal kept the edit"
    );
    let mut discarding = elsewhere.to_vec();
    discarding.push("--discard-changes");
    let replaced = ok_json(&workspace.tools(&discarding));
    assert_eq!(replaced["isDirty"], false, "{replaced}");
}
