//! The `web.*` catalog: two reads (`allow`) and five revision-guarded mutations ("local demo
//! allow": direct palette calls run, model and MCP calls wait for approval). Every mutation
//! rejects a stale `expectedRevision` before it changes anything and answers with the new
//! revision only after the preview acknowledged it.

use std::sync::Arc;

use live_code_editor::file::Language;
use live_code_editor::workspace::bridge::PreviewState;
use live_code_editor::workspace::manager::{MutationOutcome, StorageStatus, WriteOptions};
use live_code_editor::workspace::{Occurrence, Workspace, WorkspaceError};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use tool_context::{Tool, ToolInvocation};
use tool_protocol::ToolCallError;

use super::WebSurface;
use crate::kit::tool_inputs::{
    FeatureInput, HeroInput, NoInput, OccurrenceInput, PatchInput, PathInput, SourceInput,
    ThemeInput,
};
use crate::preview_edits::{self, PreviewTarget, html_entry_path, missing_target, stylesheet_path};

/// One text file of the web workspace.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WebFile {
    /// Workspace path.
    pub path: String,
    /// Source language.
    pub language: Language,
    /// The complete source.
    pub source: String,
    /// Size in bytes (UTF-8).
    pub size_bytes: usize,
}

/// What `web.getWorkspace` (and `GET /api/web/state`) reports.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WebWorkspace {
    /// The workspace revision; pass it as `expectedRevision` to the next mutation.
    pub revision: u64,
    /// The active entry point (the HTML file the preview renders).
    pub active_path: String,
    /// Every text file with its source, entry first.
    pub files: Vec<WebFile>,
    /// The preview acknowledgement of the latest published revision.
    pub preview: PreviewState,
    /// Persistence status.
    #[serde(flatten)]
    pub storage: StorageStatus,
}

/// What `web.readFile` reports.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WebFileRead {
    /// Workspace path.
    pub path: String,
    /// Source language.
    pub language: Language,
    /// The complete source.
    pub source: String,
    /// The current workspace revision.
    pub revision: u64,
}

/// What every `web.*` mutation reports once the preview acknowledged its revision.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WebMutation {
    /// `write` or `patch` (visual tools rewrite one file, so they report `write`).
    pub operation: String,
    /// The file that changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The new workspace revision.
    pub revision: u64,
    /// The active entry point.
    pub active_path: String,
    /// The preview acknowledgement of `revision` (`ready` from a browser, `compiled` headless).
    pub preview: PreviewState,
    /// Persistence status.
    #[serde(flatten)]
    pub storage: StorageStatus,
}

impl From<MutationOutcome> for WebMutation {
    fn from(outcome: MutationOutcome) -> Self {
        Self {
            operation: outcome.operation.to_owned(),
            path: outcome.path,
            revision: outcome.revision,
            active_path: outcome.active_path,
            preview: outcome.preview,
            storage: outcome.storage,
        }
    }
}

/// The workspace with every text file's source.
pub(crate) async fn workspace_view(surface: &WebSurface) -> WebWorkspace {
    let manager = surface.manager();
    let status = manager.status().await;
    let workspace = manager.snapshot().await;
    let files = workspace
        .files()
        .filter_map(|file| {
            let source = file.source()?;
            Some(WebFile {
                path: file.path.clone(),
                language: file.language,
                source: source.to_owned(),
                size_bytes: source.len(),
            })
        })
        .collect();
    WebWorkspace {
        revision: workspace.revision(),
        active_path: workspace.active_path().to_owned(),
        files,
        preview: manager.preview_acks().current(),
        storage: status.storage,
    }
}

/// Every `web.*` tool, sharing the surface's workspace.
pub fn tools(surface: &Arc<WebSurface>) -> Vec<Tool> {
    vec![
        get_workspace(surface.clone()),
        read_file(surface.clone()),
        apply_patch(surface.clone()),
        write_file(surface.clone()),
        set_theme(surface.clone()),
        add_feature(surface.clone()),
        update_hero(surface.clone()),
    ]
}

/// Maps a finished mutation to its result and tells the pages its acknowledged state.
fn finished(
    surface: &WebSurface,
    outcome: Result<MutationOutcome, WorkspaceError>,
) -> Result<WebMutation, ToolCallError> {
    let mutation = WebMutation::from(outcome?);
    surface.publish(json!({"revision": mutation.revision, "preview": mutation.preview}));
    Ok(mutation)
}

fn get_workspace(surface: Arc<WebSurface>) -> Tool {
    Tool::typed(
        "web.getWorkspace",
        "Read the three-file web workspace: every file with its source, the active entry point, the workspace revision and the preview acknowledgement. Call it first and pass its revision as expectedRevision to every web.* mutation.",
        move |_: NoInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move { Ok::<_, ToolCallError>(workspace_view(&surface).await) }
        },
    )
    .title("Web workspace")
    .read_only()
}

fn read_file(surface: Arc<WebSurface>) -> Tool {
    Tool::typed(
        "web.readFile",
        "Read one text file of the web workspace (index.html, styles.css or app.js) with the current workspace revision.",
        move |input: PathInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move {
                let read = surface.manager().read_file(&input.path).await?;
                Ok::<_, ToolCallError>(WebFileRead { path: read.path, language: read.language, source: read.source, revision: read.revision })
            }
        },
    )
    .title("Read web file")
    .read_only()
}

