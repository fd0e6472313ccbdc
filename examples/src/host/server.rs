//! The studio's HTTP API, WebSocket and embedded UI.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use live_code_editor::preview::{IncrementalPreviewCompiler, compile_preview};
use live_code_editor::workspace::bridge::PreviewSnapshot;
use live_code_editor::workspace::{ImportGuard, WorkspaceErrorCode};
use serde::Deserialize;
use serde_json::{Value, json};
use tool_context::{ApprovalDecision, ToolCallOptions};
use tool_protocol::{ToolCallContext, ToolCallMode, ToolCallSource, ToolListResult};

use super::{StudioState, changes, review};
use crate::agent::runner::{RunRequest, run_plan};
use crate::host::runs::run_metadata;
use crate::kit::events::StudioEvent;
use crate::kit::preview_http;
use crate::kit::responses::{api_error, no_store_json};
use crate::kit::security;
use crate::surfaces::Surface;

/// Session id of direct calls from the studio page.
pub const UI_SESSION_ID: &str = "studio-ui";

/// Builds the router with every route behind the security guard.
pub fn router(state: Arc<StudioState>) -> Router {
    let api = Router::new()
        .route("/", get(index))
        .route("/ui/{*file}", get(ui_asset))
        .route("/api/state", get(studio_state))
        .route("/api/launch", get(launch))
        .route("/api/tools", get(list_tools))
        .route("/api/tools/call", post(call_tool))
        .route("/api/tools/effects", get(review::tool_effects))
        .route("/api/approvals", get(pending_approvals))
        .route("/api/approvals/deny-all", post(deny_all_approvals))
        .route("/api/approvals/{id}", post(resolve_approval))
        .route("/api/approvals/{id}/diff", get(review::approval_diff))
        .route("/api/changes", get(changes::unsaved_changes))
        .route("/api/changes/revert-hunk", post(changes::revert_hunk))
        .route("/api/trace", get(trace_rows).delete(clear_trace))
        .route("/api/sessions", get(trace_sessions))
        .route("/api/agent/runs", post(start_run))
        .route("/api/agent/runs/{id}", get(run_status))
        .route("/api/agent/runs/{id}/cancel", post(cancel_run))
        .route("/api/settings", get(get_settings).put(put_settings))
        .route("/api/settings/test", post(test_connection))
        .route("/api/models", get(list_models))
        .route("/api/preview/ack", post(preview_ack))
        .route("/api/preview/diagnostics", get(preview_diagnostics))
        .route(
            "/api/preview/stylesheets/{revision}",
            get(preview_stylesheets),
        )
        .route("/api/export", get(export_html))
        .route("/api/folder/open", post(open_folder))
        .merge(super::upload::routes())
        .merge(super::mcp_servers::routes())
        .route("/api/events", get(events))
        .route("/preview/{revision}", get(preview_document))
        .route("/preview/{revision}/assets/{*path}", get(preview_asset))
        .route("/editor", get(editor_page))
        .route("/web", get(web_page))
        .merge(crate::surfaces::editor::routes())
        .merge(crate::surfaces::web::routes())
        .merge(super::selection::routes())
        .with_state(state.clone())
        .merge(super::mcp::router(&state))
        .fallback(not_found);
    api.layer(middleware::from_fn(super::rejections::code_rejections))
        .layer(middleware::from_fn_with_state(
            state.security.clone(),
            security::guard,
        ))
        .layer(middleware::from_fn(security::protect_responses))
}

/// Any path no route serves (`/favicon.ico` included: the pages link `/ui/favicon.svg`). It is
/// behind the same Host/Origin/token guard as every route, and says nothing else.
async fn not_found() -> Response {
    api_error(
        StatusCode::NOT_FOUND,
        "STUDIO_NOT_FOUND",
        "Nothing is served at this path.",
    )
}

async fn index(State(state): State<Arc<StudioState>>) -> Response {
    page(&state, "index.html")
}

async fn editor_page(State(state): State<Arc<StudioState>>) -> Response {
    page(&state, "editor.html")
}

async fn web_page(State(state): State<Arc<StudioState>>) -> Response {
    page(&state, "web.html")
}

