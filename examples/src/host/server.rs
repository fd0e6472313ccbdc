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
use serde::Deserialize;
use serde_json::{Value, json};
use tool_context::ApprovalDecision;
use tool_protocol::ToolListResult;

use super::page_calls::call_as_page;
use super::review::approval_not_found;
use super::{StudioState, changes, review};
use crate::agent::runner::{RunRequest, run_plan};
use crate::host::runs::run_metadata;
use crate::kit::events::StudioEvent;
use crate::kit::responses::{api_error, no_store_json};
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
        "liveStylesheetsSince": state.workspace.stylesheet_run().reload_boundary(status.revision),
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
