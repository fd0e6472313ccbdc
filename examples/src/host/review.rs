//! Reviewing a pending approval: what the call would change, as a diff against the revision it
//! would apply to, and the narrowed call a person's per-hunk acceptance stands for.
//!
//! Diffs are computed on request for the page that holds the studio token; they are never put
//! in the approval record, the trace, events or logs. A narrowed call keeps the call's revision
//! guard (or pins the revision the diff was computed against), so a target that changed after
//! the diff was shown is refused with the revision conflict, as any stale edit is.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::Response;
use live_code_editor::diff::{LineTag, WorkspaceDiff, narrow, narrowed_patch};
use live_code_editor::normalize_workspace_path;
use live_code_editor::workspace::{Occurrence, Operation, Workspace};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tool_context::{ApprovalDecision, ApprovedChanges, PendingCall};

use super::StudioState;
use crate::kit::approval_note::changes_note;
use crate::kit::error::StudioError;
use crate::kit::responses::no_store_json;
use crate::preview_edits::{self, Theme, html_entry_path, stylesheet_path};
use crate::surfaces::is_studio_tool;

/// Most hunk indices one decision may name.
const MAX_DECIDED_HUNKS: usize = live_code_editor::diff::MAX_DIFF_HUNKS;

/// Longest literal a narrowed patch may carry (the patch tools' own bound).
pub(crate) const MAX_NARROWED_PATCH_CHARS: usize = 20_000;

/// What a call would do to its surface's workspace.
#[derive(Debug)]
pub(crate) struct Proposal {
    before: Workspace,
    after: Option<Workspace>,
    narrowing: Option<Narrowing>,
    effect: Option<&'static str>,
    /// The call's `expectedRevision` when it is not the current one (the call will be refused).
    stale_guard: Option<u64>,
    /// The MCP server a mounted tool runs on: the studio has no diff of what it does.
    remote: Option<String>,
}

/// How a one-file text edit is narrowed to the hunks a person accepted.
#[derive(Debug, Clone)]
struct Narrowing {
    path: String,
    style: NarrowStyle,
    /// The argument holding the revision guard the narrowed call must carry.
    revision_argument: Option<&'static str>,
}

#[derive(Debug, Clone, Copy)]
enum NarrowStyle {
    /// The call carries the whole new source in `source`.
    Source,
    /// The call is a literal search/replace.
    Patch,
}

/// The diff answer of `GET /api/approvals/{id}/diff`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReviewView {
    /// The approval.
    pub approval_id: String,
    /// The tool asked for.
    pub tool: String,
    /// The workspace revision the diff was computed against.
    pub revision: u64,
    /// The change, or `None` when this call's effect cannot be shown as files.
    pub diff: Option<WorkspaceDiff>,
    /// The one file whose hunks may be accepted one by one, when the call allows that.
    pub narrowable_path: Option<String>,
    /// What a destructive or history-changing call loses, and whether undo brings it back.
    pub effect: Option<&'static str>,
    /// Why no diff is shown (the call would fail as it stands, or has no file change to show).
    pub note: Option<String>,
    /// The arguments the call runs with, exactly.
    pub arguments: Map<String, Value>,
    /// Their fingerprint (`sha256:<hex>` of name and canonical arguments): an approval that
    /// sends it back as `argumentsDigest` runs only these arguments.
    pub arguments_digest: String,
}

/// Why a review or a narrowed approval was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewRefusal {
    /// The diff changed since the person saw it (the digest differs).
    DiffChanged,
    /// The call is not a one-file text edit, so its hunks cannot be taken one by one.
    NotNarrowable,
    /// A hunk index the change does not have.
    UnknownHunk(String),
    /// The narrowed edit does not fit the tool's argument bounds.
    TooLarge,
}

impl ReviewRefusal {
    /// The stable code of the refusal.
    pub fn code(&self) -> &'static str {
        match self {
            Self::DiffChanged => "STUDIO_DIFF_CHANGED",
            Self::NotNarrowable => "STUDIO_APPROVAL_NOT_NARROWABLE",
            Self::UnknownHunk(_) => "STUDIO_UNKNOWN_HUNK",
            Self::TooLarge => "STUDIO_NARROWED_EDIT_TOO_LARGE",
        }
    }

    /// What the person reads.
    pub fn message(&self) -> String {
        match self {
            Self::DiffChanged => "The proposed change or its file changed since this diff was shown; review the new diff before deciding.".into(),
            Self::NotNarrowable => "This call cannot be accepted hunk by hunk; allow or deny it whole.".into(),
            Self::UnknownHunk(message) => message.clone(),
            Self::TooLarge => format!("The accepted hunks do not fit one patch of at most {MAX_NARROWED_PATCH_CHARS} characters; accept all hunks or deny the call."),
        }
    }
}

