//! Diffs of whole workspaces: which files a change adds, deletes, renames or modifies, each
//! as a [`TextDiff`] or, for assets and oversized files, a summary.

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::{MAX_DIFF_FILE_BYTES, TextDiff};
use crate::file::{FileContent, WorkspaceFile};
use crate::workspace::Workspace;

/// What happens to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileChange {
    /// A new file.
    Added,
    /// The file goes away.
    Deleted,
    /// The file moves (its content may change too).
    Renamed,
    /// The file's content changes.
    Modified,
}

impl FileChange {
    /// `added`, `deleted`, `renamed` or `modified` (the wire name).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Deleted => "deleted",
            Self::Renamed => "renamed",
            Self::Modified => "modified",
        }
    }
}

/// How a file's change is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileDiffKind {
    /// Line hunks.
    Text,
    /// A binary asset: sizes only.
    Binary,
    /// A text over [`MAX_DIFF_FILE_BYTES`]: sizes only.
    Oversized,
}

/// One file's part of a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FileDiff {
    /// The file's path after the change (before it, for a deletion).
    pub path: String,
    /// The path before a rename.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// Added, deleted, renamed or modified.
    pub change: FileChange,
    /// Text hunks or a summary.
    pub kind: FileDiffKind,
    /// Size before, in bytes (0 when added).
    pub old_bytes: usize,
    /// Size after, in bytes (0 when deleted).
    pub new_bytes: usize,
    /// Lines added (text only).
    pub additions: usize,
    /// Lines removed (text only).
    pub deletions: usize,
    /// The hunks (text only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<TextDiff>,
}

impl FileDiff {
    /// The change from `before` to `after` (either may be absent, not both); `None` when
    /// nothing changes.
    pub fn between(before: Option<&WorkspaceFile>, after: Option<&WorkspaceFile>) -> Option<Self> {
        let (path, old_path, change) = match (before, after) {
            (None, None) => return None,
            (None, Some(after)) => (after.path.clone(), None, FileChange::Added),
            (Some(before), None) => (before.path.clone(), None, FileChange::Deleted),
            (Some(before), Some(after)) if before.path != after.path => (
                after.path.clone(),
                Some(before.path.clone()),
                FileChange::Renamed,
            ),
            (Some(before), Some(after)) if before.content == after.content => return None,
            (Some(_), Some(after)) => (after.path.clone(), None, FileChange::Modified),
        };
        let old_bytes = before.map_or(0, byte_len);
        let new_bytes = after.map_or(0, byte_len);
        let sources = (
            before.map(WorkspaceFile::source),
            after.map(WorkspaceFile::source),
        );
        let kind = match sources {
            (Some(None), _) | (_, Some(None)) => FileDiffKind::Binary,
            _ if old_bytes.max(new_bytes) > MAX_DIFF_FILE_BYTES => FileDiffKind::Oversized,
            _ => FileDiffKind::Text,
        };
        let text = (kind == FileDiffKind::Text).then(|| {
            let old = sources.0.flatten().unwrap_or("");
            let new = sources.1.flatten().unwrap_or("");
            TextDiff::new(old, new)
        });
        Some(Self {
            path,
            old_path,
            change,
            kind,
            old_bytes,
            new_bytes,
            additions: text.as_ref().map_or(0, |text| text.additions),
            deletions: text.as_ref().map_or(0, |text| text.deletions),
            text,
        })
    }
}

/// Every file a change touches, in the after-state's path order (deletions last), with
/// totals and a digest that names exactly this change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WorkspaceDiff {
    /// The touched files.
    pub files: Vec<FileDiff>,
    /// Lines added, all files.
    pub additions: usize,
    /// Lines removed, all files.
    pub deletions: usize,
    /// SHA-256 (hex) over every touched file's paths and both contents: equal digests mean the
    /// same change of the same texts, so a decision made on one diff can be checked against a
    /// recomputed one.
    pub digest: String,
}

