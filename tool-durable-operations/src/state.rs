//! The lifecycle state of an operation record: a leaf both the record and the error types use.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Lifecycle state of a durable operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OperationState {
    /// Claimed by an owner whose lease may still be live.
    Pending,
    /// Finished with a replayable result.
    Completed,
    /// Confirmed not to have taken effect (or failed with a known error).
    Failed,
    /// Outcome is ambiguous; needs reconciliation before any retry.
    Unknown,
}

impl OperationState {
    /// The lowercase wire name (`pending`, `completed`, `failed`, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Unknown => "unknown",
        }
    }

    /// Parses the wire name.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "pending" => Some(Self::Pending),
            "completed" => Some(Self::Completed),
            "failed" => Some(Self::Failed),
            "unknown" => Some(Self::Unknown),
            _ => None,
        }
    }

    /// Whether the state is `completed` or `failed`.
    pub fn is_settled(self) -> bool {
        matches!(self, Self::Completed | Self::Failed)
    }
}

impl fmt::Display for OperationState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
