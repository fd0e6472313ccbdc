//! The operating-system folder adapter.
//!
//! - Reads stay inside the root: symbolic links are followed only when they resolve to a
//!   regular file inside the (canonical) root; linked directories are never entered.
//! - Writes go to a temporary sibling and are renamed into place, so a crash never leaves a
//!   half-written file; a parent that is a link or a file is refused instead of followed.
//! - The root is never recreated: if it vanished, operations fail with `WORKSPACE_FOLDER_STALE`.
//!
//! All system calls go through the [`FolderFs`] trait so tests can inject faults (permission
//! denied, a folder removed mid-save) that a root user on a real disk cannot provoke.

use std::ffi::OsString;
use std::fs::{self, Metadata};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;

use super::error::{WorkspaceError, WorkspaceResult};
use super::folder::{
    Admission, FolderAdapter, FolderImport, FolderPermission, ImportBuilder, SkipReason,
};
use super::model::validate_path;
use crate::file::{FileContent, WorkspaceFile};
use crate::preview::Packages;

/// The system calls the OS adapter makes. Every method defaults to `std::fs`, so a
/// fault-injecting implementation overrides only what it breaks.
pub trait FolderFs: Send + Sync + 'static {
    /// `lstat`: metadata of the entry itself (links are not followed).
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        fs::symlink_metadata(path)
    }

    /// `stat`: metadata of what a link points to.
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        fs::metadata(path)
    }

    /// Entry names of a directory (unsorted).
    fn read_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        fs::read_dir(path)?
            .map(|entry| entry.map(|entry| entry.file_name()))
            .collect()
    }

    /// The canonical absolute path (links resolved).
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        fs::canonicalize(path)
    }

    /// Reads at most `limit` bytes (one more than a caller's bound reveals an over-limit file).
    fn read_limited(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
        let file = fs::File::open(path)?;
        // Size the buffer once from the file length (bounded by `limit`) instead of doubling.
        let hint = file.metadata().map_or(0, |meta| meta.len()).min(limit);
        let mut bytes = Vec::with_capacity(usize::try_from(hint).unwrap_or(0));
        file.take(limit).read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// Creates one directory.
    fn create_dir(&self, path: &Path) -> io::Result<()> {
        fs::create_dir(path)
    }

    /// Creates a new file (failing if it exists), writes `bytes` and syncs it to disk.
    fn write_new(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)?;
        file.write_all(bytes)?;
        file.sync_all()
    }

    /// Atomically renames `from` over `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    /// Removes a file.
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    /// `Ok` when writes into `dir` are allowed. The default reads the permission bits only,
    /// so checking never creates a file in the user's folder; an actual write refused by the
    /// OS is still reported as `WORKSPACE_FOLDER_PERMISSION_DENIED`.
    fn check_writable(&self, dir: &Path) -> io::Result<()> {
        if fs::metadata(dir)?.permissions().readonly() {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        Ok(())
    }
}

/// [`FolderFs`] on the real filesystem.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsFs;

impl FolderFs for OsFs {}

/// A folder on the local filesystem, linked to a workspace.
#[derive(Clone)]
pub struct OsFolder {
    inner: Arc<Inner>,
}

struct Inner {
    root: PathBuf,
    name: String,
    fs: Arc<dyn FolderFs>,
    temp_counter: AtomicU64,
    /// The installed packages as of the last read (a new cache per read).
    packages: std::sync::Mutex<Packages>,
}

impl std::fmt::Debug for OsFolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OsFolder")
            .field("root", &self.inner.root)
            .finish_non_exhaustive()
    }
}

impl OsFolder {
    /// Links the directory at `root` (which must exist).
    pub fn open(root: impl AsRef<Path>) -> WorkspaceResult<Self> {
        Self::with_fs(root, Arc::new(OsFs))
    }

