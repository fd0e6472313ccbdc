//! Conformance of the Redis backend against a real server (REDIS_URL, default local), on a
//! plain multiplexed connection and on a reconnecting ConnectionManager. Each test uses its
//! own key prefix and deletes its keys afterwards.
#![cfg(feature = "redis")]

mod support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use support::conformance::BackendFactory;
use tool_durable_operations::DurableOperationBackend;
use tool_durable_operations::backend::redis::RedisBackend;

/// Deletes every key under the prefixes it opened, when dropped.
#[derive(Default)]
struct Prefixes(Mutex<Vec<String>>);

impl Prefixes {
    fn fresh(&self) -> String {
        let prefix = format!("test:durable-operation:{}:", support::unique_suffix());
        self.0.lock().unwrap().push(prefix.clone());
        prefix
    }
}

impl Drop for Prefixes {
    fn drop(&mut self) {
        let Ok(client) = redis::Client::open(support::redis_url()) else {
            return;
        };
        let Ok(mut connection) = client.get_connection() else {
            return;
        };
        for prefix in self.0.lock().unwrap().iter() {
            let keys: Vec<String> = redis::cmd("KEYS")
                .arg(format!("{prefix}*"))
                .query(&mut connection)
                .unwrap_or_default();
            if !keys.is_empty() {
                let _: redis::RedisResult<()> = redis::cmd("DEL").arg(keys).query(&mut connection);
            }
        }
    }
}

#[derive(Default)]
struct Multiplexed(Prefixes);

#[async_trait]
impl BackendFactory for Multiplexed {
    async fn open(&self, connections: usize) -> Vec<Arc<dyn DurableOperationBackend>> {
        let prefix = self.0.fresh();
        let mut backends: Vec<Arc<dyn DurableOperationBackend>> = Vec::new();
        for _ in 0..connections {
            let client = redis::Client::open(support::redis_url()).unwrap();
            let connection = client.get_multiplexed_async_connection().await.unwrap();
            backends.push(Arc::new(
                RedisBackend::with_prefix(connection, &prefix).unwrap(),
            ));
        }
        backends
    }
}

#[derive(Default)]
struct Managed(Prefixes);

#[async_trait]
impl BackendFactory for Managed {
    async fn open(&self, connections: usize) -> Vec<Arc<dyn DurableOperationBackend>> {
        let prefix = self.0.fresh();
        let mut backends: Vec<Arc<dyn DurableOperationBackend>> = Vec::new();
        for _ in 0..connections {
            let client = redis::Client::open(support::redis_url()).unwrap();
            let manager = client.get_connection_manager().await.unwrap();
            backends.push(Arc::new(
                RedisBackend::with_prefix(manager, &prefix).unwrap(),
            ));
        }
        backends
    }
}

mod multiplexed {
    use super::*;
    conformance_suite!(Multiplexed::default());
}

mod connection_manager {
    use super::*;
    conformance_suite!(Managed::default());
}

#[tokio::test]
async fn layout_matches_the_reference_and_script_reloads_after_flush() {
    let prefixes = Prefixes::default();
    let prefix = prefixes.fresh();
    let client = redis::Client::open(support::redis_url()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let backend = RedisBackend::with_prefix(connection.clone(), &prefix).unwrap();
    assert_eq!(backend.record_key("é"), format!("{prefix}record:c3a9"));
    assert_eq!(backend.index_key(), format!("{prefix}index"));
    let store = tool_durable_operations::DurableOperationStore::new(Arc::new(backend.clone()));
    let request = tool_durable_operations::ClaimRequest {
        key: "é",
        fingerprint: "f",
        owner_id: "o",
        lease: None,
    };
    // Drop cached scripts so the first CAS must fall back from EVALSHA to EVAL.
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut connection)
        .await
        .unwrap();
    let claim = store.claim(request).await.unwrap();
    let stored: String = redis::cmd("GET")
        .arg(backend.record_key("é"))
        .query_async(&mut connection)
        .await
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(json["incarnation"], claim.fence.incarnation.as_str());
    assert_eq!(json["revision"], 1);
    assert_eq!(json["ownerId"], "o");
    let members: Vec<(String, f64)> = redis::cmd("ZRANGE")
        .arg(backend.index_key())
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query_async(&mut connection)
        .await
        .unwrap();
    assert_eq!(members, [("c3a9".to_owned(), 0.0)]);
    // Corrupt values surface as coded errors, never as a missing record.
    let _: () = redis::cmd("SET")
        .arg(backend.record_key("bad"))
        .arg("{not json")
        .query_async(&mut connection)
        .await
        .unwrap();
    assert_eq!(
        store.get("bad").await.unwrap_err().code(),
        "DURABLE_OPERATION_CORRUPT_RECORD"
    );
    assert_eq!(
        backend
            .list_page(Some("NOT-HEX"), 1)
            .await
            .unwrap_err()
            .code(),
        "DURABLE_OPERATION_INVALID_INPUT"
    );
    assert!(RedisBackend::with_prefix(connection, " ").is_err());
}

#[tokio::test]
async fn connect_and_ping_report_coded_backend_errors() {
    let prefixes = Prefixes::default();
    let backend = RedisBackend::connect(&support::redis_url(), &prefixes.fresh())
        .await
        .unwrap();
    backend.ping().await.unwrap();
    // Nothing listens on port 1: a coded, retryable backend error rather than a panic or a hang.
    let err = RedisBackend::connect("redis://127.0.0.1:1", "p:")
        .await
        .unwrap_err();
    assert_eq!(err.code(), "DURABLE_OPERATION_BACKEND_FAILED");
    assert!(err.is_retryable());
}

/// A record as the TypeScript reference wrote it before fencing: no `incarnation`.
fn legacy_json(key: &str) -> String {
    serde_json::json!({
        "key": key, "fingerprint": "fp-1", "ownerId": "reference", "revision": 2,
        "state": "completed", "result": {"ok": true},
        "createdAt": support::conformance::T0, "updatedAt": support::conformance::T0,
    })
    .to_string()
}

#[tokio::test]
async fn prune_skips_and_reports_a_legacy_record_without_incarnation() {
    let prefixes = Prefixes::default();
    let client = redis::Client::open(support::redis_url()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let backend = RedisBackend::with_prefix(connection.clone(), &prefixes.fresh()).unwrap();
    let clock = tool_durable_operations::ManualClock::new(support::conformance::T0);
    let store = support::conformance::pruning_store(Arc::new(backend.clone()), &clock);
    support::conformance::settle_good_records_and_age_them(&store, &clock).await;
    let _: () = redis::pipe()
        .atomic()
        .cmd("SET")
        .arg(backend.record_key("m-legacy"))
        .arg(legacy_json("m-legacy"))
        .cmd("ZADD")
        .arg(backend.index_key())
        .arg(0)
        .arg(hex::encode("m-legacy"))
        .query_async(&mut connection)
        .await
        .unwrap();
    support::conformance::prune_skips_and_reports_the_corrupt_record(&store, "m-legacy").await;
    // The same error as on every other backend.
    assert_eq!(
        store.get("m-legacy").await.unwrap_err(),
        tool_durable_operations::DurableOperationError::CorruptRecord(
            tool_durable_operations::record::MISSING_INCARNATION.into()
        )
    );
}
