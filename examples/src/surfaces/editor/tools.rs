//! The `editor.*` catalog except the saves ([`super::saves`]). Reads are read-only (`allow`);
//! document mutations are "local demo allow": a direct palette call runs at once, a model or
//! MCP call waits for a person's approval under the studio policy.

use std::sync::Arc;

use live_code_editor::workspace::{Occurrence, WorkspaceError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_context::{Tool, ToolInvocation};
use tool_protocol::ToolCallError;

use super::scenarios::Scenario;
use super::state::{EditorContext, EditorSurface};
use crate::kit::tool_inputs::{NoInput, OccurrenceInput};

/// `editor.openFile` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct OpenFileInput {
    /// Workspace-relative path of a text file (slashes, no `..`).
    #[schemars(length(min = 1, max = 160))]
    pub path: String,
}

/// `editor.setDocument` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SetDocumentInput {
    /// The document's complete source (at most 80,000 characters); stored, never executed.
    #[schemars(length(max = 80_000))]
    pub source: String,
    /// The document revision the caller last read; a different current one rejects the call.
    #[schemars(range(min = 0))]
    pub expected_document_revision: Option<u64>,
}

/// `editor.applyPatch` arguments (the limits of `workspace.applyPatch`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct DocumentPatchInput {
    /// Exact text to find in the document (1 to 20,000 characters).
    #[schemars(length(min = 1, max = 20_000))]
    pub search: String,
    /// Replacement text (at most 20,000 characters).
    #[schemars(length(max = 20_000))]
    pub replace: String,
    /// `first` (default) or `all`.
    #[serde(default)]
    pub occurrence: OccurrenceInput,
    /// The document revision the caller last read.
    #[schemars(range(min = 0))]
    pub expected_document_revision: Option<u64>,
}

/// `editor.setScenario` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ScenarioInput {
    /// One of the fixed scenarios (`counter`, `greeting`, `todo-list`).
    pub scenario: Scenario,
    /// The document revision the caller last read.
    #[schemars(range(min = 0))]
    pub expected_document_revision: Option<u64>,
}

/// Only a document revision guard.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct DocumentGuardInput {
    /// The document revision the caller last read.
    #[schemars(range(min = 0))]
    pub expected_document_revision: Option<u64>,
}

/// `editor.getPreviewStatus`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PreviewStatusOutput {
    /// Both clocks and the latest acknowledgement (`preview`).
    #[serde(flatten)]
    pub context: EditorContext,
    /// Whether a page renders the preview (`ready` acknowledgements) or not (`compiled`).
    pub browser_attached: bool,
}

fn err(error: WorkspaceError) -> ToolCallError {
    error.into()
}

/// The editor's own tools (everything but the saves).
pub(crate) fn tools(surface: &Arc<EditorSurface>) -> Vec<Tool> {
    vec![
        get_status(surface.clone()),
        list_files(surface.clone()),
        open_file(surface.clone()),
        get_document(surface.clone()),
        get_preview_status(surface.clone()),
        set_document(surface.clone()),
        apply_patch(surface.clone()),
        set_scenario(surface.clone()),
        reset_document(surface.clone()),
        revert_file(surface.clone()),
    ]
}

fn get_status(surface: Arc<EditorSurface>) -> Tool {
    Tool::typed(
        "editor.getStatus",
        "Read the editor's two clocks (workspaceRevision for files, documentRevision for the open document and preview), the preview acknowledgement, persistence (storageMode, storageError), dirty paths, the selected scenario and the local folder connection. Call it first.",
        move |_: NoInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move { Ok::<_, ToolCallError>(surface.status().await) }
        },
    )
    .title("Editor status")
    .read_only()
}

fn list_files(surface: Arc<EditorSurface>) -> Tool {
    Tool::typed(
        "editor.listFiles",
        "List the editor's files (language, text or asset, size, unsaved state) with the active path, both revisions, storage mode and dirty paths.",
        move |_: NoInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move { Ok::<_, ToolCallError>(surface.list_files().await) }
        },
    )
    .title("List editor files")
    .read_only()
}

