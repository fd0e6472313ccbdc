//! The editor's two clocks.
//!
//! * **Workspace clock** (`workspaceRevision`): the editor's own [`WorkspaceDocumentManager`]
//!   (files, dirty paths, folder link, persistence). Its preview bridge accepts every revision,
//!   because the editor's preview follows the document clock instead.
//! * **Document clock** (`documentRevision`): what the preview shows — the active path, the
//!   workspace files and the selected scenario. It advances on every document mutation and
//!   whenever the workspace files or active path change underneath (a folder import), never on
//!   a save (saving changes no content). Each document revision is published to the preview:
//!   a browser page attached with `surface=editor` acknowledges it from its iframe; without one
//!   it is acknowledged headlessly by compiling it.

use std::future::Future;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use live_code_editor::WorkspaceFile;
use live_code_editor::file::{FileContent, Language};
use live_code_editor::preview::IncrementalPreviewCompiler;
use live_code_editor::workspace::bridge::{
    DEFAULT_PREVIEW_ACK_TIMEOUT, HeadlessPreviewBridge, PreviewAcks, PreviewSnapshot, PreviewState,
    PreviewStatus,
};
use live_code_editor::workspace::manager::{
    FileSummary, FolderStatus, ManagerOptions, WorkspaceDocumentManager, WriteOptions,
};
use live_code_editor::workspace::model::validate_path;
use live_code_editor::workspace::{Occurrence, WorkspaceError, WorkspaceErrorCode};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::Mutex;

use super::saves::EditorSaves;
use super::scenarios::{Scenario, seed_files};
use crate::kit::bridge::PreviewViewers;
use crate::kit::events::{EventHub, StudioEvent};
use crate::kit::stylesheet_run::StylesheetRun;
use crate::surfaces::SurfaceDeps;

/// Workspace id of the editor's files in the studio's workspace database.
pub(crate) const EDITOR_WORKSPACE_ID: &str = "editor";
/// `details.reason` of a reset refused because the scenario has no example for the open
/// file's language (the error code is `WORKSPACE_FILE_TYPE_CONFLICT`).
pub(crate) const EDITOR_SCENARIO_EXAMPLE_MISSING: &str = "EDITOR_SCENARIO_EXAMPLE_MISSING";

/// The two clocks and the acknowledged preview: what every preview-aware `editor.*` result
/// carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditorContext {
    /// The open document's path.
    pub active_path: String,
    /// The workspace (files) clock.
    pub workspace_revision: u64,
    /// The document (preview) clock.
    pub document_revision: u64,
    /// The preview's state; in mutation results, the acknowledgement of `documentRevision`.
    pub preview: PreviewState,
    /// `sqlite`, or `memory` when the editor's files are not persisted.
    pub storage_mode: String,
    /// Why storage fell back to memory (bounded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage_error: Option<String>,
}

/// What a document revision shows.
#[derive(Debug, Clone)]
struct Document {
    revision: u64,
    scenario: Scenario,
    active_path: String,
    workspace_revision: u64,
    files: Vec<Arc<WorkspaceFile>>,
}

/// The document a preview revision renders (served by `/editor/preview/{revision}`).
#[derive(Debug, Clone)]
pub struct PreviewDocument {
    /// Its document revision.
    pub revision: u64,
    /// The scenario passed to it as data.
    pub scenario: Scenario,
    /// The workspace files it renders.
    pub files: Vec<Arc<WorkspaceFile>>,
}

/// The Live Code Editor surface: its workspace, its document clock and its preview viewers.
pub struct EditorSurface {
    manager: Arc<WorkspaceDocumentManager>,
    document: Mutex<Document>,
    /// Serializes document mutations (guard check, change, new revision).
    ops: Mutex<()>,
    acks: PreviewAcks,
    viewers: PreviewViewers,
    /// Compiles revisions no page renders (headless acknowledgements), incrementally.
    headless: Arc<StdMutex<IncrementalPreviewCompiler>>,
    hub: EventHub,
    ack_timeout: Duration,
    /// Durable records of `editor.saveFile` / `editor.saveAll`.
    saves: EditorSaves,
    /// The published document revisions that differ in stylesheets only (and not in
    /// scenario), for live stylesheet edits.
    stylesheet_run: StylesheetRun,
    /// The scenario of the last published revision.
    published_scenario: StdMutex<Option<Scenario>>,
}

