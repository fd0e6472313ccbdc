//! The compiler: one compile of a workspace snapshot, the entry's phases in reference order,
//! the output budget and asset URLs. The scanners it drives ([`super::html`], [`super::css`],
//! [`super::modules`], [`super::transform`]) know nothing of it.

mod entry;
mod incremental;
mod memo;
mod module_graph;
mod package_graph;
mod pieces;
mod resources;
mod stylesheets;

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

pub use incremental::IncrementalPreviewCompiler;

use super::bridge;
use super::diagnostics::{self, DiagnosticSink};
use super::import_map;
use super::resolve::{Reference, WorkspaceIndex, push_encoded_path};
use super::{CompiledPreview, PreviewOptions, PreviewTarget};
use crate::file::{FileContent, WorkspaceFile};
use memo::ScanMemo;
use pieces::{PieceCache, Reuse};

/// Compiles a workspace snapshot into one document. Pure: same input, same output. Runs on the
/// caller's thread; module parses run on a
/// [`PARSER_STACK_BYTES`](super::PARSER_STACK_BYTES) stack.
pub fn compile_preview(files: &[WorkspaceFile], options: &PreviewOptions) -> CompiledPreview {
    compile_with_memo(files, options, &mut ScanMemo::default(), None)
}

/// [`compile_preview`], reusing and filling `memo` and, for an incremental compiler, `pieces`.
fn compile_with_memo(
    files: &[WorkspaceFile],
    options: &PreviewOptions,
    memo: &mut ScanMemo,
    mut reuse: Option<&mut Reuse>,
) -> CompiledPreview {
    memo.start_compile();
    if let Some(reuse) = reuse.as_deref_mut() {
        reuse.start_compile(files, options);
    }
    let compiled = compile_workspace(files, options, memo, reuse.as_deref_mut());
    memo.finish_compile();
    if let Some(reuse) = reuse {
        reuse.finish_compile(files);
    }
    compiled
}

fn compile_workspace(
    files: &[WorkspaceFile],
    options: &PreviewOptions,
    memo: &mut ScanMemo,
    reuse: Option<&mut Reuse>,
) -> CompiledPreview {
    let (pieces, references) = match reuse {
        Some(Reuse { pieces, references }) => (Some(pieces), Some(references)),
        None => (None, None),
    };
    let index = WorkspaceIndex::remembering(files, references);
    let Some(entry) = index.entry() else {
        return CompiledPreview {
            html: entry_required_document(options),
            entry: None,
            entry_required: true,
            diagnostics: Vec::new(),
            omitted_diagnostics: 0,
            module_count: 0,
            stylesheets: None,
        };
    };
    let mut compiler = Compiler::new(index, options, memo, pieces);
    let source = entry.source().unwrap_or_default();
    let scan = compiler.memo.html_scan(&entry.path, source);
    let (html, module_count) = match scan.as_ref() {
        Ok(html_scan) => compiler.compile_entry(&entry.path, source, &scan, html_scan),
        Err(error) => (compiler.unreadable_entry(&entry.path, error), 0),
    };
    let stylesheets = compiler.live_stylesheets.take();
    let (diagnostics, omitted_diagnostics) = compiler.sink.finish();
    let compiled = CompiledPreview {
        html,
        entry: Some(entry.path.clone()),
        entry_required: false,
        diagnostics,
        omitted_diagnostics,
        module_count,
        stylesheets,
    };
    if compiled.output_limited() {
        return CompiledPreview {
            stylesheets: None,
            ..compiled
        };
    }
    compiled
}

/// Bytes the compiler may still inline.
#[derive(Debug)]
struct OutputBudget {
    remaining: usize,
    /// Bytes taken so far, and how many takes did not fit (a piece's share is the difference).
    taken: usize,
    refused: usize,
}

impl OutputBudget {
    /// Takes `bytes` from the budget; `false` (and nothing taken) when they do not fit.
    fn take(&mut self, bytes: usize) -> bool {
        match self.remaining.checked_sub(bytes) {
            Some(remaining) => {
                self.remaining = remaining;
                self.taken += bytes;
                true
            }
            None => {
                self.refused += 1;
                false
            }
        }
    }
}

/// An asset's URL and, for a `data:` URL, the position of the file whose bytes it encodes.
type AssetUrl = (Arc<str>, Option<u32>);

