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
