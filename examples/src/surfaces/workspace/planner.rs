//! The standalone workspace's local-agent planner: prompt -> planned `workspace.*` and
//! `preview.*` calls, deterministically, or a stop: a prompt the agent does not understand, or
//! a change whose target the workspace lacks, plans no call at all (see [`Stop`]). Mutations
//! get an inspection preflight; Design Mode prompts restyle the selection in the stylesheet.

use live_code_editor::file::FileContent;
use live_code_editor::preview::{PreviewSelection, find_preview_stylesheet_file};
use live_code_editor::workspace::Workspace;
use live_code_editor::workspace::manager::WorkspaceDocumentManager;
use serde_json::{Value, json};

use crate::agent::design::{
    CssEdit, base_font_px, css_edit, declarations, refers_to_selection, requested_changes,
};
use crate::agent::plan::{Action, Intent, Plan, PlannedCall, Stop};
use crate::agent::prompt::{DEFAULT_FEATURE_DESCRIPTION, PromptFacts, hero_arguments};
use crate::agent::targets::{checked, patch_path, resolve_path};
use crate::agent::understanding::{
    CommandForm, PathRule, command, not_understood, understood_by_intent,
};
use crate::preview_edits::{PreviewTarget, missing_target};

/// Tools that need the file's current source read before they run.
const READ_BEFORE: &[&str] = &[
    "workspace.applyPatch",
    "workspace.writeFile",
    "workspace.revertFile",
];

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
    /// The workspace the plan's targets are checked against (visual targets, named files, the
    /// file holding a search text); `None` plans without those checks.
    pub workspace: Option<Workspace>,
}

/// A stylesheet and its current source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stylesheet {
    /// Workspace path.
    pub path: String,
    /// Source text.
    pub source: String,
}

/// What the workspace's local agent understands (its reply to a prompt it cannot act on).
pub const WORKSPACE_HELP: &str = "The local agent understands: a theme (make it violet, emerald, amber or rose); hero copy (set the hero title to \"…\"); a feature card (add a feature card \"Title\" \"Description\"); replace \"X\" with \"Y\"; create file notes.md \"text\"; read, open, download, delete or revert a file by name; undo, redo, save, reset; refresh the preview; reload or disconnect the folder; the workspace status; and, with an element selected in Design Mode, make the selected element bigger, red, bold or hidden.";

/// Plans the tool calls for `prompt`.
pub fn plan(prompt: &str, context: &PlannerContext) -> Plan {
    let mut prompt_facts = PromptFacts::read(prompt);
    if let Some(workspace) = &context.workspace {
        prompt_facts.path = prompt_facts.path.map(|path| resolve_path(workspace, &path));
    }
    let (intent, action) =
        understood_by_intent(recognise(&prompt_facts, context), prompt, WORKSPACE_HELP);
    match action.and_then(|call| checked(context.workspace.as_ref(), call)) {
        Ok(call) => Plan::acting(intent, with_preflight(call)),
        Err(stop) => Plan::stopped(intent, stop),
    }
}

