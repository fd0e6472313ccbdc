//! The tower pieces: [`OAuthLayer`] / [`OAuthService`] in front of the MCP service, and
//! [`MetadataService`] for the well-known metadata.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};

use super::sessions::{SessionCheck, SessionOwners};
use super::{AuthRefusal, OAuthResourceServer, ProtectedResourceMetadata};

type BoxResponse = Response<BoxBody<Bytes, Infallible>>;

/// Authenticates every request (see [`OAuthResourceServer::layer`]).
#[derive(Debug, Clone)]
pub struct OAuthLayer {
    server: OAuthResourceServer,
}

impl OAuthLayer {
    pub(super) fn new(server: OAuthResourceServer) -> Self {
        Self { server }
    }

    /// `inner` behind the check (the same as [`tower::Layer::layer`]).
    pub fn wrap<S>(&self, inner: S) -> OAuthService<S> {
        OAuthService {
            server: self.server.clone(),
            sessions: Arc::default(),
            inner,
        }
    }
}

impl<S> tower::Layer<S> for OAuthLayer {
    type Service = OAuthService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        self.wrap(inner)
    }
}

/// `inner` reached only with an accepted token; the request then carries its
/// [`Principal`](crate::Principal) in its extensions.
#[derive(Debug, Clone)]
pub struct OAuthService<S> {
    server: OAuthResourceServer,
    sessions: Arc<SessionOwners>,
    inner: S,
}

impl<S, B> tower::Service<Request<B>> for OAuthService<S>
where
    S: tower::Service<Request<B>, Response = BoxResponse, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
    B: Send + 'static,
{
    type Response = BoxResponse;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<BoxResponse, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        // The service that was polled ready serves this request; the clone waits for the next.
        let ready = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, ready);
        let (server, sessions) = (self.server.clone(), self.sessions.clone());
        Box::pin(async move {
            let principal = match server.authenticate(request.headers()).await {
                Ok(principal) => principal,
                Err(refusal) => return Ok(refused(refusal)),
            };
            let owner = principal.owner_id();
            let session = session_id(request.headers());
            let check = sessions.check(session.as_deref(), &owner);
            if check == SessionCheck::Refused {
                return Ok(refused(AuthRefusal::foreign_session()));
            }
            let ending = request.method() == Method::DELETE;
            request.extensions_mut().insert(principal);
            let response = inner.call(request).await?;
            match (check, session) {
                (SessionCheck::NoSession, _) => {
                    if let Some(opened) = session_id(response.headers()) {
                        sessions.bind(&opened, &owner);
                    }
                }
                (_, Some(ended)) if ending && response.status().is_success() => {
                    sessions.forget(&ended);
                }
                _ => {}
            }
            Ok(response)
        })
    }
}

fn refused(refusal: AuthRefusal) -> BoxResponse {
    tracing::debug!(
        code = refusal.code(),
        "MCP request refused by the OAuth layer"
    );
    refusal.into_response()
}

/// The `Mcp-Session-Id` of a request or response.
fn session_id(headers: &http::HeaderMap) -> Option<String> {
    let value = headers.get("mcp-session-id")?;
    value.to_str().ok().map(str::to_owned)
}

/// Answers `GET`/`HEAD` with the metadata JSON (CORS-readable: it is public), anything else
/// with `405`.
#[derive(Debug, Clone)]
pub struct MetadataService {
    body: Bytes,
}

impl MetadataService {
    pub(super) fn new(metadata: &ProtectedResourceMetadata) -> Self {
        let body = serde_json::to_vec(metadata).unwrap_or_default();
        Self {
            body: Bytes::from(body),
        }
    }

    fn answer(&self, method: &Method) -> BoxResponse {
        if method != Method::GET && method != Method::HEAD {
            let mut response = Response::new(Full::new(Bytes::new()).boxed());
            *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return response;
        }
        let body = if method == Method::HEAD {
            Bytes::new()
        } else {
            self.body.clone()
        };
        let mut response = Response::new(Full::new(body).boxed());
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("max-age=300"),
        );
        response
    }
}

impl<B> tower::Service<Request<B>> for MetadataService {
    type Response = BoxResponse;
    type Error = Infallible;
    type Future = std::future::Ready<Result<BoxResponse, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        std::future::ready(Ok(self.answer(request.method())))
    }
}
