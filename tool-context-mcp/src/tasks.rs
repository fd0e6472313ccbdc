//! Tasks (the Tasks extension `io.modelcontextprotocol/tasks`, protocol 2026-07-28) for tool
//! calls that wait or run long.
//!
//! A `tools/call` from a client that declared the extension in its request capabilities runs as
//! usual; when it has not finished after the hand-off delay
//! ([`McpToolServer::with_task_after`], default [`DEFAULT_TASK_AFTER`]) — it waits on a person
//! at the studio page, say, or simply runs long — the request answers `resultType: "task"` with
//! a task handle and the call goes on in the background. The client then polls:
//!
//! - `tasks/get`: `working` while it runs, then `completed` with the `CallToolResult` (an
//!   `isError` result included), `failed` with a JSON-RPC error, or `cancelled`;
//! - `tasks/cancel`: cancels a task running on this host (the call ends `TOOL_CANCELLED` and the
//!   task `cancelled`);
//! - `tasks/update`: acknowledged (these tasks never ask for input mid-task: approvals are asked
//!   before the hand-off, with `input_required`);
//! - `tasks/list` (`{cursor?}` → `{tasks, nextCursor?}`) and `tasks/result` (`{taskId}` → the
//!   `CallToolResult` once the task has ended, waiting for it): the revision 2025-11-25 methods,
//!   kept for clients that use them.
//!
//! Every task is a durable operation record `mcp-task:<taskId>` in the registry's durable store
//! (or [`McpToolServer::with_durable_store`]; an in-memory store otherwise): the host running it
//! holds the record's lease and renews it, and settles the record with the call's result. So a
//! task outlives a restart of the server and can be polled from any host sharing the store; a
//! task whose host stopped before it finished shows `failed` with `TOOL_EXECUTION_UNKNOWN` once
//! its lease has lapsed, never `working` forever. Tasks belong to the owner of the requests that
//! started them: another owner gets `MCP_TASK_NOT_FOUND`.
//!
//! A call carrying an idempotency key (`_meta["tool-context/idempotency-key"]`) gets a task id
//! derived from its owner, tool and key, so a client that lost the task handle and retries the
//! call gets the **same** task back (its own attempt, which was only waiting for the first one,
//! stops), never a second task.
//!
//! [`McpToolServer::with_task_after`]: crate::McpToolServer::with_task_after
//! [`McpToolServer::with_durable_store`]: crate::McpToolServer::with_durable_store

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResponse, CreateTaskResult, DetailedTask, ErrorCode, GetTaskResult, JsonObject, Task,
    TaskPayload, TaskStatus,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tool_durable_operations::{
    ClaimRequest, ClaimStatus, DurableOperationStore, LeaseHeartbeat, OperationRecord,
    OperationState,
};
use tool_protocol::codes;

/// Key prefix of task records in the durable store.
pub const TASK_KEY_PREFIX: &str = "mcp-task:";
/// How long a call runs before it is handed off to a task, unless configured otherwise.
pub const DEFAULT_TASK_AFTER: Duration = Duration::from_secs(2);
/// The `pollIntervalMs` suggested to clients.
pub const TASK_POLL_INTERVAL_MS: u64 = 500;
/// The lease a running task's host holds on its record (renewed while it runs).
pub const TASK_LEASE: Duration = Duration::from_secs(30);
/// Tasks per `tasks/list` page.
pub const TASK_PAGE_SIZE: usize = 50;
/// `data.code` of a `tasks/*` request for a task that does not exist or belongs to another owner.
pub const MCP_TASK_NOT_FOUND: &str = "MCP_TASK_NOT_FOUND";
/// `data.code` of a `tasks/cancel` for a task another host is running.
pub const MCP_TASK_NOT_HERE: &str = "MCP_TASK_NOT_HERE";

const FINGERPRINT_PREFIX: &str = "tool-context-mcp/task/v1";
const CANCELLED_REASON: &str = "cancelled by tasks/cancel";

