//! A handler polled in place on the calling task, handed to its own task only when the call
//! stops waiting for it.
//!
//! A call that waits for its handler to the end costs no task spawn. When the call stops
//! waiting before the handler finishes (deadline, cancellation, shutdown, or the call's future
//! dropped), the handler is moved to a task of its own so it drains detached, with its token
//! already cancelled by the call signal.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use tool_protocol::ToolCallError;

use crate::tool::HandlerOutput;

/// What a handler's future yields.
pub(crate) type HandlerOutcome = Result<HandlerOutput, ToolCallError>;

type BoxedHandler = Pin<Box<dyn Future<Output = HandlerOutcome> + Send>>;

/// The handler panicked while the call was polling it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HandlerPanicked;

/// A handler future polled by the call itself; detached on drop when started and unfinished.
pub(crate) struct HandlerRun {
    /// `None` once it finished or panicked (a panicked future is never polled again).
    handler: Option<BoxedHandler>,
    /// A handler never polled has done nothing, so dropping it unpolled is safe.
    started: bool,
}

impl HandlerRun {
    pub(crate) fn new(handler: impl Future<Output = HandlerOutcome> + Send + 'static) -> Self {
        Self {
            handler: Some(Box::pin(handler)),
            started: false,
        }
    }
}

impl Future for HandlerRun {
    type Output = Result<HandlerOutcome, HandlerPanicked>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.started = true;
        let Some(handler) = self.handler.as_mut() else {
            panic!("HandlerRun polled after completion");
        };
        let polled = catch_unwind(AssertUnwindSafe(|| handler.as_mut().poll(cx)));
        let done = match polled {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(outcome)) => Ok(outcome),
            Err(_) => Err(HandlerPanicked),
        };
        self.handler = None;
        Poll::Ready(done)
    }
}

impl Drop for HandlerRun {
    /// The call stopped waiting: a started handler drains on its own task. Outside a Tokio
    /// runtime there is nowhere to drain it, so it is dropped.
    fn drop(&mut self) {
        let Some(handler) = self.handler.take() else {
            return;
        };
        if !self.started {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            drop(runtime.spawn(handler));
        }
    }
}
