//! Folder import, save and reload on real temporary directories, with injected faults for
//! what a root user cannot provoke (permission denied, a folder removed mid-save).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use live_code_editor::WorkspaceFile;
use live_code_editor::workspace::{
    FolderAdapter, FolderFs, FolderImport, FolderPermission, HeadlessPreviewBridge, ImportGuard,
    MAX_ASSET_FILE_BYTES, MAX_IMPORT_FILES, MAX_SCANNED_ENTRIES, MAX_TEXT_FILE_BYTES,
    ManagerOptions, MemoryWorkspaceRepository, OsFolder, OsFs, WorkspaceDocumentManager,
    WorkspaceErrorCode as Code, WorkspaceResult, WriteOptions,
};
use tokio::sync::Notify;

fn write(root: &Path, relative: &str, bytes: impl AsRef<[u8]>) {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
}

fn site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "index.html",
        "<link rel=stylesheet href=styles.css><h1>Site</h1>",
    );
    write(dir.path(), "styles.css", "h1 { color: teal; }");
    write(dir.path(), "app.js", "console.log(1);");
    write(dir.path(), "img/logo.png", [137, 80, 78, 71]);
    write(dir.path(), "notes/todo.md", "# todo");
    write(dir.path(), "tool.exe", [0, 1]);
    dir
}

async fn manager() -> Arc<WorkspaceDocumentManager> {
    let seed = vec![WorkspaceFile::text("index.html", "<p>seed</p>")];
    let manager = WorkspaceDocumentManager::open(
        seed,
        Arc::new(MemoryWorkspaceRepository::new()),
        Arc::new(HeadlessPreviewBridge::accept_all()),
        ManagerOptions::default(),
    )
    .await
    .unwrap();
    Arc::new(manager)
}

fn folder(dir: &Path) -> Arc<dyn FolderAdapter> {
    Arc::new(OsFolder::open(dir).unwrap())
}

fn read(root: &Path, relative: &str) -> String {
    fs::read_to_string(root.join(relative)).unwrap()
}

fn leftovers(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(".lce-tmp") {
                found.push(path);
            }
        }
    }
    found
}

#[tokio::test]
async fn open_folder_imports_supported_files_in_canonical_order() {
    let dir = site();
    let manager = manager().await;
    let outcome = manager
        .open_folder(folder(dir.path()), ImportGuard::at(Some(2)))
        .await
        .unwrap();
    assert_eq!(outcome.operation, "open");
    assert_eq!(outcome.revision, 3);
    assert_eq!(outcome.file_count, 5);
    assert_eq!(outcome.skipped, ["tool.exe · unsupported file type"]);
    assert!(outcome.folder.connected && outcome.folder.save_all_available);
    assert_eq!(outcome.folder.permission, FolderPermission::Granted);
    let paths: Vec<_> = manager
        .list_files()
        .await
        .into_iter()
        .map(|file| file.path)
        .collect();
    assert_eq!(
        paths,
        [
            "index.html",
            "styles.css",
            "app.js",
            "img/logo.png",
            "notes/todo.md"
        ]
    );
    let status = manager.status().await;
    assert!(!status.is_dirty);
    assert_eq!(
        status.folder.name.as_deref(),
        dir.path().file_name().unwrap().to_str()
    );
}

