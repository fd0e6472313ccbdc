//! One durable save record: claim the key, write its files in order through the manager, and
//! store what happened; or replay a completed record after reading its files back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use live_code_editor::WorkspaceFile;
use live_code_editor::workspace::folder::FolderAdapter;
use live_code_editor::workspace::manager::WorkspaceDocumentManager;
use live_code_editor::workspace::{WorkspaceError, WorkspaceErrorCode};
use serde_json::{Value, json};
use tool_durable_operations::{
    OperationState, SideEffectOutcome, SideEffectRequest, SideEffectResult,
};
use tool_protocol::{ToolCallError, codes};

use super::EditorSaves;
use super::manifest::Manifest;
use super::readback::{all_match, confirm_matches, read_back};
use super::record::{MAX_SAVE_GENERATIONS, SaveRecord, save_key};

/// Where recovery of an unknown save is requested (named in errors).
pub(crate) const RECOVER_ROUTE: &str = "POST /api/editor/saves/recover";

/// What one save call writes, captured at one workspace revision.
pub struct SavePlan {
    /// `editor.saveFile` or `editor.saveAll`.
    pub tool: &'static str,
    /// The call's session.
    pub session: Option<String>,
    /// The linked folder when the plan was made.
    pub folder: Arc<dyn FolderAdapter>,
    /// The workspace revision whose content is written.
    pub revision: u64,
    /// The files, in write order.
    pub files: Vec<Arc<WorkspaceFile>>,
}

/// A record that ended well.
#[derive(Debug)]
pub struct RecordDone {
    /// Its key.
    pub key: String,
    /// The paths it covers.
    pub paths: Vec<String>,
    /// Whether a completed record was replayed (nothing written by this call).
    pub replayed: bool,
}

/// A record that did not: the error for the caller and the paths written before it.
#[derive(Debug)]
pub struct RecordFailure {
    /// The coded error.
    pub error: ToolCallError,
    /// Paths this record wrote (and marked clean) before the failure.
    pub completed: Vec<String>,
}

impl RecordFailure {
    fn nothing_written(error: ToolCallError) -> Self {
        Self {
            error,
            completed: Vec::new(),
        }
    }
}

/// What one key generation decided.
enum Step {
    Done(Result<RecordDone, RecordFailure>),
    NextGeneration,
}

impl EditorSaves {
    /// Writes `files` (at most one manifest's worth) as one durable record.
    pub async fn save_record(
        &self,
        manager: &Arc<WorkspaceDocumentManager>,
        plan: &SavePlan,
        files: &[Arc<WorkspaceFile>],
    ) -> Result<RecordDone, RecordFailure> {
        let manifest = Manifest::of_files(files).map_err(|error| {
            RecordFailure::nothing_written(ToolCallError::new(
                codes::TOOL_EXECUTION_FAILED,
                error.to_string(),
            ))
        })?;
        let scope = plan.folder.scope();
        let digest = manifest.digest();
        for generation in 0..MAX_SAVE_GENERATIONS {
            let key = save_key(
                plan.tool,
                plan.session.as_deref(),
                &scope,
                &digest,
                generation,
            );
            let record = SaveRecord::planned(
                plan.tool,
                plan.session.as_deref(),
                plan.folder.name(),
                &scope,
                plan.revision,
                &manifest,
            );
            let write = Write {
                manager: Arc::clone(manager),
                files: files.to_vec(),
                revision: plan.revision,
                record,
                attempt: Arc::default(),
            };
            match self.run_generation(plan, &manifest, &key, write).await {
                Step::Done(result) => return result,
                Step::NextGeneration => {}
            }
        }
        Err(RecordFailure::nothing_written(unknown_error(
            "The same files were saved too often in this session within the record retention; change a file and save again.",
            &json!({"paths": manifest.paths()}),
        )))
    }

