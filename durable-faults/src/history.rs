//! What the workers did, as JSON lines: the evidence the [`checker`](crate::checker) judges.
//!
//! Every worker process appends to its own file: an [`Event`] with [`Phase::Invoke`] before it
//! calls the store, and one completion ([`Phase::Ok`], [`Phase::Fail`] or [`Phase::Info`])
//! after. A worker that is killed between the two leaves an invoke without a completion, which
//! is indeterminate exactly like an `Info`: the call may or may not have taken effect. The side
//! effect itself appends an [`Effect`] to a separate ledger (and fsyncs it) when it runs, so
//! the ledger tells what really executed independently of what the workers believed.
//!
//! Why one file per process and one line per write: a `kill -9` can only tear the line being
//! written, and only the last line of that process's file. The reader therefore skips an
//! unparsable *final* line and refuses an unparsable line anywhere else, which would mean the
//! file was damaged some other way and the history cannot be trusted.
//!
//! Field conventions the checker relies on:
//! - `fence`: for `Claim` and `Read`, the fence of the record returned (absent when there is no
//!   record); for `Settle` and `Reconcile`, the fence passed as the precondition (absent for a
//!   `recover` without an expected fence).
//! - `observed`: for `Claim` and `Read`, the state returned; for `Settle` and `Reconcile`, the
//!   state the record has after the call (`settle_to` when it was written; a `recover` that
//!   found the record not `unknown` reports that state, or `absent`).
//! - `settle_to`: for `Settle` and `Reconcile`, the state requested (recorded on the invoke).
//! - A store-wide `Prune` has an empty `key`; it excuses nothing by itself: what a prune
//!   removed is in its `Write`s (below), one per deleted record.
//! - `Get` and `Write` are the calls the store made to its backend, recorded beneath it (see
//!   [`crate::recording`]): every read, and every compare-and-set with its precondition
//!   (`fence`: the expected fence, absent for "no record") and the record it writes (`value`,
//!   absent for a delete), answered by `applied`. So every write is in the history, whoever
//!   made it: a claim, a settle, the runner's lease renewals, a prune's deletes, a reconcile.

use std::collections::HashMap;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tool_durable_operations::{ClaimStatus, Fence, OperationRecord, OperationState};

/// Extension of the history and ledger files.
pub const HISTORY_EXTENSION: &str = "jsonl";

/// Where an operation is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// The worker is about to call the store.
    Invoke,
    /// The call definitely happened, as observed.
    Ok,
    /// The call definitely did not take effect.
    Fail,
    /// Indeterminate: a timeout or a dropped connection; it may take effect at any later time.
    Info,
}

/// The store call an event records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    /// `claim`.
    Claim,
    /// `settle` / `complete` / `fail` / `mark_unknown`.
    Settle,
    /// `resolve_unknown` / `recover`.
    Reconcile,
    /// `get`.
    Read,
    /// `prune`.
    Prune,
    /// A backend read (beneath the store).
    Get,
    /// A backend compare-and-set (beneath the store).
    Write,
}

/// A record state as seen by a worker, with `absent` for no record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StateView {
    /// No record under the key.
    Absent,
    /// `pending`.
    Pending,
    /// `completed`.
    Completed,
    /// `failed`.
    Failed,
    /// `unknown`.
    Unknown,
}

impl StateView {
    /// Whether the state is `completed` or `failed`.
    pub fn is_settled(self) -> bool {
        matches!(self, Self::Completed | Self::Failed)
    }
}

impl From<OperationState> for StateView {
    fn from(state: OperationState) -> Self {
        match state {
            OperationState::Pending => Self::Pending,
            OperationState::Completed => Self::Completed,
            OperationState::Failed => Self::Failed,
            OperationState::Unknown => Self::Unknown,
        }
    }
}

/// A claim status as seen by a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimView {
    /// The caller owns the pending record.
    Owner,
    /// Another owner holds a live lease.
    Pending,
    /// The record is completed or failed.
    Replay,
    /// The record is unknown.
    Unknown,
    /// The key was claimed with another fingerprint.
    Conflict,
}

