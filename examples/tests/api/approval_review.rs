//! Approvals a person can judge: `GET /api/approvals/{id}/diff` and per-hunk decisions,
//! against a real studio over HTTP.

use std::sync::Arc;
use std::time::Duration;

use live_code_studio::host::{self, RunningStudio, StudioOptions};
use serde_json::{Value, json};
use tool_context::ToolCallOptions;
use tool_protocol::{ToolCallContext, ToolCallMode, ToolCallSource};

use crate::support::http::StudioClient;

/// The studio's API with this suite's helpers.
type Client = StudioClient<Suite>;
/// Marks this suite's helpers on [`StudioClient`].
enum Suite {}

impl Client {
    async fn get(&self, path: &str, token: bool) -> (u16, Value) {
        let mut request = self.http.get(format!("{}{path}", self.base));
        if token {
            request = request.header("x-studio-token", &self.token);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn wait_approval(&self) -> String {
        for _ in 0..200 {
            let (_, pending) = self.get("/api/approvals", false).await;
            if let Some(first) = pending.as_array().and_then(|list| list.first()) {
                return first["id"].as_str().unwrap().to_owned();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("no approval appeared");
    }
}

/// Ten numbered lines around two far-apart lines that a change edits (two hunks).
fn two_hunk_texts() -> (String, String) {
    let old: String = (1..=20).map(|n| format!("line {n}\n")).collect();
    let new = old
        .replace("line 2\n", "line two\n")
        .replace("line 19\n", "line nineteen\n");
    (old, new)
}

/// A model's call of `name` in the background (it waits for approval).
fn model_call(
    studio: &RunningStudio,
    name: &str,
    arguments: Value,
) -> tokio::task::JoinHandle<Value> {
    let state = Arc::clone(&studio.state);
    let request = json!({"method": "tools/call", "params": {"name": name, "arguments": arguments}});
    tokio::spawn(async move {
        let context = ToolCallContext::new(ToolCallSource::Model, ToolCallMode::Agent)
            .with_session("review-test");
        let result = state
            .registry
            .call_tool_value(&request, ToolCallOptions::default().with_context(context))
            .await;
        serde_json::to_value(result).unwrap()
    })
}

async fn start(dir: &std::path::Path) -> RunningStudio {
    host::start(StudioOptions::ephemeral(dir))
        .await
        .expect("studio starts")
}

async fn seed_file(studio: &RunningStudio, path: &str, source: &str) {
    studio
        .state
        .workspace
        .manager()
        .create_file(path, source, Default::default())
        .await
        .expect("created");
}

#[tokio::test]
async fn a_pending_write_shows_its_diff_and_one_of_two_hunks_can_be_applied() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let (old, new) = two_hunk_texts();
    seed_file(&studio, "notes.txt", &old).await;
    let call = model_call(
        &studio,
        "workspace.writeFile",
        json!({"path": "notes.txt", "source": new}),
    );
    let id = client.wait_approval().await;

    // The approval record never carries the source; the diff (with the token) does.
    let (_, pending) = client.get("/api/approvals", false).await;
    assert!(!pending.to_string().contains("line two"), "{pending}");
    assert_eq!(
        client
            .get(&format!("/api/approvals/{id}/diff"), false)
            .await
            .0,
        401
    );
    let (status, view) = client.get(&format!("/api/approvals/{id}/diff"), true).await;
    assert_eq!(status, 200, "{view}");
    let file = &view["diff"]["files"][0];
    assert_eq!(
        (file["path"].as_str(), file["change"].as_str()),
        (Some("notes.txt"), Some("modified"))
    );
    assert_eq!(
        (file["additions"].as_u64(), file["deletions"].as_u64()),
        (Some(2), Some(2))
    );
    let hunks = file["text"]["hunks"].as_array().unwrap();
    assert_eq!(hunks.len(), 2);
    assert_eq!(hunks[1]["lines"][3]["text"], "line 19");
    assert_eq!(hunks[1]["lines"][3]["oldLine"], 19);
    assert_eq!(view["narrowablePath"], "notes.txt");
    let digest = view["diff"]["digest"].as_str().unwrap().to_owned();

    // A stale digest is refused and the approval stays pending.
    let (status, refused) = client
        .post(
            &format!("/api/approvals/{id}"),
            json!({"decision": "allow", "hunks": [1], "digest": "0"}),
        )
        .await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (409, Some("STUDIO_DIFF_CHANGED"))
    );
    let (status, refused) = client
        .post(
            &format!("/api/approvals/{id}"),
            json!({"decision": "allow", "hunks": [7], "digest": digest}),
        )
        .await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (422, Some("STUDIO_UNKNOWN_HUNK"))
    );

    let (status, resolved) = client
        .post(
            &format!("/api/approvals/{id}"),
            json!({"decision": "allow", "hunks": [1], "digest": digest}),
        )
        .await;
    assert_eq!(status, 200, "{resolved}");
    assert_eq!(
        (
            resolved["appliedHunks"].as_u64(),
            resolved["rejectedHunks"].as_u64()
        ),
        (Some(1), Some(1))
    );
    let result = call.await.unwrap();
    assert!(result.get("isError").is_none(), "{result}");
    let text = result["content"].to_string();
    assert!(text.contains("applied 1 of 2 hunks of notes.txt"), "{text}");
    assert!(text.contains("rejected: #1"), "{text}");
    let source = studio
        .state
        .workspace
        .manager()
        .read_file("notes.txt")
        .await
        .unwrap()
        .source;
    assert_eq!(
        source,
        old.replace("line 19\n", "line nineteen\n"),
        "only the accepted hunk landed"
    );

    // The trace says so in counts, never text.
    let rows = studio.state.trace.rows(Some("review-test"));
    let row = rows
        .iter()
        .rev()
        .find(|row| row.name == "workspace.writeFile")
        .unwrap();
    let approval = row.approval.expect("recorded");
    assert_eq!((approval.applied_hunks, approval.rejected_hunks), (1, 1));
    assert!(!serde_json::to_string(&rows).unwrap().contains("nineteen"));

    // Settled: the diff is gone.
    assert_eq!(
        client
            .get(&format!("/api/approvals/{id}/diff"), true)
            .await
            .0,
        404
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn a_partial_patch_becomes_the_narrowed_patch_under_the_same_revision() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let old: String = (1..=20)
        .map(|n| format!("color {}\n", if n == 2 || n == 19 { "red" } else { "blue" }))
        .collect();
    seed_file(&studio, "theme.txt", &old).await;
    let call = model_call(
        &studio,
        "workspace.applyPatch",
        json!({"path": "theme.txt", "search": "red", "replace": "green", "occurrence": "all"}),
    );
    let id = client.wait_approval().await;
    let (_, view) = client.get(&format!("/api/approvals/{id}/diff"), true).await;
    assert_eq!(
        view["diff"]["files"][0]["text"]["hunks"]
            .as_array()
            .unwrap()
            .len(),
        2,
        "{view}"
    );
    let digest = view["diff"]["digest"].as_str().unwrap().to_owned();
    let (status, _) = client
        .post(
            &format!("/api/approvals/{id}"),
            json!({"decision": "allow", "hunks": [0], "digest": digest}),
        )
        .await;
    assert_eq!(status, 200);
    let result = call.await.unwrap();
    assert!(result.get("isError").is_none(), "{result}");
    let source = studio
        .state
        .workspace
        .manager()
        .read_file("theme.txt")
        .await
        .unwrap()
        .source;
    assert_eq!(source, old.replacen("red", "green", 1));
    studio.shutdown().await;
}

#[tokio::test]
async fn destructive_calls_say_what_is_lost_and_unknown_ids_are_404() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    seed_file(&studio, "old.txt", "gone soon\n").await;
    let call = model_call(&studio, "workspace.deleteFile", json!({"path": "old.txt"}));
    let id = client.wait_approval().await;
    let (_, view) = client.get(&format!("/api/approvals/{id}/diff"), true).await;
    assert!(
        view["effect"].as_str().unwrap().starts_with("Destructive"),
        "{view}"
    );
    assert_eq!(view["diff"]["files"][0]["change"], "deleted", "{view}");
    assert_eq!(view["narrowablePath"], Value::Null);
    let digest = view["diff"]["digest"].as_str().unwrap().to_owned();
    let (status, refused) = client
        .post(
            &format!("/api/approvals/{id}"),
            json!({"decision": "allow", "hunks": [], "digest": digest}),
        )
        .await;
    assert_eq!(status, 200, "no hunk accepted is a denial: {refused}");
    let result = call.await.unwrap();
    assert_eq!(result["error"]["code"], "TOOL_POLICY_DENIED", "{result}");
    let (status, missing) = client.get("/api/approvals/nope-0/diff", true).await;
    assert_eq!(
        (status, missing["error"]["code"].as_str()),
        (404, Some("STUDIO_APPROVAL_NOT_FOUND"))
    );
    studio.shutdown().await;
}

#[tokio::test]
async fn a_stale_revision_guard_is_named_and_a_narrowed_call_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    let (old, new) = two_hunk_texts();
    seed_file(&studio, "notes.txt", &old).await;
    let stale = studio.state.workspace.manager().revision().await - 1;
    let call = model_call(
        &studio,
        "workspace.writeFile",
        json!({"path": "notes.txt", "source": new, "expectedRevision": stale}),
    );
    let id = client.wait_approval().await;
    let (_, view) = client.get(&format!("/api/approvals/{id}/diff"), true).await;
    let note = view["note"].as_str().unwrap_or_default();
    assert!(
        note.contains(&format!("expects revision {stale}")),
        "{view}"
    );
    let digest = view["diff"]["digest"].as_str().unwrap().to_owned();
    let (status, _) = client
        .post(
            &format!("/api/approvals/{id}"),
            json!({"decision": "allow", "hunks": [0], "digest": digest}),
        )
        .await;
    assert_eq!(status, 200);
    let result = call.await.unwrap();
    assert_eq!(
        result["error"]["code"], "WORKSPACE_REVISION_CONFLICT",
        "the narrowed call keeps the caller's guard: {result}"
    );
    let source = studio
        .state
        .workspace
        .manager()
        .read_file("notes.txt")
        .await
        .unwrap()
        .source;
    assert_eq!(source, old, "nothing was written");
    studio.shutdown().await;
}

