//! The content operations of the workspace model: create, write, patch, rename, delete and
//! revert, each a mutation of a cloned state that [`Workspace::apply`] commits as the next
//! revision.

use std::cmp::Ordering;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::paths::{check_new_name, compare_order, folder_clash, validate_path};
use super::{
    MAX_PATCH_REPLACEMENT_CHARS, MAX_PATCH_SEARCH_CHARS, Workspace, check_source_limit, has_html,
    repair_active_path,
};
use crate::file::{FileContent, WorkspaceFile, is_asset_path};
use crate::workspace::error::{WorkspaceError, WorkspaceResult};

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

impl Workspace {
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

    pub(in crate::workspace::model) fn create(
        &mut self,
        raw_path: &str,
        source: &str,
    ) -> WorkspaceResult<()> {
        let path = validate_path(raw_path)?;
        check_new_name(raw_path, &path)?;
        if is_asset_path(&path) {
            return Err(WorkspaceError::file_type_conflict(
                &path, "create", "asset", "text",
            ));
        }
        self.check_free(&path, None, "create")?;
        check_source_limit(&format!("Source of {path}"), source)?;
        self.insert_file(WorkspaceFile::text(path.clone(), source));
        self.content.active_path = path;
        Ok(())
    }

    /// Fails unless a new file can live at `path`: no file there, nor one whose path differs
    /// only in case (one file on case-insensitive disks; `moving` is the file being renamed,
    /// which may change its own case), none at a folder `path` would need (`a.js` for
    /// `a.js/b.js`), and no files inside a folder named `path` (`sub/x.js` for `sub`), since a
    /// folder cannot hold both on disk.
    fn check_free(&self, path: &str, moving: Option<&str>, operation: &str) -> WorkspaceResult<()> {
        if self.index_of(path).is_some() {
            return Err(WorkspaceError::file_exists(path, operation));
        }
        let same_but_case = self.content.files.iter().find(|file| {
            Some(file.path.as_str()) != moving && file.path.to_lowercase() == path.to_lowercase()
        });
        if let Some(file) = same_but_case {
            return Err(WorkspaceError::case_clash(path, &file.path, operation));
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

    pub(in crate::workspace::model) fn write(
        &mut self,
        raw_path: &str,
        source: &str,
    ) -> WorkspaceResult<()> {
        let path = validate_path(raw_path)?;
        let index = self.require_text(&path, "write")?;
        check_source_limit(&format!("Source of {path}"), source)?;
        self.content.files[index] = Arc::new(WorkspaceFile::text(path, source));
        Ok(())
    }

    pub(in crate::workspace::model) fn patch(
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

    pub(in crate::workspace::model) fn rename(
        &mut self,
        raw_from: &str,
        raw_to: &str,
    ) -> WorkspaceResult<()> {
        let from = validate_path(raw_from)?;
        let to = validate_path(raw_to)?;
        check_new_name(raw_to, &to)?;
        let index = self.require_index(&from, "rename")?;
        if from == to {
            return Err(WorkspaceError::rename_conflict(&from, &to, true));
        }
        if self.index_of(&to).is_some() {
            return Err(WorkspaceError::rename_conflict(&from, &to, false));
        }
        self.check_free(&to, Some(&from), "rename")?;
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

    pub(in crate::workspace::model) fn delete(&mut self, raw_path: &str) -> WorkspaceResult<()> {
        let path = validate_path(raw_path)?;
        let index = self.require_index(&path, "delete")?;
        let before = self.clone();
        self.content.files.remove(index);
        self.content.origins.remove(&path);
        self.ensure_structure(&before, &path, "delete")
    }

    pub(in crate::workspace::model) fn revert(&mut self, raw_path: &str) -> WorkspaceResult<()> {
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::file::Language;
    use crate::workspace::error::WorkspaceErrorCode as Code;
    use crate::workspace::model::{MAX_PATH_CHARS, MAX_TEXT_SOURCE_CHARS};

    pub(in crate::workspace::model) fn seed() -> Workspace {
        Workspace::new(vec![
            WorkspaceFile::text("app.js", "console.log('hi');"),
            WorkspaceFile::text("index.html", "<h1>Hi</h1>"),
            WorkspaceFile::text("styles.css", "body{}"),
            WorkspaceFile::asset("img/logo.png", vec![1, 2, 3]),
        ])
        .unwrap()
    }

    pub(in crate::workspace::model) fn create(path: &str, source: &str) -> Operation {
        Operation::Create {
            path: path.into(),
            source: source.into(),
        }
    }

    pub(in crate::workspace::model) fn write(path: &str, source: &str) -> Operation {
        Operation::Write {
            path: path.into(),
            source: source.into(),
        }
    }

    pub(in crate::workspace::model) fn patch(
        path: &str,
        search: &str,
        replace: &str,
        occurrence: Occurrence,
    ) -> Operation {
        Operation::Patch {
            path: path.into(),
            search: search.into(),
            replace: replace.into(),
            occurrence,
        }
    }

    pub(in crate::workspace::model) fn rename(from: &str, to: &str) -> Operation {
        Operation::Rename {
            from: from.into(),
            to: to.into(),
        }
    }

    pub(in crate::workspace::model) fn delete(path: &str) -> Operation {
        Operation::Delete { path: path.into() }
    }

    pub(in crate::workspace::model) fn revert(path: &str) -> Operation {
        Operation::Revert { path: path.into() }
    }

    fn code(result: WorkspaceResult<Workspace>) -> Code {
        result.expect_err("operation should fail").code
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
        for raw in ["sub/.", "sub"] {
            let error = ws.apply(&create(raw, "")).unwrap_err();
            assert_eq!(error.code, Code::WorkspaceFileConflict, "{raw}");
            assert_eq!(error.details["conflictingPath"], "sub/a.js");
        }
        // A name ending in a slash names a folder: refused before any clash is looked for.
        let error = ws.apply(&create("sub/", "")).unwrap_err();
        assert_eq!(error.details["reason"], "folder-name");
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

    /// The reason a refused new name gives (`details.reason`).
    fn reason(result: WorkspaceResult<Workspace>) -> String {
        let error = result.expect_err("the name should be refused");
        error.details["reason"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    #[test]
    fn new_names_that_would_not_survive_a_common_file_system_are_refused() {
        let ws = seed();
        assert_eq!(reason(ws.apply(&create("dir/", ""))), "folder-name");
        assert_eq!(
            reason(ws.apply(&create("x?y.js", ""))),
            "reserved-character"
        );
        assert_eq!(
            reason(ws.apply(&create("#hash.js", ""))),
            "reserved-character"
        );
        assert_eq!(
            reason(ws.apply(&create("notes:2.js", ""))),
            "reserved-character"
        );
        assert_eq!(reason(ws.apply(&create("CON", ""))), "reserved-name");
        assert_eq!(
            reason(ws.apply(&create("sub/nul.txt", ""))),
            "reserved-name"
        );
        assert_eq!(reason(ws.apply(&create("notes.", ""))), "trailing-dot");
        assert_eq!(reason(ws.apply(&create("dir./a.js", ""))), "trailing-dot");
        assert_eq!(reason(ws.apply(&create("Index.html", ""))), "case");
        assert_eq!(reason(ws.apply(&rename("app.js", "INDEX.html"))), "case");
        assert_eq!(
            reason(ws.apply(&rename("app.js", "lpt1.js"))),
            "reserved-name"
        );
        // Names close to the refused ones, and a file changing its own case, are fine.
        for fine in [
            "console.js",
            "com10.js",
            "a.b.js",
            "sub/index.html",
            "x-y_z.js",
        ] {
            assert!(ws.apply(&create(fine, "")).is_ok(), "{fine} is a fine name");
        }
        assert!(ws.apply(&rename("app.js", "App.js")).is_ok());
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
}