impl std::fmt::Debug for EditorSurface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EditorSurface")
            .field("preview", &self.acks.current())
            .field("viewers", &self.viewers.count())
            .finish_non_exhaustive()
    }
}

impl EditorSurface {
    /// Opens the editor: its files live in the studio's workspace database under
    /// `EDITOR_WORKSPACE_ID` (memory mode when the database cannot be opened).
    pub async fn open(deps: &SurfaceDeps) -> Result<Arc<Self>, String> {
        let repository =
            crate::kit::repository::open_repository(&deps.data_dir, EDITOR_WORKSPACE_ID).await;
        let manager = WorkspaceDocumentManager::open(
            seed_files(),
            repository,
            Arc::new(HeadlessPreviewBridge::accept_all()),
            ManagerOptions::default(),
        )
        .await
        .map_err(|e| e.message)?;
        Ok(Self::with_manager(
            Arc::new(manager),
            deps.hub.clone(),
            DEFAULT_PREVIEW_ACK_TIMEOUT,
            EditorSaves::new(&deps.saves),
        )
        .await)
    }

    /// An editor over `manager`, waiting `ack_timeout` for each preview acknowledgement and
    /// keeping its save records in `saves`.
    pub async fn with_manager(
        manager: Arc<WorkspaceDocumentManager>,
        hub: EventHub,
        ack_timeout: Duration,
        saves: EditorSaves,
    ) -> Arc<Self> {
        let workspace = manager.snapshot().await;
        let document = Document {
            revision: 1,
            scenario: Scenario::DEFAULT,
            active_path: workspace.active_path().to_owned(),
            workspace_revision: workspace.revision(),
            files: workspace.shared_files().to_vec(),
        };
        let surface = Arc::new(Self {
            manager,
            acks: PreviewAcks::new(document.revision),
            document: Mutex::new(document.clone()),
            ops: Mutex::new(()),
            viewers: PreviewViewers::default(),
            headless: Arc::default(),
            hub,
            ack_timeout,
            saves,
            stylesheet_run: StylesheetRun::default(),
            published_scenario: StdMutex::new(None),
        });
        surface.publish_preview(&document);
        surface
    }

    /// The editor's workspace manager (files, folder link, saves).
    pub fn manager(&self) -> &Arc<WorkspaceDocumentManager> {
        &self.manager
    }

    /// The durable records of the save tools.
    pub fn saves(&self) -> &EditorSaves {
        &self.saves
    }

    /// Browser tabs rendering this surface's preview.
    pub fn viewers(&self) -> &PreviewViewers {
        &self.viewers
    }

    /// The published revisions a running preview can take by swapping stylesheets.
    pub fn stylesheet_run(&self) -> &StylesheetRun {
        &self.stylesheet_run
    }

    /// The document clock's acknowledgement channel.
    pub fn preview_acks(&self) -> &PreviewAcks {
        &self.acks
    }

    /// How long mutations wait for the preview.
    pub fn ack_timeout(&self) -> Duration {
        self.ack_timeout
    }

    /// The current clocks and preview state (first catching the document up with the
    /// workspace, so both clocks describe the same state).
    pub async fn result_context(&self) -> EditorContext {
        let document = self.sync(false).await;
        self.context_of(&document, self.acks.current()).await
    }

    /// Catches the document up with the workspace and tells pages what changed; call after
    /// any change made through [`Self::manager`] (saves, folder imports).
    pub async fn publish_change(&self) {
        let _ops = self.ops.lock().await;
        self.sync(false).await;
        self.announce("workspace").await;
    }

    /// The selected scenario.
    pub async fn scenario(&self) -> Scenario {
        self.document.lock().await.scenario
    }

