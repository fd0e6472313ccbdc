//! Serde helpers shared by the wire types.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// Deserializes a present field as `Some`, even when its value is JSON `null`, so an explicit
/// `null` is kept apart from an absent field (absent fields use `#[serde(default)]`).
pub(crate) fn present<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}