fn recognise(facts: &PromptFacts, context: &PlannerContext) -> (Intent, Action) {
    let target_path = facts
        .path
        .clone()
        .or_else(|| context.active_path.clone())
        .unwrap_or_else(|| "index.html".to_owned());
    let quotes = &facts.quotes;
    let call = |name, args| Ok(Some(PlannedCall::new(name, args)));

    if let Some(planned) = design_action(facts, context) {
        return planned;
    }
    if let Some(planned) = workspace_command(facts, context) {
        return planned;
    }
    if facts.has_any(&["refresh", "reload", "remount"]) && facts.has_word("preview") {
        return (Intent::RefreshPreview, call("preview.refresh", json!({})));
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
        // The file that holds the text, not whichever file happens to be open.
        let path = match &context.workspace {
            Some(workspace) => patch_path(workspace, facts.path.as_deref(), &quotes[0], occurrence),
            None => Ok(target_path),
        };
        let action = path.map(|path| {
            Some(PlannedCall::new(
                "workspace.applyPatch",
                json!({"path": path, "search": quotes[0], "replace": quotes[1], "occurrence": occurrence}),
            ))
        });
        return (Intent::ReplaceText, action);
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
    if facts.has_any(&["status", "state", "dirty", "changed", "revision"]) {
        return (Intent::Status, Ok(None));
    }
    (
        Intent::Help,
        Err(not_understood(facts.prompt(), WORKSPACE_HELP)),
    )
}

/// The workspace's destructive and history commands, each planned only when the prompt *is* the
/// command ("undo", "save everything", "delete app.js"), never from a word inside a longer
/// request ("add a reset button").
fn workspace_command(facts: &PromptFacts, context: &PlannerContext) -> Option<(Intent, Action)> {
    let (intent, _) = WORKSPACE_COMMANDS
        .iter()
        .find(|(_, form)| form.matches(facts.prompt()))?;
    let path = facts.path.clone().unwrap_or_default();
    let planned = match intent {
        Intent::Undo => PlannedCall::new("workspace.undo", json!({})),
        Intent::Redo => PlannedCall::new("workspace.redo", json!({})),
        Intent::Save if context.folder_linked => PlannedCall::new("workspace.saveAll", json!({})),
        Intent::Save => PlannedCall::new("workspace.saveCheckpoint", json!({})),
        Intent::Reset => PlannedCall::new("workspace.reset", json!({})),
        Intent::ReloadFolder => PlannedCall::new("workspace.reloadFolder", json!({})),
        Intent::DisconnectFolder => PlannedCall::new("workspace.disconnectFolder", json!({})),
        Intent::DeleteFile => PlannedCall::new("workspace.deleteFile", json!({"path": path})),
        Intent::RevertFile => PlannedCall::new("workspace.revertFile", json!({"path": path})),
        _ => return None,
    };
    Some((*intent, Ok(Some(planned))))
}

/// The command each destructive or history intent of the workspace must be.
pub(crate) const WORKSPACE_COMMANDS: &[(Intent, CommandForm)] = &[
    (Intent::Undo, command(&["undo"], HISTORY_OBJECTS)),
    (Intent::Redo, command(&["redo"], HISTORY_OBJECTS)),
    (
        Intent::Save,
        command(
            &["save"],
            &[
                "all",
                "everything",
                "files",
                "changes",
                "work",
                "workspace",
                "project",
                "site",
                "checkpoint",
                "to",
                "disk",
                "folder",
            ],
        ),
    ),
    (Intent::Reset, command(&["reset"], RESET_OBJECTS)),
    (
        Intent::ReloadFolder,
        CommandForm {
            requires: &["folder", "disk"],
            ..command(
                &["reload", "reread", "re-read", "resync"],
                &["from", "files", "linked"],
            )
        },
    ),
    (
        Intent::DisconnectFolder,
        command(
            &["disconnect", "unlink"],
            &["folder", "from", "disk", "linked"],
        ),
    ),
    (
        Intent::DeleteFile,
        CommandForm {
            path: PathRule::Required,
            ..command(&["delete", "remove"], &["file"])
        },
    ),
    (
        Intent::RevertFile,
        CommandForm {
            path: PathRule::Required,
            ..command(
                &["revert", "restore", "discard"],
                &[
                    "file",
                    "changes",
                    "change",
                    "edits",
                    "to",
                    "checkpoint",
                    "saved",
                    "version",
                    "in",
                ],
            )
        },
    ),
];

/// What may follow "undo" or "redo".
pub(crate) const HISTORY_OBJECTS: &[&str] = &["change", "changes", "edit", "step", "one"];
/// What may follow "reset".
pub(crate) const RESET_OBJECTS: &[&str] = &[
    "workspace",
    "everything",
    "all",
    "project",
    "site",
    "files",
    "seed",
    "to",
    "starter",
    "default",
    "defaults",
    "original",
    "back",
    "start",
];

/// A Design Mode prompt: "the selected element" (or "it"/"this" while a selection exists)
/// plus a change. Without a selection, a change or a stylesheet, the run does nothing and
/// explains what is missing.
fn design_action(facts: &PromptFacts, context: &PlannerContext) -> Option<(Intent, Action)> {
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
        return Some((
            Intent::SelectionRequired,
            Err(Stop::NotUnderstood(SELECTION_REQUIRED.to_owned())),
        ));
    };
    if changes.is_empty() {
        return Some((
            Intent::DesignChangeUnknown,
            Err(Stop::NotUnderstood(DESIGN_CHANGE_UNKNOWN.to_owned())),
        ));
    }
    let Some(sheet) = &context.stylesheet else {
        let error = missing_target(PreviewTarget::Stylesheet, None, STYLESHEET_REQUIRED.into());
        return Some((Intent::StylesheetRequired, Err(Stop::Unavailable(error))));
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
    Some((Intent::DesignEdit, Ok(Some(call))))
}

const SELECTION_REQUIRED: &str = "Select an element first: turn on Design Mode in the preview, click the element, then ask again.";
const DESIGN_CHANGE_UNKNOWN: &str = "Say what to change about the selected element: bigger, smaller, a colour (red, blue, green…), a colour background, bold, italic, underline or hide.";
const STYLESHEET_REQUIRED: &str = "The workspace has no stylesheet for the change. Add a .css file linked from the page, then ask again.";

fn path_action(facts: &PromptFacts, path: &str) -> Option<(Intent, Action)> {
    let args = json!({"path": path});
    let planned = if facts.has_any(&["open", "switch", "edit"]) {
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
    Some((planned.0, Ok(Some(planned.1))))
}

/// Inspection preflight: a mutation first reads the status, plus the file list when a file is
/// involved, plus the file itself before patching, writing or reverting it. Read-only intents
/// run as they are; a status request (no action) reads the status.
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

/// What the planner knows of `manager`'s workspace now. `metadata` is the run's context
/// metadata (for example a Design Mode selection).
pub async fn context(
    manager: &WorkspaceDocumentManager,
    metadata: Option<&Value>,
) -> PlannerContext {
    let status = manager.status().await;
    // A selection that does not validate is no selection: the planner then explains that an
    // element must be selected.
    let selection = metadata
        .and_then(|metadata| metadata.get("selection"))
        .and_then(|value| PreviewSelection::from_value(value).ok());
    let workspace = manager.snapshot().await;
    let stylesheet = selection
        .as_ref()
        .and_then(|_| workspace_stylesheet(&workspace));
    PlannerContext {
        active_path: Some(status.active_path.clone()),
        folder_linked: status.folder.connected,
        selection,
        stylesheet,
        workspace: Some(workspace),
    }
}

/// The stylesheet Design Mode edits go to (`styles.css`, else the first CSS file) and its source.
fn workspace_stylesheet(workspace: &Workspace) -> Option<Stylesheet> {
    let files: Vec<_> = workspace.files().cloned().collect();
    let sheet = find_preview_stylesheet_file(&files)?;
    match &sheet.content {
        FileContent::Text { source } => Some(Stylesheet {
            path: sheet.path.clone(),
            source: source.clone(),
        }),
        FileContent::Asset { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::prompt::{first_path, split_quotes};
    use crate::agent::understanding::CONNECT_MODEL;

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
            assert!(names(&plan).is_empty(), "nothing is called");
            match stop(&plan) {
                Stop::NotUnderstood(reply) => assert!(!reply.is_empty()),
                Stop::Unavailable(error) => {
                    assert_eq!(intent, Intent::StylesheetRequired);
                    assert_eq!(error.code, "PREVIEW_TARGET_NOT_FOUND");
                }
            }
        }
        // Without a selection, "it" is not the selection: the usual recipes still apply.
        assert_eq!(plan("make it rose", &ctx()).intent, Intent::SetTheme);
        assert_eq!(plan("make it red", &ctx()).intent, Intent::Help);
    }

    fn action(plan: &Plan) -> &PlannedCall {
        plan.calls.last().unwrap()
    }

    fn stop(plan: &Plan) -> &Stop {
        assert!(plan.calls.is_empty(), "a stopped plan calls nothing");
        plan.stop.as_ref().expect("stopped")
    }

    /// A person's own site: no accent tokens, no hero ids, no feature slot.
    fn own_site() -> PlannerContext {
        let files = [
            ("index.html", "<h1>My shop</h1>\n<p>Fresh bread</p>"),
            ("css/site.css", "h1 { color: navy; }"),
            ("js/app.js", "console.log('bread');"),
        ];
        PlannerContext {
            active_path: Some("css/site.css".into()),
            workspace: Some(
                Workspace::new(
                    files
                        .iter()
                        .map(|(path, source)| {
                            live_code_editor::file::WorkspaceFile::text(*path, *source)
                        })
                        .collect(),
                )
                .unwrap(),
            ),
            ..PlannerContext::default()
        }
    }

    #[test]
    fn unknown_prompts_act_on_nothing_and_say_what_the_agent_can_do() {
        for prompt in [
            "make it ocean blue",
            "add a dark mode toggle",
            "sing me a song",
        ] {
            let plan = plan(prompt, &own_site());
            assert_eq!(plan.intent, Intent::Help, "{prompt}");
            let Stop::NotUnderstood(reply) = stop(&plan) else {
                panic!("{prompt}: not understood");
            };
            assert!(reply.contains(WORKSPACE_HELP), "{reply}");
            assert!(reply.contains(CONNECT_MODEL), "{reply}");
        }
    }

    #[test]
    fn visual_prompts_check_their_targets_before_asking() {
        for (prompt, target) in [
            ("make it rose", "theme-tokens"),
            (r#"set the hero title to "Fresh""#, "hero-title"),
            (r#"set the subtitle to "Daily""#, "hero-subtitle"),
            (r#"add a feature card "Delivery""#, "feature-slot"),
        ] {
            let plan = plan(prompt, &own_site());
            let Stop::Unavailable(error) = stop(&plan) else {
                panic!("{prompt}: fails before any approval");
            };
            assert_eq!(error.code, "PREVIEW_TARGET_NOT_FOUND", "{prompt}");
            let details = error.details.as_ref().unwrap();
            assert_eq!(details["target"], target, "{prompt}");
        }
        // The seed has every target: the theme is planned as before.
        let seed = PlannerContext {
            workspace: Some(
                Workspace::new(
                    crate::seed::SEED_FILES
                        .iter()
                        .map(|(path, source)| {
                            live_code_editor::file::WorkspaceFile::text(*path, *source)
                        })
                        .collect(),
                )
                .unwrap(),
            ),
            ..ctx()
        };
        assert_eq!(
            action(&plan("make it rose", &seed)).name,
            "preview.setTheme"
        );
    }

    #[test]
    fn replace_patches_the_file_holding_the_text_and_reads_name_real_files() {
        let several = plan(r#"replace "bread" with "cake""#, &own_site());
        let Stop::NotUnderstood(ask) = stop(&several) else {
            panic!("several files hold the text: the agent asks which");
        };
        assert!(ask.contains("index.html, js/app.js"), "{ask}");
        let named = plan(r#"replace "bread" with "cake" in js/app.js"#, &own_site());
        assert_eq!(action(&named).arguments["path"], "js/app.js");
        let shop = plan(r#"replace "My shop" with "Our shop""#, &own_site());
        assert_eq!(
            action(&shop).arguments["path"],
            "index.html",
            "not the open css/site.css"
        );
        let missing = plan("download notes.md", &own_site());
        let Stop::Unavailable(error) = stop(&missing) else {
            panic!("a missing file fails before any approval");
        };
        assert_eq!(error.code, "WORKSPACE_FILE_NOT_FOUND");
        assert_eq!(error.details.as_ref().unwrap()["operation"], "download");
        // A bare file name finds the one file of that name in a folder.
        let read = plan("read app.js", &own_site());
        assert_eq!(action(&read).arguments["path"], "js/app.js");
        let download = plan("download", &own_site());
        assert_eq!(action(&download).name, "workspace.downloadFile");
        assert_eq!(
            action(&download).arguments["path"],
            "css/site.css",
            "the active file"
        );
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
    fn status_prompts_only_read_the_status() {
        let status = plan("what is the workspace status?", &ctx());
        assert_eq!(status.intent, Intent::Status);
        assert_eq!(names(&status), ["workspace.getStatus"]);
        assert_eq!(names(&plan("read app.js", &ctx())), ["workspace.readFile"]);
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