#[tokio::test]
async fn save_all_writes_dirty_files_and_deletions_then_reload_reads_them_back() {
    let dir = site();
    let manager = manager().await;
    manager
        .open_folder(folder(dir.path()), ImportGuard::default())
        .await
        .unwrap();
    manager
        .write_file("app.js", "console.log(2);", WriteOptions::default())
        .await
        .unwrap();
    manager
        .create_file("src/deep/new.js", "export const x = 1;", None)
        .await
        .unwrap();
    manager
        .rename_file("notes/todo.md", "docs/todo.md", None)
        .await
        .unwrap();
    manager.delete_file("styles.css", None).await.unwrap();
    let revision = manager.revision().await;

    let saved = manager.save_all(Some(revision)).await.unwrap();
    assert_eq!(
        saved.saved_paths,
        ["app.js", "docs/todo.md", "src/deep/new.js"]
    );
    assert_eq!(saved.deleted_paths, ["notes/todo.md", "styles.css"]);
    assert!(saved.clean);
    assert_eq!(saved.revision, revision, "saving does not change content");
    assert_eq!(read(dir.path(), "app.js"), "console.log(2);");
    assert_eq!(read(dir.path(), "src/deep/new.js"), "export const x = 1;");
    assert_eq!(read(dir.path(), "docs/todo.md"), "# todo");
    assert!(!dir.path().join("styles.css").exists());
    assert!(!dir.path().join("notes/todo.md").exists());
    assert!(
        leftovers(dir.path()).is_empty(),
        "no temporary files remain"
    );

    write(dir.path(), "app.js", "console.log('external');");
    let reloaded = manager
        .reload_folder(ImportGuard::at(Some(revision)))
        .await
        .unwrap();
    assert_eq!(reloaded.operation, "reload");
    assert_eq!(
        manager.read_file("app.js").await.unwrap().source,
        "console.log('external');"
    );
    assert!(!manager.status().await.is_dirty);
    assert_eq!(
        fs::read(dir.path().join("img/logo.png")).unwrap(),
        [137, 80, 78, 71],
        "assets are untouched"
    );
}

#[tokio::test]
async fn reload_rejects_a_stale_revision_and_an_empty_folder_without_touching_the_workspace() {
    let dir = site();
    let manager = manager().await;
    manager
        .open_folder(folder(dir.path()), ImportGuard::default())
        .await
        .unwrap();
    manager
        .write_file("app.js", "draft", WriteOptions::default())
        .await
        .unwrap();
    let error = manager
        .reload_folder(ImportGuard::at(Some(3)))
        .await
        .unwrap_err();
    assert_eq!(
        (error.code, error.details["currentRevision"].as_u64()),
        (Code::WorkspaceRevisionConflict, Some(4))
    );

    for entry in fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            fs::remove_dir_all(path).unwrap()
        } else {
            fs::remove_file(path).unwrap()
        }
    }
    write(dir.path(), "binary.bin", [0]);
    // Even a reload allowed to discard the draft keeps it when the folder has nothing to import.
    let error = manager
        .reload_folder(ImportGuard::default().discarding(true))
        .await
        .unwrap_err();
    assert_eq!(error.code, Code::WorkspaceNoSupportedFiles);
    assert_eq!(error.details["skippedCount"], 1);
    assert_eq!(
        manager.read_file("app.js").await.unwrap().source,
        "draft",
        "workspace kept"
    );
    assert!(manager.status().await.folder.connected, "link kept");
}

#[tokio::test]
async fn opening_an_empty_folder_keeps_the_workspace_and_the_previous_link() {
    let linked = site();
    let empty = tempfile::tempdir().unwrap();
    let manager = manager().await;
    manager
        .open_folder(folder(linked.path()), ImportGuard::default())
        .await
        .unwrap();
    let before = manager.status().await;
    let error = manager
        .open_folder(folder(empty.path()), ImportGuard::default())
        .await
        .unwrap_err();
    assert_eq!(error.code, Code::WorkspaceNoSupportedFiles);
    assert_eq!(
        error.message,
        "No supported HTML, CSS, JS, text, or preview asset files were found."
    );
    let after = manager.status().await;
    assert_eq!(after.revision, before.revision);
    assert_eq!(after.folder.name, before.folder.name);
}

