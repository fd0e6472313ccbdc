//! The manager's folder operations: open, resume, import, reload and disconnect a folder, save
//! to it, and checkpoint without one. They are serialized by the folder lock and do their I/O
//! without holding the state lock, re-checking the revision they captured afterwards.

use std::sync::Arc;

use super::outcome::{disconnected_folder, folder_status};
use super::{
    FolderStatus, ImportGuard, ImportOutcome, Persist, ResumedWork, SaveOutcome, State,
    WorkspaceDocumentManager, check_expected, check_unsaved, unsaved_paths,
};
use crate::file::{FileContent, WorkspaceFile};
use crate::workspace::error::{
    MAX_DETAIL_UNSAVED_PATHS, WorkspaceError, WorkspaceErrorCode, WorkspaceResult,
};
use crate::workspace::folder::{FolderAdapter, FolderImport, FolderPermission, MAX_LISTED_SKIPS};
use crate::workspace::model::{Workspace, validate_path};

impl WorkspaceDocumentManager {
    /// Imports a folder and links it for saving. An empty or unsupported folder is rejected
    /// without touching the workspace or the current link, and so is any open over unsaved
    /// work unless the guard discards it (checked before the folder is read, and again before
    /// the replacement).
    pub async fn open_folder(
        &self,
        folder: Arc<dyn FolderAdapter>,
        guard: ImportGuard,
    ) -> WorkspaceResult<ImportOutcome> {
        let _folder_ops = self.folder_ops.lock().await;
        let captured = self.captured_revision("open", guard).await?;
        let import = folder.read().await?;
        self.replace_from_import("open", import, captured, Some(folder))
            .await
    }

    /// Links `folder` for saving *without* importing it, when the workspace's checkpoint was
    /// imported from that same folder ([`FolderAdapter::scope`]) and it holds unsaved work:
    /// a restart then keeps the edits (still dirty) instead of replacing them with the
    /// folder's content. Returns what was kept, or `None` (nothing linked) when there is
    /// nothing to resume; the caller then opens the folder as usual.
    ///
    /// The folder is read once (and the result dropped): that proves it is readable, and tells
    /// an adapter that tracks ambiguous writes that the disk was seen after the restart.
    pub async fn resume_folder(
        &self,
        folder: Arc<dyn FolderAdapter>,
    ) -> WorkspaceResult<Option<ResumedWork>> {
        let _folder_ops = self.folder_ops.lock().await;
        if !resumable(&*self.state.lock().await, folder.as_ref()) {
            return Ok(None);
        }
        folder.read().await?;
        let mut state = self.state.lock().await;
        // A reset may have run during the read (it does not take the folder lock).
        if !resumable(&state, folder.as_ref()) {
            return Ok(None);
        }
        let unsaved = unsaved_paths(&state.workspace);
        let resumed = ResumedWork {
            folder_name: folder.name().to_owned(),
            unsaved_count: unsaved.len(),
            unsaved_paths: unsaved.into_iter().take(MAX_DETAIL_UNSAVED_PATHS).collect(),
        };
        state.folder = Some(folder);
        state.resumed = Some(resumed.clone());
        Ok(Some(resumed))
    }

    /// Imports files read elsewhere (an upload list); unlinks any folder. Refused over unsaved
    /// work unless the guard discards it.
    pub async fn import_files(
        &self,
        import: FolderImport,
        guard: ImportGuard,
    ) -> WorkspaceResult<ImportOutcome> {
        let _folder_ops = self.folder_ops.lock().await;
        let captured = self.captured_revision("import", guard).await?;
        self.replace_from_import("import", import, captured, None)
            .await
    }

    /// Re-reads the linked folder and replaces the workspace; the revision captured before
    /// the read must still be current afterwards. Refused over unsaved work unless the guard
    /// discards it.
    pub async fn reload_folder(&self, guard: ImportGuard) -> WorkspaceResult<ImportOutcome> {
        let _folder_ops = self.folder_ops.lock().await;
        let captured = self.captured_revision("reload", guard).await?;
        let folder = self.linked_folder("reload").await?;
        self.require_granted(&folder, "reload").await?;
        let import = match folder.read().await {
            Ok(import) => import,
            Err(error) => return Err(self.folder_failed(&folder, error).await),
        };
        self.replace_from_import("reload", import, captured, Some(folder))
            .await
    }