    /// The document `revision` renders, when it is the current one.
    pub async fn preview_document(&self, revision: u64) -> Result<PreviewDocument, u64> {
        let document = self.document.lock().await;
        if document.revision != revision {
            return Err(document.revision);
        }
        Ok(PreviewDocument {
            revision,
            scenario: document.scenario,
            files: document.files.clone(),
        })
    }

    /// Reports the preview's outcome for `revision`; stale revisions are ignored (`false`).
    pub async fn acknowledge_preview(&self, revision: u64, status: PreviewStatus) -> bool {
        let accepted = self.acks.acknowledge(revision, status);
        if accepted {
            self.announce("preview").await;
        }
        accepted
    }

    /// The status `editor.getStatus` reports.
    pub async fn status(&self) -> EditorStatus {
        let context = self.result_context().await;
        let status = self.manager.status().await;
        EditorStatus {
            scenario: self.scenario().await,
            scenarios: Scenario::ALL.to_vec(),
            file_count: status.file_count,
            dirty_paths: status.dirty_paths,
            pending_deletions: status.pending_deletions,
            is_dirty: status.is_dirty,
            folder: status.folder,
            browser_attached: self.viewers.count() > 0,
            context,
        }
    }

    /// The listing `editor.listFiles` reports.
    pub async fn list_files(&self) -> EditorFileList {
        let context = self.result_context().await;
        let files = self.manager.list_files().await;
        let dirty_paths = files
            .iter()
            .filter(|file| file.dirty)
            .map(|file| file.path.clone())
            .collect();
        EditorFileList {
            context,
            dirty_paths,
            files,
        }
    }

    /// The open document `editor.getDocument` reports.
    pub async fn document(&self) -> Result<EditorDocument, WorkspaceError> {
        let document = self.sync(false).await;
        let file = document
            .files
            .iter()
            .find(|file| file.path == document.active_path)
            .ok_or_else(|| WorkspaceError::file_not_found(&document.active_path, "read"))?;
        let source = text_source(file, "read")?.to_owned();
        let dirty = self
            .manager
            .list_files()
            .await
            .iter()
            .any(|summary| summary.path == file.path && summary.dirty);
        Ok(EditorDocument {
            language: file.language,
            source,
            scenario: document.scenario,
            dirty,
            context: self.context_of(&document, self.acks.current()).await,
        })
    }

    /// Opens a text file as the document and waits for its preview revision.
    pub async fn open_file(&self, raw_path: &str) -> Result<DocumentOutcome, WorkspaceError> {
        let path = validate_path(raw_path)?;
        self.mutate("open", None, |_| async {
            let workspace = self.manager.snapshot().await;
            let file = workspace
                .file(&path)
                .ok_or_else(|| WorkspaceError::file_not_found(&path, "open"))?;
            text_source(file, "open")?;
            self.manager.open_file(&path, None).await.map(drop)
        })
        .await
    }

    /// Replaces the document's source (never executed by the host).
    pub async fn set_document(
        &self,
        source: &str,
        expected: Option<u64>,
    ) -> Result<DocumentOutcome, WorkspaceError> {
        self.mutate("setDocument", expected, |document| async move {
            self.write_active(&document.active_path, source).await
        })
        .await
    }

    /// A bounded literal patch of the document (same limits as `workspace.applyPatch`).
    pub async fn apply_patch(
        &self,
        search: &str,
        replace: &str,
        occurrence: Occurrence,
        expected: Option<u64>,
    ) -> Result<DocumentOutcome, WorkspaceError> {
        self.mutate("applyPatch", expected, |document| async move {
            applied(
                self.manager
                    .apply_patch(&document.active_path, search, replace, occurrence, None)
                    .await,
            )
        })
        .await
    }

    /// Selects the scenario passed to the preview.
    pub async fn set_scenario(
        &self,
        scenario: Scenario,
        expected: Option<u64>,
    ) -> Result<DocumentOutcome, WorkspaceError> {
        self.mutate("setScenario", expected, |_| async move {
            self.document.lock().await.scenario = scenario;
            Ok(())
        })
        .await
    }

