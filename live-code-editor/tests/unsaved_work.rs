//! No import, reload, upload or reset replaces unsaved work without an explicit discard, and
//! a restart against the same folder keeps it (real temp folders, the real SQLite file).

use std::fs;
use std::path::Path;
use std::sync::Arc;

use live_code_editor::WorkspaceFile;
use live_code_editor::workspace::{
    FolderAdapter, FolderImport, HeadlessPreviewBridge, ImportBuilder, ImportGuard,
    MAX_LISTED_SKIPS, ManagerOptions, OsFolder, SqliteWorkspaceRepository,
    WorkspaceDocumentManager, WorkspaceErrorCode as Code, WriteOptions,
};

fn site(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, source) in files {
        let target = dir.path().join(path);
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::write(target, source).unwrap();
    }
    dir
}

fn two_file_site() -> tempfile::TempDir {
    site(&[("index.html", "<h1>Site</h1>"), ("app.js", "let a = 1;")])
}

fn folder(dir: &Path) -> Arc<dyn FolderAdapter> {
    Arc::new(OsFolder::open(dir).unwrap())
}

/// A manager over the SQLite file in `data`; opening it again is a restart.
async fn open_manager(data: &Path) -> WorkspaceDocumentManager {
    let repository = SqliteWorkspaceRepository::open(data.join("ws.sqlite"), "default")
        .await
        .unwrap();
    WorkspaceDocumentManager::open(
        vec![WorkspaceFile::text("index.html", "<p>seed</p>")],
        Arc::new(repository),
        Arc::new(HeadlessPreviewBridge::accept_all()),
        ManagerOptions::default(),
    )
    .await
    .unwrap()
}

async fn write(manager: &WorkspaceDocumentManager, path: &str, source: &str) {
    manager
        .write_file(path, source, WriteOptions::default())
        .await
        .unwrap();
}

async fn linked_with_edit(data: &Path, site: &Path) -> WorkspaceDocumentManager {
    let manager = open_manager(data).await;
    manager
        .open_folder(folder(site), ImportGuard::default())
        .await
        .unwrap();
    write(&manager, "app.js", "let a = 2;").await;
    manager
}

#[tokio::test]
async fn opening_the_same_folder_over_an_edit_is_refused_and_changes_nothing() {
    let (data, dir) = (tempfile::tempdir().unwrap(), two_file_site());
    let manager = linked_with_edit(data.path(), dir.path()).await;
    let revision = manager.revision().await;
    let error = manager
        .open_folder(folder(dir.path()), ImportGuard::at(Some(revision)))
        .await
        .unwrap_err();
    assert_eq!(error.code, Code::WorkspaceFolderStateConflict);
    assert!(!error.retryable);
    assert_eq!(error.details["operation"], "open");
    assert_eq!(error.details["dirtyPaths"], serde_json::json!(["app.js"]));
    assert_eq!(manager.revision().await, revision);
    assert_eq!(
        manager.read_file("app.js").await.unwrap().source,
        "let a = 2;"
    );
    assert_eq!(manager.status().await.dirty_paths, ["app.js"]);
    manager.undo(None).await.unwrap();
    assert_eq!(
        manager.read_file("app.js").await.unwrap().source,
        "let a = 1;"
    );
}

#[tokio::test]
async fn an_explicit_discard_replaces_the_edit() {
    let (data, dir) = (tempfile::tempdir().unwrap(), two_file_site());
    let manager = linked_with_edit(data.path(), dir.path()).await;
    let guard = ImportGuard::at(Some(manager.revision().await)).discarding(true);
    manager
        .open_folder(folder(dir.path()), guard)
        .await
        .unwrap();
    assert_eq!(
        manager.read_file("app.js").await.unwrap().source,
        "let a = 1;"
    );
    assert!(!manager.status().await.is_dirty);
}

#[tokio::test]
async fn reload_upload_and_a_different_folder_are_refused_over_an_edit() {
    let (data, dir) = (tempfile::tempdir().unwrap(), two_file_site());
    let other = site(&[("index.html", "<h1>Other</h1>")]);
    let manager = linked_with_edit(data.path(), dir.path()).await;
    let reload = manager.reload_folder(ImportGuard::default()).await;
    assert_eq!(reload.unwrap_err().details["operation"], "reload");
    let open = manager
        .open_folder(folder(other.path()), ImportGuard::default())
        .await;
    assert_eq!(open.unwrap_err().code, Code::WorkspaceFolderStateConflict);
    let mut upload = ImportBuilder::new("upload");
    upload.skip(
        "x.exe",
        live_code_editor::workspace::SkipReason::Unsupported,
    );
    let mut upload = upload.finish();
    upload.files = vec![WorkspaceFile::text("index.html", "<p>up</p>")];
    let import = manager.import_files(upload, ImportGuard::default()).await;
    assert_eq!(import.unwrap_err().details["operation"], "import");
    assert_eq!(manager.status().await.dirty_paths, ["app.js"]);
    assert!(manager.status().await.folder.connected);
}

#[tokio::test]
async fn a_pending_deletion_is_unsaved_work_too() {
    let (data, dir) = (tempfile::tempdir().unwrap(), two_file_site());
    let manager = open_manager(data.path()).await;
    manager
        .open_folder(folder(dir.path()), ImportGuard::default())
        .await
        .unwrap();
    manager.delete_file("app.js", None).await.unwrap();
    let error = manager
        .reload_folder(ImportGuard::default())
        .await
        .unwrap_err();
    assert_eq!(error.details["dirtyPaths"], serde_json::json!(["app.js"]));
    assert_eq!(manager.status().await.pending_deletions, ["app.js"]);
}