    /// Links `root` through a custom [`FolderFs`] (fault injection, sandboxes).
    pub fn with_fs(root: impl AsRef<Path>, fs: Arc<dyn FolderFs>) -> WorkspaceResult<Self> {
        let requested = root.as_ref();
        let not_found =
            |reason: &str| WorkspaceError::folder_not_found(&requested.to_string_lossy(), reason);
        let root = fs
            .canonicalize(requested)
            .map_err(|error| not_found(&missing_reason(&error)))?;
        let metadata = fs
            .metadata(&root)
            .map_err(|error| not_found(&missing_reason(&error)))?;
        if !metadata.is_dir() {
            return Err(not_found("it is not a folder"));
        }
        let name = root.file_name().map_or_else(
            || "folder".to_owned(),
            |name| name.to_string_lossy().into_owned(),
        );
        Ok(Self {
            inner: Arc::new(Inner {
                packages: std::sync::Mutex::new(Packages::folder(&root)),
                root,
                name,
                fs,
                temp_counter: AtomicU64::new(0),
            }),
        })
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    fn packages_slot(&self) -> std::sync::MutexGuard<'_, Packages> {
        // Every write replaces the whole value, so a poisoned slot still holds a valid one.
        self.inner
            .packages
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn blocking<T: Send + 'static>(
        &self,
        operation: &'static str,
        job: impl FnOnce(&Inner) -> WorkspaceResult<T> + Send + 'static,
    ) -> WorkspaceResult<T> {
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || job(&inner))
            .await
            .unwrap_or_else(|join| {
                Err(WorkspaceError::folder_io_failed(
                    operation,
                    "",
                    &format!("folder task failed: {join}"),
                ))
            })
    }
}

/// Why a path to open could not be resolved, in words a person can act on.
fn missing_reason(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such folder".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => format!("it cannot be read ({})", error.kind()),
    }
}

#[async_trait]
impl FolderAdapter for OsFolder {
    fn name(&self) -> &str {
        &self.inner.name
    }

    async fn permission(&self) -> FolderPermission {
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || inner.permission())
            .await
            .unwrap_or(FolderPermission::Unknown)
    }

    async fn read(&self) -> WorkspaceResult<FolderImport> {
        let import = self.blocking("read", Inner::scan).await?;
        *self.packages_slot() = Packages::folder(&self.inner.root);
        Ok(import)
    }

    fn packages(&self) -> Option<Packages> {
        Some(self.packages_slot().clone())
    }

    async fn write_file(&self, file: &WorkspaceFile) -> WorkspaceResult<()> {
        let file = file.clone();
        self.blocking("write", move |inner| inner.write(&file))
            .await
    }

    async fn remove_file(&self, path: &str) -> WorkspaceResult<()> {
        let path = path.to_owned();
        self.blocking("delete", move |inner| inner.remove(&path))
            .await
    }

    fn scope(&self) -> String {
        self.inner.root.to_string_lossy().into_owned()
    }

    async fn read_file(&self, path: &str, limit: u64) -> WorkspaceResult<Vec<u8>> {
        let path = path.to_owned();
        self.blocking("read", move |inner| inner.read_one(&path, limit))
            .await
    }
}

impl Inner {
    fn permission(&self) -> FolderPermission {
        match self.fs.metadata(&self.root) {
            Ok(meta) if meta.is_dir() => match self.fs.check_writable(&self.root) {
                Ok(()) => FolderPermission::Granted,
                Err(error) if is_denied(&error) => FolderPermission::Denied,
                Err(_) => FolderPermission::Unknown,
            },
            Ok(_) => FolderPermission::Disconnected,
            Err(error) if error.kind() == io::ErrorKind::NotFound => FolderPermission::Disconnected,
            Err(error) if is_denied(&error) => FolderPermission::Denied,
            Err(_) => FolderPermission::Unknown,
        }
    }

