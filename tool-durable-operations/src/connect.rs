//! One call from a URL to a ready store: `DurableOperationStore::connect("sqlite:ops.db")`.

use std::sync::Arc;

use crate::backend::DurableOperationBackend;
use crate::backend::memory::MemoryBackend;
use crate::error::DurableOperationError;
use crate::store::DurableOperationStore;

/// Connections a store opened from a PostgreSQL URL keeps.
#[cfg(feature = "postgres")]
pub const CONNECT_POSTGRES_MAX_CONNECTIONS: u32 = 5;

impl DurableOperationStore {
    /// Opens the store a URL names, with the backend's defaults, ready to use:
    ///
    /// | URL | Backend (feature) |
    /// |---|---|
    /// | `memory:` | [`MemoryBackend`] (this process only) |
    /// | `sqlite:PATH`, `sqlite://PATH` | `SqliteBackend::open` (`sqlite`): creates the file, its folder and the table |
    /// | `postgres://…`, `postgresql://…` | `PostgresBackend::connect` (`postgres`), default table, schema applied (`CREATE … IF NOT EXISTS`) |
    /// | `redis://…`, `rediss://…` | `RedisBackend::connect` (`redis`), default key prefix |
    ///
    /// A scheme this build has no backend for is `DURABLE_OPERATION_INVALID_INPUT`, naming
    /// the schemes it has. Use the backends' own constructors for other tables, prefixes or
    /// pool sizes, or to run the PostgreSQL migration yourself.
    pub async fn connect(url: &str) -> Result<Self, DurableOperationError> {
        Ok(Self::new(backend_for(url.trim()).await?))
    }
}

async fn backend_for(url: &str) -> Result<Arc<dyn DurableOperationBackend>, DurableOperationError> {
    let scheme = url.split_once(':').map_or("", |(scheme, _)| scheme);
    match scheme.to_ascii_lowercase().as_str() {
        "memory" => Ok(Arc::new(MemoryBackend::new())),
        #[cfg(feature = "sqlite")]
        "sqlite" => {
            let path = url["sqlite:".len()..].trim_start_matches("//");
            if path.is_empty() {
                return Err(DurableOperationError::invalid(
                    "url",
                    "a sqlite: URL names a file: sqlite:operations.db",
                ));
            }
            Ok(Arc::new(
                crate::backend::sqlite::SqliteBackend::open(path).await?,
            ))
        }
        #[cfg(feature = "postgres")]
        "postgres" | "postgresql" => {
            use crate::backend::postgres::{POSTGRES_DEFAULT_TABLE, PostgresBackend};
            let backend = PostgresBackend::connect(
                url,
                POSTGRES_DEFAULT_TABLE,
                CONNECT_POSTGRES_MAX_CONNECTIONS,
            )
            .await?;
            backend.apply_schema().await?;
            Ok(Arc::new(backend))
        }
        #[cfg(feature = "redis")]
        "redis" | "rediss" => {
            use crate::backend::redis::{REDIS_DEFAULT_PREFIX, RedisBackend};
            Ok(Arc::new(
                RedisBackend::connect(url, REDIS_DEFAULT_PREFIX).await?,
            ))
        }
        _ => Err(DurableOperationError::invalid(
            "url",
            format!(
                "no backend for \"{scheme}:\" in this build; it opens {}",
                supported_schemes().join(", ")
            ),
        )),
    }
}

/// The URL schemes this build opens (by its features).
fn supported_schemes() -> Vec<&'static str> {
    let mut schemes = vec!["memory:"];
    if cfg!(feature = "sqlite") {
        schemes.push("sqlite:");
    }
    if cfg!(feature = "postgres") {
        schemes.push("postgres://");
    }
    if cfg!(feature = "redis") {
        schemes.push("redis://");
    }
    schemes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_opens_and_an_unknown_scheme_names_the_ones_this_build_has() {
        assert!(DurableOperationStore::connect("memory:").await.is_ok());
        let error = DurableOperationStore::connect("mysql://x")
            .await
            .unwrap_err();
        assert_eq!(error.code(), "DURABLE_OPERATION_INVALID_INPUT");
        assert!(error.to_string().contains("\"mysql:\""), "{error}");
        assert!(error.to_string().contains("memory:"), "{error}");
        assert!(DurableOperationStore::connect("no scheme").await.is_err());
    }
}
