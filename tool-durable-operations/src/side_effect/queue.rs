//! Queue bridge: an injected enqueue plus an acknowledgement classifier over the runner.
//!
//! An authoritative broker receipt may be `completed`, a confirmed rejection before enqueue
//! `failed`; a lost acknowledgement after publish (the enqueue future errors) is `unknown`
//! unless the request's error classifier says otherwise. The bridge never retries and never
//! infers completion on its own.

use std::future::Future;

use super::{
    SideEffectContext, SideEffectOutcome, SideEffectRequest, SideEffectResult, SideEffectRunner,
};
use crate::error::{BoxError, DurableOperationError};

/// Publishes `message` once through `enqueue` and classifies the acknowledgement.
pub async fn run_queue_side_effect<M, A, E, EFut, C>(
    runner: &SideEffectRunner,
    request: SideEffectRequest,
    message: M,
    enqueue: E,
    on_acknowledgement: C,
) -> Result<SideEffectResult, DurableOperationError>
where
    M: Send + 'static,
    E: FnOnce(M, SideEffectContext) -> EFut,
    EFut: Future<Output = Result<A, BoxError>> + Send + 'static,
    A: Send + 'static,
    C: FnOnce(A) -> SideEffectOutcome + Send + 'static,
{
    runner
        .run(request, move |context| {
            let sent = enqueue(message, context);
            async move { sent.await.map(on_acknowledgement) }
        })
        .await
}