/// An embedded studio page with this launch's token filled in.
fn page(state: &StudioState, file: &str) -> Response {
    let Some(page) = super::ui::asset(file) else {
        return api_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "STUDIO_UI_MISSING",
            "The studio page is not embedded.",
        );
    };
    let html = String::from_utf8_lossy(&page)
        .replace("{{STUDIO_TOKEN}}", state.security.token())
        .replace("{{STUDIO_LAUNCH}}", state.security.launch());
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        html,
    )
        .into_response()
}

async fn ui_asset(Path(file): Path<String>) -> Response {
    match super::ui::asset(&file) {
        Some(bytes) => (
            [(header::CONTENT_TYPE, super::ui::content_type(&file))],
            bytes,
        )
            .into_response(),
        None => api_error(
            StatusCode::NOT_FOUND,
            "STUDIO_NOT_FOUND",
            "No such studio asset.",
        ),
    }
}

async fn studio_state(State(state): State<Arc<StudioState>>) -> Json<Value> {
    let status = state.manager.status().await;
    let files = state.manager.list_files().await;
    Json(json!({
        "liveStylesheetsSince": state.stylesheet_run.reload_boundary(status.revision),
        "status": status,
        "files": files,
        "approvals": state.approvals.snapshot(),
        "sessions": state.trace.sessions(),
        "settings": state.settings.public_view(),
    }))
}

/// `GET /api/launch`: this launch's public id (no token needed: a page from an earlier launch
/// asks it to learn that it must reload).
async fn launch(State(state): State<Arc<StudioState>>) -> Response {
    no_store_json(&json!({"launch": state.security.launch()}))
}

async fn list_tools(State(state): State<Arc<StudioState>>) -> Json<ToolListResult> {
    Json(ToolListResult {
        tools: state.registry.list_all_tools(),
        next_cursor: None,
    })
}

/// `POST /api/tools/call`: a tools/call request from the page, run as an explicit local
/// (`direct`) action through the same registry path as every other caller.
async fn call_tool(
    State(state): State<Arc<StudioState>>,
    Json(request): Json<Value>,
) -> Json<Value> {
    Json(call_as_page(&state, &request).await)
}

/// Runs a tools/call `request` as the page does: a local, direct call in the page's session.
pub(super) async fn call_as_page(state: &StudioState, request: &Value) -> Value {
    let context = ToolCallContext::new(ToolCallSource::Local, ToolCallMode::Direct)
        .with_session(UI_SESSION_ID);
    let result = state
        .registry
        .call_tool_value(request, ToolCallOptions::default().with_context(context))
        .await;
    serde_json::to_value(result).unwrap_or(Value::Null)
}