    /// Restores the document's source to the selected scenario's example for its language.
    pub async fn reset_document(
        &self,
        expected: Option<u64>,
    ) -> Result<DocumentOutcome, WorkspaceError> {
        self.mutate("resetDocument", expected, |document| async move {
            let language = Language::from_path(&document.active_path);
            let example = document
                .scenario
                .example(language)
                .ok_or_else(|| missing_example(&document.active_path, document.scenario))?;
            self.write_active(&document.active_path, example).await
        })
        .await
    }

    /// Restores the open file to its saved checkpoint; its unsaved edits are lost.
    pub async fn revert_file(
        &self,
        expected: Option<u64>,
    ) -> Result<DocumentOutcome, WorkspaceError> {
        self.mutate("revertFile", expected, |document| async move {
            applied(self.manager.revert_file(&document.active_path, None).await)
        })
        .await
    }

    // ---- internals ----

    /// Guard, change, new document revision (all under the ops lock), then the wait for its
    /// acknowledgement (outside it, so readers and acknowledgements are never blocked); a
    /// failed wait reports the document revision as committed.
    async fn mutate<F, Fut>(
        &self,
        operation: &'static str,
        expected: Option<u64>,
        change: F,
    ) -> Result<DocumentOutcome, WorkspaceError>
    where
        F: FnOnce(DocumentView) -> Fut,
        Fut: Future<Output = Result<(), WorkspaceError>>,
    {
        let document = {
            let _ops = self.ops.lock().await;
            let current = self.sync(false).await;
            check_document_revision(expected, current.revision)?;
            change(DocumentView::of(&current)).await?;
            self.sync(true).await
        };
        self.announce("document").await;
        let preview = self
            .acks
            .wait_for_committed(document.revision, self.ack_timeout)
            .await?;
        let dirty_paths = self.manager.status().await.dirty_paths;
        Ok(DocumentOutcome {
            operation,
            scenario: document.scenario,
            dirty_paths,
            context: self.context_of(&document, preview).await,
        })
    }

    async fn write_active(&self, path: &str, source: &str) -> Result<(), WorkspaceError> {
        let options = WriteOptions::default().with_coalesce(false);
        applied(self.manager.write_file(path, source, options).await)
    }

    /// Moves the document to a new revision when the workspace's files or active path changed
    /// (or always, when `force`), publishing it to the preview.
    async fn sync(&self, force: bool) -> Document {
        let mut document = self.document.lock().await;
        let workspace = self.manager.snapshot().await;
        let changed = force
            || document.active_path != workspace.active_path()
            || !same_files(&document.files, workspace.shared_files());
        document.workspace_revision = workspace.revision();
        if changed {
            document.revision += 1;
            document.active_path = workspace.active_path().to_owned();
            document.files = workspace.shared_files().to_vec();
            self.publish_preview(&document);
        }
        document.clone()
    }

    /// Marks the revision waiting and, without an attached page, acknowledges it by compiling
    /// it (preview mode: assets stay URLs, nothing is base64-encoded).
    fn publish_preview(&self, document: &Document) {
        self.record_stylesheet_run(document);
        self.acks.publish(document.revision);
        if self.viewers.count() > 0 {
            return;
        }
        let acks = self.acks.clone();
        let revision = document.revision;
        let files = document.files.clone();
        let compiler = Arc::clone(&self.headless);
        tokio::task::spawn_blocking(move || {
            let files: Vec<WorkspaceFile> = files.iter().map(|file| (**file).clone()).collect();
            let options = crate::kit::preview_http::preview_options(
                Some(revision),
                format!("/editor/preview/{revision}/assets/"),
            );
            crate::kit::preview_http::lock_compiler(&compiler).compile(&files, &options);
            acks.acknowledge(revision, PreviewStatus::Compiled);
        });
    }

