//! Prompt -> planned tool calls, deterministically. The runner sends the calls through the
//! registry's model-call path, fills `expectedRevision` of guarded calls from the revision the
//! preflight observed, and stops at the first failure.

use live_code_editor::preview::PreviewSelection;
use serde_json::{Map, Value, json};

use super::design::{
    CssEdit, base_font_px, css_edit, declarations, refers_to_selection, requested_changes,
};
use crate::preview_edits::Theme;

/// Tools whose calls carry the observed revision as `expectedRevision`.
pub const REVISION_GUARDED_TOOLS: &[&str] = &[
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
pub const WEB_REVISION_GUARDED_TOOLS: &[&str] = &[
    "web.applyPatch",
    "web.writeFile",
    "web.setTheme",
    "web.addFeature",
    "web.updateHero",
];

/// `editor.*` document mutations: guarded by the editor's document clock.
pub const EDITOR_DOCUMENT_GUARDED_TOOLS: &[&str] = &[
    "editor.setDocument",
    "editor.applyPatch",
    "editor.setScenario",
    "editor.resetDocument",
];

/// `editor.*` folder writes: guarded by the editor's workspace clock.
pub const EDITOR_WORKSPACE_GUARDED_TOOLS: &[&str] = &["editor.saveFile", "editor.saveAll"];

/// Which revision an earlier result reported and which argument of a guarded call carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RevisionGuard {
    /// Field of a result's structured content holding the observed revision.
    pub result_field: &'static str,
    /// Argument the runner fills with it.
    pub argument: &'static str,
}

/// The single clock of the standalone and realtime workspaces.
pub const WORKSPACE_GUARD: RevisionGuard = RevisionGuard {
    result_field: "revision",
    argument: "expectedRevision",
};

/// The Live Code Editor's document clock.
pub const DOCUMENT_GUARD: RevisionGuard = RevisionGuard {
    result_field: "documentRevision",
    argument: "expectedDocumentRevision",
};

/// The Live Code Editor's workspace clock.
pub const EDITOR_WORKSPACE_GUARD: RevisionGuard = RevisionGuard {
    result_field: "workspaceRevision",
    argument: "expectedWorkspaceRevision",
};

/// The guard of `tool`, if its calls are revision-guarded.
pub fn revision_guard(tool: &str) -> Option<RevisionGuard> {
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

/// Tools that need the file's current source read before they run.
const READ_BEFORE: &[&str] = &[
    "workspace.applyPatch",
    "workspace.writeFile",
    "workspace.revertFile",
];

/// Text used as a feature description when the prompt quotes only a title.
pub const DEFAULT_FEATURE_DESCRIPTION: &str = "Added by the local agent.";

/// What the planner knows about the workspace when it plans.
#[derive(Debug, Clone, Default)]
pub struct PlannerContext {
    /// The file open in the editor.
    pub active_path: Option<String>,
    /// Whether a writable folder is linked (save writes to disk) or not (browser checkpoint).
    pub folder_linked: bool,
    /// The Design Mode selection the run carries (`metadata.selection`), if any.
    pub selection: Option<PreviewSelection>,
    /// The stylesheet Design Mode edits go to, read when a selection is present.
    pub stylesheet: Option<Stylesheet>,
}

/// A stylesheet and its current source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stylesheet {
    /// Workspace path.
    pub path: String,
    /// Source text.
    pub source: String,
}

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
    /// Nothing recognised: inspect status and explain the recipes.
    Help,
}

impl Intent {
    /// What the run answers instead of a plain "done" when the intent only explains.
    pub fn explanation(self) -> Option<&'static str> {
        match self {
            Self::SelectionRequired => Some(
                "Select an element first: turn on Design Mode in the preview, click the element, then ask again.",
            ),
            Self::DesignChangeUnknown => Some(
                "Say what to change about the selected element: bigger, smaller, a colour (red, blue, green…), a colour background, bold, italic, underline or hide.",
            ),
            Self::StylesheetRequired => Some(
                "The workspace has no stylesheet for the change. Add a .css file linked from the page, then ask again.",
            ),
            _ => None,
        }
    }
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

/// A plan: the recognised intent and its calls, preflight first.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The recognised intent.
    pub intent: Intent,
    /// Calls in execution order (inspection preflight, then the action).
    pub calls: Vec<PlannedCall>,
}

