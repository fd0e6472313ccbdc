//! The local agent on the web-coding route: prompt -> `web.*` calls, deterministically. Every
//! plan starts with the `web.getWorkspace` preflight (its revision guards the mutation that
//! follows, filled in by the runner); text mutations also read their file first. Targets are
//! checked against the workspace first, with the workspace planner's checks.

use live_code_editor::workspace::Workspace;
use serde_json::{Value, json};

use super::WebSurface;
use crate::agent::plan::{Action, Intent, Plan, PlannedCall, Stop};
use crate::agent::prompt::{DEFAULT_FEATURE_DESCRIPTION, PromptFacts, first_path, hero_arguments};
use crate::agent::targets::{checked, patch_path, resolve_path};
use crate::agent::understanding::{not_understood, understood_by_intent};
use crate::preview_edits::Theme;

/// What the local web-coding agent understands (its reply to a prompt it cannot act on).
pub const WEB_HELP: &str = "The local web-coding agent understands: a theme (make it violet, emerald, amber or rose); hero copy (set the hero title to \"…\"); a feature card (add a feature \"Title\" \"Description\"); replace \"X\" with \"Y\" (in the file that holds X); write \"source\" to styles.css; read app.js; the workspace status.";

/// Why the web-coding agent does not download: its catalog has no download tool.
pub const WEB_NO_DOWNLOAD: &str = "The web-coding agent cannot download files: web coding has no download tool. Read the file (read index.html) and copy its source.";

/// The local agent's plan for `prompt` against the surface's current files.
pub async fn plan(surface: &WebSurface, prompt: &str) -> Plan {
    let workspace = surface.manager().snapshot().await;
    plan_web(prompt, &workspace)
}

/// Plans the `web.*` calls for `prompt` against `workspace`.
pub fn plan_web(prompt: &str, workspace: &Workspace) -> Plan {
    let facts = read_facts(prompt, workspace);
    let (intent, action) = understood_by_intent(recognise(&facts, workspace), prompt, WEB_HELP);
    let action = match action.and_then(|call| checked(Some(workspace), call)) {
        Ok(action) => action,
        Err(stop) => return Plan::stopped(intent, stop),
    };
    let mut calls = vec![PlannedCall::new("web.getWorkspace", json!({}))];
    if let Some(action) = action {
        let path = action.arguments.get("path").and_then(Value::as_str);
        if let Some(path) = path.filter(|_| reads_first(action.name)) {
            calls.push(PlannedCall::new("web.readFile", json!({"path": path})));
        }
        calls.push(action);
    }
    Plan::acting(intent, calls)
}

/// Text mutations read the file they change first (the inspection boundary of the spec).
fn reads_first(tool: &str) -> bool {
    matches!(tool, "web.applyPatch" | "web.writeFile")
}

/// Reads `prompt`; its path is the workspace file it names (any case), else the first token
/// that looks like a path, resolved like the workspace planner's (a missing one is reported by
/// the target check).
fn read_facts(prompt: &str, workspace: &Workspace) -> PromptFacts {
    PromptFacts::read_with(prompt, |unquoted| {
        unquoted
            .to_lowercase()
            .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '`'))
            .map(|token| token.trim_end_matches(['.', ':', '!', '?']))
            .find_map(|token| {
                workspace
                    .files()
                    .find(|file| file.path.eq_ignore_ascii_case(token))
                    .map(|file| file.path.clone())
            })
            .or_else(|| first_path(unquoted).map(|path| resolve_path(workspace, &path)))
    })
}