/// The proposal of tool `name` called with `args`, from the state of the surface it belongs to.
pub(crate) async fn proposal(
    state: &StudioState,
    name: &str,
    args: &Map<String, Value>,
) -> Proposal {
    let (surface, tool) = name.split_once('.').unwrap_or(("", name));
    if !is_studio_tool(name) {
        // A mounted MCP tool: whatever its name or arguments look like, it does not touch this
        // workspace, so no workspace diff stands for it.
        return Proposal {
            before: state.workspace.manager().snapshot().await,
            after: None,
            narrowing: None,
            effect: None,
            stale_guard: None,
            remote: Some(surface.to_owned()),
        };
    }
    let manager = match surface {
        "editor" => state.editor.manager(),
        "web" => state.web.manager(),
        _ => state.workspace.manager(),
    };
    let (before, planned) = match (surface, tool) {
        ("workspace", "undo" | "redo") => {
            let (before, after) = manager.preview_history_step(tool == "undo").await;
            let planned = after.map(|after| Planned {
                after,
                narrowing: None,
            });
            (before, planned)
        }
        ("workspace", "reloadFolder") => match manager.preview_reload_folder().await {
            Ok((before, after)) => (
                before,
                Some(Planned {
                    after,
                    narrowing: None,
                }),
            ),
            Err(_) => (manager.snapshot().await, None),
        },
        ("editor", "resetDocument") => {
            let before = manager.snapshot().await;
            let scenario = state.editor.scenario().await;
            let planned = scenario_reset(&before, scenario);
            (before, planned)
        }
        ("editor", _) => {
            let before = manager.snapshot().await;
            let planned = editor_change(tool, args, &before);
            (before, planned)
        }
        _ => {
            let before = manager.snapshot().await;
            let planned = workspace_change(tool, args, &before);
            (before, planned)
        }
    };
    let effect = effect_of(name);
    let stale_guard = args
        .get("expectedRevision")
        .and_then(Value::as_u64)
        .filter(|&expected| surface != "editor" && expected != before.revision());
    let (after, narrowing) = match planned {
        Some(Planned { after, narrowing }) => (Some(after), narrowing),
        None => (None, None),
    };
    Proposal {
        before,
        after,
        narrowing,
        effect,
        stale_guard,
        remote: None,
    }
}

struct Planned {
    after: Workspace,
    narrowing: Option<Narrowing>,
}

