//! The preview document compiler and standalone HTML export.
//!
//! [`compile_preview`] turns a workspace snapshot into one HTML document:
//!
//! - the entry is `index.html`, else the first HTML file in snapshot order; without one the
//!   result is a card that asks for an HTML entry (and `entry_required` is set);
//! - local `<link rel="stylesheet">` become `<style>` with their `@import` chains inlined
//!   (cycles, and more than [`MAX_INLINE_CSS_IMPORTS`] per stylesheet, cut off with comments);
//! - classic `<script src>` are inlined; module scripts load through one import map of Blob URLs
//!   keyed by stable workspace specifiers, so native module semantics hold (cycles, dynamic
//!   `import()`, execution order); at most [`MAX_MODULE_IMPORT_EDGES`] local import edges are
//!   followed;
//! - external stylesheets, scripts and module imports are removed or replaced by modules that
//!   throw, and a Content-Security-Policy blocks the network;
//! - assets become URLs the host serves ([`PreviewTarget::Preview`]) or `data:` URLs
//!   ([`PreviewTarget::Export`], a single file that runs from `file://`);
//! - in preview mode a bridge script posts `ready`/`error` with the revision to the parent.
//!
//! Every problem is a [`PreviewDiagnostic`]; the list is deduplicated and bounded by
//! [`MAX_PREVIEW_DIAGNOSTICS`]. Parsing uses `lol_html`, `cssparser` and `oxc`, so text inside
//! strings, comments, regular expressions and template text is never taken for a reference.
//!
//! ```
//! use live_code_editor::WorkspaceFile;
//! use live_code_editor::preview::{compile_preview, PreviewOptions};
//!
//! let files = vec![
//!     WorkspaceFile::text("index.html", r#"<head><link rel="stylesheet" href="styles.css"></head><h1>Hi</h1>"#),
//!     WorkspaceFile::text("styles.css", "h1 { color: teal }"),
//! ];
//! let compiled = compile_preview(&files, &PreviewOptions::export());
//! assert!(compiled.html.contains(r#"<style data-workspace-source="styles.css">h1 { color: teal }</style>"#));
//! assert!(compiled.diagnostics.is_empty());
//! ```

mod bridge;
mod css;
mod diagnostics;
mod helpers;
mod html;
mod import_map;
mod incremental;
mod live;
mod memo;
mod modules;
mod pieces;
mod resolve;
mod runtime_errors;
mod selection;
mod transform;

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Serialize;

pub use bridge::{
    MAX_BRIDGE_ERROR_MESSAGE_CHARS, MAX_BRIDGE_REVISION, PREVIEW_ERROR_MESSAGE,
    PREVIEW_ESCAPE_MESSAGE, PREVIEW_READY_MESSAGE, PreviewBridgeMessage, parse_bridge_message,
};
pub use css::{MAX_CSS_SCAN_DEPTH, MAX_INLINE_CSS_IMPORTS};
pub use diagnostics::{
    DiagnosticKind, MAX_PREVIEW_DIAGNOSTICS, PreviewDiagnostic, ReferenceLabel, Severity,
};
pub use import_map::{IMPORT_MAP_FILE, MAX_IMPORT_MAP_ENTRIES};
pub use incremental::IncrementalPreviewCompiler;
pub use live::{PREVIEW_STYLESHEETS_MESSAGE, only_stylesheets_changed};
pub use modules::{MAX_MODULE_IMPORT_EDGES, MAX_MODULE_NESTING_DEPTH};
pub use resolve::{
    PROBED_MODULE_EXTENSIONS, WORKSPACE_MODULE_SPECIFIER_PREFIX, resolve_local_path,
    workspace_module_specifier,
};
pub use runtime_errors::{
    MAX_RUNTIME_ERROR_PATH_CHARS, MAX_RUNTIME_ERRORS_PER_DOCUMENT, MAX_RUNTIME_ERRORS_PER_SECOND,
    PREVIEW_RUNTIME_ERROR_MESSAGE, PreviewRuntimeError, RuntimeErrorKind, RuntimeErrorSource,
    parse_runtime_error_message,
};
pub use selection::{
    DESIGN_MODE_MESSAGE, MAX_SELECTION_CLASS_CHARS, MAX_SELECTION_CLASSES,
    MAX_SELECTION_COORDINATE, MAX_SELECTION_DEVICE_PIXEL_RATIO, MAX_SELECTION_HTML_CHARS,
    MAX_SELECTION_ID_CHARS, MAX_SELECTION_MESSAGE_BYTES, MAX_SELECTION_SELECTOR_CHARS,
    MAX_SELECTION_STYLE_VALUE_CHARS, MAX_SELECTION_TAG_CHARS, MAX_SELECTION_TEXT_CHARS,
    PREVIEW_DESIGN_EXIT_MESSAGE, PREVIEW_SELECTION_INVALID, PREVIEW_SELECTION_MESSAGE,
    PreviewSelection, SELECTION_STYLE_PROPERTIES, ScreenState, SelectionBox, SelectionError,
    SelectionSource, parse_selection_message,
};
pub use transform::{JsxRuntime, PreviewJsx, TRANSFORMED_MODULE_EXTENSIONS};