/// State of one compile: the workspace, diagnostics, budget and per-path caches.
pub(crate) struct Compiler<'a> {
    index: WorkspaceIndex<'a>,
    options: &'a PreviewOptions,
    sink: DiagnosticSink,
    budget: OutputBudget,
    /// Per-file scans, reused across compiles by an incremental compiler.
    memo: &'a mut ScanMemo,
    /// Rendered pieces an incremental compiler keeps; `None` for a one-shot compile.
    pieces: Option<&'a mut PieceCache>,
    /// Budget counters when the piece being rendered started.
    piece_start: Option<(usize, usize)>,
    /// Each asset's URL, shared (an export's `data:` URLs are tens of kilobytes each), with
    /// the position of the asset whose bytes it encodes.
    asset_cache: HashMap<String, Option<AssetUrl>>,
    /// See [`CompiledPreview::stylesheets`]; filled by the entry's compile.
    live_stylesheets: Option<Vec<Arc<str>>>,
    /// The entry's and the workspace's import maps, read before the module graph.
    import_map: import_map::ImportMap,
    /// Stylesheets modules import (`import './App.css'`), reported with the linked ones.
    module_stylesheets: Vec<(&'a str, &'a str)>,
}

impl<'a> Compiler<'a> {
    fn new(
        index: WorkspaceIndex<'a>,
        options: &'a PreviewOptions,
        memo: &'a mut ScanMemo,
        pieces: Option<&'a mut PieceCache>,
    ) -> Self {
        Self {
            index,
            options,
            sink: DiagnosticSink::with_module_edge_limit(options.max_module_import_edges),
            budget: OutputBudget {
                remaining: options.max_output_bytes,
                taken: 0,
                refused: 0,
            },
            memo,
            pieces,
            piece_start: None,
            asset_cache: HashMap::new(),
            live_stylesheets: None,
            import_map: import_map::ImportMap::default(),
            module_stylesheets: Vec::new(),
        }
    }

    /// Whether the document runs as a preview (bridge, inline source maps), not an export.
    fn runs_in_preview(&self) -> bool {
        matches!(self.options.target, PreviewTarget::Preview { .. })
    }

    /// Keeps `content` if it fits the budget; otherwise reports and returns `fallback`.
    fn within_budget(
        &mut self,
        content: String,
        source_path: &str,
        requested: &str,
        fallback: String,
    ) -> String {
        if self.take_or_report(content.len(), source_path, requested) {
            content
        } else {
            fallback
        }
    }

    /// Takes `bytes` from the budget; when they do not fit, reports the output limit for
    /// `requested` (referenced from `source_path`) and returns `false`.
    pub(crate) fn take_or_report(
        &mut self,
        bytes: usize,
        source_path: &str,
        requested: &str,
    ) -> bool {
        let taken = self.budget.take(bytes);
        if !taken {
            self.report_output_limit(source_path, requested);
        }
        taken
    }

    fn report_output_limit(&mut self, source_path: &str, requested: &str) {
        let message = format!(
            "Preview output limit ({} bytes) reached; left out: {requested}",
            self.options.max_output_bytes
        );
        self.sink.other(
            diagnostics::DiagnosticKind::OutputLimit,
            source_path,
            requested,
            None,
            message,
        );
    }

    /// The URL of the workspace asset `requested` from `from` refers to, taking its length
    /// from the budget (reporting when it does not fit).
    pub(crate) fn asset_url_for(&mut self, from: &str, requested: &str) -> Option<Arc<str>> {
        let url = self.asset_url(from, requested)?;
        self.take_or_report(url.len(), from, requested)
            .then_some(url)
    }

    /// The URL of the workspace asset `requested` from `from` refers to, if it is one.
    fn asset_url(&mut self, from: &str, requested: &str) -> Option<Arc<str>> {
        let Reference::Local(Some(path)) = self.index.classify(from, requested) else {
            return None;
        };
        if let Some(cached) = self.asset_cache.get(&path) {
            let (url, read) = cached.clone()?;
            if let Some(position) = read {
                self.index.note_read(position);
            }
            return Some(url);
        }
        let resolved = self.index.position(&path).and_then(|position| {
            let file = &self.index.files()[position as usize];
            match (&file.content, &self.options.target) {
                (FileContent::Asset { .. }, PreviewTarget::Preview { asset_base, .. }) => {
                    let mut url = asset_base.clone();
                    push_encoded_path(&mut url, &file.path);
                    Some((Arc::from(url), None))
                }
                (FileContent::Asset { bytes, mime_type }, PreviewTarget::Export) => {
                    let url = self.memo.data_url(&file.path, mime_type, bytes, || {
                        format!("data:{mime_type};base64,{}", BASE64.encode(bytes))
                    });
                    Some((url, Some(position)))
                }
                (FileContent::Text { .. }, _) => None,
            }
        });
        if let Some((_, Some(position))) = &resolved {
            self.index.note_read(*position);
        }
        self.asset_cache.insert(path, resolved.clone());
        resolved.map(|(url, _)| url)
    }

