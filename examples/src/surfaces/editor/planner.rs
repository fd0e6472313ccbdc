//! The local agent's editor planner, following the spec's sequence:
//! `editor.getStatus -> editor.listFiles -> editor.openFile (when a path is named, or another
//! file holds a patch's search text) -> editor.getDocument -> the mutation`. A prompt it does
//! not understand, or one naming a file or text the workspace lacks, plans no call (the
//! workspace planner's checks). The runner fills `expectedDocumentRevision` of document
//! mutations from the `documentRevision` the preflight observed, and
//! `expectedWorkspaceRevision` of saves from `workspaceRevision`.

use live_code_editor::workspace::Workspace;
use serde_json::json;

use super::scenarios::Scenario;
use super::state::text_source;
use crate::agent::plan::{Intent, Plan, PlannedCall, Stop};
use crate::agent::prompt::{looks_like_path, split_quotes};
use crate::agent::targets::{checked, missing_file, patch_path, resolve_path};
use crate::agent::understanding::{
    CommandForm, PathRule, command, intent_knows, not_understood, understood,
};

/// What the local editor agent understands (its reply to a prompt it cannot act on).
pub const EDITOR_HELP: &str = "The local editor agent understands: replace \"X\" with \"Y\" (in the file that holds X; add \"all\" for every match); open or read app.js; use the counter, greeting or todo-list scenario; reset the document; save (the open file) or save all; the editor status.";

/// Why the editor's agent does not download: its catalog has no download tool.
pub const EDITOR_NO_DOWNLOAD: &str = "The editor's local agent cannot download files: the editor has no download tool. Save the file to the linked folder (save), or copy it from the editor.";

/// What a prompt asks of the editor: a file to open first (if any), then the call.
struct Step {
    open: Option<String>,
    call: Option<PlannedCall>,
}

/// Plans `prompt` on the editor whose open document is `active_path`, checking named files and
/// search texts against `workspace` when given.
pub fn plan_prompt(prompt: &str, active_path: &str, workspace: Option<&Workspace>) -> Plan {
    let mut facts = Facts::read(prompt);
    if let Some(workspace) = workspace {
        facts.path = facts.path.map(|path| resolve_path(workspace, &path));
    }
    let (intent, step) = recognise(&facts, active_path, workspace);
    let (intent, step) = match step {
        Ok(step) => understood_step(intent, step, prompt),
        Err(stop) => (intent, Err(stop)),
    };
    let step = step.and_then(|step| {
        let missing = workspace
            .zip(step.open.as_deref())
            .and_then(|(workspace, path)| unopenable(workspace, path));
        match missing {
            Some(error) => Err(Stop::Unavailable(error)),
            None => Ok(Step {
                call: checked(workspace, step.call)?,
                ..step
            }),
        }
    });
    match step {
        Ok(step) => Plan::acting(intent, with_preflight(intent, step)),
        Err(stop) => Plan::stopped(intent, stop),
    }
}

/// `step` if every clause of `prompt` is one its intent reads (scenario names included).
fn understood_step(intent: Intent, step: Step, prompt: &str) -> (Intent, Result<Step, Stop>) {
    let known = |word: &str| {
        intent_knows(intent, word)
            || (intent == Intent::SetScenario && Scenario::parse(word).is_some())
            || (intent == Intent::OpenFile && intent_knows(Intent::ReadFile, word))
    };
    let (intent, checked) = understood((intent, Ok(None)), prompt, known, EDITOR_HELP);
    (intent, checked.map(|_| step))
}

/// "save", "save all", "save styles.css": saves are planned only from a prompt that is one.
const EDITOR_SAVE: CommandForm = CommandForm {
    path: PathRule::Optional,
    ..command(
        &["save"],
        &[
            "all",
            "everything",
            "every",
            "files",
            "file",
            "changes",
            "work",
            "document",
        ],
    )
};

/// "reset", "reset the document": the document reset is planned only from a prompt that is one.
const EDITOR_RESET: CommandForm = command(
    &["reset"],
    &[
        "document",
        "editor",
        "everything",
        "all",
        "files",
        "to",
        "seed",
        "starter",
        "default",
        "original",
        "back",
        "start",
    ],
);

