//! The embedded default repository: one SQLite file, many workspaces keyed by id.
//!
//! Incremental writes run in one transaction whose first statement is the revision guard
//! (`UPDATE ... WHERE revision = base`), so a stale writer changes nothing.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{Row, Sqlite, Transaction};

use super::model::StoredWorkspace;
use super::repository::{RepositoryError, WorkspaceDelta, WorkspaceRepository};
use crate::file::{FileContent, Language, WorkspaceFile};

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS lce_workspace (
        workspace_id TEXT PRIMARY KEY,
        revision INTEGER NOT NULL,
        active_path TEXT NOT NULL,
        origins TEXT NOT NULL
    )",
    // Its own table (not a column) so databases written before it need no migration.
    "CREATE TABLE IF NOT EXISTS lce_workspace_folder (
        workspace_id TEXT PRIMARY KEY,
        folder_scope TEXT NOT NULL
    )",
    "CREATE TABLE IF NOT EXISTS lce_workspace_file (
        workspace_id TEXT NOT NULL,
        slot TEXT NOT NULL CHECK (slot IN ('current', 'checkpoint')),
        path TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('text', 'asset')),
        mime_type TEXT NOT NULL,
        body BLOB NOT NULL,
        PRIMARY KEY (workspace_id, slot, path)
    )",
];

const CURRENT: &str = "current";
const CHECKPOINT: &str = "checkpoint";

/// A [`WorkspaceRepository`] in a SQLite database.
#[derive(Debug, Clone)]
pub struct SqliteWorkspaceRepository {
    pool: SqlitePool,
    workspace_id: String,
}

fn storage(error: impl std::fmt::Display) -> RepositoryError {
    RepositoryError::Storage(error.to_string())
}

impl SqliteWorkspaceRepository {
    /// Opens (creating if needed) the database file at `path` and stores workspace `workspace_id`.
    pub async fn open(
        path: impl AsRef<Path>,
        workspace_id: impl Into<String>,
    ) -> Result<Self, RepositoryError> {
        let options = SqliteConnectOptions::new()
            .filename(path.as_ref())
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(storage)?;
        Self::with_pool(pool, workspace_id).await
    }

    /// A private in-memory database (one connection, gone when dropped).
    pub async fn in_memory(workspace_id: impl Into<String>) -> Result<Self, RepositoryError> {
        let options = SqliteConnectOptions::from_str("sqlite::memory:").map_err(storage)?;
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .map_err(storage)?;
        Self::with_pool(pool, workspace_id).await
    }

    /// Uses an existing pool, creating the tables if needed.
    pub async fn with_pool(
        pool: SqlitePool,
        workspace_id: impl Into<String>,
    ) -> Result<Self, RepositoryError> {
        for statement in SCHEMA.iter().copied() {
            sqlx::query(statement)
                .execute(&pool)
                .await
                .map_err(storage)?;
        }
        Ok(Self {
            pool,
            workspace_id: workspace_id.into(),
        })
    }

    async fn load_slot(&self, slot: &str) -> Result<Vec<WorkspaceFile>, RepositoryError> {
        let rows = sqlx::query(
            "SELECT path, kind, mime_type, body FROM lce_workspace_file
             WHERE workspace_id = ? AND slot = ? ORDER BY path",
        )
        .bind(&self.workspace_id)
        .bind(slot)
        .fetch_all(&self.pool)
        .await
        .map_err(storage)?;
        rows.iter().map(row_to_file).collect()
    }

    async fn upsert(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        slot: &str,
        file: &WorkspaceFile,
    ) -> Result<(), RepositoryError> {
        let (kind, mime_type, body): (&str, &str, &[u8]) = match &file.content {
            FileContent::Text { source } => ("text", file.language.mime_type(), source.as_bytes()),
            FileContent::Asset { bytes, mime_type } => ("asset", mime_type, bytes),
        };
        sqlx::query(
            "INSERT INTO lce_workspace_file (workspace_id, slot, path, kind, mime_type, body)
             VALUES (?, ?, ?, ?, ?, ?)
             ON CONFLICT (workspace_id, slot, path)
             DO UPDATE SET kind = excluded.kind, mime_type = excluded.mime_type, body = excluded.body",
        )
        .bind(&self.workspace_id)
        .bind(slot)
        .bind(&file.path)
        .bind(kind)
        .bind(mime_type)
        .bind(body)
        .execute(&mut **tx)
        .await
        .map_err(storage)?;
        Ok(())
    }

    async fn remove(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        slot: &str,
        path: &str,
    ) -> Result<(), RepositoryError> {
        sqlx::query(
            "DELETE FROM lce_workspace_file WHERE workspace_id = ? AND slot = ? AND path = ?",
        )
        .bind(&self.workspace_id)
        .bind(slot)
        .bind(path)
        .execute(&mut **tx)
        .await
        .map_err(storage)?;
        Ok(())
    }