impl From<ClaimStatus> for ClaimView {
    fn from(status: ClaimStatus) -> Self {
        match status {
            ClaimStatus::Owner => Self::Owner,
            ClaimStatus::Pending => Self::Pending,
            ClaimStatus::Replay => Self::Replay,
            ClaimStatus::Unknown => Self::Unknown,
            ClaimStatus::Conflict => Self::Conflict,
        }
    }
}

/// A record fence as seen by a worker.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FenceView {
    /// The record's incarnation.
    pub incarnation: String,
    /// The record's revision.
    pub revision: u64,
}

impl FenceView {
    /// The fence a successful transition from this one leaves (revision + 1).
    pub fn next(&self) -> Self {
        Self {
            incarnation: self.incarnation.clone(),
            revision: self.revision + 1,
        }
    }
}

impl From<&Fence> for FenceView {
    fn from(fence: &Fence) -> Self {
        Self {
            incarnation: fence.incarnation.clone(),
            revision: fence.revision,
        }
    }
}

impl fmt::Display for FenceView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.incarnation, self.revision)
    }
}

/// A stored record as the backend holds it: what a `Get` returned or a `Write` wrote.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RecordValue {
    /// The record's fence.
    pub fence: FenceView,
    /// Its state (never `absent`).
    pub state: StateView,
    /// Its owner.
    pub owner: String,
    /// Its fingerprint.
    pub fingerprint: String,
    /// When it was written, in the writer's clock (ms).
    pub updated_at: u64,
    /// The lease deadline of a pending record, in the granting owner's clock (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_expires_at: Option<u64>,
}

impl From<&OperationRecord> for RecordValue {
    fn from(record: &OperationRecord) -> Self {
        Self {
            fence: FenceView::from(&record.fence()),
            state: record.state.into(),
            owner: record.owner_id.clone(),
            fingerprint: record.fingerprint.clone(),
            updated_at: record.updated_at,
            lease_expires_at: record.lease_expires_at,
        }
    }
}

impl fmt::Display for RecordValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} {} by {}", self.state, self.fence, self.owner)
    }
}

/// One line of a worker's history file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Wall clock of the worker, ms since the Unix epoch.
    pub time_ms: u64,
    /// Worker number.
    pub worker: u32,
    /// Incarnation of the worker process (a restarted worker counts up).
    pub process: u32,
    /// Unique within `(worker, process)`; pairs an invoke with its completion.
    pub op_id: u64,
    /// Invoke or completion.
    pub phase: Phase,
    /// The store call.
    pub op: OpKind,
    /// Operation key (empty for a store-wide prune).
    pub key: String,
    /// Request fingerprint.
    pub fingerprint: String,
    /// See the module docs: the returned fence (claim, read) or the precondition (settle,
    /// reconcile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fence: Option<FenceView>,
    /// The state the op saw (claim, read) or left (settle, reconcile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<StateView>,
    /// The claim status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<ClaimView>,
    /// The state a settle or reconcile asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_to: Option<StateView>,
    /// The `DurableOperationError` code of a failed call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `Get`: the record read (absent: none). `Write`: the record written (absent: a delete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<RecordValue>,
    /// `Write`: whether the compare-and-set applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<bool>,
    /// `Write`: the clock skew the harness gave the writing process (ms), so a lease decision
    /// can be judged in real time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skew_ms: Option<i64>,
}

impl Event {
    /// An invoke of `op` on `key`, every optional field empty.
    pub fn invoke(op_ref: OpRef, time_ms: u64, op: OpKind, key: &str, fingerprint: &str) -> Self {
        Self {
            time_ms,
            worker: op_ref.worker,
            process: op_ref.process,
            op_id: op_ref.op_id,
            phase: Phase::Invoke,
            op,
            key: key.to_owned(),
            fingerprint: fingerprint.to_owned(),
            fence: None,
            observed: None,
            claim: None,
            settle_to: None,
            error: None,
            value: None,
            applied: None,
            skew_ms: None,
        }
    }
}

