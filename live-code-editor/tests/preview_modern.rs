//! TypeScript, JSX and import maps in the preview compiler, on in-memory workspaces and on the
//! `tsx-app` / `tsx-broken` fixtures (the browser runs them in `preview_browser.rs`).

mod preview_support;

use live_code_editor::WorkspaceFile;
use live_code_editor::preview::{
    CompiledPreview, DiagnosticKind, IMPORT_MAP_FILE, IncrementalPreviewCompiler, PreviewJsx,
    PreviewOptions, compile_preview, workspace_module_specifier,
};
use preview_support::load_fixture;

fn text(path: &str, source: &str) -> WorkspaceFile {
    WorkspaceFile::text(path, source)
}

fn export(files: &[WorkspaceFile]) -> CompiledPreview {
    compile_preview(files, &PreviewOptions::export())
}

fn preview(files: &[WorkspaceFile]) -> CompiledPreview {
    compile_preview(files, &PreviewOptions::preview(Some(3), "/assets/"))
}

/// The bootstrap registers each module as a JSON string: the decoded source of `path`.
fn module_source(compiled: &CompiledPreview, path: &str) -> String {
    let key = serde_json::to_string(&workspace_module_specifier(path)).unwrap();
    let start = compiled
        .html
        .find(&format!("{key}:"))
        .unwrap_or_else(|| panic!("{path} is not registered:\n{}", compiled.html))
        + key.len()
        + 1;
    let mut stream = serde_json::Deserializer::from_str(&compiled.html[start..]).into_iter();
    stream.next().unwrap().unwrap()
}

fn entry_with_module(module: &str) -> WorkspaceFile {
    text(
        "index.html",
        &format!("<script type=\"module\" src=\"{module}\"></script>"),
    )
}

#[test]
fn the_tsx_fixture_compiles_without_diagnostics_and_registers_each_module_once() {
    for compiled in [
        export(&load_fixture("tsx-app")),
        preview(&load_fixture("tsx-app")),
    ] {
        assert!(
            compiled.diagnostics.is_empty(),
            "{:?}",
            compiled.diagnostics
        );
        // main.tsx, App.tsx, color.ts, legacy.jsx and both vendor files; never types.ts (a
        // type-only import) and never the import map as written.
        assert_eq!(compiled.module_count, 6);
        assert!(!compiled.html.contains("src/types.ts"));
        assert!(
            !compiled.html.contains("type=\"importmap\""),
            "{}",
            compiled.html
        );
        let app = module_source(&compiled, "src/App.tsx");
        assert!(!app.contains(": number"), "{app}");
        assert!(
            app.contains(&workspace_module_specifier("vendor/mini/jsx-runtime.js")),
            "the default runtime import went through the map: {app}"
        );
        assert!(
            app.contains(&workspace_module_specifier("src/color.ts")),
            "./color.js resolved to its TypeScript twin: {app}"
        );
    }
}

#[test]
fn preview_modules_carry_an_inline_source_map_and_exports_do_not() {
    let files = load_fixture("tsx-app");
    let app = module_source(&preview(&files), "src/App.tsx");
    let map = app
        .lines()
        .find_map(|line| line.strip_prefix("//# sourceMappingURL=data:application/json;"))
        .expect("an inline source map");
    let encoded = map.rsplit(',').next().unwrap();
    use base64::Engine;
    let json: serde_json::Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(json["sources"], serde_json::json!(["src/App.tsx"]));
    assert!(
        json["sourcesContent"][0]
            .as_str()
            .unwrap()
            .contains("let count: number = start;")
    );
    assert!(!module_source(&export(&files), "src/App.tsx").contains("sourceMappingURL"));
}

#[test]
fn a_syntax_error_is_a_coded_diagnostic_at_its_line_and_the_module_throws_it() {
    let compiled = preview(&load_fixture("tsx-broken"));
    let error = compiled
        .diagnostics
        .iter()
        .find(|diagnostic| diagnostic.kind == DiagnosticKind::ModuleSyntaxError)
        .unwrap_or_else(|| panic!("{:?}", compiled.diagnostics));
    assert_eq!(error.source_path, "src/Bad.tsx");
    assert_eq!(error.line, Some(2), "{error:?}");
    assert!(error.column.is_some());
    assert!(
        error
            .message
            .starts_with("TypeScript/JSX module could not be transformed:"),
        "{}",
        error.message
    );
    // The import of it throws the reason and declares what main.tsx imports, so the page
    // sees the reason, not a link error.
    let main = module_source(&compiled, "src/main.tsx");
    let url = main
        .split('"')
        .find(|part| part.starts_with("data:text/javascript"))
        .unwrap_or_else(|| panic!("{main}"));
    let body = percent_encoding::percent_decode_str(url)
        .decode_utf8()
        .unwrap();
    assert!(
        body.contains("throw new Error(\"src/Bad.tsx:2:") && body.contains("as \"broken\""),
        "{body}"
    );
    assert!(
        !compiled
            .html
            .contains(&workspace_module_specifier("src/Bad.tsx"))
    );
    // As an entry module it throws the same reason itself.
    let files = [
        entry_with_module("Bad.tsx"),
        text("Bad.tsx", "let x = <b>;"),
    ];
    let entry = module_source(&preview(&files), "Bad.tsx");
    assert!(
        entry.starts_with("throw new SyntaxError(\"Bad.tsx:1:"),
        "{entry}"
    );
    assert!(compiled.html.contains("static content stays"));
}

