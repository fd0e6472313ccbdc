//! The folder adapter port and its import rules (limits, skip summaries, sort order).
//!
//! The OS implementation lives in [`super::os_folder`]; hosts may provide others (a browser
//! bridge, a remote share) by implementing [`FolderAdapter`].

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde::Serialize;

use super::error::{WorkspaceError, WorkspaceResult};
use super::model::{compare_order, folder_clash, validate_path};
use crate::file::{FileContent, WorkspaceFile, is_asset_path, is_text_path};

/// Most files one import keeps.
pub const MAX_IMPORT_FILES: usize = 200;
/// Most directory entries (files and directories) one import scans.
pub const MAX_SCANNED_ENTRIES: usize = 2_000;
/// Largest text file imported, in bytes (512 KiB).
pub const MAX_TEXT_FILE_BYTES: u64 = 512 * 1024;
/// Largest asset imported, in bytes (4 MiB).
pub const MAX_ASSET_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Largest total of imported bytes (12 MiB).
pub const MAX_IMPORT_TOTAL_BYTES: u64 = 12 * 1024 * 1024;

/// Most skipped entries an import result lists (the counts cover every one).
pub const MAX_LISTED_SKIPS: usize = 64;

/// Write permission of a linked folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub enum FolderPermission {
    /// Reads and writes are allowed.
    Granted,
    /// The user must be asked (browser adapters; the OS adapter never reports it).
    Prompt,
    /// The OS refused writes.
    Denied,
    /// The permission could not be determined.
    Unknown,
    /// No folder, or the folder is gone.
    Disconnected,
}

impl FolderPermission {
    /// The lowercase name used in error details.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Granted => "granted",
            Self::Prompt => "prompt",
            Self::Denied => "denied",
            Self::Unknown => "unknown",
            Self::Disconnected => "disconnected",
        }
    }
}

/// What a folder read produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct FolderImport {
    /// Display name of the folder.
    pub root_name: String,
    /// Imported files in canonical order.
    pub files: Vec<WorkspaceFile>,
    /// One line per skipped entry or reached limit, e.g. `big.js · larger than 512 KB`.
    pub skipped: Vec<String>,
    /// Skipped entries per [`SkipReason::key`] (filled by [`ImportBuilder`]; an adapter that
    /// builds its import itself may leave it empty).
    pub skip_counts: BTreeMap<&'static str, usize>,
}

impl FolderImport {
    /// An import of `files` (canonical order) from the folder displayed as `root_name`, with
    /// nothing skipped. An adapter reading a real folder should prefer [`ImportBuilder`],
    /// which enforces the limits and fills the skip lines and counts.
    pub fn new(root_name: impl Into<String>, files: Vec<WorkspaceFile>) -> Self {
        Self {
            root_name: root_name.into(),
            files,
            skipped: Vec::new(),
            skip_counts: BTreeMap::new(),
        }
    }

    /// Sets the skip lines (one per skipped entry or reached limit).
    #[must_use]
    pub fn with_skipped(mut self, skipped: Vec<String>) -> Self {
        self.skipped = skipped;
        self
    }

    /// Sets the skipped entries per [`SkipReason::key`].
    #[must_use]
    pub fn with_skip_counts(mut self, skip_counts: BTreeMap<&'static str, usize>) -> Self {
        self.skip_counts = skip_counts;
        self
    }
}

/// A linked folder the manager imports from and saves to.
#[async_trait]
pub trait FolderAdapter: Send + Sync {
    /// Display name (never a full path: it may reach tool payloads).
    fn name(&self) -> &str;

    /// The current write permission.
    async fn permission(&self) -> FolderPermission;

    /// Reads the folder within the import limits.
    async fn read(&self) -> WorkspaceResult<FolderImport>;

    /// Writes one file atomically (never leaves a half-written file).
    async fn write_file(&self, file: &WorkspaceFile) -> WorkspaceResult<()>;

