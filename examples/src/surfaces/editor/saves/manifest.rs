//! The bounded per-file manifest of one durable save record: path, SHA-256 digest and byte
//! length of every file the record writes, kept in the record so an ambiguous save can be
//! reconciled later by reading each file back and comparing.

use std::sync::Arc;

use live_code_editor::WorkspaceFile;
use live_code_editor::file::FileContent;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::kit::durable_folder::content_digest;

/// Most files one save record describes. A `editor.saveAll` with more dirty files writes them
/// as consecutive records of at most this many files each, so every manifest stays bounded.
pub const MAX_MANIFEST_FILES: usize = 64;

/// One file of a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestEntry {
    /// Workspace path.
    pub path: String,
    /// `sha256:<hex>` of the bytes written.
    pub sha256: String,
    /// Number of bytes written.
    pub length: u64,
}

impl ManifestEntry {
    /// The entry describing `bytes` at `path`.
    pub fn of(path: &str, bytes: &[u8]) -> Self {
        Self {
            path: path.to_owned(),
            sha256: content_digest(bytes),
            length: u64::try_from(bytes.len()).unwrap_or(u64::MAX),
        }
    }

    /// Whether `bytes` are exactly the bytes this entry describes.
    pub fn matches(&self, bytes: &[u8]) -> bool {
        u64::try_from(bytes.len()).is_ok_and(|length| length == self.length)
            && content_digest(bytes) == self.sha256
    }
}

/// Why a manifest cannot be built or read back from a record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    /// No file.
    #[error("a save manifest needs at least one file")]
    Empty,
    /// More than [`MAX_MANIFEST_FILES`] files.
    #[error("a save manifest holds at most {MAX_MANIFEST_FILES} files, got {0}")]
    TooManyFiles(usize),
    /// The stored value is not a manifest.
    #[error("the stored save manifest is malformed: {0}")]
    Malformed(String),
}

/// The files of one save record, in write order (at most [`MAX_MANIFEST_FILES`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    entries: Vec<ManifestEntry>,
}

impl Manifest {
    /// A manifest of `entries`, refused when empty or over the bound.
    pub fn new(entries: Vec<ManifestEntry>) -> Result<Self, ManifestError> {
        if entries.is_empty() {
            return Err(ManifestError::Empty);
        }
        if entries.len() > MAX_MANIFEST_FILES {
            return Err(ManifestError::TooManyFiles(entries.len()));
        }
        Ok(Self { entries })
    }

    /// The manifest of writing `files` in this order.
    pub fn of_files(files: &[Arc<WorkspaceFile>]) -> Result<Self, ManifestError> {
        Self::new(
            files
                .iter()
                .map(|file| ManifestEntry::of(&file.path, file_bytes(file)))
                .collect(),
        )
    }

    /// Reads a manifest stored in a record (the same bound applies).
    pub fn from_value(value: &Value) -> Result<Self, ManifestError> {
        let entries: Vec<ManifestEntry> = serde_json::from_value(value.clone())
            .map_err(|error| ManifestError::Malformed(error.to_string()))?;
        Self::new(entries)
    }

    /// The entries in write order.
    pub fn entries(&self) -> &[ManifestEntry] {
        &self.entries
    }

    /// The paths in write order.
    pub fn paths(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|entry| entry.path.clone())
            .collect()
    }

    /// As stored in a record.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(&self.entries).unwrap_or(Value::Null)
    }

    /// The digest of the whole manifest (paths, order, digests and lengths): the record's
    /// fingerprint and the content part of its key.
    pub fn digest(&self) -> String {
        let canonical: String = self
            .entries
            .iter()
            .map(|entry| format!("{}\0{}\0{}\n", entry.path, entry.sha256, entry.length))
            .collect();
        content_digest(canonical.as_bytes())
    }
}

/// `files` cut into consecutive groups of at most [`MAX_MANIFEST_FILES`], in order.
pub(crate) fn chunks(files: &[Arc<WorkspaceFile>]) -> impl Iterator<Item = &[Arc<WorkspaceFile>]> {
    files.chunks(MAX_MANIFEST_FILES)
}

/// The bytes a folder write of `file` puts on disk.
pub(crate) fn file_bytes(file: &WorkspaceFile) -> &[u8] {
    match &file.content {
        FileContent::Text { source } => source.as_bytes(),
        FileContent::Asset { bytes, .. } => bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(count: usize) -> Vec<Arc<WorkspaceFile>> {
        (0..count)
            .map(|index| Arc::new(WorkspaceFile::text(format!("f{index:03}.js"), "x")))
            .collect()
    }

    #[test]
    fn the_manifest_bound_holds_at_its_edge_and_one_over() {
        let edge = Manifest::of_files(&files(MAX_MANIFEST_FILES)).unwrap();
        assert_eq!(edge.entries().len(), MAX_MANIFEST_FILES);
        assert_eq!(
            Manifest::of_files(&files(MAX_MANIFEST_FILES + 1)),
            Err(ManifestError::TooManyFiles(MAX_MANIFEST_FILES + 1))
        );
        assert_eq!(Manifest::of_files(&[]), Err(ManifestError::Empty));
        let stored = edge.to_value();
        assert_eq!(Manifest::from_value(&stored).unwrap(), edge);
        let mut over = stored.as_array().unwrap().clone();
        over.push(over[0].clone());
        assert_eq!(
            Manifest::from_value(&Value::Array(over)),
            Err(ManifestError::TooManyFiles(MAX_MANIFEST_FILES + 1))
        );
    }

    #[test]
    fn chunks_split_at_the_bound() {
        let sizes = |count| chunks(&files(count)).map(<[_]>::len).collect::<Vec<_>>();
        assert_eq!(sizes(MAX_MANIFEST_FILES), [MAX_MANIFEST_FILES]);
        assert_eq!(sizes(MAX_MANIFEST_FILES + 1), [MAX_MANIFEST_FILES, 1]);
        assert!(sizes(0).is_empty());
    }

    #[test]
    fn entries_match_only_the_same_bytes() {
        let entry = ManifestEntry::of("a.css", b"h1{}");
        assert_eq!(entry.length, 4);
        assert!(entry.sha256.starts_with("sha256:"));
        assert!(entry.matches(b"h1{}"));
        assert!(!entry.matches(b"h1{ }"));
        assert!(!entry.matches(b""));
    }

    #[test]
    fn the_digest_covers_paths_order_and_content() {
        let a = Arc::new(WorkspaceFile::text("a.js", "1"));
        let b = Arc::new(WorkspaceFile::text("b.js", "2"));
        let b2 = Arc::new(WorkspaceFile::text("b.js", "3"));
        let ab = Manifest::of_files(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(
            ab.digest(),
            Manifest::of_files(&[a.clone(), b.clone()])
                .unwrap()
                .digest()
        );
        assert_ne!(
            ab.digest(),
            Manifest::of_files(&[b.clone(), a.clone()])
                .unwrap()
                .digest()
        );
        assert_ne!(ab.digest(), Manifest::of_files(&[a, b2]).unwrap().digest());
    }

    #[test]
    fn malformed_stored_manifests_are_refused() {
        for value in [
            serde_json::json!({"path": "a"}),
            serde_json::json!([{"path": "a", "sha256": "x"}]),
            serde_json::json!([{"path": "a", "sha256": "x", "length": 1, "source": "leak"}]),
        ] {
            assert!(matches!(
                Manifest::from_value(&value),
                Err(ManifestError::Malformed(_))
            ));
        }
    }
}
