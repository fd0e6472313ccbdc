//! Which calls are revision-guarded, by which clock, and which argument carries the revision
//! the runner observed.

/// Tools whose calls carry the observed revision as `expectedRevision`.
pub(crate) const REVISION_GUARDED_TOOLS: &[&str] = &[
    "workspace.reset",
    "workspace.createFile",
    "workspace.renameFile",
    "workspace.deleteFile",
    "workspace.writeFile",
    "workspace.applyPatch",
    "workspace.revertFile",
    "workspace.undo",
    "workspace.redo",
    "workspace.saveCheckpoint",
    "workspace.saveAll",
    "workspace.reloadFolder",
];

/// `web.*` mutations: guarded by the realtime workspace's single `revision`.
pub(crate) const WEB_REVISION_GUARDED_TOOLS: &[&str] = &[
    "web.applyPatch",
    "web.writeFile",
    "web.setTheme",
    "web.addFeature",
    "web.updateHero",
];

/// `editor.*` document mutations: guarded by the editor's document clock.
pub(crate) const EDITOR_DOCUMENT_GUARDED_TOOLS: &[&str] = &[
    "editor.setDocument",
    "editor.applyPatch",
    "editor.setScenario",
    "editor.resetDocument",
];

/// `editor.*` folder writes: guarded by the editor's workspace clock.
pub(crate) const EDITOR_WORKSPACE_GUARDED_TOOLS: &[&str] = &["editor.saveFile", "editor.saveAll"];

/// Which revision an earlier result reported and which argument of a guarded call carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RevisionGuard {
    /// Field of a result's structured content holding the observed revision.
    pub result_field: &'static str,
    /// Argument the runner fills with it.
    pub argument: &'static str,
}

/// The single clock of the standalone and realtime workspaces.
pub(crate) const WORKSPACE_GUARD: RevisionGuard = RevisionGuard {
    result_field: "revision",
    argument: "expectedRevision",
};

/// The Live Code Editor's document clock.
pub(crate) const DOCUMENT_GUARD: RevisionGuard = RevisionGuard {
    result_field: "documentRevision",
    argument: "expectedDocumentRevision",
};

/// The Live Code Editor's workspace clock.
pub(crate) const EDITOR_WORKSPACE_GUARD: RevisionGuard = RevisionGuard {
    result_field: "workspaceRevision",
    argument: "expectedWorkspaceRevision",
};

/// The guard of `tool`, if its calls are revision-guarded.
pub(crate) fn revision_guard(tool: &str) -> Option<RevisionGuard> {
    if REVISION_GUARDED_TOOLS.contains(&tool) || WEB_REVISION_GUARDED_TOOLS.contains(&tool) {
        Some(WORKSPACE_GUARD)
    } else if EDITOR_DOCUMENT_GUARDED_TOOLS.contains(&tool) {
        Some(DOCUMENT_GUARD)
    } else if EDITOR_WORKSPACE_GUARDED_TOOLS.contains(&tool) {
        Some(EDITOR_WORKSPACE_GUARD)
    } else {
        None
    }
}