/// The tasks this host runs (for `tasks/cancel`) and how calls become tasks. Shared by every
/// session of a server.
#[derive(Clone, Default)]
pub(crate) struct Tasks {
    running: Arc<Mutex<HashMap<String, CancellationToken>>>,
}

/// Who started a task and with which tool.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TaskOrigin<'a> {
    pub(crate) owner: &'a str,
    pub(crate) tool: &'a str,
    /// The host's execution owner id, written as the record's owner.
    pub(crate) host: &'a str,
    /// The call's idempotency key: its task id is derived from it.
    pub(crate) key: Option<&'a str>,
}

impl TaskOrigin<'_> {
    /// A fresh id, or for a keyed call the one every attempt of that call derives.
    fn task_id(&self) -> String {
        let Some(key) = self.key else {
            return uuid::Uuid::new_v4().to_string();
        };
        let digest = Sha256::new()
            .chain_update(owner_digest(self.owner))
            .chain_update([0])
            .chain_update(self.tool)
            .chain_update([0])
            .chain_update(key)
            .finalize();
        format!("keyed-{}", hex::encode(&digest[..16]))
    }
}

/// A task as a `tasks/*` request names it, with the principal asking: two texts, named so
/// they cannot be swapped.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TaskRef<'a> {
    pub(crate) owner: &'a str,
    pub(crate) task_id: &'a str,
}

/// Where a call that may become a task is recorded, and when it becomes one.
pub(crate) struct HandOff<'a> {
    pub(crate) store: &'a DurableOperationStore,
    pub(crate) origin: TaskOrigin<'a>,
    /// How long the call may run in the request before it becomes a task.
    pub(crate) after: Duration,
}

/// The two tokens of a call that may become a task, named so they cannot be swapped.
pub(crate) struct TaskTokens {
    /// The call's own token, the task's once handed off: then only `tasks/cancel` (or
    /// shutdown) fires it.
    pub(crate) task: CancellationToken,
    /// The request's token: fired before the hand-off, it cancels the call; after, the task
    /// goes on.
    pub(crate) request: CancellationToken,
}

impl Tasks {
    /// Runs `call`: its response when it ends within `after` (or the request is cancelled
    /// first), otherwise a task handle while the call goes on.
    pub(crate) async fn run_or_hand_off<F>(
        &self,
        HandOff {
            store,
            origin,
            after,
        }: HandOff<'_>,
        TaskTokens {
            task: cancellation,
            request,
        }: TaskTokens,
        call: F,
    ) -> Result<CallToolResponse, McpError>
    where
        F: Future<Output = Result<CallToolResponse, McpError>> + Send + 'static,
    {
        let mut handle = tokio::spawn(call);
        tokio::select! {
            joined = &mut handle => return joined_response(joined),
            () = request.cancelled() => {
                cancellation.cancel();
                return joined_response(handle.await);
            }
            () = tokio::time::sleep(after) => {}
        }
        let task_id = origin.task_id();
        let key = task_key(&task_id);
        let claim = store
            .claim(ClaimRequest {
                key: &key,
                fingerprint: &fingerprint(origin.owner, origin.tool),
                owner_id: origin.host,
                lease: Some(TASK_LEASE),
            })
            .await
            .map_err(|error| {
                // No task could be recorded: stop the call rather than leave it unobservable.
                cancellation.cancel();
                McpError::internal_error(format!("The task could not be recorded: {error}"), None)
            })?;
        let seed = view(&claim.record, store.now_ms(), store);
        if claim.status != ClaimStatus::Owner {
            // An earlier attempt of this keyed call is (or was) this task: this attempt only
            // waited for it, so it stops and the client gets that task back.
            cancellation.cancel();
            return match claim.status {
                ClaimStatus::Conflict => Err(McpError::internal_error(
                    format!("Task {task_id} is recorded for another call."),
                    None,
                )),
                _ => Ok(CallToolResponse::Task(CreateTaskResult::new(seed.task))),
            };
        }
        self.lock().insert(task_id.clone(), cancellation.clone());
        let heartbeat = LeaseHeartbeat::start(store.clone(), claim, Some(TASK_LEASE));
        let finisher = Finisher {
            store: store.clone(),
            key,
            host: origin.host.to_owned(),
            running: self.clone(),
            task_id,
            cancellation,
        };
        tokio::spawn(finisher.settle_when_done(handle, heartbeat));
        Ok(CallToolResponse::Task(CreateTaskResult::new(seed.task)))
    }