#[tokio::test]
async fn reset_is_refused_over_seed_edits_unless_discarded() {
    let data = tempfile::tempdir().unwrap();
    let manager = open_manager(data.path()).await;
    write(&manager, "index.html", "<p>mine</p>").await;
    let error = manager.reset(ImportGuard::default()).await.unwrap_err();
    assert_eq!(error.code, Code::WorkspaceFolderStateConflict);
    assert_eq!(error.details["operation"], "reset");
    assert_eq!(
        manager.read_file("index.html").await.unwrap().source,
        "<p>mine</p>"
    );
    manager
        .reset(ImportGuard::default().discarding(true))
        .await
        .unwrap();
    assert_eq!(
        manager.read_file("index.html").await.unwrap().source,
        "<p>seed</p>"
    );
}

#[tokio::test]
async fn a_restart_resumes_unsaved_work_against_the_same_folder() {
    let (data, dir) = (tempfile::tempdir().unwrap(), two_file_site());
    drop(linked_with_edit(data.path(), dir.path()).await);
    // The folder changed while the studio was stopped: the edit still wins, still dirty.
    fs::write(dir.path().join("index.html"), "<h1>Changed outside</h1>").unwrap();
    let restarted = open_manager(data.path()).await;
    let resumed = restarted
        .resume_folder(folder(dir.path()))
        .await
        .unwrap()
        .expect("the stored edit is resumed");
    assert_eq!(resumed.unsaved_paths, ["app.js"]);
    assert_eq!(resumed.unsaved_count, 1);
    let status = restarted.status().await;
    assert_eq!(status.dirty_paths, ["app.js"]);
    assert!(status.folder.connected);
    assert_eq!(status.resumed, Some(resumed));
    assert_eq!(
        restarted.read_file("app.js").await.unwrap().source,
        "let a = 2;"
    );
    let saved = restarted.save_all(None).await.unwrap();
    assert_eq!(saved.saved_paths, ["app.js"]);
    assert_eq!(
        fs::read_to_string(dir.path().join("app.js")).unwrap(),
        "let a = 2;"
    );
}

#[tokio::test]
async fn resume_declines_a_clean_workspace_or_another_folder() {
    let (data, dir) = (tempfile::tempdir().unwrap(), two_file_site());
    let other = two_file_site();
    drop(linked_with_edit(data.path(), dir.path()).await);
    let restarted = open_manager(data.path()).await;
    assert_eq!(
        restarted.resume_folder(folder(other.path())).await.unwrap(),
        None
    );
    assert!(!restarted.status().await.folder.connected);
    restarted.save_checkpoint(None).await.unwrap();
    assert_eq!(
        restarted.resume_folder(folder(dir.path())).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn an_upload_forgets_the_folder_so_a_restart_does_not_resume_into_it() {
    let (data, dir) = (tempfile::tempdir().unwrap(), two_file_site());
    let manager = open_manager(data.path()).await;
    manager
        .open_folder(folder(dir.path()), ImportGuard::default())
        .await
        .unwrap();
    let upload = FolderImport::new(
        "upload",
        vec![WorkspaceFile::text("index.html", "<p>up</p>")],
    );
    manager
        .import_files(upload, ImportGuard::default())
        .await
        .unwrap();
    write(&manager, "index.html", "<p>up 2</p>").await;
    drop(manager);
    let restarted = open_manager(data.path()).await;
    assert_eq!(
        restarted.resume_folder(folder(dir.path())).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn an_open_reports_skipped_entries_with_counts_and_at_most_64_lines() {
    let mut files: Vec<(String, String)> = (0..MAX_LISTED_SKIPS + 6)
        .map(|i| (format!("bin/tool{i:02}.exe"), "x".to_owned()))
        .collect();
    files.push(("index.html".into(), "<p>".into()));
    files.push(("data.json".into(), "\0binary".into()));
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(path, source)| (path.as_str(), source.as_str()))
        .collect();
    let dir = site(&borrowed);
    let data = tempfile::tempdir().unwrap();
    let outcome = open_manager(data.path())
        .await
        .open_folder(folder(dir.path()), ImportGuard::default())
        .await
        .unwrap();
    assert_eq!(outcome.skipped_count, MAX_LISTED_SKIPS + 7);
    assert_eq!(outcome.skipped.len(), MAX_LISTED_SKIPS);
    assert_eq!(
        outcome.skipped_by_reason["unsupported"],
        MAX_LISTED_SKIPS + 6
    );
    assert_eq!(outcome.skipped_by_reason["binary"], 1);
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(json["skippedByReason"]["binary"], 1);
}

#[test]
fn opening_a_missing_path_or_a_file_is_folder_not_found() {
    let dir = two_file_site();
    let missing = OsFolder::open(dir.path().join("nope")).unwrap_err();
    assert_eq!(missing.code, Code::WorkspaceFolderNotFound);
    assert!(!missing.retryable);
    assert_eq!(missing.details["reason"], "no such folder");
    assert!(
        missing.details["path"].as_str().unwrap().ends_with("nope"),
        "{}",
        missing.details
    );
    let file = OsFolder::open(dir.path().join("app.js")).unwrap_err();
    assert_eq!(file.code, Code::WorkspaceFolderNotFound);
    assert_eq!(file.details["reason"], "it is not a folder");
}
