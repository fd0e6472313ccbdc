//! Preview compiler rules, one test per rule, on in-memory workspaces.

use live_code_editor::WorkspaceFile;
use live_code_editor::preview::{
    CompiledPreview, DiagnosticKind, IncrementalPreviewCompiler, MAX_INLINE_CSS_IMPORTS,
    MAX_MODULE_IMPORT_EDGES, MAX_MODULE_NESTING_DEPTH, MAX_PREVIEW_DIAGNOSTICS,
    PREVIEW_READY_MESSAGE, PreviewOptions, Severity, compile_preview, workspace_module_specifier,
};

fn text(path: &str, source: &str) -> WorkspaceFile {
    WorkspaceFile::text(path, source)
}

fn export(files: &[WorkspaceFile]) -> CompiledPreview {
    compile_preview(files, &PreviewOptions::export())
}

fn messages(compiled: &CompiledPreview) -> Vec<String> {
    compiled
        .diagnostics
        .iter()
        .map(|diagnostic| diagnostic.message.clone())
        .collect()
}

#[test]
fn no_html_entry_yields_the_card_and_the_flag() {
    let compiled = compile_preview(
        &[text("styles.css", "a{}")],
        &PreviewOptions::preview(Some(9), "/a/"),
    );
    assert!(compiled.entry_required && compiled.entry.is_none());
    assert!(compiled.html.contains("<h1>Add an HTML entry file</h1>"));
    assert!(
        compiled.html.contains("var revision=9;"),
        "the card still carries the bridge"
    );
    assert!(compiled.diagnostics.is_empty());
    assert!(compiled.has_errors());
    assert!(
        !export(&[text("a.js", "")]).html.contains("<script>"),
        "no bridge in export"
    );
}

#[test]
fn index_html_is_preferred_over_other_html() {
    let files = [text("about.html", "about"), text("index.html", "home")];
    assert_eq!(export(&files).entry.as_deref(), Some("index.html"));
    let files = [text("b.html", "b"), text("a.html", "a")];
    assert_eq!(
        export(&files).entry.as_deref(),
        Some("b.html"),
        "snapshot order, like the reference"
    );
}