    async fn write_meta(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        revision: u64,
        active_path: &str,
        origins: &BTreeMap<String, String>,
    ) -> Result<(), RepositoryError> {
        sqlx::query(
            "INSERT INTO lce_workspace (workspace_id, revision, active_path, origins) VALUES (?, ?, ?, ?)
             ON CONFLICT (workspace_id) DO UPDATE SET revision = excluded.revision,
                 active_path = excluded.active_path, origins = excluded.origins",
        )
        .bind(&self.workspace_id)
        .bind(to_i64(revision)?)
        .bind(active_path)
        .bind(serde_json::to_string(origins).map_err(storage)?)
        .execute(&mut **tx)
        .await
        .map_err(storage)?;
        Ok(())
    }

    async fn write_folder_scope(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        folder_scope: Option<&str>,
    ) -> Result<(), RepositoryError> {
        sqlx::query("DELETE FROM lce_workspace_folder WHERE workspace_id = ?")
            .bind(&self.workspace_id)
            .execute(&mut **tx)
            .await
            .map_err(storage)?;
        if let Some(scope) = folder_scope {
            sqlx::query(
                "INSERT INTO lce_workspace_folder (workspace_id, folder_scope) VALUES (?, ?)",
            )
            .bind(&self.workspace_id)
            .bind(scope)
            .execute(&mut **tx)
            .await
            .map_err(storage)?;
        }
        Ok(())
    }

    async fn stored_revision(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
    ) -> Result<Option<u64>, RepositoryError> {
        let row = sqlx::query("SELECT revision FROM lce_workspace WHERE workspace_id = ?")
            .bind(&self.workspace_id)
            .fetch_optional(&mut **tx)
            .await
            .map_err(storage)?;
        row.map(|row| row.try_get::<i64, _>(0).map_err(storage).and_then(from_i64))
            .transpose()
    }
}

fn to_i64(value: u64) -> Result<i64, RepositoryError> {
    i64::try_from(value).map_err(storage)
}

fn from_i64(value: i64) -> Result<u64, RepositoryError> {
    u64::try_from(value).map_err(storage)
}

fn row_to_file(row: &sqlx::sqlite::SqliteRow) -> Result<WorkspaceFile, RepositoryError> {
    let path: String = row.try_get("path").map_err(storage)?;
    let kind: String = row.try_get("kind").map_err(storage)?;
    let mime_type: String = row.try_get("mime_type").map_err(storage)?;
    let body: Vec<u8> = row.try_get("body").map_err(storage)?;
    if kind == "asset" {
        return Ok(WorkspaceFile {
            path,
            language: Language::Text,
            content: FileContent::Asset {
                bytes: body,
                mime_type,
            },
        });
    }
    let source = String::from_utf8(body)
        .map_err(|_| storage(format!("stored text of {path} is not UTF-8")))?;
    Ok(WorkspaceFile::text(path, source))
}

