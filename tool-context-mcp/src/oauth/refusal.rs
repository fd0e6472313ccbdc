//! Why a request was refused, as the HTTP answer the MCP authorization spec asks for: `401`
//! with a `WWW-Authenticate: Bearer` challenge naming our metadata (RFC 9728 §5.1), `403`
//! `insufficient_scope` naming every scope needed at once (RFC 6750 §3.1), and a coded JSON
//! body either way.

use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use serde_json::json;

/// `error.code` of a request without a bearer token.
pub const MCP_AUTH_REQUIRED: &str = "MCP_AUTH_REQUIRED";
/// `error.code` of a request whose token is malformed, expired, not yet valid, for another
/// audience, from another issuer or wrongly signed.
pub const MCP_TOKEN_INVALID: &str = "MCP_TOKEN_INVALID";
/// `error.code` of a valid token that lacks a required scope.
pub const MCP_INSUFFICIENT_SCOPE: &str = "MCP_INSUFFICIENT_SCOPE";
/// `error.code` when the authorization server's keys cannot be fetched (retryable).
pub const MCP_AUTH_UNAVAILABLE: &str = "MCP_AUTH_UNAVAILABLE";
/// `error.code` of a request naming a session this principal did not open (`404`, as for a
/// session that does not exist: the client starts a new one).
pub const MCP_SESSION_NOT_FOUND: &str = "MCP_SESSION_NOT_FOUND";

/// A refused request: status, coded error and the challenge to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthRefusal {
    kind: Kind,
    message: String,
    challenge: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Missing,
    Invalid,
    Scope,
    Unavailable,
    Session,
}

impl AuthRefusal {
    /// No token: the challenge names the metadata and the scopes to ask for.
    pub(crate) fn missing(metadata_url: &str, scopes: &str) -> Self {
        let mut challenge = format!("Bearer resource_metadata=\"{metadata_url}\"");
        if !scopes.is_empty() {
            challenge.push_str(&format!(", scope=\"{scopes}\""));
        }
        Self {
            kind: Kind::Missing,
            message: "This MCP server needs an OAuth access token: Authorization: Bearer <token>."
                .into(),
            challenge,
        }
    }

    /// A token that cannot be accepted, for the reason `why` (safe to show: it never echoes
    /// the token).
    pub(crate) fn invalid(metadata_url: &str, why: &str) -> Self {
        Self {
            kind: Kind::Invalid,
            message: format!("The access token was refused: {why}"),
            challenge: format!(
                "Bearer error=\"invalid_token\", error_description=\"{}\", resource_metadata=\"{metadata_url}\"",
                quoted(why)
            ),
        }
    }

    /// A valid token without every scope in `needed` (all of them are named at once).
    pub(crate) fn scope(metadata_url: &str, needed: &str) -> Self {
        Self {
            kind: Kind::Scope,
            message: format!(
                "The access token lacks a required scope; this server needs: {needed}."
            ),
            challenge: format!(
                "Bearer error=\"insufficient_scope\", scope=\"{needed}\", resource_metadata=\"{metadata_url}\", error_description=\"The token lacks a required scope.\""
            ),
        }
    }

    /// The issuer's keys could not be read, so no token can be checked now.
    pub(crate) fn unavailable(why: &str) -> Self {
        Self {
            kind: Kind::Unavailable,
            message: format!("Access tokens cannot be checked right now: {why}"),
            challenge: String::new(),
        }
    }

    /// A session id this principal did not open (see [`super::sessions`]).
    pub(crate) fn foreign_session() -> Self {
        Self {
            kind: Kind::Session,
            message: "No such session for this principal: start a new session with initialize."
                .into(),
            challenge: String::new(),
        }
    }

    /// The HTTP status: 401, 403, 404 or 503.
    pub fn status(&self) -> StatusCode {
        match self.kind {
            Kind::Missing | Kind::Invalid => StatusCode::UNAUTHORIZED,
            Kind::Scope => StatusCode::FORBIDDEN,
            Kind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Kind::Session => StatusCode::NOT_FOUND,
        }
    }

    /// The stable `error.code` of the body.
    pub fn code(&self) -> &'static str {
        match self.kind {
            Kind::Missing => MCP_AUTH_REQUIRED,
            Kind::Invalid => MCP_TOKEN_INVALID,
            Kind::Scope => MCP_INSUFFICIENT_SCOPE,
            Kind::Unavailable => MCP_AUTH_UNAVAILABLE,
            Kind::Session => MCP_SESSION_NOT_FOUND,
        }
    }

    /// The human-readable reason.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The `WWW-Authenticate` value (`None` for 404 and 503).
    pub fn challenge(&self) -> Option<&str> {
        (!self.challenge.is_empty()).then_some(self.challenge.as_str())
    }

    /// The refusal as a response with a `{"error": {code, message, retryable}}` body.
    pub fn into_response(self) -> http::Response<BoxBody<Bytes, std::convert::Infallible>> {
        let retryable = self.kind == Kind::Unavailable;
        let body = json!({"error": {"code": self.code(), "message": self.message, "retryable": retryable}});
        let mut response = http::Response::new(Full::new(Bytes::from(body.to_string())).boxed());
        *response.status_mut() = self.status();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if let Some(value) = self.challenge().and_then(|c| HeaderValue::from_str(c).ok()) {
            headers.insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// `text` safe inside a quoted-string of a challenge (no quote, backslash or control).
fn quoted(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c == '"' || c == '\\' || c.is_control() {
                '\''
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = "http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp";

    #[test]
    fn a_missing_token_is_401_naming_the_metadata_and_scopes() {
        let refusal = AuthRefusal::missing(META, "mcp:tools");
        assert_eq!(refusal.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            refusal.challenge(),
            Some(format!("Bearer resource_metadata=\"{META}\", scope=\"mcp:tools\"").as_str())
        );
    }

    #[test]
    fn a_missing_scope_is_403_listing_every_needed_scope() {
        let refusal = AuthRefusal::scope(META, "mcp:tools notes:read");
        assert_eq!(refusal.status(), StatusCode::FORBIDDEN);
        let challenge = refusal.challenge().unwrap();
        assert!(
            challenge
                .starts_with("Bearer error=\"insufficient_scope\", scope=\"mcp:tools notes:read\"")
        );
        assert_eq!(refusal.code(), MCP_INSUFFICIENT_SCOPE);
    }

    #[test]
    fn reasons_cannot_break_out_of_the_quoted_string() {
        let refusal = AuthRefusal::invalid(META, "bad \"x\"\r\n, error=\"y\"");
        let challenge = refusal.challenge().unwrap();
        assert!(HeaderValue::from_str(challenge).is_ok());
        assert_eq!(challenge.matches('"').count(), 6, "{challenge}");
    }
}