/// Plans the tool calls for `prompt`.
pub fn plan(prompt: &str, context: &PlannerContext) -> Plan {
    let prompt_facts = PromptFacts::read(prompt);
    let (intent, action) = recognise(&prompt_facts, context);
    Plan {
        intent,
        calls: with_preflight(action),
    }
}

/// Words, quoted strings and the first file path of a prompt (shared by the surfaces' planners).
pub(crate) struct PromptFacts {
    lower: String,
    /// The quoted strings, in order.
    pub(crate) quotes: Vec<String>,
    /// The file path the prompt names, if any.
    pub(crate) path: Option<String>,
}

impl PromptFacts {
    fn read(prompt: &str) -> Self {
        Self::read_with(prompt, first_path)
    }

    /// Reads `prompt`, finding its path in the unquoted text with `find_path`.
    pub(crate) fn read_with(prompt: &str, find_path: impl FnOnce(&str) -> Option<String>) -> Self {
        let (quotes, unquoted) = split_quotes(prompt);
        Self {
            lower: unquoted.to_lowercase(),
            quotes,
            path: find_path(&unquoted),
        }
    }

    /// Whether the unquoted prompt has `word` (lowercase) as a whole word.
    pub(crate) fn has_word(&self, word: &str) -> bool {
        self.lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|token| token == word)
    }

    /// Whether it has any of `words`.
    pub(crate) fn has_any(&self, words: &[&str]) -> bool {
        words.iter().any(|word| self.has_word(word))
    }

    fn words(&self) -> Vec<&str> {
        self.lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|token| !token.is_empty())
            .collect()
    }

    fn theme(&self) -> Option<Theme> {
        Theme::ALL
            .into_iter()
            .find(|theme| self.has_word(theme.name()))
    }
}

fn recognise(facts: &PromptFacts, context: &PlannerContext) -> (Intent, Option<PlannedCall>) {
    let target_path = facts
        .path
        .clone()
        .or_else(|| context.active_path.clone())
        .unwrap_or_else(|| "index.html".to_owned());
    let quotes = &facts.quotes;
    let call = |name, args| Some(PlannedCall::new(name, args));

    if let Some(planned) = design_action(facts, context) {
        return planned;
    }
    if facts.has_word("undo") {
        return (Intent::Undo, call("workspace.undo", json!({})));
    }
    if facts.has_word("redo") {
        return (Intent::Redo, call("workspace.redo", json!({})));
    }
    if facts.has_any(&["refresh", "reload", "remount"]) && facts.has_word("preview") {
        return (Intent::RefreshPreview, call("preview.refresh", json!({})));
    }
    if facts.has_word("reload") && facts.has_any(&["folder", "disk"]) {
        return (
            Intent::ReloadFolder,
            call("workspace.reloadFolder", json!({})),
        );
    }
    if facts.has_word("disconnect") {
        return (
            Intent::DisconnectFolder,
            call("workspace.disconnectFolder", json!({})),
        );
    }
    if let Some(theme) = facts.theme() {
        return (
            Intent::SetTheme,
            call("preview.setTheme", json!({"theme": theme.name()})),
        );
    }
    if facts.path.is_none()
        && !quotes.is_empty()
        && facts.has_any(&["hero", "headline", "title", "subtitle", "tagline"])
    {
        return (
            Intent::UpdateHero,
            call("preview.updateHero", hero_arguments(facts)),
        );
    }
    if facts.path.is_none() && !quotes.is_empty() && facts.has_any(&["feature", "card"]) {
        let description = quotes
            .get(1)
            .cloned()
            .unwrap_or_else(|| DEFAULT_FEATURE_DESCRIPTION.to_owned());
        return (
            Intent::AddFeature,
            call(
                "preview.addFeature",
                json!({"title": quotes[0], "description": description}),
            ),
        );
    }
    if facts.has_any(&["create", "new", "add"]) && facts.has_word("file") && facts.path.is_some() {
        let source = quotes.first().cloned().unwrap_or_default();
        return (
            Intent::CreateFile,
            call(
                "workspace.createFile",
                json!({"path": target_path, "source": source}),
            ),
        );
    }
    if quotes.len() >= 2
        && facts.has_any(&["replace", "change", "swap", "rename", "rewrite", "patch"])
    {
        let occurrence = if facts.has_any(&["all", "every", "everywhere"]) {
            "all"
        } else {
            "first"
        };
        return (
            Intent::ReplaceText,
            call(
                "workspace.applyPatch",
                json!({"path": target_path, "search": quotes[0], "replace": quotes[1], "occurrence": occurrence}),
            ),
        );
    }
    if facts.has_word("save") {
        let name = if context.folder_linked {
            "workspace.saveAll"
        } else {
            "workspace.saveCheckpoint"
        };
        return (Intent::Save, call(name, json!({})));
    }
    if facts.has_word("download") {
        return (
            Intent::Download,
            call("workspace.downloadFile", json!({"path": target_path})),
        );
    }
    if facts.path.is_some()
        && let Some(planned) = path_action(facts, &target_path)
    {
        return planned;
    }
    if facts.has_word("reset") {
        return (Intent::Reset, call("workspace.reset", json!({})));
    }
    if facts.has_any(&["status", "state", "dirty", "changed", "revision"]) {
        return (Intent::Status, None);
    }
    (Intent::Help, None)
}

