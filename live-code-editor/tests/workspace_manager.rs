//! WorkspaceDocumentManager: revision guards, history, persistence ordering, storage fallback
//! and preview acknowledgement.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use live_code_editor::WorkspaceFile;
use live_code_editor::workspace::{
    COALESCE_WINDOW, FolderImport, HeadlessPreviewBridge, ImportGuard, MAX_HISTORY_ENTRIES,
    MAX_STORAGE_ERROR_CHARS, ManagerOptions, ManualClock, ManualPreviewBridge,
    MemoryWorkspaceRepository, Occurrence, PreviewAcks, PreviewBridge, PreviewSnapshot,
    PreviewStatus, RepositoryError, SqliteWorkspaceRepository, StoredWorkspace, WorkspaceDelta,
    WorkspaceDocumentManager, WorkspaceErrorCode as Code, WorkspaceRepository, WriteOptions,
};

fn seed() -> Vec<WorkspaceFile> {
    vec![
        WorkspaceFile::text("index.html", "<h1 id=\"hero-title\">Hi</h1>"),
        WorkspaceFile::text("styles.css", "body { color: red; }"),
        WorkspaceFile::text("app.js", "console.log('a');"),
        WorkspaceFile::asset("logo.png", vec![137, 80, 78, 71]),
    ]
}

struct Harness {
    manager: Arc<WorkspaceDocumentManager>,
    clock: Arc<ManualClock>,
}

async fn harness_with(
    repository: Arc<dyn WorkspaceRepository>,
    bridge: Arc<dyn PreviewBridge>,
) -> Harness {
    let clock = ManualClock::shared();
    let options = ManagerOptions::default().with_clock(clock.clone());
    let manager = WorkspaceDocumentManager::open(seed(), repository, bridge, options)
        .await
        .unwrap();
    Harness {
        manager: Arc::new(manager),
        clock,
    }
}

async fn harness() -> Harness {
    harness_with(
        Arc::new(MemoryWorkspaceRepository::new()),
        Arc::new(HeadlessPreviewBridge::accept_all()),
    )
    .await
}

fn no_coalesce() -> WriteOptions {
    WriteOptions::default().with_coalesce(false)
}

#[tokio::test]
async fn hydrate_advances_the_revision_and_reports_storage() {
    let h = harness().await;
    let status = h.manager.status().await;
    assert_eq!(status.revision, 2, "initial revision 1, hydrate +1");
    assert_eq!(status.storage.storage_mode, "memory");
    assert_eq!(status.storage.storage_error, None);
    assert_eq!(status.active_path, "index.html");
    assert!(!status.is_dirty && !status.can_undo && !status.can_redo);
    assert!(!status.folder.connected);
}

#[tokio::test]
async fn mutations_wait_for_the_compiled_preview_and_carry_storage() {
    let h = harness().await;
    let outcome = h
        .manager
        .create_file("src/main.js", "export {}", Some(2))
        .await
        .unwrap();
    assert_eq!(outcome.revision, 3);
    assert_eq!(outcome.path.as_deref(), Some("src/main.js"));
    assert_eq!(outcome.active_path, "src/main.js");
    assert_eq!(outcome.preview.revision, 3);
    assert_eq!(outcome.preview.status, PreviewStatus::Compiled);
    assert_eq!(outcome.dirty_paths, ["src/main.js"]);
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(json["storageMode"], "memory");
    assert_eq!(
        json["preview"],
        serde_json::json!({"revision": 3, "status": "compiled"})
    );
}

