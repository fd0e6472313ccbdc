//! Shared fixtures of the durable integration tests: registries on one store, a counting
//! handler, and a scripted backend that fails, hangs or delays writes on demand.
#![allow(dead_code)]

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tool_context::{AllowAll, Tool, ToolCallOptions, ToolInvocation, ToolRegistry};
use tool_durable_operations::{
    DurableOperationBackend, DurableOperationError, DurableOperationStore, Fence, MemoryBackend,
    OperationRecord, RecordPage,
};
use tool_protocol::{
    ToolCallContext, ToolCallError, ToolCallRequest, ToolCallResult, ToolDefinition,
};

pub const TOOL: &str = "payments.charge";
pub const LEASE_MS: u64 = 60_000;

/// Counts handler runs.
#[derive(Clone, Default)]
pub struct Runs(pub Arc<AtomicUsize>);

impl Runs {
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A tool whose handler bumps `runs` and then runs `body`.
pub fn tool<F, Fut>(runs: &Runs, body: F) -> Tool
where
    F: Fn(Value, ToolInvocation) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolCallResult, ToolCallError>> + Send + 'static,
{
    let runs = runs.clone();
    let body = Arc::new(body);
    Tool::new(
        ToolDefinition::new(TOOL, "Charges a card.", json!({"type": "object"})),
        move |arguments: Value, call: ToolInvocation| {
            runs.0.fetch_add(1, Ordering::SeqCst);
            body(arguments, call)
        },
    )
}

/// A tool returning a rich, lossless-replay-worthy success.
pub fn charging_tool(runs: &Runs) -> Tool {
    tool(runs, |arguments, _call| async move {
        let mut result = ToolCallResult::success(
            json!({"charged": arguments["cents"], "nested": {"null": null, "list": [1, "two"]}}),
        );
        result
            .content
            .push(tool_protocol::ToolContent::text("second block"));
        Ok(result)
    })
}

/// A registry owned by `owner` on `store`.
pub fn registry(store: &Arc<DurableOperationStore>, owner: &str, tool: Tool) -> ToolRegistry {
    registry_with_lease(store, owner, tool, LEASE_MS)
}

pub fn registry_with_lease(
    store: &Arc<DurableOperationStore>,
    owner: &str,
    tool: Tool,
    lease_ms: u64,
) -> ToolRegistry {
    ToolRegistry::builder()
        .tool(tool)
        .policy(AllowAll)
        .durable_store(Arc::clone(store))
        .durable_owner_id(owner)
        .durable_lease_ms(lease_ms)
        .build()
        .expect("a valid durable registry")
}

pub fn memory_store() -> Arc<DurableOperationStore> {
    Arc::new(DurableOperationStore::new(Arc::new(MemoryBackend::new())))
}

/// Calls the tool with `id`, `key` and `cents`.
pub async fn call(registry: &ToolRegistry, id: &str, key: &str, cents: u64) -> ToolCallResult {
    call_with(registry, id, cents, options(key)).await
}

pub async fn call_with(
    registry: &ToolRegistry,
    id: &str,
    cents: u64,
    options: ToolCallOptions,
) -> ToolCallResult {
    let arguments = json!({"cents": cents}).as_object().cloned().unwrap();
    registry
        .call_tool(ToolCallRequest::new(TOOL, arguments).with_id(id), options)
        .await
}

pub fn options(key: &str) -> ToolCallOptions {
    ToolCallOptions::default()
        .with_context(context())
        .with_idempotency_key(key)
}

pub fn context() -> ToolCallContext {
    ToolCallContext {
        session_id: Some("session-1".into()),
        ..ToolCallContext::default()
    }
}

/// The stored record of `key` (via the registry's status API).
pub async fn status(registry: &ToolRegistry, key: &str) -> OperationRecord {
    registry
        .get_operation_status(TOOL, key, &context())
        .await
        .expect("status read")
        .expect("a record")
}

/// The result as JSON without its toolCallId (for lossless comparisons).
pub fn without_id(result: &ToolCallResult) -> Value {
    let mut value = serde_json::to_value(result).unwrap();
    let object = value.as_object_mut().unwrap();
    object.remove("toolCallId");
    // A replay's marker says when the original ran: the outcome itself is what is compared.
    object.remove("_meta");
    value
}

/// A memory backend whose writes can be made to fail, hang, or be delayed by call number.
#[derive(Default)]
pub struct ScriptedBackend {
    inner: MemoryBackend,
    pub fail_all: AtomicBool,
    pub hang_writes: AtomicBool,
    writes: AtomicUsize,
    delays: Mutex<Vec<(usize, Duration)>>,
    cancel_on: Mutex<Vec<(usize, CancellationToken)>>,
}

impl ScriptedBackend {
    /// Delays the `n`-th compare-and-set (1-based) by `by` before it runs.
    pub fn delay_write(&self, n: usize, by: Duration) {
        self.delays.lock().unwrap().push((n, by));
    }

    /// Cancels `token` when the `n`-th compare-and-set (1-based) starts.
    pub fn cancel_on_write(&self, n: usize, token: CancellationToken) {
        self.cancel_on.lock().unwrap().push((n, token));
    }

    fn failure() -> DurableOperationError {
        DurableOperationError::Backend {
            backend: "scripted",
            message: "connection refused".into(),
        }
    }
}

#[async_trait]
impl DurableOperationBackend for ScriptedBackend {
    fn name(&self) -> &'static str {
        "scripted"
    }

    async fn ping(&self) -> Result<(), DurableOperationError> {
        Ok(())
    }

    async fn read(&self, key: &str) -> Result<Option<OperationRecord>, DurableOperationError> {
        if self.fail_all.load(Ordering::SeqCst) {
            return Err(Self::failure());
        }
        self.inner.read(key).await
    }

    async fn compare_and_set(
        &self,
        key: &str,
        expected: Option<&Fence>,
        next: Option<&OperationRecord>,
    ) -> Result<bool, DurableOperationError> {
        if self.fail_all.load(Ordering::SeqCst) {
            return Err(Self::failure());
        }
        if self.hang_writes.load(Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
        let n = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        for (_, token) in self
            .cancel_on
            .lock()
            .unwrap()
            .iter()
            .filter(|(at, _)| *at == n)
        {
            token.cancel();
        }
        let delay = self
            .delays
            .lock()
            .unwrap()
            .iter()
            .find(|(at, _)| *at == n)
            .map(|(_, by)| *by);
        if let Some(by) = delay {
            tokio::time::sleep(by).await;
        }
        self.inner.compare_and_set(key, expected, next).await
    }

    async fn list_page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<RecordPage, DurableOperationError> {
        self.inner.list_page(cursor, limit).await
    }
}