#[tokio::test]
async fn an_undo_shows_the_step_it_would_take() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    seed_file(&studio, "notes.txt", "before\n").await;
    studio
        .state
        .workspace
        .manager()
        .write_file("notes.txt", "after\n", Default::default())
        .await
        .unwrap();
    let revision = studio.state.workspace.manager().revision().await;
    let call = model_call(
        &studio,
        "workspace.undo",
        json!({"expectedRevision": revision}),
    );
    let id = client.wait_approval().await;
    let (_, view) = client.get(&format!("/api/approvals/{id}/diff"), true).await;
    assert!(
        view["effect"]
            .as_str()
            .unwrap()
            .starts_with("Changes history"),
        "{view}"
    );
    let lines = &view["diff"]["files"][0]["text"]["hunks"][0]["lines"];
    assert_eq!(lines[0]["text"], "after", "{view}");
    assert_eq!(lines[0]["tag"], "removed");
    assert_eq!(lines[1]["text"], "before");
    assert_eq!(
        studio.state.workspace.manager().revision().await,
        revision,
        "previewing took no step"
    );
    client
        .post(
            &format!("/api/approvals/{id}"),
            json!({"decision": "allow"}),
        )
        .await;
    let result = call.await.unwrap();
    assert!(result.get("isError").is_none(), "{result}");
    let source = studio
        .state
        .workspace
        .manager()
        .read_file("notes.txt")
        .await
        .unwrap()
        .source;
    assert_eq!(source, "before\n");
    studio.shutdown().await;
}

