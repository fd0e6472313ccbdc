//! `GET /api/editor/saves` (unknown save records) and `POST /api/editor/saves/recover`
//! (read-back reconciliation, or an operator's "did not happen").

use axum::extract::{FromRef, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use live_code_editor::workspace::WorkspaceError;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tool_durable_operations::record::MAX_OPERATION_KEY_BYTES;
use tool_durable_operations::{
    DurableOperationError, DurableOperationStore, OperationRecord, OperationState,
    SideEffectRecovery, SideEffectResolution,
};

use super::EditorRoutes;
use super::EditorSurface;
use super::saves::EditorSaves;
use super::saves::codes::{
    EDITOR_SAVE_FOLDER_MISMATCH, EDITOR_SAVE_MANIFEST_INVALID, EDITOR_SAVE_NOT_FOUND,
    EDITOR_SAVE_RECOVER_INVALID,
};
use super::saves::readback::{confirm_matches, mismatch_error, read_back};
use super::saves::record::{EDITOR_SAVE_KEY_PREFIX, MAX_LISTED_SAVES, SaveRecord, short_digest};
use super::state::EditorContext;
use crate::kit::error::StudioError;

/// Records read per page while listing.
const LIST_PAGE_SIZE: usize = 200;
/// Most pages one listing scans (completed records are skipped over); past it the listing is
/// marked truncated.
pub(crate) const MAX_LISTED_PAGES: usize = 20;
/// Reason stored when an operator records that an unknown save did not happen.
pub(crate) const OPERATOR_FAILED_REASON: &str =
    "an operator recorded that the save did not happen; the next identical save writes again";

/// The routes.
pub(crate) fn routes<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    EditorRoutes: FromRef<S>,
{
    Router::new()
        .route("/api/editor/saves", get(list))
        .route("/api/editor/saves/recover", post(recover))
}

/// One unknown save as listed (manifest, never contents).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UnknownSave {
    /// The operation key to recover.
    pub key: String,
    /// Why the outcome is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Last write of the record, ms since the Unix epoch.
    pub updated_at: u64,
    /// The stored save (absent when the record carries none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub save: Option<SaveRecord>,
}

/// `GET /api/editor/saves`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SaveListing {
    /// Unknown editor save records in key order (at most [`MAX_LISTED_SAVES`]).
    pub unknown: Vec<UnknownSave>,
    /// Whether more may exist than were listed.
    pub truncated: bool,
}

/// `POST /api/editor/saves/recover` body.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RecoverRequest {
    /// The unknown record's key.
    pub key: String,
    /// `readBack` (default): complete only when every file reads back identical; `failed`: an
    /// operator records that the save did not happen.
    #[serde(default)]
    pub resolution: RecoverResolution,
}

/// How to resolve an unknown save.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum RecoverResolution {
    /// Read every manifest file back and compare.
    #[default]
    ReadBack,
    /// The operator says the save did not happen.
    Failed,
}

async fn list(State(state): State<EditorRoutes>) -> Result<Json<SaveListing>, StudioError> {
    let listing = list_unknown(state.editor.saves().store())
        .await
        .map_err(|error| store_failure(&error))?;
    Ok(Json(listing))
}

/// The unknown editor save records, scanning the key range of [`EDITOR_SAVE_KEY_PREFIX`].
pub(crate) async fn list_unknown(
    store: &DurableOperationStore,
) -> Result<SaveListing, DurableOperationError> {
    list_within(store, ListBounds::DEFAULT).await
}

/// How much one listing reads and returns.
#[derive(Debug, Clone, Copy)]
struct ListBounds {
    page_size: usize,
    max_pages: usize,
    max_listed: usize,
}

impl ListBounds {
    const DEFAULT: Self = Self {
        page_size: LIST_PAGE_SIZE,
        max_pages: MAX_LISTED_PAGES,
        max_listed: MAX_LISTED_SAVES,
    };
}

async fn list_within(
    store: &DurableOperationStore,
    bounds: ListBounds,
) -> Result<SaveListing, DurableOperationError> {
    let mut listing = SaveListing {
        unknown: Vec::new(),
        truncated: false,
    };
    let mut cursor = EDITOR_SAVE_KEY_PREFIX.to_owned();
    for _ in 0..bounds.max_pages {
        let page = store
            .backend()
            .list_page(Some(&cursor), bounds.page_size)
            .await?;
        for record in page.records {
            if !record.key.starts_with(EDITOR_SAVE_KEY_PREFIX) {
                return Ok(listing);
            }
            if record.state != OperationState::Unknown {
                continue;
            }
            if listing.unknown.len() == bounds.max_listed {
                listing.truncated = true;
                return Ok(listing);
            }
            listing.unknown.push(listed(&record));
        }
        match page.next_cursor {
            Some(next) => cursor = next,
            None => return Ok(listing),
        }
    }
    listing.truncated = true;
    Ok(listing)
}

fn listed(record: &OperationRecord) -> UnknownSave {
    UnknownSave {
        key: record.key.clone(),
        reason: record.reason.clone(),
        updated_at: record.updated_at,
        save: SaveRecord::of_operation(record),
    }
}

