//! JSON answers shared by the host and the surfaces' routes.

use axum::Json;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// A JSON answer that holds file source: never cached by the browser or anything in between.
pub(crate) fn no_store_json(value: &impl Serialize) -> Response {
    let mut response = Json(value).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