    /// The current workspace and what reloading the linked folder would make of it, read from
    /// the folder now, changing nothing (for a person to review before the reload).
    /// Unlike the reload it does not check write permission (nor unlink a vanished folder):
    /// a preview only reads.
    pub async fn preview_reload_folder(&self) -> WorkspaceResult<(Workspace, Workspace)> {
        let folder = self.linked_folder("reload").await?;
        let import = folder.read().await?;
        let before = self.snapshot().await;
        let after = before.replaced_by(import.files)?;
        Ok((before, after))
    }

    /// Unlinks the folder and keeps the workspace.
    pub async fn disconnect_folder(&self) -> FolderStatus {
        self.state.lock().await.folder = None;
        disconnected_folder()
    }

    /// Writes dirty files, then pending deletions, in path order to the linked folder. Each
    /// path is marked saved right after its write; the workspace is clean only when all
    /// succeed and no edit happened meanwhile (else `WORKSPACE_REVISION_CONFLICT`). A failure
    /// lists the completed paths so a retry can be scoped.
    pub async fn save_all(&self, expected_revision: Option<u64>) -> WorkspaceResult<SaveOutcome> {
        let _folder_ops = self.folder_ops.lock().await;
        let (folder, revision, writes, deletions) = {
            let state = self.state.lock().await;
            let ws = &state.workspace;
            check_expected(expected_revision, ws, Some("save"))?;
            let folder = state
                .folder
                .clone()
                .ok_or_else(|| WorkspaceError::folder_not_connected("save"))?;
            let dirty = ws.dirty_paths();
            let writes: Vec<Arc<WorkspaceFile>> = ws
                .shared_files()
                .iter()
                .filter(|file| dirty.contains(&file.path))
                .cloned()
                .collect();
            (
                folder,
                ws.revision(),
                sorted_by_path(writes),
                ws.pending_deletions(),
            )
        };
        self.require_granted(&folder, "save").await?;
        let mut completed = Completed::default();
        for file in writes {
            if let Err(error) = folder.write_file(&file).await {
                return Err(self.save_failed(&folder, error, &completed).await);
            }
            self.mark_saved(&file.path.clone(), Some(file), &mut completed.saved)
                .await;
        }
        for path in deletions {
            if let Err(error) = folder.remove_file(&path).await {
                return Err(self.save_failed(&folder, error, &completed).await);
            }
            self.mark_saved(&path, None, &mut completed.deleted).await;
        }
        let state = self.state.lock().await;
        let current = state.workspace.revision();
        if current != revision {
            return Err(
                WorkspaceError::revision_conflict(revision, current, Some("save"))
                    .with_detail("completedPaths", completed.paths().into()),
            );
        }
        Ok(self.save_outcome(&state, "save", completed))
    }

    /// Writes one text file to the linked folder and marks only that path saved once the write
    /// succeeded. It follows [`save_all`](Self::save_all)'s rules: the revision guard, a
    /// granted folder, the written content becomes the path's checkpoint (an edit made during
    /// the write stays dirty) and the revision does not move. An explicit save of one file
    /// writes it even when it is clean, so a file changed or removed outside is restored.
    pub async fn save_file(
        &self,
        raw_path: &str,
        expected_revision: Option<u64>,
    ) -> WorkspaceResult<SaveOutcome> {
        let path = validate_path(raw_path)?;
        let _folder_ops = self.folder_ops.lock().await;
        let (folder, file) = {
            let state = self.state.lock().await;
            let ws = &state.workspace;
            check_expected(expected_revision, ws, Some("save"))?;
            let folder = state
                .folder
                .clone()
                .ok_or_else(|| WorkspaceError::folder_not_connected("save"))?;
            (folder, text_file(ws, &path, "save")?)
        };
        self.require_granted(&folder, "save").await?;
        let mut completed = Completed::default();
        if let Err(error) = folder.write_file(&file).await {
            return Err(self.save_failed(&folder, error, &completed).await);
        }
        self.mark_saved(&path, Some(file), &mut completed.saved)
            .await;
        let state = self.state.lock().await;
        Ok(self.save_outcome(&state, "save", completed))
    }