fn apply_patch(surface: Arc<WebSurface>) -> Tool {
    Tool::typed(
        "web.applyPatch",
        "Replace exact text in one web workspace file (search 1 to 20,000 characters, replacement at most 20,000, first or all occurrences); the file must stay within 80,000 characters. A stale expectedRevision is rejected before any change; a miss is reported without echoing the search text. Returns the new revision after the preview acknowledged it.",
        move |input: PatchInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move {
                let occurrence = match input.occurrence {
                    OccurrenceInput::First => Occurrence::First,
                    OccurrenceInput::All => Occurrence::All,
                };
                let outcome = surface.manager().apply_patch(&input.path, &input.search, &input.replace, occurrence, input.expected_revision).await;
                finished(&surface, outcome)
            }
        },
    )
    .title("Patch web file")
}

fn write_file(surface: Arc<WebSurface>) -> Tool {
    Tool::typed(
        "web.writeFile",
        "Replace the complete source of one existing web workspace file (at most 80,000 characters). A stale expectedRevision is rejected before any change. Returns the new revision after the preview acknowledged it.",
        move |input: SourceInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move {
                let options = WriteOptions::default().with_expected_revision(input.expected_revision).with_coalesce(false);
                let outcome = surface.manager().write_file(&input.path, &input.source, options).await;
                finished(&surface, outcome)
            }
        },
    )
    .title("Write web file")
}

fn set_theme(surface: Arc<WebSurface>) -> Tool {
    Tool::typed(
        "web.setTheme",
        "Change the page's accent theme (violet, emerald, amber or rose) by rewriting the --accent and --accent-soft tokens of styles.css, with the same revision guard.",
        move |input: ThemeInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move {
                let edit = VisualEdit { expected_revision: input.expected_revision, locate: stylesheet_path, missing: PreviewTarget::Stylesheet };
                edit.run(&surface, |css| preview_edits::set_theme(css, input.theme)).await
            }
        },
    )
    .title("Set web theme")
}

fn add_feature(surface: Arc<WebSurface>) -> Tool {
    Tool::typed(
        "web.addFeature",
        "Add a feature card (title 1 to 70 characters, description 1 to 160) before the <!-- feature-slot --> marker of index.html, with the same revision guard.",
        move |input: FeatureInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move {
                let edit = VisualEdit { expected_revision: input.expected_revision, locate: html_entry_path, missing: PreviewTarget::HtmlEntry };
                edit.run(&surface, |html| preview_edits::add_feature(html, &input.title, &input.description)).await
            }
        },
    )
    .title("Add web feature")
}

fn update_hero(surface: Arc<WebSurface>) -> Tool {
    Tool::typed(
        "web.updateHero",
        "Update the hero title (<h1 id=\"hero-title\">, 1 to 90 characters) and/or subtitle (<p id=\"hero-subtitle\">, 1 to 180 characters) of index.html, with the same revision guard.",
        move |input: HeroInput, _: ToolInvocation| {
            let surface = surface.clone();
            async move {
                let edit = VisualEdit { expected_revision: input.expected_revision, locate: html_entry_path, missing: PreviewTarget::HtmlEntry };
                edit.run(&surface, |html| preview_edits::update_hero(html, input.title.as_deref(), input.subtitle.as_deref())).await
            }
        },
    )
    .title("Update web hero")
}

/// A controlled visual edit of one file: which file, and the guard it runs under.
struct VisualEdit {
    expected_revision: Option<u64>,
    locate: fn(&Workspace) -> Option<String>,
    missing: PreviewTarget,
}

impl VisualEdit {
    /// Checks the guard, applies `edit` to the located file and writes it back guarded by the
    /// revision the edit was computed from, so a concurrent edit is rejected, not overwritten.
    async fn run(
        self,
        surface: &WebSurface,
        edit: impl FnOnce(&str) -> Result<String, PreviewTarget>,
    ) -> Result<WebMutation, ToolCallError> {
        let workspace = surface.manager().snapshot().await;
        if let Some(expected) = self.expected_revision
            && expected != workspace.revision()
        {
            return Err(
                WorkspaceError::revision_conflict(expected, workspace.revision(), None).into(),
            );
        }
        let path = (self.locate)(&workspace).ok_or_else(|| target_not_found(self.missing, None))?;
        let source = workspace
            .file(&path)
            .and_then(|file| file.source())
            .unwrap_or_default();
        let updated = edit(source).map_err(|target| target_not_found(target, Some(&path)))?;
        let options = WriteOptions::default()
            .with_expected_revision(Some(workspace.revision()))
            .with_coalesce(false);
        let outcome = surface.manager().write_file(&path, &updated, options).await;
        finished(surface, outcome)
    }
}

fn target_not_found(target: PreviewTarget, path: Option<&str>) -> ToolCallError {
    let message = format!(
        "The web page has no {target} target to change; read the workspace and edit the file with web.applyPatch instead."
    );
    missing_target(target, path, message)
}
