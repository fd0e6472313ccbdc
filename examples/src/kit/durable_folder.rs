//! Durable `workspace.saveAll` side effects: every folder write or deletion of one file runs
//! through the [`SideEffectRunner`] on an operation store in the data directory.
//!
//! A filesystem write can fail after its bytes landed (a rename that reports an error, a
//! crash between write and acknowledgement), so an ambiguous failure is never reported as a
//! confirmed outcome: its record becomes `unknown` and the save fails with
//! `WORKSPACE_SIDE_EFFECT_UNKNOWN` (not retryable), which keeps the file dirty. A later save of
//! the same path and bytes reconciles the record by reading the file back, never by writing
//! again: identical bytes resolve it as completed; otherwise it stays unknown until the folder
//! is reloaded (or reopened, e.g. after a restart). That reload is the reconciliation the spec
//! requires: afterwards a record the disk does not confirm resolves as failed and the save
//! writes again.
//!
//! Keys are `workspace.saveAll:<destination scope>:<path>:<digest>` where the scope is the
//! canonical folder root and the digest is the SHA-256 of the bytes (the fingerprint). The
//! folder adapter port does not carry the workspace revision, so the content digest takes its
//! place: a save of the same bytes to the same path is the same logical effect whatever the
//! revision. Because the same bytes can be saved again after the file was overwritten (A, B,
//! then A), a replayed completed record is trusted only while the file still holds the bytes;
//! otherwise, and after a confirmed refusal, the next *generation* of the key (`…#<n>`) runs.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use live_code_editor::WorkspaceFile;
use live_code_editor::file::FileContent;
use live_code_editor::workspace::error::{WorkspaceError, WorkspaceErrorCode, WorkspaceResult};
use live_code_editor::workspace::folder::{FolderAdapter, FolderImport, FolderPermission};
use live_code_editor::workspace::os_folder::{FolderFs, OsFolder, OsFs};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tool_durable_operations::backend::sqlite::SqliteBackend;
use tool_durable_operations::{
    DurableOperationError, DurableOperationStore, MemoryBackend, OperationRecord, OperationState,
    SideEffectOutcome, SideEffectRequest, SideEffectResolution, SideEffectResult, SideEffectRunner,
};

/// SQLite file of the durable operation store inside the data directory.
pub const DURABLE_OPERATIONS_DB_FILE: &str = "durable-operations.sqlite";
/// Prefix of every save key.
pub const SAVE_KEY_PREFIX: &str = "workspace.saveAll";
/// Most key generations of one path and content within the record retention (each refused
/// or overwritten-since generation moves to the next one); past it the save reports
/// `WORKSPACE_SIDE_EFFECT_UNKNOWN` until expired records are pruned at the next launch.
pub const MAX_SAVE_GENERATIONS: u32 = 64;

/// The durable store shared by every linked folder of one studio.
#[derive(Debug, Clone)]
pub struct DurableSaves {
    runner: SideEffectRunner,
    storage_mode: &'static str,
}

impl DurableSaves {
    /// Opens `<data_dir>/durable-operations.sqlite`; when it cannot be opened the records live
    /// in memory for this process (logged, and visible through [`Self::storage_mode`]).
    pub async fn open(data_dir: &Path) -> Self {
        let path = data_dir.join(DURABLE_OPERATIONS_DB_FILE);
        let prepared = super::private_files::create_private_dir(data_dir)
            .and_then(|()| super::private_files::prepare_private_file(&path));
        let opened = match prepared {
            Ok(()) => SqliteBackend::open(&path).await.map_err(|e| e.to_string()),
            Err(error) => Err(error.to_string()),
        };
        match opened {
            Ok(backend) => {
                let saves =
                    Self::with_store(DurableOperationStore::new(Arc::new(backend)), "sqlite");
                saves.prune_expired().await;
                saves
            }
            Err(reason) => {
                tracing::warn!(%reason, "durable operation store unavailable; save records are kept in memory");
                Self::memory()
            }
        }
    }

    /// Drops records older than the store's retention (a day by default), so old keys and
    /// their generations do not accumulate across launches; failures are only logged.
    async fn prune_expired(&self) {
        if let Err(error) = self.store().prune().await {
            tracing::warn!(%error, "could not prune expired save records");
        }
    }

    /// Records kept in memory only (lost on restart).
    pub fn memory() -> Self {
        let store = DurableOperationStore::new(Arc::new(MemoryBackend::new()));
        Self::with_store(store, "memory")
    }

