//! Input types of the workspace and preview tools. Their JSON Schemas (derived with
//! `schemars`) carry every bound, so the registry rejects out-of-bound arguments before a
//! policy, an approval prompt or a handler sees them.

use live_code_editor::workspace::ImportGuard;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::preview_edits::Theme;

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoInput {}

/// Only a revision guard.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct GuardInput {
    /// The revision the caller last read; a different current revision rejects the call.
    #[schemars(range(min = 0))]
    pub expected_revision: Option<u64>,
}

/// A revision guard for an operation that replaces the whole workspace.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ReplaceInput {
    /// The revision the caller last read; a different current revision rejects the call.
    #[schemars(range(min = 0))]
    pub expected_revision: Option<u64>,
    /// Replace unsaved edits and pending deletions. Without it the call fails with
    /// `WORKSPACE_FOLDER_STATE_CONFLICT` (listing them) while any exist.
    #[serde(default)]
    pub discard_changes: bool,
}

impl ReplaceInput {
    /// The manager's guard for these arguments.
    pub(crate) fn guard(&self) -> ImportGuard {
        ImportGuard::at(self.expected_revision).discarding(self.discard_changes)
    }
}

/// A workspace path.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct PathInput {
    /// Workspace-relative path (slashes, no `..`).
    #[schemars(length(min = 1, max = 160))]
    pub path: String,
}

/// A workspace path with a revision guard.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct GuardedPathInput {
    /// Workspace-relative path (slashes, no `..`).
    #[schemars(length(min = 1, max = 160))]
    pub path: String,
    /// The revision the caller last read.
    #[schemars(range(min = 0))]
    pub expected_revision: Option<u64>,
}

/// A path and its full source.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SourceInput {
    /// Workspace-relative path (slashes, no `..`).
    #[schemars(length(min = 1, max = 160))]
    pub path: String,
    /// The complete file source (at most 80,000 characters).
    #[schemars(length(max = 80_000))]
    pub source: String,
    /// The revision the caller last read.
    #[schemars(range(min = 0))]
    pub expected_revision: Option<u64>,
}

/// A rename.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RenameInput {
    /// Current path.
    #[schemars(length(min = 1, max = 160))]
    pub from_path: String,
    /// New path (same kind: text stays text, assets stay assets).
    #[schemars(length(min = 1, max = 160))]
    pub to_path: String,
    /// The revision the caller last read.
    #[schemars(range(min = 0))]
    pub expected_revision: Option<u64>,
}

/// Which matches a patch replaces.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum OccurrenceInput {
    /// Only the first match.
    #[default]
    First,
    /// Every match.
    All,
}

/// A literal search/replace.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct PatchInput {
    /// Workspace-relative path of a text file.
    #[schemars(length(min = 1, max = 160))]
    pub path: String,
    /// Exact text to find (1 to 20,000 characters).
    #[schemars(length(min = 1, max = 20_000))]
    pub search: String,
    /// Replacement text (at most 20,000 characters).
    #[schemars(length(max = 20_000))]
    pub replace: String,
    /// `first` (default) or `all`.
    #[serde(default)]
    pub occurrence: OccurrenceInput,
    /// The revision the caller last read.
    #[schemars(range(min = 0))]
    pub expected_revision: Option<u64>,
}

/// A theme change.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ThemeInput {
    /// One of `violet`, `emerald`, `amber`, `rose`.
    pub theme: Theme,
    /// The revision the caller last read.
    #[schemars(range(min = 0))]
    pub expected_revision: Option<u64>,
}

/// A feature card.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct FeatureInput {
    /// Card title (1 to 70 characters).
    #[schemars(length(min = 1, max = 70))]
    pub title: String,
    /// Card text (1 to 160 characters).
    #[schemars(length(min = 1, max = 160))]
    pub description: String,
    /// The revision the caller last read.
    #[schemars(range(min = 0))]
    pub expected_revision: Option<u64>,
}

/// New hero copy; at least one part.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend("anyOf" = [{"required": ["title"]}, {"required": ["subtitle"]}]))]
pub(crate) struct HeroInput {
    /// Hero title (1 to 90 characters).
    #[schemars(length(min = 1, max = 90))]
    pub title: Option<String>,
    /// Hero subtitle (1 to 180 characters).
    #[schemars(length(min = 1, max = 180))]
    pub subtitle: Option<String>,
    /// The revision the caller last read.
    #[schemars(range(min = 0))]
    pub expected_revision: Option<u64>,
}