    async fn run_generation(
        &self,
        plan: &SavePlan,
        manifest: &Manifest,
        key: &str,
        write: Write,
    ) -> Step {
        let attempt = Arc::clone(&write.attempt);
        let manager = Arc::clone(&write.manager);
        let (runner, request) = (
            self.runner().clone(),
            SideEffectRequest::new(key, manifest.digest()),
        );
        // Its own task, so the record settles with the real outcome even when the caller
        // gives up (a tool timeout): a retry then replays instead of finding a stale lease.
        let settled = tokio::spawn(async move {
            runner
                .run(request, move |_| async move { Ok(write.perform().await) })
                .await
        })
        .await;
        let result = match settled {
            Ok(Ok(result)) => result,
            Ok(Err(store)) => return Step::Done(Err(attempt.store_failed(&store.to_string()))),
            Err(join) => return Step::Done(Err(attempt.store_failed(&join.to_string()))),
        };
        match result {
            SideEffectResult::Completed { .. } => Step::Done(Ok(RecordDone {
                key: key.to_owned(),
                paths: manifest.paths(),
                replayed: false,
            })),
            SideEffectResult::Failed { .. } => Step::Done(Err(attempt.failure(key, false))),
            SideEffectResult::Unknown { .. } if attempt.ran() => {
                Step::Done(Err(attempt.failure(key, true)))
            }
            SideEffectResult::Unknown { reason, .. } => Step::Done(Err(
                RecordFailure::nothing_written(previous_unknown(key, manifest, &reason)),
            )),
            SideEffectResult::Replayed { operation, .. }
                if operation.state == OperationState::Completed =>
            {
                self.replay(&manager, plan, manifest, key).await
            }
            SideEffectResult::Replayed { .. } => Step::NextGeneration,
            SideEffectResult::Pending { operation } => {
                Step::Done(Err(RecordFailure::nothing_written(ToolCallError {
                    code: codes::TOOL_IDEMPOTENCY_PENDING.to_owned(),
                    message: "The same save is still in flight; wait for it, then retry."
                        .to_owned(),
                    retryable: Some(true),
                    details: Some(json!({
                        "operationKey": key,
                        "state": "pending",
                        "leaseExpiresAt": operation.lease_expires_at,
                    })),
                })))
            }
            SideEffectResult::Conflict { .. } | SideEffectResult::Cancelled { .. } => {
                Step::Done(Err(RecordFailure::nothing_written(unknown_error(
                    "The save record is inconsistent; check the folder before saving again.",
                    &json!({"operationKey": key}),
                ))))
            }
        }
    }

    /// A completed record replays only while the folder still holds every file: then nothing
    /// is written and the paths are marked clean; otherwise the next generation writes again.
    async fn replay(
        &self,
        manager: &WorkspaceDocumentManager,
        plan: &SavePlan,
        manifest: &Manifest,
        key: &str,
    ) -> Step {
        let checks = read_back(plan.folder.as_ref(), manifest).await;
        if !all_match(&checks) {
            return Step::NextGeneration;
        }
        confirm_matches(manager, &checks).await;
        Step::Done(Ok(RecordDone {
            key: key.to_owned(),
            paths: manifest.paths(),
            replayed: true,
        }))
    }
}

/// The adapter run of one record.
struct Write {
    manager: Arc<WorkspaceDocumentManager>,
    files: Vec<Arc<WorkspaceFile>>,
    revision: u64,
    record: SaveRecord,
    attempt: Arc<Attempt>,
}

impl Write {
    /// Saves each file at the planned revision (so the bytes are the manifest's); stops at the
    /// first failure. A refusal confirmed before anything of that file was written fails the
    /// record; anything else leaves it unknown.
    async fn perform(self) -> SideEffectOutcome {
        self.attempt.ran.store(true, Ordering::SeqCst);
        let mut record = self.record;
        for file in &self.files {
            match self
                .manager
                .save_file(&file.path, Some(self.revision))
                .await
            {
                Ok(_) => {
                    record.completed_paths.push(file.path.clone());
                    self.attempt.completed(&file.path);
                }
                Err(error) => return self.attempt.failed(record, &file.path, error),
            }
        }
        SideEffectOutcome::completed(record.to_value())
    }
}

/// What this caller's run did (the runner stores only the outcome).
#[derive(Debug, Default)]
struct Attempt {
    /// The write started in this run (so an `unknown` result is this run's own).
    ran: AtomicBool,
    state: Mutex<AttemptState>,
}

#[derive(Debug, Default)]
struct AttemptState {
    completed: Vec<String>,
    error: Option<WorkspaceError>,
}

impl Attempt {
    fn ran(&self) -> bool {
        self.ran.load(Ordering::SeqCst)
    }

