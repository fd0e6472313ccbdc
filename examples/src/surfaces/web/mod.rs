//! `web.*`: the realtime web-coding surface on `/web`. A three-file workspace (index.html,
//! styles.css, app.js) with one monotonic revision clock, its own
//! [`WorkspaceDocumentManager`] (persisted under its own workspace id, memory mode when storage
//! fails) and preview bridge, a small tool palette, HTTP routes for its
//! sandboxed preview, and a deterministic local-agent planner.

pub(crate) mod drafts;
pub mod planner;
pub(crate) mod routes;
pub mod seed;
pub(crate) mod tools;

use std::sync::Arc;

use live_code_editor::workspace::manager::{ManagerOptions, WorkspaceDocumentManager};
use serde_json::{Value, json};

use super::SurfaceDeps;
use crate::kit::bridge::{PreviewViewers, StudioPreviewBridge};
use crate::kit::events::{EventHub, StudioEvent};
use crate::kit::stylesheet_run::StylesheetRun;

pub use planner::plan;
pub use routes::routes;
pub use tools::tools;

/// What the web surface's routes need from the host that mounts them (its preview routes take
/// a [`PreviewRoutes`](crate::kit::preview_http::PreviewRoutes) of the surface).
#[derive(Clone)]
pub struct WebRoutes {
    /// The surface itself.
    pub web: Arc<WebSurface>,
}

/// The surface's wire name (events, runs, the page's WebSocket).
pub const WEB_SURFACE: &str = "web";

/// Workspace id of the web-coding workspace in the studio's workspace database (the standalone
/// workspace is `default`, the Live Code Editor `editor`).
pub const WEB_WORKSPACE_ID: &str = "web";

/// Where the preview documents of the surface live (`/web/preview/<revision>`).
pub const WEB_PREVIEW_PREFIX: &str = "/web/preview";

/// The realtime web-coding workspace.
#[derive(Debug)]
pub struct WebSurface {
    manager: Arc<WorkspaceDocumentManager>,
    viewers: PreviewViewers,
    stylesheet_run: Arc<StylesheetRun>,
    hub: EventHub,
    drafts: drafts::WebDrafts,
}

impl WebSurface {
    /// Opens the web-coding surface: its workspace persisted in the data directory (memory
    /// mode when that fails), acknowledged by a `surface=web` page or compiled headlessly.
    pub async fn open(deps: &SurfaceDeps) -> Result<Arc<Self>, String> {
        Self::open_with(deps, ManagerOptions::default()).await
    }

    /// [`open`](Self::open) with explicit manager options (acknowledgement timeout, clock).
    pub async fn open_with(
        deps: &SurfaceDeps,
        options: ManagerOptions,
    ) -> Result<Arc<Self>, String> {
        let viewers = PreviewViewers::default();
        let hub = deps.hub.clone();
        let announce = hub.clone();
        let bridge = StudioPreviewBridge::with_announcer(
            viewers.clone(),
            format!("{WEB_PREVIEW_PREFIX}/assets/"),
            move |revision, refresh| {
                publish(&announce, json!({"revision": revision, "refresh": refresh}))
            },
        );
        let stylesheet_run = bridge.stylesheet_run();
        let repository =
            crate::kit::repository::open_repository(&deps.data_dir, WEB_WORKSPACE_ID).await;
        let manager = WorkspaceDocumentManager::open(
            seed::web_seed_files(),
            repository,
            Arc::new(bridge),
            options,
        )
        .await
        .map_err(|e| e.message)?;
        Ok(Arc::new(Self {
            manager: Arc::new(manager),
            viewers,
            stylesheet_run,
            hub,
            drafts: drafts::WebDrafts::default(),
        }))
    }

    /// Browser tabs rendering this surface's preview.
    pub fn viewers(&self) -> &PreviewViewers {
        &self.viewers
    }

    /// The revisions that differ in stylesheets only (live stylesheet edits).
    pub fn stylesheet_run(&self) -> &StylesheetRun {
        &self.stylesheet_run
    }

    /// The page's unsaved editor drafts.
    pub fn drafts(&self) -> &drafts::WebDrafts {
        &self.drafts
    }

    /// The workspace manager (one revision clock).
    pub fn manager(&self) -> &Arc<WorkspaceDocumentManager> {
        &self.manager
    }

    /// Tells the surface's pages about a change (`data` carries `revision` and maybe `preview`).
    pub fn publish(&self, data: Value) {
        publish(&self.hub, data);
    }
}

fn publish(hub: &EventHub, data: Value) {
    hub.publish(StudioEvent::Surface {
        surface: WEB_SURFACE.to_owned(),
        data,
    });
}
