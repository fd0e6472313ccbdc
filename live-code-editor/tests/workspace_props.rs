//! Property tests: random operation sequences keep the workspace invariants, and random paths
//! never panic or escape the root.

use std::collections::BTreeSet;

use live_code_editor::WorkspaceFile;
use live_code_editor::path::normalize_workspace_path;
use live_code_editor::workspace::history::RecordKind;
use live_code_editor::workspace::{
    History, Occurrence, Operation, Workspace, model::validate_path,
};
use proptest::prelude::*;

fn seed() -> Workspace {
    Workspace::new(vec![
        WorkspaceFile::text("index.html", "<p>a</p>"),
        WorkspaceFile::text("styles.css", "p { color: red }"),
        WorkspaceFile::text("app.js", "let a = 1;"),
        WorkspaceFile::asset("logo.png", vec![1, 2]),
    ])
    .unwrap()
}

fn path() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("index.html".to_owned()),
        Just("styles.css".to_owned()),
        Just("app.js".to_owned()),
        Just("logo.png".to_owned()),
        Just("src/main.js".to_owned()),
        Just("page.html".to_owned()),
        Just("../escape.js".to_owned()),
        Just(r"src\.\main.js".to_owned()),
        "[a-c]{1,2}\\.(js|css|html|png|md)",
    ]
}

#[derive(Debug, Clone)]
enum Step {
    Apply(Operation),
    Undo,
    Redo,
    Save,
}

fn step() -> impl Strategy<Value = Step> {
    let text = "[a-z<>{} ]{0,12}";
    prop_oneof![
        (path(), text).prop_map(|(path, source)| Step::Apply(Operation::Create { path, source })),
        (path(), text).prop_map(|(path, source)| Step::Apply(Operation::Write { path, source })),
        (path(), "[a-z]{1,2}", "[a-z]{0,3}", any::<bool>()).prop_map(
            |(path, search, replace, all)| {
                let occurrence = if all {
                    Occurrence::All
                } else {
                    Occurrence::First
                };
                Step::Apply(Operation::Patch {
                    path,
                    search,
                    replace,
                    occurrence,
                })
            }
        ),
        (path(), path()).prop_map(|(from, to)| Step::Apply(Operation::Rename { from, to })),
        path().prop_map(|path| Step::Apply(Operation::Delete { path })),
        path().prop_map(|path| Step::Apply(Operation::Revert { path })),
        Just(Step::Undo),
        Just(Step::Redo),
        Just(Step::Save),
    ]
}

fn assert_invariants(ws: &Workspace) {
    let paths: Vec<&str> = ws.files().map(|file| file.path.as_str()).collect();
    let unique: BTreeSet<&str> = paths.iter().copied().collect();
    assert_eq!(unique.len(), paths.len(), "paths are unique");
    assert!(!paths.is_empty(), "a workspace is never empty");
    for path in &paths {
        assert_eq!(
            normalize_workspace_path(path).as_deref(),
            Ok(*path),
            "stored paths are normalized"
        );
    }
    assert!(paths.contains(&ws.active_path()), "the active path exists");
    assert!(
        ws.files().any(|file| file.path.ends_with(".html")),
        "the HTML entry is kept"
    );
    for dirty in ws.dirty_paths() {
        let saved = ws.saved_file(&dirty).map(|file| &file.content);
        assert_ne!(
            saved,
            ws.file(&dirty).map(|file| &file.content),
            "dirty means different from the checkpoint"
        );
    }
    for deleted in ws.pending_deletions() {
        assert!(ws.file(&deleted).is_none() && ws.saved_file(&deleted).is_some());
    }
    assert_eq!(
        ws.is_dirty(),
        !ws.dirty_paths().is_empty() || !ws.pending_deletions().is_empty()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_sequences_keep_the_invariants(steps in prop::collection::vec(step(), 1..40)) {
        let mut ws = seed();
        let mut history = History::new();
        for step in steps {
            let before = ws.clone();
            let next = match step {
                Step::Apply(operation) => ws.apply(&operation).inspect(|_| {
                    history.record(before.content(), RecordKind::Checkpoint, 0);
                }),
                Step::Undo => match history.undo(ws.content()) {
                    Some(target) => match ws.restore_content(&target) {
                        Ok(undone) => {
                            // Undo then redo restores the same content; undo again to continue.
                            let forward = history.redo(undone.content()).expect("redo target after undo");
                            prop_assert_eq!(&forward, before.content());
                            history.undo(&forward).expect("undo again");
                            Ok(undone)
                        }
                        Err(error) => {
                            history.cancel_undo(target);
                            Err(error)
                        }
                    },
                    None => continue,
                },
                Step::Redo => match history.redo(ws.content()) {
                    Some(target) => ws.restore_content(&target).inspect_err(|_| history.cancel_redo(target.clone())),
                    None => continue,
                },
                Step::Save => Ok(ws.mark_all_saved()),
            };
            match next {
                Ok(next) => {
                    let changed = !next.files().eq(before.files()) || next.active_path() != before.active_path();
                    if changed {
                        prop_assert!(next.revision() > before.revision(), "a change gets a newer revision");
                    }
                    prop_assert!(next.revision() >= before.revision());
                    ws = next;
                }
                Err(error) => prop_assert!(!error.code.as_str().is_empty()),
            }
            assert_invariants(&ws);
        }
        if ws.is_dirty() {
            prop_assert!(!ws.mark_all_saved().is_dirty());
        }
    }

    #[test]
    fn random_byte_paths_never_panic_or_escape(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let raw = String::from_utf8_lossy(&bytes);
        if let Ok(path) = validate_path(&raw) {
            prop_assert!(!path.is_empty());
            prop_assert!(!path.starts_with('/'));
            prop_assert!(!path.contains('\\') && !path.contains('\0'));
            prop_assert!(path.split('/').all(|segment| !segment.is_empty() && segment != "." && segment != ".."));
            prop_assert_eq!(normalize_workspace_path(&path), Ok(path.clone()), "normalization is idempotent");
            let joined = std::path::Path::new("/root-dir").join(&path);
            prop_assert!(joined.starts_with("/root-dir"));
        }
    }

    #[test]
    fn random_text_paths_never_panic_or_escape(raw in "[a-z./\\\\:\u{0}é ]{0,24}") {
        if let Ok(path) = validate_path(&raw) {
            prop_assert!(path.split('/').all(|segment| segment != ".." && !segment.is_empty()));
            prop_assert!(!path.starts_with('/') && !path.contains('\0') && !path.contains('\\'));
        }
    }
}