    fn with_state<T>(&self, f: impl FnOnce(&mut AttemptState) -> T) -> T {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut state)
    }

    fn completed(&self, path: &str) {
        self.with_state(|state| state.completed.push(path.to_owned()));
    }

    /// Stores the error for this caller and returns the outcome to record.
    fn failed(
        &self,
        mut record: SaveRecord,
        path: &str,
        error: WorkspaceError,
    ) -> SideEffectOutcome {
        record.failed_path = Some(path.to_owned());
        record.code = Some(error.code.as_str().to_owned());
        let confirmed = is_confirmed_refusal(error.code);
        let reason = bounded_reason(&error);
        self.with_state(|state| state.error = Some(error));
        if confirmed {
            SideEffectOutcome::failed(reason).with_diagnostic(record.to_value())
        } else {
            SideEffectOutcome::unknown(reason).with_diagnostic(record.to_value())
        }
    }

    /// The caller's error after this run's write failed (`unknown`: its outcome is ambiguous).
    fn failure(&self, key: &str, unknown: bool) -> RecordFailure {
        let (completed, error) =
            self.with_state(|state| (state.completed.clone(), state.error.take()));
        let error = error.unwrap_or_else(|| {
            WorkspaceError::folder_io_failed("save", "", "the save ended without an error")
        });
        let cause_code = error.code.as_str();
        let mut error = ToolCallError::from(error);
        if unknown {
            error.code = WorkspaceErrorCode::WorkspaceSideEffectUnknown
                .as_str()
                .to_owned();
            error.retryable = Some(false);
            error.message = format!(
                "{} The save record is unknown: check the folder, then recover it ({RECOVER_ROUTE}).",
                error.message
            );
            add_details(&mut error, json!({"causeCode": cause_code}));
        }
        add_details(
            &mut error,
            json!({"operationKey": key, "state": if unknown { "unknown" } else { "failed" }}),
        );
        RecordFailure { error, completed }
    }

    /// The durable store failed; whatever this run wrote is reported, nothing is confirmed.
    fn store_failed(&self, cause: &str) -> RecordFailure {
        let completed = self.with_state(|state| state.completed.clone());
        RecordFailure {
            error: WorkspaceError::durable_state_unavailable(cause).into(),
            completed,
        }
    }
}

/// Codes that mean the manager or the folder refused before the file was written.
fn is_confirmed_refusal(code: WorkspaceErrorCode) -> bool {
    matches!(
        code,
        WorkspaceErrorCode::WorkspaceRevisionConflict
            | WorkspaceErrorCode::WorkspaceFolderStale
            | WorkspaceErrorCode::WorkspaceFolderNotConnected
            | WorkspaceErrorCode::WorkspaceFolderPermissionDenied
            | WorkspaceErrorCode::WorkspacePathInvalid
            | WorkspaceErrorCode::WorkspaceFileNotFound
            | WorkspaceErrorCode::WorkspaceFileTypeConflict
    )
}

/// The record's reason: the adapter's bounded cause, else the message (never contents).
fn bounded_reason(error: &WorkspaceError) -> String {
    error
        .details
        .get("cause")
        .and_then(Value::as_str)
        .filter(|cause| !cause.trim().is_empty())
        .map_or_else(|| error.message.clone(), ToOwned::to_owned)
}

/// `WORKSPACE_SIDE_EFFECT_UNKNOWN` with `details`.
fn unknown_error(message: &str, details: &Value) -> ToolCallError {
    ToolCallError {
        code: WorkspaceErrorCode::WorkspaceSideEffectUnknown
            .as_str()
            .to_owned(),
        message: message.to_owned(),
        retryable: Some(false),
        details: Some(details.clone()),
    }
}

/// A previous save of the same files in this session has an unknown outcome.
fn previous_unknown(key: &str, manifest: &Manifest, reason: &str) -> ToolCallError {
    unknown_error(
        &format!(
            "A previous save of the same files in this session has an unknown outcome; check the folder and recover it ({RECOVER_ROUTE}) before saving the same content again."
        ),
        &json!({
            "operationKey": key,
            "state": "unknown",
            "paths": manifest.paths(),
            "reason": reason,
        }),
    )
}

/// Merges `extra` into the error's details.
pub(crate) fn add_details(error: &mut ToolCallError, extra: Value) {
    let mut details = match error.details.take() {
        Some(Value::Object(details)) => details,
        _ => serde_json::Map::new(),
    };
    if let Value::Object(extra) = extra {
        details.extend(extra);
    }
    error.details = Some(Value::Object(details));
}
