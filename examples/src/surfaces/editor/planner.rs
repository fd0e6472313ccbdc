//! The local agent's editor planner, following the spec's sequence:
//! `editor.getStatus -> editor.listFiles -> editor.openFile (when a path is named) ->
//! editor.getDocument -> the mutation`. The runner fills `expectedDocumentRevision` of document
//! mutations from the `documentRevision` the preflight observed, and
//! `expectedWorkspaceRevision` of saves from `workspaceRevision`.

use live_code_editor::file::{is_asset_path, is_text_path};
use serde_json::json;

use super::scenarios::Scenario;
use crate::agent::planner::{Intent, Plan, PlannedCall, split_quotes};

/// What the local agent understands on the editor (shown by the page next to a status-only run).
pub const EDITOR_HELP: &str = "The local editor agent understands: replace \"X\" with \"Y\" (a patch of the open document, add \"all\" for every match); open app.js; use the counter, greeting or todo-list scenario; reset the document; save (the open file) or save all. Anything else reads the status.";

/// Plans `prompt` on the editor whose open document is `active_path`.
pub fn plan_prompt(prompt: &str, active_path: &str) -> Plan {
    let facts = Facts::read(prompt);
    let (intent, action) = recognise(&facts, active_path);
    Plan {
        intent,
        calls: with_preflight(intent, facts.path.as_deref(), action),
    }
}

fn recognise(facts: &Facts, active_path: &str) -> (Intent, Option<PlannedCall>) {
    let call = |name, arguments| Some(PlannedCall::new(name, arguments));
    if facts.has_word("save") {
        if facts.has_any(&["all", "everything", "every"]) {
            return (Intent::Save, call("editor.saveAll", json!({})));
        }
        let path = facts.path.as_deref().unwrap_or(active_path);
        return (Intent::Save, call("editor.saveFile", json!({"path": path})));
    }
    if facts.quotes.len() >= 2
        && facts.has_any(&["replace", "change", "swap", "rename", "rewrite", "patch"])
    {
        let occurrence = if facts.has_any(&["all", "every", "everywhere"]) {
            "all"
        } else {
            "first"
        };
        let arguments = json!({"search": facts.quotes[0], "replace": facts.quotes[1], "occurrence": occurrence});
        return (Intent::ReplaceText, call("editor.applyPatch", arguments));
    }
    if let Some(scenario) = facts.scenario() {
        let arguments = json!({"scenario": scenario.name()});
        return (Intent::SetScenario, call("editor.setScenario", arguments));
    }
    if facts.has_word("reset") {
        return (Intent::Reset, call("editor.resetDocument", json!({})));
    }
    if facts.path.is_some() {
        return (Intent::OpenFile, None);
    }
    if facts.has_any(&["status", "state", "dirty", "changed", "revision", "preview"]) {
        return (Intent::Status, None);
    }
    (Intent::Help, None)
}

/// Status, file list, the named file opened, the document read, then the action. Saves skip
/// the document read; status and help only read the status.
fn with_preflight(
    intent: Intent,
    path: Option<&str>,
    action: Option<PlannedCall>,
) -> Vec<PlannedCall> {
    let mut calls = vec![PlannedCall::new("editor.getStatus", json!({}))];
    if matches!(intent, Intent::Status | Intent::Help) {
        return calls;
    }
    calls.push(PlannedCall::new("editor.listFiles", json!({})));
    let saving = intent == Intent::Save;
    if let (Some(path), false) = (path, saving) {
        calls.push(PlannedCall::new("editor.openFile", json!({"path": path})));
    }
    if !saving {
        calls.push(PlannedCall::new("editor.getDocument", json!({})));
    }
    calls.extend(action);
    calls
}

/// Words, quoted strings and the first file path of a prompt.
struct Facts {
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

fn looks_like_path(token: &str) -> bool {
    let valid = token
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '.' | '/' | '_' | '-'));
    valid && (is_text_path(token) || is_asset_path(token))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::planner::DOCUMENT_GUARD;
    use serde_json::Value;

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
        assert_eq!(names(&help), ["editor.getStatus"]);
        let one_quote = plan_prompt(r#"replace "only one""#, "index.html");
        assert_eq!(one_quote.intent, Intent::Help);
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
