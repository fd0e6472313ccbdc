//! Serde helpers shared by the wire types.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// Deserializes through a validator, so serde accepts exactly what the validator accepts.
pub(crate) fn deserialize_validated<'de, D, T>(
    deserializer: D,
    parse: impl FnOnce(&Value) -> Result<T, Vec<crate::validate::ValidationIssue>>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    let value = Value::deserialize(deserializer)?;
    parse(&value)
        .map_err(|issues| serde::de::Error::custom(crate::validate::describe_issues(&issues)))
}
