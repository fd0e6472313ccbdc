//! The local agent's prompt table: on each of the three surfaces, a prompt plans exactly these
//! calls, or ends `not-understood` naming the part it could not read. A destructive or history
//! tool (reset, undo, save, delete, revert, disconnect, reload from disk) is planned only from a
//! prompt that *is* that command, never from a word inside a longer request.

use live_code_editor::file::WorkspaceFile;
use live_code_editor::workspace::Workspace;
use live_code_studio::agent::plan::{Plan, Stop};
use live_code_studio::seed::SEED_FILES;
use live_code_studio::surfaces::editor::planner::plan_prompt;
use live_code_studio::surfaces::web::planner::plan_web;
use live_code_studio::surfaces::web::seed::WEB_SEED_FILES;
use live_code_studio::surfaces::workspace::planner::{PlannerContext, plan};
use serde_json::{Value, json};

/// What a prompt must plan.
enum Expect {
    /// Exactly these calls, the last one with these arguments.
    Calls(&'static [&'static str], Value),
    /// No call; the reply names each of these parts as not understood.
    NotUnderstood(&'static [&'static str]),
    /// No call; the run fails before any approval with this code.
    Unavailable(&'static str),
}
use Expect::{Calls, NotUnderstood, Unavailable};

fn workspace_of(files: &[(&str, &str)]) -> Workspace {
    Workspace::new(
        files
            .iter()
            .map(|(path, source)| WorkspaceFile::text(*path, *source))
            .collect(),
    )
    .unwrap()
}

fn check(surface: &str, prompt: &str, plan: &Plan, expect: &Expect) {
    let names: Vec<&str> = plan.calls.iter().map(|call| call.name).collect();
    match expect {
        Calls(expected, arguments) => {
            assert!(
                plan.stop.is_none(),
                "{surface}: {prompt:?} stopped: {plan:?}"
            );
            assert_eq!(names, *expected, "{surface}: {prompt:?}");
            let action = plan.calls.last().expect("an action");
            assert_eq!(
                Value::Object(action.arguments.clone()),
                *arguments,
                "{surface}: {prompt:?}"
            );
        }
        NotUnderstood(parts) => {
            assert!(names.is_empty(), "{surface}: {prompt:?} planned {names:?}");
            let Some(Stop::NotUnderstood(reply)) = &plan.stop else {
                panic!(
                    "{surface}: {prompt:?} is not `not-understood`: {:?}",
                    plan.stop
                );
            };
            for part in *parts {
                assert!(
                    reply.contains(&format!("\"{part}\"")),
                    "{surface}: {prompt:?} must name {part:?}: {reply}"
                );
            }
        }
        Unavailable(code) => {
            assert!(names.is_empty(), "{surface}: {prompt:?} planned {names:?}");
            let Some(Stop::Unavailable(error)) = &plan.stop else {
                panic!("{surface}: {prompt:?} is not unavailable: {:?}", plan.stop);
            };
            assert_eq!(error.code, *code, "{surface}: {prompt:?}");
        }
    }
}

const STATUS: &[&str] = &["workspace.getStatus"];
const MUTATE: &[&str] = &["workspace.getStatus"];
const MUTATE_FILE: &[&str] = &["workspace.getStatus", "workspace.listFiles"];
const PATCH_FILE: &[&str] = &[
    "workspace.getStatus",
    "workspace.listFiles",
    "workspace.readFile",
];

fn calls(preflight: &'static [&'static str], action: &'static str) -> &'static [&'static str] {
    let mut names = preflight.to_vec();
    names.push(action);
    names.leak()
}

