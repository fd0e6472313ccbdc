//! The pure workspace model: a revisioned file set with a saved checkpoint.
//!
//! Every operation is a pure transition `&Workspace -> Result<Workspace, WorkspaceError>` that
//! either returns a new state with the next revision or a coded error, leaving `self` untouched.
//! Files are shared through `Arc`, so a state clone (history, preview publication) costs one
//! pointer per file. Dirty paths and pending deletions are *derived* from the checkpoint, so they
//! can never disagree with it.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::error::{WorkspaceError, WorkspaceResult};
use crate::file::{FileContent, Language, WorkspaceFile, is_asset_path};
use crate::path::normalize_workspace_path;

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

/// Which matches a patch replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Occurrence {
    /// Only the first match.
    First,
    /// Every non-overlapping match.
    All,
}

impl Occurrence {
    /// `first` or `all`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::First => "first",
            Self::All => "all",
        }
    }
}

/// A content mutation of the workspace. Paths are raw input; the model normalizes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operation {
    /// Create a new text file and make it active.
    Create {
        /// Raw path of the new file.
        path: String,
        /// Initial source.
        source: String,
    },
    /// Replace the source of an existing text file.
    Write {
        /// Raw path.
        path: String,
        /// New source.
        source: String,
    },
    /// Literal search/replace in a text file.
    Patch {
        /// Raw path.
        path: String,
        /// Literal text to find (1..=20,000 chars).
        search: String,
        /// Replacement (up to 20,000 chars).
        replace: String,
        /// First or all occurrences.
        occurrence: Occurrence,
    },
    /// Move a file to a new path of the same kind.
    Rename {
        /// Raw current path.
        from: String,
        /// Raw new path.
        to: String,
    },
    /// Remove a file; a saved one becomes a pending deletion.
    Delete {
        /// Raw path.
        path: String,
    },
    /// Restore a file to its checkpoint (or its renamed origin); drop an unsaved new file.
    Revert {
        /// Raw path.
        path: String,
    },
}