use crate::file::{FileContent, Language, WorkspaceFile};
use css::CssRoot;
use diagnostics::{DiagnosticSink, Location};
use html::{
    CachedTemplate, HtmlPlan, HtmlScan, ScriptAction, StyleElement, Template, escape_attribute,
    escape_raw_text,
};
use memo::{HtmlScanResult, ScanMemo};
use modules::{ModuleSource, RenderedGraph};
use pieces::{InlinedLink, PieceCache, Reuse};
use resolve::{Reference, WorkspaceIndex, push_encoded_path};

/// The error code a host reports when a workspace has no HTML entry to preview.
pub const WORKSPACE_PREVIEW_ENTRY_REQUIRED: &str = "WORKSPACE_PREVIEW_ENTRY_REQUIRED";

/// Default bound on the bytes the compiler inlines (stylesheets, scripts, modules, asset URLs)
/// beyond the entry HTML itself. Diamond imports and repeated references multiply content, so
/// hostile input could otherwise grow the output without limit.
pub const DEFAULT_MAX_PREVIEW_OUTPUT_BYTES: usize = 64 * 1024 * 1024;

/// Where the compiled document runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreviewTarget {
    /// A sandboxed iframe served by the host for one workspace revision.
    Preview {
        /// Revision the bridge reports; `None` leaves the bridge out.
        revision: Option<u64>,
        /// Prefix the host serves assets under: an asset `img/a b.png` becomes
        /// `<asset_base>img/a%20b.png`. Relative (`/preview/7/assets/`) or absolute.
        asset_base: String,
    },
    /// A standalone file: assets as `data:` URLs, no bridge; runs from `file://` offline.
    Export,
}

/// Options of [`compile_preview`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PreviewOptions {
    /// Preview or export.
    pub target: PreviewTarget,
    /// Whether to add the Content-Security-Policy `<meta>` (default `true`).
    pub content_security_policy: bool,
    /// Bound on inlined bytes (see [`DEFAULT_MAX_PREVIEW_OUTPUT_BYTES`]).
    pub max_output_bytes: usize,
    /// How `.jsx` and `.tsx` modules compile JSX (default: the automatic runtime from `react`).
    pub jsx: PreviewJsx,
    /// Local import edges followed across the module graph (default
    /// [`MAX_MODULE_IMPORT_EDGES`], the reference's limit). Every resolved import counts, so a
    /// TypeScript/JSX app of more than a dozen components needs more.
    pub max_module_import_edges: usize,
}

impl PreviewOptions {
    /// Preview mode for `revision`, serving assets under `asset_base`.
    pub fn preview(revision: Option<u64>, asset_base: impl Into<String>) -> Self {
        Self::with_target(PreviewTarget::Preview {
            revision,
            asset_base: asset_base.into(),
        })
    }

