//! Request guards of the studio host: DNS-rebinding protection (the `Host` and `Origin` must be
//! the studio's own loopback address) and a per-launch token for every state-changing request
//! and the WebSocket, given as `x-studio-token: <token>` or `Authorization: Bearer <token>`.
//!
//! A foreign Host or Origin is refused with `403`; a missing or wrong token is an
//! authentication failure, `401` with a `WWW-Authenticate: Bearer` challenge (what MCP clients
//! and other HTTP tools expect).

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tool_protocol::ToolCallError;

use super::error::StudioError;

/// Header carrying the per-launch token.
pub const TOKEN_HEADER: &str = "x-studio-token";
/// `realm` of the `WWW-Authenticate` challenge of a request without the token.
pub const AUTH_REALM: &str = "live-code-studio";
/// Query parameter carrying the token where headers cannot be set (the WebSocket upgrade).
pub const TOKEN_QUERY: &str = "token";

/// The studio's own addresses, its per-launch token and its per-launch preview asset key.
#[derive(Clone)]
pub struct SecurityPolicy {
    allowed_hosts: Vec<String>,
    token: String,
    preview_key: String,
    launch: String,
}

impl std::fmt::Debug for SecurityPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecurityPolicy")
            .field("allowed_hosts", &self.allowed_hosts)
            .field("token", &"[redacted]")
            .field("preview_key", &"[redacted]")
            .finish()
    }
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The `Host` header is missing or not the studio's own.
    ForeignHost,
    /// The `Origin` header names another site.
    ForeignOrigin,
    /// A state-changing request without the right token.
    MissingToken,
}

impl Refusal {
    fn code(self) -> &'static str {
        match self {
            Self::ForeignHost => "STUDIO_FOREIGN_HOST",
            Self::ForeignOrigin => "STUDIO_FOREIGN_ORIGIN",
            Self::MissingToken => "STUDIO_TOKEN_REQUIRED",
        }
    }

    fn message(self) -> &'static str {
        match self {
            Self::ForeignHost => "The Host header does not name this studio.",
            Self::ForeignOrigin => "Requests from other origins are refused.",
            Self::MissingToken => {
                "This request needs the studio's per-launch token (x-studio-token header or Authorization: Bearer)."
            }
        }
    }

    /// The refusal as a response: `401` with a Bearer challenge for a missing token, `403`
    /// for a foreign Host or Origin; a coded JSON body either way.
    pub fn into_response_with(self, message: &str) -> Response {
        let error = ToolCallError::new(self.code(), message).with_retryable(false);
        if self != Self::MissingToken {
            return StudioError::Forbidden(error).into_response();
        }
        let challenge = format!(
            "Bearer realm=\"{AUTH_REALM}\", error=\"invalid_token\", error_description=\"{}\"",
            "Send the studio's per-launch token as Authorization: Bearer <token> or x-studio-token."
        );
        let mut response = StudioError::Unauthorized(error).into_response();
        if let Ok(value) = axum::http::HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

impl SecurityPolicy {
    /// The policy of a studio listening on loopback `port` with `token`.
    pub fn new(port: u16, token: impl Into<String>) -> Self {
        let allowed_hosts = ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .map(|host| format!("{host}:{port}"))
            .collect();
        Self {
            allowed_hosts,
            token: token.into(),
            preview_key: uuid::Uuid::new_v4().simple().to_string(),
            launch: uuid::Uuid::new_v4().simple().to_string(),
        }
    }

    /// This launch's id: public, unlike the token. An open page compares it with the one it
    /// was served with to notice that the studio restarted (and its token changed).
    pub fn launch(&self) -> &str {
        &self.launch
    }

    /// The per-launch token (handed to the page the studio serves, never logged).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The per-launch key in preview asset URLs. The sandboxed preview has an opaque origin,
    /// so `Cross-Origin-Resource-Policy` cannot tell its asset loads from another site's
    /// `<script src>`; the key can: only the studio's own documents carry it. It grants
    /// nothing but those reads, so unlike the token it may appear in untrusted documents.
    pub fn preview_key(&self) -> &str {
        &self.preview_key
    }

    /// Checks a request's Host, Origin and (for state-changing requests and the WebSocket) token.
    pub fn check(
        &self,
        method: &Method,
        path: &str,
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Result<(), Refusal> {
        let host = headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        if !self
            .allowed_hosts
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(host))
        {
            return Err(Refusal::ForeignHost);
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or_default();
            let own = self
                .allowed_hosts
                .iter()
                .any(|allowed| origin.eq_ignore_ascii_case(&format!("http://{allowed}")));
            // The sandboxed preview has an opaque origin: it may only read its own documents
            // and assets.
            let sandboxed_preview_read =
                origin == "null" && *method == Method::GET && is_preview_path(path);
            if !own && !sandboxed_preview_read {
                return Err(Refusal::ForeignOrigin);
            }
        }
        if needs_token(method, path) && !self.token_matches(method, path, headers, query) {
            return Err(Refusal::MissingToken);
        }
        Ok(())
    }

    /// The token comes in the header; only the WebSocket upgrade, whose browser API cannot set
    /// headers, may carry it in the query (a query token elsewhere would end up in logs and
    /// history for no reason, and makes a forged link or form enough to act).
    fn token_matches(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        query: Option<&str>,
    ) -> bool {
        let header_token = header_token(headers);
        let query_token = query
            .filter(|_| *method == Method::GET && path == EVENTS_PATH)
            .and_then(|query| {
                query.split('&').find_map(|pair| {
                    pair.strip_prefix(TOKEN_QUERY)
                        .and_then(|rest| rest.strip_prefix('='))
                })
            });
        header_token
            .or(query_token)
            .is_some_and(|given| constant_time_eq(given.as_bytes(), self.token.as_bytes()))
    }
}

/// The token of a request's headers: `x-studio-token`, else an `Authorization: Bearer` one.
fn header_token(headers: &HeaderMap) -> Option<&str> {
    let studio = headers
        .get(TOKEN_HEADER)
        .and_then(|value| value.to_str().ok());
    studio.or_else(|| {
        headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(bearer_token)
    })
}

/// `<token>` of `Bearer <token>` (the scheme is case-insensitive, RFC 9110).
fn bearer_token(authorization: &str) -> Option<&str> {
    let (scheme, token) = authorization.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}

/// The WebSocket of live events (the one route that takes the token in its query).
const EVENTS_PATH: &str = "/api/events";

/// Preview documents and assets of every surface (standalone, editor, web coding).
const PREVIEW_PREFIXES: &[&str] = &["/preview/", "/editor/preview/", "/web/preview/"];

/// Whether `path` is a preview document or asset of any surface.
pub(crate) fn is_preview_path(path: &str) -> bool {
    PREVIEW_PREFIXES
        .iter()
        .any(|prefix| path.starts_with(prefix))
}

/// State-changing methods, the WebSocket upgrade, diffs (approval diffs and the unsaved
/// changes show file source) and the MCP servers (their commands, arguments and URLs may hold
/// credentials the mask cannot recognise) need the token; other reads do not.
fn needs_token(method: &Method, path: &str) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
        || path.starts_with(EVENTS_PATH)
        || path == CHANGES_PATH
        || path == MCP_SERVERS_PATH
        || is_approval_diff_path(path)
}

