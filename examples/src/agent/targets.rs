//! What the planners check in the workspace before they plan a change, so a run never asks a
//! person to approve a call that can only fail: the targets of the visual tools (stylesheet
//! accent tokens, hero title and subtitle, feature slot), the file a prompt names, and the file
//! that holds a patch's search text. Every surface's planner uses these same checks.

use live_code_editor::workspace::{Workspace, WorkspaceError, WorkspaceErrorCode};
use serde_json::{Value, json};
use tool_protocol::ToolCallError;

use super::plan::{PlannedCall, Stop};
use crate::preview_edits::{
    self, PreviewTarget, Theme, html_entry_path, missing_target, stylesheet_path,
};

/// The `PREVIEW_TARGET_NOT_FOUND` error a visual call (`*.setTheme`, `*.updateHero`,
/// `*.addFeature`) would fail with in `workspace`, found by running the tool's own edit on the
/// current source; `None` when the target is there or the call is not a visual one.
pub(crate) fn missing_visual_target(
    workspace: &Workspace,
    call: &PlannedCall,
) -> Option<ToolCallError> {
    let text = |name: &str| call.arguments.get(name).and_then(Value::as_str);
    let (path, outcome) = match call.name.rsplit('.').next()? {
        "setTheme" => {
            let theme = Theme::from_name(text("theme")?)?;
            let path = stylesheet_path(workspace);
            let outcome = edit(
                workspace,
                path.as_deref(),
                PreviewTarget::Stylesheet,
                |css| preview_edits::set_theme(css, theme),
            );
            (path, outcome)
        }
        "updateHero" => {
            let path = html_entry_path(workspace);
            let outcome = edit(
                workspace,
                path.as_deref(),
                PreviewTarget::HtmlEntry,
                |html| preview_edits::update_hero(html, text("title"), text("subtitle")),
            );
            (path, outcome)
        }
        "addFeature" => {
            let path = html_entry_path(workspace);
            let outcome = edit(
                workspace,
                path.as_deref(),
                PreviewTarget::HtmlEntry,
                |html| preview_edits::add_feature(html, "title", "description"),
            );
            (path, outcome)
        }
        _ => return None,
    };
    let target = outcome.err()?;
    Some(missing_target(
        target,
        path.as_deref(),
        what_it_needs(target, path.as_deref()),
    ))
}

/// Runs `apply` on the source at `path`; the missing target when there is no such file or the
/// edit finds no target.
fn edit(
    workspace: &Workspace,
    path: Option<&str>,
    missing_file: PreviewTarget,
    apply: impl FnOnce(&str) -> Result<String, PreviewTarget>,
) -> Result<(), PreviewTarget> {
    let source = path
        .and_then(|path| workspace.file(path))
        .and_then(|file| file.source())
        .ok_or(missing_file)?;
    apply(source).map(drop)
}

/// Which target is missing and what the page would need for the change.
fn what_it_needs(target: PreviewTarget, path: Option<&str>) -> String {
    let file = path.unwrap_or("the page");
    match target {
        PreviewTarget::Stylesheet => "The workspace has no stylesheet to hold a theme. Add a .css file linked from the page, with --accent and --accent-soft colour tokens.".to_owned(),
        PreviewTarget::HtmlEntry => "The workspace has no HTML page to change. Add an .html file first.".to_owned(),
        PreviewTarget::ThemeTokens => format!(
            "{file} has no --accent and --accent-soft hex colour tokens, which a theme change rewrites. Add them (for example :root {{ --accent: #8b5cf6; --accent-soft: #f0eaff; }}) and use var(--accent) in your rules, or ask for a text change: replace \"old\" with \"new\"."
        ),
        PreviewTarget::HeroTitle => format!(
            "{file} has no <h1 id=\"hero-title\"> heading, which a hero title change rewrites. Give your main heading id=\"hero-title\", or ask for a text change: replace \"old\" with \"new\"."
        ),
        PreviewTarget::HeroSubtitle => format!(
            "{file} has no <p id=\"hero-subtitle\"> paragraph, which a hero subtitle change rewrites. Give the paragraph under your heading id=\"hero-subtitle\", or ask for a text change: replace \"old\" with \"new\"."
        ),
        PreviewTarget::FeatureSlot => format!(
            "{file} has no <!-- feature-slot --> marker, before which a feature card is added. Put the marker where new cards should go."
        ),
    }
}