    /// Marks `path` saved when the workspace file there holds exactly `bytes`, which a folder
    /// read-back confirmed are on disk (reconciling a save whose outcome was unknown); returns
    /// whether it did. A file edited since keeps its dirty state. The revision does not move.
    pub async fn confirm_saved(&self, path: &str, bytes: &[u8]) -> bool {
        let mut state = self.state.lock().await;
        let held = state
            .workspace
            .shared_files()
            .iter()
            .find(|file| file.path == path && file_bytes(file) == bytes)
            .cloned();
        let Some(file) = held else {
            return false;
        };
        let next = state.workspace.mark_path_saved(path, Some(file));
        self.commit(&mut state, next, Persist::Delta).await;
        true
    }

    /// The linked folder, if any (to read a file back through the same adapter saves use).
    pub async fn folder_adapter(&self) -> Option<Arc<dyn FolderAdapter>> {
        self.state.lock().await.folder.clone()
    }

    /// The packages installed in the linked folder, for the preview's bare imports (see
    /// [`FolderAdapter::packages`]); `None` without a folder.
    pub async fn packages(&self) -> Option<crate::preview::Packages> {
        self.folder_adapter().await?.packages()
    }

    /// Marks the current state clean without writing a folder. Refused while a folder is linked.
    pub async fn save_checkpoint(
        &self,
        expected_revision: Option<u64>,
    ) -> WorkspaceResult<SaveOutcome> {
        let mut state = self.state.lock().await;
        check_expected(expected_revision, &state.workspace, Some("checkpoint"))?;
        if state.folder.is_some() {
            return Err(WorkspaceError::folder_state_conflict("checkpoint"));
        }
        let completed = Completed {
            saved: state.workspace.dirty_paths(),
            deleted: state.workspace.pending_deletions(),
        };
        let next = state.workspace.mark_all_saved();
        self.commit(&mut state, next, Persist::Delta).await;
        Ok(self.save_outcome(&state, "checkpoint", completed))
    }

    fn save_outcome(
        &self,
        state: &State,
        operation: &'static str,
        completed: Completed,
    ) -> SaveOutcome {
        let ws = &state.workspace;
        SaveOutcome {
            operation,
            revision: ws.revision(),
            active_path: ws.active_path().to_owned(),
            saved_paths: completed.saved,
            deleted_paths: completed.deleted,
            clean: !ws.is_dirty(),
            storage: state.storage.clone(),
        }
    }

    /// The revision an import is based on, after its guard's revision and unsaved-work checks.
    async fn captured_revision(
        &self,
        operation: &str,
        guard: ImportGuard,
    ) -> WorkspaceResult<Captured> {
        let state = self.state.lock().await;
        check_expected(guard.expected_revision, &state.workspace, None)?;
        check_unsaved(&state.workspace, operation, guard)?;
        Ok(Captured {
            revision: state.workspace.revision(),
            discard_changes: guard.discard_changes,
        })
    }

    async fn linked_folder(&self, operation: &str) -> WorkspaceResult<Arc<dyn FolderAdapter>> {
        self.state
            .lock()
            .await
            .folder
            .clone()
            .ok_or_else(|| WorkspaceError::folder_not_connected(operation))
    }

    /// Fails unless the folder grants writes; a vanished folder is stale and gets unlinked.
    async fn require_granted(
        &self,
        folder: &Arc<dyn FolderAdapter>,
        operation: &str,
    ) -> WorkspaceResult<()> {
        match folder.permission().await {
            FolderPermission::Granted => Ok(()),
            FolderPermission::Disconnected => {
                let error = WorkspaceError::folder_stale(
                    operation,
                    folder.name(),
                    "the folder no longer exists",
                );
                Err(self.folder_failed(folder, error).await)
            }
            other => Err(WorkspaceError::folder_permission_denied(
                operation,
                other.as_str(),
            )),
        }
    }

