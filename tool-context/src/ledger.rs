//! The exactly-once seam of the pipeline: a *claim* between policy and handler and a
//! *terminal record* after the output checks.
//!
//! Everything the pipeline knows about idempotency goes through [`Ledger`]: today the
//! in-memory [`IdempotencyRegistry`]; a durable operation store plugs in here as another
//! variant without touching the stages around it.

use tool_protocol::idempotency::{tool_call_fingerprint, tool_operation_key};
use tool_protocol::{ToolCallError, ToolCallResult};

use crate::failure::{idempotency_conflict, invalid_options};
use crate::idempotency::{IdempotencyClaim, IdempotencyRegistry, OwnerTicket, ReplayWaiter};
use crate::options::INVALID_IDEMPOTENCY_KEY;

/// Who a logical operation is: its session-scoped key and argument fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OperationIdentity {
    pub(crate) key: String,
    pub(crate) fingerprint: String,
}

impl OperationIdentity {
    /// The identity of `tool` called with raw (unvalidated) `arguments` under `key`.
    pub(crate) fn new(
        tool: &str,
        key: &str,
        session_id: Option<&str>,
        arguments: &serde_json::Value,
    ) -> Result<Self, ToolCallError> {
        let key = tool_operation_key(tool, key, session_id)
            .map_err(|_| invalid_options(INVALID_IDEMPOTENCY_KEY))?;
        Ok(Self {
            key,
            fingerprint: tool_call_fingerprint(tool, arguments),
        })
    }
}

/// Where claims and terminal records go.
#[derive(Debug, Clone)]
pub(crate) enum Ledger {
    /// Process-local, bounded promise registry.
    Memory(IdempotencyRegistry),
}

/// The outcome of a claim.
#[derive(Debug)]
pub(crate) enum LedgerClaim {
    /// No idempotency key: run without bookkeeping.
    Unguarded,
    /// This call runs the handler and must record the terminal outcome.
    Owner(OwnerTicket),
    /// Another call with the same identity runs (or ran) it: replay its outcome.
    Replay(ReplayWaiter),
}

impl Ledger {
    /// Claims `identity` before the handler runs.
    pub(crate) async fn claim(
        &self,
        identity: Option<&OperationIdentity>,
        tool: &str,
    ) -> Result<LedgerClaim, ToolCallError> {
        let Some(identity) = identity else {
            return Ok(LedgerClaim::Unguarded);
        };
        match self {
            Self::Memory(registry) => match registry.claim(&identity.key, &identity.fingerprint) {
                IdempotencyClaim::Owner(ticket) => Ok(LedgerClaim::Owner(ticket)),
                IdempotencyClaim::Replay(waiter) => Ok(LedgerClaim::Replay(waiter)),
                IdempotencyClaim::Conflict => Err(idempotency_conflict(tool)),
            },
        }
    }

    /// Records the owner's terminal outcome (success or failure, output checks applied).
    pub(crate) async fn record_terminal(
        &self,
        claim: LedgerClaim,
        result: &ToolCallResult,
    ) -> Result<(), ToolCallError> {
        match (self, claim) {
            (Self::Memory(_), LedgerClaim::Owner(ticket)) => {
                ticket.settle(result.clone());
                Ok(())
            }
            (Self::Memory(_), LedgerClaim::Unguarded | LedgerClaim::Replay(_)) => Ok(()),
        }
    }

    /// Records that the owner stopped waiting (timeout, cancellation, shutdown) while the
    /// handler may still be running: its outcome is unknown, so replays must never see success.
    pub(crate) async fn record_interrupted(&self, claim: LedgerClaim, _reason: &ToolCallError) {
        match (self, claim) {
            // Dropping an unsettled ticket settles it as TOOL_EXECUTION_ABORTED (this also
            // covers a call future dropped mid-flight, which never reaches this function).
            (Self::Memory(_), claim) => drop(claim),
        }
    }
}
