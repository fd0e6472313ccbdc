//! Typed outcomes of an agent run and the recovery actions the chat offers for each.

use crate::kit::provider_codes::provider_kind;
use serde::{Deserialize, Serialize};
use tool_protocol::{ToolCallError, codes};

/// What the person can do about a failed run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryAction {
    /// Run the same prompt (or call) again.
    Retry,
    /// Inspect the workspace again, then retry on the current revision.
    RereadAndRetry,
    /// Remount the preview and wait for its acknowledgement.
    RefreshPreview,
    /// Open the folder again (it vanished, or a write has an unknown outcome).
    ReconnectFolder,
    /// Ask the operating system for write access again.
    GrantPermission,
    /// Run the prompt with the offline local agent instead of the provider.
    UseLocalAgent,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum RunOutcome {
    /// Every planned call succeeded (or was applied with an unconfirmed preview).
    Completed {
        /// Final assistant text.
        message: String,
        /// A file the run hands to the person (a download request), delivered by the page.
        #[serde(skip_serializing_if = "Option::is_none")]
        download: Option<HandedFile>,
        /// Actions still worth offering, e.g. `refresh-preview` after a change whose preview
        /// confirmation failed.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        actions: Vec<RecoveryAction>,
    },
    /// The local agent did not act: the prompt matched nothing it can do, or does not say enough
    /// (which element, which file). The message says why and what it can do instead.
    #[serde(rename = "not-understood")]
    NotUnderstood {
        /// The reply: why nothing was done and what the agent understands.
        message: String,
    },
    /// A person, the policy or the host denied a call.
    Denied {
        /// The denied tool.
        tool: String,
        /// Why.
        message: String,
        /// Who decided (`details.decidedBy`: `person`, `policy` or `host`), when the error says.
        #[serde(rename = "decidedBy", skip_serializing_if = "Option::is_none")]
        decided_by: Option<String>,
    },
    /// The run was cancelled.
    Cancelled {
        /// What was running.
        message: String,
    },
    /// A call or the provider failed.
    Failed {
        /// Stable error code.
        code: String,
        /// Error message.
        message: String,
        /// Whether retrying may succeed.
        retryable: bool,
        /// Recovery actions to offer, most specific first.
        actions: Vec<RecoveryAction>,
    },
}

/// A file a run hands over, as `workspace.downloadFile` returned it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandedFile {
    /// File name for the download.
    pub file_name: String,
    /// MIME type.
    pub mime_type: String,
    /// `utf-8` for text, `base64` for assets.
    pub encoding: String,
    /// The content in that encoding.
    pub content: String,
}

impl RunOutcome {
    /// A completed run answering `message` (handing over nothing, offering nothing).
    pub fn completed(message: impl Into<String>) -> Self {
        Self::Completed {
            message: message.into(),
            download: None,
            actions: Vec::new(),
        }
    }

    /// The same outcome with `notes` (what a person narrowed) after a completed run's message.
    pub fn with_notes(mut self, notes: &[String]) -> Self {
        if let Self::Completed { message, .. } = &mut self {
            for note in notes {
                message.push(' ');
                message.push_str(note);
            }
        }
        self
    }

    /// A completed run whose change `error` says is applied (`details.committed`) while its
    /// preview confirmation failed: `message` plus that note, and a preview refresh to offer.
    pub fn applied_unconfirmed(message: &str, error: &ToolCallError) -> Self {
        if let Some(reported) = preview_failure(error) {
            // A refresh shows the same failure again: the person needs what broke and where.
            return Self::Completed {
                message: format!(
                    "{message} The change is applied, but the preview failed with it: {reported}"
                ),
                download: None,
                actions: Vec::new(),
            };
        }
        Self::Completed {
            message: format!("{message} {}", unconfirmed_preview_note(error)),
            download: None,
            actions: vec![RecoveryAction::RefreshPreview],
        }
    }