    /// Unlinks `folder` when the error says it vanished; returns the error.
    async fn folder_failed(
        &self,
        folder: &Arc<dyn FolderAdapter>,
        error: WorkspaceError,
    ) -> WorkspaceError {
        if error.code == WorkspaceErrorCode::WorkspaceFolderStale {
            let mut state = self.state.lock().await;
            if state
                .folder
                .as_ref()
                .is_some_and(|linked| Arc::ptr_eq(linked, folder))
            {
                state.folder = None;
            }
        }
        error
    }

    async fn save_failed(
        &self,
        folder: &Arc<dyn FolderAdapter>,
        error: WorkspaceError,
        completed: &Completed,
    ) -> WorkspaceError {
        let mut error = self
            .folder_failed(folder, error)
            .await
            .with_detail("completedPaths", completed.paths().into());
        if !completed.is_empty() {
            error.message = format!(
                "{} Completed before the failure: {}.",
                error.message,
                completed.paths().join(", ")
            );
        }
        error
    }

    async fn mark_saved(
        &self,
        path: &str,
        written: Option<Arc<WorkspaceFile>>,
        into: &mut Vec<String>,
    ) {
        let mut state = self.state.lock().await;
        let next = state.workspace.mark_path_saved(path, written);
        self.commit(&mut state, next, Persist::Delta).await;
        into.push(path.to_owned());
    }

    async fn replace_from_import(
        &self,
        operation: &'static str,
        import: FolderImport,
        captured: Captured,
        link: Option<Arc<dyn FolderAdapter>>,
    ) -> WorkspaceResult<ImportOutcome> {
        if import.files.is_empty() {
            return Err(WorkspaceError::no_supported_files(
                &import.root_name,
                import.skipped.len(),
            ));
        }
        let (outcome, folder) = {
            let mut state = self.state.lock().await;
            let current = state.workspace.revision();
            if current != captured.revision {
                return Err(WorkspaceError::revision_conflict(
                    captured.revision,
                    current,
                    Some(operation),
                ));
            }
            // Marks (saves) never move the revision, so the dirty state is checked again.
            check_unsaved(
                &state.workspace,
                operation,
                ImportGuard::default().discarding(captured.discard_changes),
            )?;
            let next = state.workspace.replaced_by(import.files)?;
            state.history.clear();
            state.folder_scope = link.as_ref().map(|folder| folder.scope());
            state.folder = link;
            state.resumed = None;
            self.commit(&mut state, next, Persist::Replace).await;
            let ws = &state.workspace;
            let skipped_count = import.skipped.len();
            let mut skipped = import.skipped;
            skipped.truncate(MAX_LISTED_SKIPS);
            let outcome = ImportOutcome {
                operation,
                revision: ws.revision(),
                active_path: ws.active_path().to_owned(),
                file_count: ws.files().len(),
                skipped,
                skipped_count,
                skipped_by_reason: import.skip_counts,
                folder: disconnected_folder(),
                preview: self.acks.current(),
                storage: state.storage.clone(),
            };
            (outcome, state.folder.clone())
        };
        let mut outcome = outcome;
        outcome.folder = folder_status(folder.as_deref()).await;
        outcome.preview = self
            .acks
            .wait_for_committed(outcome.revision, self.ack_timeout)
            .await?;
        Ok(outcome)
    }
}

/// What an import captured before its I/O: the revision it must still find, and whether it
/// may discard unsaved work.
#[derive(Debug, Clone, Copy)]
struct Captured {
    revision: u64,
    discard_changes: bool,
}

/// The paths a save wrote and deleted, in the order it did.
#[derive(Debug, Default)]
struct Completed {
    saved: Vec<String>,
    deleted: Vec<String>,
}

impl Completed {
    fn paths(&self) -> Vec<String> {
        self.saved.iter().chain(&self.deleted).cloned().collect()
    }

    fn is_empty(&self) -> bool {
        self.saved.is_empty() && self.deleted.is_empty()
    }
}

