//! Every refusal is coded: a request axum's extractors reject before a handler runs (malformed
//! JSON, a wrong content type, unknown or missing fields, a body over the limit, a bad path or
//! query, a wrong method) answers in the studio's JSON error shape, or for `/mcp` as a
//! JSON-RPC error, instead of axum's plain-text 400/405/413/415/422.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use tool_protocol::ToolCallError;

use super::mcp::MCP_PATH;
use crate::kit::error::StudioError;
use crate::kit::security::is_preview_path;

/// Longest rejection text kept in the coded message, in characters.
const MAX_REJECTION_CHARS: usize = 300;
/// Largest plain-text rejection body read to build the message.
const MAX_REJECTION_BODY_BYTES: usize = 4 * 1024;

/// Axum middleware: replaces a plain-text client-error answer with a coded JSON one.
pub(crate) async fn code_rejections(request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    if !needs_coding(&response, &path) {
        return response;
    }
    let status = response.status();
    let text = rejection_text(response.into_body()).await;
    if path == MCP_PATH || path.starts_with(&format!("{MCP_PATH}/")) {
        json_rpc_error(status, &text)
    } else {
        studio_error(status, &text)
    }
}

fn needs_coding(response: &Response, path: &str) -> bool {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.contains("json"));
    response.status().is_client_error()
        && !is_json
        // Preview documents answer an iframe, in text (a superseded revision's `410`).
        && !is_preview_path(path)
}

async fn rejection_text(body: Body) -> String {
    let bytes = axum::body::to_bytes(body, MAX_REJECTION_BODY_BYTES)
        .await
        .unwrap_or_default();
    String::from_utf8_lossy(&bytes)
        .trim()
        .chars()
        .take(MAX_REJECTION_CHARS)
        .collect()
}

/// The stable code of a rejected request, by its status.
fn code_of(status: StatusCode) -> &'static str {
    match status {
        StatusCode::PAYLOAD_TOO_LARGE => "STUDIO_BODY_TOO_LARGE",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "STUDIO_UNSUPPORTED_MEDIA_TYPE",
        StatusCode::UNPROCESSABLE_ENTITY => "STUDIO_INVALID_REQUEST",
        StatusCode::METHOD_NOT_ALLOWED => "STUDIO_METHOD_NOT_ALLOWED",
        StatusCode::NOT_FOUND => "STUDIO_NOT_FOUND",
        StatusCode::NOT_ACCEPTABLE => "STUDIO_NOT_ACCEPTABLE",
        _ => "STUDIO_BAD_REQUEST",
    }
}

fn message_of(status: StatusCode, text: &str) -> String {
    let summary = match status {
        StatusCode::PAYLOAD_TOO_LARGE => "The request body is too large.",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            "The request body must be JSON (Content-Type: application/json)."
        }
        StatusCode::UNPROCESSABLE_ENTITY => "The request body does not have the expected fields.",
        StatusCode::METHOD_NOT_ALLOWED => "This method is not allowed here.",
        _ => "The request could not be read.",
    };
    if text.is_empty() {
        summary.to_owned()
    } else {
        format!("{summary} {text}")
    }
}

fn studio_error(status: StatusCode, text: &str) -> Response {
    let error = ToolCallError::new(code_of(status), message_of(status, text)).with_retryable(false);
    StudioError::Rejected(status, error).into_response()
}

/// A JSON-RPC error without an id (the request could not be read far enough to have one):
/// `-32700` for a body that is not JSON, `-32600` for anything else.
fn json_rpc_error(status: StatusCode, text: &str) -> Response {
    let code = if status == StatusCode::BAD_REQUEST && text.to_ascii_lowercase().contains("json") {
        -32700
    } else {
        -32600
    };
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message_of(status, text), "data": {"studioCode": code_of(status)}},
    });
    let mut response = (status, axum::Json(body)).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rejection_status_has_its_code() {
        assert_eq!(
            code_of(StatusCode::PAYLOAD_TOO_LARGE),
            "STUDIO_BODY_TOO_LARGE"
        );
        assert_eq!(
            code_of(StatusCode::UNSUPPORTED_MEDIA_TYPE),
            "STUDIO_UNSUPPORTED_MEDIA_TYPE"
        );
        assert_eq!(
            code_of(StatusCode::UNPROCESSABLE_ENTITY),
            "STUDIO_INVALID_REQUEST"
        );
        assert_eq!(code_of(StatusCode::BAD_REQUEST), "STUDIO_BAD_REQUEST");
        assert!(message_of(StatusCode::BAD_REQUEST, "").ends_with("read."));
    }
}
