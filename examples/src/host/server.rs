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
use live_code_editor::workspace::{FileSummary, WorkspaceStatus};
use openrouter_tool_loop::{OpenRouterConfig, ProviderProfile};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tool_context::{ApprovalDecision, ApprovalSnapshot};
use tool_protocol::ToolListResult;

use super::page_calls::call_as_page;
use super::review::approval_not_found;
use super::runs::RunView;
use super::settings::{SettingsUpdate, SettingsView};
use super::trace::{TraceRow, TraceSession};
use super::{StudioState, changes, review};
use crate::agent::runner::{RunRequest, run_plan};
use crate::host::runs::run_metadata;
use crate::kit::error::StudioError;
use crate::kit::events::StudioEvent;
use crate::kit::provider_codes::provider_failure;
use crate::kit::responses::no_store_json;
use crate::kit::security;
use crate::surfaces::Surface;

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
        .merge(super::upload::routes())
        .merge(super::mcp_servers::routes())
        .merge(super::questions::routes())
        .route("/api/events", get(events))
        .route("/editor", get(editor_page))
        .route("/web", get(web_page))
        .merge(crate::surfaces::workspace::routes())
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
async fn not_found() -> StudioError {
    StudioError::not_found("STUDIO_NOT_FOUND", "Nothing is served at this path.")
}

async fn index(State(state): State<Arc<StudioState>>) -> Result<Response, StudioError> {
    page(&state, "index.html")
}

async fn editor_page(State(state): State<Arc<StudioState>>) -> Result<Response, StudioError> {
    page(&state, "editor.html")
}

async fn web_page(State(state): State<Arc<StudioState>>) -> Result<Response, StudioError> {
    page(&state, "web.html")
}

/// An embedded studio page with this launch's token filled in.
fn page(state: &StudioState, file: &str) -> Result<Response, StudioError> {
    let page = super::ui::asset(file).ok_or_else(|| {
        StudioError::internal("STUDIO_UI_MISSING", "The studio page is not embedded.")
    })?;
    let html = String::from_utf8_lossy(&page)
        .replace("{{STUDIO_TOKEN}}", state.security.token())
        .replace("{{STUDIO_LAUNCH}}", state.security.launch());
    let headers = [
        (header::CONTENT_TYPE, "text/html; charset=utf-8"),
        (header::CACHE_CONTROL, "no-store"),
    ];
    Ok((headers, html).into_response())
}

async fn ui_asset(Path(file): Path<String>) -> Result<Response, StudioError> {
    let bytes = super::ui::asset(&file)
        .ok_or_else(|| StudioError::not_found("STUDIO_NOT_FOUND", "No such studio asset."))?;
    let content_type = [(header::CONTENT_TYPE, super::ui::content_type(&file))];
    Ok((content_type, bytes).into_response())
}

/// `GET /api/state`: everything the workspace page starts from.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StudioStateView {
    live_stylesheets_since: u64,
    status: WorkspaceStatus,
    files: Vec<FileSummary>,
    /// The pending approvals and questions ([`super::questions::pending_cards`]).
    approvals: Value,
    sessions: Vec<String>,
    settings: super::settings::SettingsView,
}

async fn studio_state(State(state): State<Arc<StudioState>>) -> Json<StudioStateView> {
    let manager = state.workspace.manager();
    let status = manager.status().await;
    Json(StudioStateView {
        live_stylesheets_since: state
            .workspace
            .stylesheet_run()
            .reload_boundary(status.revision),
        files: manager.list_files().await,
        status,
        approvals: super::questions::pending_cards(&state.approvals, &state.questions),
        sessions: state.trace.sessions(),
        settings: state.settings.public_view(),
    })
}

#[derive(Serialize)]
struct LaunchView<'a> {
    launch: &'a str,
}

