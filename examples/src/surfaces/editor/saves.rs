//! `editor.saveFile` / `editor.saveAll`: approval-gated folder writes with durable records
//! and recovery by read-back.
//!
//! # Where the durability lives, and why
//!
//! Each save is one durable side effect on the studio's operation store (the same SQLite file
//! and [`SideEffectRunner`] as `workspace.saveAll`'s [`DurableSaves`]), run *inside* the handler
//! rather than through the registry-level ledger (`ToolRegistryBuilder::durable_store`). The
//! registry ledger only claims calls whose caller passes an `idempotencyKey` option, and none of
//! the studio's callers can: the palette, the local agent, OpenRouter and MCP all send plain
//! `tools/call` requests, and a model cannot invent a stable key for "the same save". The
//! handler can: it derives the key from what makes two calls the same save.
//!
//! * **Key**: `<tool>:<session>:<folder>:<manifest digest>` (`#<n>` for generations after the
//!   first), where session and folder are short SHA-256 prefixes of the call's session id and
//!   the linked folder's canonical root, and the manifest digest covers every path, its byte
//!   digest and length. A retry of the same save in the same session claims the same key and
//!   replays the record instead of writing again; new content or a new session is a new key.
//! * **Manifest**: the record keeps a bounded per-file manifest (path, SHA-256, byte length;
//!   at most [`MAX_MANIFEST_FILES`], a larger `saveAll` is split into consecutive records), in
//!   every state, so an ambiguous write can be reconciled without the file contents.
//! * **Outcomes**: a save that wrote every file completes. A refusal the folder confirmed
//!   before writing (revision moved, permission, stale folder, path) fails. Anything else
//!   (an I/O error after the write may have landed, a crash) leaves the record `unknown` and
//!   the call fails with `WORKSPACE_SIDE_EFFECT_UNKNOWN` naming the operation key.
//! * **Replay** of a completed record is trusted only after reading every file back: when the
//!   folder still holds the bytes, nothing is written and the paths are marked clean; when it
//!   does not (changed outside since), or after a failed record, the next key generation runs
//!   a new write (at most [`MAX_SAVE_GENERATIONS`] per key).
//! * **Recovery** (`POST /api/editor/saves/recover`) reads every manifest file back through the
//!   folder adapter and completes the record only when all bytes match; a missing or different
//!   file keeps it `unknown` with a coded error naming the path. An operator may instead record
//!   that the save did not happen (`resolution: "failed"`), so the next identical save writes.
//!
//! # Results and routes
//!
//! A save returns the editor's [`EditorContext`](super::EditorContext) (`activePath`,
//! `workspaceRevision`, `documentRevision`, `preview`, `storageMode`) with `operation`,
//! `dirtyPaths`, `savedPaths`, `replayedPaths` and `operationKeys`. A failed save's error
//! carries `details.operationKey`, `details.state` (`failed` or `unknown`) and
//! `details.completedPaths`.
//!
//! * `GET /api/editor/saves` -> `{"unknown": [{key, reason?, updatedAt, save: {tool, session?,
//!   folder, scope, workspaceRevision, manifest: [{path, sha256, length}], completedPaths,
//!   failedPath?, code?}}], "truncated": bool}` (at most [`MAX_LISTED_SAVES`]).
//! * `POST /api/editor/saves/recover` `{"key": "...", "resolution"?: "readBack" | "failed"}`
//!   (token required) -> `{operationKey, state, recovered, confirmedPaths?, cleanedPaths?,
//!   dirtyPaths?, context?}`; a record that is not `unknown` is returned unchanged
//!   (`recovered: false`). Errors are `{"error": {code, message, retryable, details}}`:
//!   `400 EDITOR_SAVE_RECOVER_INVALID`, `404 EDITOR_SAVE_NOT_FOUND`, `409` with
//!   `EDITOR_SAVE_FILE_MISSING` / `EDITOR_SAVE_FILE_MISMATCH` / `EDITOR_SAVE_FILE_UNREADABLE`
//!   (details `{operationKey, state: "unknown", path, files: [{path, state, expected,
//!   actual?}]}`), `EDITOR_SAVE_FOLDER_MISMATCH`, `EDITOR_SAVE_MANIFEST_INVALID` or
//!   `WORKSPACE_FOLDER_NOT_CONNECTED`, and `503 WORKSPACE_DURABLE_STATE_UNAVAILABLE`.
//!
//! Files are written one at a time in order through
//! [`WorkspaceDocumentManager::save_file`](live_code_editor::workspace::manager::WorkspaceDocumentManager::save_file),
//! which clears a path's dirty state right after its write: when a later file fails, the
//! written files stay clean, the rest stay dirty, and the error lists the completed paths.