/// One line of the effect ledger, written by the side effect itself when it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Effect {
    /// Wall clock when the effect ran, ms since the Unix epoch.
    pub time_ms: u64,
    /// Worker of the claim that ran it.
    pub worker: u32,
    /// Process of the claim that ran it.
    pub process: u32,
    /// The claim op whose ownership ran it.
    pub op_id: u64,
    /// Operation key.
    pub key: String,
    /// Request fingerprint.
    pub fingerprint: String,
    /// The fence the effect ran under.
    pub fence: FenceView,
}

/// Identity of one operation across the whole history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct OpRef {
    /// Worker number.
    pub worker: u32,
    /// Worker process incarnation.
    pub process: u32,
    /// Op id within the process.
    pub op_id: u64,
}

impl Event {
    /// The operation this event belongs to.
    pub fn op_ref(&self) -> OpRef {
        OpRef {
            worker: self.worker,
            process: self.process,
            op_id: self.op_id,
        }
    }
}

impl Effect {
    /// The claim operation that ran this effect.
    pub fn op_ref(&self) -> OpRef {
        OpRef {
            worker: self.worker,
            process: self.process,
            op_id: self.op_id,
        }
    }
}

impl fmt::Display for OpRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "w{}.p{}#{}", self.worker, self.process, self.op_id)
    }
}

/// The current wall clock, ms since the Unix epoch (what workers stamp events with).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Appends one JSON value as one line with a single `write` (a kill tears at most that line).
fn append_line<T: Serialize>(file: &mut File, value: &T) -> io::Result<()> {
    let mut line = serde_json::to_vec(value).map_err(io::Error::other)?;
    line.push(b'\n');
    file.write_all(&line)?;
    file.flush()
}

/// Opens `path` for appending, creating it if needed.
fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

/// Appends a worker's events to its history file, one flushed line per event.
#[derive(Debug)]
pub struct HistoryWriter {
    file: File,
}

impl HistoryWriter {
    /// Opens (or creates) `path` for appending.
    pub fn open(path: &Path) -> io::Result<Self> {
        Ok(Self {
            file: open_append(path)?,
        })
    }

    /// Appends one event as one line.
    pub fn append(&mut self, event: &Event) -> io::Result<()> {
        append_line(&mut self.file, event)
    }
}

/// Appends effects to the ledger, one fsynced line per effect (several processes may share
/// one ledger: each line is a single append).
#[derive(Debug)]
pub struct LedgerWriter {
    file: File,
}

impl LedgerWriter {
    /// Opens (or creates) `path` for appending.
    pub fn open(path: &Path) -> io::Result<Self> {
        Ok(Self {
            file: open_append(path)?,
        })
    }

    /// Appends one effect and waits until it is on disk.
    pub fn append(&mut self, effect: &Effect) -> io::Result<()> {
        append_line(&mut self.file, effect)?;
        self.file.sync_data()
    }
}

/// Why a history could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// A file or directory could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// A line other than the last one is not a valid record.
    #[error("{path}:{line}: unparsable line before the end of the file: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The parse error.
        message: String,
    },
    /// A completion without its invoke, or a second completion.
    #[error("op {op}: {problem}")]
    Unpaired {
        /// The operation.
        op: OpRef,
        /// What is wrong.
        problem: &'static str,
    },
}