fn text(args: &Map<String, Value>, key: &str) -> Option<String> {
    args.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn occurrence(args: &Map<String, Value>) -> Occurrence {
    match args.get("occurrence").and_then(Value::as_str) {
        Some("all") => Occurrence::All,
        _ => Occurrence::First,
    }
}

/// `workspace.*`, `preview.*` and `web.*` mutations over a workspace snapshot. A call that
/// would fail as it stands (an unknown file, a missing match) has no proposal.
fn workspace_change(tool: &str, args: &Map<String, Value>, before: &Workspace) -> Option<Planned> {
    let path = text(args, "path");
    // The narrowable file is named as the diff names it (normalized), so the page can match.
    let edit = |path: String, style| {
        Some(Narrowing {
            path: normalize_workspace_path(&path).ok()?,
            style,
            revision_argument: Some("expectedRevision"),
        })
    };
    let (operation, narrowing) = match tool {
        "writeFile" => {
            let path = path?;
            let source = text(args, "source")?;
            (
                Operation::Write {
                    path: path.clone(),
                    source,
                },
                edit(path, NarrowStyle::Source),
            )
        }
        "applyPatch" => {
            let path = path?;
            let operation = Operation::Patch {
                path: path.clone(),
                search: text(args, "search")?,
                replace: text(args, "replace").unwrap_or_default(),
                occurrence: occurrence(args),
            };
            (operation, edit(path, NarrowStyle::Patch))
        }
        "createFile" => (
            Operation::Create {
                path: path?,
                source: text(args, "source").unwrap_or_default(),
            },
            None,
        ),
        "deleteFile" => (Operation::Delete { path: path? }, None),
        "revertFile" => (Operation::Revert { path: path? }, None),
        "renameFile" => (
            Operation::Rename {
                from: text(args, "fromPath")?,
                to: text(args, "toPath")?,
            },
            None,
        ),
        "reset" => {
            let after = before
                .replaced_by(crate::surfaces::workspace::seed_files())
                .ok()?;
            return Some(Planned {
                after,
                narrowing: None,
            });
        }
        "setTheme" | "addFeature" | "updateHero" => return visual_change(tool, args, before),
        _ => return None,
    };
    let after = before.apply(&operation).ok()?;
    Some(Planned { after, narrowing })
}

/// The visual tools rewrite one file; the person sees that file's diff (whole: their edits are
/// generated, not hunks a model chose).
fn visual_change(tool: &str, args: &Map<String, Value>, before: &Workspace) -> Option<Planned> {
    let (path, edited) = match tool {
        "setTheme" => {
            let theme = Theme::from_name(args.get("theme")?.as_str()?)?;
            let path = stylesheet_path(before)?;
            let source = before.file(&path)?.source()?;
            (path.clone(), preview_edits::set_theme(source, theme).ok()?)
        }
        "addFeature" => {
            let path = html_entry_path(before)?;
            let source = before.file(&path)?.source()?;
            let edited = preview_edits::add_feature(
                source,
                &text(args, "title")?,
                &text(args, "description")?,
            )
            .ok()?;
            (path.clone(), edited)
        }
        _ => {
            let path = html_entry_path(before)?;
            let source = before.file(&path)?.source()?;
            let edited = preview_edits::update_hero(
                source,
                text(args, "title").as_deref(),
                text(args, "subtitle").as_deref(),
            )
            .ok()?;
            (path.clone(), edited)
        }
    };
    let after = before
        .apply(&Operation::Write {
            path,
            source: edited,
        })
        .ok()?;
    Some(Planned {
        after,
        narrowing: None,
    })
}

/// `editor.*` mutations act on the open document.
fn editor_change(tool: &str, args: &Map<String, Value>, before: &Workspace) -> Option<Planned> {
    let path = before.active_path().to_owned();
    let (operation, narrowing) = match tool {
        "setDocument" => {
            // A whole-source narrowing needs a revision guard the caller gave.
            let guarded = args.contains_key("expectedDocumentRevision");
            let narrowing = guarded.then(|| Narrowing {
                path: path.clone(),
                style: NarrowStyle::Source,
                revision_argument: None,
            });
            (
                Operation::Write {
                    path,
                    source: text(args, "source")?,
                },
                narrowing,
            )
        }
        "applyPatch" => {
            let narrowing = Some(Narrowing {
                path: path.clone(),
                style: NarrowStyle::Patch,
                revision_argument: None,
            });
            let operation = Operation::Patch {
                path,
                search: text(args, "search")?,
                replace: text(args, "replace").unwrap_or_default(),
                occurrence: occurrence(args),
            };
            (operation, narrowing)
        }
        "revertFile" => (Operation::Revert { path }, None),
        _ => return None,
    };
    let after = before.apply(&operation).ok()?;
    Some(Planned { after, narrowing })
}

/// `editor.resetDocument`: the open document replaced by the scenario's example for its language.
fn scenario_reset(
    before: &Workspace,
    scenario: crate::surfaces::editor::Scenario,
) -> Option<Planned> {
    let path = before.active_path().to_owned();
    let example = scenario.example(live_code_editor::Language::from_path(&path))?;
    let after = before
        .apply(&Operation::Write {
            path,
            source: example.to_owned(),
        })
        .ok()?;
    Some(Planned {
        after,
        narrowing: None,
    })
}

/// `GET /api/tools/effects`: what each destructive or history-changing tool loses and whether
/// undo brings it back, by tool name, so a direct run's confirmation says the same as an
/// approval card.
pub(super) async fn tool_effects(State(state): State<Arc<StudioState>>) -> Json<Value> {
    let effects: Map<String, Value> = state
        .registry
        .list_all_tools()
        .into_iter()
        .filter_map(|tool| Some((tool.name.clone(), json!(effect_of(&tool.name)?))))
        .collect();
    Json(Value::Object(effects))
}

/// What a destructive or history-changing tool loses, and whether undo brings it back.
fn effect_of(name: &str) -> Option<&'static str> {
    let tool = name.rsplit('.').next().unwrap_or(name);
    if name == "editor.revertFile" {
        // The editor has no undo: only the checkpoint's version remains.
        return Some(
            "Destructive: the file's unsaved edits are lost; the editor has no undo, so only the saved version remains.",
        );
    }
    Some(match tool {
        "reset" => {
            "Destructive: replaces every file with the starter files. Unsaved edits are lost and the undo history is cleared, so undo cannot bring them back."
        }
        "deleteFile" => {
            "Destructive: removes the file. Undo brings it back until the history is cleared (a reset or a folder reload)."
        }
        "revertFile" => {
            "Destructive: the file's unsaved edits are lost. Undo brings them back until the history is cleared."
        }
        "resetDocument" => {
            "Destructive: replaces the open document with the scenario's example. Its unsaved edits are lost."
        }
        "reloadFolder" => {
            "Destructive: replaces the workspace with the folder on disk and clears the undo history; unsaved edits are lost (refused unless discardChanges is set)."
        }
        "undo" | "redo" => {
            "Changes history: moves the workspace one step back or forward in its undo history."
        }
        "saveAll" | "saveFile" => {
            "Writes files to the folder on disk; the files there are replaced."
        }
        _ => return None,
    })
}

