//! Recording beneath the store: every backend read and compare-and-set a worker process makes,
//! whoever makes it.
//!
//! Why beneath: the store's callers do not see every write. The side-effect runner renews its
//! lease on its own task and settles with the renewed fence; a prune deletes whichever records
//! its page held; a reconcile may find the record already resolved. Recorded at the store's
//! API, each of these left a gap the checker had to guess across (a renewal moved a revision
//! unseen; a store-wide prune excused any disappearance). Beneath the store the history holds
//! each write with its exact precondition and value, so the checker's model is a plain
//! compare-and-set register and needs no guessing.

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use tool_durable_operations::backend::{DurableOperationBackend, RecordPage};
use tool_durable_operations::{DurableOperationError, Fence, OperationRecord};

use crate::history::{Event, FenceView, HistoryWriter, OpKind, OpRef, Phase, RecordValue, now_ms};

/// This process's history file and op numbering, shared by the worker, the runner's effect and
/// the recording backend (which runs on the runner's heartbeat task too).
#[derive(Debug, Clone)]
pub struct Recorder {
    shared: Arc<Mutex<Shared>>,
    worker: u32,
    process: u32,
}

#[derive(Debug)]
struct Shared {
    file: HistoryWriter,
    next_op: u64,
}

impl Recorder {
    /// Records into `file` for process `process` of worker `worker`.
    pub fn new(file: HistoryWriter, worker: u32, process: u32) -> Self {
        Self {
            shared: Arc::new(Mutex::new(Shared { file, next_op: 0 })),
            worker,
            process,
        }
    }

    /// A new op's invoke event, numbered but not yet written.
    pub fn invoke(&self, op: OpKind, key: &str, fingerprint: &str) -> Event {
        let op_id = {
            let mut shared = self.lock();
            shared.next_op += 1;
            shared.next_op
        };
        let op_ref = OpRef {
            worker: self.worker,
            process: self.process,
            op_id,
        };
        Event::invoke(op_ref, now_ms(), op, key, fingerprint)
    }

    /// Appends one event as one line.
    pub fn record(&self, event: &Event) -> Result<(), String> {
        self.lock().file.append(event).map_err(|e| e.to_string())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A backend that records each `read` as a `Get` and each `compare_and_set` as a `Write` before
/// and after passing it on. An error is indeterminate (`Info`): the call may have applied.
pub struct RecordingBackend {
    inner: Arc<dyn DurableOperationBackend>,
    recorder: Recorder,
    skew_ms: i64,
}

impl RecordingBackend {
    /// Records the calls made to `inner`; `skew_ms` is the process's configured clock skew.
    pub fn new(inner: Arc<dyn DurableOperationBackend>, recorder: Recorder, skew_ms: i64) -> Self {
        Self {
            inner,
            recorder,
            skew_ms,
        }
    }

    /// `invoke` turned into its completion event (stamped now, with `phase`), not yet written.
    fn complete(&self, mut event: Event, phase: Phase) -> Event {
        event.time_ms = now_ms();
        event.phase = phase;
        event
    }

    fn record(&self, event: &Event) -> Result<(), DurableOperationError> {
        self.recorder
            .record(event)
            .map_err(|message| DurableOperationError::Backend {
                backend: "history",
                message,
            })
    }
}

#[async_trait]
impl DurableOperationBackend for RecordingBackend {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    async fn ping(&self) -> Result<(), DurableOperationError> {
        self.inner.ping().await
    }

    async fn read(&self, key: &str) -> Result<Option<OperationRecord>, DurableOperationError> {
        let invoke = self.recorder.invoke(OpKind::Get, key, "");
        self.record(&invoke)?;
        let read = self.inner.read(key).await;
        let mut done = match &read {
            Ok(_) => self.complete(invoke, Phase::Ok),
            Err(error) => {
                let mut done = self.complete(invoke, Phase::Info);
                done.error = Some(error.code().to_owned());
                done
            }
        };
        if let Ok(record) = &read {
            done.value = record.as_ref().map(RecordValue::from);
        }
        self.record(&done)?;
        read
    }

    async fn compare_and_set(
        &self,
        key: &str,
        expected: Option<&Fence>,
        next: Option<&OperationRecord>,
    ) -> Result<bool, DurableOperationError> {
        let mut invoke = self.recorder.invoke(OpKind::Write, key, "");
        invoke.fence = expected.map(FenceView::from);
        invoke.value = next.map(RecordValue::from);
        invoke.skew_ms = Some(self.skew_ms);
        self.record(&invoke)?;
        let written = self.inner.compare_and_set(key, expected, next).await;
        let done = match &written {
            Ok(applied) => Event {
                applied: Some(*applied),
                ..self.complete(invoke, Phase::Ok)
            },
            Err(error) => Event {
                error: Some(error.code().to_owned()),
                ..self.complete(invoke, Phase::Info)
            },
        };
        self.record(&done)?;
        written
    }

    async fn backfill_legacy_incarnation(
        &self,
        key: &str,
        incarnation: &str,
    ) -> Result<bool, DurableOperationError> {
        self.inner
            .backfill_legacy_incarnation(key, incarnation)
            .await
    }

    async fn list_page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<RecordPage, DurableOperationError> {
        self.inner.list_page(cursor, limit).await
    }
}