    /// Removes one file; succeeds when the file or its parent is already gone.
    async fn remove_file(&self, path: &str) -> WorkspaceResult<()>;

    /// The packages installed in the folder's `node_modules`, which the preview resolves bare
    /// imports from (read on demand, never imported as workspace files). Defaults to none;
    /// the OS adapter answers with the packages under its root as of its last
    /// [`read`](Self::read), so a reload after `npm install` sees the new files.
    fn packages(&self) -> Option<crate::preview::Packages> {
        None
    }

    /// A stable identity of the destination, for durable-save keys (host side only; never
    /// put it in tool payloads). Defaults to [`name`](Self::name); the OS adapter returns
    /// its canonical root.
    fn scope(&self) -> String {
        self.name().to_owned()
    }

    /// Reads one file back byte for byte, at most `limit` bytes (pass one more than the size
    /// you expect, so a longer file shows as longer). A missing file is
    /// `WORKSPACE_FILE_NOT_FOUND`. Used to reconcile a save whose outcome is unknown.
    ///
    /// The default reads the whole folder through [`read`](Self::read) (within the import
    /// limits, so an entry the import skips reads as missing); adapters that can read one file
    /// directly should override it.
    async fn read_file(&self, path: &str, limit: u64) -> WorkspaceResult<Vec<u8>> {
        let path = validate_path(path)?;
        let import = self.read().await?;
        let file = import
            .files
            .into_iter()
            .find(|file| file.path == path)
            .ok_or_else(|| WorkspaceError::file_not_found(&path, "read"))?;
        let mut bytes = match file.content {
            FileContent::Text { source } => source.into_bytes(),
            FileContent::Asset { bytes, .. } => bytes,
        };
        bytes.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        Ok(bytes)
    }
}

/// Why an entry is skipped; rendered as `<path> · <reason>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// Neither a supported text nor asset extension (or not a regular file).
    Unsupported,
    /// The file-count limit was reached (traversal stops).
    FileLimit,
    /// Another entry normalized to the same path.
    Duplicate,
    /// A file where another entry needs a folder of that name, or the other way round.
    FolderClash,
    /// Text file over [`MAX_TEXT_FILE_BYTES`].
    TextTooLarge,
    /// Asset over [`MAX_ASSET_FILE_BYTES`].
    AssetTooLarge,
    /// The total-byte limit was reached (traversal stops).
    WorkspaceLimit,
    /// Text extension but the bytes are not UTF-8 text.
    Binary,
    /// The name does not normalize to a workspace path.
    InvalidPath,
    /// The scanned-entry limit was reached (traversal stops); the path is the directory prefix.
    ScanLimit,
    /// A symbolic link that does not resolve to a regular file inside the folder.
    /// (Not in the reference, whose browser API never exposes links.)
    SymlinkNotFollowed,
    /// The entry could not be read (not in the reference).
    Unreadable,
}

impl SkipReason {
    /// The reason text after the ` · ` separator.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unsupported => "unsupported file type",
            Self::FileLimit => "file limit reached",
            Self::Duplicate => "duplicate workspace path",
            Self::FolderClash => "clashes with a folder of the same name",
            Self::TextTooLarge => "larger than 512 KB",
            Self::AssetTooLarge => "larger than 4 MB",
            Self::WorkspaceLimit => "workspace limit reached",
            Self::Binary => "binary file",
            Self::InvalidPath => "invalid workspace path",
            Self::ScanLimit => "scan limit reached",
            Self::SymlinkNotFollowed => "symlink not followed",
            Self::Unreadable => "unreadable entry",
        }
    }

    /// A stable camelCase key for counts in results (`unsupported`, `binary`, ...).
    pub fn key(self) -> &'static str {
        match self {
            Self::Unsupported => "unsupported",
            Self::FileLimit => "fileLimit",
            Self::Duplicate => "duplicate",
            Self::FolderClash => "folderClash",
            Self::TextTooLarge | Self::AssetTooLarge => "tooLarge",
            Self::WorkspaceLimit => "workspaceLimit",
            Self::Binary => "binary",
            Self::InvalidPath => "invalidPath",
            Self::ScanLimit => "scanLimit",
            Self::SymlinkNotFollowed => "symlink",
            Self::Unreadable => "unreadable",
        }
    }

    /// `<path> · <reason>`.
    pub fn line(self, path: &str) -> String {
        format!("{path} · {}", self.as_str())
    }
}

