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

/// Writes [`legacy_json`]-shaped `json` under `key` with its index member, as the reference did.
async fn write_legacy(
    connection: &mut redis::aio::MultiplexedConnection,
    backend: &RedisBackend<redis::aio::MultiplexedConnection>,
    key: &str,
    json: &str,
) {
    let _: () = redis::pipe()
        .atomic()
        .cmd("SET")
        .arg(backend.record_key(key))
        .arg(json)
        .cmd("ZADD")
        .arg(backend.index_key())
        .arg(0)
        .arg(hex::encode(key))
        .query_async(connection)
        .await
        .unwrap();
}

#[tokio::test]
async fn concurrent_legacy_backfills_agree_and_keep_the_stored_json() {
    let prefixes = Prefixes::default();
    let prefix = prefixes.fresh();
    let client = redis::Client::open(support::redis_url()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let seed = RedisBackend::with_prefix(connection.clone(), &prefix).unwrap();
    // A number beyond 14 significant digits and an empty array: a Lua re-encode would change both.
    let legacy = r#"{"key":"legacy-1","fingerprint":"fp-1","ownerId":"reference","revision":2,"state":"completed","result":{"id":1234567890123456789,"tags":[]},"createdAt":1700000000000,"updatedAt":1700000000000}"#;
    write_legacy(&mut connection, &seed, "legacy-1", legacy).await;
    let mut backends: Vec<Arc<dyn tool_durable_operations::DurableOperationBackend>> = Vec::new();
    for _ in 0..2 {
        let own = client.get_multiplexed_async_connection().await.unwrap();
        backends.push(Arc::new(RedisBackend::with_prefix(own, &prefix).unwrap()));
    }
    let stores = support::conformance::backfilling_stores(backends);
    let record =
        support::conformance::concurrent_backfills_agree_on_one_incarnation(&stores, "legacy-1")
            .await;
    assert_eq!(
        (record.revision, record.state),
        (2, tool_durable_operations::OperationState::Completed)
    );
    let stored: String = redis::cmd("GET")
        .arg(seed.record_key("legacy-1"))
        .query_async(&mut connection)
        .await
        .unwrap();
    let expected = legacy.replacen(
        '{',
        &format!("{{\"incarnation\":\"{}\",", record.incarnation),
        1,
    );
    assert_eq!(stored, expected, "only the incarnation was added");
    // Usable again: a retry replays the stored result.
    let claim = stores[0]
        .claim(tool_durable_operations::ClaimRequest {
            key: "legacy-1",
            fingerprint: "fp-1",
            owner_id: "rust",
            lease: None,
        })
        .await
        .unwrap();
    assert_eq!(claim.status, tool_durable_operations::ClaimStatus::Replay);
}

#[tokio::test]
async fn bulk_backfill_fixes_legacy_records_and_leaves_other_corruption() {
    let prefixes = Prefixes::default();
    let client = redis::Client::open(support::redis_url()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let backend = RedisBackend::with_prefix(connection.clone(), &prefixes.fresh()).unwrap();
    for key in ["legacy-a", "legacy-b"] {
        write_legacy(&mut connection, &backend, key, &legacy_json(key)).await;
    }
    write_legacy(&mut connection, &backend, "broken", "{not json").await;
    let store = tool_durable_operations::DurableOperationStore::new(Arc::new(backend));
    let report = store.backfill_legacy_incarnations().await.unwrap();
    assert_eq!((report.backfilled, report.raced, report.corrupt), (2, 0, 1));
    for key in ["legacy-a", "legacy-b"] {
        assert!(store.get(key).await.unwrap().is_some());
    }
    let again = store.backfill_legacy_incarnations().await.unwrap();
    assert_eq!((again.backfilled, again.corrupt), (0, 1));
}

#[tokio::test]
async fn a_store_opens_from_its_url_in_one_call() {
    support::assert_store_opens_from_url(&support::redis_url()).await;
}
