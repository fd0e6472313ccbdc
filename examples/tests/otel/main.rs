//! The studio's OpenTelemetry export, read back from a real Arize Phoenix.

#[path = "../support/mod.rs"]
pub mod support;

mod otel_phoenix;