#[tokio::test]
async fn a_stale_expected_revision_changes_nothing() {
    let h = harness().await;
    h.manager
        .write_file("app.js", "v2", WriteOptions::default())
        .await
        .unwrap();
    for result in [
        h.manager
            .write_file(
                "app.js",
                "lost",
                WriteOptions::default().with_expected_revision(Some(2)),
            )
            .await,
        h.manager
            .apply_patch("app.js", "v2", "x", Occurrence::First, Some(2))
            .await,
        h.manager.delete_file("app.js", Some(2)).await,
        h.manager.rename_file("app.js", "b.js", Some(2)).await,
        h.manager.create_file("c.js", "", Some(2)).await,
        h.manager.revert_file("app.js", Some(2)).await,
        h.manager.undo(Some(2)).await,
        h.manager.reset(ImportGuard::at(Some(2))).await,
    ] {
        let error = result.unwrap_err();
        assert_eq!(error.code, Code::WorkspaceRevisionConflict);
        assert!(error.retryable);
        assert_eq!(error.details["expectedRevision"], 2);
        assert_eq!(error.details["currentRevision"], 3);
    }
    let read = h.manager.read_file("app.js").await.unwrap();
    assert_eq!((read.source.as_str(), read.revision), ("v2", 3));
    assert_eq!(
        h.manager
            .save_checkpoint(Some(2))
            .await
            .unwrap_err()
            .details["operation"],
        "checkpoint"
    );
}

#[tokio::test]
async fn undo_and_redo_move_through_history() {
    let h = harness().await;
    h.manager
        .write_file("app.js", "one", no_coalesce())
        .await
        .unwrap();
    h.manager.delete_file("styles.css", None).await.unwrap();
    let undone = h.manager.undo(None).await.unwrap();
    assert_eq!(undone.operation, "undo");
    assert!(undone.pending_deletions.is_empty());
    let undone = h.manager.undo(None).await.unwrap();
    assert!(undone.dirty_paths.is_empty());
    assert_eq!(
        h.manager.read_file("app.js").await.unwrap().source,
        "console.log('a');"
    );
    let error = h.manager.undo(None).await.unwrap_err();
    assert_eq!(
        (error.code, error.details["direction"].as_str()),
        (Code::WorkspaceHistoryEmpty, Some("undo"))
    );
    h.manager.redo(None).await.unwrap();
    let redone = h.manager.redo(None).await.unwrap();
    assert_eq!(redone.pending_deletions, ["styles.css"]);
    assert_eq!(
        h.manager.redo(None).await.unwrap_err().details["direction"],
        "redo"
    );
    assert!(
        redone.revision > undone.revision,
        "undo and redo are new revisions"
    );
}

#[tokio::test]
async fn same_path_writes_coalesce_within_the_window() {
    let h = harness().await;
    h.manager
        .write_file("app.js", "a", WriteOptions::default())
        .await
        .unwrap();
    h.clock.advance(COALESCE_WINDOW - Duration::from_millis(1));
    h.manager
        .write_file("app.js", "ab", WriteOptions::default())
        .await
        .unwrap();
    h.manager.undo(None).await.unwrap();
    assert_eq!(
        h.manager.read_file("app.js").await.unwrap().source,
        "console.log('a');"
    );

    h.manager.redo(None).await.unwrap();
    h.clock.advance(COALESCE_WINDOW);
    h.manager
        .write_file("app.js", "abc", WriteOptions::default())
        .await
        .unwrap();
    h.manager.undo(None).await.unwrap();
    assert_eq!(
        h.manager.read_file("app.js").await.unwrap().source,
        "ab",
        "750 ms later is a new checkpoint"
    );

    h.manager
        .write_file("app.js", "x", no_coalesce())
        .await
        .unwrap();
    h.manager
        .write_file("app.js", "xy", no_coalesce())
        .await
        .unwrap();
    h.manager.undo(None).await.unwrap();
    assert_eq!(
        h.manager.read_file("app.js").await.unwrap().source,
        "x",
        "coalesce=false always checkpoints"
    );
}

