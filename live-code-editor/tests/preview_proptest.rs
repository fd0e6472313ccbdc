//! Property tests: random HTML, CSS and JavaScript never panic the compiler, and the output and
//! diagnostics stay within their bounds.

use live_code_editor::WorkspaceFile;
use live_code_editor::preview::{MAX_PREVIEW_DIAGNOSTICS, PreviewOptions, compile_preview};
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

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
