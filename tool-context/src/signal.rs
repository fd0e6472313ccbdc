//! The call signal: one [`CallCancellation`] per call, fired by the caller's cancellation, the
//! call's deadline or registry shutdown, whichever comes first, and when the call ends.

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tool_protocol::ToolCallError;

use crate::cancellation::CallCancellation;
use crate::failure::{aborted, approval_timed_out, cancelled, timed_out};
use crate::shutdown::RegistryShutdown;

/// What the call is waiting for when the signal fires (used in cancellation messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitStage {
    Policy,
    Interaction,
    Handler,
    SharedExecution,
    /// The durable claim, before the handler starts.
    DurableClaim,
    /// The durable terminal record, after the handler finished.
    DurableRecord,
}

impl WaitStage {
    fn waiting_for(self) -> &'static str {
        match self {
            Self::Policy => "policy",
            Self::Interaction => "interaction",
            Self::Handler => "the tool handler",
            Self::SharedExecution => "the shared idempotent execution",
            Self::DurableClaim | Self::DurableRecord => "the durable operation store",
        }
    }

    /// Whether a handler was started by the time the call waits here: the call's own (or,
    /// for a follower, the shared execution's). Before it, nothing runs or drains detached.
    fn handler_started(self) -> bool {
        match self {
            Self::Policy | Self::Interaction | Self::DurableClaim => false,
            Self::Handler | Self::SharedExecution | Self::DurableRecord => true,
        }
    }
}

/// Why a call's signal fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AbortReason {
    Cancelled,
    TimedOut,
    Shutdown,
}

pub(crate) struct CallSignal<'r> {
    /// Handed to policy, interaction and handler; fired when the signal fires and when the
    /// call ends or its future is dropped.
    cancellation: CallCancellation,
    caller: Option<CancellationToken>,
    /// The registry's, borrowed.
    shutdown: &'r RegistryShutdown,
    timeout_ms: Option<u64>,
    /// Set by [`Self::arm`] when the call starts running.
    deadline: OnceLock<Instant>,
    /// The separate bound on a person's approval, when set: the interaction waits for it
    /// instead of the deadline, which is pushed back by the wait ([`Self::pause_deadline_for`]).
    approval_timeout_ms: Option<u64>,
    /// How far the deadline was pushed back, ms.
    deadline_pushed_ms: AtomicU64,
}

impl<'r> CallSignal<'r> {
    /// A signal whose deadline (if any) [`Self::arm`] sets.
    pub(crate) fn new(
        caller: Option<CancellationToken>,
        shutdown: &'r RegistryShutdown,
        timeout_ms: Option<u64>,
        approval_timeout_ms: Option<u64>,
    ) -> Self {
        Self {
            cancellation: CallCancellation::new(),
            caller,
            shutdown,
            timeout_ms,
            deadline: OnceLock::new(),
            approval_timeout_ms,
            deadline_pushed_ms: AtomicU64::new(0),
        }
    }

    /// Whether a person's approval has its own bound (and so does not spend the call's time).
    pub(crate) fn bounds_approval(&self) -> bool {
        self.approval_timeout_ms.is_some()
    }

    /// Pushes the call's deadline back by the time since `asked_at`: the wait for a person
    /// that had its own bound.
    pub(crate) fn pause_deadline_for(&self, asked_at: Instant) {
        let waited = u64::try_from(asked_at.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.deadline_pushed_ms.fetch_add(waited, Ordering::Relaxed);
    }

    /// The deadline `stage` waits for: the approval bound (from now) while a person is asked
    /// under one, else the call's (pushed back by earlier approval waits).
    fn deadline_for(&self, stage: WaitStage) -> Option<Instant> {
        if stage == WaitStage::Interaction
            && let Some(ms) = self.approval_timeout_ms
        {
            return Some(Instant::now() + Duration::from_millis(ms));
        }
        let pushed = Duration::from_millis(self.deadline_pushed_ms.load(Ordering::Relaxed));
        self.deadline.get().map(|at| *at + pushed)
    }

    /// Arms the deadline now: when the call starts running (its first poll, after option
    /// validation), never before.
    pub(crate) fn arm(&self) {
        if let Some(ms) = self.timeout_ms {
            let _ = self
                .deadline
                .set(Instant::now() + std::time::Duration::from_millis(ms));
        }
    }

    /// Whether the registry has shut down.
    pub(crate) fn is_shut_down(&self) -> bool {
        self.shutdown.is_fired()
    }

    /// The cancellation given to policy, interaction and handler.
    pub(crate) fn cancellation(&self) -> &CallCancellation {
        &self.cancellation
    }

    /// Runs `work` until it finishes or the signal fires; on firing, cancels the call token
    /// and returns the coded error for `stage`. Cancellation and shutdown win a tie with the
    /// work, so a cancelled call never reports the work's result. The deadline only stops work
    /// that is still waiting when it passes: work that is ready when polled completes, which is
    /// what makes a zero timeout mean "nothing beyond what is already ready".
    ///
    /// Work that is ready at its first poll registers nothing: no token waiter and no timer
    /// are created (see [`Race`]).
    pub(crate) fn race<F: Future + Unpin>(&self, stage: WaitStage, work: F) -> Race<'_, F> {
        Race {
            signal: self,
            stage,
            work,
            waiters: None,
            skip_check: false,
        }
    }

