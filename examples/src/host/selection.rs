//! Design Mode selections: the page forwards the selection its preview iframe posted; the host
//! validates and bounds it (the same validator as run metadata), refuses one picked in a
//! revision the workspace has left, and publishes it so every open tab shows the same chip.
//! Run metadata carries it to tools with page content under `source`, which the audit
//! redaction policy hides, and trace rows never carry call metadata at all.

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use live_code_editor::preview::{PreviewSelection, SelectionError, parse_selection_message};
use serde::Serialize;
use serde_json::{Value, json};

use super::StudioState;
use crate::kit::error::StudioError;
use crate::kit::events::StudioEvent;

/// Largest request body the selection route reads (the message itself is bounded far lower).
pub(crate) const MAX_SELECTION_BODY_BYTES: usize = 64 * 1024;
/// Error code of a selection picked in a revision the workspace has moved past.
pub(crate) const PREVIEW_SELECTION_STALE: &str = "PREVIEW_SELECTION_STALE";
/// `kind` of the surface event that carries a selection (or `null` once it was removed).
pub(crate) const SELECTION_EVENT_KIND: &str = "selection";

/// `POST /api/preview/selection` (accept and publish) and `DELETE` (remove it everywhere).
pub(crate) fn routes() -> Router<Arc<StudioState>> {
    Router::new()
        .route(
            "/api/preview/selection",
            post(accept_selection).delete(clear_selection),
        )
        .layer(DefaultBodyLimit::max(MAX_SELECTION_BODY_BYTES))
}

/// The surface event announcing `selection` (`None`: removed).
pub(crate) fn selection_event(selection: Option<&PreviewSelection>) -> StudioEvent {
    StudioEvent::Surface {
        surface: crate::surfaces::Surface::Workspace.as_str().to_owned(),
        data: json!({
            "kind": SELECTION_EVENT_KIND,
            "selection": selection.map(PreviewSelection::to_metadata),
        }),
    }
}

/// The coded 400 answer of a refused selection.
pub(crate) fn invalid_selection(error: &SelectionError) -> StudioError {
    StudioError::bad_request(error.code(), error.message.clone())
        .with_details(json!({"field": error.field}))
}

/// An accepted selection, as run metadata carries it.
#[derive(Serialize)]
struct AcceptedView {
    accepted: bool,
    selection: Value,
}

async fn accept_selection(
    State(state): State<Arc<StudioState>>,
    Json(message): Json<Value>,
) -> Result<Json<AcceptedView>, StudioError> {
    let selection = parse_selection_message(&message).map_err(|error| invalid_selection(&error))?;
    let current = state.workspace.manager().revision().await;
    if selection.revision != current {
        let message = format!(
            "The selection was made in revision {}; the workspace is at revision {current}. Select the element again.",
            selection.revision
        );
        return Err(StudioError::conflict(PREVIEW_SELECTION_STALE, message).retryable(true));
    }
    state.hub.publish(selection_event(Some(&selection)));
    Ok(Json(AcceptedView {
        accepted: true,
        selection: selection.to_metadata(),
    }))
}

async fn clear_selection(State(state): State<Arc<StudioState>>) -> StatusCode {
    state.hub.publish(selection_event(None));
    StatusCode::NO_CONTENT
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::trace::TraceStore;
    use live_code_editor::preview::PREVIEW_SELECTION_MESSAGE;
    use tool_protocol::observability::{ObservabilityPolicy, project_tool_call_observation};
    use tool_protocol::{
        ToolCallContext, ToolCallEvent, ToolCallEventType, ToolCallMode, ToolCallRequest,
        ToolCallSource, ToolExecutionProvenance,
    };

    const EXCERPT: &str = "Private launch copy";
    const OUTLINE: &str = "<h1 id=\"hero-title\">Private launch copy</h1>";

    fn selection() -> PreviewSelection {
        parse_selection_message(&json!({
            "type": PREVIEW_SELECTION_MESSAGE, "revision": 3, "selector": "#hero-title", "tag": "h1",
            "id": "hero-title", "classes": ["title"],
            "source": {"text": EXCERPT, "html": OUTLINE},
            "styles": {"color": "rgb(0, 0, 0)", "backgroundColor": "", "fontFamily": "serif", "fontSize": "40px",
                "fontWeight": "700", "margin": "0px", "padding": "0px", "display": "block", "width": "10px", "height": "10px"},
            "box": {"x": 1, "y": 2, "width": 3, "height": 4},
            "screen": {"viewportWidth": 800, "viewportHeight": 600, "scrollX": 0, "scrollY": 0, "devicePixelRatio": 1}
        }))
        .unwrap()
    }

    fn event_with(metadata: Value) -> ToolCallEvent {
        let mut context = ToolCallContext::new(ToolCallSource::Model, ToolCallMode::Agent)
            .with_session("session-1");
        context.metadata = metadata.as_object().cloned();
        ToolCallEvent {
            event_type: ToolCallEventType::Started,
            trace_id: "trace-1".into(),
            tool_call_id: None,
            name: "workspace.applyPatch".into(),
            request: ToolCallRequest::new(
                "workspace.applyPatch",
                json!({"path": "styles.css", "search": "a", "replace": "b"})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
            context: Some(context),
            timestamp: 1,
            provenance: ToolExecutionProvenance::started("studio:1", None, None),
            duration_ms: None,
            result: None,
        }
    }

    #[test]
    fn selection_metadata_passes_the_redaction_policy_and_never_reaches_trace_rows() {
        let metadata = json!({"selection": selection().to_metadata(), "agentRun": true});
        let event = event_with(metadata);
        let row = serde_json::to_string(&TraceStore::row_for_event(&event)).unwrap();
        assert!(
            !row.contains(EXCERPT) && !row.contains("hero-title"),
            "{row}"
        );
        let observed = project_tool_call_observation(&event, &ObservabilityPolicy::default());
        let text = observed.to_string();
        assert!(!text.contains(EXCERPT), "{text}");
        assert!(!text.contains("<h1"), "{text}");
        let projected = &observed["context"]["metadata"]["selection"];
        assert_eq!(projected["source"], "[source redacted]");
        // The structural facts stay useful to an auditor.
        assert_eq!(projected["selector"], "#hero-title");
        assert_eq!(projected["styles"]["fontSize"], "40px");
    }

    #[test]
    fn surface_events_carry_the_selection_or_its_removal() {
        let picked = selection();
        let event = serde_json::to_value(selection_event(Some(&picked))).unwrap();
        assert_eq!(event["type"], "surface");
        assert_eq!(event["surface"], "workspace");
        assert_eq!(event["data"]["kind"], SELECTION_EVENT_KIND);
        assert_eq!(event["data"]["selection"]["selector"], "#hero-title");
        let cleared = serde_json::to_value(selection_event(None)).unwrap();
        assert_eq!(cleared["data"]["selection"], Value::Null);
    }

    #[test]
    fn refusals_are_coded_with_the_field() {
        let error =
            parse_selection_message(&json!({"type": PREVIEW_SELECTION_MESSAGE})).unwrap_err();
        let refusal = invalid_selection(&error);
        assert_eq!(refusal.status(), StatusCode::BAD_REQUEST);
        assert_eq!(refusal.error().details, Some(json!({"field": error.field})));
    }
}