impl Operation {
    /// The operation name used in error details.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Create { .. } => "create",
            Self::Write { .. } => "write",
            Self::Patch { .. } => "patch",
            Self::Rename { .. } => "rename",
            Self::Delete { .. } => "delete",
            Self::Revert { .. } => "revert",
        }
    }

    /// The path a source-only edit touches (write and patch), used for history coalescing.
    pub fn edited_path(&self) -> Option<&str> {
        match self {
            Self::Write { path, .. } | Self::Patch { path, .. } => Some(path),
            _ => None,
        }
    }
}

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

    fn require_text(&self, path: &str, operation: &str) -> WorkspaceResult<usize> {
        let index = self.require_index(path, operation)?;
        if self.content.files[index].is_asset() {
            return Err(WorkspaceError::file_type_conflict(
                path, operation, "asset", "text",
            ));
        }
        Ok(index)
    }

    fn insert_file(&mut self, file: WorkspaceFile) {
        let key = file.path.clone();
        let at = self
            .content
            .files
            .partition_point(|existing| compare_order(&existing.path, &key) == Ordering::Less);
        self.content.files.insert(at, Arc::new(file));
    }

    fn create(&mut self, raw_path: &str, source: &str) -> WorkspaceResult<()> {
        let path = validate_path(raw_path)?;
        if is_asset_path(&path) {
            return Err(WorkspaceError::file_type_conflict(
                &path, "create", "asset", "text",
            ));
        }
        self.check_free(&path, "create")?;
        check_source_limit(&format!("Source of {path}"), source)?;
        self.insert_file(WorkspaceFile::text(path.clone(), source));
        self.content.active_path = path;
        Ok(())
    }

    /// Fails unless a new file can live at `path`: no file there, none at a folder `path`
    /// would need (`a.js` for `a.js/b.js`), and no files inside a folder named `path`
    /// (`sub/x.js` for `sub`), since a folder cannot hold both on disk.
    fn check_free(&self, path: &str, operation: &str) -> WorkspaceResult<()> {
        if self.index_of(path).is_some() {
            return Err(WorkspaceError::file_exists(path, operation));
        }
        let clash = self
            .content
            .files
            .iter()
            .find(|file| folder_clash(path, &file.path));
        match clash {
            Some(file) => Err(WorkspaceError::folder_clash(path, &file.path, operation)),
            None => Ok(()),
        }
    }

    fn write(&mut self, raw_path: &str, source: &str) -> WorkspaceResult<()> {
        let path = validate_path(raw_path)?;
        let index = self.require_text(&path, "write")?;
        check_source_limit(&format!("Source of {path}"), source)?;
        self.content.files[index] = Arc::new(WorkspaceFile::text(path, source));
        Ok(())
    }

    fn patch(
        &mut self,
        raw_path: &str,
        search: &str,
        replace: &str,
        occurrence: Occurrence,
    ) -> WorkspaceResult<()> {
        let path = validate_path(raw_path)?;
        let index = self.require_text(&path, "patch")?;
        let search_length = search.chars().count();
        if !(1..=MAX_PATCH_SEARCH_CHARS).contains(&search_length) {
            return Err(WorkspaceError::input_invalid(
                "patch",
                "search",
                1,
                MAX_PATCH_SEARCH_CHARS,
                search_length,
            ));
        }
        let replace_length = replace.chars().count();
        if replace_length > MAX_PATCH_REPLACEMENT_CHARS {
            return Err(WorkspaceError::input_invalid(
                "patch",
                "replace",
                0,
                MAX_PATCH_REPLACEMENT_CHARS,
                replace_length,
            ));
        }
        let source = self.content.files[index].source().unwrap_or_default();
        if !source.contains(search) {
            return Err(WorkspaceError::patch_not_found(
                &path,
                occurrence.as_str(),
                search_length,
            ));
        }
        let patched = match occurrence {
            Occurrence::First => source.replacen(search, replace, 1),
            Occurrence::All => source.replace(search, replace),
        };
        check_source_limit(&format!("Patched source of {path}"), &patched)?;
        self.content.files[index] = Arc::new(WorkspaceFile::text(path, patched));
        Ok(())
    }

    fn rename(&mut self, raw_from: &str, raw_to: &str) -> WorkspaceResult<()> {
        let from = validate_path(raw_from)?;
        let to = validate_path(raw_to)?;
        let index = self.require_index(&from, "rename")?;
        if from == to {
            return Err(WorkspaceError::rename_conflict(&from, &to, true));
        }
        if self.index_of(&to).is_some() {
            return Err(WorkspaceError::rename_conflict(&from, &to, false));
        }
        self.check_free(&to, "rename")?;
        let file = Arc::clone(&self.content.files[index]);
        let moved = match (&file.content, is_asset_path(&to)) {
            (FileContent::Text { source }, false) => {
                WorkspaceFile::text(to.clone(), source.clone())
            }
            (FileContent::Asset { bytes, .. }, true) => {
                WorkspaceFile::asset(to.clone(), bytes.clone())
            }
            (FileContent::Text { .. }, true) => {
                return Err(WorkspaceError::file_type_conflict(
                    &to, "rename", "asset", "text",
                ));
            }
            (FileContent::Asset { .. }, false) => {
                return Err(WorkspaceError::file_type_conflict(
                    &to, "rename", "text", "asset",
                ));
            }
        };
        let before = self.clone();
        self.content.files.remove(index);
        self.insert_file(moved);
        let origin = self
            .content
            .origins
            .remove(&from)
            .or_else(|| self.checkpoint.contains_key(&from).then(|| from.clone()));
        if let Some(origin) = origin.filter(|origin| *origin != to) {
            self.content.origins.insert(to.clone(), origin);
        }
        if self.content.active_path == from {
            self.content.active_path = to;
        }
        self.ensure_structure(&before, &from, "rename")
    }

    fn delete(&mut self, raw_path: &str) -> WorkspaceResult<()> {
        let path = validate_path(raw_path)?;
        let index = self.require_index(&path, "delete")?;
        let before = self.clone();
        self.content.files.remove(index);
        self.content.origins.remove(&path);
        self.ensure_structure(&before, &path, "delete")
    }

    fn revert(&mut self, raw_path: &str) -> WorkspaceResult<()> {
        let path = validate_path(raw_path)?;
        let before = self.clone();
        let origin = self
            .content
            .origins
            .get(&path)
            .cloned()
            .filter(|origin| self.checkpoint.contains_key(origin));
        if let Some(origin) = origin {
            let index = self.require_index(&path, "revert")?;
            self.content.files.remove(index);
            self.content.origins.remove(&path);
            self.restore_saved(&origin);
            if self.content.active_path == path {
                self.content.active_path = origin;
            }
        } else if self.checkpoint.contains_key(&path) {
            self.restore_saved(&path);
        } else {
            let index = self.require_index(&path, "revert")?;
            self.content.files.remove(index);
        }
        self.ensure_structure(&before, &path, "revert")
    }

    /// Puts the checkpoint entry of `path` back into the file set (replacing or re-adding).
    fn restore_saved(&mut self, path: &str) {
        let Some(saved) = self.checkpoint.get(path).cloned() else {
            return;
        };
        match self.index_of(path) {
            Some(index) => self.content.files[index] = saved,
            None => {
                let at = self.content.files.partition_point(|existing| {
                    compare_order(&existing.path, path) == Ordering::Less
                });
                self.content.files.insert(at, saved);
            }
        }
    }

    /// Structural invariants after a delete/rename/revert: a file remains, an HTML entry is not
    /// lost, and the active path names an existing file.
    fn ensure_structure(
        &mut self,
        before: &Workspace,
        path: &str,
        operation: &str,
    ) -> WorkspaceResult<()> {
        if self.content.files.is_empty() {
            return Err(WorkspaceError::workspace_empty(path));
        }
        if has_html(&before.content.files) && !has_html(&self.content.files) {
            return Err(WorkspaceError::preview_entry_required(path, operation));
        }
        repair_active_path(&mut self.content);
        Ok(())
    }
}

