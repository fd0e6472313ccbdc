//! `preview.*`: controlled visual edits and preview status over the same manager, so every
//! visual change is a revision-guarded workspace write that the preview acknowledges.

use std::sync::Arc;

use live_code_editor::preview::{PreviewDiagnostic, compile_preview};
use live_code_editor::workspace::bridge::RuntimeErrorReport;
use live_code_editor::workspace::manager::{WorkspaceDocumentManager, WriteOptions};
use live_code_editor::workspace::{Workspace, WorkspaceError};
use schemars::JsonSchema;
use serde::Serialize;
use tool_context::{Tool, ToolInvocation};
use tool_protocol::ToolCallError;

use crate::kit::tool_inputs::{FeatureInput, HeroInput, NoInput, ThemeInput};
use crate::preview_edits::{self, PreviewTarget, html_entry_path, missing_target, stylesheet_path};

/// Most diagnostics `preview.getStatus` lists; `diagnosticCount` tells how many there are.
pub(crate) const MAX_STATUS_DIAGNOSTICS: usize = 20;

/// The preview acknowledgement and diagnostics as `preview.getStatus` reports them.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PreviewStatusOutput {
    /// Current workspace revision.
    pub revision: u64,
    /// Revision the preview last reported on.
    pub preview_revision: u64,
    /// `waiting`, `ready`, `compiled` or `error`.
    pub preview_status: String,
    /// Whether the preview shows the current revision.
    pub current: bool,
    /// The preview compiler's diagnostics of `revision` (unresolved references, blocked
    /// externals, budget notes), at most [`MAX_STATUS_DIAGNOSTICS`].
    #[schemars(with = "Vec<serde_json::Value>")]
    pub diagnostics: Vec<PreviewDiagnostic>,
    /// How many diagnostics the revision has in all.
    pub diagnostic_count: usize,
    /// What the running preview of the revision it last reported on threw, rejected or logged
    /// with `console.error`, each with its workspace position when known (the latest
    /// [`live_code_editor::workspace::bridge::MAX_KEPT_RUNTIME_ERRORS`]; `omitted` counts the rest).
    #[schemars(with = "serde_json::Value")]
    pub runtime_errors: RuntimeErrorReport,
}

/// Every `preview.*` tool.
pub(crate) fn tools(manager: &Arc<WorkspaceDocumentManager>) -> Vec<Tool> {
    vec![
        set_theme(manager.clone()),
        add_feature(manager.clone()),
        update_hero(manager.clone()),
        get_status(manager.clone()),
        refresh(manager.clone()),
    ]
}

fn target_not_found(target: PreviewTarget, path: Option<&str>) -> ToolCallError {
    let message = format!(
        "The preview has no {target} target to change; read the workspace and edit the file directly."
    );
    missing_target(target, path, message)
}

/// Reads the target file, applies `edit` and writes it back guarded by the revision the edit
/// was computed from, so a concurrent edit is rejected instead of overwritten.
async fn edit_file(
    manager: &WorkspaceDocumentManager,
    expected_revision: Option<u64>,
    locate: fn(&Workspace) -> Option<String>,
    missing: PreviewTarget,
    edit: impl FnOnce(&str) -> Result<String, PreviewTarget>,
) -> Result<live_code_editor::workspace::manager::MutationOutcome, ToolCallError> {
    let workspace = manager.snapshot().await;
    if let Some(expected) = expected_revision
        && expected != workspace.revision()
    {
        return Err(WorkspaceError::revision_conflict(expected, workspace.revision(), None).into());
    }
    let path = locate(&workspace).ok_or_else(|| target_not_found(missing, None))?;
    let source = workspace
        .file(&path)
        .and_then(|file| file.source())
        .unwrap_or_default();
    let updated = edit(source).map_err(|target| target_not_found(target, Some(&path)))?;
    let options = WriteOptions::default()
        .with_expected_revision(Some(workspace.revision()))
        .with_coalesce(false);
    manager
        .write_file(&path, &updated, options)
        .await
        .map_err(Into::into)
}