/// What a person is told about a call of a mounted MCP tool, in place of a diff.
fn remote_note(server: &str) -> String {
    format!(
        "This tool runs on the MCP server \"{server}\", outside the workspace: the studio cannot show what it changes. Approve it only if you expect that server to do this."
    )
}

/// Changed lines of each file a confirmation message shows.
const SUMMARY_LINES_PER_FILE: usize = 3;

impl Proposal {
    /// A few lines for a confirmation outside the page (an MCP client): the effect, and per
    /// file its change, `+N/−M` and its first changed lines. `None` when there is nothing to say.
    pub(crate) fn summary_text(&self) -> Option<String> {
        if let Some(server) = &self.remote {
            return Some(remote_note(server));
        }
        let mut lines: Vec<String> = self
            .effect
            .iter()
            .map(|effect| (*effect).to_owned())
            .collect();
        let diff = self
            .after
            .as_ref()
            .map(|after| WorkspaceDiff::between(&self.before, after));
        for file in diff.iter().flat_map(|diff| &diff.files) {
            let name = match &file.old_path {
                Some(old) => format!("{old} → {}", file.path),
                None => file.path.clone(),
            };
            lines.push(format!(
                "{} {name} +{} −{}",
                file.change.as_str(),
                file.additions,
                file.deletions
            ));
            let changed = file
                .text
                .iter()
                .flat_map(|text| &text.hunks)
                .flat_map(|hunk| &hunk.lines)
                .filter(|line| line.tag != LineTag::Context)
                .take(SUMMARY_LINES_PER_FILE);
            for line in changed {
                let mark = if line.tag == LineTag::Added { '+' } else { '-' };
                lines.push(format!("  {mark} {}", line.text));
            }
        }
        (!lines.is_empty()).then(|| lines.join("\n"))
    }