impl WorkspaceDiff {
    /// The change from `before` to `after`. A file that disappears while a file with the same
    /// content appears counts as renamed.
    pub fn between(before: &Workspace, after: &Workspace) -> Self {
        let mut files = Vec::new();
        let mut gone: Vec<&WorkspaceFile> = before
            .files()
            .filter(|file| after.file(&file.path).is_none())
            .collect();
        for file in after.files() {
            let previous = before.file(&file.path).or_else(|| {
                let moved = gone.iter().position(|old| old.content == file.content)?;
                Some(gone.remove(moved))
            });
            files.extend(FileDiff::between(previous, Some(file)));
        }
        files.extend(
            gone.into_iter()
                .filter_map(|old| FileDiff::between(Some(old), None)),
        );
        Self::of(files, |path| before.file(path), |path| after.file(path))
    }

    /// The unsaved changes of `workspace`: its files against its checkpoint (the last import
    /// or save), a renamed file against the saved file it came from.
    pub fn unsaved(workspace: &Workspace) -> Self {
        let checkpoint = workspace.checkpoint();
        let saved_of = |path: &str| {
            let origin = workspace.origin_of(path).unwrap_or(path);
            checkpoint.get(origin).map(AsRef::as_ref)
        };
        let mut files: Vec<FileDiff> = workspace
            .files()
            .filter_map(|file| FileDiff::between(saved_of(&file.path), Some(file)))
            .collect();
        let kept: Vec<&str> = workspace
            .files()
            .map(|file| workspace.origin_of(&file.path).unwrap_or(&file.path))
            .collect();
        files.extend(
            checkpoint
                .values()
                .filter(|saved| !kept.contains(&saved.path.as_str()))
                .filter_map(|saved| FileDiff::between(Some(saved), None)),
        );
        Self::of(
            files,
            |path| checkpoint.get(path).map(AsRef::as_ref),
            |path| workspace.file(path),
        )
    }

    fn of<'a>(
        files: Vec<FileDiff>,
        before: impl Fn(&str) -> Option<&'a WorkspaceFile>,
        after: impl Fn(&str) -> Option<&'a WorkspaceFile>,
    ) -> Self {
        let mut hasher = Sha256::new();
        for file in &files {
            let old_path = file.old_path.as_deref().unwrap_or(&file.path);
            hash_side(&mut hasher, old_path, before(old_path));
            hash_side(&mut hasher, &file.path, after(&file.path));
        }
        Self {
            additions: files.iter().map(|file| file.additions).sum(),
            deletions: files.iter().map(|file| file.deletions).sum(),
            digest: hex::encode(hasher.finalize()),
            files,
        }
    }
}

/// One side of a file in the digest: its path and its content's hash (or an absence mark).
fn hash_side(hasher: &mut Sha256, path: &str, file: Option<&WorkspaceFile>) {
    hasher.update(path.as_bytes());
    hasher.update([0]);
    match file {
        Some(found) => hasher.update(Sha256::digest(content_bytes(found))),
        None => hasher.update([0xff]),
    }
}

fn content_bytes(file: &WorkspaceFile) -> &[u8] {
    match &file.content {
        FileContent::Text { source } => source.as_bytes(),
        FileContent::Asset { bytes, .. } => bytes,
    }
}

