//! Property tests: random HTML, CSS and JavaScript never panic the compiler, the output and
//! diagnostics stay within their bounds, and the incremental compiler's output after any
//! sequence of edits is the full compile's.

use live_code_editor::WorkspaceFile;
use live_code_editor::preview::{
    IncrementalPreviewCompiler, MAX_PREVIEW_DIAGNOSTICS, PreviewOptions, compile_preview,
};
use proptest::prelude::*;

/// Fixed framing the compiler may add beyond the budget: head injection (charset, CSP, the
/// bridge with its dormant Design Mode script, about 7 KiB), bootstrap wrapper and separators.
const FRAMING_BYTES: usize = 12 * 1024;

fn html_fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(r#"<link rel="stylesheet" href="a.css">"#.to_owned()),
        Just(r#"<link href="b.css?x" media="print">"#.to_owned()),
        Just(r#"<script src="c.js"></script>"#.to_owned()),
        Just(r#"<script type="module" src="m.js"></script>"#.to_owned()),
        Just("<script type=module>import './n.js'; import('./m.js')</script>".to_owned()),
        Just("<style>@import 'a.css'; p{background:url(i.png)}</style>".to_owned()),
        Just(r#"<img src="i.png"><video poster="missing.png"></video>"#.to_owned()),
        Just("<head>".to_owned()),
        Just("<html>".to_owned()),
        Just("<!doctype html>".to_owned()),
        Just("</script></style><!--".to_owned()),
        "[<>/\"'=a-z !-]{0,12}".prop_map(|text| text),
        any::<String>().prop_map(|text| text.chars().take(16).collect()),
    ]
}

fn css_fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("@import 'a.css';".to_owned()),
        Just("@import url(b.css) screen;".to_owned()),
        Just("@import 'https://x.test/y.css' layer(l) supports(display:grid);".to_owned()),
        Just("a{background:url(\"i.png\")}".to_owned()),
        Just("/* @import 'z.css'; */".to_owned()),
        Just("((((url(i.png".to_owned()),
        "[@(){};:'\"a-z ./]{0,12}".prop_map(|text| text),
        any::<String>().prop_map(|text| text.chars().take(16).collect()),
    ]
}

fn js_fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("import './m.js';".to_owned()),
        Just("import {x} from './n.js';".to_owned()),
        Just("export * from './gone.js';".to_owned()),
        Just("import('./m.js');".to_owned()),
        Just("import 'react';".to_owned()),
        Just("const t = `${import('./n.js')}`;".to_owned()),
        Just("const s = '</script>';".to_owned()),
        Just("/import('.\\/x.js')/;".to_owned()),
        "[`${}()'\"/a-z .;=]{0,12}".prop_map(|text| text),
        any::<String>().prop_map(|text| text.chars().take(16).collect()),
    ]
}

fn source(fragments: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    prop::collection::vec(fragments, 0..24).prop_map(|parts| parts.concat())
}

fn workspace() -> impl Strategy<Value = Vec<WorkspaceFile>> {
    (
        source(html_fragment()),
        source(css_fragment()),
        source(css_fragment()),
        source(js_fragment()),
        source(js_fragment()),
    )
        .prop_map(|(html, a, b, m, n)| {
            vec![
                WorkspaceFile::text("index.html", html),
                WorkspaceFile::text("a.css", a),
                WorkspaceFile::text("b.css", b),
                WorkspaceFile::text("c.js", "console.log(1)"),
                WorkspaceFile::text("m.js", m),
                WorkspaceFile::text("n.js", n),
                WorkspaceFile::asset("i.png", vec![1, 2, 3, 4]),
            ]
        })
}

/// One edit of a random workspace: a file's new content, or its removal (`None`).
#[derive(Debug, Clone)]
struct Edit {
    path: &'static str,
    content: Option<WorkspaceFile>,
}