/// Whether the workspace holds unsaved work whose checkpoint came from `folder`.
fn resumable(state: &State, folder: &dyn FolderAdapter) -> bool {
    state.folder_scope.as_deref() == Some(folder.scope().as_str())
        && !unsaved_paths(&state.workspace).is_empty()
}

/// The text file at `path` (an asset is a type conflict).
fn text_file(
    workspace: &Workspace,
    path: &str,
    operation: &str,
) -> WorkspaceResult<Arc<WorkspaceFile>> {
    let file = workspace
        .shared_files()
        .iter()
        .find(|file| file.path == path)
        .ok_or_else(|| WorkspaceError::file_not_found(path, operation))?;
    if file.is_asset() {
        return Err(WorkspaceError::file_type_conflict(
            path, operation, "asset", "text",
        ));
    }
    Ok(Arc::clone(file))
}

/// The bytes a folder write of `file` puts on disk.
fn file_bytes(file: &WorkspaceFile) -> &[u8] {
    match &file.content {
        FileContent::Text { source } => source.as_bytes(),
        FileContent::Asset { bytes, .. } => bytes,
    }
}

fn sorted_by_path(mut files: Vec<Arc<WorkspaceFile>>) -> Vec<Arc<WorkspaceFile>> {
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex as StdMutex;

    use async_trait::async_trait;

    use super::*;
    use crate::workspace::bridge::HeadlessPreviewBridge;
    use crate::workspace::manager::{ManagerOptions, WriteOptions};
    use crate::workspace::repository::MemoryWorkspaceRepository;

    /// A folder in memory that records writes and refuses the paths in `fail`.
    #[derive(Default)]
    struct MemoryFolder {
        written: StdMutex<Vec<String>>,
        fail: StdMutex<Vec<String>>,
    }

    impl MemoryFolder {
        fn written(&self) -> Vec<String> {
            self.written.lock().unwrap().clone()
        }
    }

    #[async_trait]
    impl FolderAdapter for MemoryFolder {
        fn name(&self) -> &str {
            "memory"
        }

        async fn permission(&self) -> FolderPermission {
            FolderPermission::Granted
        }

        async fn read(&self) -> WorkspaceResult<FolderImport> {
            Ok(FolderImport {
                root_name: "memory".to_owned(),
                files: vec![
                    WorkspaceFile::text("index.html", "<p>one</p>"),
                    WorkspaceFile::text("app.js", "let a = 1;"),
                    WorkspaceFile::asset("logo.png", vec![1, 2, 3]),
                ],
                ..FolderImport::default()
            })
        }

        async fn write_file(&self, file: &WorkspaceFile) -> WorkspaceResult<()> {
            if self.fail.lock().unwrap().contains(&file.path) {
                return Err(WorkspaceError::folder_io_failed(
                    "write", &file.path, "injected",
                ));
            }
            self.written.lock().unwrap().push(file.path.clone());
            Ok(())
        }

        async fn remove_file(&self, _path: &str) -> WorkspaceResult<()> {
            Ok(())
        }
    }

    async fn linked() -> (WorkspaceDocumentManager, Arc<MemoryFolder>) {
        let manager = WorkspaceDocumentManager::open(
            vec![WorkspaceFile::text("index.html", "<p>seed</p>")],
            Arc::new(MemoryWorkspaceRepository::new()),
            Arc::new(HeadlessPreviewBridge::accept_all()),
            ManagerOptions::default(),
        )
        .await
        .unwrap();
        let folder = Arc::new(MemoryFolder::default());
        let adapter: Arc<dyn FolderAdapter> = folder.clone();
        manager
            .open_folder(adapter, ImportGuard::default())
            .await
            .unwrap();
        (manager, folder)
    }

    async fn edit(manager: &WorkspaceDocumentManager, path: &str, source: &str) {
        manager
            .write_file(path, source, WriteOptions::default())
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn save_file_writes_one_path_and_marks_only_it_clean() {
        let (manager, folder) = linked().await;
        edit(&manager, "index.html", "<p>two</p>").await;
        edit(&manager, "app.js", "let a = 2;").await;
        let revision = manager.revision().await;
        let saved = manager.save_file("./app.js", Some(revision)).await.unwrap();
        assert_eq!(saved.operation, "save");
        assert_eq!(saved.saved_paths, ["app.js"]);
        assert_eq!(
            saved.revision, revision,
            "saving does not move the revision"
        );
        assert!(!saved.clean);
        assert_eq!(folder.written(), ["app.js"]);
        assert_eq!(manager.status().await.dirty_paths, ["index.html"]);
    }

    #[tokio::test]
    async fn save_file_writes_a_clean_file_again() {
        let (manager, folder) = linked().await;
        let saved = manager.save_file("index.html", None).await.unwrap();
        assert_eq!(saved.saved_paths, ["index.html"]);
        assert!(saved.clean);
        assert_eq!(folder.written(), ["index.html"]);
    }

    #[tokio::test]
    async fn save_file_refuses_before_writing() {
        let (manager, folder) = linked().await;
        edit(&manager, "index.html", "<p>two</p>").await;
        let revision = manager.revision().await;
        let stale = manager.save_file("index.html", Some(revision - 1)).await;
        assert_eq!(
            stale.unwrap_err().code,
            WorkspaceErrorCode::WorkspaceRevisionConflict
        );
        let asset = manager.save_file("logo.png", None).await.unwrap_err();
        assert_eq!(asset.code, WorkspaceErrorCode::WorkspaceFileTypeConflict);
        let missing = manager.save_file("gone.css", None).await.unwrap_err();
        assert_eq!(missing.code, WorkspaceErrorCode::WorkspaceFileNotFound);
        let invalid = manager.save_file("../x.css", None).await.unwrap_err();
        assert_eq!(invalid.code, WorkspaceErrorCode::WorkspacePathInvalid);
        assert!(folder.written().is_empty());
        manager.disconnect_folder().await;
        let unlinked = manager.save_file("index.html", None).await.unwrap_err();
        assert_eq!(
            unlinked.code,
            WorkspaceErrorCode::WorkspaceFolderNotConnected
        );
        assert_eq!(manager.status().await.dirty_paths, ["index.html"]);
    }

    #[tokio::test]
    async fn a_failed_save_file_keeps_the_path_dirty() {
        let (manager, folder) = linked().await;
        edit(&manager, "app.js", "let a = 3;").await;
        folder.fail.lock().unwrap().push("app.js".to_owned());
        let error = manager.save_file("app.js", None).await.unwrap_err();
        assert_eq!(error.code, WorkspaceErrorCode::WorkspaceSideEffectUnknown);
        assert_eq!(error.details["completedPaths"], serde_json::json!([]));
        assert_eq!(manager.status().await.dirty_paths, ["app.js"]);
    }

    #[tokio::test]
    async fn confirm_saved_marks_clean_only_the_bytes_the_workspace_holds() {
        let (manager, _folder) = linked().await;
        edit(&manager, "app.js", "let a = 4;").await;
        let revision = manager.revision().await;
        assert!(!manager.confirm_saved("app.js", b"let a = 1;").await);
        assert!(!manager.confirm_saved("other.js", b"let a = 4;").await);
        assert_eq!(manager.status().await.dirty_paths, ["app.js"]);
        assert!(manager.confirm_saved("app.js", b"let a = 4;").await);
        let status = manager.status().await;
        assert!(status.dirty_paths.is_empty());
        assert_eq!(status.revision, revision);
    }

    #[tokio::test]
    async fn folder_adapter_is_the_linked_folder() {
        let (manager, _folder) = linked().await;
        let adapter = manager.folder_adapter().await.expect("linked");
        assert_eq!(adapter.scope(), "memory");
        let bytes = adapter.read_file("app.js", 100).await.unwrap();
        assert_eq!(bytes, b"let a = 1;");
        let cut = adapter.read_file("app.js", 3).await.unwrap();
        assert_eq!(cut, b"let");
        let missing = adapter.read_file("nope.js", 10).await.unwrap_err();
        assert_eq!(missing.code, WorkspaceErrorCode::WorkspaceFileNotFound);
        manager.disconnect_folder().await;
        assert!(manager.folder_adapter().await.is_none());
    }
}
