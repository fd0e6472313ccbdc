//! The local agent on the web-coding route: prompt -> `web.*` calls, deterministically. Every
//! plan starts with the `web.getWorkspace` preflight (its revision guards the mutation that
//! follows, filled in by the runner); text mutations also read their file first.

use serde_json::{Value, json};

use super::WebSurface;
use crate::agent::planner::{
    DEFAULT_FEATURE_DESCRIPTION, Intent, Plan, PlannedCall, PromptFacts, hero_arguments,
};
use crate::preview_edits::Theme;

/// File patched when the prompt names none and no file contains the search text.
pub const DEFAULT_PATCH_PATH: &str = "index.html";

/// What the planner knows about the workspace: `(path, source)` of every text file.
#[derive(Debug, Clone, Default)]
pub struct WebPlannerContext {
    /// Files in canonical order.
    pub files: Vec<(String, String)>,
}

/// The local agent's plan for `prompt` against the surface's current files.
pub async fn plan(surface: &WebSurface, prompt: &str) -> Plan {
    let workspace = surface.manager().snapshot().await;
    let context = WebPlannerContext {
        files: workspace
            .files()
            .filter_map(|file| Some((file.path.clone(), file.source()?.to_owned())))
            .collect(),
    };
    plan_web(prompt, &context)
}

/// Plans the `web.*` calls for `prompt`.
pub fn plan_web(prompt: &str, context: &WebPlannerContext) -> Plan {
    let facts = read_facts(prompt, context);
    let (intent, action) = recognise(&facts, context);
    let mut calls = vec![PlannedCall::new("web.getWorkspace", json!({}))];
    if let Some(action) = action {
        let path = action.arguments.get("path").and_then(Value::as_str);
        if let Some(path) = path.filter(|_| reads_first(action.name)) {
            calls.push(PlannedCall::new("web.readFile", json!({"path": path})));
        }
        calls.push(action);
    }
    Plan { intent, calls }
}

/// Text mutations read the file they change first (the inspection boundary of the spec).
fn reads_first(tool: &str) -> bool {
    matches!(tool, "web.applyPatch" | "web.writeFile")
}

/// Reads `prompt`; its path is the workspace file it names.
fn read_facts(prompt: &str, context: &WebPlannerContext) -> PromptFacts {
    PromptFacts::read_with(prompt, |unquoted| {
        unquoted
            .to_lowercase()
            .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '`'))
            .map(|token| token.trim_end_matches(['.', ':', '!', '?']))
            .find_map(|token| {
                context
                    .files
                    .iter()
                    .find(|(path, _)| path.eq_ignore_ascii_case(token))
                    .map(|(path, _)| path.clone())
            })
    })
}

fn recognise(facts: &PromptFacts, context: &WebPlannerContext) -> (Intent, Option<PlannedCall>) {
    let quotes = &facts.quotes;
    let call = |name, args| Some(PlannedCall::new(name, args));
    if let Some(theme) = Theme::ALL
        .into_iter()
        .find(|theme| facts.has_word(theme.name()))
    {
        return (
            Intent::SetTheme,
            call("web.setTheme", json!({"theme": theme.name()})),
        );
    }
    // Visual copy first (as on the standalone workspace): "change the hero title to "A" and
    // subtitle "B"" is a hero update, not a patch of "A" with "B".
    if facts.path.is_none()
        && !quotes.is_empty()
        && facts.has_any(&["hero", "headline", "title", "subtitle", "tagline"])
    {
        return (
            Intent::UpdateHero,
            call("web.updateHero", hero_arguments(facts)),
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
                "web.addFeature",
                json!({"title": quotes[0], "description": description}),
            ),
        );
    }
    if quotes.len() >= 2 && facts.has_any(&["replace", "change", "swap", "patch"]) {
        let occurrence = if facts.has_any(&["all", "every", "everywhere"]) {
            "all"
        } else {
            "first"
        };
        let path = facts
            .path
            .clone()
            .unwrap_or_else(|| file_containing(context, &quotes[0]));
        return (
            Intent::ReplaceText,
            call(
                "web.applyPatch",
                json!({"path": path, "search": quotes[0], "replace": quotes[1], "occurrence": occurrence}),
            ),
        );
    }
    if let Some(path) = &facts.path {
        if quotes.len() == 1 && facts.has_any(&["write", "overwrite", "replace"]) {
            // A full-file replacement: the one quoted string becomes the file's source.
            return (
                Intent::ReplaceText,
                call("web.writeFile", json!({"path": path, "source": quotes[0]})),
            );
        }
        if facts.has_any(&["read", "show", "print", "view", "cat", "open"]) {
            return (
                Intent::ReadFile,
                call("web.readFile", json!({"path": path})),
            );
        }
    }
    if facts.has_any(&["status", "state", "revision", "workspace", "files"]) {
        return (Intent::Status, None);
    }
    (Intent::Help, None)
}

