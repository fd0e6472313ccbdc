//! An OAuth 2.1 resource server for the streamable HTTP transport, as the MCP authorization
//! specification asks of a remote server (feature `oauth`).
//!
//! - [`OAuthResourceServer::metadata_service`] answers RFC 9728 protected-resource metadata at
//!   `/.well-known/oauth-protected-resource` and its path-suffixed form
//!   ([`OAuthResourceServer::metadata_paths`]), so clients discover the authorization server.
//! - [`OAuthResourceServer::layer`] checks every request's `Authorization: Bearer` JWT: signed
//!   by a key from the issuer's JWKS (cached, refreshed on rotation, see [`keys`]), `iss` the
//!   configured issuer, `aud` this resource (RFC 8707), `exp`/`nbf` within a bounded leeway.
//!   Refusals are `401` with a challenge naming the metadata, or `403 insufficient_scope`
//!   naming every required scope at once ([`AuthRefusal`]).
//! - A streamable HTTP session answers only the principal that opened it ([`sessions`]).
//! - An accepted token becomes a [`Principal`] in the request's extensions: the server binds
//!   approval states, tasks and records to it, and its scopes map to the tools it may see and
//!   call ([`OAuthResourceServerBuilder::scope_tools`]).
//!
//! ```no_run
//! # async fn serve(mcp: tool_context_mcp::McpToolServer) {
//! use tool_context_mcp::oauth::OAuthResourceServer;
//! let oauth = OAuthResourceServer::builder("https://tools.example/mcp", "https://login.example")
//!     .required_scopes(["mcp:tools"])
//!     .scope_tools("notes:read", ["notes.read", "notes.list"])
//!     .scope_tools("notes:write", ["notes.*"])
//!     .build()
//!     .unwrap();
//! let service = tool_context_mcp::streamable_http_service(&mcp, Default::default());
//! let mut app: axum::Router = axum::Router::new().nest_service("/mcp", oauth.layer().wrap(service));
//! for path in oauth.metadata_paths() {
//!     app = app.route_service(&path, oauth.metadata_service());
//! }
//! # }
//! ```

pub mod keys;
mod layer;
mod metadata;
mod refusal;
pub mod sessions;
mod token;

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderMap;
use tool_context::ToolNamePatterns;

pub use layer::{MetadataService, OAuthLayer, OAuthService};
pub use metadata::{ProtectedResourceMetadata, WELL_KNOWN_PATH};
pub use refusal::{
    AuthRefusal, MCP_AUTH_REQUIRED, MCP_AUTH_UNAVAILABLE, MCP_INSUFFICIENT_SCOPE,
    MCP_SESSION_NOT_FOUND, MCP_TOKEN_INVALID,
};
pub use token::MAX_TOKEN_BYTES;

use crate::principal::Principal;
use keys::KeyCache;
use token::{Expectations, TokenError};

/// Clock skew tolerated on `exp` and `nbf` unless configured.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);
/// The most clock skew that can be configured.
pub const MAX_LEEWAY: Duration = Duration::from_secs(300);

/// Validates bearer JWTs for one resource (see the module docs). Cheap to clone; clones share
/// the key cache.
#[derive(Clone)]
pub struct OAuthResourceServer {
    inner: Arc<Inner>,
}

struct Inner {
    resource: String,
    resource_path: String,
    metadata_url: String,
    issuer: String,
    required_scopes: BTreeSet<String>,
    scope_tools: Vec<(String, ToolNamePatterns)>,
    leeway: Duration,
    resource_name: Option<String>,
    keys: KeyCache,
}

impl fmt::Debug for OAuthResourceServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthResourceServer")
            .field("resource", &self.inner.resource)
            .field("issuer", &self.inner.issuer)
            .field("required_scopes", &self.inner.required_scopes)
            .finish_non_exhaustive()
    }
}

/// Why a configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthConfigError {
    /// The resource, issuer or JWKS URL is not an absolute `http(s)` URL without a fragment.
    #[error("{which} must be an absolute http(s) URL without a fragment: {url:?}")]
    InvalidUrl {
        /// Which setting.
        which: &'static str,
        /// The value given.
        url: String,
    },
}

