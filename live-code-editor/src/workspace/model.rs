//! The pure workspace model: a revisioned file set with a saved checkpoint.
//!
//! Every operation is a pure transition `&Workspace -> Result<Workspace, WorkspaceError>` that
//! either returns a new state with the next revision or a coded error, leaving `self` untouched.
//! Files are shared through `Arc`, so a state clone (history, preview publication) costs one
//! pointer per file. Dirty paths and pending deletions are *derived* from the checkpoint, so they
//! can never disagree with it.

mod operation;
mod paths;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::error::{WorkspaceError, WorkspaceResult};
use crate::file::{Language, WorkspaceFile};

pub use operation::{Occurrence, Operation};
pub(crate) use paths::folder_clash;
pub use paths::{compare_order, validate_path};

/// One source limit for every text mutation (create, write, patch result, history restore).
/// Counted in Unicode scalar values (the reference counts UTF-16 units).
pub const MAX_TEXT_SOURCE_CHARS: usize = 80_000;
/// Longest accepted raw workspace path, in characters.
pub const MAX_PATH_CHARS: usize = 160;
/// Longest patch search text, in characters (the shortest is 1).
pub const MAX_PATCH_SEARCH_CHARS: usize = 20_000;
/// Longest patch replacement text, in characters.
pub const MAX_PATCH_REPLACEMENT_CHARS: usize = 20_000;
/// The revision of a fresh workspace.
pub const INITIAL_REVISION: u64 = 1;
/// Active path reported when a workspace has no file to select.
pub const DEFAULT_ACTIVE_PATH: &str = "index.html";

/// The part of a workspace that history restores: files, origins and the active path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceContent {
    files: Vec<Arc<WorkspaceFile>>,
    origins: BTreeMap<String, String>,
    active_path: String,
}

/// The persisted form of a workspace (repository records, hydration input).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredWorkspace {
    /// Revision when stored.
    pub revision: u64,
    /// Active editor path (repaired on hydration when stale).
    pub active_path: String,
    /// Current files.
    pub files: Vec<WorkspaceFile>,
    /// Saved checkpoint: the content last written to the folder or marked clean.
    pub checkpoint: Vec<WorkspaceFile>,
    /// Renamed file -> its saved origin path.
    #[serde(default)]
    pub origins: BTreeMap<String, String>,
    /// Deletion markers (informational; recomputed from the checkpoint on hydration).
    #[serde(default)]
    pub pending_deletions: Vec<String>,
    /// The [`scope`](super::folder::FolderAdapter::scope) of the folder the checkpoint was
    /// imported from (`None`: the seed or an upload). Set by the manager, which uses it to
    /// resume unsaved work against the same folder after a restart; never in tool payloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder_scope: Option<String>,
}

/// A revisioned workspace. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    revision: u64,
    content: WorkspaceContent,
    /// Shared copy-on-write: most transitions leave the checkpoint alone.
    checkpoint: Arc<BTreeMap<String, Arc<WorkspaceFile>>>,
}

impl Workspace {
    /// A clean workspace at [`INITIAL_REVISION`] whose checkpoint is `files`.
    /// Paths are normalized; an empty list, an invalid path or a duplicate path is an error.
    pub fn new(files: Vec<WorkspaceFile>) -> WorkspaceResult<Self> {
        let files = canonical_files(files, "import")?;
        if files.is_empty() {
            return Err(WorkspaceError::no_supported_files("workspace", 0));
        }
        let checkpoint = Arc::new(
            files
                .iter()
                .map(|file| (file.path.clone(), Arc::clone(file)))
                .collect(),
        );
        let active_path = select_active_path(&files);
        Ok(Self {
            revision: INITIAL_REVISION,
            content: WorkspaceContent {
                files,
                origins: BTreeMap::new(),
                active_path,
            },
            checkpoint,
        })
    }

