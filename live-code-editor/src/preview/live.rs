//! Live stylesheet edits: a revision that changed only stylesheets is applied inside the
//! running preview instead of reloading it, so the page's state (a counter, scroll position,
//! form input) survives.
//!
//! The host decides with [`only_stylesheets_changed`] whether the next revision differs from
//! the shown one in CSS files alone, and compiles that revision with the preview compiler as
//! usual: [`super::CompiledPreview::stylesheets`] are the texts of its inlined stylesheets. The
//! parent page posts them into the iframe as a [`PREVIEW_STYLESHEETS_MESSAGE`]; the bridge
//! accepts it only from its parent window (and the host's origin), only for the revision it
//! shows and only when the document holds as many inlined stylesheets, swaps their text, takes
//! the new revision and posts the usual `ready` for it. Anything else (HTML or JavaScript, an
//! inline `<style>`, files added, removed or renamed) reloads the document.

use std::borrow::Borrow;

use super::protocol::{MAX_BRIDGE_REVISION, PREVIEW_READY_MESSAGE, PREVIEW_STYLESHEETS_MESSAGE};
use crate::file::{Language, WorkspaceFile};

/// Whether `next` differs from `previous` in stylesheets only: the same paths in the same
/// order, and every file that changed is CSS text in both. Adding, removing or renaming any
/// file (a stylesheet included) changes what the HTML resolves, so it is not a stylesheet-only
/// change.
pub fn only_stylesheets_changed<F: Borrow<WorkspaceFile>>(previous: &[F], next: &[F]) -> bool {
    previous.len() == next.len()
        && previous.iter().zip(next).all(|(before, after)| {
            let (before, after) = (before.borrow(), after.borrow());
            before.path == after.path
                && (before == after || (is_stylesheet(before) && is_stylesheet(after)))
        })
}

fn is_stylesheet(file: &WorkspaceFile) -> bool {
    file.language == Language::Css && file.source().is_some()
}

/// The bridge's part that applies a [`PREVIEW_STYLESHEETS_MESSAGE`]; runs inside the bridge's
/// closure (`revision`, `failed`, `parentOrigin` and `send` are the bridge's). A document that
/// reported an error keeps it: only a reload can clear it.
pub(crate) fn stylesheet_swap_script() -> String {
    format!(
        "window.addEventListener('message',function(event){{var data=event.data;\
if(event.source!==window.parent||(parentOrigin!=='*'&&event.origin!==parentOrigin)||!data||data.type!=='{PREVIEW_STYLESHEETS_MESSAGE}'||data.revision!==revision||failed)return;\
var next=data.next,sheets=data.stylesheets;\
if(typeof next!=='number'||Math.floor(next)!==next||next<=revision||next>{MAX_BRIDGE_REVISION}||!Array.isArray(sheets))return;\
var nodes=document.querySelectorAll('style[data-workspace-source]');if(nodes.length!==sheets.length)return;\
for(var i=0;i<sheets.length;i++){{if(typeof sheets[i]!=='string')return}}\
for(var j=0;j<nodes.length;j++){{if(nodes[j].textContent!==sheets[j])nodes[j].textContent=sheets[j]}}\
revision=next;send({{type:'{PREVIEW_READY_MESSAGE}'}})}});"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preview::{PreviewOptions, compile_preview};

    fn site(css: &str, html: &str) -> Vec<WorkspaceFile> {
        vec![
            WorkspaceFile::text("index.html", html),
            WorkspaceFile::text("a.css", css),
            WorkspaceFile::text("app.js", "1"),
        ]
    }

    const HTML: &str = "<link rel=stylesheet href=a.css><h1>Hi</h1><script src=app.js></script>";

    #[test]
    fn a_css_edit_is_stylesheet_only_and_anything_else_is_not() {
        let before = site("h1{color:red}", HTML);
        assert!(only_stylesheets_changed(
            &before,
            &site("h1{color:blue}", HTML)
        ));
        assert!(
            only_stylesheets_changed(&before, &before),
            "no change at all"
        );
        assert!(!only_stylesheets_changed(
            &before,
            &site("h1{color:red}", "<style>h1{color:blue}</style>")
        ));
        let mut script = before.clone();
        script[2] = WorkspaceFile::text("app.js", "2");
        assert!(!only_stylesheets_changed(&before, &script));
        let mut added = before.clone();
        added.push(WorkspaceFile::text("b.css", "p{}"));
        assert!(!only_stylesheets_changed(&before, &added));
        assert!(
            !only_stylesheets_changed(&added, &before),
            "a removed stylesheet"
        );
        let mut renamed = before.clone();
        renamed[1] = WorkspaceFile::text("b.css", "h1{color:red}");
        assert!(!only_stylesheets_changed(&before, &renamed));
    }

    #[test]
    fn the_compiled_stylesheets_are_the_inlined_style_texts() {
        let files = vec![
            WorkspaceFile::text(
                "index.html",
                "<link rel=stylesheet href=a.css><link rel=stylesheet href=gone.css><link rel=stylesheet href=b.css media=print>",
            ),
            WorkspaceFile::text("a.css", "@import 'c.css'; h1{background:url(i.png)}"),
            WorkspaceFile::text("b.css", "p{content:'</style>'}"),
            WorkspaceFile::text("c.css", "h2{}"),
            WorkspaceFile::asset("i.png", vec![1]),
        ];
        let compiled = compile_preview(&files, &PreviewOptions::preview(Some(3), "/p/3/"));
        let sheets = compiled.stylesheets.expect("live stylesheets");
        assert_eq!(
            sheets.len(),
            2,
            "the missing link is removed, not a stylesheet"
        );
        for sheet in &sheets {
            assert!(
                compiled.html.contains(&format!(">{sheet}</style>")),
                "{sheet} is what the document holds"
            );
        }
        assert!(sheets[0].contains("h2{}") && sheets[0].contains("/p/3/i.png"));
        assert!(
            sheets[1].contains("<\\/style>"),
            "escaped as in the document"
        );
    }

    #[test]
    fn an_inline_style_that_imports_a_stylesheet_can_only_reload() {
        let files = vec![
            WorkspaceFile::text("index.html", "<style>@import 'a.css';</style>"),
            WorkspaceFile::text("a.css", "h1{}"),
        ];
        let compiled = compile_preview(&files, &PreviewOptions::preview(Some(1), "/p/"));
        assert_eq!(compiled.stylesheets, None);
        let plain = vec![WorkspaceFile::text(
            "index.html",
            "<style>h1{}</style><link rel=stylesheet href=a.css>",
        )];
        let compiled = compile_preview(&plain, &PreviewOptions::preview(Some(1), "/p/"));
        assert_eq!(
            compiled.stylesheets,
            Some(vec![]),
            "a missing link is no stylesheet"
        );
    }

    #[test]
    fn the_swap_script_checks_sender_revision_and_count_and_acknowledges() {
        let script = stylesheet_swap_script();
        assert!(script.contains("event.source!==window.parent"));
        assert!(script.contains("event.origin!==parentOrigin"));
        assert!(script.contains("data.revision!==revision"));
        assert!(script.contains("nodes.length!==sheets.length"));
        assert!(script.contains(PREVIEW_STYLESHEETS_MESSAGE));
        assert!(script.contains("revision=next;send({type:'context-action.preview.ready'})"));
    }
}
