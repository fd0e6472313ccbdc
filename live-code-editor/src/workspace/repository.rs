//! The `WorkspaceRepository` port: load, full replace, and revision-guarded incremental writes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::model::{StoredWorkspace, Workspace};
use crate::file::WorkspaceFile;

/// A storage failure. The manager turns it into memory mode with a bounded `storage_error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RepositoryError {
    /// The stored revision is not the one the write was based on.
    #[error("stored workspace revision is {stored:?}, expected {expected}")]
    Conflict {
        /// The revision the write expected.
        expected: u64,
        /// The revision found (`None`: nothing stored).
        stored: Option<u64>,
    },
    /// The backend failed.
    #[error("workspace storage failed: {0}")]
    Storage(String),
}

/// The difference between two states, written incrementally. Files are compared by
/// identity (`Arc::ptr_eq`), so unchanged files cost nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkspaceDelta {
    /// The stored revision this delta applies to (the guard).
    pub base_revision: u64,
    /// The revision after the delta.
    pub revision: u64,
    /// The active path after the delta.
    pub active_path: String,
    /// Renamed file -> origin, after the delta.
    pub origins: BTreeMap<String, String>,
    /// Current files added or changed.
    pub upsert_files: Vec<Arc<WorkspaceFile>>,
    /// Current files removed.
    pub remove_files: Vec<String>,
    /// Checkpoint entries added or changed.
    pub upsert_checkpoint: Vec<Arc<WorkspaceFile>>,
    /// Checkpoint entries removed.
    pub remove_checkpoint: Vec<String>,
}

impl WorkspaceDelta {
    /// What changed from `old` to `new`.
    pub fn between(old: &Workspace, new: &Workspace) -> Self {
        let old_files: BTreeMap<&str, &Arc<WorkspaceFile>> = old
            .shared_files()
            .iter()
            .map(|file| (file.path.as_str(), file))
            .collect();
        let new_files: BTreeMap<&str, &Arc<WorkspaceFile>> = new
            .shared_files()
            .iter()
            .map(|file| (file.path.as_str(), file))
            .collect();
        let (upsert_files, remove_files) = diff(&old_files, &new_files);
        let old_saved = old
            .checkpoint()
            .iter()
            .map(|(path, file)| (path.as_str(), file))
            .collect();
        let new_saved = new
            .checkpoint()
            .iter()
            .map(|(path, file)| (path.as_str(), file))
            .collect();
        let (upsert_checkpoint, remove_checkpoint) = diff(&old_saved, &new_saved);
        Self {
            base_revision: old.revision(),
            revision: new.revision(),
            active_path: new.active_path().to_owned(),
            origins: new.origins().clone(),
            upsert_files,
            remove_files,
            upsert_checkpoint,
            remove_checkpoint,
        }
    }

    /// Applies the delta to a stored record (after the caller checked the guard).
    pub fn apply_to(&self, stored: &mut StoredWorkspace) {
        stored.revision = self.revision;
        stored.active_path.clone_from(&self.active_path);
        stored.origins.clone_from(&self.origins);
        apply_list(&mut stored.files, &self.upsert_files, &self.remove_files);
        apply_list(
            &mut stored.checkpoint,
            &self.upsert_checkpoint,
            &self.remove_checkpoint,
        );
        let present: BTreeSet<&str> = stored.files.iter().map(|file| file.path.as_str()).collect();
        stored.pending_deletions = stored
            .checkpoint
            .iter()
            .filter(|saved| !present.contains(saved.path.as_str()))
            .map(|saved| saved.path.clone())
            .collect();
    }
}

type FileMap<'a> = BTreeMap<&'a str, &'a Arc<WorkspaceFile>>;

fn diff(old: &FileMap<'_>, new: &FileMap<'_>) -> (Vec<Arc<WorkspaceFile>>, Vec<String>) {
    let upserts = new
        .iter()
        .filter(|(path, file)| {
            old.get(*path)
                .is_none_or(|previous| !Arc::ptr_eq(previous, file))
        })
        .map(|(_, file)| Arc::clone(file))
        .collect();
    let removals = old
        .keys()
        .filter(|path| !new.contains_key(*path))
        .map(|path| (*path).to_owned())
        .collect();
    (upserts, removals)
}

fn apply_list(list: &mut Vec<WorkspaceFile>, upserts: &[Arc<WorkspaceFile>], removals: &[String]) {
    list.retain(|file| !removals.contains(&file.path));
    for file in upserts {
        match list.iter_mut().find(|existing| existing.path == file.path) {
            Some(existing) => *existing = (**file).clone(),
            None => list.push((**file).clone()),
        }
    }
}