    /// Rebuilds a stored workspace, repairing what a partial write can leave behind: a stale
    /// active path selects the preferred entry, deletion markers for present files are dropped
    /// (pending deletions are recomputed from the checkpoint), and origins of missing files go.
    pub fn restore(stored: StoredWorkspace) -> WorkspaceResult<Self> {
        let files = canonical_files(stored.files, "hydrate")?;
        if files.is_empty() {
            return Err(WorkspaceError::active_file_not_found(
                &stored.active_path,
                "hydrate",
            ));
        }
        let checkpoint = Arc::new(
            canonical_files(stored.checkpoint, "hydrate")?
                .into_iter()
                .map(|file| (file.path.clone(), file))
                .collect(),
        );
        let mut content = WorkspaceContent {
            files,
            origins: stored.origins,
            active_path: stored.active_path,
        };
        let present: BTreeSet<String> =
            content.files.iter().map(|file| file.path.clone()).collect();
        content
            .origins
            .retain(|path, origin| present.contains(path) && path != origin);
        repair_active_path(&mut content);
        Ok(Self {
            revision: stored.revision.max(INITIAL_REVISION),
            content,
            checkpoint,
        })
    }

    /// The persisted form of this state.
    pub fn to_stored(&self) -> StoredWorkspace {
        StoredWorkspace {
            revision: self.revision,
            active_path: self.content.active_path.clone(),
            files: self.files().cloned().collect(),
            checkpoint: self
                .checkpoint
                .values()
                .map(|file| (**file).clone())
                .collect(),
            origins: self.content.origins.clone(),
            pending_deletions: self.pending_deletions(),
            folder_scope: None,
        }
    }

