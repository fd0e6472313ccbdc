//! `workspace.*` + `preview.*`: the standalone workspace surface on `/`. One workspace with one
//! revision clock (persisted as workspace `default` of the studio's workspace database, and
//! linkable to a host folder whose writes are durable records), its tool catalog (`tools`
//! and `preview_tools`), its HTTP routes (`routes`) and its local-agent plan
//! ([`planner`]).

pub mod planner;
pub(crate) mod preview_tools;
pub(crate) mod routes;
pub(crate) mod tools;

use std::path::Path;
use std::sync::Arc;

use live_code_editor::WorkspaceFile;
use live_code_editor::workspace::bridge::{PreviewBridge, PreviewSnapshot};
use live_code_editor::workspace::folder::FolderAdapter;
use live_code_editor::workspace::manager::{ManagerOptions, WorkspaceDocumentManager};
use live_code_editor::workspace::{ImportGuard, WorkspaceError, WorkspaceErrorCode};
use serde_json::Value;
use tool_context::Tool;

use super::SurfaceDeps;
use crate::agent::plan::Plan;
use crate::kit::bridge::{PreviewViewers, StudioPreviewBridge};
use crate::kit::durable_folder::DurableSaves;
use crate::kit::events::EventHub;
use crate::kit::preview_http::PreviewDocuments;
use crate::kit::preview_http::serving::{PreviewSurface, compile_for};
use crate::kit::repository::open_repository;
use crate::kit::stylesheet_run::StylesheetRun;
use crate::seed::SEED_FILES;

pub use routes::{WorkspaceRoutes, routes};

/// Workspace id of the standalone workspace in the studio's workspace database (the editor's
/// is `editor`, the web-coding surface's `web`).
pub const WORKSPACE_ID: &str = "default";

/// The seed workspace files.
pub fn seed_files() -> Vec<WorkspaceFile> {
    SEED_FILES
        .iter()
        .map(|(path, source)| WorkspaceFile::text(*path, *source))
        .collect()
}

/// The standalone workspace: its manager, preview viewers and live stylesheet run, and the
/// durable folder writes its folder links use.
#[derive(Debug)]
pub struct WorkspaceSurface {
    manager: Arc<WorkspaceDocumentManager>,
    viewers: PreviewViewers,
    stylesheet_run: Arc<StylesheetRun>,
    saves: DurableSaves,
    hub: EventHub,
}

impl WorkspaceSurface {
    /// Opens the workspace persisted in the data directory. Its bridge announces revisions on
    /// the hub, with the stylesheets of a stylesheet-only revision compiled into `previews`
    /// (assets under the `preview_key`ed route); `wrap` lets the host watch what it publishes.
    pub async fn open(
        deps: &SurfaceDeps,
        previews: Arc<PreviewDocuments>,
        preview_key: String,
        wrap: impl FnOnce(StudioPreviewBridge) -> Arc<dyn PreviewBridge>,
    ) -> Result<Arc<Self>, String> {
        let viewers = PreviewViewers::default();
        let bridge = StudioPreviewBridge::new(viewers.clone(), deps.hub.clone())
            .announcing_stylesheets(announced_stylesheets(previews, preview_key));
        let stylesheet_run = bridge.stylesheet_run();
        let repository = open_repository(&deps.data_dir, WORKSPACE_ID).await;
        let manager = WorkspaceDocumentManager::open(
            seed_files(),
            repository,
            wrap(bridge),
            ManagerOptions::default(),
        )
        .await
        .map_err(|e| e.message)?;
        Ok(Arc::new(Self {
            manager: Arc::new(manager),
            viewers,
            stylesheet_run,
            saves: deps.saves.clone(),
            hub: deps.hub.clone(),
        }))
    }

    /// The workspace manager (one revision clock).
    pub fn manager(&self) -> &Arc<WorkspaceDocumentManager> {
        &self.manager
    }

    /// Browser tabs rendering this surface's preview.
    pub fn viewers(&self) -> &PreviewViewers {
        &self.viewers
    }

    /// The revisions that differ in stylesheets only (live stylesheet edits).
    pub fn stylesheet_run(&self) -> &StylesheetRun {
        &self.stylesheet_run
    }

    /// Links `folder` at start-up. Unsaved work stored from that same folder is resumed (kept
    /// dirty, and logged) instead of being replaced by the folder's content; otherwise the
    /// folder is imported, which is refused over unsaved work from elsewhere unless
    /// `discard_changes`.
    pub async fn link_start_folder(
        &self,
        folder: &Path,
        discard_changes: bool,
    ) -> Result<(), String> {
        let adapter: Arc<dyn FolderAdapter> =
            Arc::new(self.saves.open_folder(folder).map_err(|e| describe(&e))?);
        if !discard_changes
            && let Some(resumed) = self
                .manager
                .resume_folder(adapter.clone())
                .await
                .map_err(|e| describe(&e))?
        {
            tracing::warn!(
                folder = %resumed.folder_name,
                unsaved = resumed.unsaved_count,
                paths = %resumed.unsaved_paths.join(", "),
                "kept the unsaved edits of the last session; they are not saved to the folder yet"
            );
            return Ok(());
        }
        let guard = ImportGuard::default().discarding(discard_changes);
        self.manager.open_folder(adapter, guard).await.map_err(|e| {
            let hint = if e.code == WorkspaceErrorCode::WorkspaceFolderStateConflict {
                " Start without --folder to keep working on them, or add --discard-changes to replace them."
            } else {
                ""
            };
            format!("not opening {}: {}{hint}", folder.display(), describe(&e))
        })?;
        Ok(())
    }
}

fn describe(error: &WorkspaceError) -> String {
    format!("{} ({})", error.message, error.code.as_str())
}

/// The stylesheets a published revision is announced with (see
/// [`StudioPreviewBridge::announcing_stylesheets`]), compiled into the cache its document and
/// stylesheet route are served from.
fn announced_stylesheets(
    previews: Arc<PreviewDocuments>,
    key: String,
) -> impl Fn(&PreviewSnapshot) -> Option<Vec<Arc<str>>> + Send + Sync + 'static {
    move |snapshot| {
        let files = snapshot.files.iter().map(|file| (**file).clone()).collect();
        let compile = compile_for::<WorkspaceSurface>(files, snapshot.revision, &key);
        let served = previews.compile_now(WorkspaceSurface::NAME, snapshot.revision, compile)?;
        served.stylesheets.clone()
    }
}

/// Every `workspace.*` and `preview.*` tool, sharing the surface's manager.
pub fn tools(surface: &WorkspaceSurface) -> Vec<Tool> {
    let mut tools = tools::tools(&surface.manager);
    tools.extend(preview_tools::tools(&surface.manager));
    tools
}

/// The local agent's plan for `prompt` on the workspace (see [`planner`]). `metadata` is the
/// run's context metadata (for example a Design Mode selection).
pub async fn plan(surface: &WorkspaceSurface, prompt: &str, metadata: Option<&Value>) -> Plan {
    let context = planner::context(&surface.manager, metadata).await;
    planner::plan(prompt, &context)
}