/// The workspace path a prompt's `named` path means: itself when the workspace has it, else the
/// one file whose path ends in `/named` (a bare "app.js" for a folder's "js/app.js").
pub(crate) fn resolve_path(workspace: &Workspace, named: &str) -> String {
    if workspace.file(named).is_some() {
        return named.to_owned();
    }
    let suffix = format!("/{named}");
    let mut holders = workspace
        .files()
        .filter(|file| file.path.ends_with(&suffix));
    match (holders.next(), holders.next()) {
        (Some(only), None) => only.path.clone(),
        _ => named.to_owned(),
    }
}

/// `WORKSPACE_FILE_NOT_FOUND` when the prompt names a path `workspace` does not have.
pub(crate) fn missing_file(
    workspace: &Workspace,
    path: &str,
    operation: &str,
) -> Option<ToolCallError> {
    // An invalid path is the tool's to report, with its own code.
    let path = live_code_editor::workspace::model::validate_path(path).ok()?;
    workspace
        .file(&path)
        .is_none()
        .then(|| WorkspaceError::file_not_found(&path, operation).into())
}

/// The file a `replace "X" with "Y"` patches: the named one if it holds the text, else the one
/// text file that holds it. Several holders make the planner ask which; none fails before any
/// approval, as the patch itself would.
pub(crate) fn patch_path(
    workspace: &Workspace,
    named: Option<&str>,
    search: &str,
    occurrence: &str,
) -> Result<String, Stop> {
    let search_length = search.chars().count();
    if let Some(path) = named {
        if let Some(error) = missing_file(workspace, path, "patch") {
            return Err(Stop::Unavailable(error));
        }
        let holds = workspace
            .file(path)
            .and_then(|file| file.source())
            .is_some_and(|source| source.contains(search));
        return if holds {
            Ok(path.to_owned())
        } else {
            Err(Stop::Unavailable(
                WorkspaceError::patch_not_found(path, occurrence, search_length).into(),
            ))
        };
    }
    let holders = files_containing(workspace, search);
    match holders.as_slice() {
        [only] => Ok(only.clone()),
        [] => Err(Stop::Unavailable(
            WorkspaceError::new(
                WorkspaceErrorCode::WorkspacePatchNotFound,
                "No workspace file contains the search text. Re-read the files and quote text that exists.",
                json!({"occurrence": occurrence, "searchLength": search_length}),
            )
            .into(),
        )),
        several => Err(Stop::NotUnderstood(format!(
            "The text to replace appears in {} files: {}. Say which one, for example by adding \"in {}\" to the prompt.",
            several.len(),
            several.join(", "),
            several[0]
        ))),
    }
}

/// Text files whose source contains `search`, in workspace order.
fn files_containing(workspace: &Workspace, search: &str) -> Vec<String> {
    workspace
        .files()
        .filter(|file| file.source().is_some_and(|source| source.contains(search)))
        .map(|file| file.path.clone())
        .collect()
}

/// `call` if the workspace has what it needs: its visual target and the file it names (a
/// created file excepted). Without a workspace nothing is checked.
pub(crate) fn checked(
    workspace: Option<&Workspace>,
    call: Option<PlannedCall>,
) -> Result<Option<PlannedCall>, Stop> {
    let (Some(workspace), Some(planned)) = (workspace, &call) else {
        return Ok(call);
    };
    let path = planned.arguments.get("path").and_then(Value::as_str);
    let missing = missing_visual_target(workspace, planned).or_else(|| {
        path.filter(|_| !planned.name.ends_with(".createFile"))
            .and_then(|path| missing_file(workspace, path, operation_of(planned.name)))
    });
    match missing {
        Some(error) => Err(Stop::Unavailable(error)),
        None => Ok(call),
    }
}