#[tokio::test]
async fn the_scan_limit_counts_directories_at_the_edge_and_one_over() {
    for (directories, limited) in [
        (MAX_SCANNED_ENTRIES - 1, false),
        (MAX_SCANNED_ENTRIES, true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.html", "<p>");
        for index in 0..directories {
            fs::create_dir(dir.path().join(format!("d{index:04}"))).unwrap();
        }
        let import = OsFolder::open(dir.path()).unwrap().read().await.unwrap();
        assert_eq!(import.files.len(), 1);
        let expected: Vec<String> = if limited {
            vec![". · scan limit reached".into()]
        } else {
            vec![]
        };
        assert_eq!(import.skipped, expected, "{} entries", directories + 1);
    }
}

#[tokio::test]
async fn file_size_and_total_limits_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let text = usize::try_from(MAX_TEXT_FILE_BYTES).unwrap();
    let asset = usize::try_from(MAX_ASSET_FILE_BYTES).unwrap();
    write(dir.path(), "a-edge.txt", vec![b'a'; text]);
    write(dir.path(), "b-over.txt", vec![b'a'; text + 1]);
    write(dir.path(), "c1.png", vec![0; asset]);
    write(dir.path(), "c2.png", vec![0; asset]);
    write(dir.path(), "c3.png", vec![0; asset + 1]);
    write(dir.path(), "c4.png", vec![0; asset - text]);
    write(dir.path(), "d.txt", "x");
    let import = OsFolder::open(dir.path()).unwrap().read().await.unwrap();
    let paths: Vec<_> = import.files.iter().map(|file| file.path.as_str()).collect();
    assert_eq!(
        paths,
        ["a-edge.txt", "c1.png", "c2.png", "c4.png"],
        "exactly 12 MiB fits"
    );
    assert_eq!(
        import.skipped,
        [
            "b-over.txt · larger than 512 KB",
            "c3.png · larger than 4 MB",
            "d.txt · workspace limit reached"
        ]
    );
}

#[tokio::test]
async fn the_file_limit_stops_with_one_summary() {
    let dir = tempfile::tempdir().unwrap();
    for index in 0..=MAX_IMPORT_FILES {
        write(dir.path(), &format!("f{index:03}.txt"), "x");
    }
    let import = OsFolder::open(dir.path()).unwrap().read().await.unwrap();
    assert_eq!(import.files.len(), MAX_IMPORT_FILES);
    assert_eq!(
        import.skipped,
        [format!("f{MAX_IMPORT_FILES:03}.txt · file limit reached")]
    );
}

#[tokio::test]
async fn binary_text_and_normalized_duplicates_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "index.html", "<p>");
    write(dir.path(), "data.json", [0xff, 0x00, 0x12]);
    write(dir.path(), "a/b.txt", "one");
    write(dir.path(), r"a\b.txt", "two");
    let import = OsFolder::open(dir.path()).unwrap().read().await.unwrap();
    assert_eq!(
        import
            .files
            .iter()
            .filter(|file| file.path == "a/b.txt")
            .count(),
        1
    );
    assert!(
        import
            .skipped
            .contains(&"data.json · binary file".to_owned())
    );
    assert!(
        import
            .skipped
            .contains(&"a/b.txt · duplicate workspace path".to_owned())
    );
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_are_never_followed_out_of_the_folder() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.txt", "top secret");
    write(outside.path(), "dir/inner.css", "x{}");
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "index.html", "<p>");
    write(dir.path(), "real.css", "a{}");
    symlink(
        outside.path().join("secret.txt"),
        dir.path().join("leak.txt"),
    )
    .unwrap();
    symlink(outside.path().join("dir"), dir.path().join("linked")).unwrap();
    symlink(dir.path().join("real.css"), dir.path().join("alias.css")).unwrap();
    symlink(
        dir.path().join("missing.txt"),
        dir.path().join("dangling.txt"),
    )
    .unwrap();

    let import = OsFolder::open(dir.path()).unwrap().read().await.unwrap();
    let paths: Vec<_> = import.files.iter().map(|file| file.path.as_str()).collect();
    assert_eq!(paths, ["index.html", "alias.css", "real.css"]);
    assert!(
        import
            .files
            .iter()
            .all(|file| file.source() != Some("top secret"))
    );
    let mut skipped = import.skipped.clone();
    skipped.sort();
    assert_eq!(
        skipped,
        [
            "dangling.txt · symlink not followed",
            "leak.txt · symlink not followed",
            "linked · symlink not followed"
        ]
    );

    let adapter = OsFolder::open(dir.path()).unwrap();
    let error = adapter
        .write_file(&WorkspaceFile::text("linked/evil.css", "pwned"))
        .await
        .unwrap_err();
    assert_eq!(
        (error.code, error.details["reason"].as_str()),
        (Code::WorkspacePathInvalid, Some("not-a-directory"))
    );
    assert!(
        !outside.path().join("dir/evil.css").exists(),
        "nothing written through the link"
    );
    adapter.remove_file("linked/inner.css").await.unwrap_err();
    assert!(
        outside.path().join("dir/inner.css").exists(),
        "nothing deleted through the link"
    );
}

