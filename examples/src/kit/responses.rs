//! JSON error answers shared by the host and the surfaces' routes.

use axum::Json;
use axum::http::StatusCode;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;

/// A coded, non-retryable error answer of the studio API.
pub fn api_error(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"code": code, "message": message, "retryable": false}})),
    )
        .into_response()
}

/// A JSON answer that holds file source: never cached by the browser or anything in between.
pub fn no_store_json(value: &impl Serialize) -> Response {
    let mut response = Json(value).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