fn open_file(surface: Arc<EditorSurface>) -> Tool {
    Tool::typed(
        "editor.openFile",
        "Open a text file as the editor document (binary assets are rejected) and wait until the preview acknowledges the new document revision.",
        move |input: OpenFileInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move { surface.open_file(&input.path).await.map_err(err) }
        },
    )
    .title("Open document")
}

fn get_document(surface: Arc<EditorSurface>) -> Tool {
    Tool::typed(
        "editor.getDocument",
        "Read the open document's source, language, path, scenario and documentRevision. Pass documentRevision as expectedDocumentRevision to the next document mutation.",
        move |_: NoInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move { surface.document().await.map_err(err) }
        },
    )
    .title("Read document")
    .read_only()
}

fn get_preview_status(surface: Arc<EditorSurface>) -> Tool {
    Tool::typed(
        "editor.getPreviewStatus",
        "Read the latest preview acknowledgement of the document clock (waiting, ready from the browser iframe, compiled headlessly, or error).",
        move |_: NoInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move {
                let context = surface.result_context().await;
                Ok::<_, ToolCallError>(PreviewStatusOutput {
                    context,
                    browser_attached: surface.viewers().count() > 0,
                })
            }
        },
    )
    .title("Preview status")
    .read_only()
}

fn set_document(surface: Arc<EditorSurface>) -> Tool {
    Tool::typed(
        "editor.setDocument",
        "Replace the open document's source (at most 80,000 characters). The text is stored and previewed, never executed by the host. Waits for the preview to acknowledge the new document revision.",
        move |input: SetDocumentInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move {
                surface
                    .set_document(&input.source, input.expected_document_revision)
                    .await
                    .map_err(err)
            }
        },
    )
    .title("Set document")
}

fn apply_patch(surface: Arc<EditorSurface>) -> Tool {
    Tool::typed(
        "editor.applyPatch",
        "Replace exact text in the open document (search 1 to 20,000 characters, first or all occurrences); the result must stay within 80,000 characters. A miss is reported without echoing the search text. Waits for the matching preview revision.",
        move |input: DocumentPatchInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move {
                let occurrence = match input.occurrence {
                    OccurrenceInput::First => Occurrence::First,
                    OccurrenceInput::All => Occurrence::All,
                };
                surface
                    .apply_patch(
                        &input.search,
                        &input.replace,
                        occurrence,
                        input.expected_document_revision,
                    )
                    .await
                    .map_err(err)
            }
        },
    )
    .title("Patch document")
}

fn set_scenario(surface: Arc<EditorSurface>) -> Tool {
    Tool::typed(
        "editor.setScenario",
        "Select the safe runner scenario (counter, greeting or todo-list). A scenario is data handed to the preview, never code; there is no tool that runs scripts.",
        move |input: ScenarioInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move {
                surface
                    .set_scenario(input.scenario, input.expected_document_revision)
                    .await
                    .map_err(err)
            }
        },
    )
    .title("Set scenario")
}

fn reset_document(surface: Arc<EditorSurface>) -> Tool {
    Tool::typed(
        "editor.resetDocument",
        "Replace the open document with the selected scenario's example for its language (HTML, CSS or JavaScript). Unsaved edits of the document are lost.",
        move |input: DocumentGuardInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move {
                surface
                    .reset_document(input.expected_document_revision)
                    .await
                    .map_err(err)
            }
        },
    )
    .title("Reset document")
    .destructive()
}

fn revert_file(surface: Arc<EditorSurface>) -> Tool {
    Tool::typed(
        "editor.revertFile",
        "Restore the open file to its saved checkpoint (its last save or import). Unsaved edits of the file are lost.",
        move |input: DocumentGuardInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move { surface.revert_file(input.expected_document_revision).await.map_err(err) }
        },
    )
    .title("Revert file")
    .destructive()
}