#[test]
fn stylesheets_are_inlined_with_their_media() {
    let files = [
        text(
            "index.html",
            r#"<head><link rel="stylesheet" href="css/site.css" media="print"><link href="x.css?v=2"></head>"#,
        ),
        text("css/site.css", "body{color:red}"),
        text("x.css", "p{margin:0}"),
    ];
    let html = export(&files).html;
    assert!(
        html.contains(
            r#"<style data-workspace-source="css/site.css" media="print">body{color:red}</style>"#
        ),
        "{html}"
    );
    assert!(html.contains(r#"<style data-workspace-source="x.css">p{margin:0}</style>"#));
    assert!(!html.contains("<link"));
}

#[test]
fn css_import_chains_inline_recursively_with_media_cycles_and_own_bases() {
    let files = [
        text(
            "index.html",
            r#"<link rel=stylesheet href="styles/main.css">"#,
        ),
        text(
            "styles/main.css",
            "@import 'parts/a.css' screen;\n@import url(\"../missing.css\");\nmain{}",
        ),
        text(
            "styles/parts/a.css",
            "@import '../main.css';\n.a{background:url(img/dot.png)}",
        ),
        WorkspaceFile::asset("styles/parts/img/dot.png", vec![1, 2, 3]),
    ];
    let compiled = export(&files);
    let html = &compiled.html;
    assert!(
        html.contains("@media screen {\n/* Skipped cyclic workspace @import: styles/main.css */"),
        "{html}"
    );
    assert!(
        html.contains(".a{background:url(\"data:image/png;base64,AQID\")}"),
        "{html}"
    );
    assert!(html.contains("/* Blocked unresolved workspace @import: ../missing.css */"));
    assert_eq!(
        messages(&compiled),
        ["Missing stylesheet import: ../missing.css"]
    );
}

#[test]
fn css_import_limit_is_32_per_top_level_stylesheet() {
    for (imports, expect_skip) in [
        (MAX_INLINE_CSS_IMPORTS, false),
        (MAX_INLINE_CSS_IMPORTS + 1, true),
    ] {
        let mut files = vec![text("index.html", "<link rel=stylesheet href=s0.css>")];
        for index in 0..imports {
            files.push(text(
                &format!("s{index}.css"),
                &format!("@import 's{}.css'; .s{index}{{}}", index + 1),
            ));
        }
        files.push(text(&format!("s{imports}.css"), ".last{}"));
        let html = export(&files).html;
        assert_eq!(
            html.contains("/* Skipped workspace @import limit at:"),
            expect_skip,
            "{imports} imports"
        );
        assert_eq!(html.contains(".last{}"), !expect_skip);
    }
}

#[test]
fn a_10000_deep_import_chain_is_cut_off() {
    let mut files = vec![text("index.html", "<link rel=stylesheet href=c0.css>")];
    for index in 0..10_000 {
        files.push(text(
            &format!("c{index}.css"),
            &format!("@import 'c{}.css';", index + 1),
        ));
    }
    let compiled = export(&files);
    assert!(
        compiled
            .html
            .contains("/* Skipped workspace @import limit at: c33.css */")
    );
    assert_eq!(
        messages(&compiled),
        ["Missing stylesheet import: c10000.css"],
        "the report walk still sees the chain's end"
    );
}

#[test]
fn classic_scripts_are_inlined_and_unresolved_ones_removed() {
    let files = [
        text(
            "index.html",
            r#"<body><script src="js/app.js" defer></script><script src="https://cdn.test/x.js"></script><script>inline()</script></body>"#,
        ),
        text("js/app.js", "console.log('</script>')"),
    ];
    let compiled = export(&files);
    assert!(
        compiled
            .html
            .contains(r"<script defer>console.log('<\/script>')</script>"),
        "{}",
        compiled.html
    );
    assert!(!compiled.html.contains("cdn.test"));
    assert!(compiled.html.contains("<script>inline()</script>"));
    assert_eq!(
        messages(&compiled),
        ["External script is blocked in the sandbox: https://cdn.test/x.js"]
    );
}

#[test]
fn module_scripts_load_through_one_import_map_bootstrap() {
    let files = [
        text(
            "index.html",
            r#"<head></head><body><script type="module" src="src/main.js"></script><script type="module">import { b } from './src/b.js'; b();</script></body>"#,
        ),
        text(
            "src/main.js",
            "import { a } from './a.js';\nimport('./b.js');\nexport * from './card file.js';",
        ),
        text(
            "src/a.js",
            "import { b } from './b.js'; export const a = 1;",
        ),
        text(
            "src/b.js",
            "import { a } from './a.js'; export function b() {}",
        ),
        text("src/card file.js", "export const c = 3;"),
    ];
    let compiled = export(&files);
    let html = &compiled.html;
    assert_eq!(html.matches("type='importmap'").count(), 1);
    let bootstrap_at = html.find("type='importmap'").unwrap();
    let first_module_at = html.find("<script type=\"module\">").unwrap();
    assert!(
        bootstrap_at < first_module_at,
        "the import map comes before any module script"
    );
    assert!(html.contains(&format!(
        "<script type=\"module\">import \"{}\";</script>",
        workspace_module_specifier("src/main.js")
    )));
    assert!(html.contains(&format!(
        "import {{ b }} from \"{}\"; b();",
        workspace_module_specifier("src/b.js")
    )));
    assert!(html.contains("src/card%20file.js"));
    assert_eq!(compiled.module_count, 4);
    assert!(
        compiled.diagnostics.is_empty(),
        "{:?}",
        compiled.diagnostics
    );
}

#[test]
fn missing_external_and_bare_imports_are_reported_in_graph_order() {
    let files = [
        text(
            "index.html",
            r#"<script type="module" src="main.js"></script>"#,
        ),
        text(
            "main.js",
            "import './gone.js';\nimport 'https://cdn.test/m.js';\nimport React from 'react';\nimport './ok.js';",
        ),
        text("ok.js", "import 'lodash';"),
    ];
    let compiled = export(&files);
    assert_eq!(
        messages(&compiled),
        [
            "Missing module import: ./gone.js",
            "External module import is blocked in the sandbox: https://cdn.test/m.js",
            "Bare module specifier is unavailable in the standalone preview: react",
            "Bare module specifier is unavailable in the standalone preview: lodash",
        ]
    );
    let first = &compiled.diagnostics[0];
    assert_eq!(
        (first.source_path.as_str(), first.line, first.column),
        ("main.js", Some(1), Some(8))
    );
    assert_eq!(
        compiled.diagnostics[2].kind,
        DiagnosticKind::UnsupportedModuleReference
    );
    assert!(
        compiled
            .html
            .contains("Missing%20local%20module%20import%3A%20.%2Fgone.js")
    );
    assert!(
        compiled
            .html
            .contains("External%20module%20import%20blocked%3A%20https%3A%2F%2Fcdn.test%2Fm.js")
    );
    assert!(
        compiled.html.contains("from 'react'"),
        "bare specifiers stay visible to the browser"
    );
}

#[test]
fn module_graph_limit_is_32_edges() {
    for (edges, expect_limit) in [
        (MAX_MODULE_IMPORT_EDGES, false),
        (MAX_MODULE_IMPORT_EDGES + 1, true),
    ] {
        let imports: String = (0..edges)
            .map(|index| format!("import './m{index}.js';\n"))
            .collect();
        let mut files = vec![
            text(
                "index.html",
                r#"<script type="module" src="main.js"></script>"#,
            ),
            text("main.js", &imports),
        ];
        files.extend((0..edges).map(|index| text(&format!("m{index}.js"), "")));
        let compiled = export(&files);
        let limited: Vec<_> = compiled
            .diagnostics
            .iter()
            .filter(|d| d.kind == DiagnosticKind::ModuleGraphLimit)
            .collect();
        assert_eq!(limited.len(), usize::from(expect_limit), "{edges} edges");
        if expect_limit {
            let last = format!("./m{}.js", edges - 1);
            assert_eq!(limited[0].requested_path, last);
            assert_eq!(
                limited[0].message,
                format!(
                    "JavaScript module graph limit (32) reached; import was not inspected: {last}"
                )
            );
            assert!(
                compiled
                    .html
                    .contains("JavaScript%20module%20import%20limit%20exceeded%20at")
            );
        }
        assert_eq!(
            compiled.module_count,
            1 + edges.min(MAX_MODULE_IMPORT_EDGES)
        );
    }
}

#[test]
fn assets_become_host_urls_in_preview_and_data_urls_in_export() {
    let files = [
        text(
            "index.html",
            r#"<img src="img/my%20photo.png"><img src="img/my photo.png"><link rel="icon" href="img/my photo.png"><img src="nope.png"><img src="https://x.test/a.png">"#,
        ),
        WorkspaceFile::asset("img/my photo.png", vec![0xFF]),
    ];
    let preview = compile_preview(
        &files,
        &PreviewOptions::preview(Some(3), "/preview/3/assets/"),
    );
    assert_eq!(
        preview
            .html
            .matches(r#"src="/preview/3/assets/img/my%20photo.png""#)
            .count(),
        2,
        "{}",
        preview.html
    );
    assert!(
        preview
            .html
            .contains(r#"href="/preview/3/assets/img/my%20photo.png""#)
    );
    assert_eq!(
        messages(&preview),
        ["Missing asset: nope.png"],
        "external assets are allowed silently"
    );
    assert_eq!(preview.diagnostics[0].severity, Severity::Warning);
    assert!(!preview.has_errors());
    let exported = export(&files);
    assert_eq!(
        exported.html.matches("data:image/png;base64,/w==").count(),
        3
    );
}

#[test]
fn the_bridge_is_injected_first_in_head_with_the_revision() {
    let files = [text(
        "index.html",
        "<!doctype html><html><head><title>x</title><script>first()</script></head></html>",
    )];
    let html = compile_preview(&files, &PreviewOptions::preview(Some(12), "/a/")).html;
    let bridge_at = html.find("var revision=12;").unwrap();
    assert!(bridge_at < html.find("<title>").unwrap());
    assert!(html.starts_with("<!doctype html><html><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\""));
    assert!(html.contains(PREVIEW_READY_MESSAGE));
    let without_revision = compile_preview(&files, &PreviewOptions::preview(None, "/a/")).html;
    assert!(!without_revision.contains("var revision"));
}

#[test]
fn the_policy_blocks_the_network_and_can_be_turned_off() {
    let files = [text("index.html", "<p>x</p>")];
    let html = export(&files).html;
    assert!(html.starts_with("<meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline' blob: data:;"), "{html}");
    let preview = compile_preview(
        &files,
        &PreviewOptions::preview(None, "http://127.0.0.1:8080/preview/1/assets/"),
    )
    .html;
    assert!(
        preview.contains("img-src blob: data: http://127.0.0.1:8080;"),
        "{preview}"
    );
    let mut options = PreviewOptions::export();
    options.content_security_policy = false;
    assert!(
        !compile_preview(&files, &options)
            .html
            .contains("Content-Security-Policy")
    );
}

#[test]
fn diagnostics_follow_the_reference_order() {
    let files = [
        text(
            "index.html",
            r#"<img src="missing.png"><script src="gone.js"></script><script type="module" src="m.js"></script><link rel="stylesheet" href="https://cdn.test/a.css"><link rel="stylesheet" href="s.css">"#,
        ),
        text("m.js", "import 'x';"),
        text(
            "s.css",
            "@import 'https://fonts.test/f.css'; a{background:url(bg.png)}",
        ),
    ];
    assert_eq!(
        messages(&export(&files)),
        [
            "External stylesheet is blocked in the sandbox: https://cdn.test/a.css",
            "Missing script: gone.js",
            "Bare module specifier is unavailable in the standalone preview: x",
            "Missing asset: missing.png",
            "External stylesheet import is blocked in the sandbox: https://fonts.test/f.css",
            "Missing asset: bg.png",
        ]
    );
}

#[test]
fn inline_styles_get_imports_and_asset_urls_too() {
    let files = [
        text(
            "index.html",
            "<style>@import 'a.css'; b{background:url(i.png)}</style>",
        ),
        text("a.css", "a{}"),
        WorkspaceFile::asset("i.png", vec![7]),
    ];
    let html = export(&files).html;
    assert!(
        html.contains("<style>a{} b{background:url(\"data:image/png;base64,Bw==\")}</style>"),
        "{html}"
    );
}

#[test]
fn the_output_budget_is_enforced_at_its_edge() {
    let files = [
        text(
            "index.html",
            "<script src=a.js></script><script src=a.js></script>",
        ),
        text("a.js", "12345"),
    ];
    let mut options = PreviewOptions::export();
    options.max_output_bytes = 10;
    let compiled = compile_preview(&files, &options);
    assert_eq!(
        compiled.html.matches("12345").count(),
        2,
        "exactly at the budget"
    );
    assert!(compiled.diagnostics.is_empty() && !compiled.has_errors());
    assert!(!compiled.output_limited());
    options.max_output_bytes = 9;
    let compiled = compile_preview(&files, &options);
    assert_eq!(compiled.html.matches("12345").count(), 1, "one byte over");
    assert_eq!(compiled.diagnostics[0].kind, DiagnosticKind::OutputLimit);
    assert_eq!(compiled.diagnostics[0].severity, Severity::Error);
    assert!(compiled.has_errors(), "content was left out");
    assert!(compiled.output_limited());
}

#[test]
fn output_left_out_is_an_error_even_past_the_diagnostic_bound() {
    // Every missing asset of the stylesheet is a warning, reported before the entry's own
    // assets are inlined, so the list is full when the budget runs out on the image.
    let css: String = (0..MAX_PREVIEW_DIAGNOSTICS)
        .map(|index| format!("a{{background:url(gone-{index}.png)}}"))
        .collect();
    let files = [
        text(
            "index.html",
            "<link rel=stylesheet href=s.css><img src=a.gif>",
        ),
        text("s.css", &css),
        WorkspaceFile::asset("a.gif", b"GIF89a".to_vec()),
    ];
    let style = format!("<style data-workspace-source=\"s.css\">{css}</style>");
    let image = "data:image/gif;base64,R0lGODlh";
    let mut options = PreviewOptions::export();
    options.max_output_bytes = style.len() + image.len();
    let compiled = compile_preview(&files, &options);
    assert!(compiled.html.contains(image), "exactly at the budget");
    assert_eq!(compiled.diagnostics.len(), MAX_PREVIEW_DIAGNOSTICS);
    assert!(!compiled.has_errors(), "{:?}", compiled.diagnostics);
    options.max_output_bytes -= 1;
    let compiled = compile_preview(&files, &options);
    assert!(!compiled.html.contains(image), "one byte over");
    assert_eq!(compiled.diagnostics.len(), MAX_PREVIEW_DIAGNOSTICS);
    let last = compiled.diagnostics.last().unwrap();
    assert_eq!(
        (last.kind, last.severity),
        (DiagnosticKind::OutputLimit, Severity::Error)
    );
    assert_eq!(compiled.omitted_diagnostics, 1, "the warning it replaced");
    assert!(compiled.has_errors());
}

#[test]
fn module_syntax_errors_are_reported_with_positions() {
    let files = [
        text("index.html", "<script type=module src=a.js></script>"),
        text("a.js", "let x = ;\n"),
    ];
    let compiled = export(&files);
    assert_eq!(
        compiled.diagnostics[0].kind,
        DiagnosticKind::ModuleSyntaxError
    );
    assert_eq!(compiled.diagnostics[0].line, Some(1));
    assert!(compiled.has_errors());
}

#[test]
fn hostile_nesting_compiles_on_the_compiler_stack_from_a_small_caller_stack() {
    let else_ifs: String = (0..20_000)
        .map(|index| format!("if (x === {index}) {{}} else "))
        .collect();
    let files = [
        text(
            "index.html",
            "<link rel=stylesheet href=deep.css><script type=module src=a.js></script>",
        ),
        text(
            "deep.css",
            &format!("{}url(x.png){}", "(".repeat(100_000), ")".repeat(100_000)),
        ),
        text(
            "a.js",
            &format!("import './b.js';\nlet x = 1;\n{else_ifs}{{}}"),
        ),
        text(
            "b.js",
            &format!(
                "{}1{}",
                "[".repeat(MAX_MODULE_NESTING_DEPTH),
                "]".repeat(MAX_MODULE_NESTING_DEPTH)
            ),
        ),
    ];
    let (compiled, incremental) = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let mut compiler = IncrementalPreviewCompiler::new();
            let options = PreviewOptions::export();
            (export(&files), compiler.compile(&files, &options))
        })
        .unwrap()
        .join()
        .expect("no stack overflow");
    assert_eq!(compiled, incremental);
    assert_eq!(compiled.module_count, 2);
    assert!(
        compiled.diagnostics.is_empty(),
        "{:?}",
        compiled.diagnostics
    );
}

#[test]
fn a_module_loaded_by_several_scripts_is_registered_once() {
    // Found by `preview_proptest`: each repeated root was rendered and registered again, so
    // under a zero budget the throwing stand-ins grew the document past its bound.
    let files = vec![
        text(
            "index.html",
            &"<script type=\"module\" src=\"m.js\"></script>".repeat(5),
        ),
        text("m.js", "import { x } from './n.js';"),
        text("n.js", "export const x = 1;"),
    ];
    let compiled = export(&files);
    assert!(
        compiled.diagnostics.is_empty(),
        "{:?}",
        compiled.diagnostics
    );
    let registered = compiled
        .html
        .matches("\"https://context-action.local/workspace-module/m.js\":")
        .count();
    assert_eq!(registered, 1);
    assert_eq!(compiled.module_count, 2);
}

#[test]
fn scripts_import_json_as_its_value_and_report_json_that_is_not() {
    let files = vec![
        text(
            "index.html",
            "<script type=\"module\" src=\"main.js\"></script>",
        ),
        text(
            "main.js",
            "import data from './data.json';\nimport bad from './bad.json';\n",
        ),
        text("data.json", "{\"items\": [1, 2]}"),
        text("bad.json", "{\"items\": [1, 2"),
    ];
    let compiled = export(&files);
    assert!(
        compiled
            .html
            .contains(r#"export default {\"items\": [1, 2]};"#)
    );
    let [diagnostic] = compiled.diagnostics.as_slice() else {
        panic!("one diagnostic: {:?}", compiled.diagnostics);
    };
    assert_eq!(diagnostic.kind, DiagnosticKind::ModuleSyntaxError);
    assert_eq!(diagnostic.source_path, "bad.json");
    assert!(
        diagnostic
            .message
            .starts_with("JSON module could not be parsed: "),
        "{}",
        diagnostic.message
    );
}

#[test]
fn a_stylesheet_a_script_imports_is_added_by_it_and_its_references_are_reported() {
    let files = vec![
        text(
            "index.html",
            "<script type=\"module\" src=\"main.js\"></script>",
        ),
        text("main.js", "import './app.css';\n"),
        text("app.css", "body { background: url(gone.png) }"),
    ];
    let compiled = export(&files);
    assert!(
        compiled
            .html
            .contains(r#"style.setAttribute(\"data-workspace-source\", \"app.css\")"#)
    );
    assert_eq!(messages(&compiled), ["Missing asset: gone.png"]);
    assert_eq!(compiled.diagnostics[0].source_path, "app.css");
}

#[test]
fn jsx_without_its_runtime_installed_names_the_runtime_and_the_pragma() {
    let folder = tempfile::tempdir().unwrap();
    let files = vec![
        text(
            "index.html",
            "<script type=\"module\" src=\"app.tsx\"></script>",
        ),
        text(
            "app.tsx",
            "const x: number = 1;\nexport const view = <p>{x}</p>;\n",
        ),
    ];
    let options = PreviewOptions::export()
        .with_packages(live_code_editor::preview::Packages::folder(folder.path()));
    let compiled = compile_preview(&files, &options);
    let [diagnostic] = compiled.diagnostics.as_slice() else {
        panic!("one diagnostic: {:?}", compiled.diagnostics);
    };
    assert_eq!(diagnostic.severity, Severity::Error);
    assert_eq!(diagnostic.requested_path, "react/jsx-runtime");
    assert!(
        diagnostic
            .message
            .starts_with("JSX compiles to calls of its runtime react/jsx-runtime")
            && diagnostic.message.contains("@jsxImportSource"),
        "{}",
        diagnostic.message
    );
}

#[test]
fn import_meta_env_is_vites_build_environment() {
    let files = vec![
        text(
            "index.html",
            "<script type=\"module\" src=\"main.ts\"></script>",
        ),
        text(
            "main.ts",
            "const mode: string = import.meta.env.MODE;\nconst meta = import.meta.envelope;\ndocument.title = `${mode} ${import.meta.env.DEV}`;\n",
        ),
    ];
    let exported = export(&files);
    assert!(
        exported.diagnostics.is_empty(),
        "{:?}",
        exported.diagnostics
    );
    let production = r#"({\"BASE_URL\":\"/\",\"MODE\":\"production\",\"DEV\":false,\"PROD\":true,\"SSR\":false})"#;
    assert_eq!(
        exported.html.matches(production).count(),
        2,
        "{}",
        exported.html
    );
    assert!(
        exported.html.contains("import.meta.envelope"),
        "only .env is replaced"
    );
    let previewed = compile_preview(&files, &PreviewOptions::preview(Some(1), "/a/"));
    assert!(
        previewed
            .html
            .contains(r#"\"MODE\":\"development\",\"DEV\":true"#)
    );
}