    /// Standalone export mode.
    pub fn export() -> Self {
        Self::with_target(PreviewTarget::Export)
    }

    fn with_target(target: PreviewTarget) -> Self {
        Self {
            target,
            content_security_policy: true,
            max_output_bytes: DEFAULT_MAX_PREVIEW_OUTPUT_BYTES,
            jsx: PreviewJsx::default(),
            max_module_import_edges: MAX_MODULE_IMPORT_EDGES,
        }
    }

    /// Sets how many local import edges the module graph follows.
    #[must_use]
    pub fn with_max_module_import_edges(mut self, max_module_import_edges: usize) -> Self {
        self.max_module_import_edges = max_module_import_edges;
        self
    }

    /// Sets how JSX compiles where a file's pragmas do not say.
    #[must_use]
    pub fn with_jsx(mut self, jsx: PreviewJsx) -> Self {
        self.jsx = jsx;
        self
    }

    /// Adds (or leaves out) the Content-Security-Policy `<meta>`.
    #[must_use]
    pub fn with_content_security_policy(mut self, content_security_policy: bool) -> Self {
        self.content_security_policy = content_security_policy;
        self
    }

    /// Sets the bound on inlined bytes.
    #[must_use]
    pub fn with_max_output_bytes(mut self, max_output_bytes: usize) -> Self {
        self.max_output_bytes = max_output_bytes;
        self
    }
}

/// A compiled document and what the compiler noticed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompiledPreview {
    /// The document.
    pub html: String,
    /// The entry's path, or `None` when the workspace has no HTML file.
    pub entry: Option<String>,
    /// `true` when there was no HTML entry and `html` is the "add an HTML entry" card
    /// (hosts report [`WORKSPACE_PREVIEW_ENTRY_REQUIRED`]).
    pub entry_required: bool,
    /// Diagnostics in reference order: stylesheets, scripts, module graph, HTML assets, CSS.
    pub diagnostics: Vec<PreviewDiagnostic>,
    /// Diagnostics left out past [`MAX_PREVIEW_DIAGNOSTICS`].
    pub omitted_diagnostics: usize,
    /// Workspace module files registered in the import map.
    pub module_count: usize,
    /// The text of each stylesheet inlined from a `<link>` (each `<style
    /// data-workspace-source>`, in document order) exactly as the document holds it, which a
    /// running preview of an earlier revision swaps in (see [`only_stylesheets_changed`]).
    /// `None` when only a reload can bring the revision's styles: an inline `<style>` imports a
    /// workspace stylesheet, the output limit left content out, or there is no HTML entry.
    #[serde(skip)]
    pub stylesheets: Option<Vec<Arc<str>>>,
}

impl CompiledPreview {
    /// Whether the document is missing an entry or any error-severity diagnostic.
    pub fn has_errors(&self) -> bool {
        self.entry_required
            || self
                .diagnostics
                .iter()
                .any(|diagnostic| diagnostic.severity == Severity::Error)
    }

    /// Whether the output limit left content out: the document is incomplete. The first
    /// [`DiagnosticKind::OutputLimit`] diagnostic is kept however full the list is.
    pub fn output_limited(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|diagnostic| diagnostic.kind == DiagnosticKind::OutputLimit)
    }
}

/// Stack the JavaScript parser runs on: it recurses once per nesting level, and statement
/// chains (`else if`, labels) are not bracket-bounded, so each module parse switches to a
/// generous stack of its own (reserved, touched only as deep as the parse goes) instead of the
/// caller's (2 MiB on Tokio workers and test threads). The rest of a compile recurses at most
/// [`MAX_INLINE_CSS_IMPORTS`] and [`MAX_CSS_SCAN_DEPTH`] levels.
pub const PARSER_STACK_BYTES: usize = 256 * 1024 * 1024;

