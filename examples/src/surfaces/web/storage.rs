//! Where the web-coding workspace is persisted: its own SQLite file in the studio's data
//! directory, or process memory (with the reason in every result) when that file cannot be
//! opened.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use live_code_editor::workspace::StoredWorkspace;
use live_code_editor::workspace::repository::{
    RepositoryError, WorkspaceDelta, WorkspaceRepository,
};
use live_code_editor::workspace::sqlite::SqliteWorkspaceRepository;

/// SQLite file of the web-coding workspace inside the data directory (kept apart from the
/// standalone workspace's file so the two surfaces never share rows).
pub const WEB_DB_FILE: &str = "web-workspace.sqlite";
/// Workspace id of the web-coding workspace in that file.
pub const WEB_WORKSPACE_ID: &str = "web";

/// Opens the repository in `data_dir`; failures give a repository that always fails, so the
/// manager falls back to memory mode and reports why.
pub async fn open_repository(data_dir: &Path) -> Arc<dyn WorkspaceRepository> {
    let opened = match std::fs::create_dir_all(data_dir) {
        Ok(()) => SqliteWorkspaceRepository::open(data_dir.join(WEB_DB_FILE), WEB_WORKSPACE_ID)
            .await
            .map_err(|e| e.to_string()),
        Err(error) => Err(format!(
            "data directory {} could not be created: {error}",
            data_dir.display()
        )),
    };
    match opened {
        Ok(repository) => Arc::new(repository),
        Err(reason) => {
            tracing::warn!(%reason, "web-coding storage unavailable; running in memory mode");
            Arc::new(UnavailableRepository { reason })
        }
    }
}

/// A repository whose storage could not be opened: every call fails with the reason.
#[derive(Debug)]
struct UnavailableRepository {
    reason: String,
}

#[async_trait]
impl WorkspaceRepository for UnavailableRepository {
    fn storage_mode(&self) -> &'static str {
        "memory"
    }

    async fn load(&self) -> Result<Option<StoredWorkspace>, RepositoryError> {
        Err(RepositoryError::Storage(self.reason.clone()))
    }

    async fn replace(&self, _stored: &StoredWorkspace) -> Result<(), RepositoryError> {
        Err(RepositoryError::Storage(self.reason.clone()))
    }

    async fn apply(&self, _delta: &WorkspaceDelta) -> Result<(), RepositoryError> {
        Err(RepositoryError::Storage(self.reason.clone()))
    }
}
