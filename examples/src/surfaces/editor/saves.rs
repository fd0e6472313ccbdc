//! `editor.saveFile` / `editor.saveAll`: durable, approval-gated folder writes (being built).

use std::sync::Arc;

use axum::Router;
use tool_context::Tool;

use super::EditorSurface;
use crate::host::StudioState;

/// The editor's save tools.
pub fn tools(_surface: &Arc<EditorSurface>) -> Vec<Tool> {
    Vec::new()
}

/// The save records' HTTP routes (listing and recovering unknown saves).
pub fn routes() -> Router<Arc<StudioState>> {
    Router::new()
}