/// A Design Mode prompt: "the selected element" (or "it"/"this" while a selection exists)
/// plus a change. Without a selection, a change or a stylesheet, the run only inspects the
/// status and explains what is missing.
fn design_action(
    facts: &PromptFacts,
    context: &PlannerContext,
) -> Option<(Intent, Option<PlannedCall>)> {
    let words = facts.words();
    let changes = requested_changes(&words);
    let about_selection = refers_to_selection(&words)
        || (context.selection.is_some()
            && !changes.is_empty()
            && words.iter().any(|word| matches!(*word, "it" | "this")));
    if !about_selection {
        return None;
    }
    let Some(selection) = &context.selection else {
        return Some((Intent::SelectionRequired, None));
    };
    if changes.is_empty() {
        return Some((Intent::DesignChangeUnknown, None));
    }
    let Some(sheet) = &context.stylesheet else {
        return Some((Intent::StylesheetRequired, None));
    };
    let font_px = base_font_px(&sheet.source, selection);
    let edit = css_edit(
        &sheet.source,
        &selection.selector,
        &declarations(&changes, font_px),
    );
    let call = match edit {
        CssEdit::Patch { search, replace } => PlannedCall::new(
            "workspace.applyPatch",
            json!({"path": sheet.path, "search": search, "replace": replace, "occurrence": "first"}),
        ),
        CssEdit::Write { source } => PlannedCall::new(
            "workspace.writeFile",
            json!({"path": sheet.path, "source": source}),
        ),
    };
    Some((Intent::DesignEdit, Some(call)))
}

fn path_action(facts: &PromptFacts, path: &str) -> Option<(Intent, Option<PlannedCall>)> {
    let args = json!({"path": path});
    let planned = if facts.has_any(&["delete", "remove"]) {
        (
            Intent::DeleteFile,
            PlannedCall::new("workspace.deleteFile", args),
        )
    } else if facts.has_any(&["revert", "restore", "discard"]) {
        (
            Intent::RevertFile,
            PlannedCall::new("workspace.revertFile", args),
        )
    } else if facts.has_any(&["open", "switch", "edit"]) {
        (
            Intent::OpenFile,
            PlannedCall::new("workspace.openFile", args),
        )
    } else if facts.has_any(&["read", "show", "print", "view", "cat"]) {
        (
            Intent::ReadFile,
            PlannedCall::new("workspace.readFile", args),
        )
    } else {
        return None;
    };
    Some((planned.0, Some(planned.1)))
}

/// `updateHero` arguments from the quotes: a title (and subtitle), or only a subtitle when the
/// prompt asks for one.
pub(crate) fn hero_arguments(facts: &PromptFacts) -> Value {
    let quotes = &facts.quotes;
    let subtitle_only = quotes.len() == 1
        && facts.has_any(&["subtitle", "tagline"])
        && !facts.has_any(&["title", "headline"]);
    let mut args = Map::new();
    if subtitle_only {
        args.insert("subtitle".into(), json!(quotes[0]));
    } else {
        args.insert("title".into(), json!(quotes[0]));
        if let Some(subtitle) = quotes.get(1) {
            args.insert("subtitle".into(), json!(subtitle));
        }
    }
    Value::Object(args)
}