    /// The view the page shows.
    pub(crate) fn view(
        &self,
        approval_id: &str,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> ReviewView {
        let diff = self
            .after
            .as_ref()
            .map(|after| WorkspaceDiff::between(&self.before, after));
        let note = match (&diff, self.effect) {
            _ if self.remote.is_some() => self.remote.as_deref().map(remote_note),
            (Some(_), _) if self.rebasable(arguments) => self.stale_guard.map(|expected| format!(
                "The workspace moved from revision {expected} to {} while this call waited (someone kept editing): the patch still applies to the text as it is now, shown here, and runs on it when approved.",
                self.before.revision()
            )),
            (Some(_), _) if self.stale_guard.is_some() => self.stale_guard.map(|expected| format!(
                "The call expects revision {expected} but the workspace is at revision {}: as it stands it will be refused with a revision conflict.",
                self.before.revision()
            )),
            (Some(_), _) => None,
            (None, Some(_)) => Some("This call's effect is described above; it has no file diff to show before it runs.".to_owned()),
            (None, None) => Some("No diff: the call would fail as it stands (for example a file or match that does not exist), or it changes no file.".to_owned()),
        };
        let narrowable_path = diff
            .as_ref()
            .and(self.narrowing.as_ref())
            .map(|narrowing| narrowing.path.clone());
        ReviewView {
            approval_id: approval_id.to_owned(),
            tool: tool.to_owned(),
            revision: self.before.revision(),
            diff,
            narrowable_path,
            effect: self.effect,
            note,
            arguments: arguments.clone(),
            arguments_digest: arguments_digest(tool, arguments),
        }
    }

    /// Whether the call's guard is stale but the call is a literal patch that still applies to
    /// the workspace as it is now (its diff is computed there) at the one place its text occurs:
    /// a second occurrence could be text typed meanwhile, which the patch must not take.
    fn rebasable(&self, arguments: &Map<String, Value>) -> bool {
        let Some(narrowing) = &self.narrowing else {
            return false;
        };
        let once = |search: &str| {
            source_of(&self.before, &narrowing.path)
                .is_ok_and(|source| !search.is_empty() && source.matches(search).count() == 1)
        };
        self.stale_guard.is_some()
            && self.after.is_some()
            && matches!(narrowing.style, NarrowStyle::Patch)
            && text(arguments, "search").is_some_and(|search| once(&search))
    }

    /// The call moved onto the current revision, when its guard is stale but it is a literal
    /// patch that still applies: edits made while it waited (the person typing on) are kept and
    /// the change runs as the person reviewed it, against the text as it is now. `None` when
    /// the call needs no rebase or cannot have one (a whole-file write would overwrite them).
    pub(crate) fn rebased(&self, arguments: &Map<String, Value>) -> Option<ApprovedChanges> {
        if !self.rebasable(arguments) {
            return None;
        }
        let narrowing = self.narrowing.as_ref()?;
        let guard = narrowing.revision_argument?;
        let (expected, now) = (self.stale_guard?, self.before.revision());
        let mut arguments = arguments.clone();
        arguments.insert(guard.into(), json!(now));
        Some(ApprovedChanges {
            arguments,
            note: format!(
                "Rebased: the workspace moved from revision {expected} to {now} while this call waited for approval; the patch of {} still applied to the current text and ran on it, as the person reviewed it.",
                narrowing.path
            ),
        })
    }

    /// The narrowed call for accepting only `accepted` hunks of the narrowable file, checked
    /// against the digest of the diff the person saw. `Ok(None)` when every hunk is accepted
    /// (the call runs as sent).
    pub(crate) fn narrowed(
        &self,
        arguments: &Map<String, Value>,
        accepted: &[usize],
        seen_digest: &str,
    ) -> Result<Option<Narrowed>, ReviewRefusal> {
        let after = self.after.as_ref().ok_or(ReviewRefusal::NotNarrowable)?;
        if WorkspaceDiff::between(&self.before, after).digest != seen_digest {
            return Err(ReviewRefusal::DiffChanged);
        }
        let narrowing = self
            .narrowing
            .as_ref()
            .ok_or(ReviewRefusal::NotNarrowable)?;
        let old = source_of(&self.before, &narrowing.path)?;
        let new = source_of(after, &narrowing.path)?;
        let count = live_code_editor::diff::TextDiff::new(old, new).hunk_count;
        let mut accepted: Vec<usize> = accepted.to_vec();
        accepted.sort_unstable();
        accepted.dedup();
        if accepted.len() == count && accepted.iter().all(|&index| index < count) {
            return Ok(None);
        }
        let narrowed =
            narrow(old, new, &accepted).map_err(|e| ReviewRefusal::UnknownHunk(e.to_string()))?;
        let mut arguments = arguments.clone();
        match narrowing.style {
            NarrowStyle::Source => {
                arguments.insert("source".into(), json!(narrowed));
            }
            NarrowStyle::Patch => {
                let (search, replace) =
                    narrowed_patch(old, &narrowed).ok_or(ReviewRefusal::NotNarrowable)?;
                if search.chars().count() > MAX_NARROWED_PATCH_CHARS
                    || replace.chars().count() > MAX_NARROWED_PATCH_CHARS
                {
                    return Err(ReviewRefusal::TooLarge);
                }
                arguments.insert("search".into(), json!(search));
                arguments.insert("replace".into(), json!(replace));
                arguments.insert("occurrence".into(), json!("first"));
            }
        }
        if let Some(guard) = narrowing.revision_argument {
            arguments
                .entry(guard)
                .or_insert_with(|| json!(self.before.revision()));
        }
        Ok(Some(Narrowed {
            changes: ApprovedChanges {
                arguments,
                note: changes_note(&narrowing.path, &accepted, count),
            },
            applied: accepted.len(),
            rejected: count - accepted.len(),
        }))
    }
}

/// A partial acceptance: the narrowed call and its hunk counts.
#[derive(Debug)]
pub(crate) struct Narrowed {
    /// What the call runs with instead.
    pub changes: ApprovedChanges,
    /// Hunks applied.
    pub applied: usize,
    /// Hunks rejected.
    pub rejected: usize,
}

fn source_of<'w>(workspace: &'w Workspace, path: &str) -> Result<&'w str, ReviewRefusal> {
    workspace
        .file(path)
        .and_then(|file| file.source())
        .ok_or(ReviewRefusal::NotNarrowable)
}