    /// The monotonic revision.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Files in canonical order (`index.html`, `styles.css`, `app.js`, then by path).
    pub fn files(&self) -> impl ExactSizeIterator<Item = &WorkspaceFile> + '_ {
        self.content.files.iter().map(|file| &**file)
    }

    /// The shared file handles, in canonical order.
    pub fn shared_files(&self) -> &[Arc<WorkspaceFile>] {
        &self.content.files
    }

    /// The file at a normalized path.
    pub fn file(&self, path: &str) -> Option<&WorkspaceFile> {
        self.index_of(path).map(|index| &*self.content.files[index])
    }

    /// The saved checkpoint entry of a path.
    pub fn saved_file(&self, path: &str) -> Option<&WorkspaceFile> {
        self.checkpoint.get(path).map(|file| &**file)
    }

    /// The shared saved checkpoint, keyed by path.
    pub fn checkpoint(&self) -> &BTreeMap<String, Arc<WorkspaceFile>> {
        &self.checkpoint
    }

    /// The active editor path.
    pub fn active_path(&self) -> &str {
        &self.content.active_path
    }

    /// The saved origin of a renamed file.
    pub fn origin_of(&self, path: &str) -> Option<&str> {
        self.content.origins.get(path).map(String::as_str)
    }

    /// All renamed-file origins.
    pub fn origins(&self) -> &BTreeMap<String, String> {
        &self.content.origins
    }

    /// Paths whose content differs from the checkpoint or that were never saved, sorted.
    pub fn dirty_paths(&self) -> Vec<String> {
        let mut dirty: Vec<String> = self
            .content
            .files
            .iter()
            .filter(|file| self.differs_from_checkpoint(file))
            .map(|file| file.path.clone())
            .collect();
        dirty.sort();
        dirty
    }

    /// Whether one path is dirty.
    pub fn is_path_dirty(&self, path: &str) -> bool {
        self.index_of(path)
            .is_some_and(|index| self.differs_from_checkpoint(&self.content.files[index]))
    }

    /// Shared (unchanged) files short-cut the content comparison.
    fn differs_from_checkpoint(&self, file: &Arc<WorkspaceFile>) -> bool {
        self.checkpoint
            .get(&file.path)
            .is_none_or(|saved| !Arc::ptr_eq(saved, file) && saved.content != file.content)
    }

    /// Saved paths that no longer exist: the folder deletions a save must perform, sorted.
    pub fn pending_deletions(&self) -> Vec<String> {
        self.checkpoint
            .keys()
            .filter(|path| self.index_of(path).is_none())
            .cloned()
            .collect()
    }

    /// Whether anything differs from the checkpoint (dirty files or pending deletions).
    pub fn is_dirty(&self) -> bool {
        !self.dirty_paths().is_empty() || !self.pending_deletions().is_empty()
    }

    /// The restorable content (for history).
    pub fn content(&self) -> &WorkspaceContent {
        &self.content
    }

    /// Applies one mutation, returning the next state (revision + 1) or a coded error.
    pub fn apply(&self, operation: &Operation) -> WorkspaceResult<Workspace> {
        let mut next = self.clone();
        match operation {
            Operation::Create { path, source } => next.create(path, source)?,
            Operation::Write { path, source } => next.write(path, source)?,
            Operation::Patch {
                path,
                search,
                replace,
                occurrence,
            } => {
                next.patch(path, search, replace, *occurrence)?;
            }
            Operation::Rename { from, to } => next.rename(from, to)?,
            Operation::Delete { path } => next.delete(path)?,
            Operation::Revert { path } => next.revert(path)?,
        }
        next.revision = self.revision + 1;
        Ok(next)
    }

    /// Selects an existing file as active, keeping the revision (selection is not content).
    pub fn open(&self, raw_path: &str) -> WorkspaceResult<Workspace> {
        let path = validate_path(raw_path)?;
        self.require_index(&path, "open")?;
        let mut next = self.clone();
        next.content.active_path = path;
        Ok(next)
    }

    /// Replaces the content with a history entry (revision + 1). Source edits keep the active
    /// tab; when it no longer exists the entry's path (or the preferred entry) is selected.
    pub fn restore_content(&self, content: &WorkspaceContent) -> WorkspaceResult<Workspace> {
        for file in &content.files {
            let unchanged = self
                .index_of(&file.path)
                .is_some_and(|index| Arc::ptr_eq(&self.content.files[index], file));
            if let (false, Some(source)) = (unchanged, file.source()) {
                check_source_limit(&format!("Restored source of {}", file.path), source)?;
            }
        }
        let active = self.content.active_path.clone();
        let mut next = self.clone();
        next.content = content.clone();
        if next.index_of(&active).is_some() {
            next.content.active_path = active;
        }
        repair_active_path(&mut next.content);
        next.revision = self.revision + 1;
        Ok(next)
    }

    /// A new clean workspace replacing this one (folder import, reload, reset): revision + 1,
    /// checkpoint = the new files, no origins.
    pub fn replaced_by(&self, files: Vec<WorkspaceFile>) -> WorkspaceResult<Workspace> {
        let mut next = Workspace::new(files)?;
        next.revision = self.revision + 1;
        Ok(next)
    }

    /// The same state at `revision` (hydration); a revision lower than the current one is ignored,
    /// so revisions never go back.
    pub fn with_revision(mut self, revision: u64) -> Workspace {
        self.revision = self.revision.max(revision);
        self
    }

    /// Marks one path saved with the content that was written (`Some`) or deleted (`None`).
    /// Keeps the revision: the checkpoint follows the folder, and an edit made while the write
    /// was in flight stays dirty because the current content differs from what was written.
    pub fn mark_path_saved(&self, path: &str, written: Option<Arc<WorkspaceFile>>) -> Workspace {
        let mut next = self.clone();
        match written {
            Some(file) => {
                Arc::make_mut(&mut next.checkpoint).insert(path.to_owned(), file);
            }
            None => {
                Arc::make_mut(&mut next.checkpoint).remove(path);
            }
        }
        next.content.origins.remove(path);
        next.content
            .origins
            .retain(|_, origin| origin != path || next.checkpoint.contains_key(path));
        next
    }

    /// Marks the whole current state as the checkpoint (keeps the revision).
    pub fn mark_all_saved(&self) -> Workspace {
        let mut next = self.clone();
        next.checkpoint = Arc::new(
            next.content
                .files
                .iter()
                .map(|file| (file.path.clone(), Arc::clone(file)))
                .collect(),
        );
        next.content.origins.clear();
        next
    }

    fn index_of(&self, path: &str) -> Option<usize> {
        self.content
            .files
            .binary_search_by(|file| compare_order(&file.path, path))
            .ok()
    }

    fn require_index(&self, path: &str, operation: &str) -> WorkspaceResult<usize> {
        self.index_of(path)
            .ok_or_else(|| WorkspaceError::file_not_found(path, operation))
    }
}

