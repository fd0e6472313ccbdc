//! `web.*`: the realtime web-coding surface (being built; see issue 11).

use std::sync::Arc;

use axum::Router;
use tool_context::Tool;

use super::SurfaceDeps;
use crate::agent::planner::{Intent, Plan, PlannedCall};
use crate::host::StudioState;
use crate::host::bridge::PreviewViewers;

/// The realtime web-coding workspace.
#[derive(Debug, Default)]
pub struct WebSurface {
    viewers: PreviewViewers,
}

impl WebSurface {
    /// Opens the web-coding surface.
    pub async fn open(_deps: &SurfaceDeps) -> Result<Arc<Self>, String> {
        Ok(Arc::new(Self::default()))
    }

    /// Browser tabs rendering this surface's preview.
    pub fn viewers(&self) -> &PreviewViewers {
        &self.viewers
    }
}

/// Every `web.*` tool.
pub fn tools(_surface: &Arc<WebSurface>) -> Vec<Tool> {
    Vec::new()
}

/// The route's HTTP routes (page preview, acknowledgements).
pub fn routes() -> Router<Arc<StudioState>> {
    Router::new()
}

/// The local agent's plan on the web-coding route.
pub async fn plan(_surface: &WebSurface, _prompt: &str) -> Plan {
    Plan {
        intent: Intent::Status,
        calls: vec![PlannedCall::new("web.getWorkspace", serde_json::json!({}))],
    }
}