/// Compiles a workspace snapshot into one document. Pure: same input, same output. Runs on the
/// caller's thread; module parses run on a [`PARSER_STACK_BYTES`] stack.
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

/// The standalone export of a workspace: [`compile_preview`] with [`PreviewOptions::export`].
pub fn export_standalone_html(files: &[WorkspaceFile]) -> CompiledPreview {
    compile_preview(files, &PreviewOptions::export())
}

/// The diagnostics [`compile_preview`] reports, without keeping the document.
pub fn collect_preview_diagnostics(files: &[WorkspaceFile]) -> Vec<PreviewDiagnostic> {
    compile_preview(files, &PreviewOptions::preview(None, "")).diagnostics
}

/// The file a preview renders: `index.html`, else the first HTML file in snapshot order.
pub fn find_preview_html_file(files: &[WorkspaceFile]) -> Option<&WorkspaceFile> {
    WorkspaceIndex::new(files).entry()
}

/// The stylesheet visual tools edit: `styles.css`, else the first CSS file.
pub fn find_preview_stylesheet_file(files: &[WorkspaceFile]) -> Option<&WorkspaceFile> {
    files
        .iter()
        .find(|file| file.path == "styles.css" && file.language == Language::Css)
        .or_else(|| files.iter().find(|file| file.language == Language::Css))
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
        }
    }

    /// Compiles the entry; diagnostics are emitted in the reference order.
    fn compile_entry(
        &mut self,
        entry_path: &'a str,
        source: &'a str,
        scan_result: &Arc<HtmlScanResult>,
        scan: &HtmlScan,
    ) -> (String, usize) {
        let links = self.plan_stylesheet_links(entry_path, source, scan);
        let (scripts, roots) = self.plan_scripts(entry_path, source, scan);
        self.declare_workspace_import_map();
        let graph = self.rendered_module_graph(roots);
        for asset in &scan.assets {
            let location = Some(Location::new(source, asset.offset));
            self.report_reference(
                ReferenceLabel::Asset,
                entry_path,
                &asset.value,
                location,
                true,
            );
        }
        let styles = self.plan_inline_styles(entry_path, source, scan);
        self.report_css_references(css_roots(&self.index, entry_path, source, scan));
        let module_count = graph.module_count;
        let plan = self.finish_plan(links, scripts, styles, &graph, scan, entry_path);
        match self.rewrite_entry(entry_path, source, scan_result, scan, &plan) {
            Ok(document) => (document, module_count),
            Err(error) => {
                self.live_stylesheets = None;
                (self.unreadable_entry(entry_path, &error.to_string()), 0)
            }
        }
    }

    /// Phase 1: each stylesheet link becomes an inlined `<style>` or is removed.
    fn plan_stylesheet_links(
        &mut self,
        entry_path: &'a str,
        source: &str,
        scan: &HtmlScan,
    ) -> Vec<Option<StyleElement>> {
        let mut links = Vec::with_capacity(scan.links.len());
        let mut stylesheets = Vec::with_capacity(scan.links.len());
        for link in &scan.links {
            let location = Some(Location::new(source, link.href.offset));
            self.report_reference(
                ReferenceLabel::Stylesheet,
                entry_path,
                &link.href.value,
                location,
                false,
            );
            let Some((path, css)) =
                self.index
                    .find_text(entry_path, &link.href.value, Language::Css)
            else {
                links.push(None);
                continue;
            };
            let inlined = self.inlined_link(entry_path, path, css, link.media.as_deref());
            links.push(Some(inlined.element));
            stylesheets.push(inlined.text);
        }
        self.live_stylesheets = Some(stylesheets);
        links
    }

    /// The `<style>` element a link to the stylesheet `path` becomes, as a piece.
    fn inlined_link(
        &mut self,
        entry_path: &str,
        path: &'a str,
        css: &'a str,
        media: Option<&str>,
    ) -> InlinedLink {
        let key = (path.to_owned(), media.map(str::to_owned));
        self.through_cache(
            |pieces| (&mut pieces.changes, &mut pieces.links),
            key,
            |compiler| {
                compiler.index.note_read_of(path);
                let inlined = compiler.inline_stylesheet(path, path, css);
                let text: Arc<str> = Arc::from(escape_raw_text(&inlined, "style").as_ref());
                let media = media
                    .map(|media| format!(" media=\"{}\"", escape_attribute(media)))
                    .unwrap_or_default();
                let element = StyleElement {
                    start: format!(
                        "<style data-workspace-source=\"{}\"{media}>",
                        escape_attribute(path)
                    )
                    .into(),
                    text: text.clone(),
                };
                let element = if compiler.take_or_report(element.len(), entry_path, path) {
                    element
                } else {
                    StyleElement {
                        start: "<style>".into(),
                        text: "".into(),
                    }
                };
                InlinedLink { element, text }
            },
        )
    }

    /// Whether the document runs as a preview (bridge, inline source maps), not an export.
    fn runs_in_preview(&self) -> bool {
        matches!(self.options.target, PreviewTarget::Preview { .. })
    }

    /// Reads an inline `<script type="importmap">` of the entry (`src` maps are not fetched
    /// by browsers either), reporting one it cannot use.
    fn declare_import_map(&mut self, entry_path: &str, source: &str, script: &html::ScriptTag) {
        let location = Location::new(source, script.text_offset.unwrap_or_default());
        let declared = match &script.src {
            Some(_) => Err("an import map with src is not loaded; write it inline".to_owned()),
            None => self.import_map.declare(entry_path, &script.text),
        };
        self.report_unusable_import_map(entry_path, location, declared);
    }

    /// Reads the workspace's [`IMPORT_MAP_FILE`] after the entry's own maps.
    fn declare_workspace_import_map(&mut self) {
        let Some((path, json)) = self.index.text_of(IMPORT_MAP_FILE, Language::Json) else {
            return;
        };
        let declared = self.import_map.declare(path, json);
        self.report_unusable_import_map(path, Location::new(json, 0), declared);
    }

    fn report_unusable_import_map(
        &mut self,
        path: &str,
        location: Location<'_>,
        declared: Result<(), String>,
    ) {
        if let Err(reason) = declared {
            self.sink.other(
                DiagnosticKind::ModuleSyntaxError,
                path,
                path,
                Some(location),
                format!("Import map could not be used: {reason}"),
            );
        }
    }

    /// Phase 2: classic scripts are inlined, module scripts queued as graph roots.
    fn plan_scripts(
        &mut self,
        entry_path: &'a str,
        source: &'a str,
        scan: &HtmlScan,
    ) -> (Vec<ScriptAction>, Vec<ModuleSource<'a>>) {
        let mut actions = Vec::with_capacity(scan.scripts.len());
        let mut roots = Vec::new();
        for (index, script) in scan.scripts.iter().enumerate() {
            if script.import_map {
                self.declare_import_map(entry_path, source, script);
                actions.push(ScriptAction::Remove);
                continue;
            }
            let Some(src) = &script.src else {
                if script.module {
                    let base = script.text_offset.unwrap_or_default();
                    let text = source
                        .get(base..base + script.text.len())
                        .unwrap_or_default();
                    roots.push(ModuleSource {
                        path: entry_path,
                        source: text,
                        position_source: source,
                        position_base: base,
                        inline_index: Some(index),
                    });
                }
                actions.push(ScriptAction::Keep);
                continue;
            };
            let location = Some(Location::new(source, src.offset));
            self.report_reference(
                ReferenceLabel::Script,
                entry_path,
                &src.value,
                location,
                false,
            );
            let found = if script.module {
                self.index.find_script(entry_path, &src.value)
            } else {
                self.index
                    .find_text(entry_path, &src.value, Language::Javascript)
            };
            let Some((path, javascript)) = found else {
                actions.push(ScriptAction::Remove);
                continue;
            };
            if script.module {
                roots.push(ModuleSource::file(path, javascript));
                let statement = format!(
                    "import {};",
                    resolve::json_string(&workspace_module_specifier(path))
                );
                let statement = self.within_budget(statement, entry_path, path, String::new());
                actions.push(ScriptAction::Inline(statement.into()));
            } else {
                let inlined = self.escaped_script(entry_path, path, javascript);
                actions.push(ScriptAction::Inline(inlined));
            }
        }
        (actions, roots)
    }

    /// The inlined text of the classic script `path`, as a piece.
    fn escaped_script(&mut self, entry_path: &str, path: &'a str, javascript: &str) -> Arc<str> {
        self.through_cache(
            |pieces| (&mut pieces.changes, &mut pieces.scripts),
            path.to_owned(),
            |compiler| {
                compiler.index.note_read_of(path);
                let escaped = escape_raw_text(javascript, "script");
                if compiler.take_or_report(escaped.len(), entry_path, path) {
                    Arc::from(escaped.as_ref())
                } else {
                    Arc::from("")
                }
            },
        )
    }

    /// Inline `<style>` elements get the same `@import` and `url()` treatment as files.
    fn plan_inline_styles(
        &mut self,
        entry_path: &'a str,
        source: &'a str,
        scan: &HtmlScan,
    ) -> Vec<Option<String>> {
        let mut styles = Vec::with_capacity(scan.styles.len());
        for (index, style) in scan.styles.iter().enumerate() {
            let base = style.text_offset.unwrap_or_default();
            let text = source
                .get(base..base + style.text.len())
                .unwrap_or_default();
            let key = inline_style_key(entry_path, index);
            let inlined = self.inline_stylesheet(entry_path, &key, text);
            if self.imports_stylesheet(&key, text) {
                // Its text depends on workspace stylesheets, and only a reload replaces it.
                self.live_stylesheets = None;
            }
            if inlined == text {
                styles.push(None);
            } else {
                let escaped = escape_raw_text(&inlined, "style").into_owned();
                styles.push(Some(self.within_budget(
                    escaped,
                    entry_path,
                    entry_path,
                    String::new(),
                )));
            }
        }
        styles
    }

    /// Assembles the plan: rewritten inline modules, the bootstrap and the head injection.
    fn finish_plan(
        &mut self,
        links: Vec<Option<StyleElement>>,
        mut scripts: Vec<ScriptAction>,
        styles: Vec<Option<String>>,
        graph: &RenderedGraph,
        scan: &HtmlScan,
        entry_path: &str,
    ) -> HtmlPlan {
        for (index, source) in &graph.inline {
            let fallback = "throw new Error(\"Preview output limit reached\");".to_owned();
            let inlined = self.within_budget(
                escape_raw_text(source, "script").into_owned(),
                entry_path,
                entry_path,
                fallback,
            );
            scripts[*index] = ScriptAction::Inline(inlined.into());
        }
        let first_module = scan
            .scripts
            .iter()
            .zip(&scripts)
            .position(|(script, action)| script.module && *action != ScriptAction::Remove);
        let bootstrap = first_module.zip(graph.bootstrap.clone());
        let mut head = String::from("<meta charset=\"utf-8\">");
        if self.options.content_security_policy {
            head.push_str(&format!(
                "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
                escape_attribute(&self.content_security_policy())
            ));
        }
        if let PreviewTarget::Preview {
            revision: Some(revision),
            ..
        } = &self.options.target
        {
            head.push_str(&bridge::bridge_script(*revision));
        }
        HtmlPlan {
            links,
            scripts,
            styles,
            bootstrap,
            head,
        }
    }

    /// Phase 6: the entry rewritten for the plan. An incremental compiler fills the template
    /// it kept when the entry scan and plan shape are the same and every asset URL the
    /// template wrote is asked again (taking its budget, in order) and answered the same.
    fn rewrite_entry(
        &mut self,
        entry_path: &str,
        source: &str,
        scan_result: &Arc<HtmlScanResult>,
        scan: &HtmlScan,
        plan: &HtmlPlan,
    ) -> Result<String, lol_html::errors::RewritingError> {
        let shape = plan.shape();
        let kept = self
            .pieces
            .as_deref_mut()
            .and_then(|pieces| pieces.template.take())
            .filter(|kept| Arc::ptr_eq(&kept.scan, scan_result) && kept.shape == shape);
        let mut answered = Vec::new();
        let template = match kept {
            Some(kept) if self.ask_again(entry_path, &kept.template, &mut answered) => {
                kept.template
            }
            _ => {
                let mut answered = answered.into_iter();
                html::rewrite_template(source, scan, &shape, &mut |value| {
                    answered
                        .next()
                        .unwrap_or_else(|| self.asset_url_for(entry_path, value))
                })?
            }
        };
        let document = template.fill(plan);
        if let Some(pieces) = self.pieces.as_deref_mut() {
            pieces.template = Some(CachedTemplate {
                scan: scan_result.clone(),
                shape,
                template,
            });
        }
        Ok(document)
    }

    /// Asks for each asset URL `template` wrote, in order, until an answer differs; `true`
    /// when none did. `answered` gets every answer (each took its budget).
    fn ask_again(
        &mut self,
        entry_path: &str,
        template: &Template,
        answered: &mut Vec<Option<Arc<str>>>,
    ) -> bool {
        for (requested, answer) in &template.asset_calls {
            let fresh = self.asset_url_for(entry_path, requested);
            let same = fresh == *answer;
            answered.push(fresh);
            if !same {
                return false;
            }
        }
        true
    }

    /// The policy: no network; inline and Blob/data scripts and styles; assets from the host
    /// (preview) or `data:` (export).
    fn content_security_policy(&self) -> String {
        let assets = match &self.options.target {
            PreviewTarget::Preview { asset_base, .. } => asset_source(asset_base),
            PreviewTarget::Export => String::new(),
        };
        format!(
            "default-src 'none'; script-src 'unsafe-inline' blob: data:; style-src 'unsafe-inline' blob: data:{assets}; \
img-src blob: data:{assets}; font-src blob: data:{assets}; media-src blob: data:{assets}; object-src data:{assets}; \
worker-src blob:; base-uri 'none'; form-action 'none'"
        )
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

fn inline_style_key(entry_path: &str, index: usize) -> String {
    format!("{entry_path}\u{0}style\u{0}{index}")
}

/// Phase 5 roots: link stylesheets and inline `<style>` elements in document order.
fn css_roots<'a>(
    index: &WorkspaceIndex<'a>,
    entry_path: &'a str,
    source: &'a str,
    scan: &HtmlScan,
) -> Vec<CssRoot<'a>> {
    let mut roots: Vec<CssRoot<'a>> = Vec::new();
    for link in &scan.links {
        if let Some((path, css)) = index.find_text(entry_path, &link.href.value, Language::Css)
            && !roots.iter().any(|root| root.key == path)
        {
            roots.push(CssRoot::file(path, css));
        }
    }
    for (position, style) in scan.styles.iter().enumerate() {
        let base = style.text_offset.unwrap_or_default();
        let text = source
            .get(base..base + style.text.len())
            .unwrap_or_default();
        roots.push(CssRoot {
            path: entry_path,
            key: inline_style_key(entry_path, position),
            source: text,
            position_source: source,
            position_base: base,
        });
    }
    roots
}

/// CSP source for host-served assets: the origin of an absolute base, else `'self'`.
fn asset_source(asset_base: &str) -> String {
    let Some((scheme, rest)) = asset_base.split_once("://") else {
        return " 'self'".to_owned();
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let valid = !scheme.is_empty()
        && scheme
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || "+.-".contains(character))
        && !authority.is_empty()
        && authority
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || "-.:[]".contains(character));
    if valid {
        format!(" {scheme}://{authority}")
    } else {
        " 'self'".to_owned()
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