/// The first file whose source contains `search`, else [`DEFAULT_PATCH_PATH`].
fn file_containing(context: &WebPlannerContext, search: &str) -> String {
    context
        .files
        .iter()
        .find(|(_, source)| source.contains(search))
        .map_or_else(|| DEFAULT_PATCH_PATH.to_owned(), |(path, _)| path.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::planner::split_quotes;
    use crate::surfaces::web::seed::WEB_SEED_FILES;
    use serde_json::Map;

    fn ctx() -> WebPlannerContext {
        WebPlannerContext {
            files: WEB_SEED_FILES
                .iter()
                .map(|(path, source)| ((*path).to_owned(), (*source).to_owned()))
                .collect(),
        }
    }

    fn names(plan: &Plan) -> Vec<&'static str> {
        plan.calls.iter().map(|call| call.name).collect()
    }

    fn action(plan: &Plan) -> &PlannedCall {
        plan.calls.last().unwrap()
    }

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn theme_names_set_the_theme_after_the_preflight() {
        let plan = plan_web("make it amber", &ctx());
        assert_eq!(plan.intent, Intent::SetTheme);
        assert_eq!(names(&plan), ["web.getWorkspace", "web.setTheme"]);
        assert_eq!(action(&plan).arguments, object(json!({"theme": "amber"})));
        assert!(action(&plan).is_revision_guarded());
    }

    #[test]
    fn quoted_hero_copy_updates_the_hero() {
        let plan = plan_web(r#"set the hero to "Hello" and "World""#, &ctx());
        assert_eq!(plan.intent, Intent::UpdateHero);
        assert_eq!(names(&plan), ["web.getWorkspace", "web.updateHero"]);
        assert_eq!(
            action(&plan).arguments,
            object(json!({"title": "Hello", "subtitle": "World"}))
        );
        let two = plan_web(r#"change the hero title to "A" and subtitle "B""#, &ctx());
        assert_eq!(
            action(&two).arguments,
            object(json!({"title": "A", "subtitle": "B"})),
            "two quotes with a hero word are hero copy, not a patch"
        );
        let subtitle = plan_web("change the subtitle to “Only this”", &ctx());
        assert_eq!(
            action(&subtitle).arguments,
            object(json!({"subtitle": "Only this"}))
        );
    }

    #[test]
    fn quoted_features_add_a_card() {
        let plan = plan_web(r#"add a feature "Offline" "Works without a key""#, &ctx());
        assert_eq!(plan.intent, Intent::AddFeature);
        assert_eq!(
            action(&plan).arguments,
            object(json!({"title": "Offline", "description": "Works without a key"}))
        );
        let single = plan_web(r#"add a feature "Solo""#, &ctx());
        assert_eq!(
            action(&single).arguments["description"],
            DEFAULT_FEATURE_DESCRIPTION
        );
        assert!(action(&single).is_revision_guarded());
    }

    #[test]
    fn replace_patches_the_file_holding_the_text_after_reading_it() {
        let plan = plan_web(r#"replace "Pulses" with "Beats""#, &ctx());
        assert_eq!(plan.intent, Intent::ReplaceText);
        assert_eq!(
            names(&plan),
            ["web.getWorkspace", "web.readFile", "web.applyPatch"]
        );
        assert_eq!(plan.calls[1].arguments["path"], "index.html");
        let patch = action(&plan);
        assert_eq!(
            patch.arguments,
            object(
                json!({"path": "index.html", "search": "Pulses", "replace": "Beats", "occurrence": "first"})
            )
        );
        assert!(patch.is_revision_guarded());
        let css = plan_web(r#"replace all "12px" with "14px""#, &ctx());
        assert_eq!(action(&css).arguments["path"], "styles.css");
        assert_eq!(action(&css).arguments["occurrence"], "all");
        let named = plan_web(r#"in app.js replace "x" with "y""#, &ctx());
        assert_eq!(action(&named).arguments["path"], "app.js");
        let missing = plan_web(r#"replace "nowhere" with "y""#, &ctx());
        assert_eq!(action(&missing).arguments["path"], DEFAULT_PATCH_PATH);
    }

    #[test]
    fn files_are_read_or_written_by_name() {
        let read = plan_web("read app.js", &ctx());
        assert_eq!(read.intent, Intent::ReadFile);
        assert_eq!(names(&read), ["web.getWorkspace", "web.readFile"]);
        assert_eq!(action(&read).arguments, object(json!({"path": "app.js"})));
        let write = plan_web(r#"write "body { color: red; }" to styles.css"#, &ctx());
        assert_eq!(
            names(&write),
            ["web.getWorkspace", "web.readFile", "web.writeFile"]
        );
        assert_eq!(
            action(&write).arguments,
            object(json!({"path": "styles.css", "source": "body { color: red; }"}))
        );
        assert!(action(&write).is_revision_guarded());
        assert_eq!(
            names(&plan_web("read notes.md", &ctx())),
            ["web.getWorkspace"],
            "only workspace files are read"
        );
    }

    #[test]
    fn status_and_unknown_prompts_only_read_the_workspace() {
        let status = plan_web("what is the revision?", &ctx());
        assert_eq!(status.intent, Intent::Status);
        assert_eq!(names(&status), ["web.getWorkspace"]);
        let help = plan_web("sing me a song", &ctx());
        assert_eq!(help.intent, Intent::Help);
        assert_eq!(names(&help), ["web.getWorkspace"]);
    }

    #[test]
    fn quotes_are_split_robustly() {
        let (quotes, rest) = split_quotes(r#"a "b c" “d” "" "unclosed"#);
        assert_eq!(quotes, ["b c", "d"]);
        assert!(rest.contains("unclosed"));
    }
}
