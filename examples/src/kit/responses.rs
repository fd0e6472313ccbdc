//! JSON error answers shared by the host and the surfaces' routes.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A coded, non-retryable error answer of the studio API.
pub fn api_error(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"code": code, "message": message, "retryable": false}})),
    )
        .into_response()
}
