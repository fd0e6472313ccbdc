//! `editor.*`: the two-clock Live Code Editor surface on `/editor`.
//!
//! See [`state`] for the two clocks. Every preview-aware result carries [`EditorContext`]:
//! `activePath`, `workspaceRevision`, `documentRevision`, the acknowledged `preview`
//! (`{revision, status: waiting|ready|compiled|error, message?}`, `revision` being a document
//! revision), `storageMode` and optional `storageError`.

mod acks;
pub mod saves;
pub mod scenarios;
pub mod state;

use std::sync::Arc;

use axum::Router;
use tool_context::Tool;

use crate::agent::planner::{Intent, Plan, PlannedCall};
use crate::host::StudioState;

pub use acks::DocumentAcks;
pub use scenarios::Scenario;
pub use state::{
    DocumentOutcome, EditorContext, EditorDocument, EditorFileList, EditorStatus, EditorSurface,
};

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