/// Why `editor.openFile` would fail on `path`: no such file, or an asset (text files only).
fn unopenable(workspace: &Workspace, path: &str) -> Option<tool_protocol::ToolCallError> {
    missing_file(workspace, path, "open").or_else(|| {
        let file = workspace.file(path)?;
        text_source(file, "open").err().map(Into::into)
    })
}

fn recognise(
    facts: &Facts,
    active_path: &str,
    workspace: Option<&Workspace>,
) -> (Intent, Result<Step, Stop>) {
    let named = facts.path.clone();
    let step = |open: Option<String>, name, arguments| {
        Ok(Step {
            open,
            call: Some(PlannedCall::new(name, arguments)),
        })
    };
    if facts.has_word("download") {
        return (
            Intent::Download,
            Err(Stop::NotUnderstood(EDITOR_NO_DOWNLOAD.to_owned())),
        );
    }
    if EDITOR_SAVE.matches(&facts.prompt) {
        if facts.has_any(&["all", "everything", "every"]) {
            return (Intent::Save, step(None, "editor.saveAll", json!({})));
        }
        let path = facts.path.as_deref().unwrap_or(active_path);
        return (
            Intent::Save,
            step(None, "editor.saveFile", json!({"path": path})),
        );
    }
    if facts.quotes.len() >= 2
        && facts.has_any(&["replace", "change", "swap", "rename", "rewrite", "patch"])
    {
        let occurrence = if facts.has_any(&["all", "every", "everywhere"]) {
            "all"
        } else {
            "first"
        };
        // The file that holds the text is opened first, not whichever file happens to be open.
        let open = match workspace {
            Some(workspace) => {
                match patch_path(workspace, named.as_deref(), &facts.quotes[0], occurrence) {
                    Ok(path) => (path != active_path).then_some(path),
                    Err(stop) => return (Intent::ReplaceText, Err(stop)),
                }
            }
            None => named,
        };
        let arguments = json!({"search": facts.quotes[0], "replace": facts.quotes[1], "occurrence": occurrence});
        return (
            Intent::ReplaceText,
            step(open, "editor.applyPatch", arguments),
        );
    }
    if let Some(scenario) = facts.scenario() {
        let arguments = json!({"scenario": scenario.name()});
        return (
            Intent::SetScenario,
            step(named, "editor.setScenario", arguments),
        );
    }
    if EDITOR_RESET.matches(&facts.prompt) {
        return (Intent::Reset, step(None, "editor.resetDocument", json!({})));
    }
    if named.is_some() {
        return (
            Intent::OpenFile,
            Ok(Step {
                open: named,
                call: None,
            }),
        );
    }
    if facts.has_any(&["status", "state", "dirty", "changed", "revision", "preview"]) {
        return (
            Intent::Status,
            Ok(Step {
                open: None,
                call: None,
            }),
        );
    }
    (
        Intent::Help,
        Err(not_understood(&facts.prompt, EDITOR_HELP)),
    )
}

/// Status, file list, the file to open, the document read, then the action. Saves skip the
/// document read; a status request only reads the status.
fn with_preflight(intent: Intent, step: Step) -> Vec<PlannedCall> {
    let mut calls = vec![PlannedCall::new("editor.getStatus", json!({}))];
    if intent == Intent::Status {
        return calls;
    }
    calls.push(PlannedCall::new("editor.listFiles", json!({})));
    let saving = intent == Intent::Save;
    if let (Some(path), false) = (step.open, saving) {
        calls.push(PlannedCall::new("editor.openFile", json!({"path": path})));
    }
    if !saving {
        calls.push(PlannedCall::new("editor.getDocument", json!({})));
    }
    calls.extend(step.call);
    calls
}

/// Words, quoted strings and the first file path of a prompt.
struct Facts {
    prompt: String,
    words: Vec<String>,
    quotes: Vec<String>,
    path: Option<String>,
}