#[test]
fn imports_of_a_tsx_module_are_reported_where_they_are_written() {
    let files = [
        entry_with_module("main.tsx"),
        text(
            "main.tsx",
            "type A = number;\nconst a: A = 1;\nimport { gone } from './gone';\nexport const x = <b>{a}{gone}</b>;\n",
        ),
    ];
    let compiled = export(&files);
    let kinds: Vec<_> = compiled
        .diagnostics
        .iter()
        .map(|diagnostic| {
            (
                diagnostic.kind,
                diagnostic.requested_path.as_str(),
                diagnostic.line,
                diagnostic.column,
            )
        })
        .collect();
    assert!(
        kinds.contains(&(
            DiagnosticKind::MissingReference,
            "./gone",
            Some(3),
            Some(22)
        )),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&(
            DiagnosticKind::UnsupportedModuleReference,
            "react/jsx-runtime",
            Some(1),
            Some(1)
        )),
        "the injected runtime import without a map is reported at the file start: {kinds:?}"
    );
}

#[test]
fn extensionless_and_index_imports_resolve_from_typescript_only() {
    let files = [
        entry_with_module("main.ts"),
        text(
            "main.ts",
            "import './lib';\nimport './widgets';\nimport './plain.js';",
        ),
        text("lib.ts", "export {};"),
        text("widgets/index.tsx", "export {};"),
        text("plain.js", "import './lib';"),
    ];
    let compiled = export(&files);
    assert_eq!(compiled.module_count, 4, "{:?}", compiled.diagnostics);
    // A plain JavaScript module keeps browser semantics: `./lib` is not probed.
    assert_eq!(compiled.diagnostics.len(), 1, "{:?}", compiled.diagnostics);
    assert_eq!(compiled.diagnostics[0].source_path, "plain.js");
    assert_eq!(
        compiled.diagnostics[0].kind,
        DiagnosticKind::MissingReference
    );
}

#[test]
fn the_workspace_import_map_file_maps_bare_specifiers_after_the_entry_map() {
    let files = [
        text(
            "index.html",
            r#"<script type="importmap">{"imports":{"a":"./from-html.js"}}</script><script type="module">import 'a'; import 'b';</script>"#,
        ),
        text(
            IMPORT_MAP_FILE,
            r#"{"imports":{"a":"./from-file.js","b":"./lib/b.js"}}"#,
        ),
        text("from-html.js", ""),
        text("from-file.js", ""),
        text("lib/b.js", ""),
    ];
    let compiled = export(&files);
    assert!(
        compiled.diagnostics.is_empty(),
        "{:?}",
        compiled.diagnostics
    );
    assert!(
        compiled
            .html
            .contains(&workspace_module_specifier("from-html.js"))
    );
    assert!(
        compiled
            .html
            .contains(&workspace_module_specifier("lib/b.js"))
    );
    assert!(
        !compiled
            .html
            .contains(&workspace_module_specifier("from-file.js"))
    );
}

#[test]
fn mapped_targets_that_leave_the_workspace_are_blocked_or_missing() {
    let files = [text(
        "index.html",
        r#"<script type="importmap">{"imports":{"cdn":"https://cdn.example/x.js","gone":"./vendor/gone.js"}}</script><script type="module">import 'cdn'; import 'gone'; import 'unmapped';</script>"#,
    )];
    let compiled = export(&files);
    let found: Vec<_> = compiled
        .diagnostics
        .iter()
        .map(|diagnostic| (diagnostic.kind, diagnostic.requested_path.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (
                DiagnosticKind::BlockedExternalReference,
                "cdn (mapped to https://cdn.example/x.js)"
            ),
            (
                DiagnosticKind::MissingReference,
                "gone (mapped to ./vendor/gone.js)"
            ),
            (DiagnosticKind::UnsupportedModuleReference, "unmapped"),
        ]
    );
}

#[test]
fn an_unreadable_import_map_is_reported_and_dropped() {
    let files = [text(
        "index.html",
        "<script type=\"importmap\">{ nope</script><script type=\"module\">import 'a';</script>",
    )];
    let compiled = export(&files);
    assert_eq!(
        compiled.diagnostics[0].kind,
        DiagnosticKind::ModuleSyntaxError
    );
    assert!(
        compiled.diagnostics[0]
            .message
            .starts_with("Import map could not be used: the import map is not valid JSON"),
        "{:?}",
        compiled.diagnostics
    );
    assert!(!compiled.html.contains("{ nope"));
}