async fn pending_approvals(State(state): State<Arc<StudioState>>) -> Json<Value> {
    Json(serde_json::to_value(state.approvals.snapshot()).unwrap_or(Value::Null))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ApprovalBody {
    decision: String,
    /// With `allow`: the hunks of the narrowable file the person accepted (the rest are
    /// rejected), and the digest of the diff they were chosen from.
    #[serde(default)]
    hunks: Option<Vec<usize>>,
    #[serde(default)]
    digest: Option<String>,
    /// With `allow`: the fingerprint of the call's arguments the person saw
    /// (`argumentsDigest` of `GET /api/approvals/{id}/diff`); a call whose arguments differ is
    /// refused. Optional: a client that shows no arguments approves without it.
    #[serde(default)]
    arguments_digest: Option<String>,
}

pub(super) fn approval_not_found() -> Response {
    api_error(
        StatusCode::NOT_FOUND,
        "STUDIO_APPROVAL_NOT_FOUND",
        "No pending approval has that id.",
    )
}

async fn resolve_approval(
    State(state): State<Arc<StudioState>>,
    Path(id): Path<String>,
    Json(body): Json<ApprovalBody>,
) -> Response {
    let Some(decision) = parse_decision(&body.decision) else {
        return api_error(
            StatusCode::BAD_REQUEST,
            "STUDIO_INVALID_DECISION",
            "decision must be \"allow\" or \"deny\".",
        );
    };
    if let (ApprovalDecision::Allow, Some(seen)) = (decision, &body.arguments_digest)
        && let Err(refusal) = review::check_arguments_digest(&state, &id, seen)
    {
        return refusal;
    }
    if let (ApprovalDecision::Allow, Some(hunks)) = (decision, &body.hunks) {
        return review::resolve_hunks(&state, &id, hunks, body.digest.as_deref()).await;
    }
    if state.approvals.resolve(&id, decision) {
        Json(json!({"resolved": id})).into_response()
    } else {
        approval_not_found()
    }
}

async fn deny_all_approvals(State(state): State<Arc<StudioState>>) -> Json<Value> {
    Json(json!({"denied": state.approvals.deny_all()}))
}

#[derive(Deserialize)]
struct TraceQuery {
    session: Option<String>,
}

async fn trace_rows(
    State(state): State<Arc<StudioState>>,
    Query(query): Query<TraceQuery>,
) -> Json<Value> {
    Json(
        json!({"rows": state.trace.rows(query.session.as_deref()), "sessions": state.trace.sessions()}),
    )
}

/// `GET /api/sessions`: what started each session of the trace, for the session selector (kept
/// out of `GET /api/trace`, whose rows never hold a prompt).
async fn trace_sessions(State(state): State<Arc<StudioState>>) -> Json<Value> {
    Json(json!({"sessions": state.trace.named_sessions()}))
}

async fn clear_trace(State(state): State<Arc<StudioState>>) -> Response {
    if state.runs.any_active() {
        return api_error(
            StatusCode::CONFLICT,
            "STUDIO_RUN_ACTIVE",
            "The trace cannot be cleared while an agent run is active.",
        );
    }
    state.trace.clear();
    StatusCode::NO_CONTENT.into_response()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RunBody {
    prompt: String,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    metadata: Option<Value>,
    /// Budget of each tool call of the run (approval wait included), in milliseconds.
    #[serde(default)]
    timeout_ms: Option<i64>,
    /// `workspace` (default), `editor` or `web`: whose catalog and planner the run uses.
    #[serde(default)]
    surface: Option<String>,
}

/// Longest accepted prompt, in characters.
pub const MAX_PROMPT_CHARS: usize = 4_000;

async fn start_run(State(state): State<Arc<StudioState>>, Json(body): Json<RunBody>) -> Response {
    let prompt = body.prompt.trim().to_owned();
    if prompt.is_empty() || prompt.chars().count() > MAX_PROMPT_CHARS {
        return api_error(
            StatusCode::BAD_REQUEST,
            "STUDIO_INVALID_PROMPT",
            "The prompt must be 1 to 4,000 characters.",
        );
    }
    let Some(surface) = Surface::parse(body.surface.as_deref().unwrap_or("workspace")) else {
        return api_error(
            StatusCode::BAD_REQUEST,
            "STUDIO_INVALID_SURFACE",
            "surface must be \"workspace\", \"editor\" or \"web\".",
        );
    };
    let metadata = match checked_run_metadata(body.metadata) {
        Ok(metadata) => metadata,
        Err(response) => return response,
    };
    let agent = body.agent.as_deref().unwrap_or("local");
    if agent != "local" {
        return super::openrouter::start(state, surface, prompt, metadata).await;
    }
    let (view, cancellation) = state.runs.begin("local", &prompt);
    state.note_page_run(&view.run_id, surface);
    let response = Json(json!(view)).into_response();
    let run = LocalRun {
        surface,
        prompt,
        metadata,
        call_timeout_ms: body.timeout_ms,
    };
    tokio::spawn(run_local(state, view, cancellation, run));
    response
}

/// Largest run metadata accepted, serialized (a Design Mode selection is bounded far lower).
pub const MAX_RUN_METADATA_BYTES: usize = 8 * 1024;

/// Run metadata reaches every tool call's context, so it is bounded here: an object of at most
/// [`MAX_RUN_METADATA_BYTES`], whose `selection` (if any) passes the Design Mode validator and is
/// replaced by its normalized form.
fn checked_run_metadata(metadata: Option<Value>) -> Result<Option<Value>, Response> {
    let Some(metadata) = metadata.filter(|value| !value.is_null()) else {
        return Ok(None);
    };
    let Value::Object(mut map) = metadata else {
        return Err(api_error(
            StatusCode::BAD_REQUEST,
            "STUDIO_INVALID_METADATA",
            "metadata must be a JSON object.",
        ));
    };
    if serde_json::to_vec(&map).map_or(usize::MAX, |bytes| bytes.len()) > MAX_RUN_METADATA_BYTES {
        return Err(api_error(
            StatusCode::BAD_REQUEST,
            "STUDIO_INVALID_METADATA",
            "metadata must be at most 8,192 bytes of JSON.",
        ));
    }
    if let Some(selection) = map.get("selection") {
        let selection = live_code_editor::preview::PreviewSelection::from_value(selection)
            .map_err(|error| super::selection::invalid_selection(&error))?;
        map.insert("selection".into(), selection.to_metadata());
    }
    Ok(Some(Value::Object(map)))
}

/// What a local-agent run was asked to do.
struct LocalRun {
    surface: Surface,
    prompt: String,
    metadata: Option<Value>,
    call_timeout_ms: Option<i64>,
}

async fn run_local(
    state: Arc<StudioState>,
    view: super::runs::RunView,
    cancellation: tokio_util::sync::CancellationToken,
    run: LocalRun,
) {
    let LocalRun {
        surface,
        prompt,
        metadata,
        call_timeout_ms,
    } = run;
    let listed = state
        .registry
        .list_all_tools()
        .iter()
        .filter(|tool| surface.owns_tool(&tool.name))
        .count();
    state.runs.record_listing(&view, listed);
    let planned = state.plan(surface, &prompt, metadata.as_ref()).await;
    let (runs, run_id) = (state.runs.clone(), view.run_id.clone());
    let request = RunRequest {
        registry: &state.registry,
        run_id: &view.run_id,
        session_id: &view.session_id,
        cancellation,
        metadata: run_metadata(metadata.as_ref()),
        call_timeout_ms,
        events: Some(Arc::new(move |event| runs.stream(&run_id, event))),
    };
    let report = run_plan(&planned, request).await;
    state.runs.finish(
        &view.run_id,
        &report.outcome,
        serde_json::to_value(&report).unwrap_or(Value::Null),
    );
}

async fn run_status(State(state): State<Arc<StudioState>>, Path(id): Path<String>) -> Response {
    match state.runs.get(&id) {
        Some(view) => Json(json!(view)).into_response(),
        None => api_error(
            StatusCode::NOT_FOUND,
            "STUDIO_RUN_NOT_FOUND",
            "No run has that id.",
        ),
    }
}

async fn cancel_run(State(state): State<Arc<StudioState>>, Path(id): Path<String>) -> Response {
    if state.runs.cancel(&id) {
        Json(json!({"cancelled": id})).into_response()
    } else {
        api_error(
            StatusCode::NOT_FOUND,
            "STUDIO_RUN_NOT_FOUND",
            "No unfinished run has that id.",
        )
    }
}

async fn get_settings(State(state): State<Arc<StudioState>>) -> Json<Value> {
    Json(state.settings.public_view())
}

async fn put_settings(
    State(state): State<Arc<StudioState>>,
    Json(update): Json<Value>,
) -> Response {
    let update = match serde_json::from_value::<super::settings::SettingsUpdate>(update) {
        Ok(update) => update,
        Err(error) => {
            return api_error(
                StatusCode::BAD_REQUEST,
                "STUDIO_INVALID_SETTINGS",
                &error.to_string(),
            );
        }
    };
    match state.settings.update(update) {
        Ok(view) => {
            state.hub.publish(StudioEvent::Settings {
                settings: view.clone(),
            });
            Json(view).into_response()
        }
        Err(message) => api_error(StatusCode::BAD_REQUEST, "STUDIO_INVALID_SETTINGS", &message),
    }
}

/// `GET /api/models`: the configured provider's catalog, tool-capable models where the
/// provider says which those are (a key only where the profile needs one).
async fn list_models(State(state): State<Arc<StudioState>>) -> Response {
    catalog_response(state.settings.catalog_config(None)).await
}

/// `POST /api/settings/test`: the dialog's unsaved provider, base URL and key applied to the
/// settings (same validation and key rules as saving, nothing saved), then its catalog read:
/// the models, or the coded failure.
async fn test_connection(
    State(state): State<Arc<StudioState>>,
    Json(draft): Json<Value>,
) -> Response {
    let draft = match serde_json::from_value::<super::settings::SettingsUpdate>(draft) {
        Ok(draft) => draft,
        Err(error) => {
            return api_error(
                StatusCode::BAD_REQUEST,
                "STUDIO_INVALID_SETTINGS",
                &error.to_string(),
            );
        }
    };
    catalog_response(state.settings.catalog_config(Some(draft))).await
}

/// Reads a catalog with `config`: `{provider, toolSupport, models: [{id, label, free, tools}]}`
/// where `tools` is `null` when the provider does not say; a failure is its coded error (400
/// for configuration, 502 for the provider).
async fn catalog_response(
    config: Result<openrouter_tool_loop::OpenRouterConfig, openrouter_tool_loop::OpenRouterError>,
) -> Response {
    let config = match config {
        Ok(config) => config,
        Err(error) => return api_error(StatusCode::BAD_REQUEST, error.code, &error.message),
    };
    let profile = config.provider;
    let client = match openrouter_tool_loop::OpenRouterClient::new(config) {
        Ok(client) => client,
        Err(error) => return api_error(StatusCode::BAD_REQUEST, error.code, &error.message),
    };
    match client
        .list_models(&tokio_util::sync::CancellationToken::new())
        .await
    {
        Ok(models) => {
            // OpenRouter's catalog is filtered by tool support; Ollama marks the models it
            // knows have tools; the others do not say.
            let says = profile.is_openrouter();
            let models: Vec<Value> = models
                .iter()
                .map(|model| {
                    let tools = (model.supports_tools() || says).then_some(model.supports_tools());
                    json!({"id": model.id, "label": model.label(), "free": model.is_free(), "tools": tools})
                })
                .collect();
            let tool_support = match profile {
                openrouter_tool_loop::ProviderProfile::OpenRouter => "reported",
                openrouter_tool_loop::ProviderProfile::Ollama => "capabilities",
                _ => "unknown",
            };
            Json(json!({"provider": profile.id(), "toolSupport": tool_support, "models": models}))
                .into_response()
        }
        Err(error) => {
            let status =
                if error.code == openrouter_tool_loop::codes::OPENROUTER_CONFIGURATION_ERROR {
                    StatusCode::BAD_REQUEST
                } else {
                    StatusCode::BAD_GATEWAY
                };
            api_error(status, error.code, &error.message)
        }
    }
}

/// `POST /api/preview/ack`: the page forwards its iframe's bridge message (an acknowledgement
/// or a runtime error report); stale revisions are ignored by the manager.
async fn preview_ack(
    State(state): State<Arc<StudioState>>,
    Json(message): Json<Value>,
) -> Response {
    if let Some(response) =
        crate::kit::preview_http::runtime_error(state.manager.preview_acks(), &message)
    {
        return response;
    }
    let (revision, status) = match crate::kit::preview_http::acknowledgement(&message) {
        Ok(acknowledgement) => acknowledgement,
        Err(response) => return response,
    };
    let accepted = state.manager.acknowledge_preview(revision, status);
    state.hub.publish(StudioEvent::Preview {
        state: json!(state.manager.preview_acks().current()),
    });
    Json(json!({"accepted": accepted, "revision": revision})).into_response()
}

/// `GET /api/preview/diagnostics`: the preview compiler's diagnostics (unresolved references,
/// budget notes) for the current revision, so the page can list them beside the preview.
async fn preview_diagnostics(State(state): State<Arc<StudioState>>) -> Response {
    let workspace = state.manager.snapshot().await;
    match crate::catalog::preview::workspace_diagnostics(&workspace).await {
        Ok(diagnostics) => {
            Json(json!({"revision": workspace.revision(), "diagnostics": diagnostics}))
                .into_response()
        }
        Err(error) => api_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            &error.code,
            &error.message,
        ),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OpenFolderBody {
    path: String,
    #[serde(default)]
    expected_revision: Option<u64>,
    #[serde(default)]
    discard_changes: bool,
}

/// `POST /api/folder/open {path, expectedRevision?, discardChanges?}`: imports a host folder
/// (same limits as every folder import) and links it for save and reload. An empty or
/// unsupported folder leaves the workspace untouched, and so does any open over unsaved edits
/// without `discardChanges: true` (`WORKSPACE_FOLDER_STATE_CONFLICT`, listing them).
async fn open_folder(
    State(state): State<Arc<StudioState>>,
    Json(body): Json<OpenFolderBody>,
) -> Response {
    let adapter = match state.saves.open_folder(body.path.trim()) {
        Ok(adapter) => Arc::new(adapter),
        Err(error) => {
            let status = if error.code == WorkspaceErrorCode::WorkspaceFolderNotFound {
                StatusCode::NOT_FOUND
            } else {
                StatusCode::BAD_REQUEST
            };
            return (
                status,
                Json(json!({"error": tool_protocol::ToolCallError::from(error)})),
            )
                .into_response();
        }
    };
    match state
        .manager
        .open_folder(
            adapter,
            ImportGuard::at(body.expected_revision).discarding(body.discard_changes),
        )
        .await
    {
        Ok(outcome) => Json(json!(outcome)).into_response(),
        Err(error) => (
            StatusCode::CONFLICT,
            Json(json!({"error": tool_protocol::ToolCallError::from(error)})),
        )
            .into_response(),
    }
}

async fn export_html(State(state): State<Arc<StudioState>>) -> Response {
    let workspace = state.manager.snapshot().await;
    let files: Vec<_> = workspace.files().cloned().collect();
    let options = crate::kit::preview_http::export_options();
    crate::kit::preview_http::export(compile_preview(&files, &options))
}

async fn preview_document(
    State(state): State<Arc<StudioState>>,
    Path(revision): Path<u64>,
) -> Response {
    let workspace = state.manager.snapshot().await;
    if workspace.revision() != revision {
        return crate::kit::preview_http::superseded(revision, workspace.revision());
    }
    let compile = compile_revision(&state, &workspace);
    preview_http::cached_document(&state.previews, "workspace", revision, compile).await
}

/// The compile of `workspace`'s revision that its preview document is.
fn compile_revision(
    state: &StudioState,
    workspace: &live_code_editor::workspace::Workspace,
) -> impl FnOnce(&mut IncrementalPreviewCompiler) -> preview_http::ServedPreview + Send + 'static {
    let files = workspace.files().cloned().collect();
    compile_files(workspace.revision(), files, state.security.preview_key())
}

/// The compile of revision `revision` made of `files`, its assets under the `key`ed route.
fn compile_files(
    revision: u64,
    files: Vec<live_code_editor::WorkspaceFile>,
    key: &str,
) -> impl FnOnce(&mut IncrementalPreviewCompiler) -> preview_http::ServedPreview + Send + 'static {
    let assets = preview_http::asset_prefix("/preview", revision, key);
    let options = preview_http::preview_options(Some(revision), assets);
    move |compiler| compiler.compile(&files, &options).into()
}

/// The stylesheets a published revision is announced with (see
/// [`crate::kit::bridge::StudioPreviewBridge::announcing_stylesheets`]), compiled into the
/// cache its document and stylesheet route are served from.
pub fn announced_stylesheets(
    previews: Arc<preview_http::PreviewDocuments>,
    key: String,
) -> impl Fn(&PreviewSnapshot) -> Option<Vec<Arc<str>>> + Send + Sync + 'static {
    move |snapshot| {
        let files = snapshot.files.iter().map(|file| (**file).clone()).collect();
        let compile = compile_files(snapshot.revision, files, &key);
        let served = previews.compile_now("workspace", snapshot.revision, compile)?;
        served.stylesheets.clone()
    }
}