fn set_theme(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "preview.setTheme",
        "Change the preview accent theme (violet, emerald, amber or rose) by rewriting the --accent and --accent-soft tokens of the stylesheet.",
        move |input: ThemeInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move {
                edit_file(&manager, input.expected_revision, stylesheet_path, PreviewTarget::Stylesheet, |css| preview_edits::set_theme(css, input.theme)).await
            }
        },
    )
    .title("Set theme")
}

fn add_feature(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "preview.addFeature",
        "Add a feature card (title 1 to 70 characters, description 1 to 160) before the <!-- feature-slot --> marker of the HTML entry.",
        move |input: FeatureInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move {
                edit_file(&manager, input.expected_revision, html_entry_path, PreviewTarget::HtmlEntry, |html| {
                    preview_edits::add_feature(html, &input.title, &input.description)
                })
                .await
            }
        },
    )
    .title("Add feature")
}

fn update_hero(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "preview.updateHero",
        "Update the hero title (<h1 id=\"hero-title\">, 1 to 90 characters) and/or subtitle (<p id=\"hero-subtitle\">, 1 to 180 characters) of the HTML entry.",
        move |input: HeroInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move {
                edit_file(&manager, input.expected_revision, html_entry_path, PreviewTarget::HtmlEntry, |html| {
                    preview_edits::update_hero(html, input.title.as_deref(), input.subtitle.as_deref())
                })
                .await
            }
        },
    )
    .title("Update hero")
}

fn get_status(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "preview.getStatus",
        "Read the latest sandbox preview acknowledgement, whether it shows the current revision, the preview compiler's diagnostics of that revision (at most 20; diagnosticCount has the total), and the runtime errors the running preview reported (uncaught errors, unhandled rejections, console.error), each at its file:line:column.",
        move |_: NoInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { preview_status(&manager).await }
        },
    )
    .title("Preview status")
    .read_only()
}

/// The preview compiler's diagnostics of `workspace` (what `preview.getStatus` and
/// `GET /api/preview/diagnostics` report), compiled off the async workers: it is CPU work.
pub(crate) async fn workspace_diagnostics(
    workspace: &Workspace,
) -> Result<Vec<PreviewDiagnostic>, ToolCallError> {
    let files: Vec<_> = workspace.files().cloned().collect();
    tokio::task::spawn_blocking(move || {
        let options = crate::kit::preview_http::preview_options(None, "");
        compile_preview(&files, &options).diagnostics
    })
    .await
    .map_err(|_| {
        ToolCallError::new(
            "STUDIO_PREVIEW_FAILED",
            "The preview compiler stopped unexpectedly.",
        )
    })
}

async fn preview_status(
    manager: &WorkspaceDocumentManager,
) -> Result<PreviewStatusOutput, ToolCallError> {
    let workspace = manager.snapshot().await;
    let revision = workspace.revision();
    let preview = manager.preview_acks().current();
    let status = serde_json::to_value(&preview.status)
        .ok()
        .and_then(|value| value.get("status")?.as_str().map(str::to_owned))
        .unwrap_or_default();
    let mut diagnostics = workspace_diagnostics(&workspace).await?;
    let diagnostic_count = diagnostics.len();
    diagnostics.truncate(MAX_STATUS_DIAGNOSTICS);
    Ok(PreviewStatusOutput {
        revision,
        preview_revision: preview.revision,
        preview_status: status,
        current: preview.revision == revision,
        diagnostics,
        diagnostic_count,
        runtime_errors: manager.preview_acks().runtime_errors(),
    })
}

fn refresh(manager: Arc<WorkspaceDocumentManager>) -> Tool {
    Tool::typed(
        "preview.refresh",
        "Remount the sandbox preview and wait until it acknowledges the current revision again. Does not change the workspace.",
        move |_: NoInput, _: ToolInvocation| {
            let manager = manager.clone();
            async move { manager.refresh_preview().await.map_err(Into::<ToolCallError>::into) }
        },
    )
    .title("Refresh preview")
}