#[test]
fn the_configured_jsx_runtime_applies_where_no_pragma_says_otherwise() {
    let files = [
        entry_with_module("main.jsx"),
        text(
            "main.jsx",
            "import { h, F } from './h.js';\nexport const x = <><i /></>;",
        ),
        text("h.js", "export const h = () => null, F = null;"),
    ];
    let options = PreviewOptions::export().with_jsx(PreviewJsx::classic("h", "F"));
    let compiled = compile_preview(&files, &options);
    assert!(
        compiled.diagnostics.is_empty(),
        "{:?}",
        compiled.diagnostics
    );
    assert!(module_source(&compiled, "main.jsx").contains("h(F"));
    let preact = PreviewOptions::export().with_jsx(PreviewJsx::automatic("preact"));
    let compiled = compile_preview(&files[..2], &preact);
    assert!(
        compiled
            .diagnostics
            .iter()
            .any(|diagnostic| diagnostic.requested_path == "preact/jsx-runtime"),
        "{:?}",
        compiled.diagnostics
    );
}

#[test]
fn incremental_compiles_equal_full_ones_across_tsx_edits_and_option_changes() {
    let mut files = load_fixture("tsx-app");
    let mut compiler = IncrementalPreviewCompiler::new();
    let options = PreviewOptions::preview(Some(1), "/assets/");
    assert_eq!(
        compiler.compile(&files, &options),
        compile_preview(&files, &options)
    );
    let app = files
        .iter()
        .position(|file| file.path == "src/App.tsx")
        .unwrap();
    let edited = files[app]
        .source()
        .unwrap()
        .replace("className=\"app\"", "className=\"app edited\"");
    files[app] = text("src/App.tsx", &edited);
    let incremental = compiler.compile(&files, &options);
    assert_eq!(incremental, compile_preview(&files, &options));
    assert!(module_source(&incremental, "src/App.tsx").contains("app edited"));
    let classic = options
        .clone()
        .with_jsx(PreviewJsx::classic("h", "Fragment"));
    assert_eq!(
        compiler.compile(&files, &classic),
        compile_preview(&files, &classic),
        "a JSX option change recompiles instead of reusing"
    );
    // The entry's import map changes what a bare specifier becomes.
    let entry = files
        .iter()
        .position(|file| file.path == "index.html")
        .unwrap();
    let html = files[entry]
        .source()
        .unwrap()
        .replace("\"react/jsx-runtime\"", "\"other/jsx-runtime\"");
    files[entry] = text("index.html", &html);
    assert_eq!(
        compiler.compile(&files, &options),
        compile_preview(&files, &options)
    );
}

#[test]
fn a_stylesheet_edit_beside_tsx_modules_stays_on_the_live_css_path() {
    let with_css = |css: &str| {
        let mut files = load_fixture("tsx-app");
        let entry = files
            .iter()
            .position(|file| file.path == "index.html")
            .unwrap();
        let html = files[entry].source().unwrap().replace(
            "</head>",
            "<link rel=\"stylesheet\" href=\"app.css\"></head>",
        );
        files[entry] = text("index.html", &html);
        files.push(text("app.css", css));
        files
    };
    let (before, after) = (
        with_css("main { color: red }"),
        with_css("main { color: teal }"),
    );
    assert!(live_code_editor::preview::only_stylesheets_changed(
        &before, &after
    ));
    let mut compiler = IncrementalPreviewCompiler::new();
    let options = PreviewOptions::preview(Some(1), "/assets/");
    let first = compiler.compile(&before, &options);
    let second = compiler.compile(&after, &options);
    assert_eq!(
        second
            .stylesheets
            .as_deref()
            .map(|sheets| sheets[0].as_ref()),
        Some("main { color: teal }")
    );
    assert_eq!(
        module_source(&first, "src/App.tsx"),
        module_source(&second, "src/App.tsx"),
        "the transformed modules are reused as they were"
    );
}

#[test]
fn the_edge_limit_is_the_reference_one_by_default_and_can_be_raised_for_larger_apps() {
    // A chain main -> m0 -> m1 -> ... -> m39: 40 edges.
    let mut files = vec![
        entry_with_module("main.tsx"),
        text("main.tsx", "import './m0';"),
    ];
    for index in 0..40 {
        let next = if index < 39 {
            format!("import './m{}';", index + 1)
        } else {
            String::new()
        };
        files.push(text(
            &format!("m{index}.ts"),
            &format!("{next}\nexport const n: number = {index};"),
        ));
    }
    let limited = export(&files);
    assert_eq!(
        limited.diagnostics[0].message,
        "JavaScript module graph limit (32) reached; import was not inspected: ./m32"
    );
    for (limit, diagnostics) in [(40, 0), (39, 1)] {
        let options = PreviewOptions::export().with_max_module_import_edges(limit);
        let compiled = compile_preview(&files, &options);
        assert_eq!(
            compiled.diagnostics.len(),
            diagnostics,
            "limit {limit}: {:?}",
            compiled.diagnostics
        );
        let mut incremental = IncrementalPreviewCompiler::new();
        assert_eq!(incremental.compile(&files, &options), compiled);
    }
    let compiled = compile_preview(
        &files,
        &PreviewOptions::export().with_max_module_import_edges(39),
    );
    assert_eq!(
        compiled.diagnostics[0].message,
        "JavaScript module graph limit (39) reached; import was not inspected: ./m39"
    );
}