/// Inspection preflight: a mutation first reads the status, plus the file list when a file is
/// involved, plus the file itself before patching, writing or reverting it. Read-only intents
/// run as they are; an unrecognised prompt only reads the status.
fn with_preflight(action: Option<PlannedCall>) -> Vec<PlannedCall> {
    let Some(action) = action else {
        return vec![PlannedCall::new("workspace.getStatus", json!({}))];
    };
    if !is_mutation(action.name) {
        return vec![action];
    }
    let mut calls = vec![PlannedCall::new("workspace.getStatus", json!({}))];
    if let Some(path) = action.arguments.get("path").and_then(Value::as_str) {
        calls.push(PlannedCall::new("workspace.listFiles", json!({})));
        if READ_BEFORE.contains(&action.name) {
            calls.push(PlannedCall::new(
                "workspace.readFile",
                json!({"path": path}),
            ));
        }
    }
    calls.push(action);
    calls
}

fn is_mutation(name: &str) -> bool {
    !matches!(
        name,
        "workspace.getStatus"
            | "workspace.listFiles"
            | "workspace.readFile"
            | "workspace.openFile"
            | "preview.getStatus"
    )
}

/// Splits `"quoted"` (straight or curly double quotes) strings from the rest of the prompt.
pub(crate) fn split_quotes(prompt: &str) -> (Vec<String>, String) {
    let mut quotes = Vec::new();
    let mut unquoted = String::with_capacity(prompt.len());
    let mut current: Option<String> = None;
    for ch in prompt.chars() {
        match (&mut current, ch) {
            (None, '"' | '“') => current = Some(String::new()),
            (Some(text), '"' | '”') => {
                quotes.push(std::mem::take(text));
                current = None;
                unquoted.push(' ');
            }
            (Some(text), other) => text.push(other),
            (None, other) => unquoted.push(other),
        }
    }
    if let Some(unclosed) = current {
        unquoted.push_str(&unclosed);
    }
    (
        quotes
            .into_iter()
            .filter(|quote| !quote.is_empty())
            .collect(),
        unquoted,
    )
}

