//! A handler polled in place on the calling task, handed to its own task only when the call
//! stops waiting for it.
//!
//! A call that waits for its handler to the end costs no task spawn and no wrapper future:
//! the handler's own boxed future ([`ToolHandler::call_owned`]) is polled inside the call's
//! span (entered by the call future around it). When the call stops waiting before the
//! handler finishes (deadline, cancellation, shutdown, or the call's future dropped), the
//! handler is moved to a task of its own, in that span, so it drains detached with its
//! cancellation already fired by the call signal.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::Value;
use tool_protocol::ToolCallError;
use tracing::{Instrument, Span};

use crate::tool::{
    HandlerFuture, HandlerOutput, ToolHandler, ToolInvocation, with_validation_mode,
};
use crate::validation::ValidationMode;

/// What a handler's future yields.
pub(crate) type HandlerOutcome = Result<HandlerOutput, ToolCallError>;

/// The handler panicked while the call was polling it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HandlerPanicked;

/// A handler future polled by the call itself; detached on drop when unfinished.
pub(crate) struct HandlerRun {
    /// `None` once it finished or panicked (a panicked future is never polled again).
    handler: Option<HandlerFuture>,
}

impl HandlerRun {
    /// Calls `handler` now, under `mode` (a typed handler decodes its input in the call) and
    /// catching a panic, and returns the run of the future it gave. Only after the call
    /// signal was checked: the run's first poll (inside its race) follows at once, so a
    /// started handler is always polled.
    pub(crate) fn start(
        handler: &Arc<dyn ToolHandler>,
        arguments: Value,
        invocation: ToolInvocation,
        mode: ValidationMode,
    ) -> Result<Self, HandlerPanicked> {
        let call = || Arc::clone(handler).call_owned(arguments, invocation);
        match catch_unwind(AssertUnwindSafe(|| with_validation_mode(mode, call))) {
            Ok(handler) => Ok(Self {
                handler: Some(handler),
            }),
            Err(_) => Err(HandlerPanicked),
        }
    }
}

impl Future for HandlerRun {
    type Output = Result<HandlerOutcome, HandlerPanicked>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let Some(handler) = this.handler.as_mut() else {
            panic!("HandlerRun polled after completion");
        };
        let polled = catch_unwind(AssertUnwindSafe(|| handler.as_mut().poll(cx)));
        let done = match polled {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(outcome)) => Ok(outcome),
            Err(_) => Err(HandlerPanicked),
        };
        this.handler = None;
        Poll::Ready(done)
    }
}

impl Drop for HandlerRun {
    /// The call stopped waiting: an unfinished handler drains on its own task, in the call's
    /// span (current here: the call future is instrumented, and tracing enters the span to
    /// drop it). Outside a Tokio runtime there is nowhere to drain it, so it is dropped.
    fn drop(&mut self) {
        let Some(handler) = self.handler.take() else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            drop(runtime.spawn(handler.instrument(Span::current())));
        }
    }
}