/// Where a workspace is persisted between sessions.
#[async_trait]
pub trait WorkspaceRepository: Send + Sync {
    /// The storage mode reported while this repository is healthy (`"sqlite"`, `"memory"`, ...).
    fn storage_mode(&self) -> &'static str;

    /// The stored workspace, if any.
    async fn load(&self) -> Result<Option<StoredWorkspace>, RepositoryError>;

    /// Replaces whatever is stored (hydration, import, reset).
    async fn replace(&self, stored: &StoredWorkspace) -> Result<(), RepositoryError>;

    /// Applies `delta` only if the stored revision equals `delta.base_revision`; otherwise
    /// fails with [`RepositoryError::Conflict`] and writes nothing.
    async fn apply(&self, delta: &WorkspaceDelta) -> Result<(), RepositoryError>;
}

/// A repository held in process memory (tests, hosts without durable storage).
#[derive(Debug, Default)]
pub struct MemoryWorkspaceRepository {
    stored: Mutex<Option<StoredWorkspace>>,
}

impl MemoryWorkspaceRepository {
    /// An empty repository.
    pub fn new() -> Self {
        Self::default()
    }

    /// A repository that already holds `stored`.
    pub fn with_stored(stored: StoredWorkspace) -> Self {
        Self {
            stored: Mutex::new(Some(stored)),
        }
    }

    /// A copy of what is stored.
    pub fn snapshot(&self) -> Option<StoredWorkspace> {
        self.stored.lock().ok().and_then(|stored| stored.clone())
    }
}

fn poisoned() -> RepositoryError {
    RepositoryError::Storage("memory repository lock poisoned".to_owned())
}

#[async_trait]
impl WorkspaceRepository for MemoryWorkspaceRepository {
    fn storage_mode(&self) -> &'static str {
        "memory"
    }

    async fn load(&self) -> Result<Option<StoredWorkspace>, RepositoryError> {
        Ok(self.stored.lock().map_err(|_| poisoned())?.clone())
    }

    async fn replace(&self, stored: &StoredWorkspace) -> Result<(), RepositoryError> {
        *self.stored.lock().map_err(|_| poisoned())? = Some(stored.clone());
        Ok(())
    }

    async fn apply(&self, delta: &WorkspaceDelta) -> Result<(), RepositoryError> {
        let mut guard = self.stored.lock().map_err(|_| poisoned())?;
        match guard.as_mut() {
            Some(stored) if stored.revision == delta.base_revision => {
                delta.apply_to(stored);
                Ok(())
            }
            other => Err(RepositoryError::Conflict {
                expected: delta.base_revision,
                stored: other.map(|stored| stored.revision),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::model::Operation;

    fn seed() -> Workspace {
        Workspace::new(vec![
            WorkspaceFile::text("index.html", "<p>"),
            WorkspaceFile::text("a.css", ""),
        ])
        .unwrap()
    }

    #[test]
    fn delta_carries_only_changed_files() {
        let ws = seed();
        let next = ws
            .apply(&Operation::Write {
                path: "a.css".into(),
                source: "b{}".into(),
            })
            .unwrap();
        let delta = WorkspaceDelta::between(&ws, &next);
        assert_eq!(delta.base_revision, 1);
        assert_eq!(delta.revision, 2);
        assert_eq!(delta.upsert_files.len(), 1);
        assert_eq!(delta.upsert_files[0].path, "a.css");
        assert!(delta.remove_files.is_empty() && delta.upsert_checkpoint.is_empty());
    }

    #[tokio::test]
    async fn memory_repository_applies_guarded_deltas() {
        let repo = MemoryWorkspaceRepository::new();
        let ws = seed();
        let next = ws
            .apply(&Operation::Delete {
                path: "a.css".into(),
            })
            .unwrap();
        let delta = WorkspaceDelta::between(&ws, &next);
        assert_eq!(
            repo.apply(&delta).await,
            Err(RepositoryError::Conflict {
                expected: 1,
                stored: None
            })
        );
        repo.replace(&ws.to_stored()).await.unwrap();
        repo.apply(&delta).await.unwrap();
        let stored = repo.load().await.unwrap().unwrap();
        assert_eq!(stored, next.to_stored());
        assert_eq!(stored.pending_deletions, ["a.css"]);
        assert!(matches!(
            repo.apply(&delta).await,
            Err(RepositoryError::Conflict {
                expected: 1,
                stored: Some(2)
            })
        ));
    }
}