/// Which system call to break, and how.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fault {
    None,
    /// `check_writable` is refused (a read-only grant).
    ReadOnly,
    /// The n-th (0-based) `write_new` is refused by the OS.
    DenyWrite(usize),
    /// The n-th rename fails with an I/O error (disk failure).
    FailRename(usize),
    /// The root directory is removed right after the n-th rename.
    RemoveRootAfterRename(usize),
}

struct FaultFs {
    fault: Mutex<Fault>,
    root: PathBuf,
    writes: AtomicUsize,
    renames: AtomicUsize,
}

impl FaultFs {
    fn new(root: &Path, fault: Fault) -> Arc<Self> {
        Arc::new(Self {
            fault: Mutex::new(fault),
            root: root.to_path_buf(),
            writes: 0.into(),
            renames: 0.into(),
        })
    }

    fn fault(&self) -> Fault {
        *self.fault.lock().unwrap()
    }
}

impl FolderFs for FaultFs {
    fn check_writable(&self, dir: &Path) -> io::Result<()> {
        if self.fault() == Fault::ReadOnly {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        OsFs.check_writable(dir)
    }

    fn write_new(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let index = self.writes.fetch_add(1, Ordering::SeqCst);
        if self.fault() == Fault::DenyWrite(index) {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        OsFs.write_new(path, bytes)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let index = self.renames.fetch_add(1, Ordering::SeqCst);
        if self.fault() == Fault::FailRename(index) {
            return Err(io::Error::other("injected I/O error"));
        }
        OsFs.rename(from, to)?;
        if self.fault() == Fault::RemoveRootAfterRename(index) {
            fs::remove_dir_all(&self.root)?;
        }
        Ok(())
    }
}

async fn linked_with_fault(
    fault: Fault,
) -> (
    tempfile::TempDir,
    Arc<WorkspaceDocumentManager>,
    Arc<FaultFs>,
) {
    let dir = site();
    let fs = FaultFs::new(&fs::canonicalize(dir.path()).unwrap(), Fault::None);
    let manager = manager().await;
    manager
        .open_folder(
            Arc::new(OsFolder::with_fs(dir.path(), fs.clone()).unwrap()),
            ImportGuard::default(),
        )
        .await
        .unwrap();
    *fs.fault.lock().unwrap() = fault;
    (dir, manager, fs)
}

#[tokio::test]
async fn a_denied_permission_blocks_saving_and_keeps_everything_dirty() {
    let (dir, manager, _fs) = linked_with_fault(Fault::ReadOnly).await;
    manager
        .write_file("app.js", "unsaved", WriteOptions::default())
        .await
        .unwrap();
    let status = manager.status().await;
    assert_eq!(status.folder.permission, FolderPermission::Denied);
    assert!(!status.folder.save_all_available);
    let error = manager.save_all(None).await.unwrap_err();
    assert_eq!(error.code, Code::WorkspaceFolderPermissionDenied);
    assert!(error.retryable);
    assert_eq!(
        error.details,
        serde_json::json!({"operation": "save", "permission": "denied"})
    );
    assert_eq!(manager.status().await.dirty_paths, ["app.js"]);
    assert_eq!(read(dir.path(), "app.js"), "console.log(1);");
}

#[tokio::test]
async fn a_write_refused_mid_save_lists_completed_paths_and_keeps_the_rest_dirty() {
    let (dir, manager, _fs) = linked_with_fault(Fault::DenyWrite(1)).await;
    manager
        .write_file("app.js", "A", WriteOptions::default())
        .await
        .unwrap();
    manager
        .write_file("index.html", "<p>B</p>", WriteOptions::default())
        .await
        .unwrap();
    manager
        .write_file("styles.css", "C", WriteOptions::default())
        .await
        .unwrap();
    let error = manager.save_all(None).await.unwrap_err();
    assert_eq!(error.code, Code::WorkspaceFolderPermissionDenied);
    assert_eq!(
        error.details["completedPaths"],
        serde_json::json!(["app.js"])
    );
    assert_eq!(error.details["path"], "index.html");
    assert!(
        error
            .message
            .ends_with("Completed before the failure: app.js.")
    );
    assert_eq!(read(dir.path(), "app.js"), "A");
    assert_eq!(
        manager.status().await.dirty_paths,
        ["index.html", "styles.css"],
        "app.js was marked clean"
    );
    assert!(leftovers(dir.path()).is_empty());
}

#[tokio::test]
async fn a_failed_rename_leaves_the_original_file_whole() {
    let (dir, manager, _fs) = linked_with_fault(Fault::FailRename(0)).await;
    manager
        .write_file("app.js", "half", WriteOptions::default())
        .await
        .unwrap();
    let error = manager.save_all(None).await.unwrap_err();
    assert_eq!(error.code, Code::WorkspaceSideEffectUnknown);
    assert_eq!(error.details["path"], "app.js");
    assert_eq!(
        read(dir.path(), "app.js"),
        "console.log(1);",
        "the old content is intact"
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "the temporary file was removed"
    );
    assert_eq!(manager.status().await.dirty_paths, ["app.js"]);
}

#[tokio::test]
async fn a_folder_removed_mid_save_is_stale_and_unlinked_but_the_workspace_stays() {
    let (dir, manager, _fs) = linked_with_fault(Fault::RemoveRootAfterRename(0)).await;
    manager
        .write_file("app.js", "A", WriteOptions::default())
        .await
        .unwrap();
    manager
        .write_file("styles.css", "B", WriteOptions::default())
        .await
        .unwrap();
    let error = manager.save_all(None).await.unwrap_err();
    assert_eq!(error.code, Code::WorkspaceFolderStale);
    assert!(error.retryable);
    assert_eq!(error.details["operation"], "write");
    assert_eq!(
        error.details["completedPaths"],
        serde_json::json!(["app.js"])
    );
    assert!(!dir.path().exists(), "the root was not recreated");
    let status = manager.status().await;
    assert!(!status.folder.connected, "a stale folder is unlinked");
    assert_eq!(status.dirty_paths, ["styles.css"]);
    assert_eq!(manager.read_file("styles.css").await.unwrap().source, "B");
    assert_eq!(
        manager.save_all(None).await.unwrap_err().code,
        Code::WorkspaceFolderNotConnected
    );
}

#[tokio::test]
async fn a_vanished_folder_is_stale_before_saving_or_reloading() {
    let dir = site();
    let manager = manager().await;
    manager
        .open_folder(folder(dir.path()), ImportGuard::default())
        .await
        .unwrap();
    fs::remove_dir_all(dir.path()).unwrap();
    assert_eq!(
        manager.status().await.folder.permission,
        FolderPermission::Disconnected
    );
    let error = manager
        .reload_folder(ImportGuard::default())
        .await
        .unwrap_err();
    assert_eq!(error.code, Code::WorkspaceFolderStale);
    assert_eq!(
        error.message,
        "The connected folder is no longer available. Open the folder again to continue saving."
    );
    assert!(!manager.status().await.folder.connected);
    assert_eq!(
        manager.status().await.file_count,
        5,
        "the workspace is kept"
    );
}

#[tokio::test]
async fn deletes_are_idempotent_when_the_file_or_its_parent_is_gone() {
    let dir = site();
    let manager = manager().await;
    manager
        .open_folder(folder(dir.path()), ImportGuard::default())
        .await
        .unwrap();
    manager.delete_file("notes/todo.md", None).await.unwrap();
    manager.delete_file("app.js", None).await.unwrap();
    fs::remove_dir_all(dir.path().join("notes")).unwrap();
    fs::remove_file(dir.path().join("app.js")).unwrap();
    let saved = manager.save_all(None).await.unwrap();
    assert_eq!(saved.deleted_paths, ["app.js", "notes/todo.md"]);
    assert!(saved.clean);
}

#[tokio::test]
async fn disconnect_keeps_the_workspace_and_reset_needs_no_folder() {
    let dir = site();
    let manager = manager().await;
    manager
        .open_folder(folder(dir.path()), ImportGuard::default())
        .await
        .unwrap();
    let error = manager.reset(ImportGuard::default()).await.unwrap_err();
    assert_eq!(error.code, Code::WorkspaceFolderStateConflict);
    assert_eq!(
        error.details,
        serde_json::json!({"operation": "reset", "folderLinked": true})
    );
    assert_eq!(
        manager.save_checkpoint(None).await.unwrap_err().details["operation"],
        "checkpoint"
    );
    let status = manager.disconnect_folder().await;
    assert!(!status.connected);
    assert_eq!(manager.status().await.file_count, 5);
    manager.reset(ImportGuard::default()).await.unwrap();
    assert_eq!(manager.status().await.file_count, 1);
}

/// Delegates to an OS folder but pauses inside the first write until released.
struct PausingFolder {
    inner: OsFolder,
    started: Arc<Notify>,
    release: Arc<Notify>,
    paused: AtomicUsize,
}

#[async_trait]
impl FolderAdapter for PausingFolder {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn permission(&self) -> FolderPermission {
        self.inner.permission().await
    }

    async fn read(&self) -> WorkspaceResult<FolderImport> {
        self.inner.read().await
    }

    async fn write_file(&self, file: &WorkspaceFile) -> WorkspaceResult<()> {
        if self.paused.fetch_add(1, Ordering::SeqCst) == 0 {
            self.started.notify_one();
            self.release.notified().await;
        }
        self.inner.write_file(file).await
    }

    async fn remove_file(&self, path: &str) -> WorkspaceResult<()> {
        self.inner.remove_file(path).await
    }
}

#[tokio::test]
async fn edits_made_while_saving_stay_dirty_and_the_save_reports_the_conflict() {
    let dir = site();
    let manager = manager().await;
    let started = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let adapter = PausingFolder {
        inner: OsFolder::open(dir.path()).unwrap(),
        started: started.clone(),
        release: release.clone(),
        paused: 0.into(),
    };
    manager
        .open_folder(Arc::new(adapter), ImportGuard::default())
        .await
        .unwrap();
    manager
        .write_file("app.js", "saved", WriteOptions::default())
        .await
        .unwrap();
    let revision = manager.revision().await;
    let saving = tokio::spawn({
        let manager = Arc::clone(&manager);
        async move { manager.save_all(Some(revision)).await }
    });
    started.notified().await;
    manager
        .write_file("app.js", "typed during save", WriteOptions::default())
        .await
        .unwrap();
    release.notify_one();
    let error = saving.await.unwrap().unwrap_err();
    assert_eq!(error.code, Code::WorkspaceRevisionConflict);
    assert_eq!(error.details["operation"], "save");
    assert_eq!(
        error.details["completedPaths"],
        serde_json::json!(["app.js"])
    );
    assert_eq!(read(dir.path(), "app.js"), "saved");
    assert_eq!(
        manager.status().await.dirty_paths,
        ["app.js"],
        "the newer edit is still dirty"
    );
    let retry = manager.save_all(None).await.unwrap();
    assert!(retry.clean);
    assert_eq!(read(dir.path(), "app.js"), "typed during save");
}

#[tokio::test]
async fn installed_packages_are_not_imported_as_workspace_files() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "index.html", "<p>");
    write(dir.path(), "src/main.js", "import 'left-pad';");
    write(dir.path(), "node_modules/left-pad/package.json", "{}");
    write(
        dir.path(),
        "node_modules/left-pad/index.js",
        "export default 1;",
    );
    write(
        dir.path(),
        "src/node_modules/nested/index.js",
        "export default 2;",
    );
    let import = OsFolder::open(dir.path()).unwrap().read().await.unwrap();
    let paths: Vec<&str> = import.files.iter().map(|file| file.path.as_str()).collect();
    assert_eq!(paths, ["index.html", "src/main.js"]);
    assert!(import.skipped.is_empty(), "{:?}", import.skipped);
}

