//! `editor.*`: the two-clock Live Code Editor surface (being built; see issue 11).

pub mod saves;

use std::sync::Arc;

use axum::Router;
use tool_context::Tool;

use super::SurfaceDeps;
use crate::agent::planner::{Intent, Plan, PlannedCall};
use crate::host::StudioState;
use crate::host::bridge::PreviewViewers;

/// The Live Code Editor's state.
#[derive(Debug, Default)]
pub struct EditorSurface {
    viewers: PreviewViewers,
}

impl EditorSurface {
    /// Opens the editor surface.
    pub async fn open(_deps: &SurfaceDeps) -> Result<Arc<Self>, String> {
        Ok(Arc::new(Self::default()))
    }

    /// Browser tabs rendering this surface's preview.
    pub fn viewers(&self) -> &PreviewViewers {
        &self.viewers
    }
}

/// Every `editor.*` tool.
pub fn tools(surface: &Arc<EditorSurface>) -> Vec<Tool> {
    saves::tools(surface)
}

/// The editor's HTTP routes (page preview, acknowledgements).
pub fn routes() -> Router<Arc<StudioState>> {
    Router::new().merge(saves::routes())
}

/// The local agent's plan on the editor.
pub async fn plan(_surface: &EditorSurface, _prompt: &str) -> Plan {
    Plan {
        intent: Intent::Status,
        calls: vec![PlannedCall::new("editor.getStatus", serde_json::json!({}))],
    }
}