/// Fails with `WORKSPACE_SOURCE_LIMIT` when `source` exceeds [`MAX_TEXT_SOURCE_CHARS`].
pub fn check_source_limit(label: &str, source: &str) -> WorkspaceResult<()> {
    // Byte length bounds the char count from above: skip the count for short sources.
    if source.len() > MAX_TEXT_SOURCE_CHARS && source.chars().count() > MAX_TEXT_SOURCE_CHARS {
        return Err(WorkspaceError::source_limit(label, MAX_TEXT_SOURCE_CHARS));
    }
    Ok(())
}

/// The preferred active path: `index.html`, first HTML, first text file, first file, or
/// [`DEFAULT_ACTIVE_PATH`] when there is none.
pub fn select_active_path(files: &[Arc<WorkspaceFile>]) -> String {
    let preferred = files
        .iter()
        .find(|file| file.path == "index.html")
        .or_else(|| files.iter().find(|file| is_html(file)))
        .or_else(|| files.iter().find(|file| !file.is_asset()))
        .or_else(|| files.first());
    preferred.map_or_else(|| DEFAULT_ACTIVE_PATH.to_owned(), |file| file.path.clone())
}

fn is_html(file: &WorkspaceFile) -> bool {
    !file.is_asset() && file.language == Language::Html
}

fn has_html(files: &[Arc<WorkspaceFile>]) -> bool {
    files.iter().any(|file| is_html(file))
}

fn repair_active_path(content: &mut WorkspaceContent) {
    let active_exists = content
        .files
        .iter()
        .any(|file| file.path == content.active_path);
    if !active_exists {
        content.active_path = select_active_path(&content.files);
    }
}