    fn with_store(store: DurableOperationStore, storage_mode: &'static str) -> Self {
        // `studio:<pid>` is never blank and far below the owner-id bound, so `new` accepts it.
        let runner = SideEffectRunner::new(store, format!("studio:{}", std::process::id()))
            .unwrap_or_else(|error| unreachable!("valid owner id refused: {error}"));
        Self {
            runner,
            storage_mode,
        }
    }

    /// `sqlite` or `memory`.
    pub fn storage_mode(&self) -> &'static str {
        self.storage_mode
    }

    /// The operation store (inspection, pruning).
    pub fn store(&self) -> &DurableOperationStore {
        self.runner.store()
    }

    /// Links the directory at `root` with durable saves.
    pub fn open_folder(&self, root: impl AsRef<Path>) -> WorkspaceResult<DurableFolder> {
        self.open_folder_with_fs(root, Arc::new(OsFs))
    }

    /// Links `root` through a custom [`FolderFs`] (fault injection).
    pub fn open_folder_with_fs(
        &self,
        root: impl AsRef<Path>,
        fs: Arc<dyn FolderFs>,
    ) -> WorkspaceResult<DurableFolder> {
        let inner = OsFolder::with_fs(root, Arc::clone(&fs))?;
        Ok(DurableFolder {
            reads: Arc::default(),
            scope: inner.root().to_string_lossy().into_owned(),
            inner,
            fs,
            saves: self.clone(),
        })
    }
}

/// The SHA-256 digest of `bytes` as `sha256:<hex>` (the fingerprint of a write).
pub fn content_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The key of one file write: `workspace.saveAll:<scope>:<path>:<digest>`, with `#<n>` for
/// generations after the first.
pub fn write_key(scope: &str, path: &str, digest: &str, generation: u32) -> String {
    with_generation(
        format!("{SAVE_KEY_PREFIX}:{scope}:{path}:{digest}"),
        generation,
    )
}

/// The key of one file deletion: `workspace.saveAll:<scope>:<path>:delete`.
pub fn delete_key(scope: &str, path: &str, generation: u32) -> String {
    with_generation(
        format!("{SAVE_KEY_PREFIX}:{scope}:{path}:delete"),
        generation,
    )
}

fn with_generation(key: String, generation: u32) -> String {
    if generation == 0 {
        key
    } else {
        format!("{key}#{generation}")
    }
}

/// Fingerprint of a deletion (it has no content).
const DELETE_FINGERPRINT: &str = "delete";

/// One file effect of a save.
#[derive(Debug, Clone)]
enum Effect {
    Write(Arc<WorkspaceFile>),
    Delete(String),
}

impl Effect {
    fn operation(&self) -> &'static str {
        match self {
            Self::Write(_) => "write",
            Self::Delete(_) => "delete",
        }
    }

    fn path(&self) -> &str {
        match self {
            Self::Write(file) => &file.path,
            Self::Delete(path) => path,
        }
    }

    fn fingerprint(&self) -> String {
        match self {
            Self::Write(file) => content_digest(file_bytes(file)),
            Self::Delete(_) => DELETE_FINGERPRINT.to_owned(),
        }
    }

    fn key(&self, scope: &str, fingerprint: &str, generation: u32) -> String {
        match self {
            Self::Write(file) => write_key(scope, &file.path, fingerprint, generation),
            Self::Delete(path) => delete_key(scope, path, generation),
        }
    }

    async fn perform(&self, folder: &OsFolder) -> WorkspaceResult<()> {
        match self {
            Self::Write(file) => folder.write_file(file).await,
            Self::Delete(path) => folder.remove_file(path).await,
        }
    }
}

fn file_bytes(file: &WorkspaceFile) -> &[u8] {
    match &file.content {
        FileContent::Text { source } => source.as_bytes(),
        FileContent::Asset { bytes, .. } => bytes,
    }
}

/// A [`FolderAdapter`] around [`OsFolder`] whose writes and deletions are durable side effects.
#[derive(Clone)]
pub struct DurableFolder {
    inner: OsFolder,
    /// Which unresolved effects a folder read has reconciled (shared by clones).
    reads: Arc<ReadEpoch>,
    fs: Arc<dyn FolderFs>,
    saves: DurableSaves,
    scope: String,
}