impl Facts {
    fn read(prompt: &str) -> Self {
        let (quotes, unquoted) = split_quotes(prompt);
        let path = unquoted
            .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '`'))
            .map(|token| token.trim_end_matches(['.', ':', '!', '?']))
            .find(|token| looks_like_path(token))
            .map(str::to_owned);
        let words = unquoted
            .to_lowercase()
            .split(|c: char| !(c.is_alphanumeric() || c == '-'))
            .filter(|word| !word.is_empty())
            .map(str::to_owned)
            .collect();
        Self {
            prompt: prompt.to_owned(),
            words,
            quotes,
            path,
        }
    }

    fn has_word(&self, word: &str) -> bool {
        self.words.iter().any(|token| token == word)
    }

    fn has_any(&self, words: &[&str]) -> bool {
        words.iter().any(|word| self.has_word(word))
    }

    fn scenario(&self) -> Option<Scenario> {
        self.words.iter().find_map(|word| Scenario::parse(word))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::guards::DOCUMENT_GUARD;
    use crate::agent::understanding::CONNECT_MODEL;
    use live_code_editor::file::WorkspaceFile;
    use serde_json::Value;

    /// Plans without a workspace to check against (the sequence tests).
    fn plan_prompt(prompt: &str, active_path: &str) -> Plan {
        super::plan_prompt(prompt, active_path, None)
    }

    fn workspace() -> Workspace {
        Workspace::new(vec![
            WorkspaceFile::text("index.html", "<h1>Count</h1>"),
            WorkspaceFile::text("styles.css", "h1 { margin: 12px; }"),
            WorkspaceFile::text("app.js", "let count = 0; // 12px"),
            WorkspaceFile::asset("assets/logo.svg", b"<svg/>".to_vec()),
        ])
        .unwrap()
    }

    fn stop(plan: &Plan) -> &Stop {
        assert!(plan.calls.is_empty(), "a stopped plan calls nothing");
        plan.stop.as_ref().expect("stopped")
    }

    fn arguments(call: &PlannedCall) -> Value {
        Value::Object(call.arguments.clone())
    }

    fn names(plan: &Plan) -> Vec<&'static str> {
        plan.calls.iter().map(|call| call.name).collect()
    }

    fn action(plan: &Plan) -> &PlannedCall {
        plan.calls.last().unwrap()
    }

    #[test]
    fn a_patch_of_a_named_file_follows_the_editor_sequence() {
        let plan = plan_prompt(r#"in app.js replace "Count" with "Total""#, "index.html");
        assert_eq!(plan.intent, Intent::ReplaceText);
        assert_eq!(
            names(&plan),
            [
                "editor.getStatus",
                "editor.listFiles",
                "editor.openFile",
                "editor.getDocument",
                "editor.applyPatch"
            ]
        );
        assert_eq!(arguments(&plan.calls[2]), json!({"path": "app.js"}));
        assert_eq!(
            arguments(action(&plan)),
            json!({"search": "Count", "replace": "Total", "occurrence": "first"})
        );
        assert_eq!(action(&plan).revision_guard(), Some(DOCUMENT_GUARD));
        assert!(!plan.calls[2].is_revision_guarded(), "opening is selection");
    }

    #[test]
    fn an_unnamed_patch_edits_the_open_document() {
        let plan = plan_prompt(r#"replace all “a” with “b”"#, "styles.css");
        assert_eq!(
            names(&plan),
            [
                "editor.getStatus",
                "editor.listFiles",
                "editor.getDocument",
                "editor.applyPatch"
            ]
        );
        assert_eq!(action(&plan).arguments["occurrence"], "all");
    }

    #[test]
    fn scenarios_reset_and_open() {
        let scenario = plan_prompt("use the greeting scenario", "index.html");
        assert_eq!(scenario.intent, Intent::SetScenario);
        assert_eq!(
            arguments(action(&scenario)),
            json!({"scenario": "greeting"})
        );
        assert!(action(&scenario).is_revision_guarded());
        assert_eq!(
            action(&plan_prompt("switch to todo-list", "index.html")).arguments["scenario"],
            "todo-list"
        );
        let reset = plan_prompt("reset the document", "app.js");
        assert_eq!(reset.intent, Intent::Reset);
        assert_eq!(action(&reset).name, "editor.resetDocument");
        assert!(action(&reset).is_revision_guarded());
        let open = plan_prompt("open styles.css", "index.html");
        assert_eq!(open.intent, Intent::OpenFile);
        assert_eq!(
            names(&open),
            [
                "editor.getStatus",
                "editor.listFiles",
                "editor.openFile",
                "editor.getDocument"
            ]
        );
    }

    #[test]
    fn saves_name_the_open_or_given_file_or_everything() {
        let save = plan_prompt("save", "app.js");
        assert_eq!(
            names(&save),
            ["editor.getStatus", "editor.listFiles", "editor.saveFile"]
        );
        assert_eq!(arguments(action(&save)), json!({"path": "app.js"}));
        assert!(action(&save).is_revision_guarded());
        assert_eq!(
            action(&plan_prompt("save styles.css", "app.js")).arguments["path"],
            "styles.css"
        );
        let all = plan_prompt("save all files", "app.js");
        assert_eq!(action(&all).name, "editor.saveAll");
    }

    #[test]
    fn status_and_unknown_prompts_only_read_the_status() {
        let status = plan_prompt("what is the preview status?", "index.html");
        assert_eq!(status.intent, Intent::Status);
        assert_eq!(names(&status), ["editor.getStatus"]);
        let help = plan_prompt("sing me a song", "index.html");
        assert_eq!(help.intent, Intent::Help);
        let Stop::NotUnderstood(reply) = stop(&help) else {
            panic!("not understood");
        };
        assert!(
            reply.contains(EDITOR_HELP) && reply.contains(CONNECT_MODEL),
            "{reply}"
        );
        let one_quote = plan_prompt(r#"replace "only one""#, "index.html");
        assert_eq!(one_quote.intent, Intent::Help);
    }

    #[test]
    fn reads_patches_and_downloads_follow_the_workspace() {
        let files = workspace();
        let read = super::plan_prompt("read app.js", "index.html", Some(&files));
        assert_eq!(
            names(&read),
            [
                "editor.getStatus",
                "editor.listFiles",
                "editor.openFile",
                "editor.getDocument"
            ],
            "the document read is what the run shows"
        );
        // The file holding the text is opened first, whichever file is open.
        let patch = super::plan_prompt(
            r#"replace "count" with "total""#,
            "index.html",
            Some(&files),
        );
        assert_eq!(arguments(&patch.calls[2]), json!({"path": "app.js"}));
        assert_eq!(action(&patch).name, "editor.applyPatch");
        let open = super::plan_prompt(
            r#"replace "Count" with "Total""#,
            "index.html",
            Some(&files),
        );
        assert!(!names(&open).contains(&"editor.openFile"), "already open");
        let several =
            super::plan_prompt(r#"replace "12px" with "1rem""#, "index.html", Some(&files));
        assert!(
            matches!(stop(&several), Stop::NotUnderstood(ask) if ask.contains("styles.css, app.js"))
        );
        let none = super::plan_prompt(r#"replace "absent" with "x""#, "index.html", Some(&files));
        assert!(
            matches!(stop(&none), Stop::Unavailable(error) if error.code == "WORKSPACE_PATCH_NOT_FOUND")
        );
        let missing = super::plan_prompt("open notes.md", "index.html", Some(&files));
        assert!(
            matches!(stop(&missing), Stop::Unavailable(error) if error.code == "WORKSPACE_FILE_NOT_FOUND")
        );
        let asset = super::plan_prompt("open assets/logo.svg", "index.html", Some(&files));
        assert!(
            matches!(stop(&asset), Stop::Unavailable(error) if error.code == "WORKSPACE_FILE_TYPE_CONFLICT"),
            "the editor opens text files only: no approval that can only fail"
        );
        let download = super::plan_prompt("download index.html", "index.html", Some(&files));
        assert_eq!(
            stop(&download),
            &Stop::NotUnderstood(EDITOR_NO_DOWNLOAD.to_owned())
        );
        let theme = super::plan_prompt("make it ocean blue", "index.html", Some(&files));
        assert!(matches!(stop(&theme), Stop::NotUnderstood(_)));
    }

    #[test]
    fn quotes_are_not_words_and_paths_need_a_known_extension() {
        let (quotes, rest) = split_quotes(r#"a "save me" “d” "unclosed"#);
        assert_eq!(quotes, ["save me", "d"]);
        assert!(rest.contains("unclosed"));
        let plan = plan_prompt(r#"replace "save" with "keep""#, "index.html");
        assert_eq!(plan.intent, Intent::ReplaceText, "quoted words are data");
        assert!(Facts::read("version 1.5 is out.").path.is_none());
        assert_eq!(
            Facts::read("open assets/logo.svg!").path.as_deref(),
            Some("assets/logo.svg")
        );
    }
}