#[tokio::test]
async fn a_folder_reload_shows_what_the_disk_holds_now() {
    let dir = tempfile::tempdir().unwrap();
    let site = tempfile::tempdir().unwrap();
    std::fs::write(site.path().join("index.html"), "<h1>one</h1>\n").unwrap();
    let studio =
        host::start(StudioOptions::ephemeral(dir.path()).with_folder(site.path().to_owned()))
            .await
            .expect("studio starts");
    let client = Client::new(&studio);
    std::fs::write(site.path().join("index.html"), "<h1>two</h1>\n").unwrap();
    let call = model_call(&studio, "workspace.reloadFolder", json!({}));
    let id = client.wait_approval().await;
    let (_, view) = client.get(&format!("/api/approvals/{id}/diff"), true).await;
    assert!(
        view["effect"].as_str().unwrap().starts_with("Destructive"),
        "{view}"
    );
    let file = &view["diff"]["files"][0];
    assert_eq!(file["path"], "index.html", "{view}");
    let lines = &file["text"]["hunks"][0]["lines"];
    assert_eq!(
        (lines[0]["text"].as_str(), lines[1]["text"].as_str()),
        (Some("<h1>one</h1>"), Some("<h1>two</h1>"))
    );
    client
        .post(&format!("/api/approvals/{id}"), json!({"decision": "deny"}))
        .await;
    let result = call.await.unwrap();
    assert_eq!(result["error"]["code"], "TOOL_POLICY_DENIED", "{result}");
    studio.shutdown().await;
}