#[async_trait]
impl WorkspaceRepository for SqliteWorkspaceRepository {
    fn storage_mode(&self) -> &'static str {
        "sqlite"
    }

    async fn load(&self) -> Result<Option<StoredWorkspace>, RepositoryError> {
        let row = sqlx::query(
            "SELECT revision, active_path, origins FROM lce_workspace WHERE workspace_id = ?",
        )
        .bind(&self.workspace_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(storage)?;
        let Some(row) = row else { return Ok(None) };
        let revision = from_i64(row.try_get("revision").map_err(storage)?)?;
        let active_path: String = row.try_get("active_path").map_err(storage)?;
        let origins_json: String = row.try_get("origins").map_err(storage)?;
        let origins: BTreeMap<String, String> =
            serde_json::from_str(&origins_json).map_err(storage)?;
        let files = self.load_slot(CURRENT).await?;
        let checkpoint = self.load_slot(CHECKPOINT).await?;
        let folder_scope = sqlx::query_scalar::<_, String>(
            "SELECT folder_scope FROM lce_workspace_folder WHERE workspace_id = ?",
        )
        .bind(&self.workspace_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(storage)?;
        let pending_deletions = checkpoint
            .iter()
            .filter(|saved| !files.iter().any(|file| file.path == saved.path))
            .map(|saved| saved.path.clone())
            .collect();
        Ok(Some(StoredWorkspace {
            revision,
            active_path,
            files,
            checkpoint,
            origins,
            pending_deletions,
            folder_scope,
        }))
    }

    async fn replace(&self, stored: &StoredWorkspace) -> Result<(), RepositoryError> {
        let mut tx = self.pool.begin().await.map_err(storage)?;
        sqlx::query("DELETE FROM lce_workspace_file WHERE workspace_id = ?")
            .bind(&self.workspace_id)
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
        self.write_meta(
            &mut tx,
            stored.revision,
            &stored.active_path,
            &stored.origins,
        )
        .await?;
        for file in &stored.files {
            self.upsert(&mut tx, CURRENT, file).await?;
        }
        for file in &stored.checkpoint {
            self.upsert(&mut tx, CHECKPOINT, file).await?;
        }
        self.write_folder_scope(&mut tx, stored.folder_scope.as_deref())
            .await?;
        tx.commit().await.map_err(storage)
    }

    async fn apply(&self, delta: &WorkspaceDelta) -> Result<(), RepositoryError> {
        let mut tx = self.pool.begin().await.map_err(storage)?;
        let updated = sqlx::query(
            "UPDATE lce_workspace SET revision = ?, active_path = ?, origins = ?
             WHERE workspace_id = ? AND revision = ?",
        )
        .bind(to_i64(delta.revision)?)
        .bind(&delta.active_path)
        .bind(serde_json::to_string(&delta.origins).map_err(storage)?)
        .bind(&self.workspace_id)
        .bind(to_i64(delta.base_revision)?)
        .execute(&mut *tx)
        .await
        .map_err(storage)?;
        if updated.rows_affected() != 1 {
            let stored = self.stored_revision(&mut tx).await?;
            return Err(RepositoryError::Conflict {
                expected: delta.base_revision,
                stored,
            });
        }
        for path in &delta.remove_files {
            self.remove(&mut tx, CURRENT, path).await?;
        }
        for file in &delta.upsert_files {
            self.upsert(&mut tx, CURRENT, file).await?;
        }
        for path in &delta.remove_checkpoint {
            self.remove(&mut tx, CHECKPOINT, path).await?;
        }
        for file in &delta.upsert_checkpoint {
            self.upsert(&mut tx, CHECKPOINT, file).await?;
        }
        tx.commit().await.map_err(storage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::model::{Operation, Workspace};

    #[tokio::test]
    async fn folder_scope_survives_deltas_and_is_cleared_by_a_replace_without_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ws.sqlite");
        let repo = SqliteWorkspaceRepository::open(&path, "w1").await.unwrap();
        let ws = Workspace::new(vec![WorkspaceFile::text("index.html", "<p>")]).unwrap();
        let mut stored = ws.to_stored();
        stored.folder_scope = Some("/home/me/site".into());
        repo.replace(&stored).await.unwrap();
        let next = ws
            .apply(&Operation::Write {
                path: "index.html".into(),
                source: "<p>2".into(),
            })
            .unwrap();
        repo.apply(&WorkspaceDelta::between(&ws, &next))
            .await
            .unwrap();
        let reopened = SqliteWorkspaceRepository::open(&path, "w1").await.unwrap();
        let loaded = reopened.load().await.unwrap().unwrap();
        assert_eq!(loaded.folder_scope.as_deref(), Some("/home/me/site"));
        assert_eq!(loaded.revision, next.revision());
        reopened.replace(&next.to_stored()).await.unwrap();
        assert_eq!(reopened.load().await.unwrap().unwrap().folder_scope, None);
    }

    #[tokio::test]
    async fn round_trips_text_assets_checkpoint_and_origins() {
        let dir = tempfile::tempdir().unwrap();
        let repo = SqliteWorkspaceRepository::open(dir.path().join("ws.sqlite"), "w1")
            .await
            .unwrap();
        assert_eq!(repo.load().await.unwrap(), None);
        let ws = Workspace::new(vec![
            WorkspaceFile::text("index.html", "<h1>é</h1>"),
            WorkspaceFile::text("app.js", "1"),
            WorkspaceFile::asset("a.png", vec![0, 255, 7]),
        ])
        .unwrap();
        repo.replace(&ws.to_stored()).await.unwrap();
        let next = ws
            .apply(&Operation::Rename {
                from: "app.js".into(),
                to: "src/app.js".into(),
            })
            .unwrap()
            .apply(&Operation::Write {
                path: "src/app.js".into(),
                source: "2".into(),
            })
            .unwrap();
        let mid = ws
            .apply(&Operation::Rename {
                from: "app.js".into(),
                to: "src/app.js".into(),
            })
            .unwrap();
        repo.apply(&WorkspaceDelta::between(&ws, &mid))
            .await
            .unwrap();
        repo.apply(&WorkspaceDelta::between(&mid, &next))
            .await
            .unwrap();
        let loaded = Workspace::restore(repo.load().await.unwrap().unwrap()).unwrap();
        assert_eq!(loaded, next);
        assert_eq!(loaded.pending_deletions(), ["app.js"]);
        assert_eq!(loaded.origin_of("src/app.js"), Some("app.js"));

        let other = SqliteWorkspaceRepository::open(dir.path().join("ws.sqlite"), "w2")
            .await
            .unwrap();
        assert_eq!(
            other.load().await.unwrap(),
            None,
            "workspaces are isolated by id"
        );
    }

    #[tokio::test]
    async fn stale_delta_writes_nothing() {
        let repo = SqliteWorkspaceRepository::in_memory("w").await.unwrap();
        let ws = Workspace::new(vec![WorkspaceFile::text("index.html", "a")]).unwrap();
        let next = ws
            .apply(&Operation::Write {
                path: "index.html".into(),
                source: "b".into(),
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
        repo.replace(&next.to_stored()).await.unwrap();
        assert_eq!(
            repo.apply(&delta).await,
            Err(RepositoryError::Conflict {
                expected: 1,
                stored: Some(2)
            })
        );
        let loaded = repo.load().await.unwrap().unwrap();
        assert_eq!(loaded.files[0].source(), Some("b"));
    }
}