/// Reads a JSON-lines file, skipping blank lines and an unparsable final line (torn by a kill).
pub fn read_json_lines<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, HistoryError> {
    let text = std::fs::read(path).map_err(|source| HistoryError::Io {
        path: path.to_owned(),
        source,
    })?;
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .collect();
    let mut values = Vec::with_capacity(lines.len());
    for (position, (number, line)) in lines.iter().enumerate() {
        match serde_json::from_str(line) {
            Ok(value) => values.push(value),
            Err(_) if position + 1 == lines.len() => break,
            Err(e) => {
                return Err(HistoryError::Corrupt {
                    path: path.to_owned(),
                    line: number + 1,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(values)
}

/// How an operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Definitely happened, as observed.
    Ok,
    /// Definitely did not take effect.
    Fail,
    /// `Info`, or no completion at all: may have taken effect at any time after the invoke.
    Indeterminate,
}

/// An invoke paired with its completion (absent when the worker died first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// The invoke event.
    pub invoke: Event,
    /// The completion event, if one was written.
    pub completion: Option<Event>,
}

impl Operation {
    /// How the operation ended.
    pub fn outcome(&self) -> Outcome {
        match self.completion.as_ref().map(|c| c.phase) {
            Some(Phase::Ok) => Outcome::Ok,
            Some(Phase::Fail) => Outcome::Fail,
            _ => Outcome::Indeterminate,
        }
    }

    /// Whether it definitely happened.
    pub fn is_ok(&self) -> bool {
        self.outcome() == Outcome::Ok
    }

    /// Whether it definitely did not take effect.
    pub fn is_fail(&self) -> bool {
        self.outcome() == Outcome::Fail
    }

    /// Whether it may or may not have taken effect.
    pub fn is_indeterminate(&self) -> bool {
        self.outcome() == Outcome::Indeterminate
    }

    /// The identity of the operation.
    pub fn op_ref(&self) -> OpRef {
        self.invoke.op_ref()
    }

    /// The store call.
    pub fn kind(&self) -> OpKind {
        self.invoke.op
    }

    /// The key (empty for a store-wide prune).
    pub fn key(&self) -> &str {
        &self.invoke.key
    }

    /// The request fingerprint.
    pub fn fingerprint(&self) -> &str {
        &self.invoke.fingerprint
    }

    /// When it was invoked.
    pub fn invoked_ms(&self) -> u64 {
        self.invoke.time_ms
    }

    /// When it definitely had (or had not) taken effect; `None` when indeterminate.
    pub fn completed_ms(&self) -> Option<u64> {
        match self.outcome() {
            Outcome::Indeterminate => None,
            _ => self.completion.as_ref().map(|c| c.time_ms),
        }
    }

    /// [`completed_ms`](Self::completed_ms), with "never" for an indeterminate op.
    pub fn done_by_ms(&self) -> u64 {
        self.completed_ms().unwrap_or(u64::MAX)
    }

    /// The completion event of an `Ok` op.
    fn ok_completion(&self) -> Option<&Event> {
        self.completion.as_ref().filter(|c| c.phase == Phase::Ok)
    }

    /// The fence passed as a precondition (settle, reconcile).
    pub fn input_fence(&self) -> Option<&FenceView> {
        self.invoke.fence.as_ref()
    }

    /// The fence an `Ok` op reported (claim, read), falling back to the input fence.
    pub fn fence(&self) -> Option<&FenceView> {
        self.ok_completion()
            .and_then(|c| c.fence.as_ref())
            .or_else(|| self.input_fence())
    }

    /// The state an `Ok` op saw or left.
    pub fn observed(&self) -> Option<StateView> {
        self.ok_completion().and_then(|c| c.observed)
    }

    /// The claim status of an `Ok` claim.
    pub fn claim_status(&self) -> Option<ClaimView> {
        self.ok_completion().and_then(|c| c.claim)
    }

    /// The state a settle or reconcile asked for.
    pub fn settle_to(&self) -> Option<StateView> {
        self.invoke
            .settle_to
            .or_else(|| self.completion.as_ref().and_then(|c| c.settle_to))
    }

    /// `Get`: the record an `Ok` read returned (`None`: no record). `Write`: the record it
    /// writes (`None`: a delete).
    pub fn value(&self) -> Option<&RecordValue> {
        match self.kind() {
            OpKind::Write => self.invoke.value.as_ref(),
            _ => self.ok_completion().and_then(|c| c.value.as_ref()),
        }
    }

    /// `Write`: whether an `Ok` compare-and-set applied.
    pub fn applied(&self) -> Option<bool> {
        self.ok_completion().and_then(|c| c.applied)
    }

    /// Whether this is a store call beneath the store (`Get`, `Write`).
    pub fn is_backend(&self) -> bool {
        matches!(self.kind(), OpKind::Get | OpKind::Write)
    }

    /// The error code of the completion, if any.
    pub fn error(&self) -> Option<&str> {
        self.completion.as_ref().and_then(|c| c.error.as_deref())
    }

    /// A one-line description for violation reports.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "{} {:?} {:?} key={:?} fp={:?} invoked={}",
            self.op_ref(),
            self.kind(),
            self.outcome(),
            self.key(),
            self.fingerprint(),
            self.invoked_ms()
        );
        let mut add = |label: &str, value: Option<String>| {
            if let Some(value) = value {
                text.push_str(&format!(" {label}={value}"));
            }
        };
        add("completed", self.completed_ms().map(|t| t.to_string()));
        add("fence", self.fence().map(ToString::to_string));
        add("claim", self.claim_status().map(|c| format!("{c:?}")));
        add("observed", self.observed().map(|s| format!("{s:?}")));
        add("settle_to", self.settle_to().map(|s| format!("{s:?}")));
        add("error", self.error().map(str::to_owned));
        if self.kind() == OpKind::Write {
            add(
                "expects",
                Some(
                    self.input_fence()
                        .map_or("none".into(), ToString::to_string),
                ),
            );
            add(
                "writes",
                Some(self.value().map_or("delete".into(), ToString::to_string)),
            );
            add("applied", self.applied().map(|a| a.to_string()));
        } else if self.kind() == OpKind::Get && self.is_ok() {
            add(
                "read",
                Some(self.value().map_or("none".into(), ToString::to_string)),
            );
        }
        text
    }
}

/// A loaded history: every operation (invoke order) and every effect of the ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct History {
    /// Operations, by invoke time.
    pub ops: Vec<Operation>,
    /// Effects, by time.
    pub effects: Vec<Effect>,
}

