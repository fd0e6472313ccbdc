//! Shared test support: the backend conformance suite and helpers.
#![allow(dead_code)]

pub mod conformance;

/// A unique lowercase suffix for schemas, prefixes and files.
pub fn unique_suffix() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// `DATABASE_URL` or the local default.
pub fn database_url() -> String {
    std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// `REDIS_URL` or the local default.
pub fn redis_url() -> String {
    std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

/// Opens a store from `url` with `DurableOperationStore::connect` and claims a fresh key
/// through it, so the one-call store is shown to reach the backend.
pub async fn assert_store_opens_from_url(url: &str) {
    let store = tool_durable_operations::DurableOperationStore::connect(url)
        .await
        .unwrap();
    let key = format!("by-url-{}", unique_suffix());
    let claim = store
        .claim(tool_durable_operations::store::ClaimRequest::new(
            &key, "fp", "owner",
        ))
        .await
        .unwrap();
    assert_eq!(claim.record.key, key);
    assert!(store.get(&key).await.unwrap().is_some());
}