/// The kind of a candidate file, decided by extension before anything is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Candidate {
    /// A supported text file.
    Text,
    /// A supported binary asset.
    Asset,
}

/// What the import accumulator decided for one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// Read the file (at most `max_bytes`) and pass the bytes to [`ImportBuilder::accept`].
    Read {
        /// Normalized path.
        path: String,
        /// Text or asset.
        kind: Candidate,
        /// Per-file byte bound.
        max_bytes: u64,
    },
    /// The file was added to the import.
    Added,
    /// Skipped; the reason is recorded.
    Skipped,
    /// A limit was reached; the traversal must stop.
    Stop,
}

/// Accumulates an import under the limits; any traversal (OS, upload list) drives it.
#[derive(Debug)]
pub struct ImportBuilder {
    import: FolderImport,
    seen: std::collections::BTreeSet<String>,
    scanned: usize,
    total_bytes: u64,
    stopped: bool,
}

impl ImportBuilder {
    /// An empty import of a folder named `root_name`.
    pub fn new(root_name: impl Into<String>) -> Self {
        Self {
            import: FolderImport {
                root_name: root_name.into(),
                ..FolderImport::default()
            },
            seen: std::collections::BTreeSet::new(),
            scanned: 0,
            total_bytes: 0,
            stopped: false,
        }
    }

    /// Whether a limit stopped the traversal.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Counts one scanned entry (file or directory) found in directory `prefix` ("" = root).
    /// Returns `false` (and records the scan-limit summary once) when the limit is exceeded.
    pub fn count_entry(&mut self, prefix: &str) -> bool {
        if self.stopped {
            return false;
        }
        self.scanned += 1;
        if self.scanned > MAX_SCANNED_ENTRIES {
            let at = if prefix.is_empty() { "." } else { prefix };
            self.stop(at, SkipReason::ScanLimit);
            return false;
        }
        true
    }

    /// Records a skipped entry.
    pub fn skip(&mut self, path: &str, reason: SkipReason) {
        self.record_skip(path, reason);
    }

    /// Decides whether a file with relative name `raw_path` and size `size` is read.
    pub fn admit(&mut self, raw_path: &str, size: u64) -> Admission {
        if self.stopped {
            return Admission::Stop;
        }
        let Ok(path) = validate_path(raw_path) else {
            self.skip(raw_path, SkipReason::InvalidPath);
            return Admission::Skipped;
        };
        let kind = if is_text_path(&path) {
            Candidate::Text
        } else if is_asset_path(&path) {
            Candidate::Asset
        } else {
            self.skip(&path, SkipReason::Unsupported);
            return Admission::Skipped;
        };
        if self.seen.contains(&path) {
            self.skip(&path, SkipReason::Duplicate);
            return Admission::Skipped;
        }
        if self.clashes(&path) {
            self.skip(&path, SkipReason::FolderClash);
            return Admission::Skipped;
        }
        let (max_bytes, too_large) = match kind {
            Candidate::Text => (MAX_TEXT_FILE_BYTES, SkipReason::TextTooLarge),
            Candidate::Asset => (MAX_ASSET_FILE_BYTES, SkipReason::AssetTooLarge),
        };
        if size > max_bytes {
            self.skip(&path, too_large);
            return Admission::Skipped;
        }
        if self.import.files.len() >= MAX_IMPORT_FILES {
            self.stop(&path, SkipReason::FileLimit);
            return Admission::Stop;
        }
        if self.total_bytes + size > MAX_IMPORT_TOTAL_BYTES {
            self.stop(&path, SkipReason::WorkspaceLimit);
            return Admission::Stop;
        }
        Admission::Read {
            path,
            kind,
            max_bytes,
        }
    }

