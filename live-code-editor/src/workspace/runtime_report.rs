//! The runtime errors a preview reported for one revision: recorded by the bridge's
//! [`PreviewAcks`](super::bridge::PreviewAcks) and described by the error a failed
//! acknowledgement becomes, so neither module needs the other for it.

use serde::Serialize;

use crate::preview::PreviewRuntimeError;

/// The runtime errors a preview reported for one revision.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct RuntimeErrorReport {
    /// The revision they happened in.
    pub revision: u64,
    /// The latest [`MAX_KEPT_RUNTIME_ERRORS`](super::bridge::MAX_KEPT_RUNTIME_ERRORS), oldest
    /// first.
    pub errors: Vec<PreviewRuntimeError>,
    /// Errors of the revision not in `errors`: pushed out by later ones, or left out by the
    /// document over its rate (`dropped`).
    pub omitted: u64,
}
