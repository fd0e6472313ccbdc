//! The studio's tool catalog, one module per tool family, registered into one registry.

pub mod inputs;
pub mod preview;
pub mod workspace;

use std::sync::Arc;

use live_code_editor::workspace::manager::WorkspaceDocumentManager;
use tool_context::Tool;

/// Arguments whose values approval cards show (never file sources: `source`, `search` and
/// `replace` appear only inside the diff the page asks for).
pub const SAFE_ARGUMENT_NAMES: &[&str] = &[
    "path",
    "fromPath",
    "toPath",
    "theme",
    "scenario",
    "discardChanges",
    "title",
    "subtitle",
    "description",
    "occurrence",
    "expectedRevision",
    "expectedDocumentRevision",
    "expectedWorkspaceRevision",
];

/// Every tool of the standalone studio catalog.
pub fn studio_tools(manager: &Arc<WorkspaceDocumentManager>) -> Vec<Tool> {
    let mut tools = workspace::tools(manager);
    tools.extend(preview::tools(manager));
    tools
}
