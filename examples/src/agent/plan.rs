//! The plan vocabulary every surface's local-agent planner speaks: what a prompt asked for
//! ([`Intent`]), the calls to make ([`PlannedCall`], [`Plan`]) or why none are made
//! ([`Stop`]). The runner sends a plan's calls through the registry's model-call path, fills
//! the observed revision into guarded calls and stops at the first failure.

use serde_json::{Map, Value};
use tool_protocol::ToolCallError;

use super::guards::{RevisionGuard, revision_guard};

/// What the prompt asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    /// Inspect the workspace status.
    Status,
    /// Remount the preview and await its acknowledgement.
    RefreshPreview,
    /// Step back in the edit history.
    Undo,
    /// Step forward in the edit history.
    Redo,
    /// Change the accent theme.
    SetTheme,
    /// Change the hero copy.
    UpdateHero,
    /// Add a feature card.
    AddFeature,
    /// Create a file.
    CreateFile,
    /// Replace exact text in a file.
    ReplaceText,
    /// Save to the folder (or the browser checkpoint).
    Save,
    /// Re-read the linked folder.
    ReloadFolder,
    /// Unlink the folder.
    DisconnectFolder,
    /// Download a file.
    Download,
    /// Delete a file.
    DeleteFile,
    /// Revert a file to its checkpoint.
    RevertFile,
    /// Open a file in the editor.
    OpenFile,
    /// Read a file.
    ReadFile,
    /// Restore the seed workspace.
    Reset,
    /// Replace the Live Code Editor document.
    SetDocument,
    /// Change the Live Code Editor's safe runner scenario.
    SetScenario,
    /// Restyle the Design Mode selection (a CSS rule for its selector).
    DesignEdit,
    /// A prompt about the selected element, but no element is selected.
    SelectionRequired,
    /// A prompt about the selected element without a change the agent knows.
    DesignChangeUnknown,
    /// A Design Mode change, but the workspace has no stylesheet to hold it.
    StylesheetRequired,
    /// Nothing recognised: the run calls nothing and lists what the agent understands.
    Help,
}

impl Intent {
    /// Whether the intent is a destructive or history command, planned only from a prompt that
    /// is that command (see `understanding::CommandForm::matches`).
    pub fn is_command(self) -> bool {
        matches!(
            self,
            Self::Undo
                | Self::Redo
                | Self::Save
                | Self::Reset
                | Self::ReloadFolder
                | Self::DisconnectFolder
                | Self::DeleteFile
                | Self::RevertFile
        )
    }
}

/// Why a plan does not act, and what its run answers instead; a stopped plan calls no tool.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// The prompt matches nothing the agent can do, or does not say enough (which element,
    /// which file): the run ends `not-understood` with this reply.
    NotUnderstood(String),
    /// The change needs something the workspace lacks: the run fails with the error the tool
    /// would return, before any approval is asked for.
    Unavailable(ToolCallError),
}

/// One call of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCall {
    /// Canonical tool name.
    pub name: &'static str,
    /// Arguments, without `expectedRevision` (the runner adds it for guarded tools).
    pub arguments: Map<String, Value>,
}

impl PlannedCall {
    /// A call of `name` with `arguments` (an object; anything else becomes `{}`).
    pub fn new(name: &'static str, arguments: Value) -> Self {
        let arguments = match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Self { name, arguments }
    }

    /// Whether the runner must add an observed revision to the call.
    pub fn is_revision_guarded(&self) -> bool {
        self.revision_guard().is_some()
    }

    /// Which observed revision the runner adds, and as which argument.
    pub fn revision_guard(&self) -> Option<RevisionGuard> {
        revision_guard(self.name)
    }
}

/// A plan: the recognised intent and its calls, preflight first, or why it does not act.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The recognised intent.
    pub intent: Intent,
    /// Calls in execution order (inspection preflight, then the action); empty when stopped.
    pub calls: Vec<PlannedCall>,
    /// Why the plan does not act, if it does not.
    pub stop: Option<Stop>,
}

impl Plan {
    /// A plan running `calls`.
    pub fn acting(intent: Intent, calls: Vec<PlannedCall>) -> Self {
        Self {
            intent,
            calls,
            stop: None,
        }
    }

    /// A plan that calls nothing and answers `stop`.
    pub fn stopped(intent: Intent, stop: Stop) -> Self {
        Self {
            intent,
            calls: Vec::new(),
            stop: Some(stop),
        }
    }
}

/// A recognised action: the call to make (`None` for a status read), or why there is none.
pub type Action = Result<Option<PlannedCall>, Stop>;