#[test]
fn the_workspace_agent_plans_commands_only_from_commands() {
    let context = PlannerContext {
        active_path: Some("index.html".into()),
        workspace: Some(workspace_of(SEED_FILES)),
        ..PlannerContext::default()
    };
    let table: Vec<(&str, Expect)> = vec![
        // The reported cases: a word inside a longer request is not a command.
        (
            "add a reset button to the hero",
            NotUnderstood(&["add a reset button to the hero"]),
        ),
        (
            "undo the color but keep the title",
            NotUnderstood(&["undo the color", "keep the title"]),
        ),
        (
            "save the world banner in the hero",
            NotUnderstood(&["save the world banner in the hero"]),
        ),
        (
            "make it violet and delete app.js",
            NotUnderstood(&["delete app.js"]),
        ),
        (
            "reset the colours to something nicer",
            NotUnderstood(&["reset the colours to something nicer"]),
        ),
        (
            "please undo and then make it rose",
            NotUnderstood(&["please undo"]),
        ),
        (
            "remove the feature cards",
            NotUnderstood(&["remove the feature cards"]),
        ),
        (
            "can you save a copy as backup.html",
            NotUnderstood(&["can you save a copy as backup.html"]),
        ),
        (
            "disconnect the button from the counter",
            NotUnderstood(&["disconnect the button from the counter"]),
        ),
        (
            "restore the old footer in index.html",
            NotUnderstood(&["restore the old footer in index.html"]),
        ),
        (
            "make the button bigger",
            NotUnderstood(&["make the button bigger"]),
        ),
        ("sing me a song", NotUnderstood(&["sing me a song"])),
        // The commands themselves.
        ("undo", Calls(calls(MUTATE, "workspace.undo"), json!({}))),
        (
            "undo that",
            Calls(calls(MUTATE, "workspace.undo"), json!({})),
        ),
        (
            "Undo the last change.",
            Calls(calls(MUTATE, "workspace.undo"), json!({})),
        ),
        ("redo", Calls(calls(MUTATE, "workspace.redo"), json!({}))),
        (
            "save",
            Calls(calls(MUTATE, "workspace.saveCheckpoint"), json!({})),
        ),
        (
            "please save everything",
            Calls(calls(MUTATE, "workspace.saveCheckpoint"), json!({})),
        ),
        ("reset", Calls(calls(MUTATE, "workspace.reset"), json!({}))),
        (
            "reset the workspace",
            Calls(calls(MUTATE, "workspace.reset"), json!({})),
        ),
        (
            "reload the folder from disk",
            Calls(calls(MUTATE, "workspace.reloadFolder"), json!({})),
        ),
        (
            "disconnect the folder",
            Calls(calls(MUTATE, "workspace.disconnectFolder"), json!({})),
        ),
        (
            "delete app.js",
            Calls(
                calls(MUTATE_FILE, "workspace.deleteFile"),
                json!({"path": "app.js"}),
            ),
        ),
        (
            "revert styles.css",
            Calls(
                calls(PATCH_FILE, "workspace.revertFile"),
                json!({"path": "styles.css"}),
            ),
        ),
        // Everything else, understood in full.
        (
            "make it rose",
            Calls(calls(MUTATE, "preview.setTheme"), json!({"theme": "rose"})),
        ),
        (
            "Make the page emerald please",
            Calls(
                calls(MUTATE, "preview.setTheme"),
                json!({"theme": "emerald"}),
            ),
        ),
        (
            r#"set the hero title to "Hello" and subtitle "World""#,
            Calls(
                calls(MUTATE, "preview.updateHero"),
                json!({"title": "Hello", "subtitle": "World"}),
            ),
        ),
        (
            r#"add a feature card "Offline" "Works without a key""#,
            Calls(
                calls(MUTATE, "preview.addFeature"),
                json!({"title": "Offline", "description": "Works without a key"}),
            ),
        ),
        (
            r#"replace "Approvals" with "Reviews""#,
            Calls(
                calls(PATCH_FILE, "workspace.applyPatch"),
                json!({"path": "index.html", "search": "Approvals", "replace": "Reviews", "occurrence": "first"}),
            ),
        ),
        (
            r#"replace "Revisions" with "Undo and reset""#,
            Calls(
                calls(PATCH_FILE, "workspace.applyPatch"),
                json!({"path": "index.html", "search": "Revisions", "replace": "Undo and reset", "occurrence": "first"}),
            ),
        ),
        (
            r#"create a new file notes.md with "undo everything""#,
            Calls(
                calls(MUTATE_FILE, "workspace.createFile"),
                json!({"path": "notes.md", "source": "undo everything"}),
            ),
        ),
        (
            "refresh the preview",
            Calls(calls(MUTATE, "preview.refresh"), json!({})),
        ),
        (
            "read app.js",
            Calls(&["workspace.readFile"], json!({"path": "app.js"})),
        ),
        (
            "open styles.css",
            Calls(&["workspace.openFile"], json!({"path": "styles.css"})),
        ),
        ("what is the workspace status?", Calls(STATUS, json!({}))),
        // Understood, but the target is missing: fails before any approval.
        ("delete notes.md", Unavailable("WORKSPACE_FILE_NOT_FOUND")),
    ];
    for (prompt, expect) in &table {
        check("workspace", prompt, &plan(prompt, &context), expect);
    }
    let linked = PlannerContext {
        folder_linked: true,
        ..context.clone()
    };
    check(
        "workspace",
        "save",
        &plan("save", &linked),
        &Calls(calls(MUTATE, "workspace.saveAll"), json!({})),
    );
    assert!(table.len() >= 35);
}