async fn recover(
    State(state): State<EditorRoutes>,
    Json(request): Json<RecoverRequest>,
) -> Result<Json<Recovery>, StudioError> {
    recover_save(&state.editor, &request).await.map(Json)
}

/// What a recovery did to an editor save record.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Recovery {
    operation_key: String,
    state: OperationState,
    /// Whether this request resolved the record (`false`: it was not unknown, or is still).
    recovered: bool,
    /// After a read-back: the manifest's paths, found identical in the folder.
    #[serde(skip_serializing_if = "Option::is_none")]
    confirmed_paths: Option<Vec<String>>,
    /// After a read-back: the paths marked clean (the workspace still holds those bytes).
    #[serde(skip_serializing_if = "Option::is_none")]
    cleaned_paths: Option<Vec<String>>,
    /// After a read-back: the paths still unsaved.
    #[serde(skip_serializing_if = "Option::is_none")]
    dirty_paths: Option<Vec<String>>,
    /// After a read-back: the editor's context.
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<EditorContext>,
}

impl Recovery {
    fn of(key: &str, state: OperationState, recovered: bool) -> Self {
        Self {
            operation_key: key.to_owned(),
            state,
            recovered,
            confirmed_paths: None,
            cleaned_paths: None,
            dirty_paths: None,
            context: None,
        }
    }
}

/// Status-first recovery of one editor save record.
pub(crate) async fn recover_save(
    surface: &EditorSurface,
    request: &RecoverRequest,
) -> Result<Recovery, StudioError> {
    let key = request.key.as_str();
    if !is_save_key(key) {
        return Err(invalid(
            "key must be an editor save operation key (editor.saveFile:… or editor.saveAll:…).",
        ));
    }
    let saves = surface.saves();
    let record = saves
        .store()
        .get(key)
        .await
        .map_err(|error| store_failure(&error))?
        .ok_or_else(|| {
            StudioError::not_found(EDITOR_SAVE_NOT_FOUND, "No editor save record has that key.")
                .with_details(json!({"operationKey": key}))
        })?;
    if record.state != OperationState::Unknown {
        return Ok(Recovery::of(key, record.state, false));
    }
    match request.resolution {
        RecoverResolution::Failed => record_failed(saves, &record).await,
        RecoverResolution::ReadBack => read_back_and_complete(surface, &record).await,
    }
}

/// Completes the record only when every manifest file reads back identical through the
/// linked folder; then marks clean the paths the workspace still holds with those bytes.
async fn read_back_and_complete(
    surface: &EditorSurface,
    record: &OperationRecord,
) -> Result<Recovery, StudioError> {
    let key = record.key.as_str();
    let manifest_invalid = |why: String| {
        StudioError::conflict(
            EDITOR_SAVE_MANIFEST_INVALID,
            "The save record has no usable manifest, so it cannot be checked by read-back; it stays unknown.",
        )
        .with_details(json!({"operationKey": key, "state": "unknown", "cause": why}))
    };
    let save = SaveRecord::of_operation(record)
        .ok_or_else(|| manifest_invalid("no save payload".to_owned()))?;
    let manifest = save
        .checked_manifest()
        .map_err(|error| manifest_invalid(error.to_string()))?;
    let manager = surface.manager();
    let folder = manager.folder_adapter().await.ok_or_else(|| {
        StudioError::Conflict(WorkspaceError::folder_not_connected("recover").into())
    })?;
    if short_digest(&folder.scope()) != save.scope {
        return Err(StudioError::conflict(
            EDITOR_SAVE_FOLDER_MISMATCH,
            format!(
                "The save wrote to another folder ({}); open that folder, then recover.",
                save.folder
            ),
        )
        .with_details(json!({"operationKey": key, "state": "unknown", "folder": save.folder})));
    }
    let checks = read_back(folder.as_ref(), &manifest).await;
    if let Some(error) = mismatch_error(&checks, key) {
        return Err(StudioError::Conflict(error));
    }
    let mut completed = save.clone();
    completed.completed_paths = manifest.paths();
    completed.failed_path = None;
    completed.code = None;
    let resolution = SideEffectResolution::completed(completed.to_value());
    let recovery = surface
        .saves()
        .runner()
        .recover(key, Some(&record.fence()), None, |_| async move {
            Ok(resolution)
        })
        .await
        .map_err(|error| store_failure(&error))?;
    if let SideEffectRecovery::NotUnknown { state, .. } = recovery {
        return Ok(Recovery::of(key, state, false));
    }
    let cleaned = confirm_matches(manager, &checks).await;
    surface.publish_change().await;
    Ok(Recovery {
        confirmed_paths: Some(manifest.paths()),
        cleaned_paths: Some(cleaned),
        dirty_paths: Some(manager.status().await.dirty_paths),
        context: Some(surface.result_context().await),
        ..Recovery::of(key, OperationState::Completed, true)
    })
}