/// Normalizes paths, rejects duplicates, and sorts into canonical order.
fn canonical_files(
    files: Vec<WorkspaceFile>,
    operation: &str,
) -> WorkspaceResult<Vec<Arc<WorkspaceFile>>> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(files.len());
    for mut file in files {
        let path = validate_path(&file.path)?;
        if !seen.insert(path.clone()) {
            return Err(WorkspaceError::file_exists(&path, operation));
        }
        if path != file.path {
            file.path = path;
        }
        out.push(Arc::new(file));
    }
    out.sort_by(|a, b| compare_order(&a.path, &b.path));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::operation::tests::{delete, seed, write};
    use super::*;
    use crate::file::is_asset_path;
    use crate::workspace::error::WorkspaceErrorCode as Code;

    #[test]
    fn new_workspace_is_clean_sorted_and_selects_index() {
        let ws = seed();
        assert_eq!(ws.revision(), INITIAL_REVISION);
        let paths: Vec<_> = ws.files().map(|file| file.path.as_str()).collect();
        assert_eq!(
            paths,
            ["index.html", "styles.css", "app.js", "img/logo.png"]
        );
        assert_eq!(ws.active_path(), "index.html");
        assert!(!ws.is_dirty());
    }

    #[test]
    fn new_rejects_empty_duplicate_and_invalid_paths() {
        assert_eq!(
            Workspace::new(vec![]).unwrap_err().code,
            Code::WorkspaceNoSupportedFiles
        );
        let duplicate = vec![
            WorkspaceFile::text("a.txt", "1"),
            WorkspaceFile::text("./a.txt", "2"),
        ];
        assert_eq!(
            Workspace::new(duplicate).unwrap_err().code,
            Code::WorkspaceFileConflict
        );
        let invalid = vec![WorkspaceFile::text("../a.txt", "1")];
        assert_eq!(
            Workspace::new(invalid).unwrap_err().code,
            Code::WorkspacePathInvalid
        );
    }

    #[test]
    fn active_path_selection_order() {
        let files = |paths: &[&str]| -> Vec<Arc<WorkspaceFile>> {
            paths
                .iter()
                .map(|p| {
                    Arc::new(if is_asset_path(p) {
                        WorkspaceFile::asset(*p, vec![])
                    } else {
                        WorkspaceFile::text(*p, "")
                    })
                })
                .collect()
        };
        assert_eq!(
            select_active_path(&files(&["a.css", "b/page.html", "index.html"])),
            "index.html"
        );
        assert_eq!(
            select_active_path(&files(&["a.css", "b/page.html"])),
            "b/page.html"
        );
        assert_eq!(select_active_path(&files(&["a.png", "a.css"])), "a.css");
        assert_eq!(select_active_path(&files(&["a.png"])), "a.png");
        assert_eq!(select_active_path(&[]), DEFAULT_ACTIVE_PATH);
    }

    #[test]
    fn restore_repairs_active_path_and_stale_markers() {
        let ws = seed().apply(&delete("styles.css")).unwrap();
        let mut stored = ws.to_stored();
        assert_eq!(stored.pending_deletions, ["styles.css"]);
        stored.active_path = "gone.js".into();
        stored.pending_deletions.push("app.js".into());
        stored.origins.insert("ghost.js".into(), "app.js".into());
        let restored = Workspace::restore(stored).unwrap();
        assert_eq!(restored.active_path(), "index.html");
        assert_eq!(
            restored.pending_deletions(),
            ["styles.css"],
            "marker for a present file dropped"
        );
        assert!(restored.origins().is_empty());
        assert_eq!(restored.revision(), ws.revision());
        let json = serde_json::to_string(&restored.to_stored()).unwrap();
        let round = Workspace::restore(serde_json::from_str(&json).unwrap()).unwrap();
        assert_eq!(round, restored);
    }

    #[test]
    fn restore_without_files_is_an_active_file_error() {
        let stored = StoredWorkspace {
            revision: 4,
            active_path: "x.html".into(),
            files: vec![],
            checkpoint: vec![],
            origins: BTreeMap::new(),
            pending_deletions: vec![],
            folder_scope: None,
        };
        assert_eq!(
            Workspace::restore(stored).unwrap_err().code,
            Code::WorkspaceActiveFileNotFound
        );
    }

    #[test]
    fn marks_follow_written_content() {
        let ws = seed().apply(&write("app.js", "v2")).unwrap();
        let written = Arc::clone(&ws.shared_files()[ws.index_of("app.js").unwrap()]);
        let newer = ws.apply(&write("app.js", "v3")).unwrap();
        let marked = newer.mark_path_saved("app.js", Some(written));
        assert_eq!(
            marked.dirty_paths(),
            ["app.js"],
            "an edit made during the write stays dirty"
        );
        assert_eq!(marked.revision(), newer.revision());
        assert!(!marked.mark_all_saved().is_dirty());
    }

    #[test]
    fn open_selects_without_changing_revision() {
        let ws = seed();
        let opened = ws.open("styles.css").unwrap();
        assert_eq!(opened.active_path(), "styles.css");
        assert_eq!(opened.revision(), ws.revision());
        assert_eq!(
            ws.open("none.css").unwrap_err().code,
            Code::WorkspaceFileNotFound
        );
    }
}
