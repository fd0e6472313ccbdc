//! `workspace.*`: the standalone workspace catalog over the [`WorkspaceDocumentManager`].

use std::sync::Arc;

use base64::Engine;
use live_code_editor::file::FileContent;
use live_code_editor::workspace::manager::{WorkspaceDocumentManager, WriteOptions};
use live_code_editor::workspace::{Occurrence, WorkspaceError};
use schemars::JsonSchema;
use serde::Serialize;
use tool_context::{Tool, ToolInvocation};
use tool_protocol::{ToolCallError, ToolCallMode, ToolCallSource};

use crate::kit::tool_inputs::{
    GuardInput, GuardedPathInput, NoInput, OccurrenceInput, PatchInput, PathInput, RenameInput,
    ReplaceInput, SourceInput,
};

/// Files as `workspace.listFiles` reports them.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileList {
    /// Current workspace revision.
    pub revision: u64,
    /// Active file.
    pub active_path: String,
    /// Files in canonical order.
    pub files: Vec<live_code_editor::workspace::manager::FileSummary>,
}

/// A file's bytes for a browser download.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileDownload {
    /// Workspace path.
    pub path: String,
    /// File name for the download.
    pub file_name: String,
    /// MIME type.
    pub mime_type: String,
    /// `utf-8` for text, `base64` for assets.
    pub encoding: String,
    /// The content in that encoding.
    pub content: String,
    /// Size in bytes.
    pub size_bytes: usize,
    /// Current workspace revision.
    pub revision: u64,
}

fn err(error: WorkspaceError) -> ToolCallError {
    error.into()
}

/// Every `workspace.*` tool, sharing one manager.
pub(crate) fn tools(manager: &Arc<WorkspaceDocumentManager>) -> Vec<Tool> {
    vec![
        get_status(manager.clone()),
        list_files(manager.clone()),
        read_file(manager.clone()),
        download_file(manager.clone()),
        open_file(manager.clone()),
        create_file(manager.clone()),
        rename_file(manager.clone()),
        write_file(manager.clone()),
        apply_patch(manager.clone()),
        undo(manager.clone()),
        redo(manager.clone()),
        delete_file(manager.clone()),
        revert_file(manager.clone()),
        save_all(manager.clone()),
        save_checkpoint(manager.clone()),
        reload_folder(manager.clone()),
        disconnect_folder(manager.clone()),
        reset(manager.clone()),
    ]
}

fn get_status(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.getStatus",
        "Read the workspace revision, persistence (storageMode, storageError), preview acknowledgement, dirty and deleted paths, undo/redo availability and the linked folder's permission. Call it first and pass its revision as expectedRevision to mutations.",
        move |_: NoInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { Ok::<_, ToolCallError>(manager.status().await) }
        },
    )
    .title("Workspace status")
    .read_only()
}

fn list_files(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.listFiles",
        "List every workspace file with its language, kind (text or asset), size and unsaved state.",
        move |_: NoInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move {
                let status = manager.status().await;
                let files = manager.list_files().await;
                Ok::<_, ToolCallError>(FileList { revision: status.revision, active_path: status.active_path, files })
            }
        },
    )
    .title("List files")
    .read_only()
}

fn read_file(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.readFile",
        "Read one text file with the current workspace revision. Pass that revision as expectedRevision to the next mutation.",
        move |input: PathInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { manager.read_file(&input.path).await.map_err(err) }
        },
    )
    .title("Read file")
    .read_only()
}

fn download_file(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    let mut tool = Tool::typed(
        "workspace.downloadFile",
        "Hand one text file or binary asset to the person as a browser download. Crosses the workspace boundary, so it needs approval when a model asks.",
        move |input: PathInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { download(&manager, &input.path).await }
        },
    )
    .title("Download file");
    let annotations = tool.definition().annotations.clone().unwrap_or_default();
    tool = tool.annotations(tool_protocol::ToolAnnotations {
        read_only_hint: Some(false),
        open_world_hint: Some(true),
        ..annotations
    });
    tool
}

async fn download(
    manager: &WorkspaceDocumentManager,
    raw_path: &str,
) -> Result<FileDownload, ToolCallError> {
    let path = live_code_editor::workspace::model::validate_path(raw_path).map_err(err)?;
    let workspace = manager.snapshot().await;
    let file = workspace
        .file(&path)
        .ok_or_else(|| err(WorkspaceError::file_not_found(&path, "download")))?;
    let file_name = path.rsplit('/').next().unwrap_or(&path).to_owned();
    let (mime_type, encoding, content, size_bytes) = match &file.content {
        FileContent::Text { source } => (
            file.language.mime_type().to_owned(),
            "utf-8",
            source.clone(),
            source.len(),
        ),
        FileContent::Asset { bytes, mime_type } => (
            mime_type.clone(),
            "base64",
            base64::engine::general_purpose::STANDARD.encode(bytes),
            bytes.len(),
        ),
    };
    Ok(FileDownload {
        path,
        file_name,
        mime_type,
        encoding: encoding.to_owned(),
        content,
        size_bytes,
        revision: workspace.revision(),
    })
}