fn byte_len(file: &WorkspaceFile) -> usize {
    content_bytes(file).len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::model::Operation;

    fn seed() -> Workspace {
        Workspace::new(vec![
            WorkspaceFile::text("index.html", "<h1>Hi</h1>\n"),
            WorkspaceFile::text("styles.css", "h1 { color: red; }\n"),
        ])
        .unwrap()
    }

    #[test]
    fn a_write_is_one_modified_file() {
        let before = seed();
        let after = before
            .apply(&Operation::Write {
                path: "styles.css".into(),
                source: "h1 { color: blue; }\n".into(),
            })
            .unwrap();
        let diff = WorkspaceDiff::between(&before, &after);
        assert_eq!(diff.files.len(), 1);
        assert_eq!(diff.files[0].change, FileChange::Modified);
        assert_eq!((diff.additions, diff.deletions), (1, 1));
        assert_eq!(diff.digest, WorkspaceDiff::between(&before, &after).digest);
        assert_ne!(diff.digest, WorkspaceDiff::between(&before, &before).digest);
    }

    #[test]
    fn renames_creations_and_deletions_are_named() {
        let before = seed();
        let renamed = before
            .apply(&Operation::Rename {
                from: "styles.css".into(),
                to: "main.css".into(),
            })
            .unwrap();
        let diff = WorkspaceDiff::between(&before, &renamed);
        assert_eq!(diff.files[0].change, FileChange::Renamed);
        assert_eq!(diff.files[0].old_path.as_deref(), Some("styles.css"));
        assert_eq!((diff.additions, diff.deletions), (0, 0));
        let created = before
            .apply(&Operation::Create {
                path: "app.js".into(),
                source: "let a = 1;\n".into(),
            })
            .unwrap();
        let diff = WorkspaceDiff::between(&before, &created);
        assert_eq!(
            (diff.files[0].change, diff.additions),
            (FileChange::Added, 1)
        );
        let deleted = created
            .apply(&Operation::Delete {
                path: "app.js".into(),
            })
            .unwrap();
        let diff = WorkspaceDiff::between(&created, &deleted);
        assert_eq!(
            (diff.files[0].change, diff.deletions),
            (FileChange::Deleted, 1)
        );
    }

    #[test]
    fn unsaved_changes_are_diffed_against_the_checkpoint() {
        let saved = seed();
        assert!(WorkspaceDiff::unsaved(&saved).files.is_empty());
        let edited = saved
            .apply(&Operation::Write {
                path: "styles.css".into(),
                source: "h1 { color: blue; }\n".into(),
            })
            .unwrap()
            .apply(&Operation::Rename {
                from: "styles.css".into(),
                to: "main.css".into(),
            })
            .unwrap()
            .apply(&Operation::Create {
                path: "app.js".into(),
                source: "go();\n".into(),
            })
            .unwrap();
        let diff = WorkspaceDiff::unsaved(&edited);
        let changes: Vec<(&str, FileChange)> = diff
            .files
            .iter()
            .map(|file| (file.path.as_str(), file.change))
            .collect();
        assert_eq!(
            changes,
            [
                ("app.js", FileChange::Added),
                ("main.css", FileChange::Renamed)
            ]
        );
        assert_eq!(diff.files[1].old_path.as_deref(), Some("styles.css"));
        assert_eq!((diff.additions, diff.deletions), (2, 1));
    }

    #[test]
    fn assets_and_oversized_texts_are_summaries() {
        let asset = WorkspaceFile {
            path: "logo.png".into(),
            language: crate::file::Language::Text,
            content: FileContent::Asset {
                bytes: vec![1, 2, 3],
                mime_type: "image/png".into(),
            },
        };
        let diff = FileDiff::between(None, Some(&asset)).unwrap();
        assert_eq!(
            (diff.kind, diff.new_bytes, diff.text),
            (FileDiffKind::Binary, 3, None)
        );
        let big = WorkspaceFile::text("big.js", "x".repeat(MAX_DIFF_FILE_BYTES + 1));
        let small = WorkspaceFile::text("big.js", "y");
        let diff = FileDiff::between(Some(&small), Some(&big)).unwrap();
        assert_eq!(diff.kind, FileDiffKind::Oversized);
        let edge = WorkspaceFile::text("big.js", "x".repeat(MAX_DIFF_FILE_BYTES));
        assert_eq!(
            FileDiff::between(Some(&small), Some(&edge)).unwrap().kind,
            FileDiffKind::Text
        );
    }
}