/// Configures an [`OAuthResourceServer`].
#[derive(Debug)]
pub struct OAuthResourceServerBuilder {
    resource: String,
    issuer: String,
    jwks_uri: Option<String>,
    required_scopes: BTreeSet<String>,
    scope_tools: Vec<(String, ToolNamePatterns)>,
    leeway: Duration,
    resource_name: Option<String>,
    client: Option<reqwest::Client>,
}

impl OAuthResourceServer {
    /// A builder for the resource `resource` (the MCP endpoint's canonical URL, which tokens
    /// must name as their audience) trusting tokens of `issuer`.
    pub fn builder(
        resource: impl Into<String>,
        issuer: impl Into<String>,
    ) -> OAuthResourceServerBuilder {
        OAuthResourceServerBuilder {
            resource: resource.into(),
            issuer: issuer.into(),
            jwks_uri: None,
            required_scopes: BTreeSet::new(),
            scope_tools: Vec::new(),
            leeway: DEFAULT_LEEWAY,
            resource_name: None,
            client: None,
        }
    }

    /// The resource identifier (the audience tokens must carry).
    pub fn resource(&self) -> &str {
        &self.inner.resource
    }

    /// The URL of the metadata, as named in challenges.
    pub fn metadata_url(&self) -> &str {
        &self.inner.metadata_url
    }

    /// The paths the metadata is served at: the path-suffixed form, then the root form.
    pub fn metadata_paths(&self) -> Vec<String> {
        let suffixed = metadata::path_for(&self.inner.resource_path);
        let mut paths = vec![suffixed];
        if paths[0] != WELL_KNOWN_PATH {
            paths.push(WELL_KNOWN_PATH.to_owned());
        }
        paths
    }

    /// The metadata document.
    pub fn metadata(&self) -> ProtectedResourceMetadata {
        let inner = &self.inner;
        let mut scopes = inner.required_scopes.clone();
        scopes.extend(inner.scope_tools.iter().map(|(scope, _)| scope.clone()));
        ProtectedResourceMetadata {
            resource: inner.resource.clone(),
            authorization_servers: vec![inner.issuer.clone()],
            scopes_supported: scopes,
            bearer_methods_supported: vec!["header".to_owned()],
            resource_name: inner.resource_name.clone(),
        }
    }

    /// The principal of a request with `headers`, or why it is refused.
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, AuthRefusal> {
        let inner = &self.inner;
        let token = bearer_token(headers).map_err(|refusal| match refusal {
            None => AuthRefusal::missing(&inner.metadata_url, &self.scopes_to_ask()),
            Some(why) => AuthRefusal::invalid(&inner.metadata_url, why),
        })?;
        let expected = Expectations {
            issuer: &inner.issuer,
            audience: &inner.resource,
            leeway: inner.leeway,
        };
        let claims =
            token::check(token, &inner.keys, &expected)
                .await
                .map_err(|error| match error {
                    TokenError::Invalid(why) => AuthRefusal::invalid(&inner.metadata_url, &why),
                    TokenError::KeysUnavailable(why) => AuthRefusal::unavailable(&why),
                })?;
        if !inner.required_scopes.is_subset(&claims.scopes) {
            return Err(AuthRefusal::scope(
                &inner.metadata_url,
                &self.scopes_to_ask(),
            ));
        }
        let tools = self.tools_of(&claims.scopes);
        Ok(Principal::new(claims.subject)
            .with_issuer(inner.issuer.clone())
            .with_scopes(claims.scopes)
            .with_tools(tools))
    }

    /// The scopes a client should ask for: every required scope.
    fn scopes_to_ask(&self) -> String {
        let required: Vec<&str> = self
            .inner
            .required_scopes
            .iter()
            .map(String::as_str)
            .collect();
        required.join(" ")
    }

    /// The tools `scopes` grant: every tool when no scope is mapped, else the union of the
    /// mapped scopes' patterns.
    fn tools_of(&self, scopes: &BTreeSet<String>) -> ToolNamePatterns {
        if self.inner.scope_tools.is_empty() {
            return ToolNamePatterns::all();
        }
        self.inner
            .scope_tools
            .iter()
            .filter(|(scope, _)| scopes.contains(scope))
            .fold(ToolNamePatterns::none(), |granted, (_, tools)| {
                granted.union(tools)
            })
    }