impl History {
    /// Loads every `*.jsonl` file of `dir` (except `ledger`, if it lives there) as worker
    /// events, and `ledger` as the effect ledger (a missing ledger means no effect ran).
    pub fn load(dir: &Path, ledger: &Path) -> Result<Self, HistoryError> {
        let mut events = Vec::new();
        for path in history_files(dir, ledger)? {
            events.extend(read_json_lines::<Event>(&path)?);
        }
        let effects = if ledger.exists() {
            read_json_lines(ledger)?
        } else {
            Vec::new()
        };
        Self::from_events(events, effects)
    }

    /// Pairs events into operations (by [`OpRef`]) and sorts operations and effects by time.
    pub fn from_events(
        events: impl IntoIterator<Item = Event>,
        mut effects: Vec<Effect>,
    ) -> Result<Self, HistoryError> {
        let mut ops: Vec<Operation> = Vec::new();
        let mut index: HashMap<OpRef, usize> = HashMap::new();
        for event in events {
            pair_event(&mut ops, &mut index, event)?;
        }
        ops.sort_by_key(|op| (op.invoked_ms(), op.op_ref()));
        effects.sort_by_key(|e| (e.time_ms, e.op_ref()));
        Ok(Self { ops, effects })
    }
}

/// Adds an invoke as a new operation, or a completion to its invoke.
fn pair_event(
    ops: &mut Vec<Operation>,
    index: &mut HashMap<OpRef, usize>,
    event: Event,
) -> Result<(), HistoryError> {
    let op = event.op_ref();
    let unpaired = |problem| Err(HistoryError::Unpaired { op, problem });
    match (event.phase, index.get(&op)) {
        (Phase::Invoke, Some(_)) => unpaired("invoked twice"),
        (Phase::Invoke, None) => {
            index.insert(op, ops.len());
            ops.push(Operation {
                invoke: event,
                completion: None,
            });
            Ok(())
        }
        (_, None) => unpaired("completion without an invoke"),
        (_, Some(&i)) if ops[i].completion.is_some() => unpaired("completed twice"),
        (_, Some(&i)) => {
            ops[i].completion = Some(event);
            Ok(())
        }
    }
}