impl std::fmt::Debug for DurableFolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableFolder")
            .field("inner", &self.inner)
            .field("storage_mode", &self.saves.storage_mode)
            .finish_non_exhaustive()
    }
}

impl DurableFolder {
    /// The destination scope of this folder's keys (its canonical root).
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// The key of writing `bytes` to `path` (first generation).
    pub fn write_key_for(&self, path: &str, bytes: &[u8]) -> String {
        write_key(&self.scope, path, &content_digest(bytes), 0)
    }

    /// Runs one effect durably, moving to the next key generation when a replayed record no
    /// longer describes the folder (refused before, or overwritten since).
    async fn run(&self, effect: Effect) -> WorkspaceResult<()> {
        let fingerprint = effect.fingerprint();
        for generation in 0..MAX_SAVE_GENERATIONS {
            let key = effect.key(&self.scope, &fingerprint, generation);
            match self.run_generation(&effect, &key, &fingerprint).await? {
                Step::Done(result) => return result,
                Step::NextGeneration => {}
            }
        }
        Err(side_effect_unknown(
            &effect,
            "the same content was saved too often within the record retention; change the file and save again",
        ))
    }

    async fn run_generation(
        &self,
        effect: &Effect,
        key: &str,
        fingerprint: &str,
    ) -> WorkspaceResult<Step> {
        let attempt: Arc<Attempt> = Arc::default();
        let this_run = Arc::clone(&attempt);
        let (folder, task_effect) = (self.inner.clone(), effect.clone());
        let (runner, request) = (
            self.saves.runner.clone(),
            SideEffectRequest::new(key, fingerprint),
        );
        // Its own task, so the record settles even when the caller gives up (a tool timeout
        // drops this future): the next save then sees the real outcome, not a stale lease.
        let settled = tokio::spawn(async move {
            runner
                .run(request, move |_| async move {
                    this_run.ran.store(true, Ordering::SeqCst);
                    let done = task_effect.perform(&folder).await;
                    Ok(outcome_of(&task_effect, done, &this_run.error))
                })
                .await
        });
        let result = settled
            .await
            .map_err(|join| side_effect_unknown(effect, &format!("save task failed: {join}")))?
            .map_err(store_unavailable)?;
        Ok(match result {
            SideEffectResult::Completed { .. } => Step::Done(Ok(())),
            SideEffectResult::Failed { reason, .. } => Step::Done(Err(attempt
                .take_error()
                .unwrap_or_else(|| side_effect_unknown(effect, &reason)))),
            // This run's own ambiguous effect: report it; a later save reconciles it.
            SideEffectResult::Unknown { reason, .. } if attempt.ran.load(Ordering::SeqCst) => {
                self.reads.unresolved(key);
                Step::Done(Err(side_effect_unknown(effect, &reason)))
            }
            SideEffectResult::Unknown {
                operation, reason, ..
            } => self.reconcile(effect, &operation, &reason).await?,
            SideEffectResult::Replayed { operation, .. }
                if operation.state == OperationState::Completed && self.landed(effect).await =>
            {
                Step::Done(Ok(()))
            }
            SideEffectResult::Replayed { .. } => Step::NextGeneration,
            SideEffectResult::Pending { operation } if owner_is_gone(&operation.owner_id) => {
                let abandoned = self.abandon(&operation).await?;
                self.reconcile(effect, &abandoned, ORPHANED_SAVE).await?
            }
            SideEffectResult::Pending { .. } => Step::Done(Err(side_effect_unknown(
                effect,
                "another save of this file is still in flight",
            ))),
            SideEffectResult::Conflict { .. } | SideEffectResult::Cancelled { .. } => {
                Step::Done(Err(side_effect_unknown(
                    effect,
                    "the save record is inconsistent",
                )))
            }
        })
    }

    /// Marks a pending record of a studio process that is gone `unknown`, fenced by the record
    /// as read (a concurrent change wins), so it is reconciled instead of blocking saves of
    /// that file until its lease runs out.
    async fn abandon(&self, operation: &OperationRecord) -> WorkspaceResult<OperationRecord> {
        let store = self.saves.store();
        let fence = operation.fence();
        match store
            .mark_unknown(
                &operation.key,
                &operation.owner_id,
                ORPHANED_SAVE,
                None,
                &fence,
            )
            .await
        {
            Ok(record) => Ok(record),
            Err(_) => store
                .get(&operation.key)
                .await
                .map_err(store_unavailable)?
                .ok_or_else(|| WorkspaceError::durable_state_unavailable("a save record vanished")),
        }
    }

