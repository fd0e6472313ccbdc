//! `editor.*`: the two-clock Live Code Editor surface on `/editor`.
//!
//! The editor has its own workspace (files persisted under workspace id `editor` of the
//! studio's workspace database) and a *document* clock for what its preview shows: see
//! `state`. Scenarios (`scenarios`) are data handed to the preview, never executed source;
//! there is no tool that runs scripts.
//!
//! # Result context
//!
//! Every preview-aware result carries [`EditorContext`] (flattened into the result):
//!
//! ```json
//! {"activePath": "index.html", "workspaceRevision": 4, "documentRevision": 7,
//!  "preview": {"revision": 7, "status": "ready"},
//!  "storageMode": "sqlite", "storageError": "only in memory mode"}
//! ```
//!
//! `preview.revision` is a document revision; `preview.status` is `waiting`, `ready` (a
//! browser iframe rendered it), `compiled` (acknowledged headlessly, no page attached) or
//! `error` (with `message`). A stale `expectedDocumentRevision` fails with
//! `WORKSPACE_REVISION_CONFLICT`, details `{expectedRevision, currentRevision, clock:
//! "document"}`, and changes nothing.
//!
//! # Routes
//!
//! * `GET /editor/preview/{documentRevision}`: the compiled preview of that document revision
//!   (CSP [`PREVIEW_CSP`](crate::kit::preview_http::PREVIEW_CSP), `no-store`); `410 Gone` with a
//!   text body once superseded. The scenario is on `<html data-scenario="counter">` and in
//!   `<script type="application/json" id="editor-scenario">{"name": "counter", "data": {..}}</script>`.
//!   Its bridge posts `context-action.preview.ready` / `.error` with the document revision.
//! * `GET /editor/preview/{documentRevision}/assets/{path}`: a file of the editor workspace
//!   (also for a superseded revision whose document took newer stylesheets in place).
//! * `GET /api/editor/preview/stylesheets/{documentRevision}?from=R` ->
//!   `{"revision", "from", "stylesheets": [<css>…]}`: the stylesheets a preview showing
//!   revision R swaps in, when only stylesheets changed since R and the scenario did not (the
//!   page keeps its state); `409 STUDIO_PREVIEW_RELOAD_REQUIRED` when it must reload, `410`
//!   once the revision was superseded.
//! * `POST /api/editor/preview/ack` with the iframe's bridge message
//!   (`{"type": "context-action.preview.ready", "revision": 7}` or
//!   `{"type": "context-action.preview.error", "revision": 7, "message": "..."}`) ->
//!   `{"accepted": bool, "revision": 7, "preview": {"revision": 7, "status": "ready"}}`;
//!   stale revisions are ignored (`accepted: false`); `400 STUDIO_INVALID_PREVIEW_MESSAGE`
//!   when the body is not a bridge message.
//! * `GET /api/editor/state` ->
//!   `{"status": <editor.getStatus result>, "files": [<FileSummary>], "document":
//!   <editor.getDocument result or {"error": {code, message, ...}}>, "scenarios": [{"name",
//!   "title", "description"}], "approvals": [<pending approval snapshots>]}`.
//! * `POST /api/editor/folder/open` `{"path": "/abs/dir", "expectedWorkspaceRevision"?: n}` ->
//!   `{"import": {operation, revision, activePath, fileCount, skipped, folder, preview,
//!   storageMode}, "context": <EditorContext>}`; a bad path is `400 {"error": ...}`, an empty
//!   or unsupported folder or a stale revision `409 {"error": ...}` with the workspace untouched.
//!
//! # Events
//!
//! Every change is published as `{"type": "surface", "surface": "editor", "data": {...}}` with
//! `data` = `{"change": "document"|"preview"|"workspace", "scenario": "counter",
//! "dirtyPaths": [...], ...EditorContext}`. A page attached with `?client=ui&surface=editor`
//! loads `/editor/preview/{data.documentRevision}` on `document` changes and forwards the
//! iframe's acknowledgement; while attached, mutations wait for that browser acknowledgement.

pub mod planner;
pub(crate) mod routes;
pub(crate) mod save_routes;
pub(crate) mod save_tools;
pub mod saves;
pub(crate) mod scenarios;
pub(crate) mod state;
pub(crate) mod tools;

use std::sync::Arc;

use axum::Router;
use axum::extract::FromRef;
use tool_context::Tool;

use crate::agent::plan::Plan;
use crate::kit::preview_http::PreviewRoutes;
use tool_context::ApprovalQueue;

pub use scenarios::Scenario;
pub use state::{
    DocumentOutcome, EditorContext, EditorDocument, EditorFileList, EditorStatus, EditorSurface,
};

/// Every `editor.*` tool.
pub fn tools(surface: &Arc<EditorSurface>) -> Vec<Tool> {
    let mut tools = tools::tools(surface);
    tools.extend(save_tools::tools(surface));
    tools
}

/// What the editor's routes need from the host that mounts them (its preview routes take a
/// [`PreviewRoutes`] of the surface).
#[derive(Clone)]
pub struct EditorRoutes {
    /// The surface itself.
    pub editor: Arc<EditorSurface>,
    /// Pending approvals (the page's state snapshot lists them).
    pub approvals: ApprovalQueue,
}

/// The editor's HTTP routes (preview, acknowledgements, page state, folder, saves), on any
/// host state the [`EditorRoutes`] can be taken from.
pub fn routes<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    EditorRoutes: FromRef<S>,
    PreviewRoutes<EditorSurface>: FromRef<S>,
{
    routes::routes().merge(save_routes::routes())
}

/// The local agent's plan on the editor (see [`planner`]).
pub async fn plan(surface: &EditorSurface, prompt: &str) -> Plan {
    let context = surface.result_context().await;
    let workspace = surface.manager().snapshot().await;
    planner::plan_prompt(prompt, &context.active_path, Some(&workspace))
}