    /// Maps an I/O failure: a vanished root is stale, a refusal is a permission error, anything
    /// else leaves the outcome for that path unknown.
    fn failure(&self, operation: &str, path: &str, error: &io::Error) -> WorkspaceError {
        if !self.root_exists() {
            return WorkspaceError::folder_stale(operation, &self.name, &error.to_string());
        }
        if is_denied(error) {
            return WorkspaceError::folder_permission_denied(
                operation,
                FolderPermission::Denied.as_str(),
            )
            .with_detail("path", path.into());
        }
        WorkspaceError::folder_io_failed(operation, path, &error.to_string())
    }

    fn root_exists(&self) -> bool {
        self.fs.metadata(&self.root).is_ok_and(|meta| meta.is_dir())
    }

    fn ensure_root(&self, operation: &str) -> WorkspaceResult<()> {
        match self.fs.metadata(&self.root) {
            Ok(meta) if meta.is_dir() => Ok(()),
            Ok(_) => Err(WorkspaceError::folder_stale(
                operation,
                &self.name,
                "the folder is no longer a directory",
            )),
            Err(error) => Err(self.failure(operation, "", &error)),
        }
    }

    fn scan(&self) -> WorkspaceResult<FolderImport> {
        self.ensure_root("read")?;
        let canonical_root = self
            .fs
            .canonicalize(&self.root)
            .map_err(|error| self.failure("read", "", &error))?;
        let mut builder = ImportBuilder::new(self.name.clone());
        let names = self
            .fs
            .read_dir(&self.root)
            .map_err(|error| self.failure("read", "", &error))?;
        self.visit(&canonical_root, &self.root, "", names, &mut builder);
        Ok(builder.finish())
    }

    fn visit(
        &self,
        canonical_root: &Path,
        dir: &Path,
        prefix: &str,
        names: Vec<OsString>,
        builder: &mut ImportBuilder,
    ) {
        let mut names = names;
        names.sort();
        for name in names {
            if !builder.count_entry(prefix) {
                return;
            }
            let display = name.to_string_lossy();
            let relative = if prefix.is_empty() {
                display.to_string()
            } else {
                format!("{prefix}/{display}")
            };
            let full = dir.join(&name);
            if name.to_str().is_none() {
                builder.skip(&relative, SkipReason::InvalidPath);
                continue;
            }
            let Ok(meta) = self.fs.symlink_metadata(&full) else {
                builder.skip(&relative, SkipReason::Unreadable);
                continue;
            };
            if meta.is_dir() && name == crate::preview::NODE_MODULES {
                // Installed packages are no workspace files: the preview reads them on
                // demand (`Packages::folder`), and the limits stay for the user's own files.
                continue;
            }
            if meta.is_dir() {
                match self.fs.read_dir(&full) {
                    Ok(children) => self.visit(canonical_root, &full, &relative, children, builder),
                    Err(_) => builder.skip(&relative, SkipReason::Unreadable),
                }
            } else if meta.file_type().is_symlink() {
                match self.link_target_inside(canonical_root, &full) {
                    Some((target, size)) => self.import_file(&target, &relative, size, builder),
                    None => builder.skip(&relative, SkipReason::SymlinkNotFollowed),
                }
            } else if meta.is_file() {
                self.import_file(&full, &relative, meta.len(), builder);
            } else {
                builder.skip(&relative, SkipReason::Unsupported);
            }
            if builder.stopped() {
                return;
            }
        }
    }

    /// The resolved target of a link when it is a regular file inside the root.
    fn link_target_inside(&self, canonical_root: &Path, link: &Path) -> Option<(PathBuf, u64)> {
        let target = self.fs.canonicalize(link).ok()?;
        let meta = self.fs.metadata(&target).ok()?;
        (target.starts_with(canonical_root) && meta.is_file()).then_some((target, meta.len()))
    }

    fn import_file(&self, full: &Path, relative: &str, size: u64, builder: &mut ImportBuilder) {
        if let Admission::Read {
            path,
            kind,
            max_bytes,
        } = builder.admit(relative, size)
        {
            match self.fs.read_limited(full, max_bytes + 1) {
                Ok(bytes) => {
                    builder.accept(path, kind, bytes);
                }
                Err(_) => builder.skip(&path, SkipReason::Unreadable),
            }
        }
    }