#[tokio::test]
async fn a_folder_offers_its_packages_to_the_preview_and_a_read_sees_new_installs() {
    use live_code_editor::preview::{PreviewOptions, compile_preview};

    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "index.html",
        "<script type=module src=main.js></script>",
    );
    write(
        dir.path(),
        "main.js",
        "import pad from 'left-pad';\npad();\n",
    );
    let folder = OsFolder::open(dir.path()).unwrap();
    let import = folder.read().await.unwrap();
    let compile = |folder: &OsFolder| {
        let options = PreviewOptions::export().with_packages(folder.packages().unwrap());
        compile_preview(&import.files, &options)
    };
    let before = compile(&folder);
    assert!(
        before.has_errors(),
        "not installed yet: {:?}",
        before.diagnostics
    );

    write(
        dir.path(),
        "node_modules/left-pad/package.json",
        r#"{"main":"index.js"}"#,
    );
    write(
        dir.path(),
        "node_modules/left-pad/index.js",
        "module.exports = () => 'padded';",
    );
    let same_read = folder.packages().unwrap();
    folder.read().await.unwrap();
    assert_ne!(
        folder.packages().unwrap(),
        same_read,
        "a read starts a new package cache"
    );
    let after = compile(&folder);
    assert!(after.diagnostics.is_empty(), "{:?}", after.diagnostics);
    assert!(after.html.contains("padded"));
}

