//! Operator access to a registry's durable records: read a tool operation's status, reconcile
//! an `unknown` one with its full fence, or recover it status-first (contract 2.12). None of
//! these ever runs a handler.

use std::future::Future;

use tool_durable_operations::{
    BoxError, DurableOperationError, Fence, OperationRecord, RecoverOutcome, Resolution,
};
use tool_protocol::ToolCallContext;
use tool_protocol::idempotency::tool_operation_key;

use crate::durable::DurableLedger;
use crate::registry::ToolRegistry;

/// Why an operation API call failed.
#[derive(Debug, thiserror::Error)]
pub enum OperationError {
    /// The registry has no durable store.
    #[error("The tool registry has no durable operation store.")]
    NotConfigured,
    /// The tool is not registered or is hidden by the allowlist.
    #[error("Tool \"{0}\" not found in registry")]
    ToolNotFound(String),
    /// The idempotency key is blank or longer than 256 characters.
    #[error("Tool call idempotencyKey must be a non-empty string of at most 256 characters.")]
    InvalidKey,
    /// The store refused or failed the operation.
    #[error(transparent)]
    Store(#[from] DurableOperationError),
}

impl ToolRegistry {
    /// The durable record of `tool` called with `idempotency_key` in `context`'s session;
    /// `None` when no record exists or the tool is unknown or hidden.
    pub async fn get_operation_status(
        &self,
        tool: &str,
        idempotency_key: &str,
        context: &ToolCallContext,
    ) -> Result<Option<OperationRecord>, OperationError> {
        let durable = self.durable_ledger()?;
        if self.tool_definition(tool).is_none() {
            return Ok(None);
        }
        let key = operation_key(tool, idempotency_key, context)?;
        Ok(durable.store.get(&key).await?)
    }

    /// Reconciles an `unknown` record as completed or failed, fenced by the full
    /// `{incarnation, revision}` the caller observed; the reconciler is this registry's
    /// durable owner id.
    pub async fn reconcile_operation(
        &self,
        tool: &str,
        idempotency_key: &str,
        resolution: Resolution,
        context: &ToolCallContext,
        expected_fence: &Fence,
    ) -> Result<OperationRecord, OperationError> {
        let (durable, key) = self.visible_operation(tool, idempotency_key, context)?;
        Ok(durable
            .store
            .resolve_unknown(&key, &durable.owner_id, resolution, expected_fence)
            .await?)
    }

    /// Status-first recovery: a record that is not `unknown` is returned unchanged and
    /// `resolver` never runs; an `unknown` one is resolved by `resolver(record, context)` and
    /// persisted with the observed fence.
    pub async fn recover_operation<F, Fut>(
        &self,
        tool: &str,
        idempotency_key: &str,
        resolver: F,
        context: &ToolCallContext,
    ) -> Result<RecoverOutcome, OperationError>
    where
        F: FnOnce(OperationRecord, ToolCallContext) -> Fut,
        Fut: Future<Output = Result<Resolution, BoxError>>,
    {
        let (durable, key) = self.visible_operation(tool, idempotency_key, context)?;
        let context = context.clone();
        Ok(durable
            .store
            .recover(&key, &durable.owner_id, None, |record| {
                resolver(record, context)
            })
            .await?)
    }

    fn durable_ledger(&self) -> Result<&DurableLedger, OperationError> {
        self.inner
            .ledger
            .durable()
            .ok_or(OperationError::NotConfigured)
    }

    fn visible_operation(
        &self,
        tool: &str,
        idempotency_key: &str,
        context: &ToolCallContext,
    ) -> Result<(&DurableLedger, String), OperationError> {
        let durable = self.durable_ledger()?;
        if self.tool_definition(tool).is_none() {
            return Err(OperationError::ToolNotFound(tool.to_owned()));
        }
        Ok((durable, operation_key(tool, idempotency_key, context)?))
    }
}

fn operation_key(
    tool: &str,
    idempotency_key: &str,
    context: &ToolCallContext,
) -> Result<String, OperationError> {
    tool_operation_key(tool, idempotency_key, context.session_id.as_deref())
        .map_err(|_| OperationError::InvalidKey)
}