// ---------------------------------------------------------------- routes

/// What an approval answer resolved: `applied` is `all` (a plain allow), `none` (a denial) or
/// `some` (the narrowed call, with the hunks it applied and rejected).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Resolved {
    resolved: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    applied: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    applied_hunks: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rejected_hunks: Option<usize>,
}

impl Resolved {
    /// A whole-call answer (allow or deny, no hunks chosen).
    pub(super) fn whole(id: String) -> Self {
        Self {
            resolved: id,
            applied: None,
            applied_hunks: None,
            rejected_hunks: None,
        }
    }

    fn applied(id: &str, applied: &'static str) -> Self {
        Self {
            applied: Some(applied),
            ..Self::whole(id.to_owned())
        }
    }
}

/// Allows the hunks a person accepted: all of them is a plain allow, none is a denial, a part
/// is the narrowed call (see [`super::review`]).
pub(super) async fn resolve_hunks(
    state: &StudioState,
    id: &str,
    hunks: &[usize],
    digest: Option<&str>,
) -> Result<Resolved, StudioError> {
    if hunks.len() > MAX_DECIDED_HUNKS {
        return Err(StudioError::bad_request(
            "STUDIO_UNKNOWN_HUNK",
            "Too many hunk indices.",
        ));
    }
    let digest = digest.ok_or_else(|| {
        StudioError::bad_request(
            "STUDIO_INVALID_DECISION",
            "Accepting hunks needs the digest of the diff they were chosen from.",
        )
    })?;
    let call = state
        .approvals
        .pending_call(id)
        .ok_or_else(approval_not_found)?;
    if hunks.is_empty() {
        return resolve(state, id, ApprovalDecision::Deny).map(|()| Resolved::applied(id, "none"));
    }
    if !call.accepts_changes {
        let refusal = ReviewRefusal::NotNarrowable;
        return Err(StudioError::conflict(refusal.code(), refusal.message()));
    }
    let proposal = proposal(state, &call.name, &call.arguments).await;
    match proposal.narrowed(&call.arguments, hunks, digest)? {
        None => allow_rebased(state, id, &call, &proposal).map(|()| Resolved::applied(id, "all")),
        Some(Narrowed {
            changes,
            applied,
            rejected,
        }) => {
            let asked = state
                .approvals
                .snapshot()
                .iter()
                .find(|a| a.id == id)
                .cloned();
            if !state.approvals.resolve_with_changes(id, changes) {
                return Err(approval_not_found());
            }
            if let Some(asked) = asked {
                state.trace.approved_with_changes(&asked, applied, rejected);
            }
            Ok(Resolved {
                applied_hunks: Some(applied),
                rejected_hunks: Some(rejected),
                ..Resolved::applied(id, "some")
            })
        }
    }
}

/// Allows the pending call `id` whole: rebased onto the current revision when its guard went
/// stale while it waited but it is a patch that still applies ([`Proposal::rebased`]).
pub(super) async fn allow(state: &StudioState, id: &str) -> Result<Resolved, StudioError> {
    let call = state
        .approvals
        .pending_call(id)
        .ok_or_else(approval_not_found)?;
    if !call.accepts_changes || !is_studio_tool(&call.name) {
        return resolve(state, id, ApprovalDecision::Allow)
            .map(|()| Resolved::whole(id.to_owned()));
    }
    let proposal = proposal(state, &call.name, &call.arguments).await;
    allow_rebased(state, id, &call, &proposal).map(|()| Resolved::whole(id.to_owned()))
}