    /// The outcome of a run stopped by `error` (from a tool call or the provider). A committed
    /// error is no failure: its change is applied.
    pub fn from_error(tool: &str, error: &ToolCallError, via_provider: bool) -> Self {
        if error.is_committed() {
            return Self::applied_unconfirmed(&format!("Applied: {tool}."), error);
        }
        match error.code.as_str() {
            codes::TOOL_POLICY_DENIED => Self::Denied {
                tool: tool.to_owned(),
                message: error.message.clone(),
                decided_by: error
                    .details
                    .as_ref()
                    .and_then(|details| details.get(tool_context::DECIDED_BY_KEY))
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned),
            },
            // The provider's own cancellation code is the same user stop as a local one.
            code if code == codes::TOOL_CANCELLED || provider_kind(code) == Some("CANCELLED") => {
                Self::Cancelled {
                    message: error.message.clone(),
                }
            }
            _ => Self::Failed {
                code: error.code.clone(),
                message: error.message.clone(),
                retryable: error.is_retryable(),
                actions: recovery_actions(error, via_provider),
            },
        }
    }

    /// The status label (`completed`, `not-understood`, `denied`, `cancelled`, `failed`).
    pub fn status(&self) -> &'static str {
        match self {
            Self::Completed { .. } => "completed",
            Self::NotUnderstood { .. } => "not-understood",
            Self::Denied { .. } => "denied",
            Self::Cancelled { .. } => "cancelled",
            Self::Failed { .. } => "failed",
        }
    }
}