pub(crate) mod manifest;
pub(crate) mod readback;
pub(crate) mod record;
pub(crate) mod run;

use tool_durable_operations::{DurableOperationStore, SideEffectRunner};

use crate::kit::durable_folder::DurableSaves;

pub use manifest::{MAX_MANIFEST_FILES, Manifest, ManifestEntry, ManifestError};
pub use record::{
    EDITOR_SAVE_KEY_PREFIX, MAX_LISTED_SAVES, MAX_SAVE_GENERATIONS, SaveRecord, save_key,
    short_digest,
};

/// Error codes of the save tools and routes.
pub mod codes {
    /// A folder read-back did not find a file of the record (the record stays `unknown`).
    pub const EDITOR_SAVE_FILE_MISSING: &str = "EDITOR_SAVE_FILE_MISSING";
    /// A folder read-back found different bytes (the record stays `unknown`).
    pub const EDITOR_SAVE_FILE_MISMATCH: &str = "EDITOR_SAVE_FILE_MISMATCH";
    /// A folder read-back failed for another reason (the record stays `unknown`).
    pub const EDITOR_SAVE_FILE_UNREADABLE: &str = "EDITOR_SAVE_FILE_UNREADABLE";
    /// The linked folder is not the folder the record wrote to.
    pub const EDITOR_SAVE_FOLDER_MISMATCH: &str = "EDITOR_SAVE_FOLDER_MISMATCH";
    /// No editor save record has that key.
    pub const EDITOR_SAVE_NOT_FOUND: &str = "EDITOR_SAVE_NOT_FOUND";
    /// The record carries no usable manifest, so it cannot be checked by read-back.
    pub const EDITOR_SAVE_MANIFEST_INVALID: &str = "EDITOR_SAVE_MANIFEST_INVALID";
    /// The recovery request is malformed.
    pub const EDITOR_SAVE_RECOVER_INVALID: &str = "EDITOR_SAVE_RECOVER_INVALID";
}

/// The editor's durable save records: a [`SideEffectRunner`] on the studio's operation store.
#[derive(Debug, Clone)]
pub struct EditorSaves {
    runner: SideEffectRunner,
}

impl EditorSaves {
    /// Records on the studio's durable store (shared with `workspace.saveAll`).
    pub fn new(saves: &DurableSaves) -> Self {
        Self::on_store(saves.store().clone())
    }

    /// Records kept in memory only (tests, or a surface opened without the studio).
    pub fn memory() -> Self {
        Self::new(&DurableSaves::memory())
    }

    fn on_store(store: DurableOperationStore) -> Self {
        // `studio:<pid>:editor` is never blank and far below the owner-id bound.
        let runner = SideEffectRunner::new(store, format!("studio:{}:editor", std::process::id()))
            .unwrap_or_else(|error| unreachable!("valid owner id refused: {error}"));
        Self { runner }
    }

    /// The operation store (inspection).
    pub fn store(&self) -> &DurableOperationStore {
        self.runner.store()
    }

    pub(crate) fn runner(&self) -> &SideEffectRunner {
        &self.runner
    }
}
