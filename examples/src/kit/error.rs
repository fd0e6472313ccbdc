//! The studio API's typed error boundary: a handler returns `Result<_, StudioError>` and uses
//! `?`; the error answers itself as the coded JSON body every route shares,
//! `{"error": {code, message, retryable, details?}}`, with its status.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;
use tool_protocol::ToolCallError;

/// A refused or failed studio API request. The variant is the kind of failure (and so its
/// HTTP status); the payload is the coded error the body carries.
#[derive(Debug, Clone, PartialEq)]
pub enum StudioError {
    /// `400`: the request breaks a rule of the API.
    BadRequest(ToolCallError),
    /// `401`: the request lacks the studio's per-launch token.
    Unauthorized(ToolCallError),
    /// `403`: the request comes from a foreign Host or Origin.
    Forbidden(ToolCallError),
    /// `404`: nothing has that id or path.
    NotFound(ToolCallError),
    /// `409`: the studio's state refuses it now (a run is active, the revision moved on...).
    Conflict(ToolCallError),
    /// `413`: the body is larger than the route accepts.
    TooLarge(ToolCallError),
    /// `422`: well-formed, but the studio cannot act on it.
    Unprocessable(ToolCallError),
    /// `500`: the studio could not do its part (a write failed, an embedded asset is missing).
    Internal(ToolCallError),
    /// `502`: the provider behind the request failed.
    BadGateway(ToolCallError),
    /// `503`: a service the request needs is unavailable (the studio is stopping, a store is
    /// down).
    Unavailable(ToolCallError),
    /// A request axum's extractors refused before any handler ran, with the client-error
    /// status they chose (`400`, `405`, `413`, `415`, `422`...).
    Rejected(StatusCode, ToolCallError),
}

impl StudioError {
    /// A `400` with `code` and `message`, not retryable.
    pub fn bad_request(code: &str, message: impl Into<String>) -> Self {
        Self::BadRequest(coded(code, message))
    }

    /// A `404` with `code` and `message`, not retryable.
    pub fn not_found(code: &str, message: impl Into<String>) -> Self {
        Self::NotFound(coded(code, message))
    }

    /// A `409` with `code` and `message`, not retryable.
    pub fn conflict(code: &str, message: impl Into<String>) -> Self {
        Self::Conflict(coded(code, message))
    }

    /// A `413` with `code` and `message`, not retryable.
    pub fn too_large(code: &str, message: impl Into<String>) -> Self {
        Self::TooLarge(coded(code, message))
    }

    /// A `422` with `code` and `message`, not retryable.
    pub fn unprocessable(code: &str, message: impl Into<String>) -> Self {
        Self::Unprocessable(coded(code, message))
    }

    /// A `500` with `code` and `message`, not retryable.
    pub fn internal(code: &str, message: impl Into<String>) -> Self {
        Self::Internal(coded(code, message))
    }

    /// A `503` with `code` and `message`, not retryable.
    pub fn unavailable(code: &str, message: impl Into<String>) -> Self {
        Self::Unavailable(coded(code, message))
    }

    /// The same error, saying whether retrying the request may succeed.
    #[must_use]
    pub fn retryable(mut self, retryable: bool) -> Self {
        self.error_mut().retryable = Some(retryable);
        self
    }

    /// The same error with structured `details`.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.error_mut().details = Some(details);
        self
    }

    /// The HTTP status of this kind of failure.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::BadGateway(_) => StatusCode::BAD_GATEWAY,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Rejected(status, _) => *status,
        }
    }

    /// The coded error the body carries.
    pub fn error(&self) -> &ToolCallError {
        match self {
            Self::BadRequest(error)
            | Self::Unauthorized(error)
            | Self::Forbidden(error)
            | Self::NotFound(error)
            | Self::Conflict(error)
            | Self::TooLarge(error)
            | Self::Unprocessable(error)
            | Self::Internal(error)
            | Self::BadGateway(error)
            | Self::Unavailable(error)
            | Self::Rejected(_, error) => error,
        }
    }

    fn error_mut(&mut self) -> &mut ToolCallError {
        match self {
            Self::BadRequest(error)
            | Self::Unauthorized(error)
            | Self::Forbidden(error)
            | Self::NotFound(error)
            | Self::Conflict(error)
            | Self::TooLarge(error)
            | Self::Unprocessable(error)
            | Self::Internal(error)
            | Self::BadGateway(error)
            | Self::Unavailable(error)
            | Self::Rejected(_, error) => error,
        }
    }
}

fn coded(code: &str, message: impl Into<String>) -> ToolCallError {
    ToolCallError::new(code, message).with_retryable(false)
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a ToolCallError,
}

impl IntoResponse for StudioError {
    fn into_response(self) -> Response {
        (
            self.status(),
            Json(ErrorBody {
                error: self.error(),
            }),
        )
            .into_response()
    }
}

impl std::fmt::Display for StudioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status().as_u16(), self.error())
    }
}

impl std::error::Error for StudioError {}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body_of(error: StudioError) -> (StatusCode, Value) {
        let response = error.into_response();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn an_error_answers_its_status_and_the_coded_body_in_key_order() {
        let (status, body) =
            body_of(StudioError::not_found("STUDIO_RUN_NOT_FOUND", "No run.")).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(
            body.to_string(),
            r#"{"error":{"code":"STUDIO_RUN_NOT_FOUND","message":"No run.","retryable":false}}"#
        );
        let stale = StudioError::conflict("PREVIEW_SELECTION_STALE", "Select again.")
            .retryable(true)
            .with_details(serde_json::json!({"revision": 3}));
        let (status, body) = body_of(stale).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert_eq!(body["error"]["retryable"], true);
        assert_eq!(body["error"]["details"]["revision"], 3);
    }
}
