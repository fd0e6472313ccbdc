//! Fixture workspaces compiled without a browser: diagnostics and what the output keeps.

mod preview_support;

use live_code_editor::preview::{
    DiagnosticKind, PreviewOptions, compile_preview, export_standalone_html,
};
use preview_support::load_fixture;

#[test]
fn external_references_are_removed_blocked_and_reported_in_order() {
    let compiled = export_standalone_html(&load_fixture("external"));
    let found: Vec<_> = compiled
        .diagnostics
        .iter()
        .map(|diagnostic| {
            (
                diagnostic.kind,
                diagnostic.source_path.as_str(),
                diagnostic.message.as_str(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                DiagnosticKind::BlockedExternalReference,
                "index.html",
                "External stylesheet is blocked in the sandbox: https://cdn.example.test/site.css"
            ),
            (
                DiagnosticKind::BlockedExternalReference,
                "index.html",
                "External script is blocked in the sandbox: //cdn.example.test/lib.js"
            ),
            (
                DiagnosticKind::BlockedExternalReference,
                "app.js",
                "External module import is blocked in the sandbox: https://esm.example.test/confetti.js"
            ),
            (
                DiagnosticKind::UnsupportedModuleReference,
                "app.js",
                "Bare module specifier is unavailable in the standalone preview: @preact/signals"
            ),
            (
                DiagnosticKind::BlockedExternalReference,
                "local.css",
                "External stylesheet import is blocked in the sandbox: https://fonts.example.test/font.css"
            ),
        ]
    );
    let html = &compiled.html;
    assert!(
        !html.contains("href=\"https://cdn") && !html.contains("src=\"//cdn"),
        "{html}"
    );
    assert!(html.contains(
        "/* Blocked unresolved workspace @import: https://fonts.example.test/font.css */"
    ));
    assert!(
        html.contains("default-src 'none'"),
        "the policy blocks what the compiler leaves (images, url())"
    );
    assert_eq!(compiled.diagnostics[0].line, Some(4));
}

#[test]
fn the_site_fixture_compiles_cleanly_in_both_modes() {
    let files = load_fixture("site");
    let preview = compile_preview(
        &files,
        &PreviewOptions::preview(Some(1), "/preview/1/assets/"),
    );
    assert!(preview.diagnostics.is_empty(), "{:?}", preview.diagnostics);
    assert_eq!(preview.entry.as_deref(), Some("index.html"));
    assert_eq!(preview.module_count, 5);
    assert!(
        preview
            .html
            .contains("/* Skipped cyclic workspace @import: styles/main.css */")
    );
    assert!(
        preview
            .html
            .contains("@media print {\n#print-only { display: none; }")
    );
    assert!(
        preview
            .html
            .contains(r#"src="/preview/1/assets/img/my%20photo.svg""#)
    );
    assert!(
        preview
            .html
            .contains(r#"url("/preview/1/assets/img/my%20photo.svg")"#)
    );
    assert!(
        !preview.html.contains("not-an-import.css\";\n@import"),
        "the commented import stays a comment"
    );
    let exported = export_standalone_html(&files);
    assert!(exported.html.contains("data:image/svg+xml;base64,"));
    assert!(!exported.html.contains("/preview/"));
}

#[test]
fn the_no_entry_fixture_yields_the_card() {
    let compiled = export_standalone_html(&load_fixture("no-entry"));
    assert!(compiled.entry_required);
    assert!(compiled.html.contains("Add an HTML entry file"));
}

#[test]
fn the_broken_fixture_reports_its_missing_module_with_a_position() {
    let compiled = export_standalone_html(&load_fixture("broken"));
    assert_eq!(compiled.diagnostics.len(), 1);
    let diagnostic = &compiled.diagnostics[0];
    assert_eq!(
        (
            diagnostic.source_path.as_str(),
            diagnostic.line,
            diagnostic.column
        ),
        ("main.js", Some(1), Some(24))
    );
    assert_eq!(diagnostic.requested_path, "./gone.js");
}