    /// When lol_html cannot process the entry (it never fails on malformed HTML in non-strict
    /// mode, so this is a guard), the card explains it instead of leaking the raw document.
    fn unreadable_entry(&mut self, entry_path: &str, reason: &str) -> String {
        self.sink.other(
            diagnostics::DiagnosticKind::OutputLimit,
            entry_path,
            entry_path,
            None,
            format!("The HTML entry could not be compiled: {reason}"),
        );
        card_document(
            "Preview unavailable",
            "The HTML entry could not be compiled",
            "Check the diagnostics, fix the HTML entry, then refresh the preview.",
            self.options,
        )
    }
}

fn entry_required_document(options: &PreviewOptions) -> String {
    card_document(
        "HTML entry required",
        "Add an HTML entry file",
        "The workspace has no HTML file to render. Add <code>index.html</code> or another <code>.html</code> file, then refresh the preview.",
        options,
    )
}

/// A self-contained card document (no scripts besides the bridge).
fn card_document(title: &str, heading: &str, body: &str, options: &PreviewOptions) -> String {
    let bridge = match &options.target {
        PreviewTarget::Preview {
            revision: Some(revision),
            ..
        } => bridge::bridge_script(*revision),
        _ => String::new(),
    };
    format!(
        "<!doctype html>\n<html lang=\"en\">\n  <head>{bridge}\n    <meta charset=\"UTF-8\" />\n    \
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1.0\" />\n    <title>{title}</title>\n    <style>\n      \
:root {{ color-scheme: dark; font-family: ui-sans-serif, system-ui, sans-serif; }}\n      \
body {{ display: grid; min-height: 100vh; margin: 0; place-items: center; background: #0d1016; color: #e7e9ef; }}\n      \
main {{ max-width: 420px; padding: 28px; border: 1px solid #3b315f; border-radius: 16px; background: #171326; }}\n      \
span {{ color: #b9a9ff; font: 700 11px/1.2 ui-monospace, monospace; letter-spacing: .12em; text-transform: uppercase; }}\n      \
h1 {{ margin: 12px 0 8px; font-size: 22px; }}\n      p {{ margin: 0; color: #a4aabd; font-size: 13px; line-height: 1.6; }}\n    \
</style>\n  </head>\n  <body>\n    <main>\n      <span>Preview waiting</span>\n      <h1>{heading}</h1>\n      <p>{body}</p>\n    </main>\n  </body>\n</html>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use diagnostics::POSITIONS_COMPUTED;

    /// Compiles on this thread and counts the positions computed meanwhile.
    fn compile_counting_positions(
        files: &[WorkspaceFile],
        options: &PreviewOptions,
    ) -> (CompiledPreview, usize) {
        POSITIONS_COMPUTED.with(|count| count.set(0));
        let compiled = compile_workspace(files, options, &mut ScanMemo::default(), None);
        (compiled, POSITIONS_COMPUTED.with(std::cell::Cell::get))
    }

    /// Each position scans the text before it, so computing one per reference is quadratic in
    /// the references of a file; only diagnostics that are kept need one.
    #[test]
    fn positions_are_computed_only_for_kept_diagnostics() {
        let references = 500;
        let html = format!(
            "<link rel=stylesheet href=s.css><script type=module src=m.js></script>{}<img src=gone.gif>",
            "<img src=a.gif>".repeat(references)
        );
        let css = format!(
            "{}b{{background:url(gone.gif)}}",
            "a{background:url(a.gif)}".repeat(references)
        );
        // Bare specifiers: one deduplicated diagnostic for all of them.
        let module = format!(
            "{}import './gone.js';",
            "import 'react';".repeat(references)
        );
        let files = [
            WorkspaceFile::text("index.html", html),
            WorkspaceFile::text("s.css", css),
            WorkspaceFile::text("m.js", module),
            WorkspaceFile::asset("a.gif", b"GIF89a".to_vec()),
        ];
        for options in [PreviewOptions::export(), PreviewOptions::preview(None, "")] {
            let (compiled, computed) = compile_counting_positions(&files, &options);
            let located = compiled
                .diagnostics
                .iter()
                .filter(|diagnostic| diagnostic.line.is_some())
                .count();
            assert_eq!(located, 4, "{:?}", compiled.diagnostics);
            assert_eq!(computed, located);
        }
    }
}
