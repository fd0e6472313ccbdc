//! The call signal: one cancellation token per call, fired by the caller's cancellation, the
//! call's deadline or registry shutdown, whichever comes first.

use std::future::Future;
use std::pin::pin;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tool_protocol::ToolCallError;

use crate::failure::{aborted, cancelled, timed_out};

/// What the call is waiting for when the signal fires (used in cancellation messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitStage {
    Policy,
    Interaction,
    Handler,
    SharedExecution,
    DurableStore,
}

impl WaitStage {
    fn waiting_for(self) -> &'static str {
        match self {
            Self::Policy => "policy",
            Self::Interaction => "interaction",
            Self::Handler => "the tool handler",
            Self::SharedExecution => "the shared idempotent execution",
            Self::DurableStore => "the durable operation store",
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

pub(crate) struct CallSignal {
    /// Handed to policy, interaction and handler; cancelled when the signal fires and when the
    /// call's future is dropped.
    token: CancellationToken,
    caller: Option<CancellationToken>,
    shutdown: CancellationToken,
    deadline: Option<(Instant, u64)>,
}

impl CallSignal {
    /// Arms the deadline now (after option validation, never before).
    pub(crate) fn new(
        caller: Option<CancellationToken>,
        shutdown: CancellationToken,
        timeout_ms: Option<u64>,
    ) -> Self {
        let deadline =
            timeout_ms.map(|ms| (Instant::now() + std::time::Duration::from_millis(ms), ms));
        Self {
            token: CancellationToken::new(),
            caller,
            shutdown,
            deadline,
        }
    }

    /// Whether the registry has shut down.
    pub(crate) fn is_shut_down(&self) -> bool {
        self.shutdown.is_cancelled()
    }

    /// The token given to policy, interaction and handler.
    pub(crate) fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Runs `work` until it finishes or the signal fires; on firing, cancels the call token
    /// and returns the coded error for `stage`. Cancellation and shutdown win a tie with the
    /// work, so a cancelled call never reports the work's result. The deadline only stops work
    /// that is still waiting when it passes: work that is ready when polled completes, which is
    /// what makes a zero timeout mean "nothing beyond what is already ready".
    pub(crate) async fn race<T>(
        &self,
        stage: WaitStage,
        work: impl Future<Output = T>,
    ) -> Result<T, ToolCallError> {
        let work = pin!(work);
        let deadline = async {
            match self.deadline {
                Some((at, _)) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let reason = tokio::select! {
            biased;
            reason = self.interrupted() => reason,
            value = work => return Ok(value),
            () = deadline => AbortReason::TimedOut,
        };
        self.token.cancel();
        Err(self.error(reason, stage))
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
            () = self.shutdown.cancelled() => AbortReason::Shutdown,
        }
    }

    fn error(&self, reason: AbortReason, stage: WaitStage) -> ToolCallError {
        match reason {
            AbortReason::Cancelled => cancelled(stage.waiting_for()),
            AbortReason::TimedOut => timed_out(self.deadline.map_or(0, |(_, ms)| ms)),
            AbortReason::Shutdown => {
                aborted("Tool registry shut down while the call was in flight.")
            }
        }
    }
}

impl Drop for CallSignal {
    /// A call whose future is dropped mid-flight cancels its handler's token.
    fn drop(&mut self) {
        self.token.cancel();
    }
}
