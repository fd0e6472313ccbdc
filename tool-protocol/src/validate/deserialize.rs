//! The `Deserialize` impls of the wire types. They live with the validators, not with the
//! types, so serde accepts exactly what the `parse_*` functions accept and the type modules stay
//! free of validation.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::{
    ValidationIssue, describe_issues, parse_tool_call_error, parse_tool_call_request,
    parse_tool_call_result, parse_tool_definition, parse_tool_list_request, parse_tool_list_result,
};
use crate::definition::ToolDefinition;
use crate::error::ToolCallError;
use crate::request::{ToolCallRequest, ToolListRequest, ToolListResult};
use crate::result::ToolCallResult;

/// Deserializes through a validator, so serde accepts exactly what the validator accepts.
pub(crate) fn deserialize_validated<'de, D, T>(
    deserializer: D,
    parse: impl FnOnce(&Value) -> Result<T, Vec<ValidationIssue>>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    let value = Value::deserialize(deserializer)?;
    parse(&value).map_err(|issues| serde::de::Error::custom(describe_issues(&issues)))
}

impl<'de> Deserialize<'de> for ToolDefinition {
    /// Accepts exactly what [`parse_tool_definition`] accepts.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_validated(deserializer, parse_tool_definition)
    }
}

impl<'de> Deserialize<'de> for ToolCallError {
    /// Accepts exactly what [`parse_tool_call_error`] accepts.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_validated(deserializer, parse_tool_call_error)
    }
}

impl<'de> Deserialize<'de> for ToolCallRequest {
    /// Accepts exactly what [`parse_tool_call_request`] accepts.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_validated(deserializer, parse_tool_call_request)
    }
}

impl<'de> Deserialize<'de> for ToolListRequest {
    /// Accepts exactly what [`parse_tool_list_request`] accepts for a present value.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_validated(deserializer, |value| {
            parse_tool_list_request(Some(value)).map(Option::unwrap_or_default)
        })
    }
}

impl<'de> Deserialize<'de> for ToolListResult {
    /// Accepts exactly what [`parse_tool_list_result`] accepts.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_validated(deserializer, parse_tool_list_result)
    }
}

impl<'de> Deserialize<'de> for ToolCallResult {
    /// Accepts exactly what [`parse_tool_call_result`] accepts.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_validated(deserializer, parse_tool_call_result)
    }
}