/// `GET /api/launch`: this launch's public id (no token needed: a page from an earlier launch
/// asks it to learn that it must reload).
async fn launch(State(state): State<Arc<StudioState>>) -> Response {
    no_store_json(&LaunchView {
        launch: state.security.launch(),
    })
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

async fn pending_approvals(State(state): State<Arc<StudioState>>) -> Json<ApprovalSnapshot> {
    Json(state.approvals.snapshot())
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

async fn resolve_approval(
    State(state): State<Arc<StudioState>>,
    Path(id): Path<String>,
    Json(body): Json<ApprovalBody>,
) -> Result<Json<review::Resolved>, StudioError> {
    let decision = parse_decision(&body.decision).ok_or_else(|| {
        StudioError::bad_request(
            "STUDIO_INVALID_DECISION",
            "decision must be \"allow\" or \"deny\".",
        )
    })?;
    if let (ApprovalDecision::Allow, Some(seen)) = (decision, &body.arguments_digest) {
        review::check_arguments_digest(&state, &id, seen)?;
    }
    if let (ApprovalDecision::Allow, Some(hunks)) = (decision, &body.hunks) {
        return review::resolve_hunks(&state, &id, hunks, body.digest.as_deref())
            .await
            .map(Json);
    }
    if decision == ApprovalDecision::Allow {
        return review::allow(&state, &id).await.map(Json);
    }
    if !state.approvals.resolve(&id, decision) {
        return Err(approval_not_found());
    }
    Ok(Json(review::Resolved::whole(id)))
}

#[derive(Serialize)]
struct DeniedView {
    denied: usize,
}

async fn deny_all_approvals(State(state): State<Arc<StudioState>>) -> Json<DeniedView> {
    // Questions waiting beside the approvals are dismissed with them.
    Json(DeniedView {
        denied: state.approvals.deny_all() + state.questions.cancel_all(),
    })
}

#[derive(Deserialize)]
struct TraceQuery {
    session: Option<String>,
}

#[derive(Serialize)]
struct TraceView {
    rows: Vec<TraceRow>,
    sessions: Vec<String>,
}

async fn trace_rows(
    State(state): State<Arc<StudioState>>,
    Query(query): Query<TraceQuery>,
) -> Json<TraceView> {
    Json(TraceView {
        rows: state.trace.rows(query.session.as_deref()),
        sessions: state.trace.sessions(),
    })
}

#[derive(Serialize)]
struct SessionsView {
    sessions: Vec<TraceSession>,
}

/// `GET /api/sessions`: what started each session of the trace, for the session selector (kept
/// out of `GET /api/trace`, whose rows never hold a prompt).
async fn trace_sessions(State(state): State<Arc<StudioState>>) -> Json<SessionsView> {
    Json(SessionsView {
        sessions: state.trace.named_sessions(),
    })
}

async fn clear_trace(State(state): State<Arc<StudioState>>) -> Result<StatusCode, StudioError> {
    if state.runs.any_active() {
        return Err(StudioError::conflict(
            "STUDIO_RUN_ACTIVE",
            "The trace cannot be cleared while an agent run is active.",
        ));
    }
    state.trace.clear();
    Ok(StatusCode::NO_CONTENT)
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

async fn start_run(
    State(state): State<Arc<StudioState>>,
    Json(body): Json<RunBody>,
) -> Result<Json<RunView>, StudioError> {
    let prompt = body.prompt.trim().to_owned();
    if prompt.is_empty() || prompt.chars().count() > MAX_PROMPT_CHARS {
        return Err(StudioError::bad_request(
            "STUDIO_INVALID_PROMPT",
            "The prompt must be 1 to 4,000 characters.",
        ));
    }
    let surface = parse_surface(body.surface.as_deref())?;
    let metadata = checked_run_metadata(body.metadata)?;
    let agent = body.agent.as_deref().unwrap_or("local");
    if agent != "local" {
        return super::openrouter::start(state, surface, prompt, metadata)
            .await
            .map(Json);
    }
    let (view, cancellation) = state.runs.begin("local", &prompt);
    state.note_page_run(&view.run_id, surface);
    let run = LocalRun {
        surface,
        prompt,
        metadata,
        call_timeout_ms: body.timeout_ms,
    };
    tokio::spawn(run_local(state, view.clone(), cancellation, run));
    Ok(Json(view))
}

/// The surface a request names (`workspace` when it names none).
fn parse_surface(surface: Option<&str>) -> Result<Surface, StudioError> {
    Surface::parse(surface.unwrap_or("workspace")).ok_or_else(|| {
        StudioError::bad_request(
            "STUDIO_INVALID_SURFACE",
            "surface must be \"workspace\", \"editor\" or \"web\".",
        )
    })
}

/// Largest run metadata accepted, serialized (a Design Mode selection is bounded far lower).
pub const MAX_RUN_METADATA_BYTES: usize = 8 * 1024;

/// Run metadata reaches every tool call's context, so it is bounded here: an object of at most
/// [`MAX_RUN_METADATA_BYTES`], whose `selection` (if any) passes the Design Mode validator and is
/// replaced by its normalized form.
fn checked_run_metadata(metadata: Option<Value>) -> Result<Option<Value>, StudioError> {
    let Some(metadata) = metadata.filter(|value| !value.is_null()) else {
        return Ok(None);
    };
    let Value::Object(mut map) = metadata else {
        return Err(StudioError::bad_request(
            "STUDIO_INVALID_METADATA",
            "metadata must be a JSON object.",
        ));
    };
    if serde_json::to_vec(&map).map_or(usize::MAX, |bytes| bytes.len()) > MAX_RUN_METADATA_BYTES {
        return Err(StudioError::bad_request(
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

async fn run_status(
    State(state): State<Arc<StudioState>>,
    Path(id): Path<String>,
) -> Result<Json<RunView>, StudioError> {
    state
        .runs
        .get(&id)
        .map(Json)
        .ok_or_else(|| StudioError::not_found("STUDIO_RUN_NOT_FOUND", "No run has that id."))
}

#[derive(Serialize)]
struct CancelledView {
    cancelled: String,
}

async fn cancel_run(
    State(state): State<Arc<StudioState>>,
    Path(id): Path<String>,
) -> Result<Json<CancelledView>, StudioError> {
    if !state.runs.cancel(&id) {
        return Err(StudioError::not_found(
            "STUDIO_RUN_NOT_FOUND",
            "No unfinished run has that id.",
        ));
    }
    Ok(Json(CancelledView { cancelled: id }))
}

async fn get_settings(State(state): State<Arc<StudioState>>) -> Json<SettingsView> {
    Json(state.settings.public_view())
}

/// A settings body from the dialog; its shape errors are `STUDIO_INVALID_SETTINGS` like its
/// value errors.
fn settings_update(body: Value) -> Result<SettingsUpdate, StudioError> {
    serde_json::from_value(body)
        .map_err(|error| StudioError::bad_request("STUDIO_INVALID_SETTINGS", error.to_string()))
}

async fn put_settings(
    State(state): State<Arc<StudioState>>,
    Json(body): Json<Value>,
) -> Result<Json<SettingsView>, StudioError> {
    let view = state.settings.update(settings_update(body)?)?;
    state.hub.publish(StudioEvent::Settings {
        settings: serde_json::to_value(&view).unwrap_or(Value::Null),
    });
    Ok(Json(view))
}

/// `GET /api/models`: the configured provider's catalog, tool-capable models where the
/// provider says which those are (a key only where the profile needs one).
async fn list_models(
    State(state): State<Arc<StudioState>>,
) -> Result<Json<CatalogView>, StudioError> {
    read_catalog(state.settings.catalog_config(None)?).await
}

/// `POST /api/settings/test`: the dialog's unsaved provider, base URL and key applied to the
/// settings (same validation and key rules as saving, nothing saved), then its catalog read:
/// the models, or the coded failure.
async fn test_connection(
    State(state): State<Arc<StudioState>>,
    Json(draft): Json<Value>,
) -> Result<Json<CatalogView>, StudioError> {
    let draft = settings_update(draft)?;
    read_catalog(state.settings.catalog_config(Some(draft))?).await
}

/// A provider's model catalog as the settings dialog lists it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CatalogView {
    provider: &'static str,
    /// `reported` (OpenRouter filters by tool support), `capabilities` (Ollama marks the
    /// models it knows have tools) or `unknown`.
    tool_support: &'static str,
    models: Vec<CatalogModel>,
}

#[derive(Serialize)]
struct CatalogModel {
    id: String,
    label: String,
    free: bool,
    /// `null` when the provider does not say.
    tools: Option<bool>,
}

/// Reads a catalog with `config`; a failure is its coded error (400 for configuration, 502
/// for the provider).
async fn read_catalog(config: OpenRouterConfig) -> Result<Json<CatalogView>, StudioError> {
    let profile = config.provider;
    let failed = |error| provider_failure(&error, profile);
    let client = openrouter_tool_loop::OpenRouterClient::new(config).map_err(failed)?;
    let models = client
        .list_models(&tokio_util::sync::CancellationToken::new())
        .await
        .map_err(failed)?;
    let says = profile.is_openrouter();
    let models = models
        .iter()
        .map(|model| CatalogModel {
            id: model.id.clone(),
            label: model.label().to_owned(),
            free: model.is_free(),
            tools: (model.supports_tools() || says).then_some(model.supports_tools()),
        })
        .collect();
    let tool_support = match profile {
        ProviderProfile::OpenRouter => "reported",
        ProviderProfile::Ollama => "capabilities",
        _ => "unknown",
    };
    Ok(Json(CatalogView {
        provider: profile.id(),
        tool_support,
        models,
    }))
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
) -> Result<Response, StudioError> {
    let surface = parse_surface(query.surface.as_deref())?;
    let page = (query.client.as_deref() == Some("ui")).then_some(surface);
    Ok(upgrade.on_upgrade(move |socket| stream_events(state, socket, page)))
}

async fn stream_events(state: Arc<StudioState>, mut socket: WebSocket, page: Option<Surface>) {
    let _viewer = page.map(|surface| (state.pages.attach(), state.viewers_for(surface).attach()));
    let mut receiver = state.hub.subscribe();
    let revision = state.workspace.manager().revision().await;
    let approvals = super::questions::pending_cards(&state.approvals, &state.questions);
    let hello = json!({"type": "hello", "revision": revision, "approvals": approvals});
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