/// An edit of one of the workspace's paths (or `extra.css`, which `a.css` may not import yet).
fn edit() -> impl Strategy<Value = Edit> {
    let text = |path: &'static str, fragments: BoxedStrategy<String>| {
        prop::option::weighted(0.85, source(fragments))
            .prop_map(move |source| Edit {
                path,
                content: source.map(|source| WorkspaceFile::text(path, source)),
            })
            .boxed()
    };
    prop_oneof![
        text("index.html", html_fragment().boxed()),
        text("a.css", css_fragment().boxed()),
        text("b.css", css_fragment().boxed()),
        text("extra.css", css_fragment().boxed()),
        text("c.js", js_fragment().boxed()),
        text("m.js", js_fragment().boxed()),
        text("n.js", js_fragment().boxed()),
        prop::option::weighted(0.85, prop::collection::vec(any::<u8>(), 0..8)).prop_map(|bytes| {
            Edit {
                path: "i.png",
                content: bytes.map(|bytes| WorkspaceFile::asset("i.png", bytes)),
            }
        }),
    ]
}

/// Applies `edit` in place (a new path is appended, like a created file).
fn apply(files: &mut Vec<WorkspaceFile>, edit: Edit) {
    let position = files.iter().position(|file| file.path == edit.path);
    match (position, edit.content) {
        (Some(index), Some(file)) => files[index] = file,
        (Some(index), None) => {
            files.remove(index);
        }
        (None, Some(file)) => files.push(file),
        (None, None) => {}
    }
}

/// Options of one compile in an edit sequence: either target, a revision, sometimes a budget.
/// Most steps keep the asset base and budget, so the incremental compiler reuses its pieces
/// (a revision only changes the head); a fixed small budget makes the output limit cut into
/// reused and fresh pieces alike.
fn step_options() -> impl Strategy<Value = PreviewOptions> {
    let budget = prop_oneof![
        3 => Just(None),
        1 => Just(Some(700)),
        1 => (0usize..4096).prop_map(Some),
    ];
    (prop::bool::weighted(0.25), 0u64..4, budget).prop_map(|(export, revision, budget)| {
        let mut options = if export {
            PreviewOptions::export()
        } else {
            PreviewOptions::preview(Some(revision), "/preview/assets/")
        };
        if let Some(budget) = budget {
            options.max_output_bytes = budget;
        }
        options
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn incremental_compiles_after_random_edits_equal_full_compiles(
        mut files in workspace(),
        steps in prop::collection::vec((prop::collection::vec(edit(), 0..3), step_options()), 1..12),
    ) {
        let mut incremental = IncrementalPreviewCompiler::new();
        for (edits, options) in steps {
            for edit in edits {
                apply(&mut files, edit);
            }
            let full = compile_preview(&files, &options);
            prop_assert_eq!(incremental.compile(&files, &options), full);
        }
    }

    #[test]
    fn random_workspaces_compile_within_bounds(files in workspace(), budget in 0usize..4096, export in any::<bool>()) {
        let mut options = if export { PreviewOptions::export() } else { PreviewOptions::preview(Some(1), "/assets/") };
        options.max_output_bytes = budget;
        let compiled = compile_preview(&files, &options);
        let entry_len = files[0].source().unwrap().len();
        prop_assert!(compiled.diagnostics.len() <= MAX_PREVIEW_DIAGNOSTICS);
        prop_assert!(
            compiled.html.len() <= entry_len + budget + FRAMING_BYTES,
            "{} bytes out for {} in with a {} budget", compiled.html.len(), entry_len, budget
        );
        prop_assert!(compiled.html.contains("Content-Security-Policy"));
    }

    #[test]
    fn arbitrary_text_in_every_role_never_panics(html in any::<String>(), css in any::<String>(), js in any::<String>()) {
        let files = vec![
            WorkspaceFile::text("index.html", format!("{html}<link rel=stylesheet href=a.css><script type=module src=m.js></script>")),
            WorkspaceFile::text("a.css", css),
            WorkspaceFile::text("m.js", js),
        ];
        let compiled = compile_preview(&files, &PreviewOptions::export());
        prop_assert!(compiled.diagnostics.len() <= MAX_PREVIEW_DIAGNOSTICS);
    }
}