/// The first token that looks like a workspace file path (`dir/name.ext` with a known text or
/// asset extension).
fn first_path(text: &str) -> Option<String> {
    text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '`'))
        .map(|token| token.trim_end_matches(['.', ':', '!', '?']))
        .find(|token| {
            let valid_chars = token
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '.' | '/' | '_' | '-'));
            valid_chars
                && live_code_editor::file::extension(token).is_some_and(|ext| {
                    live_code_editor::file::TEXT_EXTENSIONS.contains(&ext.as_str())
                        || live_code_editor::file::ASSET_EXTENSIONS.contains(&ext.as_str())
                })
        })
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(plan: &Plan) -> Vec<&'static str> {
        plan.calls.iter().map(|call| call.name).collect()
    }

    fn ctx() -> PlannerContext {
        PlannerContext {
            active_path: Some("styles.css".into()),
            ..PlannerContext::default()
        }
    }

    fn selected(selector: &str, sheet: Option<&str>) -> PlannerContext {
        let selection = PreviewSelection::from_value(&json!({
            "revision": 4, "selector": selector, "tag": "h1", "classes": [],
            "source": {"text": "Hello", "html": "<h1>Hello</h1>"},
            "styles": {"color": "", "backgroundColor": "", "fontFamily": "", "fontSize": "20px",
                "fontWeight": "", "margin": "", "padding": "", "display": "", "width": "", "height": ""},
            "box": {"x": 0, "y": 0, "width": 10, "height": 10},
            "screen": {"viewportWidth": 100, "viewportHeight": 100, "scrollX": 0, "scrollY": 0, "devicePixelRatio": 1}
        }))
        .unwrap();
        PlannerContext {
            selection: Some(selection),
            stylesheet: sheet.map(|source| Stylesheet {
                path: "css/site.css".into(),
                source: source.into(),
            }),
            ..ctx()
        }
    }

    #[test]
    fn design_prompts_patch_the_selectors_rule_after_reading_the_sheet() {
        let context = selected("#hero-title", Some("#hero-title { font-size: 40px; }\n"));
        let plan = plan("make the selected element red and bold", &context);
        assert_eq!(plan.intent, Intent::DesignEdit);
        assert_eq!(
            names(&plan),
            [
                "workspace.getStatus",
                "workspace.listFiles",
                "workspace.readFile",
                "workspace.applyPatch"
            ]
        );
        assert_eq!(plan.calls[2].arguments["path"], "css/site.css");
        let patch = action(&plan);
        assert!(patch.is_revision_guarded());
        assert_eq!(
            patch.arguments["search"],
            "#hero-title { font-size: 40px; }"
        );
        assert_eq!(
            patch.arguments["replace"],
            "#hero-title { font-size: 40px; color: #dc2626; font-weight: 700; }"
        );
        // "it" means the selection while one exists; sizes scale the rule's size (40px), not
        // the computed one the selection was picked with (20px).
        let bigger = super::plan("make it bigger", &context);
        assert_eq!(
            action(&bigger).arguments["replace"],
            "#hero-title { font-size: 50px; }"
        );
        // Design words win over the theme and file recipes when they target the selection.
        let empty = selected("body > p:nth-of-type(2)", Some(""));
        let write = super::plan("hide the selected element", &empty);
        assert_eq!(action(&write).name, "workspace.writeFile");
        assert_eq!(
            action(&write).arguments["source"],
            "body > p:nth-of-type(2) {\n  display: none;\n}\n"
        );
    }

    #[test]
    fn design_prompts_without_what_they_need_only_explain() {
        for (prompt, context, intent) in [
            (
                "make the selected element red",
                ctx(),
                Intent::SelectionRequired,
            ),
            (
                "make the selected element nicer",
                selected("#a", Some("")),
                Intent::DesignChangeUnknown,
            ),
            (
                "make the selected element red",
                selected("#a", None),
                Intent::StylesheetRequired,
            ),
        ] {
            let plan = plan(prompt, &context);
            assert_eq!(plan.intent, intent, "{prompt}");
            assert_eq!(names(&plan), ["workspace.getStatus"]);
            assert!(plan.intent.explanation().is_some());
        }
        assert!(Intent::DesignEdit.explanation().is_none());
        // Without a selection, "it" is not the selection: the usual recipes still apply.
        assert_eq!(plan("make it rose", &ctx()).intent, Intent::SetTheme);
        assert_eq!(plan("make it red", &ctx()).intent, Intent::Help);
    }

    fn action(plan: &Plan) -> &PlannedCall {
        plan.calls.last().unwrap()
    }

    #[test]
    fn theme_prompts_set_the_theme_after_a_status_preflight() {
        let plan = plan("Make the page rose please", &ctx());
        assert_eq!(plan.intent, Intent::SetTheme);
        assert_eq!(names(&plan), ["workspace.getStatus", "preview.setTheme"]);
        assert_eq!(action(&plan).arguments["theme"], "rose");
        assert!(!action(&plan).is_revision_guarded());
    }

    #[test]
    fn quoted_hero_copy_goes_to_update_hero_not_a_patch() {
        let plan = plan(
            r#"Change the hero title to "Hello" and subtitle "World""#,
            &ctx(),
        );
        assert_eq!(plan.intent, Intent::UpdateHero);
        assert_eq!(
            action(&plan).arguments,
            json!({"title": "Hello", "subtitle": "World"})
                .as_object()
                .unwrap()
                .clone()
        );
        let subtitle = super::plan(r#"set the subtitle to “Only this”"#, &ctx());
        assert_eq!(
            action(&subtitle).arguments,
            json!({"subtitle": "Only this"})
                .as_object()
                .unwrap()
                .clone()
        );
    }

    #[test]
    fn quoted_feature_copy_adds_a_card() {
        let plan = plan(
            r#"add a feature card "Offline" "Works without a key""#,
            &ctx(),
        );
        assert_eq!(plan.intent, Intent::AddFeature);
        assert_eq!(
            action(&plan).arguments["description"],
            "Works without a key"
        );
        let single = super::plan(r#"add a feature "Solo""#, &ctx());
        assert_eq!(
            action(&single).arguments["description"],
            DEFAULT_FEATURE_DESCRIPTION
        );
    }

    #[test]
    fn two_quoted_strings_patch_the_named_or_active_file_after_reading_it() {
        let plan = plan(r#"replace "Ship" with "Build" in index.html"#, &ctx());
        assert_eq!(plan.intent, Intent::ReplaceText);
        assert_eq!(
            names(&plan),
            [
                "workspace.getStatus",
                "workspace.listFiles",
                "workspace.readFile",
                "workspace.applyPatch"
            ]
        );
        assert_eq!(plan.calls[2].arguments["path"], "index.html");
        let patch = action(&plan);
        assert_eq!(patch.arguments["search"], "Ship");
        assert_eq!(patch.arguments["replace"], "Build");
        assert_eq!(patch.arguments["occurrence"], "first");
        assert!(patch.is_revision_guarded());
        let active = super::plan(r#"replace all "a" with "b""#, &ctx());
        assert_eq!(action(&active).arguments["path"], "styles.css");
        assert_eq!(action(&active).arguments["occurrence"], "all");
    }

    #[test]
    fn file_recipes_use_the_named_path() {
        let create = plan(r#"create a new file docs/notes.md with "hello""#, &ctx());
        assert_eq!(create.intent, Intent::CreateFile);
        assert_eq!(
            names(&create),
            [
                "workspace.getStatus",
                "workspace.listFiles",
                "workspace.createFile"
            ]
        );
        assert_eq!(action(&create).arguments["source"], "hello");
        assert_eq!(plan("delete app.js", &ctx()).intent, Intent::DeleteFile);
        let revert = plan("revert styles.css", &ctx());
        assert_eq!(
            names(&revert),
            [
                "workspace.getStatus",
                "workspace.listFiles",
                "workspace.readFile",
                "workspace.revertFile"
            ]
        );
        assert_eq!(names(&plan("open app.js", &ctx())), ["workspace.openFile"]);
        assert_eq!(
            names(&plan("show me README.md", &ctx())),
            ["workspace.readFile"]
        );
    }

    #[test]
    fn history_preview_and_folder_recipes() {
        assert_eq!(
            names(&plan("undo that", &ctx())),
            ["workspace.getStatus", "workspace.undo"]
        );
        assert_eq!(plan("redo", &ctx()).intent, Intent::Redo);
        assert_eq!(
            names(&plan("refresh the preview", &ctx())),
            ["workspace.getStatus", "preview.refresh"]
        );
        assert_eq!(
            plan("reload the folder from disk", &ctx()).intent,
            Intent::ReloadFolder
        );
        assert_eq!(plan("disconnect", &ctx()).intent, Intent::DisconnectFolder);
        assert_eq!(
            action(&plan("download", &ctx())).arguments["path"],
            "styles.css"
        );
        assert_eq!(plan("reset the workspace", &ctx()).intent, Intent::Reset);
    }

    #[test]
    fn save_follows_the_folder_link() {
        assert_eq!(
            action(&plan("save", &ctx())).name,
            "workspace.saveCheckpoint"
        );
        let linked = PlannerContext {
            folder_linked: true,
            ..ctx()
        };
        assert_eq!(
            action(&plan("save everything", &linked)).name,
            "workspace.saveAll"
        );
    }

    #[test]
    fn status_and_unknown_prompts_only_read() {
        assert_eq!(
            names(&plan("what is the status?", &ctx())),
            ["workspace.getStatus"]
        );
        let help = plan("sing me a song", &ctx());
        assert_eq!(help.intent, Intent::Help);
        assert_eq!(names(&help), ["workspace.getStatus"]);
    }

    #[test]
    fn quotes_and_paths_are_parsed_robustly() {
        let (quotes, rest) = split_quotes(r#"a "b c" “d” "unclosed"#);
        assert_eq!(quotes, ["b c", "d"]);
        assert!(rest.contains("unclosed"));
        assert_eq!(
            first_path("edit src/main.js, please").as_deref(),
            Some("src/main.js")
        );
        assert_eq!(first_path("version 1.5 is out."), None);
        assert_eq!(
            first_path("look at img/logo.png!").as_deref(),
            Some("img/logo.png")
        );
    }
}