/// Whether two distinct normalized paths cannot both be files: one would have to be a folder
/// holding the other (`sub` and `sub/a.js`).
pub(crate) fn folder_clash(a: &str, b: &str) -> bool {
    let inside = |inner: &str, outer: &str| {
        inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.starts_with('/'))
    };
    inside(a, b) || inside(b, a)
}

/// Validates a raw path's length bound and normalizes it.
pub fn validate_path(raw: &str) -> WorkspaceResult<String> {
    let length = raw.chars().count();
    if length > MAX_PATH_CHARS {
        return Err(WorkspaceError::path_invalid_reason(
            raw,
            "too-long",
            &format!("workspace paths are at most {MAX_PATH_CHARS} characters"),
        ));
    }
    normalize_workspace_path(raw).map_err(|reason| WorkspaceError::path_invalid(raw, reason))
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

/// Canonical order: `index.html`, `styles.css`, `app.js` first, then case-insensitive path,
/// then exact path (so distinct paths never compare equal). Allocation-free.
pub fn compare_order(a: &str, b: &str) -> Ordering {
    fn rank(path: &str) -> u8 {
        match path {
            "index.html" => 0,
            "styles.css" => 1,
            "app.js" => 2,
            _ => 3,
        }
    }
    rank(a)
        .cmp(&rank(b))
        .then_with(|| {
            a.chars()
                .flat_map(char::to_lowercase)
                .cmp(b.chars().flat_map(char::to_lowercase))
        })
        .then_with(|| a.cmp(b))
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
    use super::*;
    use crate::workspace::error::WorkspaceErrorCode as Code;

    fn seed() -> Workspace {
        Workspace::new(vec![
            WorkspaceFile::text("app.js", "console.log('hi');"),
            WorkspaceFile::text("index.html", "<h1>Hi</h1>"),
            WorkspaceFile::text("styles.css", "body{}"),
            WorkspaceFile::asset("img/logo.png", vec![1, 2, 3]),
        ])
        .unwrap()
    }

    fn create(path: &str, source: &str) -> Operation {
        Operation::Create {
            path: path.into(),
            source: source.into(),
        }
    }

    fn write(path: &str, source: &str) -> Operation {
        Operation::Write {
            path: path.into(),
            source: source.into(),
        }
    }

    fn patch(path: &str, search: &str, replace: &str, occurrence: Occurrence) -> Operation {
        Operation::Patch {
            path: path.into(),
            search: search.into(),
            replace: replace.into(),
            occurrence,
        }
    }

    fn rename(from: &str, to: &str) -> Operation {
        Operation::Rename {
            from: from.into(),
            to: to.into(),
        }
    }

    fn delete(path: &str) -> Operation {
        Operation::Delete { path: path.into() }
    }

    fn revert(path: &str) -> Operation {
        Operation::Revert { path: path.into() }
    }

    fn code(result: WorkspaceResult<Workspace>) -> Code {
        result.expect_err("operation should fail").code
    }

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
    fn create_normalizes_activates_and_marks_dirty() {
        let ws = seed().apply(&create(r"src\./main.js", "x")).unwrap();
        assert_eq!(ws.revision(), 2);
        assert_eq!(ws.active_path(), "src/main.js");
        assert_eq!(
            ws.file("src/main.js").unwrap().language,
            Language::Javascript
        );
        assert_eq!(ws.dirty_paths(), ["src/main.js"]);
    }

    #[test]
    fn create_rejects_existing_binary_and_invalid_paths() {
        let ws = seed();
        assert_eq!(
            code(ws.apply(&create("index.html", ""))),
            Code::WorkspaceFileConflict
        );
        assert_eq!(
            code(ws.apply(&create("pic.png", ""))),
            Code::WorkspaceFileTypeConflict
        );
        assert_eq!(
            code(ws.apply(&create("a/../b.js", ""))),
            Code::WorkspacePathInvalid
        );
        assert_eq!(code(ws.apply(&create("", ""))), Code::WorkspacePathInvalid);
        assert_eq!(
            code(ws.apply(&create("a\0.js", ""))),
            Code::WorkspacePathInvalid
        );
    }

    #[test]
    fn a_file_and_a_folder_of_the_same_name_cannot_both_exist() {
        let ws = seed().apply(&create("sub/a.js", "")).unwrap();
        for raw in ["sub/.", "sub/", "sub"] {
            let error = ws.apply(&create(raw, "")).unwrap_err();
            assert_eq!(error.code, Code::WorkspaceFileConflict, "{raw}");
            assert_eq!(error.details["conflictingPath"], "sub/a.js");
        }
        let error = ws.apply(&create("sub/a.js/b.js", "")).unwrap_err();
        assert_eq!(error.details["conflictingPath"], "sub/a.js");
        let error = ws.apply(&rename("app.js", "sub")).unwrap_err();
        assert_eq!(error.code, Code::WorkspaceFileConflict);
        assert!(
            ws.apply(&create("subway.js", "")).is_ok(),
            "a shared prefix is fine"
        );
        assert!(ws.apply(&create("sub/b.js", "")).is_ok());
    }

    #[test]
    fn path_length_limit_at_edge_and_one_over() {
        let ws = seed();
        let at_limit = format!("{}.js", "a".repeat(MAX_PATH_CHARS - 3));
        assert!(ws.apply(&create(&at_limit, "")).is_ok());
        let over = format!("{}.js", "a".repeat(MAX_PATH_CHARS - 2));
        let error = ws.apply(&create(&over, "")).unwrap_err();
        assert_eq!(error.code, Code::WorkspacePathInvalid);
        assert_eq!(error.details["reason"], "too-long");
    }

    #[test]
    fn source_limit_at_edge_and_one_over_for_create_write_and_patch() {
        let ws = seed();
        let at_limit = "é".repeat(MAX_TEXT_SOURCE_CHARS);
        let over = "é".repeat(MAX_TEXT_SOURCE_CHARS + 1);
        assert!(ws.apply(&create("big.txt", &at_limit)).is_ok());
        assert_eq!(
            code(ws.apply(&create("big.txt", &over))),
            Code::WorkspaceSourceLimit
        );
        assert!(ws.apply(&write("app.js", &at_limit)).is_ok());
        let error = ws.apply(&write("app.js", &over)).unwrap_err();
        assert_eq!(error.code, Code::WorkspaceSourceLimit);
        assert!(
            !error.message.contains('é'),
            "the message never echoes the source"
        );
        let near = ws
            .apply(&write(
                "app.js",
                &format!("{}x", "a".repeat(MAX_TEXT_SOURCE_CHARS - 1)),
            ))
            .unwrap();
        assert_eq!(
            code(near.apply(&patch("app.js", "x", "yz", Occurrence::First))),
            Code::WorkspaceSourceLimit
        );
        assert!(
            near.apply(&patch("app.js", "x", "y", Occurrence::First))
                .is_ok()
        );
    }

    #[test]
    fn write_rejects_missing_and_asset_files() {
        let ws = seed();
        assert_eq!(
            code(ws.apply(&write("nope.js", ""))),
            Code::WorkspaceFileNotFound
        );
        let error = ws.apply(&write("img/logo.png", "")).unwrap_err();
        assert_eq!(error.code, Code::WorkspaceFileTypeConflict);
        assert_eq!(error.details["actualKind"], "asset");
    }

    #[test]
    fn patch_first_and_all_occurrences() {
        let ws = seed().apply(&write("app.js", "a-a-a")).unwrap();
        let first = ws
            .apply(&patch("app.js", "a", "b", Occurrence::First))
            .unwrap();
        assert_eq!(first.file("app.js").unwrap().source(), Some("b-a-a"));
        let all = ws
            .apply(&patch("app.js", "a", "b", Occurrence::All))
            .unwrap();
        assert_eq!(all.file("app.js").unwrap().source(), Some("b-b-b"));
    }

    #[test]
    fn patch_miss_reports_only_path_mode_and_length() {
        let error = seed()
            .apply(&patch("app.js", "secret-search", "x", Occurrence::All))
            .unwrap_err();
        assert_eq!(error.code, Code::WorkspacePatchNotFound);
        assert_eq!(
            error.details,
            serde_json::json!({"path": "app.js", "occurrence": "all", "searchLength": 13})
        );
        assert!(!error.message.contains("secret"));
        assert!(!error.message.contains("console"));
    }

    #[test]
    fn patch_bounds_at_edges() {
        let long_search = "s".repeat(MAX_PATCH_SEARCH_CHARS);
        let ws = seed().apply(&write("app.js", &long_search)).unwrap();
        assert!(
            ws.apply(&patch("app.js", &long_search, "", Occurrence::First))
                .is_ok()
        );
        let over_search = "s".repeat(MAX_PATCH_SEARCH_CHARS + 1);
        assert_eq!(
            code(ws.apply(&patch("app.js", &over_search, "", Occurrence::First))),
            Code::WorkspaceInputInvalid
        );
        assert_eq!(
            code(ws.apply(&patch("app.js", "", "x", Occurrence::First))),
            Code::WorkspaceInputInvalid
        );
        let replace = "r".repeat(MAX_PATCH_REPLACEMENT_CHARS);
        assert!(
            ws.apply(&patch("app.js", "s", &replace, Occurrence::First))
                .is_ok()
        );
        let over_replace = "r".repeat(MAX_PATCH_REPLACEMENT_CHARS + 1);
        assert_eq!(
            code(ws.apply(&patch("app.js", "s", &over_replace, Occurrence::First))),
            Code::WorkspaceInputInvalid
        );
    }

    #[test]
    fn rename_saved_file_leaves_pending_deletion_and_origin() {
        let ws = seed()
            .apply(&Operation::Rename {
                from: "app.js".into(),
                to: "src/app.js".into(),
            })
            .unwrap();
        assert_eq!(ws.pending_deletions(), ["app.js"]);
        assert_eq!(ws.dirty_paths(), ["src/app.js"]);
        assert_eq!(ws.origin_of("src/app.js"), Some("app.js"));
        let twice = ws.apply(&rename("src/app.js", "lib/app.js")).unwrap();
        assert_eq!(
            twice.origin_of("lib/app.js"),
            Some("app.js"),
            "origin survives a second rename"
        );
        let back = twice.apply(&rename("lib/app.js", "app.js")).unwrap();
        assert!(!back.is_dirty(), "renaming back to the saved path is clean");
        assert_eq!(back.origin_of("app.js"), None);
    }

    #[test]
    fn rename_unsaved_file_has_no_pending_deletion() {
        let ws = seed()
            .apply(&create("new.js", "1"))
            .unwrap()
            .apply(&rename("new.js", "other.js"))
            .unwrap();
        assert!(ws.pending_deletions().is_empty());
        assert_eq!(ws.origin_of("other.js"), None);
        assert_eq!(
            ws.active_path(),
            "other.js",
            "the active tab follows the rename"
        );
    }

    #[test]
    fn rename_conflicts_and_type_safety() {
        let ws = seed();
        let same = ws.apply(&rename("app.js", "./app.js")).unwrap_err();
        assert_eq!(same.code, Code::WorkspaceFileConflict);
        assert_eq!(same.message, "The new workspace path must be different.");
        assert_eq!(same.details["fromPath"], "app.js");
        assert_eq!(
            code(ws.apply(&rename("app.js", "styles.css"))),
            Code::WorkspaceFileConflict
        );
        assert_eq!(
            code(ws.apply(&rename("app.js", "app.png"))),
            Code::WorkspaceFileTypeConflict
        );
        assert_eq!(
            code(ws.apply(&rename("img/logo.png", "logo.txt"))),
            Code::WorkspaceFileTypeConflict
        );
        let moved = ws.apply(&rename("img/logo.png", "logo.webp")).unwrap();
        assert!(
            matches!(&moved.file("logo.webp").unwrap().content, FileContent::Asset { mime_type, .. } if mime_type == "image/webp")
        );
        assert_eq!(
            code(ws.apply(&rename("missing.js", "x.js"))),
            Code::WorkspaceFileNotFound
        );
    }

    #[test]
    fn cannot_rename_or_delete_away_the_last_html_entry() {
        let ws = seed();
        let error = ws.apply(&rename("index.html", "index.txt")).unwrap_err();
        assert_eq!(error.code, Code::WorkspacePreviewEntryRequired);
        assert_eq!(
            error.details,
            serde_json::json!({"operation": "rename", "path": "index.html"})
        );
        assert_eq!(
            code(ws.apply(&delete("index.html"))),
            Code::WorkspacePreviewEntryRequired
        );
        let moved = ws.apply(&rename("index.html", "home.htm")).unwrap();
        assert_eq!(moved.active_path(), "home.htm");
        let two = ws.apply(&create("about.html", "")).unwrap();
        assert!(two.apply(&delete("index.html")).is_ok());
    }

    #[test]
    fn delete_keeps_pending_deletion_and_repairs_active_path() {
        let ws = seed()
            .apply(&Operation::Write {
                path: "styles.css".into(),
                source: "x".into(),
            })
            .unwrap();
        let ws = ws.open("styles.css").unwrap();
        let deleted = ws.apply(&delete("styles.css")).unwrap();
        assert_eq!(deleted.pending_deletions(), ["styles.css"]);
        assert_eq!(deleted.active_path(), "index.html");
        assert!(deleted.dirty_paths().is_empty());
        let unsaved = seed()
            .apply(&create("tmp.txt", ""))
            .unwrap()
            .apply(&delete("tmp.txt"))
            .unwrap();
        assert!(
            !unsaved.is_dirty(),
            "deleting an unsaved file leaves no deletion marker"
        );
    }

    #[test]
    fn deleting_the_only_file_is_rejected() {
        let ws = Workspace::new(vec![WorkspaceFile::text("notes.txt", "")]).unwrap();
        let error = ws.apply(&delete("notes.txt")).unwrap_err();
        assert_eq!(error.code, Code::WorkspaceEmpty);
        assert_eq!(
            error.details,
            serde_json::json!({"operation": "delete", "path": "notes.txt"})
        );
    }

    #[test]
    fn revert_restores_checkpoint_origin_or_removes_new_file() {
        let ws = seed();
        let edited = ws.apply(&write("app.js", "changed")).unwrap();
        let reverted = edited.apply(&revert("app.js")).unwrap();
        assert_eq!(reverted.file("app.js"), ws.file("app.js"));
        assert!(!reverted.is_dirty());

        let renamed = ws
            .apply(&rename("app.js", "src/main.js"))
            .unwrap()
            .apply(&write("src/main.js", "x"))
            .unwrap();
        let restored = renamed.apply(&revert("src/main.js")).unwrap();
        assert!(restored.file("src/main.js").is_none());
        assert_eq!(restored.file("app.js"), ws.file("app.js"));
        assert_eq!(restored.active_path(), "index.html");
        assert!(!restored.is_dirty());

        let created = ws.apply(&create("new.md", "# x")).unwrap();
        let removed = created.apply(&revert("new.md")).unwrap();
        assert!(removed.file("new.md").is_none());
        assert_eq!(removed.active_path(), "index.html");

        let deleted = ws.apply(&delete("styles.css")).unwrap();
        let undeleted = deleted.apply(&revert("styles.css")).unwrap();
        assert!(
            !undeleted.is_dirty(),
            "reverting a pending deletion restores the saved file"
        );
        assert_eq!(
            code(ws.apply(&revert("ghost.js"))),
            Code::WorkspaceFileNotFound
        );
    }

    #[test]
    fn revert_of_only_unsaved_html_keeps_the_entry() {
        let ws = Workspace::new(vec![WorkspaceFile::text("a.css", "")]).unwrap();
        let with_html = ws.apply(&create("page.html", "")).unwrap();
        assert_eq!(
            code(with_html.apply(&revert("page.html"))),
            Code::WorkspacePreviewEntryRequired
        );
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