    /// Records the revision in the stylesheet run; a new scenario (injected into the
    /// document, so only a reload shows it) starts a new run.
    fn record_stylesheet_run(&self, document: &Document) {
        let mut published = self
            .published_scenario
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let scenario_changed = published.replace(document.scenario) != Some(document.scenario);
        let snapshot = PreviewSnapshot {
            revision: document.revision,
            files: document.files.clone(),
        };
        self.stylesheet_run.record_with(&snapshot, scenario_changed);
    }

    async fn context_of(&self, document: &Document, preview: PreviewState) -> EditorContext {
        let storage = self.manager.status().await.storage;
        EditorContext {
            active_path: document.active_path.clone(),
            workspace_revision: document.workspace_revision,
            document_revision: document.revision,
            preview,
            storage_mode: storage.storage_mode,
            storage_error: storage.storage_error,
        }
    }

    /// Publishes a [`StudioEvent::Surface`] event so editor pages refresh.
    async fn announce(&self, change: &str) {
        let data = self.event_data(change).await;
        self.hub.publish(StudioEvent::Surface {
            surface: "editor".to_owned(),
            data,
        });
    }

    /// The data of the editor's surface events: `{change, scenario, dirtyPaths, ...context}`.
    pub async fn event_data(&self, change: &str) -> Value {
        let document = self.document.lock().await.clone();
        let context = self.context_of(&document, self.acks.current()).await;
        let dirty_paths = self.manager.status().await.dirty_paths;
        let mut data = json!({
            "change": change,
            "scenario": document.scenario,
            "dirtyPaths": dirty_paths,
        });
        if let (Some(data), Value::Object(context)) = (data.as_object_mut(), json!(context)) {
            data.extend(context);
        }
        data
    }
}

/// What a document mutation may read about the current document.
#[derive(Debug, Clone)]
struct DocumentView {
    active_path: String,
    scenario: Scenario,
}

impl DocumentView {
    fn of(document: &Document) -> Self {
        Self {
            active_path: document.active_path.clone(),
            scenario: document.scenario,
        }
    }
}

/// `editor.getStatus`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditorStatus {
    /// Both clocks, the preview state and persistence.
    #[serde(flatten)]
    pub context: EditorContext,
    /// The selected scenario.
    pub scenario: Scenario,
    /// Every scenario `editor.setScenario` accepts.
    pub scenarios: Vec<Scenario>,
    /// Number of files.
    pub file_count: usize,
    /// Files that differ from the folder (or the seed).
    pub dirty_paths: Vec<String>,
    /// Deleted files not yet removed from the folder.
    pub pending_deletions: Vec<String>,
    /// Whether anything is unsaved.
    pub is_dirty: bool,
    /// The local folder link.
    pub folder: FolderStatus,
    /// Whether a page renders the preview (browser acknowledgements) or not (headless).
    pub browser_attached: bool,
}

/// `editor.listFiles`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditorFileList {
    /// Both clocks, the preview state and persistence.
    #[serde(flatten)]
    pub context: EditorContext,
    /// Unsaved paths.
    pub dirty_paths: Vec<String>,
    /// Files in canonical order (no contents).
    pub files: Vec<FileSummary>,
}

/// `editor.getDocument`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditorDocument {
    /// Both clocks (`activePath` is the document's path), the preview state and persistence.
    #[serde(flatten)]
    pub context: EditorContext,
    /// The document's language.
    pub language: Language,
    /// The document's source.
    pub source: String,
    /// The selected scenario.
    pub scenario: Scenario,
    /// Whether the document differs from the folder (or the seed).
    pub dirty: bool,
}

/// The result of a preview-aware document mutation.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocumentOutcome {
    /// `open`, `setDocument`, `applyPatch`, `setScenario` or `resetDocument`.
    pub operation: &'static str,
    /// Both clocks after the mutation and the acknowledgement of its document revision.
    #[serde(flatten)]
    pub context: EditorContext,
    /// The selected scenario.
    pub scenario: Scenario,
    /// Unsaved paths after the mutation.
    pub dirty_paths: Vec<String>,
}