fn open_file(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.openFile",
        "Select a workspace file in the editor and persist it as the active path. Does not change any source.",
        move |input: GuardedPathInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { manager.open_file(&input.path, input.expected_revision).await.map_err(err) }
        },
    )
    .title("Open file")
    .read_only()
}

fn create_file(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.createFile",
        "Create a normalized text file (at most 80,000 characters) and make it active; waits for the preview to acknowledge the new revision.",
        move |input: SourceInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { manager.create_file(&input.path, &input.source, input.expected_revision).await.map_err(err) }
        },
    )
    .title("Create file")
}

fn rename_file(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.renameFile",
        "Rename a file, keeping its source. Text stays text and assets stay assets; the last HTML entry cannot be renamed away.",
        move |input: RenameInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { manager.rename_file(&input.from_path, &input.to_path, input.expected_revision).await.map_err(err) }
        },
    )
    .title("Rename file")
}

fn write_file(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.writeFile",
        "Replace one text file's complete source (at most 80,000 characters) and wait for the preview to acknowledge the new revision.",
        move |input: SourceInput, invocation: ToolInvocation| {
            let manager = manager.clone();
            async move {
                let coalesce = is_typing(&invocation);
                let options = WriteOptions::default().with_expected_revision(input.expected_revision).with_coalesce(coalesce);
                manager.write_file(&input.path, &input.source, options).await.map_err(err)
            }
        },
    )
    .title("Write file")
}

/// Whether a write is a person's typing: a direct local call (the page's idle flush). A typing
/// burst of one file joins one undo step; a model's or an agent's write stays its own step.
fn is_typing(invocation: &ToolInvocation) -> bool {
    invocation.context.source == Some(ToolCallSource::Local)
        && invocation.context.mode == Some(ToolCallMode::Direct)
}

fn apply_patch(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.applyPatch",
        "Replace exact text in one text file (search 1 to 20,000 characters, first or all occurrences); the result must stay within 80,000 characters. A miss is reported without echoing the search text.",
        move |input: PatchInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move {
                let occurrence = match input.occurrence {
                    OccurrenceInput::First => Occurrence::First,
                    OccurrenceInput::All => Occurrence::All,
                };
                manager.apply_patch(&input.path, &input.search, &input.replace, occurrence, input.expected_revision).await.map_err(err)
            }
        },
    )
    .title("Apply patch")
}

fn undo(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.undo",
        "Step back one checkpoint in the bounded (100 entries) edit history.",
        move |input: GuardInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { manager.undo(input.expected_revision).await.map_err(err) }
        },
    )
    .title("Undo")
}

fn redo(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.redo",
        "Step forward one checkpoint in the edit history.",
        move |input: GuardInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { manager.redo(input.expected_revision).await.map_err(err) }
        },
    )
    .title("Redo")
}

fn delete_file(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.deleteFile",
        "Delete one workspace file; a saved file stays a pending deletion until the next save to the folder.",
        move |input: GuardedPathInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { manager.delete_file(&input.path, input.expected_revision).await.map_err(err) }
        },
    )
    .title("Delete file")
    .destructive()
}

fn revert_file(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.revertFile",
        "Restore one file to its saved checkpoint (a renamed file returns to its origin; an unsaved new file is removed).",
        move |input: GuardedPathInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { manager.revert_file(&input.path, input.expected_revision).await.map_err(err) }
        },
    )
    .title("Revert file")
    .destructive()
}

fn save_all(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.saveAll",
        "Write dirty files and pending deletions to the linked folder, guarded by the current revision. Each written file is marked clean at once; edits made during the write stay dirty.",
        move |input: GuardInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { manager.save_all(input.expected_revision).await.map_err(err) }
        },
    )
    .title("Save to folder")
}

fn save_checkpoint(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.saveCheckpoint",
        "Mark the current revision as the saved checkpoint without writing a folder (fails while a folder is linked: use workspace.saveAll).",
        move |input: GuardInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { manager.save_checkpoint(input.expected_revision).await.map_err(err) }
        },
    )
    .title("Save checkpoint")
}

fn reload_folder(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.reloadFolder",
        "Re-read the linked folder and replace the workspace, re-checking the revision after the read. Refused while edits are unsaved unless discardChanges is true (which discards them).",
        move |input: ReplaceInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { manager.reload_folder(input.guard()).await.map_err(err) }
        },
    )
    .title("Reload folder")
    .destructive()
}

fn disconnect_folder(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.disconnectFolder",
        "Stop syncing with the linked folder while keeping the workspace.",
        move |_: NoInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { Ok::<_, ToolCallError>(manager.disconnect_folder().await) }
        },
    )
    .title("Disconnect folder")
}

fn reset(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "workspace.reset",
        "Restore the four-file seed workspace. Unavailable while a folder is linked; refused while edits are unsaved unless discardChanges is true (which discards them).",
        move |input: ReplaceInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { manager.reset(input.guard()).await.map_err(err) }
        },
    )
    .title("Reset workspace")
    .destructive()
}