    /// A tower layer that authenticates every request before `inner` sees it.
    pub fn layer(&self) -> OAuthLayer {
        OAuthLayer::new(self.clone())
    }

    /// A tower service answering `GET` of the metadata (mount it at each of
    /// [`Self::metadata_paths`]).
    pub fn metadata_service(&self) -> MetadataService {
        MetadataService::new(&self.metadata())
    }
}

impl OAuthResourceServerBuilder {
    /// Reads keys from `jwks_uri` instead of discovering it from the issuer's metadata.
    #[must_use]
    pub fn jwks_uri(mut self, jwks_uri: impl Into<String>) -> Self {
        self.jwks_uri = Some(jwks_uri.into());
        self
    }

    /// Scopes every token must carry; a token without all of them gets `403
    /// insufficient_scope` naming them all.
    #[must_use]
    pub fn required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Grants the tools matching `patterns` (see [`ToolNamePatterns`]) to tokens with `scope`.
    /// Once any scope is mapped, a token sees and calls only the tools its scopes grant; with
    /// none mapped, every tool the registry serves.
    #[must_use]
    pub fn scope_tools<I, S>(mut self, scope: impl Into<String>, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scope_tools
            .push((scope.into(), ToolNamePatterns::new(patterns)));
        self
    }

    /// Clock skew tolerated on `exp` and `nbf` (default [`DEFAULT_LEEWAY`], at most
    /// [`MAX_LEEWAY`]).
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway.min(MAX_LEEWAY);
        self
    }

    /// The human-readable `resource_name` of the metadata.
    #[must_use]
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// The HTTP client keys are fetched with (default: a new one).
    #[must_use]
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// The resource server, or why the configuration is unusable.
    pub fn build(self) -> Result<OAuthResourceServer, OAuthConfigError> {
        let resource = absolute_url("resource", &self.resource)?;
        absolute_url("issuer", &self.issuer)?;
        if let Some(jwks_uri) = &self.jwks_uri {
            absolute_url("jwks_uri", jwks_uri)?;
        }
        let resource_path = resource.path().to_owned();
        let metadata_url = format!(
            "{}{}",
            resource.origin().ascii_serialization(),
            metadata::path_for(&resource_path)
        );
        let keys = KeyCache::new(
            self.client.unwrap_or_default(),
            self.issuer.clone(),
            self.jwks_uri,
        );
        Ok(OAuthResourceServer {
            inner: Arc::new(Inner {
                resource: self.resource,
                resource_path,
                metadata_url,
                issuer: self.issuer,
                required_scopes: self.required_scopes,
                scope_tools: self.scope_tools,
                leeway: self.leeway,
                resource_name: self.resource_name,
                keys,
            }),
        })
    }
}

fn absolute_url(which: &'static str, url: &str) -> Result<reqwest::Url, OAuthConfigError> {
    let invalid = || OAuthConfigError::InvalidUrl {
        which,
        url: url.to_owned(),
    };
    let parsed = reqwest::Url::parse(url).map_err(|_| invalid())?;
    let usable = matches!(parsed.scheme(), "http" | "https")
        && parsed.host().is_some()
        && parsed.fragment().is_none();
    usable.then_some(parsed).ok_or_else(invalid)
}