    /// The directory that holds `relative`, checking that every parent is a real directory
    /// inside the root. Missing parents are created when `create`, else `None` is returned.
    fn parent_dir(
        &self,
        relative: &str,
        create: bool,
        operation: &str,
    ) -> WorkspaceResult<Option<PathBuf>> {
        let mut dir = self.root.clone();
        let segments: Vec<&str> = relative.split('/').collect();
        for segment in &segments[..segments.len() - 1] {
            dir.push(segment);
            match self.fs.symlink_metadata(&dir) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => {
                    return Err(WorkspaceError::path_invalid_reason(
                        relative,
                        "not-a-directory",
                        "a parent of the path is a file or a symbolic link in the folder",
                    ));
                }
                Err(error) if error.kind() == io::ErrorKind::NotFound && !create => {
                    return Ok(None);
                }
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    self.ensure_root(operation)?;
                    match self.fs.create_dir(&dir) {
                        Ok(()) => {}
                        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(error) => return Err(self.failure(operation, relative, &error)),
                    }
                }
                Err(error) => return Err(self.failure(operation, relative, &error)),
            }
        }
        Ok(Some(dir))
    }

    fn write(&self, file: &WorkspaceFile) -> WorkspaceResult<()> {
        let relative = validate_path(&file.path)?;
        self.ensure_root("write")?;
        let parent = self
            .parent_dir(&relative, true, "write")?
            .unwrap_or_else(|| self.root.clone());
        let name = relative.rsplit('/').next().unwrap_or(&relative);
        let target = parent.join(name);
        if self
            .fs
            .symlink_metadata(&target)
            .is_ok_and(|meta| meta.is_dir())
        {
            return Err(WorkspaceError::file_type_conflict(
                &relative,
                "write",
                "directory",
                "file",
            ));
        }
        let bytes: &[u8] = match &file.content {
            FileContent::Text { source } => source.as_bytes(),
            FileContent::Asset { bytes, .. } => bytes,
        };
        let sequence = self.temp_counter.fetch_add(1, Ordering::Relaxed);
        let temp = parent.join(format!(".{name}.{}-{sequence}.lce-tmp", std::process::id()));
        let written = self
            .fs
            .write_new(&temp, bytes)
            .and_then(|()| self.fs.rename(&temp, &target));
        written.map_err(|error| {
            // Best effort: the temporary file is ours; the target was not touched.
            let _ = self.fs.remove_file(&temp);
            self.failure("write", &relative, &error)
        })
    }

    /// Reads one regular file (never through a link, like the writes) of at most `limit` bytes.
    fn read_one(&self, raw_path: &str, limit: u64) -> WorkspaceResult<Vec<u8>> {
        let relative = validate_path(raw_path)?;
        self.ensure_root("read")?;
        let missing = || WorkspaceError::file_not_found(&relative, "read");
        let Some(parent) = self.parent_dir(&relative, false, "read")? else {
            return Err(missing());
        };
        let target = parent.join(relative.rsplit('/').next().unwrap_or(&relative));
        let kind = match self.fs.symlink_metadata(&target) {
            Ok(meta) if meta.is_file() => return self.read_regular(&target, &relative, limit),
            Ok(meta) if meta.is_dir() => "directory",
            Ok(_) => "symbolic link",
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Err(missing()),
            Err(error) => return Err(self.failure("read", &relative, &error)),
        };
        Err(WorkspaceError::file_type_conflict(
            &relative, "read", kind, "file",
        ))
    }

    fn read_regular(&self, target: &Path, relative: &str, limit: u64) -> WorkspaceResult<Vec<u8>> {
        self.fs
            .read_limited(target, limit)
            .map_err(|error| match error.kind() {
                io::ErrorKind::NotFound => WorkspaceError::file_not_found(relative, "read"),
                _ => self.failure("read", relative, &error),
            })
    }

    fn remove(&self, raw_path: &str) -> WorkspaceResult<()> {
        let relative = validate_path(raw_path)?;
        self.ensure_root("delete")?;
        let Some(parent) = self.parent_dir(&relative, false, "delete")? else {
            return Ok(());
        };
        let target = parent.join(relative.rsplit('/').next().unwrap_or(&relative));
        match self.fs.symlink_metadata(&target) {
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
            Ok(meta) if meta.is_dir() => {
                return Err(WorkspaceError::file_type_conflict(
                    &relative,
                    "delete",
                    "directory",
                    "file",
                ));
            }
            _ => {}
        }
        match self.fs.remove_file(&target) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == io::ErrorKind::NotFound && self.root_exists() => Ok(()),
            Err(error) => Err(self.failure("delete", &relative, &error)),
        }
    }
}