#[tokio::test]
async fn history_keeps_the_latest_hundred_checkpoints() {
    let h = harness().await;
    for step in 0..=MAX_HISTORY_ENTRIES {
        h.manager
            .write_file("app.js", &format!("v{step}"), no_coalesce())
            .await
            .unwrap();
    }
    for _ in 0..MAX_HISTORY_ENTRIES {
        h.manager.undo(None).await.unwrap();
    }
    assert_eq!(
        h.manager.read_file("app.js").await.unwrap().source,
        "v0",
        "the seed checkpoint was dropped"
    );
    assert_eq!(
        h.manager.undo(None).await.unwrap_err().code,
        Code::WorkspaceHistoryEmpty
    );
}

#[tokio::test]
async fn sqlite_persists_every_mutation_and_hydrates_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("studio.sqlite");
    let repository = Arc::new(SqliteWorkspaceRepository::open(&db, "main").await.unwrap());
    let h = harness_with(repository, Arc::new(HeadlessPreviewBridge::accept_all())).await;
    assert_eq!(h.manager.status().await.storage.storage_mode, "sqlite");
    h.manager
        .write_file("app.js", "persisted", WriteOptions::default())
        .await
        .unwrap();
    h.manager
        .rename_file("styles.css", "css/site.css", None)
        .await
        .unwrap();
    h.manager.open_file("css/site.css", None).await.unwrap();
    let before = h.manager.status().await;
    drop(h);

    let repository = Arc::new(SqliteWorkspaceRepository::open(&db, "main").await.unwrap());
    let again = harness_with(repository, Arc::new(HeadlessPreviewBridge::accept_all())).await;
    let status = again.manager.status().await;
    assert_eq!(status.revision, before.revision + 1);
    assert_eq!(status.active_path, "css/site.css");
    assert_eq!(status.dirty_paths, before.dirty_paths);
    assert_eq!(status.pending_deletions, ["styles.css"]);
    assert_eq!(
        again.manager.read_file("app.js").await.unwrap().source,
        "persisted"
    );
    let reverted = again
        .manager
        .revert_file("css/site.css", None)
        .await
        .unwrap();
    assert!(
        reverted.pending_deletions.is_empty(),
        "origin metadata survived the restart"
    );
}

/// Loads nothing, then fails every write with an oversized message.
#[derive(Default)]
struct FailingRepository {
    fail_load: bool,
    applies: AtomicUsize,
}

#[async_trait]
impl WorkspaceRepository for FailingRepository {
    fn storage_mode(&self) -> &'static str {
        "sqlite"
    }

    async fn load(&self) -> Result<Option<StoredWorkspace>, RepositoryError> {
        if self.fail_load {
            return Err(RepositoryError::Storage("database is locked".into()));
        }
        Ok(None)
    }

    async fn replace(&self, _stored: &StoredWorkspace) -> Result<(), RepositoryError> {
        Ok(())
    }

    async fn apply(&self, _delta: &WorkspaceDelta) -> Result<(), RepositoryError> {
        self.applies.fetch_add(1, Ordering::SeqCst);
        Err(RepositoryError::Storage("disk I/O error ".repeat(40)))
    }
}

#[tokio::test]
async fn a_storage_failure_switches_to_memory_with_a_bounded_error() {
    let repository = Arc::new(FailingRepository::default());
    let h = harness_with(
        repository.clone(),
        Arc::new(HeadlessPreviewBridge::accept_all()),
    )
    .await;
    let outcome = h
        .manager
        .write_file("app.js", "kept", WriteOptions::default())
        .await
        .unwrap();
    assert_eq!(outcome.storage.storage_mode, "memory");
    let error = outcome.storage.storage_error.unwrap();
    assert_eq!(error.chars().count(), MAX_STORAGE_ERROR_CHARS);
    assert!(error.starts_with("workspace storage failed: disk I/O error"));
    h.manager
        .write_file("app.js", "still kept", WriteOptions::default())
        .await
        .unwrap();
    assert_eq!(
        repository.applies.load(Ordering::SeqCst),
        1,
        "memory mode stops writing to the failed store"
    );
    assert_eq!(
        h.manager.read_file("app.js").await.unwrap().source,
        "still kept"
    );
}