/// `GET /api/preview/stylesheets/{revision}?from=R`: the stylesheets of the current revision
/// for a preview that shows revision R and can swap them in (live stylesheet edits); `409`
/// when it must reload, `410` once the revision was superseded.
async fn preview_stylesheets(
    State(state): State<Arc<StudioState>>,
    Path(revision): Path<u64>,
    Query(query): Query<crate::kit::preview_http::StylesheetsQuery>,
) -> Response {
    let workspace = state.manager.snapshot().await;
    if workspace.revision() != revision {
        return preview_http::superseded(revision, workspace.revision());
    }
    let compile = compile_revision(&state, &workspace);
    preview_http::live_stylesheets(
        &state.previews,
        "workspace",
        &state.stylesheet_run,
        (query.from, revision),
        compile,
    )
    .await
}

async fn preview_asset(
    State(state): State<Arc<StudioState>>,
    Path((revision, path)): Path<(u64, String)>,
) -> Response {
    let workspace = state.manager.snapshot().await;
    let Some(path) = preview_http::keyed_asset_path(&path, state.security.preview_key()) else {
        return preview_http::unknown_asset();
    };
    if !state
        .stylesheet_run
        .serves_assets_of(revision, workspace.revision())
    {
        return preview_http::superseded(revision, workspace.revision());
    }
    let Some(file) = workspace.file(path) else {
        return api_error(
            StatusCode::NOT_FOUND,
            "WORKSPACE_FILE_NOT_FOUND",
            "No workspace file at that path.",
        );
    };
    crate::kit::preview_http::asset(file)
}