/// A workspace write is done once applied: a failed confirmation of the workspace clock's own
/// preview (`details.committed`) is no failure here, since the document clock carries the
/// preview a page confirms and its wait reports on it.
fn applied<T>(result: Result<T, WorkspaceError>) -> Result<(), WorkspaceError> {
    match result {
        Ok(_) => Ok(()),
        Err(error) if error.is_committed() => Ok(()),
        Err(error) => Err(error),
    }
}

/// Whether two file lists hold the same files (shared pointers first, then contents).
fn same_files(a: &[Arc<WorkspaceFile>], b: &[Arc<WorkspaceFile>]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(a, b)| Arc::ptr_eq(a, b) || **a == **b)
}

/// The source of a text file; an asset cannot be a document.
/// The source of a text file; `WORKSPACE_FILE_TYPE_CONFLICT` for an asset (the editor edits text).
pub(super) fn text_source<'f>(
    file: &'f WorkspaceFile,
    operation: &str,
) -> Result<&'f str, WorkspaceError> {
    match &file.content {
        FileContent::Text { source } => Ok(source),
        FileContent::Asset { .. } => Err(WorkspaceError::file_type_conflict(
            &file.path, operation, "asset", "text",
        )),
    }
}

/// The document clock's guard: a stale `expectedDocumentRevision` changes nothing.
fn check_document_revision(expected: Option<u64>, current: u64) -> Result<(), WorkspaceError> {
    match expected {
        Some(expected) if expected != current => Err(WorkspaceError::new(
            WorkspaceErrorCode::WorkspaceRevisionConflict,
            format!(
                "Document revision mismatch: expected {expected}, current {current}. Re-read the document before applying the mutation."
            ),
            json!({"expectedRevision": expected, "currentRevision": current, "clock": "document"}),
        )),
        _ => Ok(()),
    }
}

fn missing_example(path: &str, scenario: Scenario) -> WorkspaceError {
    // Reported through the workspace error shape so every editor failure has one form.
    WorkspaceError {
        code: WorkspaceErrorCode::WorkspaceFileTypeConflict,
        message: format!(
            "The {} scenario has no example for {path}; open an HTML, CSS or JavaScript file to reset it.",
            scenario.name()
        ),
        retryable: false,
        details: json!({"path": path, "operation": "reset", "scenario": scenario.name(), "reason": EDITOR_SCENARIO_EXAMPLE_MISSING}),
    }
}

#[cfg(test)]
mod tests {
    use live_code_editor::workspace::bridge::ManualPreviewBridge;
    use live_code_editor::workspace::repository::MemoryWorkspaceRepository;

    use super::*;

    /// An editor whose workspace manager never hears a preview acknowledgement (its own clock's
    /// preview is not the one a page renders), so every workspace write ends committed.
    async fn editor_over_a_silent_workspace_preview() -> Arc<EditorSurface> {
        let options = ManagerOptions::default().with_ack_timeout(Duration::from_millis(20));
        let manager = WorkspaceDocumentManager::open(
            seed_files(),
            Arc::new(MemoryWorkspaceRepository::new()),
            Arc::new(ManualPreviewBridge::default()),
            options,
        )
        .await
        .unwrap();
        EditorSurface::with_manager(
            Arc::new(manager),
            EventHub::new(),
            DEFAULT_PREVIEW_ACK_TIMEOUT,
            EditorSaves::memory(),
        )
        .await
    }

    #[tokio::test]
    async fn a_committed_workspace_write_still_moves_and_confirms_the_document() {
        let editor = editor_over_a_silent_workspace_preview().await;
        let before = editor.result_context().await.document_revision;
        let outcome = editor
            .set_document("<p>applied</p>", Some(before))
            .await
            .expect("the write is applied and the document preview confirms it");
        assert_eq!(outcome.context.document_revision, before + 1);
        assert_eq!(outcome.context.preview.status, PreviewStatus::Compiled);
        assert_eq!(editor.document().await.unwrap().source, "<p>applied</p>");
    }
}
