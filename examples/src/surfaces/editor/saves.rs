//! `editor.saveFile` / `editor.saveAll`: durable, approval-gated folder writes (being built).

use std::sync::Arc;

use tool_context::Tool;

use super::EditorSurface;

/// The editor's save tools.
pub fn tools(_surface: &Arc<EditorSurface>) -> Vec<Tool> {
    Vec::new()
}