#[tokio::test]
async fn a_load_failure_hydrates_the_seed_in_memory_mode() {
    let repository = Arc::new(FailingRepository {
        fail_load: true,
        ..FailingRepository::default()
    });
    let h = harness_with(repository, Arc::new(HeadlessPreviewBridge::accept_all())).await;
    let status = h.manager.status().await;
    assert_eq!(status.storage.storage_mode, "memory");
    assert_eq!(
        status.storage.storage_error.as_deref(),
        Some("workspace storage failed: database is locked")
    );
    assert_eq!(status.file_count, 4);
}

#[tokio::test(start_paused = true)]
async fn an_unacknowledged_revision_times_out_after_the_default_wait() {
    let bridge = Arc::new(ManualPreviewBridge::default());
    let h = harness_with(Arc::new(MemoryWorkspaceRepository::new()), bridge.clone()).await;
    let error = h
        .manager
        .write_file("app.js", "x", WriteOptions::default())
        .await
        .unwrap_err();
    assert_eq!(error.code, Code::PreviewAckTimeout);
    assert!(
        !error.retryable,
        "applied: repeating the mutation would apply it twice (the bare wait stays retryable)"
    );
    assert_eq!(
        error.details,
        serde_json::json!({"revision": 3, "timeoutMs": 2500, "committed": true, "previewAction": "refresh"})
    );
    assert_eq!(
        error.message,
        "The change was applied as revision 3; only the preview confirmation failed: \
         Preview revision 3 was not acknowledged within 2500ms."
    );
    assert_eq!(
        h.manager.revision().await,
        3,
        "the mutation itself is committed"
    );
    assert_eq!(bridge.published(), [2, 3]);
}

#[tokio::test(start_paused = true)]
async fn a_newer_revision_supersedes_the_awaited_one_and_stale_acks_are_ignored() {
    let bridge = Arc::new(ManualPreviewBridge::default());
    let h = harness_with(Arc::new(MemoryWorkspaceRepository::new()), bridge).await;
    let manager = Arc::clone(&h.manager);
    let first = tokio::spawn(async move {
        manager
            .write_file("app.js", "first", WriteOptions::default())
            .await
    });
    while h.manager.revision().await < 3 {
        tokio::task::yield_now().await;
    }
    let manager = Arc::clone(&h.manager);
    let second =
        tokio::spawn(async move { manager.write_file("app.js", "second", no_coalesce()).await });
    let error = first.await.unwrap().unwrap_err();
    assert_eq!(error.code, Code::PreviewRevisionSuperseded);
    assert_eq!(
        error.details,
        serde_json::json!({"requestedRevision": 3, "actualRevision": 4, "committed": true, "revision": 3, "previewAction": "refresh"})
    );
    assert!(
        !h.manager.acknowledge_preview(3, PreviewStatus::Ready),
        "stale acknowledgement ignored"
    );
    assert!(h.manager.acknowledge_preview(4, PreviewStatus::Ready));
    let outcome = second.await.unwrap().unwrap();
    assert_eq!(outcome.preview.status, PreviewStatus::Ready);
}

#[tokio::test]
async fn a_preview_runtime_error_is_coded() {
    let bridge = HeadlessPreviewBridge::new(|files: &[WorkspaceFile]| {
        let broken = files
            .iter()
            .any(|file| file.source().is_some_and(|source| source.contains("throw")));
        if broken {
            Err("Uncaught Error".to_owned())
        } else {
            Ok(())
        }
    });
    let h = harness_with(Arc::new(MemoryWorkspaceRepository::new()), Arc::new(bridge)).await;
    let error = h
        .manager
        .write_file("app.js", "throw new Error()", WriteOptions::default())
        .await
        .unwrap_err();
    assert_eq!(error.code, Code::PreviewRuntimeError);
    assert!(!error.retryable);
    assert_eq!(
        error.details,
        serde_json::json!({"revision": 3, "committed": true, "message": "Uncaught Error", "previewAction": "refresh"}),
        "the caller reads what the preview reported"
    );
    let fixed = h.manager.undo(None).await.unwrap();
    assert_eq!(fixed.preview.status, PreviewStatus::Compiled);
}

