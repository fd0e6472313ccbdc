//! The workspace database a surface's manager stores its checkpoint in.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use live_code_editor::workspace::StoredWorkspace;
use live_code_editor::workspace::repository::{
    RepositoryError, WorkspaceDelta, WorkspaceRepository,
};
use live_code_editor::workspace::sqlite::SqliteWorkspaceRepository;

use super::private_files;

/// SQLite file of the workspace inside the data directory.
pub const WORKSPACE_DB_FILE: &str = "workspace.sqlite";

/// Opens workspace `workspace_id` of the workspace database in `data_dir`; when it cannot be
/// opened the manager runs in memory mode and reports why in every result.
pub(crate) async fn open_repository(
    data_dir: &Path,
    workspace_id: &str,
) -> Arc<dyn WorkspaceRepository> {
    let file = data_dir.join(WORKSPACE_DB_FILE);
    let prepared = private_files::create_private_dir(data_dir)
        .and_then(|()| private_files::prepare_private_file(&file));
    let opened = match prepared {
        Ok(()) => SqliteWorkspaceRepository::open(&file, workspace_id)
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
            tracing::warn!(%reason, "workspace storage unavailable; running in memory mode");
            Arc::new(UnavailableRepository { reason })
        }
    }
}

/// A repository whose storage could not be opened: every call fails with the reason, which
/// makes the manager fall back to memory mode and carry the bounded reason as `storageError`.
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