#[test]
fn package_files_are_read_inside_the_folder_only_even_through_links() {
    use live_code_editor::preview::{FolderPackageFiles, PackageFiles};

    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.txt", "private key");
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "node_modules/.pnpm/a@1/node_modules/a/index.js",
        "export default 1;",
    );
    std::fs::create_dir_all(dir.path().join("node_modules/evil")).unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("node_modules/.pnpm/a@1/node_modules/a"),
        dir.path().join("node_modules/a"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        dir.path().join("node_modules/evil/index.js"),
    )
    .unwrap();
    let files = FolderPackageFiles::new(dir.path());
    assert_eq!(
        files.read("node_modules/a/index.js").as_deref(),
        Some("export default 1;")
    );
    assert_eq!(
        files.read("node_modules/evil/index.js"),
        None,
        "a link out of the folder"
    );
    assert_eq!(files.read("../secret.txt"), None);
}

#[test]
fn a_node_modules_linked_elsewhere_is_read_but_not_links_out_of_it() {
    use live_code_editor::preview::{FolderPackageFiles, PackageFiles};

    let store = tempfile::tempdir().unwrap();
    write(store.path(), "modules/a/index.js", "export default 1;");
    write(store.path(), "secret.txt", "private key");
    std::os::unix::fs::symlink(
        store.path().join("secret.txt"),
        store.path().join("modules/a/key.js"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        store.path().join("modules"),
        dir.path().join("node_modules"),
    )
    .unwrap();
    let files = FolderPackageFiles::new(dir.path());
    assert_eq!(
        files.read("node_modules/a/index.js").as_deref(),
        Some("export default 1;")
    );
    assert_eq!(
        files.read("node_modules/a/key.js"),
        None,
        "out of the linked node_modules"
    );
}

#[tokio::test]
async fn jsx_files_are_imported_as_javascript() {
    // Vite's react template and most React projects write their components as `.jsx`, which
    // the preview compiles; the reference's extension list lacked it, so they were skipped.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "index.html",
        "<script type=module src=src/main.jsx></script>",
    );
    write(dir.path(), "src/main.jsx", "export const view = <p>hi</p>;");
    let import = OsFolder::open(dir.path()).unwrap().read().await.unwrap();
    assert!(import.skipped.is_empty(), "{:?}", import.skipped);
    let main = import
        .files
        .iter()
        .find(|file| file.path == "src/main.jsx")
        .unwrap();
    assert_eq!(main.language, live_code_editor::Language::Javascript);
}