fn recognise(facts: &PromptFacts, workspace: &Workspace) -> (Intent, Action) {
    let quotes = &facts.quotes;
    let call = |name, args| Ok(Some(PlannedCall::new(name, args)));
    if facts.has_word("download") {
        return (
            Intent::Download,
            Err(Stop::NotUnderstood(WEB_NO_DOWNLOAD.to_owned())),
        );
    }
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
        let action = patch_path(workspace, facts.path.as_deref(), &quotes[0], occurrence).map(
            |path| {
                Some(PlannedCall::new(
                    "web.applyPatch",
                    json!({"path": path, "search": quotes[0], "replace": quotes[1], "occurrence": occurrence}),
                ))
            },
        );
        return (Intent::ReplaceText, action);
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
        return (Intent::Status, Ok(None));
    }
    (Intent::Help, Err(not_understood(facts.prompt(), WEB_HELP)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::prompt::split_quotes;
    use crate::agent::understanding::CONNECT_MODEL;
    use crate::surfaces::web::seed::WEB_SEED_FILES;
    use live_code_editor::file::WorkspaceFile;
    use serde_json::Map;

    fn ctx() -> Workspace {
        Workspace::new(
            WEB_SEED_FILES
                .iter()
                .map(|(path, source)| WorkspaceFile::text(*path, *source))
                .collect(),
        )
        .unwrap()
    }

    fn stop(plan: &Plan) -> &Stop {
        assert!(plan.calls.is_empty(), "a stopped plan calls nothing");
        plan.stop.as_ref().expect("stopped")
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
        assert!(
            matches!(stop(&missing), Stop::Unavailable(error) if error.code == "WORKSPACE_PATCH_NOT_FOUND"),
            "no file holds the text: nothing to approve"
        );
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
        let missing = plan_web("read notes.md", &ctx());
        assert!(
            matches!(stop(&missing), Stop::Unavailable(error) if error.code == "WORKSPACE_FILE_NOT_FOUND"),
            "only workspace files are read"
        );
    }

    #[test]
    fn status_and_unknown_prompts_only_read_the_workspace() {
        let status = plan_web("what is the revision?", &ctx());
        assert_eq!(status.intent, Intent::Status);
        assert_eq!(names(&status), ["web.getWorkspace"]);
        let help = plan_web("make it ocean blue", &ctx());
        assert_eq!(help.intent, Intent::Help);
        let Stop::NotUnderstood(reply) = stop(&help) else {
            panic!("not understood");
        };
        assert!(
            reply.contains(WEB_HELP) && reply.contains(CONNECT_MODEL),
            "{reply}"
        );
        let download = plan_web("download index.html", &ctx());
        assert_eq!(
            stop(&download),
            &Stop::NotUnderstood(WEB_NO_DOWNLOAD.to_owned())
        );
    }

    #[test]
    fn visual_prompts_check_their_targets_on_a_persons_own_site() {
        let own = Workspace::new(vec![
            WorkspaceFile::text("index.html", "<h1>My shop</h1>\n<p>Open daily</p>"),
            WorkspaceFile::text("styles.css", "h1 { color: navy; }"),
        ])
        .unwrap();
        for (prompt, target) in [
            ("make it rose", "theme-tokens"),
            (r#"set the hero title to "Fresh bread""#, "hero-title"),
            (r#"set the subtitle to "Open late""#, "hero-subtitle"),
            (r#"add a feature "Delivery""#, "feature-slot"),
        ] {
            let plan = plan_web(prompt, &own);
            let Stop::Unavailable(error) = stop(&plan) else {
                panic!("{prompt}: a missing target fails before any approval");
            };
            assert_eq!(error.code, "PREVIEW_TARGET_NOT_FOUND", "{prompt}");
            assert_eq!(
                error.details.as_ref().unwrap()["target"],
                target,
                "{prompt}"
            );
        }
        let patch = plan_web(r#"replace "My shop" with "Our shop""#, &own);
        assert_eq!(action(&patch).arguments["path"], "index.html");
        let nested = Workspace::new(vec![
            WorkspaceFile::text("index.html", "<p>x</p>"),
            WorkspaceFile::text("js/app.js", "let x;"),
        ])
        .unwrap();
        assert_eq!(
            action(&plan_web("read app.js", &nested)).arguments["path"],
            "js/app.js",
            "a bare name finds the one file of that name"
        );
    }

    #[test]
    fn quotes_are_split_robustly() {
        let (quotes, rest) = split_quotes(r#"a "b c" “d” "" "unclosed"#);
        assert_eq!(quotes, ["b c", "d"]);
        assert!(rest.contains("unclosed"));
    }
}