#[derive(Deserialize)]
struct EventsQuery {
    #[serde(default)]
    client: Option<String>,
    #[serde(default)]
    surface: Option<String>,
}

/// `GET /api/events`: the live event stream. A page that renders a preview connects with
/// `client=ui` (and `surface=editor` or `surface=web` off the standalone workspace), which
/// switches that surface's preview acknowledgement from headless to the browser.
async fn events(
    State(state): State<Arc<StudioState>>,
    Query(query): Query<EventsQuery>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let Some(surface) = Surface::parse(query.surface.as_deref().unwrap_or("workspace")) else {
        return api_error(
            StatusCode::BAD_REQUEST,
            "STUDIO_INVALID_SURFACE",
            "surface must be \"workspace\", \"editor\" or \"web\".",
        );
    };
    let page = (query.client.as_deref() == Some("ui")).then_some(surface);
    upgrade.on_upgrade(move |socket| stream_events(state, socket, page))
}

async fn stream_events(state: Arc<StudioState>, mut socket: WebSocket, page: Option<Surface>) {
    let _viewer = page.map(|surface| (state.pages.attach(), state.viewers_for(surface).attach()));
    let mut receiver = state.hub.subscribe();
    let hello = json!({"type": "hello", "revision": state.manager.revision().await, "approvals": state.approvals.snapshot()});
    if socket
        .send(Message::Text(hello.to_string().into()))
        .await
        .is_err()
    {
        return;
    }
    loop {
        tokio::select! {
            () = state.stopping.cancelled() => break,
            event = receiver.recv() => {
                let text = match event {
                    Ok(event) => serde_json::to_string(&event).unwrap_or_default(),
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => json!({"type": "lagged", "missed": missed}).to_string(),
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                };
                if socket.send(Message::Text(text.into())).await.is_err() {
                    break;
                }
            }
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Text(text))) => handle_socket_message(&state, text.as_str()),
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break,
            },
        }
    }
}

/// Messages a page may send over the socket: approval answers (the same path as the HTTP API).
fn handle_socket_message(state: &StudioState, text: &str) {
    let Ok(message) = serde_json::from_str::<Value>(text) else {
        return;
    };
    if message.get("type").and_then(Value::as_str) != Some("approval") {
        return;
    }
    let id = message
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(decision) = message
        .get("decision")
        .and_then(Value::as_str)
        .and_then(parse_decision)
    else {
        return;
    };
    state.approvals.resolve(id, decision);
}

/// An approval answer from the page (HTTP or WebSocket): `allow` (or `approve`) or `deny`.
fn parse_decision(decision: &str) -> Option<ApprovalDecision> {
    match decision {
        "allow" | "approve" => Some(ApprovalDecision::Allow),
        "deny" => Some(ApprovalDecision::Deny),
        _ => None,
    }
}