    /// Adds the bytes read for an admitted file, re-checking the limits against the bytes
    /// actually read (the file may have changed since its size was taken).
    pub fn accept(&mut self, path: String, kind: Candidate, bytes: Vec<u8>) -> Admission {
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        let max_bytes = match kind {
            Candidate::Text => MAX_TEXT_FILE_BYTES,
            Candidate::Asset => MAX_ASSET_FILE_BYTES,
        };
        if size > max_bytes {
            let reason = if kind == Candidate::Text {
                SkipReason::TextTooLarge
            } else {
                SkipReason::AssetTooLarge
            };
            self.skip(&path, reason);
            return Admission::Skipped;
        }
        if self.total_bytes + size > MAX_IMPORT_TOTAL_BYTES {
            self.stop(&path, SkipReason::WorkspaceLimit);
            return Admission::Stop;
        }
        let file = match kind {
            Candidate::Asset => WorkspaceFile::asset(path.clone(), bytes),
            Candidate::Text => match String::from_utf8(bytes) {
                Ok(source) if !source.contains('\0') => WorkspaceFile::text(path.clone(), source),
                _ => {
                    self.skip(&path, SkipReason::Binary);
                    return Admission::Skipped;
                }
            },
        };
        self.total_bytes += size;
        self.seen.insert(path);
        self.import.files.push(file);
        Admission::Added
    }

    /// The finished import, files in canonical order.
    pub fn finish(mut self) -> FolderImport {
        self.import
            .files
            .sort_by(|a, b| compare_order(&a.path, &b.path));
        self.import
    }

    /// Whether `path` would need a folder where an admitted file is (`a.js/b.js` after `a.js`),
    /// or is a file where admitted files need a folder (`sub` after `sub/a.js`): only an upload
    /// list can say both, a disk cannot hold them.
    fn clashes(&self, path: &str) -> bool {
        self.seen.iter().any(|seen| folder_clash(path, seen))
    }

    fn stop(&mut self, path: &str, reason: SkipReason) {
        self.stopped = true;
        self.record_skip(path, reason);
    }

