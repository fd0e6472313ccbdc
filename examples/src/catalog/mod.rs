//! The studio's tool catalog, one module per tool family, registered into one registry.

pub mod inputs;
pub mod preview;
pub mod workspace;

use std::sync::Arc;

use live_code_editor::workspace::manager::WorkspaceDocumentManager;
use tool_context::Tool;

/// Safe arguments shown in approval previews (never file sources).
pub const SAFE_ARGUMENT_NAMES: &[&str] = &[
    "path",
    "fromPath",
    "toPath",
    "theme",
    "scenario",
    "discardChanges",
];

/// Every tool of the standalone studio catalog.
pub fn studio_tools(manager: &Arc<WorkspaceDocumentManager>) -> Vec<Tool> {
    let mut tools = workspace::tools(manager);
    tools.extend(preview::tools(manager));
    tools
}