    /// Reconciles a previous ambiguous effect without performing it again: completed when the
    /// folder shows it; failed (so the next generation runs) when the folder was re-read after
    /// the ambiguity and does not show it, because that reload reconciled the workspace with
    /// the disk; otherwise still unknown.
    async fn reconcile(
        &self,
        effect: &Effect,
        operation: &OperationRecord,
        reason: &str,
    ) -> WorkspaceResult<Step> {
        let resolution = if self.landed(effect).await {
            SideEffectResolution::completed(
                json!({"operation": effect.operation(), "path": effect.path(), "reconciled": true}),
            )
        } else if self.reads.reconciled(&operation.key) {
            SideEffectResolution::failed(
                "the folder was reloaded and does not hold the effect".to_owned(),
            )
        } else {
            return Ok(Step::Done(Err(side_effect_unknown(
                effect,
                &format!(
                    "a previous {} is unresolved and the folder does not match; reload the folder: {reason}",
                    effect.operation()
                ),
            ))));
        };
        let landed = matches!(resolution, SideEffectResolution::Completed { .. });
        self.saves
            .runner
            .recover(
                &operation.key,
                None,
                None,
                |_| async move { Ok(resolution) },
            )
            .await
            .map_err(store_unavailable)?;
        Ok(if landed {
            Step::Done(Ok(()))
        } else {
            Step::NextGeneration
        })
    }

    /// Whether the folder holds the effect: the file has exactly the bytes (write), or is gone
    /// (delete). Read through the same [`FolderFs`] as the writes.
    async fn landed(&self, effect: &Effect) -> bool {
        let fs = Arc::clone(&self.fs);
        let target = self.target(effect.path());
        let effect = effect.clone();
        tokio::task::spawn_blocking(move || match &effect {
            Effect::Write(file) => holds_bytes(fs.as_ref(), &target, file_bytes(file)),
            Effect::Delete(_) => matches!(
                fs.symlink_metadata(&target),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound
            ),
        })
        .await
        .unwrap_or(false)
    }

    fn target(&self, path: &str) -> PathBuf {
        path.split('/')
            .fold(self.inner.root().to_path_buf(), |dir, part| dir.join(part))
    }
}

/// Tracks which ambiguous effects happened after the folder's last read. A read (open,
/// reload, reopen after a restart) takes the disk state into the workspace, which is the
/// reconciliation the spec asks for; an effect that became unknown after it is not reconciled
/// yet. Deterministic on purpose: no clock comparison within a millisecond.
#[derive(Debug, Default)]
struct ReadEpoch {
    /// Whether this folder was read at least once.
    read: AtomicBool,
    /// Keys that became unknown through this folder since its last read.
    since_read: Mutex<HashSet<String>>,
}

impl ReadEpoch {
    fn read_completed(&self) {
        if let Ok(mut keys) = self.since_read.lock() {
            keys.clear();
        }
        self.read.store(true, Ordering::SeqCst);
    }

    fn unresolved(&self, key: &str) {
        if let Ok(mut keys) = self.since_read.lock() {
            keys.insert(key.to_owned());
        }
    }

    /// Whether a read happened after `key` became unknown (records of another folder instance
    /// or process predate this folder's first read).
    fn reconciled(&self, key: &str) -> bool {
        self.read.load(Ordering::SeqCst)
            && self.since_read.lock().is_ok_and(|keys| !keys.contains(key))
    }
}

/// What one key generation decided.
enum Step {
    Done(WorkspaceResult<()>),
    NextGeneration,
}

/// Why a save record of a stopped studio process became `unknown`.
const ORPHANED_SAVE: &str =
    "the studio process that started this save stopped before recording its outcome";

/// Whether `owner_id` names a studio process of this machine that is no longer running, so
/// its pending save can never settle (it was killed mid-save). Only `studio:<pid>` owners are
/// judged, and only where `/proc` shows processes; any other owner is presumed alive and its
/// lease is waited out.
fn owner_is_gone(owner_id: &str) -> bool {
    let Some(pid) = owner_id
        .strip_prefix("studio:")
        .and_then(|pid| pid.parse::<u32>().ok())
    else {
        return false;
    };
    pid != std::process::id()
        && Path::new("/proc/self").exists()
        && !Path::new(&format!("/proc/{pid}")).exists()
}