fn allow_rebased(
    state: &StudioState,
    id: &str,
    call: &PendingCall,
    proposal: &Proposal,
) -> Result<(), StudioError> {
    let resolved = match proposal.rebased(&call.arguments) {
        Some(rebased) => state.approvals.resolve_with_changes(id, rebased),
        None => state.approvals.resolve(id, ApprovalDecision::Allow),
    };
    if resolved {
        Ok(())
    } else {
        Err(approval_not_found())
    }
}

/// Answers the pending approval `id`, or `404` when it is not pending.
fn resolve(state: &StudioState, id: &str, decision: ApprovalDecision) -> Result<(), StudioError> {
    if state.approvals.resolve(id, decision) {
        Ok(())
    } else {
        Err(approval_not_found())
    }
}

/// A refused narrowing: `409` when the diff changed since the person saw it, `422` when the
/// chosen hunks cannot make a narrowed call.
impl From<ReviewRefusal> for StudioError {
    fn from(refusal: ReviewRefusal) -> Self {
        let (code, message) = (refusal.code(), refusal.message());
        if refusal == ReviewRefusal::DiffChanged {
            StudioError::conflict(code, message)
        } else {
            StudioError::unprocessable(code, message)
        }
    }
}

/// The fingerprint a card shows for a call: the one a provider run's `toolCallReady` carries.
fn arguments_digest(tool: &str, arguments: &Map<String, Value>) -> String {
    tool_protocol::idempotency::tool_call_fingerprint(tool, &Value::Object(arguments.clone()))
}

/// Refuses (`409 APPROVAL_ARGUMENTS_CHANGED`, the approval stays pending) an approval whose
/// `seen` digest is not the pending call's: what runs must be what the person was shown.
pub(super) fn check_arguments_digest(
    state: &StudioState,
    id: &str,
    seen: &str,
) -> Result<(), StudioError> {
    let call = state
        .approvals
        .pending_call(id)
        .ok_or_else(approval_not_found)?;
    if arguments_digest(&call.name, &call.arguments) == seen {
        return Ok(());
    }
    Err(StudioError::conflict(
        "APPROVAL_ARGUMENTS_CHANGED",
        "The call's arguments are not the ones shown; nothing ran and the approval is still pending. Review the arguments again.",
    ))
}

/// `GET /api/approvals/{id}/diff`: the pending call's change, computed now for the page (the
/// route needs the studio token). `404` for an unknown or settled approval.
pub(crate) async fn approval_diff(
    State(state): State<Arc<StudioState>>,
    Path(id): Path<String>,
) -> Result<Response, StudioError> {
    let call = state
        .approvals
        .pending_call(&id)
        .ok_or_else(approval_not_found)?;
    let proposal = proposal(&state, &call.name, &call.arguments).await;
    let mut view = proposal.view(&id, &call.name, &call.arguments);
    if !call.accepts_changes {
        // Asked by another process (`studio mcp --approve-with`): it runs there.
        view.narrowable_path = None;
        view.note = Some(ELSEWHERE_NOTE.to_owned());
    }
    Ok(no_store_json(&view))
}

/// The note of a call that another process asked this studio to approve.
pub(crate) const ELSEWHERE_NOTE: &str = "This call runs in another process that asked this studio for approval; the diff is computed against this studio's workspace, which may differ from the one it will change.";

/// What a call would change, for the confirmation an MCP client shows (the studio's page shows
/// the full diff instead). Holds the state weakly: the server it is part of may outlive it.
pub(crate) struct McpChangePreview(pub std::sync::Weak<StudioState>);

#[async_trait::async_trait]
impl tool_context_mcp::ChangePreview for McpChangePreview {
    async fn describe(&self, tool: &str, arguments: &Map<String, Value>) -> Option<String> {
        let state = self.0.upgrade()?;
        proposal(&state, tool, arguments).await.summary_text()
    }
}

/// `404 STUDIO_APPROVAL_NOT_FOUND`: no pending approval has the id asked about.
pub(super) fn approval_not_found() -> StudioError {
    StudioError::not_found(
        "STUDIO_APPROVAL_NOT_FOUND",
        "No pending approval has that id.",
    )
}