/// An operator's decision that the save did not happen: the record fails, so the next
/// identical save runs a new generation and writes.
async fn record_failed(
    saves: &EditorSaves,
    record: &OperationRecord,
) -> Result<Recovery, StudioError> {
    let resolution = match SaveRecord::of_operation(record) {
        Some(save) => {
            SideEffectResolution::failed(OPERATOR_FAILED_REASON).with_diagnostic(save.to_value())
        }
        None => SideEffectResolution::failed(OPERATOR_FAILED_REASON),
    };
    let recovery = saves
        .runner()
        .recover(&record.key, Some(&record.fence()), None, |_| async move {
            Ok(resolution)
        })
        .await
        .map_err(|error| store_failure(&error))?;
    let (state, recovered) = match recovery {
        SideEffectRecovery::NotUnknown { state, .. } => (state, false),
        SideEffectRecovery::Resolved { operation, .. } => (operation.state, true),
        SideEffectRecovery::Missing => (OperationState::Unknown, false),
    };
    Ok(Recovery::of(&record.key, state, recovered))
}

fn is_save_key(key: &str) -> bool {
    key.len() <= MAX_OPERATION_KEY_BYTES
        && ["editor.saveFile:", "editor.saveAll:"]
            .iter()
            .any(|prefix| key.starts_with(prefix))
}

fn invalid(message: &str) -> StudioError {
    StudioError::bad_request(EDITOR_SAVE_RECOVER_INVALID, message).with_details(json!({}))
}

fn store_failure(error: &DurableOperationError) -> StudioError {
    StudioError::Unavailable(WorkspaceError::durable_state_unavailable(&error.to_string()).into())
}

#[cfg(test)]
mod tests {
    use tool_durable_operations::{SideEffectOutcome, SideEffectRequest};

    use super::*;

    /// A store holding `unknown` unknown and `completed` completed editor save records, plus
    /// records of other keys on both sides of the editor key range.
    async fn store_with(unknown: usize, completed: usize) -> EditorSaves {
        let saves = EditorSaves::memory();
        let mut keys: Vec<(String, bool)> = (0..unknown)
            .map(|index| (format!("editor.saveAll:u{index:03}"), true))
            .collect();
        keys.extend((0..completed).map(|index| (format!("editor.saveFile:c{index:03}"), false)));
        keys.push(("editor.sav:before".to_owned(), true));
        keys.push(("workspace.saveAll:after".to_owned(), true));
        for (key, ambiguous) in keys {
            let outcome = if ambiguous {
                SideEffectOutcome::unknown("injected")
            } else {
                SideEffectOutcome::completed(json!({}))
            };
            saves
                .runner()
                .run(SideEffectRequest::new(key, "f"), move |_| async move {
                    Ok(outcome)
                })
                .await
                .unwrap();
        }
        saves
    }

    fn keys(listing: &SaveListing) -> Vec<&str> {
        listing
            .unknown
            .iter()
            .map(|save| save.key.as_str())
            .collect()
    }

    #[tokio::test]
    async fn the_listing_returns_only_unknown_editor_saves_up_to_its_bound() {
        let edge = store_with(MAX_LISTED_SAVES, 3).await;
        let listing = list_unknown(edge.store()).await.unwrap();
        assert_eq!(listing.unknown.len(), MAX_LISTED_SAVES);
        assert!(!listing.truncated);
        assert!(
            keys(&listing)
                .iter()
                .all(|key| key.starts_with("editor.saveAll:u"))
        );

        let over = store_with(MAX_LISTED_SAVES + 1, 0).await;
        let listing = list_unknown(over.store()).await.unwrap();
        assert_eq!(listing.unknown.len(), MAX_LISTED_SAVES);
        assert!(listing.truncated);
    }

    #[tokio::test]
    async fn the_listing_scans_a_bounded_number_of_pages() {
        let bounds = ListBounds {
            page_size: 2,
            max_pages: 3,
            max_listed: 10,
        };
        // Two unknown and three completed records: five editor keys plus the key after the
        // range fill exactly three pages of two.
        let edge = store_with(2, 3).await;
        let listing = list_within(edge.store(), bounds).await.unwrap();
        assert_eq!(
            keys(&listing),
            ["editor.saveAll:u000", "editor.saveAll:u001"]
        );
        assert!(!listing.truncated);

        let over = store_with(2, 4).await;
        let listing = list_within(over.store(), bounds).await.unwrap();
        assert_eq!(listing.unknown.len(), 2);
        assert!(listing.truncated, "a seventh record needs a fourth page");
    }

    #[test]
    fn only_editor_save_keys_can_be_recovered() {
        assert!(is_save_key("editor.saveFile:a:b:c"));
        assert!(is_save_key("editor.saveAll:a:b:c#2"));
        assert!(!is_save_key("workspace.saveAll:x"));
        assert!(!is_save_key("editor.saveAllx"));
        let long = format!("editor.saveAll:{}", "k".repeat(MAX_OPERATION_KEY_BYTES));
        assert!(!is_save_key(&long));
    }
}