    /// [`Self::race`] for work started right after [`Self::check`] passed: its first poll
    /// skips the fired check (a token is read under its lock).
    pub(crate) fn race_checked<F: Future + Unpin>(&self, stage: WaitStage, work: F) -> Race<'_, F> {
        Race {
            skip_check: true,
            ..self.race(stage, work)
        }
    }

    /// `Err` with the coded error for `stage` when the signal has already fired (the check a
    /// race makes before polling its work).
    pub(crate) fn check(&self, stage: WaitStage) -> Result<(), ToolCallError> {
        match self.fired() {
            Some(reason) => Err(self.fire(reason, stage)),
            None => Ok(()),
        }
    }

    /// [`Self::check`] when the registry's readiness was checked with nothing waited for
    /// since: shutdown would have failed that check (and a shared shutdown token is read under
    /// its lock), so only the caller's cancellation is read.
    pub(crate) fn check_caller(&self, stage: WaitStage) -> Result<(), ToolCallError> {
        if self.caller_cancelled() {
            Err(self.fire(AbortReason::Cancelled, stage))
        } else {
            Ok(())
        }
    }

    fn caller_cancelled(&self) -> bool {
        self.caller
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Why the signal has already fired, if it has (checked without registering a waiter).
    fn fired(&self) -> Option<AbortReason> {
        if self.caller_cancelled() {
            Some(AbortReason::Cancelled)
        } else if self.shutdown.is_fired() {
            Some(AbortReason::Shutdown)
        } else {
            None
        }
    }

    /// Waits for the signal: caller cancellation, then shutdown, then `deadline`.
    async fn fires(&self, deadline: Option<Instant>) -> AbortReason {
        let deadline = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            reason = self.interrupted() => reason,
            () = deadline => AbortReason::TimedOut,
        }
    }

    /// Fires on caller cancellation or registry shutdown.
    async fn interrupted(&self) -> AbortReason {
        let caller = async {
            match &self.caller {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            () = caller => AbortReason::Cancelled,
            () = self.shutdown.fired() => AbortReason::Shutdown,
        }
    }

    /// Fires the call's cancellation and returns the coded error for `reason` at `stage`.
    fn fire(&self, reason: AbortReason, stage: WaitStage) -> ToolCallError {
        self.cancellation.cancel();
        self.error(reason, stage)
    }

    fn error(&self, reason: AbortReason, stage: WaitStage) -> ToolCallError {
        match reason {
            AbortReason::Cancelled => cancelled(stage.waiting_for()),
            AbortReason::TimedOut => match self.approval_timeout_ms {
                Some(ms) if stage == WaitStage::Interaction => approval_timed_out(ms),
                _ => timed_out(self.timeout_ms.unwrap_or(0), stage.handler_started()),
            },
            AbortReason::Shutdown => {
                aborted("Tool registry shut down while the call was in flight.")
            }
        }
    }
}

impl Drop for CallSignal<'_> {
    /// A call that ends, or whose future is dropped mid-flight, fires its cancellation for
    /// whatever still holds it (no lock: see [`CallCancellation`]).
    fn drop(&mut self) {
        self.cancellation.cancel_if_observed();
    }
}

/// The signal's waiters (token wakers and the deadline timer), created only once the work
/// has returned `Pending`.
type Waiters<'s> = Pin<Box<dyn Future<Output = AbortReason> + Send + 's>>;

/// [`CallSignal::race`]: polls the fired check, then the work, then (only while the work
/// waits) the signal's waiters, in the order of a biased `select!` over the three.
///
/// A hand-written future rather than an `async fn`: it stays a few words in the call's
/// future, and work that is ready at its first poll costs two flag reads instead of two
/// token registrations, a timer entry and their removal.
pub(crate) struct Race<'s, F> {
    signal: &'s CallSignal<'s>,
    stage: WaitStage,
    work: F,
    waiters: Option<Waiters<'s>>,
    /// Set for the first poll of work whose start was checked just before.
    skip_check: bool,
}

impl<F: Future + Unpin> Future for Race<'_, F> {
    type Output = Result<F::Output, ToolCallError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if !std::mem::take(&mut this.skip_check)
            && let Some(reason) = this.signal.fired()
        {
            return Poll::Ready(Err(this.signal.fire(reason, this.stage)));
        }
        if let Poll::Ready(value) = Pin::new(&mut this.work).poll(cx) {
            return Poll::Ready(Ok(value));
        }
        let (signal, stage) = (this.signal, this.stage);
        let waiters = this
            .waiters
            .get_or_insert_with(|| Box::pin(signal.fires(signal.deadline_for(stage))));
        match waiters.as_mut().poll(cx) {
            Poll::Ready(reason) => Poll::Ready(Err(signal.fire(reason, this.stage))),
            Poll::Pending => Poll::Pending,
        }
    }
}