    fn record_skip(&mut self, path: &str, reason: SkipReason) {
        self.import.skipped.push(reason.line(path));
        *self.import.skip_counts.entry(reason.key()).or_default() += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_into(builder: &mut ImportBuilder, path: &str, bytes: Vec<u8>) -> Admission {
        match builder.admit(path, bytes.len() as u64) {
            Admission::Read { path, kind, .. } => builder.accept(path, kind, bytes),
            other => other,
        }
    }

    #[test]
    fn skip_lines_use_the_reference_strings() {
        let mut builder = ImportBuilder::new("site");
        read_into(&mut builder, "index.html", b"<p>".to_vec());
        read_into(&mut builder, "tool.exe", vec![1]);
        read_into(&mut builder, "./index.html", b"x".to_vec());
        read_into(&mut builder, "a/../b.css", b"x".to_vec());
        read_into(&mut builder, "blob.txt", vec![0xff, 0xfe]);
        let import = builder.finish();
        assert_eq!(import.files.len(), 1);
        assert_eq!(
            import.skipped,
            [
                "tool.exe · unsupported file type",
                "index.html · duplicate workspace path",
                "a/../b.css · invalid workspace path",
                "blob.txt · binary file",
            ]
        );
    }

    #[test]
    fn per_file_size_limits_at_edge_and_one_over() {
        let mut builder = ImportBuilder::new("site");
        let text = usize::try_from(MAX_TEXT_FILE_BYTES).unwrap();
        let asset = usize::try_from(MAX_ASSET_FILE_BYTES).unwrap();
        read_into(&mut builder, "edge.txt", vec![b'a'; text]);
        read_into(&mut builder, "over.txt", vec![b'a'; text + 1]);
        read_into(&mut builder, "edge.png", vec![0; asset]);
        read_into(&mut builder, "over.png", vec![0; asset + 1]);
        let import = builder.finish();
        let paths: Vec<_> = import.files.iter().map(|file| file.path.as_str()).collect();
        assert_eq!(paths, ["edge.png", "edge.txt"]);
        assert_eq!(
            import.skipped,
            [
                "over.txt · larger than 512 KB",
                "over.png · larger than 4 MB"
            ]
        );
    }

    #[test]
    fn file_limit_at_edge_and_one_over_stops_with_one_summary() {
        let mut builder = ImportBuilder::new("site");
        for index in 0..MAX_IMPORT_FILES {
            read_into(&mut builder, &format!("f{index:03}.txt"), vec![b'x']);
        }
        assert!(!builder.stopped());
        assert_eq!(
            read_into(&mut builder, "extra.txt", vec![b'x']),
            Admission::Stop
        );
        assert_eq!(
            read_into(&mut builder, "more.txt", vec![b'x']),
            Admission::Stop
        );
        let import = builder.finish();
        assert_eq!(import.files.len(), MAX_IMPORT_FILES);
        assert_eq!(import.skipped, ["extra.txt · file limit reached"]);
    }

    #[test]
    fn total_limit_at_edge_and_one_over() {
        let mut builder = ImportBuilder::new("site");
        let asset = usize::try_from(MAX_ASSET_FILE_BYTES).unwrap();
        for index in 0..3 {
            read_into(&mut builder, &format!("a{index}.png"), vec![0; asset]);
        }
        assert!(!builder.stopped(), "exactly 12 MiB fits");
        assert_eq!(
            read_into(&mut builder, "z.txt", vec![b'x']),
            Admission::Stop
        );
        let import = builder.finish();
        assert_eq!(import.files.len(), 3);
        assert_eq!(import.skipped, ["z.txt · workspace limit reached"]);
    }

    #[test]
    fn scan_limit_counts_entries_and_reports_the_prefix_once() {
        let mut builder = ImportBuilder::new("site");
        for _ in 0..MAX_SCANNED_ENTRIES {
            assert!(builder.count_entry(""));
        }
        assert!(!builder.count_entry("deep/dir"));
        assert!(!builder.count_entry("deep/dir"));
        assert_eq!(builder.finish().skipped, ["deep/dir · scan limit reached"]);
    }

    #[test]
    fn a_file_and_a_folder_of_the_same_name_are_never_both_imported() {
        let mut builder = ImportBuilder::new("upload");
        for path in ["a.js", "a.js/b.js", "c.js/d.js", "c.js", "c.jsx.css"] {
            read_into(&mut builder, path, b"x".to_vec());
        }
        let import = builder.finish();
        let mut paths: Vec<&str> = import.files.iter().map(|file| file.path.as_str()).collect();
        paths.sort_unstable();
        assert_eq!(paths, ["a.js", "c.js/d.js", "c.jsx.css"]);
        assert_eq!(
            import.skipped,
            [
                "a.js/b.js · clashes with a folder of the same name",
                "c.js · clashes with a folder of the same name"
            ]
        );
        assert_eq!(import.skip_counts["folderClash"], 2);
    }

    #[test]
    fn finished_files_are_in_canonical_order() {
        let mut builder = ImportBuilder::new("site");
        for path in ["b.js", "app.js", "A.css", "styles.css", "index.html"] {
            read_into(&mut builder, path, b"x".to_vec());
        }
        let paths: Vec<_> = builder
            .finish()
            .files
            .into_iter()
            .map(|file| file.path)
            .collect();
        assert_eq!(
            paths,
            ["index.html", "styles.css", "app.js", "A.css", "b.js"]
        );
    }
}