/// A regular file (not a link) holding exactly `bytes`.
fn holds_bytes(fs: &dyn FolderFs, target: &Path, bytes: &[u8]) -> bool {
    let regular = fs
        .symlink_metadata(target)
        .is_ok_and(|meta| meta.file_type().is_file());
    let limit = u64::try_from(bytes.len())
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    regular
        && fs
            .read_limited(target, limit)
            .is_ok_and(|read| read == bytes)
}

/// The outcome stored for one adapter call. Confirmed pre-write refusals (stale folder,
/// permission, not connected) are `failed` and keep their own error; everything else is
/// ambiguous. The adapter's error is kept in `slot` for this caller.
fn outcome_of(
    effect: &Effect,
    done: WorkspaceResult<()>,
    slot: &Mutex<Option<WorkspaceError>>,
) -> SideEffectOutcome {
    let error = match done {
        Ok(()) => {
            return SideEffectOutcome::completed(
                json!({"operation": effect.operation(), "path": effect.path()}),
            );
        }
        Err(error) => error,
    };
    let outcome = if is_confirmed_refusal(error.code) {
        SideEffectOutcome::failed(error.message.clone())
            .with_diagnostic(json!({"code": error.code.as_str()}))
    } else {
        SideEffectOutcome::unknown(cause_of(&error))
            .with_diagnostic(json!({"code": error.code.as_str(), "path": effect.path()}))
    };
    if let Ok(mut slot) = slot.lock() {
        *slot = Some(error);
    }
    outcome
}

/// Codes that mean the folder refused before anything was written.
fn is_confirmed_refusal(code: WorkspaceErrorCode) -> bool {
    matches!(
        code,
        WorkspaceErrorCode::WorkspaceFolderStale
            | WorkspaceErrorCode::WorkspaceFolderNotConnected
            | WorkspaceErrorCode::WorkspaceFolderPermissionDenied
            | WorkspaceErrorCode::WorkspacePathInvalid
            | WorkspaceErrorCode::WorkspaceFileTypeConflict
    )
}

/// What this caller's adapter run did (the runner stores only the outcome).
#[derive(Default)]
struct Attempt {
    /// The adapter started in this run (so an `unknown` result is this run's own).
    ran: AtomicBool,
    /// The adapter's error, to return with its own code after a confirmed refusal.
    error: Mutex<Option<WorkspaceError>>,
}

impl Attempt {
    fn take_error(&self) -> Option<WorkspaceError> {
        self.error.lock().ok().and_then(|mut slot| slot.take())
    }
}

/// The bounded cause of an adapter error (never file contents).
fn cause_of(error: &WorkspaceError) -> String {
    error
        .details
        .get("cause")
        .and_then(Value::as_str)
        .map_or_else(|| error.message.clone(), ToOwned::to_owned)
}

/// `WORKSPACE_SIDE_EFFECT_UNKNOWN` for `effect` (not retryable: reconcile first).
fn side_effect_unknown(effect: &Effect, reason: &str) -> WorkspaceError {
    WorkspaceError::new(
        WorkspaceErrorCode::WorkspaceSideEffectUnknown,
        format!(
            "The folder {} of {} may or may not have completed; reload or reconnect the folder before saving again.",
            effect.operation(),
            effect.path()
        ),
        json!({"operation": effect.operation(), "path": effect.path(), "reason": reason}),
    )
}

fn store_unavailable(error: DurableOperationError) -> WorkspaceError {
    WorkspaceError::durable_state_unavailable(&error.to_string())
}

#[async_trait]
impl FolderAdapter for DurableFolder {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn permission(&self) -> FolderPermission {
        self.inner.permission().await
    }

    async fn read(&self) -> WorkspaceResult<FolderImport> {
        let import = self.inner.read().await?;
        self.reads.read_completed();
        Ok(import)
    }

    fn packages(&self) -> Option<live_code_editor::preview::Packages> {
        self.inner.packages()
    }

    async fn write_file(&self, file: &WorkspaceFile) -> WorkspaceResult<()> {
        self.run(Effect::Write(Arc::new(file.clone()))).await
    }

    async fn remove_file(&self, path: &str) -> WorkspaceResult<()> {
        self.run(Effect::Delete(path.to_owned())).await
    }

    /// The canonical root, so two folders that share a name are never the same destination.
    fn scope(&self) -> String {
        self.scope.clone()
    }
}
