//! `editor.saveFile` and `editor.saveAll`: plan at one workspace revision, write each record,
//! report the two clocks with the dirty and saved paths.

use std::sync::Arc;

use live_code_editor::WorkspaceFile;
use live_code_editor::workspace::WorkspaceError;
use live_code_editor::workspace::folder::FolderPermission;
use live_code_editor::workspace::manager::WorkspaceDocumentManager;
use live_code_editor::workspace::model::validate_path;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tool_context::{Tool, ToolInvocation};
use tool_protocol::ToolCallError;

use super::saves::manifest::chunks;
use super::saves::run::{RecordDone, RecordFailure, SavePlan, add_details};
use super::{EditorContext, EditorSurface};

/// `editor.saveFile` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SaveFileInput {
    /// Workspace-relative path of the text file to write (slashes, no `..`).
    #[schemars(length(min = 1, max = 160))]
    pub path: String,
    /// The workspace revision the caller last read; a different current one writes nothing.
    #[schemars(range(min = 0))]
    pub expected_workspace_revision: Option<u64>,
}

/// `editor.saveAll` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SaveAllInput {
    /// The workspace revision the caller last read; a different current one writes nothing.
    #[schemars(range(min = 0))]
    pub expected_workspace_revision: Option<u64>,
}

/// The result of a save.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EditorSaveResult {
    /// `saveFile` or `saveAll`.
    pub operation: String,
    /// Both clocks (a save moves neither), the preview state and persistence.
    #[serde(flatten)]
    pub context: EditorContext,
    /// Unsaved paths after the save.
    pub dirty_paths: Vec<String>,
    /// Paths the folder now holds, in write order.
    pub saved_paths: Vec<String>,
    /// The subset of `savedPaths` whose durable record was replayed (the folder already held
    /// the bytes of this session's same save; nothing was written again).
    pub replayed_paths: Vec<String>,
    /// Keys of the durable save records (for `GET /api/editor/saves` and recovery).
    pub operation_keys: Vec<String>,
}

/// Both save tools.
pub(crate) fn tools(surface: &Arc<EditorSurface>) -> Vec<Tool> {
    vec![
        save_file(Arc::clone(surface)),
        save_all(Arc::clone(surface)),
    ]
}

fn save_file(surface: Arc<EditorSurface>) -> Tool {
    Tool::typed(
        "editor.saveFile",
        "Write one text file to the local folder the user opened, then mark only that path saved. Waits for a person's approval when a model or MCP client calls it. A retry of the same save in this session replays its durable record instead of writing twice; an unknown outcome (WORKSPACE_SIDE_EFFECT_UNKNOWN) must be recovered before saving the same content again.",
        move |input: SaveFileInput, invocation: ToolInvocation| {
            let surface = Arc::clone(&surface);
            async move {
                let target = Target::File(input.path);
                save(&surface, target, input.expected_workspace_revision, &invocation).await
            }
        },
    )
    .title("Save file to folder")
    .destructive()
}

fn save_all(surface: Arc<EditorSurface>) -> Tool {
    Tool::typed(
        "editor.saveAll",
        "Write every unsaved text file to the local folder the user opened, in path order; each written file is marked saved at once. If a later file fails, the written files stay saved, the rest stay unsaved, and the error lists the completed paths. Waits for a person's approval when a model or MCP client calls it.",
        move |input: SaveAllInput, invocation: ToolInvocation| {
            let surface = Arc::clone(&surface);
            async move {
                save(&surface, Target::AllDirty, input.expected_workspace_revision, &invocation).await
            }
        },
    )
    .title("Save all to folder")
    .destructive()
}

/// What a save writes.
enum Target {
    /// One text file, dirty or not.
    File(String),
    /// Every dirty text file.
    AllDirty,
}

impl Target {
    fn tool(&self) -> &'static str {
        match self {
            Self::File(_) => "editor.saveFile",
            Self::AllDirty => "editor.saveAll",
        }
    }

    fn operation(&self) -> &'static str {
        match self {
            Self::File(_) => "saveFile",
            Self::AllDirty => "saveAll",
        }
    }
}