/// The `*.jsonl` files of `dir` other than `ledger`, sorted by name.
fn history_files(dir: &Path, ledger: &Path) -> Result<Vec<PathBuf>, HistoryError> {
    let io_error = |source| HistoryError::Io {
        path: dir.to_owned(),
        source,
    };
    let ledger = ledger.canonicalize().ok();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_error)? {
        let path = entry.map_err(io_error)?.path();
        let is_history = path.extension().is_some_and(|e| e == HISTORY_EXTENSION);
        if is_history && path.canonicalize().ok() != ledger {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(op_id: u64, phase: Phase, time_ms: u64) -> Event {
        let op = OpRef {
            worker: 1,
            process: 0,
            op_id,
        };
        Event {
            phase,
            observed: (phase == Phase::Ok).then_some(StateView::Absent),
            ..Event::invoke(op, time_ms, OpKind::Read, "k", "fp")
        }
    }

    fn write_events(path: &Path, events: &[Event]) {
        let mut writer = HistoryWriter::open(path).unwrap();
        for event in events {
            writer.append(event).unwrap();
        }
    }

    fn append_raw(path: &Path, text: &str) {
        let mut file = open_append(path).unwrap();
        file.write_all(text.as_bytes()).unwrap();
    }

    #[test]
    fn torn_last_line_is_skipped_and_leaves_the_op_indeterminate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w1-p0.jsonl");
        write_events(&path, &[event(1, Phase::Invoke, 1), event(1, Phase::Ok, 2)]);
        write_events(&path, &[event(2, Phase::Invoke, 3)]);
        append_raw(&path, r#"{"time_ms":4,"worker":1,"proc"#);
        let history = History::load(dir.path(), &dir.path().join("ledger.jsonl")).unwrap();
        assert_eq!(history.ops.len(), 2);
        assert!(history.ops[0].is_ok());
        assert!(history.ops[1].is_indeterminate());
        assert!(history.effects.is_empty());
    }

    #[test]
    fn unparsable_middle_line_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w1-p0.jsonl");
        write_events(&path, &[event(1, Phase::Invoke, 1)]);
        append_raw(&path, "{not json\n");
        write_events(&path, &[event(1, Phase::Ok, 2)]);
        let error = History::load(dir.path(), &dir.path().join("ledger.jsonl")).unwrap_err();
        assert!(
            matches!(error, HistoryError::Corrupt { line: 2, .. }),
            "{error}"
        );
    }

    #[test]
    fn ledger_is_read_apart_from_worker_files() {
        let dir = tempfile::tempdir().unwrap();
        write_events(
            &dir.path().join("w1-p0.jsonl"),
            &[event(1, Phase::Invoke, 1)],
        );
        let ledger = dir.path().join("ledger.jsonl");
        let effect = Effect {
            time_ms: 5,
            worker: 1,
            process: 0,
            op_id: 1,
            key: "k".into(),
            fingerprint: "fp".into(),
            fence: FenceView {
                incarnation: "i".into(),
                revision: 1,
            },
        };
        LedgerWriter::open(&ledger)
            .unwrap()
            .append(&effect)
            .unwrap();
        append_raw(&ledger, "{\"time_ms\":");
        let history = History::load(dir.path(), &ledger).unwrap();
        assert_eq!(history.ops.len(), 1);
        assert_eq!(history.effects, vec![effect]);
    }

    #[test]
    fn orphan_and_double_completions_are_errors() {
        let orphan = History::from_events([event(1, Phase::Ok, 1)], Vec::new());
        assert!(matches!(orphan, Err(HistoryError::Unpaired { .. })));
        let twice = [
            event(1, Phase::Invoke, 1),
            event(1, Phase::Ok, 2),
            event(1, Phase::Fail, 3),
        ];
        assert!(History::from_events(twice, Vec::new()).is_err());
    }

    #[test]
    fn events_use_lowercase_wire_names() {
        let line = serde_json::to_string(&event(1, Phase::Ok, 2)).unwrap();
        assert!(line.contains(r#""phase":"ok""#), "{line}");
        assert!(line.contains(r#""op":"read""#), "{line}");
        assert!(line.contains(r#""observed":"absent""#), "{line}");
        assert!(!line.contains("fence"), "{line}");
    }
}