/// The operation word of a tool (`workspace.downloadFile` -> `download`), for error details.
fn operation_of(tool: &str) -> &str {
    let name = tool.rsplit('.').next().unwrap_or(tool);
    let end = name.find(|c: char| c.is_uppercase()).unwrap_or(name.len());
    &name[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use live_code_editor::file::WorkspaceFile;

    fn workspace(files: &[(&str, &str)]) -> Workspace {
        Workspace::new(
            files
                .iter()
                .map(|(path, source)| WorkspaceFile::text(*path, *source))
                .collect(),
        )
        .unwrap()
    }

    fn call(name: &'static str, arguments: Value) -> PlannedCall {
        PlannedCall::new(name, arguments)
    }

    fn target_of(error: &ToolCallError) -> &Value {
        &error.details.as_ref().unwrap()["target"]
    }

    #[test]
    fn visual_calls_need_their_targets() {
        let own_site = workspace(&[
            ("index.html", "<h1>Mine</h1><p>Sub</p>"),
            ("css/site.css", "body { color: blue; }"),
        ]);
        let theme = missing_visual_target(
            &own_site,
            &call("preview.setTheme", json!({"theme": "rose"})),
        )
        .unwrap();
        assert_eq!(theme.code, "PREVIEW_TARGET_NOT_FOUND");
        assert_eq!(target_of(&theme), "theme-tokens");
        assert!(
            theme.message.contains("css/site.css has no --accent"),
            "{}",
            theme.message
        );
        let hero = missing_visual_target(&own_site, &call("web.updateHero", json!({"title": "A"})))
            .unwrap();
        assert_eq!(target_of(&hero), "hero-title");
        let feature =
            missing_visual_target(&own_site, &call("preview.addFeature", json!({}))).unwrap();
        assert_eq!(target_of(&feature), "feature-slot");
        let no_css = workspace(&[("index.html", "<h1 id=\"hero-title\">x</h1>")]);
        let sheet =
            missing_visual_target(&no_css, &call("preview.setTheme", json!({"theme": "rose"})))
                .unwrap();
        assert_eq!(target_of(&sheet), "stylesheet");
        assert!(
            missing_visual_target(&no_css, &call("preview.updateHero", json!({"title": "A"})))
                .is_none()
        );
        let subtitle = missing_visual_target(
            &no_css,
            &call("preview.updateHero", json!({"subtitle": "B"})),
        )
        .unwrap();
        assert_eq!(target_of(&subtitle), "hero-subtitle");
        assert!(missing_visual_target(&no_css, &call("workspace.applyPatch", json!({}))).is_none());
    }

    #[test]
    fn a_patch_goes_to_the_file_holding_its_text() {
        let files = workspace(&[
            ("index.html", "<p>Ship it</p>"),
            ("styles.css", "p { margin: 12px; }"),
            ("app.js", "// margin: 12px"),
        ]);
        assert_eq!(
            patch_path(&files, None, "Ship", "first").unwrap(),
            "index.html"
        );
        assert_eq!(
            patch_path(&files, Some("app.js"), "margin", "first").unwrap(),
            "app.js"
        );
        let Err(Stop::NotUnderstood(ask)) = patch_path(&files, None, "12px", "first") else {
            panic!("several holders ask which");
        };
        assert!(ask.contains("styles.css, app.js"), "{ask}");
        let Err(Stop::Unavailable(none)) = patch_path(&files, None, "nowhere", "all") else {
            panic!("no holder fails");
        };
        assert_eq!(none.code, "WORKSPACE_PATCH_NOT_FOUND");
        let Err(Stop::Unavailable(named)) = patch_path(&files, Some("app.js"), "Ship", "first")
        else {
            panic!("the named file lacks the text");
        };
        assert_eq!(named.code, "WORKSPACE_PATCH_NOT_FOUND");
        let Err(Stop::Unavailable(missing)) = patch_path(&files, Some("x.js"), "a", "first") else {
            panic!("a missing named file fails");
        };
        assert_eq!(missing.code, "WORKSPACE_FILE_NOT_FOUND");
    }

    #[test]
    fn a_bare_name_resolves_to_the_one_file_of_that_name() {
        let files = workspace(&[
            ("index.html", "x"),
            ("js/app.js", "a"),
            ("a/util.js", "b"),
            ("b/util.js", "c"),
        ]);
        assert_eq!(resolve_path(&files, "app.js"), "js/app.js");
        assert_eq!(resolve_path(&files, "index.html"), "index.html");
        assert_eq!(
            resolve_path(&files, "util.js"),
            "util.js",
            "ambiguous: as named"
        );
        assert_eq!(resolve_path(&files, "pp.js"), "pp.js", "whole names only");
    }
}