#[test]
fn the_editor_agent_plans_commands_only_from_commands() {
    let files = workspace_of(&[
        ("index.html", "<h1>Count</h1><button>Go</button>"),
        ("styles.css", "button { padding: 4px; }"),
        ("app.js", "let count = 0;"),
    ]);
    const READ: &[&str] = &["editor.getStatus", "editor.listFiles", "editor.getDocument"];
    const OPEN_READ: &[&str] = &[
        "editor.getStatus",
        "editor.listFiles",
        "editor.openFile",
        "editor.getDocument",
    ];
    const SAVE: &[&str] = &["editor.getStatus", "editor.listFiles"];
    let table: Vec<(&str, Expect)> = vec![
        // The reported case: the edit is kept, nothing is reset.
        (
            "make the button bigger and add a reset button",
            NotUnderstood(&["make the button bigger", "add a reset button"]),
        ),
        ("add a reset button", NotUnderstood(&["add a reset button"])),
        (
            "reset the counter when clicked",
            NotUnderstood(&["reset the counter when clicked"]),
        ),
        (
            "save the greeting for later",
            NotUnderstood(&["save the greeting for later"]),
        ),
        (
            "use the greeting scenario and save",
            NotUnderstood(&["save"]),
        ),
        (
            r#"replace "Go" with "Reset" and reset"#,
            NotUnderstood(&["reset"]),
        ),
        ("sing me a song", NotUnderstood(&["sing me a song"])),
        // The commands.
        (
            "reset",
            Calls(calls(READ, "editor.resetDocument"), json!({})),
        ),
        (
            "reset the document",
            Calls(calls(READ, "editor.resetDocument"), json!({})),
        ),
        (
            "save",
            Calls(
                calls(SAVE, "editor.saveFile"),
                json!({"path": "index.html"}),
            ),
        ),
        (
            "save styles.css",
            Calls(
                calls(SAVE, "editor.saveFile"),
                json!({"path": "styles.css"}),
            ),
        ),
        (
            "save all files",
            Calls(calls(SAVE, "editor.saveAll"), json!({})),
        ),
        // Everything else.
        (
            r#"replace "Go" with "Reset""#,
            Calls(
                calls(READ, "editor.applyPatch"),
                json!({"search": "Go", "replace": "Reset", "occurrence": "first"}),
            ),
        ),
        (
            r#"in app.js replace "count" with "total""#,
            Calls(
                calls(OPEN_READ, "editor.applyPatch"),
                json!({"search": "count", "replace": "total", "occurrence": "first"}),
            ),
        ),
        (
            "use the greeting scenario",
            Calls(
                calls(READ, "editor.setScenario"),
                json!({"scenario": "greeting"}),
            ),
        ),
        (
            "switch to todo-list",
            Calls(
                calls(READ, "editor.setScenario"),
                json!({"scenario": "todo-list"}),
            ),
        ),
        ("open app.js", Calls(OPEN_READ, json!({}))),
        (
            "what is the preview status?",
            Calls(&["editor.getStatus"], json!({})),
        ),
        ("download index.html", NotUnderstood(&[])),
        (
            r#"replace "absent" with "x""#,
            Unavailable("WORKSPACE_PATCH_NOT_FOUND"),
        ),
    ];
    for (prompt, expect) in &table {
        check(
            "editor",
            prompt,
            &plan_prompt(prompt, "index.html", Some(&files)),
            expect,
        );
    }
    assert!(table.len() >= 20);
}

#[test]
fn the_web_agent_acts_only_on_what_it_understands_in_full() {
    let files = workspace_of(WEB_SEED_FILES);
    const PRE: &[&str] = &["web.getWorkspace"];
    const READ: &[&str] = &["web.getWorkspace", "web.readFile"];
    let table: Vec<(&str, Expect)> = vec![
        (
            "make it amber",
            Calls(calls(PRE, "web.setTheme"), json!({"theme": "amber"})),
        ),
        (
            "make it amber and add a reset button",
            NotUnderstood(&["add a reset button"]),
        ),
        ("reset", NotUnderstood(&["reset"])),
        ("undo", NotUnderstood(&["undo"])),
        ("save the page", NotUnderstood(&["save the page"])),
        (
            r#"set the hero title to "Live" and delete the footer"#,
            NotUnderstood(&["delete the footer"]),
        ),
        (
            r#"set the hero title to "Live""#,
            Calls(calls(PRE, "web.updateHero"), json!({"title": "Live"})),
        ),
        (
            r#"add a feature "Offline" "Works without a key""#,
            Calls(
                calls(PRE, "web.addFeature"),
                json!({"title": "Offline", "description": "Works without a key"}),
            ),
        ),
        (
            r#"replace "Pulses" with "Beats""#,
            Calls(
                calls(READ, "web.applyPatch"),
                json!({"path": "index.html", "search": "Pulses", "replace": "Beats", "occurrence": "first"}),
            ),
        ),
        (
            r#"write "body { color: red; }" to styles.css"#,
            Calls(
                calls(READ, "web.writeFile"),
                json!({"path": "styles.css", "source": "body { color: red; }"}),
            ),
        ),
        (
            "read app.js",
            Calls(calls(PRE, "web.readFile"), json!({"path": "app.js"})),
        ),
        ("what is the revision?", Calls(PRE, json!({}))),
        ("make it ocean blue", NotUnderstood(&["make it ocean blue"])),
    ];
    for (prompt, expect) in &table {
        check("web", prompt, &plan_web(prompt, &files), expect);
    }
    assert!(table.len() >= 12);
}