/// Says a change is applied but its preview did not confirm it, naming the code.
/// What the preview reported when `error` is its runtime error: the first failure (with its
/// file position when known) and the revision's other runtime errors.
fn preview_failure(error: &ToolCallError) -> Option<String> {
    if error.code != "PREVIEW_RUNTIME_ERROR" {
        return None;
    }
    let details = error.details.as_ref();
    let first = details
        .and_then(|details| details.get("message"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or("a runtime error");
    let others: Vec<&str> = details
        .and_then(|details| details.get("runtimeErrors"))
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(serde_json::Value::as_str)
        .collect();
    Some(match others.as_slice() {
        [] => format!("{first}."),
        reported => format!("{first}. Reported: {}", reported.join("; ")),
    })
}

fn unconfirmed_preview_note(error: &ToolCallError) -> String {
    format!(
        "The change is applied; the preview did not confirm it ({}), so refresh the preview.",
        error.code
    )
}

/// The recovery actions for a failure: a specific action for known codes, `Retry` when the
/// error is retryable, and the local agent for provider failures.
pub fn recovery_actions(error: &ToolCallError, via_provider: bool) -> Vec<RecoveryAction> {
    let mut actions = Vec::new();
    match error.code.as_str() {
        "WORKSPACE_REVISION_CONFLICT" => actions.push(RecoveryAction::RereadAndRetry),
        "PREVIEW_ACK_TIMEOUT" | "PREVIEW_REVISION_SUPERSEDED" => {
            actions.push(RecoveryAction::RefreshPreview)
        }
        "WORKSPACE_FOLDER_STALE"
        | "WORKSPACE_SIDE_EFFECT_UNKNOWN"
        | "WORKSPACE_FOLDER_NOT_CONNECTED" => {
            actions.push(RecoveryAction::ReconnectFolder);
        }
        "WORKSPACE_FOLDER_PERMISSION_DENIED" => actions.push(RecoveryAction::GrantPermission),
        _ => {}
    }
    let ambiguous = matches!(
        error.code.as_str(),
        "WORKSPACE_SIDE_EFFECT_UNKNOWN" | codes::TOOL_IDEMPOTENCY_UNKNOWN
    );
    if error.is_retryable() && !ambiguous && !actions.contains(&RecoveryAction::RereadAndRetry) {
        actions.push(RecoveryAction::Retry);
    }
    if via_provider && provider_kind(&error.code).is_some() {
        actions.push(RecoveryAction::UseLocalAgent);
    }
    actions
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(code: &str, retryable: bool) -> ToolCallError {
        ToolCallError::new(code, "m").with_retryable(retryable)
    }

    #[test]
    fn denials_and_cancellations_are_their_own_outcomes() {
        assert_eq!(
            RunOutcome::from_error("t", &error(codes::TOOL_POLICY_DENIED, false), false).status(),
            "denied"
        );
        assert_eq!(
            RunOutcome::from_error("t", &error(codes::TOOL_CANCELLED, true), false).status(),
            "cancelled"
        );
    }

    #[test]
    fn a_denial_says_who_decided() {
        let by_person = error(codes::TOOL_POLICY_DENIED, false)
            .with_details(serde_json::json!({"decidedBy": "person"}));
        let outcome = RunOutcome::from_error("t", &by_person, false);
        assert_eq!(
            serde_json::to_value(&outcome).unwrap()["decidedBy"],
            "person"
        );
        let unsaid = RunOutcome::from_error("t", &error(codes::TOOL_POLICY_DENIED, false), false);
        assert!(
            serde_json::to_value(&unsaid)
                .unwrap()
                .get("decidedBy")
                .is_none()
        );
    }

    #[test]
    fn a_cancelled_provider_run_is_cancelled_not_failed() {
        let cancelled = error(openrouter_tool_loop::codes::OPENROUTER_CANCELLED, true);
        let outcome = RunOutcome::from_error("openrouter", &cancelled, true);
        assert_eq!(outcome.status(), "cancelled");
        assert!(matches!(outcome, RunOutcome::Cancelled { .. }));
    }

    #[test]
    fn recovery_actions_follow_the_code() {
        use RecoveryAction::*;
        assert_eq!(
            recovery_actions(&error("WORKSPACE_REVISION_CONFLICT", true), false),
            [RereadAndRetry]
        );
        assert_eq!(
            recovery_actions(&error("PREVIEW_ACK_TIMEOUT", true), false),
            [RefreshPreview, Retry]
        );
        assert_eq!(
            recovery_actions(&error("WORKSPACE_FOLDER_STALE", true), false),
            [ReconnectFolder, Retry]
        );
        assert_eq!(
            recovery_actions(&error("WORKSPACE_SIDE_EFFECT_UNKNOWN", false), false),
            [ReconnectFolder]
        );
        assert_eq!(
            recovery_actions(&error("WORKSPACE_FOLDER_PERMISSION_DENIED", true), false),
            [GrantPermission, Retry]
        );
        assert_eq!(
            recovery_actions(&error("WORKSPACE_SOURCE_LIMIT", false), false),
            []
        );
        assert_eq!(
            recovery_actions(&error("OPENROUTER_RATE_LIMITED", true), true),
            [Retry, UseLocalAgent]
        );
        assert_eq!(
            recovery_actions(&error("OPENROUTER_AUTHENTICATION_FAILED", false), true),
            [UseLocalAgent]
        );
        let committed = error("PREVIEW_ACK_TIMEOUT", true)
            .with_details(serde_json::json!({"committed": true, "revision": 4}));
        assert_eq!(
            RunOutcome::from_error("preview.setTheme", &committed, false),
            RunOutcome::Completed {
                message: "Applied: preview.setTheme. The change is applied; the preview did not \
                          confirm it (PREVIEW_ACK_TIMEOUT), so refresh the preview."
                    .into(),
                download: None,
                actions: vec![RefreshPreview]
            },
            "an applied change is never reported as failed or offered for retry"
        );
        let broke = error("PREVIEW_RUNTIME_ERROR", false).with_details(serde_json::json!({
            "committed": true, "revision": 6,
            "message": "Uncaught TypeError: x is undefined (src/App.tsx:5:40)",
            "runtimeErrors": ["src/main.tsx:2:9: starting 1", "src/App.tsx:5:40: Uncaught TypeError: x is undefined"],
        }));
        assert_eq!(
            RunOutcome::from_error("workspace.writeFile", &broke, false),
            RunOutcome::Completed {
                message: "Applied: workspace.writeFile. The change is applied, but the preview \
                          failed with it: Uncaught TypeError: x is undefined (src/App.tsx:5:40). \
                          Reported: src/main.tsx:2:9: starting 1; src/App.tsx:5:40: Uncaught \
                          TypeError: x is undefined"
                    .into(),
                download: None,
                actions: vec![]
            },
            "a change that broke the preview says what broke and where, not that it worked"
        );
        let failed = RunOutcome::from_error("t", &error("TOOL_TIMEOUT", true), false);
        assert_eq!(
            failed,
            RunOutcome::Failed {
                code: "TOOL_TIMEOUT".into(),
                message: "m".into(),
                retryable: true,
                actions: vec![Retry]
            }
        );
    }
}