    /// `tasks/cancel`: cancels a task this host runs; a finished task is left as it is.
    pub(crate) async fn cancel(
        &self,
        store: &DurableOperationStore,
        task: TaskRef<'_>,
    ) -> Result<(), McpError> {
        let record = owned_record(store, task).await?;
        let task_id = task.task_id;
        if let Some(cancellation) = self.lock().get(task_id) {
            cancellation.cancel();
            return Ok(());
        }
        match view(&record, store.now_ms(), store).status() {
            status if status.is_terminal() => Ok(()),
            _ => Err(McpError::invalid_params(
                format!("Task {task_id} runs on another host; cancel it there."),
                Some(json!({ "code": MCP_TASK_NOT_HERE })),
            )),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Settles a handed-off call's record once the call ends.
struct Finisher {
    store: DurableOperationStore,
    key: String,
    host: String,
    running: Tasks,
    task_id: String,
    cancellation: CancellationToken,
}

impl Finisher {
    async fn settle_when_done(
        self,
        handle: JoinHandle<Result<CallToolResponse, McpError>>,
        heartbeat: LeaseHeartbeat,
    ) {
        let joined = handle.await;
        let claim = match heartbeat.stop().await {
            Ok(claim) => claim,
            Err(lost) => {
                tracing::warn!(task = %self.task_id, ?lost, "task lease lost; its record is left to expire");
                self.running.lock().remove(&self.task_id);
                return;
            }
        };
        let written = match joined_response(joined) {
            _ if self.cancellation.is_cancelled() => {
                self.store
                    .fail(&self.key, &self.host, CANCELLED_REASON, None, &claim.fence)
                    .await
            }
            Ok(CallToolResponse::Complete(result)) => {
                let result = serde_json::to_value(result).unwrap_or(Value::Null);
                self.store
                    .complete(
                        &self.key,
                        &self.host,
                        json!({ "result": result }),
                        &claim.fence,
                    )
                    .await
            }
            Ok(_) => {
                let error = McpError::internal_error(
                    "The call asked for input after it became a task; call the tool again.",
                    None,
                );
                self.fail(&error, &claim.fence).await
            }
            Err(error) => self.fail(&error, &claim.fence).await,
        };
        if let Err(error) = written {
            tracing::warn!(task = %self.task_id, %error, "task result not recorded");
        }
        self.running.lock().remove(&self.task_id);
    }

    async fn fail(
        &self,
        error: &McpError,
        fence: &tool_durable_operations::Fence,
    ) -> Result<OperationRecord, tool_durable_operations::DurableOperationError> {
        let error = serde_json::to_value(error).unwrap_or(Value::Null);
        self.store
            .fail(
                &self.key,
                &self.host,
                "failed",
                Some(json!({ "error": error })),
                fence,
            )
            .await
    }
}

/// `tasks/get`.
pub(crate) async fn get(
    store: &DurableOperationStore,
    task: TaskRef<'_>,
) -> Result<GetTaskResult, McpError> {
    let record = owned_record(store, task).await?;
    Ok(GetTaskResult::new(view(&record, store.now_ms(), store)))
}

/// `tasks/update`: nothing is ever asked mid-task, so responses are acknowledged and ignored.
pub(crate) async fn update(
    store: &DurableOperationStore,
    task: TaskRef<'_>,
) -> Result<(), McpError> {
    owned_record(store, task).await.map(|_| ())
}

/// `tasks/list`: one page of the owner's tasks, in id order.
pub(crate) async fn list(
    store: &DurableOperationStore,
    owner: &str,
    cursor: Option<&str>,
) -> Result<Value, McpError> {
    let mut after = match cursor {
        Some(cursor) => task_key(cursor),
        None => TASK_KEY_PREFIX.to_owned(),
    };
    let now = store.now_ms();
    let mut tasks = Vec::new();
    loop {
        let page = store
            .backend()
            .list_page(Some(&after), TASK_PAGE_SIZE)
            .await
            .map_err(store_error)?;
        let mut past_prefix = false;
        for record in &page.records {
            if !record.key.starts_with(TASK_KEY_PREFIX) {
                past_prefix = true;
                break;
            }
            if owns(record, owner) {
                tasks.push(view(record, now, store).task);
            }
        }
        let next = match page.records.last() {
            Some(last) if !past_prefix && page.next_cursor.is_some() => last.key.clone(),
            _ => break,
        };
        if tasks.len() >= TASK_PAGE_SIZE {
            let cursor = next.trim_start_matches(TASK_KEY_PREFIX).to_owned();
            return Ok(json!({ "tasks": tasks, "nextCursor": cursor }));
        }
        after = next;
    }
    Ok(json!({ "tasks": tasks }))
}

/// `tasks/result`: waits (while the request lasts) for the task to end, then answers with its
/// `CallToolResult`, or its error.
pub(crate) async fn result(
    store: &DurableOperationStore,
    task: TaskRef<'_>,
    request: &CancellationToken,
) -> Result<Value, McpError> {
    let task_id = task.task_id;
    loop {
        let record = owned_record(store, task).await?;
        match view(&record, store.now_ms(), store).payload {
            TaskPayload::Completed { result } => return Ok(Value::Object(result)),
            TaskPayload::Failed { error } => return Err(error_of(error)),
            TaskPayload::Cancelled => {
                return Err(McpError::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("Task {task_id} was cancelled."),
                    Some(json!({ "code": codes::TOOL_CANCELLED })),
                ));
            }
            _ => {}
        }
        tokio::select! {
            () = request.cancelled() => {
                return Err(McpError::new(ErrorCode::INTERNAL_ERROR, "tasks/result was cancelled.", None));
            }
            () = tokio::time::sleep(Duration::from_millis(TASK_POLL_INTERVAL_MS)) => {}
        }
    }
}

fn task_key(task_id: &str) -> String {
    format!("{TASK_KEY_PREFIX}{task_id}")
}

fn owner_digest(owner: &str) -> String {
    hex::encode(Sha256::digest(owner.as_bytes()))
}

fn fingerprint(owner: &str, tool: &str) -> String {
    format!(
        "{FINGERPRINT_PREFIX} owner={} tool={tool}",
        owner_digest(owner)
    )
}

fn owns(record: &OperationRecord, owner: &str) -> bool {
    record.fingerprint.starts_with(&format!(
        "{FINGERPRINT_PREFIX} owner={} ",
        owner_digest(owner)
    ))
}

fn tool_of(record: &OperationRecord) -> &str {
    record
        .fingerprint
        .split_once(" tool=")
        .map_or("", |(_, tool)| tool)
}

async fn owned_record(
    store: &DurableOperationStore,
    TaskRef { owner, task_id }: TaskRef<'_>,
) -> Result<OperationRecord, McpError> {
    match store.get(&task_key(task_id)).await.map_err(store_error)? {
        Some(record) if owns(&record, owner) => Ok(record),
        _ => Err(McpError::invalid_params(
            format!("Unknown task: {task_id}."),
            Some(json!({ "code": MCP_TASK_NOT_FOUND })),
        )),
    }
}

/// The task a record stands for at `now_ms`.
fn view(record: &OperationRecord, now_ms: u64, store: &DurableOperationStore) -> DetailedTask {
    let tool = tool_of(record);
    let payload = match record.state {
        OperationState::Pending if !record.lease_expired(now_ms) => TaskPayload::Working,
        OperationState::Pending | OperationState::Unknown => TaskPayload::Failed {
            error: object(json!({
                "code": ErrorCode::INTERNAL_ERROR.0,
                "message": format!("The host running \"{tool}\" stopped before the call finished; whether it took effect is unknown."),
                "data": { "code": codes::TOOL_EXECUTION_UNKNOWN },
            })),
        },
        OperationState::Completed => TaskPayload::Completed {
            result: object(
                record
                    .result
                    .as_ref()
                    .map_or(Value::Null, |stored| stored["result"].clone()),
            ),
        },
        OperationState::Failed if record.reason.as_deref() == Some(CANCELLED_REASON) => {
            TaskPayload::Cancelled
        }
        OperationState::Failed => TaskPayload::Failed {
            error: object(
                record
                    .result
                    .as_ref()
                    .map_or(Value::Null, |stored| stored["error"].clone()),
            ),
        },
    };
    let mut task = Task::new(
        record.key.trim_start_matches(TASK_KEY_PREFIX),
        TaskStatus::Working,
        timestamp(record.created_at),
        timestamp(record.updated_at),
    )
    .with_poll_interval_ms(TASK_POLL_INTERVAL_MS)
    .with_ttl_ms(u64::try_from(store.options().retention.as_millis()).unwrap_or(u64::MAX));
    if matches!(payload, TaskPayload::Working) {
        task = task.with_status_message(format!("Running \"{tool}\"."));
    }
    DetailedTask::new(task, payload)
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

fn error_of(error: JsonObject) -> McpError {
    serde_json::from_value(Value::Object(error))
        .unwrap_or_else(|_| McpError::internal_error("The task failed.", None))
}

fn timestamp(ms: u64) -> String {
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn joined_response(
    joined: Result<Result<CallToolResponse, McpError>, tokio::task::JoinError>,
) -> Result<CallToolResponse, McpError> {
    joined.unwrap_or_else(|error| {
        Err(McpError::internal_error(
            format!("The tool call stopped unexpectedly: {error}"),
            None,
        ))
    })
}

fn store_error(error: tool_durable_operations::DurableOperationError) -> McpError {
    McpError::internal_error(format!("The task store failed: {error}"), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc as StdArc;
    use tool_durable_operations::MemoryBackend;

    fn record(state: OperationState, lease_expires_at: Option<u64>) -> OperationRecord {
        OperationRecord {
            key: task_key("t1"),
            fingerprint: fingerprint("alice", "work.wait"),
            owner_id: "host-a".into(),
            incarnation: "i".into(),
            revision: 1,
            state,
            result: None,
            reason: None,
            created_at: 1_000,
            updated_at: 1_000,
            lease_expires_at,
            reconciled_by: None,
            reconciled_at: None,
        }
    }

    #[test]
    fn a_task_whose_host_stopped_fails_as_unknown_once_its_lease_lapses() {
        let store = DurableOperationStore::new(StdArc::new(MemoryBackend::new()));
        let running = view(&record(OperationState::Pending, Some(5_000)), 4_999, &store);
        assert_eq!(running.status(), TaskStatus::Working);
        assert_eq!(
            running.task.status_message.as_deref(),
            Some("Running \"work.wait\".")
        );
        let orphaned = view(&record(OperationState::Pending, Some(5_000)), 5_001, &store);
        let TaskPayload::Failed { error } = orphaned.payload else {
            panic!("an orphaned task must fail, got {:?}", orphaned.payload);
        };
        assert_eq!(error["data"]["code"], codes::TOOL_EXECUTION_UNKNOWN);
        assert_eq!(orphaned.task.task_id, "t1");
        assert_eq!(orphaned.task.created_at, "1970-01-01T00:00:01.000Z");
    }

    #[test]
    fn tasks_belong_to_the_owner_in_their_fingerprint() {
        let task = record(OperationState::Completed, None);
        assert!(owns(&task, "alice"));
        assert!(!owns(&task, "bob"));
        assert_eq!(tool_of(&task), "work.wait");
    }
}