/// Plans at one revision, writes each record in order, and reports; the pages are told about
/// the new dirty state whether or not every record succeeded.
async fn save(
    surface: &EditorSurface,
    target: Target,
    expected: Option<u64>,
    invocation: &ToolInvocation,
) -> Result<EditorSaveResult, ToolCallError> {
    let manager = surface.manager();
    let plan = plan(
        manager,
        &target,
        expected,
        invocation.context.session_id.clone(),
    )
    .await?;
    let mut report = Report::default();
    for files in chunks(&plan.files) {
        match surface.saves().save_record(manager, &plan, files).await {
            Ok(done) => report.add(done),
            Err(failure) => {
                surface.publish_change().await;
                return Err(report.failed(failure));
            }
        }
    }
    surface.publish_change().await;
    Ok(EditorSaveResult {
        operation: target.operation().to_owned(),
        context: surface.result_context().await,
        dirty_paths: manager.status().await.dirty_paths,
        saved_paths: report.saved,
        replayed_paths: report.replayed,
        operation_keys: report.keys,
    })
}

/// Captures the files to write at the current revision, refusing (before any record) a stale
/// revision, a missing or unwritable folder and a path that is not a text file.
async fn plan(
    manager: &WorkspaceDocumentManager,
    target: &Target,
    expected: Option<u64>,
    session: Option<String>,
) -> Result<SavePlan, ToolCallError> {
    let workspace = manager.snapshot().await;
    let revision = workspace.revision();
    if let Some(expected) = expected.filter(|expected| *expected != revision) {
        return Err(WorkspaceError::revision_conflict(expected, revision, Some("save")).into());
    }
    let folder = manager
        .folder_adapter()
        .await
        .ok_or_else(|| WorkspaceError::folder_not_connected("save"))?;
    match folder.permission().await {
        FolderPermission::Granted => {}
        FolderPermission::Disconnected => {
            return Err(WorkspaceError::folder_stale(
                "save",
                folder.name(),
                "the folder no longer exists",
            )
            .into());
        }
        other => {
            return Err(WorkspaceError::folder_permission_denied("save", other.as_str()).into());
        }
    }
    let files = match target {
        Target::File(raw) => vec![text_file(&workspace, raw)?],
        Target::AllDirty => {
            let dirty = workspace.dirty_paths();
            workspace
                .shared_files()
                .iter()
                .filter(|file| !file.is_asset() && dirty.contains(&file.path))
                .cloned()
                .collect::<Vec<_>>()
        }
    };
    let mut files = files;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(SavePlan {
        tool: target.tool(),
        session,
        folder,
        revision,
        files,
    })
}

fn text_file(
    workspace: &live_code_editor::workspace::Workspace,
    raw: &str,
) -> Result<Arc<WorkspaceFile>, WorkspaceError> {
    let path = validate_path(raw)?;
    let file = workspace
        .shared_files()
        .iter()
        .find(|file| file.path == path)
        .ok_or_else(|| WorkspaceError::file_not_found(&path, "save"))?;
    if file.is_asset() {
        return Err(WorkspaceError::file_type_conflict(
            &path, "save", "asset", "text",
        ));
    }
    Ok(Arc::clone(file))
}

/// What the records of one call did so far.
#[derive(Debug, Default)]
struct Report {
    saved: Vec<String>,
    replayed: Vec<String>,
    keys: Vec<String>,
}

impl Report {
    fn add(&mut self, done: RecordDone) {
        if done.replayed {
            self.replayed.extend(done.paths.iter().cloned());
        }
        self.saved.extend(done.paths);
        self.keys.push(done.key);
    }

    /// The failure with every path written before it (earlier records and this one) listed
    /// in `completedPaths` and the message, so a retry can be scoped to the rest.
    fn failed(mut self, failure: RecordFailure) -> ToolCallError {
        self.saved.extend(failure.completed);
        let mut error = failure.error;
        if !self.saved.is_empty() {
            error.message = format!(
                "{} Completed before the failure: {}.",
                error.message,
                self.saved.join(", ")
            );
        }
        add_details(
            &mut error,
            json!({"completedPaths": self.saved, "operationKeys": self.keys}),
        );
        error
    }
}