/// The mounted MCP servers' configuration and states.
const MCP_SERVERS_PATH: &str = "/api/mcp/servers";

/// The unsaved changes of the workspace (file source).
const CHANGES_PATH: &str = "/api/changes";

/// `/api/approvals/{id}/diff`.
fn is_approval_diff_path(path: &str) -> bool {
    path.strip_prefix("/api/approvals/")
        .and_then(|rest| rest.strip_suffix("/diff"))
        .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Axum middleware applying [`SecurityPolicy::check`]; refusals are coded JSON, `401` for a
/// missing token, `403` otherwise ([`Refusal::into_response_with`]).
pub async fn guard(State(policy): State<SecurityPolicy>, request: Request, next: Next) -> Response {
    let uri = request.uri();
    match policy.check(request.method(), uri.path(), uri.query(), request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refusal) => refusal.into_response_with(refusal.message()),
    }
}

/// Axum middleware giving every response the studio's embedding rules, unless the route set
/// its own (preview documents and assets, which only the studio itself may frame or load):
/// no other site may frame a studio page (clickjacking its Approve, Save or Settings), read a
/// response as a script or image, or sniff a type into one.
pub async fn protect_responses(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, "frame-ancestors 'none'"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ] {
        headers
            .entry(name)
            .or_insert(axum::http::HeaderValue::from_static(value));
    }
    headers
        .entry("cross-origin-resource-policy")
        .or_insert(axum::http::HeaderValue::from_static("same-origin"));
    response
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;

    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    #[test]
    fn reads_need_only_the_own_host() {
        let policy = SecurityPolicy::new(4870, "secret-token");
        assert_eq!(
            policy.check(
                &Method::GET,
                "/api/tools",
                None,
                &headers(&[("host", "127.0.0.1:4870")])
            ),
            Ok(())
        );
        assert_eq!(
            policy.check(
                &Method::GET,
                "/",
                None,
                &headers(&[("host", "localhost:4870")])
            ),
            Ok(())
        );
        assert_eq!(
            policy.check(
                &Method::GET,
                "/",
                None,
                &headers(&[("host", "evil.example:4870")])
            ),
            Err(Refusal::ForeignHost)
        );
        assert_eq!(
            policy.check(
                &Method::GET,
                "/",
                None,
                &headers(&[("host", "127.0.0.1:9999")])
            ),
            Err(Refusal::ForeignHost)
        );
        assert_eq!(
            policy.check(&Method::GET, "/", None, &HeaderMap::new()),
            Err(Refusal::ForeignHost)
        );
    }

    #[test]
    fn foreign_origins_are_refused() {
        let policy = SecurityPolicy::new(4870, "t");
        let foreign = headers(&[
            ("host", "127.0.0.1:4870"),
            ("origin", "http://evil.example"),
        ]);
        assert_eq!(
            policy.check(&Method::GET, "/api/tools", None, &foreign),
            Err(Refusal::ForeignOrigin)
        );
        let own = headers(&[
            ("host", "127.0.0.1:4870"),
            ("origin", "http://127.0.0.1:4870"),
            (TOKEN_HEADER, "t"),
        ]);
        assert_eq!(
            policy.check(&Method::POST, "/api/tools/call", None, &own),
            Ok(())
        );
        let null_origin = headers(&[("host", "127.0.0.1:4870"), ("origin", "null")]);
        assert_eq!(
            policy.check(&Method::GET, "/api/tools", None, &null_origin),
            Err(Refusal::ForeignOrigin),
            "sandboxed iframes send Origin: null"
        );
        assert_eq!(
            policy.check(
                &Method::GET,
                "/preview/3/assets/font.woff2",
                None,
                &null_origin
            ),
            Ok(()),
            "the preview may load its own assets"
        );
        for asset in [
            "/editor/preview/7/assets/a.woff2",
            "/web/preview/2/assets/b.png",
        ] {
            assert_eq!(
                policy.check(&Method::GET, asset, None, &null_origin),
                Ok(()),
                "{asset}"
            );
        }
        assert_eq!(
            policy.check(&Method::POST, "/preview/3", None, &null_origin),
            Err(Refusal::ForeignOrigin)
        );
        assert_eq!(
            policy.check(&Method::POST, "/api/editor/preview/ack", None, &null_origin),
            Err(Refusal::ForeignOrigin),
            "the iframe never acknowledges itself"
        );
    }

    #[test]
    fn mutations_and_the_websocket_need_the_token() {
        let policy = SecurityPolicy::new(4870, "t0k");
        let host = headers(&[("host", "127.0.0.1:4870")]);
        assert_eq!(
            policy.check(&Method::POST, "/api/tools/call", None, &host),
            Err(Refusal::MissingToken)
        );
        let wrong = headers(&[("host", "127.0.0.1:4870"), (TOKEN_HEADER, "t0K")]);
        assert_eq!(
            policy.check(&Method::POST, "/api/tools/call", None, &wrong),
            Err(Refusal::MissingToken)
        );
        assert_eq!(
            policy.check(&Method::GET, "/api/events", None, &host),
            Err(Refusal::MissingToken)
        );
        assert_eq!(
            policy.check(&Method::GET, "/api/events", Some("token=t0k"), &host),
            Ok(())
        );
        assert_eq!(
            policy.check(&Method::GET, "/api/events", Some("x=1&token=t0k"), &host),
            Ok(())
        );
        assert!(!format!("{policy:?}").contains("t0k"));
    }

    #[test]
    fn approval_diffs_need_the_token_like_a_mutation() {
        assert!(needs_token(&Method::GET, "/api/approvals/a-1/diff"));
        assert!(!needs_token(&Method::GET, "/api/approvals"));
        assert!(!needs_token(&Method::GET, "/api/approvals/a-1/diffs"));
        assert!(needs_token(&Method::GET, "/api/changes"));
        assert!(needs_token(&Method::GET, "/api/mcp/servers"));
    }

    #[test]
    fn a_bearer_authorization_carries_the_token_too() {
        let policy = SecurityPolicy::new(4870, "t0k");
        let post = |authorization: &str| {
            let given = headers(&[("host", "127.0.0.1:4870"), ("authorization", authorization)]);
            policy.check(&Method::POST, "/mcp", None, &given)
        };
        assert_eq!(post("Bearer t0k"), Ok(()));
        assert_eq!(post("bearer  t0k "), Ok(()));
        for refused in ["Bearer t0K", "Bearer", "Basic t0k", "t0k", "Bearer "] {
            assert_eq!(post(refused), Err(Refusal::MissingToken), "{refused}");
        }
    }

    #[test]
    fn a_missing_token_is_401_with_a_bearer_challenge_and_a_foreign_host_403() {
        let missing = Refusal::MissingToken.into_response_with("m");
        assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
        let challenge = missing.headers()[header::WWW_AUTHENTICATE]
            .to_str()
            .unwrap();
        assert!(
            challenge.starts_with("Bearer realm=\"live-code-studio\""),
            "{challenge}"
        );
        let foreign = Refusal::ForeignHost.into_response_with("m");
        assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
        assert!(!foreign.headers().contains_key(header::WWW_AUTHENTICATE));
    }

    #[test]
    fn only_the_websocket_takes_the_token_in_its_query() {
        let policy = SecurityPolicy::new(4870, "t0k");
        let host = headers(&[("host", "127.0.0.1:4870")]);
        for (method, path) in [
            (Method::POST, "/api/tools/call"),
            (Method::PUT, "/api/settings"),
            (Method::POST, "/api/events"),
            (Method::GET, "/api/events/other"),
        ] {
            assert_eq!(
                policy.check(&method, path, Some("token=t0k"), &host),
                Err(Refusal::MissingToken),
                "{method} {path}"
            );
        }
    }
}
