//! The SQLite "server": only a file.

use std::path::{Path, PathBuf};

/// Where the SQLite backend keeps its records: `<dir>/durable-operations.sqlite3`.
///
/// SQLite runs inside each worker process, so there is no server to kill, pause or
/// disconnect: its faults are process kills of the workers themselves (SIGKILL mid-write),
/// which the harness that runs the workers applies. The file (with its WAL) survives them,
/// and the next worker opens it with `SqliteBackend::open(file.path())`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteFile {
    path: PathBuf,
}

impl SqliteFile {
    /// The database file name inside its directory.
    pub const FILE_NAME: &'static str = "durable-operations.sqlite3";

    /// The file in `dir` (neither `dir` nor the file is created here: the backend creates the
    /// file when it first opens it).
    pub fn new(dir: impl AsRef<Path>) -> Self {
        Self {
            path: dir.as_ref().join(Self::FILE_NAME),
        }
    }

    /// The file's path, for `SqliteBackend::open`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `sqlite://<path>?mode=rwc`, for a sqlx pool of one's own.
    pub fn url(&self) -> String {
        format!("sqlite://{}?mode=rwc", self.path.display())
    }
}