#[tokio::test]
async fn the_changes_of_a_linked_folder_are_measured_against_the_disk_and_revert_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let site = tempfile::tempdir().unwrap();
    let lines: String = (1..=20).map(|n| format!("<p>{n}</p>\n")).collect();
    std::fs::write(site.path().join("index.html"), &lines).unwrap();
    let studio =
        host::start(StudioOptions::ephemeral(dir.path()).with_folder(site.path().to_owned()))
            .await
            .expect("studio starts");
    let client = Client::new(&studio);
    assert_eq!(
        client.get("/api/changes", false).await.0,
        401,
        "file source needs the token"
    );
    let edited = lines
        .replace("<p>2</p>", "<p>two</p>")
        .replace("<p>19</p>", "<p>nineteen</p>");
    studio
        .state
        .workspace
        .manager()
        .write_file("index.html", &edited, Default::default())
        .await
        .unwrap();
    // Someone changes the disk too: the panel measures against what is there now.
    let disk = lines.replace("<p>10</p>", "<p>ten</p>");
    std::fs::write(site.path().join("index.html"), &disk).unwrap();
    let (status, changes) = client.get("/api/changes", true).await;
    assert_eq!(status, 200, "{changes}");
    assert_eq!(changes["base"], "folder");
    let hunks = changes["diff"]["files"][0]["text"]["hunks"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(hunks.len(), 3, "{changes}");
    let digest = changes["diff"]["digest"].as_str().unwrap().to_owned();
    let (status, result) = client
        .post(
            "/api/changes/revert-hunk",
            json!({"path": "index.html", "hunk": 0, "digest": digest}),
        )
        .await;
    assert_eq!(status, 200);
    assert!(result.get("isError").is_none(), "{result}");
    let source = studio
        .state
        .workspace
        .manager()
        .read_file("index.html")
        .await
        .unwrap()
        .source;
    assert!(
        source.contains("<p>2</p>") && source.contains("<p>nineteen</p>"),
        "{source}"
    );
    let (status, stale) = client
        .post(
            "/api/changes/revert-hunk",
            json!({"path": "index.html", "hunk": 0, "digest": digest}),
        )
        .await;
    assert_eq!(
        (status, stale["error"]["code"].as_str()),
        (409, Some("STUDIO_DIFF_CHANGED"))
    );
    studio.shutdown().await;
}

/// A person edits the file while a patch waits for approval: allowed, the patch runs on the
/// current revision when its text occurs once (the edits are kept), and is refused with the
/// revision conflict when the person's edit made a second occurrence it could take instead.
#[tokio::test]
async fn an_approved_patch_is_rebased_onto_edits_made_while_it_waited() {
    let dir = tempfile::tempdir().unwrap();
    let studio = start(dir.path()).await;
    let client = Client::new(&studio);
    seed_file(&studio, "notes.txt", "one\ntwo\nthree\n").await;
    let manager = studio.state.workspace.manager();
    for (typed, rebased) in [
        ("one\ntwo\nthree typed\n", Some("one\n2\nthree typed\n")),
        ("two again\none\ntwo\nthree\n", None),
    ] {
        manager
            .write_file("notes.txt", "one\ntwo\nthree\n", Default::default())
            .await
            .unwrap();
        let revision = manager.revision().await;
        let call = model_call(
            &studio,
            "workspace.applyPatch",
            json!({"path": "notes.txt", "search": "two", "replace": "2", "expectedRevision": revision}),
        );
        let id = client.wait_approval().await;
        manager
            .write_file("notes.txt", typed, Default::default())
            .await
            .unwrap();
        let (_, view) = client.get(&format!("/api/approvals/{id}/diff"), true).await;
        let note = view["note"].as_str().unwrap_or_default().to_owned();
        let (status, _) = client
            .post(
                &format!("/api/approvals/{id}"),
                json!({"decision": "allow"}),
            )
            .await;
        assert_eq!(status, 200);
        let result = call.await.unwrap();
        let source = manager.read_file("notes.txt").await.unwrap().source;
        match rebased {
            Some(expected) => {
                assert!(note.contains("still applies"), "{note}");
                assert!(result.get("isError").is_none(), "{result}");
                assert!(
                    result["content"].to_string().contains("Rebased"),
                    "{result}"
                );
                assert_eq!(source, expected);
            }
            None => {
                assert!(note.contains("will be refused"), "{note}");
                assert_eq!(
                    result["error"]["code"], "WORKSPACE_REVISION_CONFLICT",
                    "{result}"
                );
                assert_eq!(source, typed, "nothing was written");
            }
        }
    }
    studio.shutdown().await;
}