/// The token of the one `Authorization: Bearer` header: `Err(None)` when there is none,
/// `Err(Some(why))` when it is unusable. A token in the query string is never read (OAuth 2.1).
fn bearer_token(headers: &HeaderMap) -> Result<&str, Option<&'static str>> {
    let mut values = headers.get_all(http::header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(None);
    };
    if values.next().is_some() {
        return Err(Some("the request has more than one Authorization header."));
    }
    let text = value
        .to_str()
        .map_err(|_| Some("the Authorization header is not text."))?;
    let (scheme, token) = text.trim().split_once(' ').unwrap_or((text.trim(), ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(None);
    }
    let token = token.trim();
    if token.is_empty() {
        return Err(Some("the Bearer token is empty."));
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> OAuthResourceServer {
        OAuthResourceServer::builder("http://127.0.0.1:9/mcp", "http://127.0.0.1:8")
            .required_scopes(["mcp:tools"])
            .scope_tools("notes:read", ["notes.read"])
            .scope_tools("notes:write", ["notes.*"])
            .build()
            .unwrap()
    }

    fn headers(authorization: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in authorization {
            headers.append(http::header::AUTHORIZATION, value.parse().unwrap());
        }
        headers
    }

    #[test]
    fn metadata_names_the_resource_issuer_and_every_scope() {
        let server = server();
        assert_eq!(
            server.metadata_url(),
            "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            server.metadata_paths(),
            ["/.well-known/oauth-protected-resource/mcp", WELL_KNOWN_PATH]
        );
        let metadata = serde_json::to_value(server.metadata()).unwrap();
        assert_eq!(metadata["resource"], "http://127.0.0.1:9/mcp");
        assert_eq!(metadata["authorization_servers"][0], "http://127.0.0.1:8");
        assert_eq!(
            metadata["scopes_supported"],
            serde_json::json!(["mcp:tools", "notes:read", "notes:write"])
        );
        assert_eq!(metadata["bearer_methods_supported"][0], "header");
    }

    #[test]
    fn scopes_grant_the_union_of_their_tools() {
        let server = server();
        let scopes = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect();
        let readers = server.tools_of(&scopes(&["mcp:tools", "notes:read"]));
        assert!(readers.matches("notes.read") && !readers.matches("notes.write"));
        let writers = server.tools_of(&scopes(&["notes:read", "notes:write"]));
        assert!(writers.matches("notes.write"));
        assert!(
            !server
                .tools_of(&scopes(&["mcp:tools"]))
                .matches("notes.read")
        );
    }

    #[test]
    fn only_one_non_empty_bearer_header_is_a_token() {
        assert_eq!(bearer_token(&headers(&[])), Err(None));
        assert_eq!(bearer_token(&headers(&["Basic abc"])), Err(None));
        assert_eq!(bearer_token(&headers(&["bearer  t.k.n "])), Ok("t.k.n"));
        assert!(matches!(bearer_token(&headers(&["Bearer "])), Err(Some(_))));
        assert!(matches!(
            bearer_token(&headers(&["Bearer a", "Bearer b"])),
            Err(Some(_))
        ));
    }

    #[tokio::test]
    async fn a_request_without_a_token_is_challenged_without_fetching_keys() {
        let refusal = server().authenticate(&headers(&[])).await.unwrap_err();
        assert_eq!(refusal.code(), MCP_AUTH_REQUIRED);
        assert_eq!(
            refusal.challenge(),
            Some(
                "Bearer resource_metadata=\"http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:tools\""
            )
        );
        let garbage = server()
            .authenticate(&headers(&["Bearer not-a-jwt"]))
            .await
            .unwrap_err();
        assert_eq!(garbage.code(), MCP_TOKEN_INVALID);
    }

    #[tokio::test]
    async fn an_unreachable_issuer_is_a_retryable_503_not_a_token_verdict() {
        use base64::Engine as _;
        let encode = |value: serde_json::Value| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
        };
        let token = format!(
            "{}.{}.c2ln",
            encode(serde_json::json!({"alg": "RS256", "kid": "k1"})),
            encode(serde_json::json!({"sub": "a"}))
        );
        // Port 9 on loopback: nothing listens, the fetch fails at once.
        let refusal = server()
            .authenticate(&headers(&[&format!("Bearer {token}")]))
            .await
            .unwrap_err();
        assert_eq!(refusal.status(), http::StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refusal.code(), MCP_AUTH_UNAVAILABLE);
        assert_eq!(refusal.challenge(), None);
    }

    #[test]
    fn urls_must_be_absolute_http_without_a_fragment() {
        for bad in ["/mcp", "ftp://x/mcp", "http://x/mcp#frag", "not a url"] {
            let built = OAuthResourceServer::builder(bad, "http://as").build();
            assert!(
                matches!(
                    built,
                    Err(OAuthConfigError::InvalidUrl {
                        which: "resource",
                        ..
                    })
                ),
                "{bad}"
            );
        }
        assert!(
            OAuthResourceServer::builder("http://x/mcp", "as")
                .build()
                .is_err()
        );
    }
}