/// Acknowledges odd revisions at once and never even ones, so concurrent writers meet every
/// preview outcome: success, supersession and timeout.
#[derive(Debug, Default)]
struct OddRevisionsBridge;

impl PreviewBridge for OddRevisionsBridge {
    fn publish(&self, snapshot: PreviewSnapshot, acks: &PreviewAcks) {
        if snapshot.revision % 2 == 1 {
            acks.acknowledge(snapshot.revision, PreviewStatus::Ready);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_are_told_the_truth_about_what_was_applied() {
    let options = ManagerOptions::default().with_ack_timeout(Duration::from_millis(300));
    let manager = Arc::new(
        WorkspaceDocumentManager::open(
            seed(),
            Arc::new(MemoryWorkspaceRepository::new()),
            Arc::new(OddRevisionsBridge),
            options,
        )
        .await
        .unwrap(),
    );
    let start = manager.revision().await;
    let writers: Vec<_> = (0..16)
        .map(|writer| {
            let manager = Arc::clone(&manager);
            // Half the writers guard on the starting revision, so at most one of them can apply.
            let expected = (writer % 2 == 0).then_some(start);
            tokio::spawn(async move {
                let marker = format!("/* w{writer} */");
                let replace = format!("{marker}console.log('a');");
                let result = manager
                    .apply_patch(
                        "app.js",
                        "console.log('a');",
                        &replace,
                        Occurrence::First,
                        expected,
                    )
                    .await;
                (marker, result)
            })
        })
        .collect();
    let mut results = Vec::new();
    for writer in writers {
        results.push(writer.await);
    }
    let final_source = manager.read_file("app.js").await.unwrap().source;
    let mut committed_errors = 0;
    for joined in results {
        let (marker, result) = joined.unwrap();
        match result {
            Ok(_) => assert!(final_source.contains(&marker), "{marker} succeeded"),
            Err(error) if error.code == Code::WorkspaceRevisionConflict => {
                assert!(!final_source.contains(&marker), "{marker} changed nothing");
                assert_eq!(error.details.get("committed"), None);
            }
            Err(error) => {
                assert!(
                    matches!(
                        error.code,
                        Code::PreviewAckTimeout
                            | Code::PreviewRevisionSuperseded
                            | Code::PreviewRuntimeError
                    ),
                    "{error}"
                );
                assert_eq!(error.details["committed"], true, "{error}");
                let revision = error.details["revision"].as_u64().unwrap();
                assert!(revision > start && revision <= manager.revision().await);
                assert!(final_source.contains(&marker), "{marker} was applied");
                assert!(error.message.starts_with("The change was applied"));
                committed_errors += 1;
            }
        }
    }
    assert!(
        committed_errors > 0,
        "even revisions are never acknowledged"
    );
}

#[tokio::test(start_paused = true)]
async fn an_import_whose_preview_is_not_confirmed_is_committed() {
    let h = harness_with(
        Arc::new(MemoryWorkspaceRepository::new()),
        Arc::new(ManualPreviewBridge::default()),
    )
    .await;
    let import = FolderImport::new(
        "site",
        vec![WorkspaceFile::text("index.html", "<p>imported</p>")],
    );
    let error = h
        .manager
        .import_files(import, ImportGuard::default())
        .await
        .unwrap_err();
    assert_eq!(error.code, Code::PreviewAckTimeout);
    assert_eq!(error.details["committed"], true);
    assert_eq!(error.details["revision"], 3);
    let read = h.manager.read_file("index.html").await.unwrap();
    assert_eq!(
        (read.revision, read.source.as_str()),
        (3, "<p>imported</p>")
    );
}

#[tokio::test(start_paused = true)]
async fn a_refresh_commits_nothing_so_its_timeout_is_not_committed() {
    let h = harness_with(
        Arc::new(MemoryWorkspaceRepository::new()),
        Arc::new(ManualPreviewBridge::default()),
    )
    .await;
    let error = h.manager.refresh_preview().await.unwrap_err();
    assert_eq!(error.code, Code::PreviewAckTimeout);
    assert_eq!(
        error.details,
        serde_json::json!({"revision": 2, "timeoutMs": 2500})
    );
}

#[tokio::test]
async fn refresh_republishes_the_same_revision() {
    let h = harness().await;
    let outcome = h.manager.refresh_preview().await.unwrap();
    assert_eq!((outcome.revision, outcome.preview.revision), (2, 2));
    assert_eq!(outcome.preview.status, PreviewStatus::Compiled);
}

#[tokio::test]
async fn open_file_selects_without_a_new_revision() {
    let h = harness().await;
    let outcome = h.manager.open_file(r".\styles.css", Some(2)).await.unwrap();
    assert_eq!(
        (outcome.revision, outcome.active_path.as_str()),
        (2, "styles.css")
    );
    assert_eq!(
        h.manager
            .open_file("nope.css", None)
            .await
            .unwrap_err()
            .code,
        Code::WorkspaceFileNotFound
    );
}

#[tokio::test]
async fn reads_list_and_type_conflicts() {
    let h = harness().await;
    let error = h.manager.read_file("logo.png").await.unwrap_err();
    assert_eq!(error.code, Code::WorkspaceFileTypeConflict);
    let error = h.manager.read_file("../x").await.unwrap_err();
    assert_eq!(
        (error.code, error.details["reason"].as_str()),
        (Code::WorkspacePathInvalid, Some("parent-traversal"))
    );
    let listing = h.manager.list_files().await;
    let kinds: Vec<_> = listing
        .iter()
        .map(|file| (file.path.as_str(), file.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("index.html", "text"),
            ("styles.css", "text"),
            ("app.js", "text"),
            ("logo.png", "asset")
        ]
    );
    assert_eq!(listing[3].mime_type, "image/png");
    let tool: tool_protocol::ToolCallError = error.into();
    assert_eq!(tool.code, "WORKSPACE_PATH_INVALID");
}

#[tokio::test]
async fn checkpoint_and_reset_are_browser_only_boundaries() {
    let h = harness().await;
    h.manager
        .write_file("app.js", "edited", WriteOptions::default())
        .await
        .unwrap();
    h.manager.delete_file("styles.css", None).await.unwrap();
    let saved = h.manager.save_checkpoint(Some(4)).await.unwrap();
    assert_eq!(
        (saved.saved_paths.as_slice(), saved.deleted_paths.as_slice()),
        (&["app.js".to_owned()][..], &["styles.css".to_owned()][..])
    );
    assert!(saved.clean);
    assert_eq!(saved.revision, 4, "a checkpoint does not change content");
    let reset = h.manager.reset(ImportGuard::at(Some(4))).await.unwrap();
    assert_eq!(reset.revision, 5);
    assert_eq!(
        h.manager.read_file("app.js").await.unwrap().source,
        "console.log('a');"
    );
    assert!(
        !h.manager.status().await.can_undo,
        "reset starts a fresh history"
    );
    let error = h.manager.save_all(None).await.unwrap_err();
    assert_eq!(
        (error.code, error.retryable),
        (Code::WorkspaceFolderNotConnected, true)
    );
    assert_eq!(
        h.manager
            .reload_folder(ImportGuard::default())
            .await
            .unwrap_err()
            .details["operation"],
        "reload"
    );
}
