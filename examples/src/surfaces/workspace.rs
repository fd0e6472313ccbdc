//! The standalone workspace surface (`workspace.*` + `preview.*` on `/`): its local-agent plan.
//! Its tools live in [`crate::catalog`] and its routes in the host, which owns that workspace.

use serde_json::Value;

use live_code_editor::file::FileContent;
use live_code_editor::preview::{PreviewSelection, find_preview_stylesheet_file};
use live_code_editor::workspace::Workspace;
use live_code_editor::workspace::manager::WorkspaceDocumentManager;

use crate::agent::planner::{Plan, PlannerContext, Stylesheet, plan as plan_prompt};

/// The local agent's plan for `prompt` on the standalone workspace. `metadata` is the run's
/// context metadata (for example a Design Mode selection).
pub async fn plan(
    manager: &WorkspaceDocumentManager,
    prompt: &str,
    metadata: Option<&Value>,
) -> Plan {
    let status = manager.status().await;
    // A selection that does not validate is no selection: the planner then explains that an
    // element must be selected.
    let selection = metadata
        .and_then(|metadata| metadata.get("selection"))
        .and_then(|value| PreviewSelection::from_value(value).ok());
    let workspace = manager.snapshot().await;
    let stylesheet = selection
        .as_ref()
        .and_then(|_| workspace_stylesheet(&workspace));
    let context = PlannerContext {
        active_path: Some(status.active_path.clone()),
        folder_linked: status.folder.connected,
        selection,
        stylesheet,
        workspace: Some(workspace),
    };
    plan_prompt(prompt, &context)
}

/// The stylesheet Design Mode edits go to (`styles.css`, else the first CSS file) and its source.
fn workspace_stylesheet(workspace: &Workspace) -> Option<Stylesheet> {
    let files: Vec<_> = workspace.files().cloned().collect();
    let sheet = find_preview_stylesheet_file(&files)?;
    match &sheet.content {
        FileContent::Text { source } => Some(Stylesheet {
            path: sheet.path.clone(),
            source: source.clone(),
        }),
        FileContent::Asset { .. } => None,
    }
}
