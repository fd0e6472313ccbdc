//! HTTP bridge (feature `http`): sends one request with an `Idempotency-Key` header and lets an
//! injected classifier decide the outcome.
//!
//! No status code is interpreted here: the classifier returns `completed` only for an
//! authoritative acknowledgement, `failed` only for a confirmed pre-send rejection, and
//! `unknown` otherwise. A transport error is `unknown` unless the request's error classifier
//! says otherwise. Recovery goes through [`SideEffectRunner::recover`] with a status query;
//! the bridge never re-sends.

use reqwest::header::{HeaderMap, HeaderValue};

use super::{
    SideEffectContext, SideEffectOutcome, SideEffectRequest, SideEffectResult, SideEffectRunner,
};
use crate::error::DurableOperationError;

/// Header carrying the operation key to the provider.
pub const IDEMPOTENCY_KEY_HEADER: &str = "Idempotency-Key";
/// Largest response body handed to the classifier; a longer body makes the outcome unknown.
pub const MAX_HTTP_ACKNOWLEDGEMENT_BYTES: usize = 1_048_576;

/// The provider's response as the classifier sees it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpAcknowledgement {
    /// Status code.
    pub status: u16,
    /// Response headers.
    pub headers: HeaderMap,
    /// Body, at most [`MAX_HTTP_ACKNOWLEDGEMENT_BYTES`].
    pub body: Vec<u8>,
}

impl HttpAcknowledgement {
    /// An acknowledgement with `status`, `headers` and `body` (for testing a classifier).
    pub fn new(status: u16, headers: HeaderMap, body: Vec<u8>) -> Self {
        Self {
            status,
            headers,
            body,
        }
    }

    /// The body parsed as JSON, if it is JSON.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// Runs one HTTP mutation under the runner. `build` creates the request (the bridge adds the
/// `Idempotency-Key` header); `classify` maps the acknowledgement to an outcome.
///
/// The key must be a valid header value (visible ASCII); otherwise nothing is claimed or sent.
pub async fn run_http_side_effect<B, C>(
    runner: &SideEffectRunner,
    request: SideEffectRequest,
    build: B,
    classify: C,
) -> Result<SideEffectResult, DurableOperationError>
where
    B: FnOnce(&SideEffectContext) -> reqwest::RequestBuilder,
    C: FnOnce(HttpAcknowledgement) -> SideEffectOutcome + Send + 'static,
{
    let header = HeaderValue::from_str(&request.key).map_err(|_| {
        DurableOperationError::invalid(
            "key",
            "must be a valid HTTP header value for Idempotency-Key",
        )
    })?;
    runner
        .run(request, move |context| {
            let sending = build(&context)
                .header(IDEMPOTENCY_KEY_HEADER, header)
                .send();
            async move {
                let response = sending.await?;
                Ok(match read_acknowledgement(response).await? {
                    Some(acknowledgement) => classify(acknowledgement),
                    None => SideEffectOutcome::unknown(format!(
                        "provider response exceeded {MAX_HTTP_ACKNOWLEDGEMENT_BYTES} bytes"
                    )),
                })
            }
        })
        .await
}

/// Reads the response; `None` when the body is over the bound.
async fn read_acknowledgement(
    mut response: reqwest::Response,
) -> Result<Option<HttpAcknowledgement>, reqwest::Error> {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > MAX_HTTP_ACKNOWLEDGEMENT_BYTES {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(HttpAcknowledgement {
        status,
        headers,
        body,
    }))
}