fn is_denied(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::error::WorkspaceErrorCode;

    fn folder_with(files: &[(&str, &[u8])]) -> (tempfile::TempDir, OsFolder) {
        let dir = tempfile::tempdir().unwrap();
        for (relative, bytes) in files {
            let path = dir.path().join(relative);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, bytes).unwrap();
        }
        let folder = OsFolder::open(dir.path()).unwrap();
        (dir, folder)
    }

    #[tokio::test]
    async fn read_file_returns_the_bytes_up_to_the_limit() {
        let (_dir, folder) = folder_with(&[("css/site.css", b"h1{}"), ("logo.png", &[0, 159])]);
        assert_eq!(folder.read_file("css/site.css", 5).await.unwrap(), b"h1{}");
        assert_eq!(
            folder.read_file("./css/site.css", 4).await.unwrap(),
            b"h1{}"
        );
        assert_eq!(folder.read_file("css/site.css", 2).await.unwrap(), b"h1");
        assert_eq!(folder.read_file("logo.png", 9).await.unwrap(), [0, 159]);
    }

    #[tokio::test]
    async fn read_file_reports_missing_files_and_parents() {
        let (_dir, folder) = folder_with(&[("index.html", b"<p>")]);
        for path in ["gone.css", "no/such/dir.css"] {
            let error = folder.read_file(path, 10).await.unwrap_err();
            assert_eq!(
                error.code,
                WorkspaceErrorCode::WorkspaceFileNotFound,
                "{path}"
            );
            assert_eq!(error.details["path"], path);
        }
        let invalid = folder.read_file("../outside.css", 10).await.unwrap_err();
        assert_eq!(invalid.code, WorkspaceErrorCode::WorkspacePathInvalid);
    }

    #[tokio::test]
    async fn read_file_never_reads_through_a_link_or_a_directory() {
        let (dir, folder) = folder_with(&[("real.css", b"a{}"), ("sub/x.css", b"b{}")]);
        std::os::unix::fs::symlink(dir.path().join("real.css"), dir.path().join("link.css"))
            .unwrap();
        let link = folder.read_file("link.css", 10).await.unwrap_err();
        assert_eq!(link.code, WorkspaceErrorCode::WorkspaceFileTypeConflict);
        assert_eq!(link.details["actualKind"], "symbolic link");
        fs::create_dir(dir.path().join("dir.css")).unwrap();
        let directory = folder.read_file("dir.css", 10).await.unwrap_err();
        assert_eq!(directory.details["actualKind"], "directory");
    }

    #[tokio::test]
    async fn read_file_of_a_vanished_folder_is_stale_and_scope_is_the_root() {
        let (dir, folder) = folder_with(&[("index.html", b"<p>")]);
        assert_eq!(
            folder.scope(),
            fs::canonicalize(dir.path()).unwrap().to_string_lossy()
        );
        drop(dir);
        let error = folder.read_file("index.html", 10).await.unwrap_err();
        assert_eq!(error.code, WorkspaceErrorCode::WorkspaceFolderStale);
    }
}
