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
mod compile;
mod css;
mod diagnostics;
mod helpers;
mod html;
mod import_map;
mod live;
mod modules;
mod packages;
mod protocol;
mod resolve;
mod resources;
mod runtime_errors;
mod selection;
mod transform;

use std::sync::Arc;

use serde::Serialize;

pub use bridge::{PreviewBridgeMessage, parse_bridge_message};
pub use compile::{IncrementalPreviewCompiler, compile_preview};
pub use css::{MAX_CSS_SCAN_DEPTH, MAX_INLINE_CSS_IMPORTS};
pub use diagnostics::{
    DiagnosticKind, MAX_PREVIEW_DIAGNOSTICS, PreviewDiagnostic, ReferenceLabel, Severity,
};
pub use import_map::{IMPORT_MAP_FILE, MAX_IMPORT_MAP_ENTRIES};
pub use live::only_stylesheets_changed;
pub use modules::{MAX_MODULE_IMPORT_EDGES, MAX_MODULE_NESTING_DEPTH};
pub use packages::{
    FolderPackageFiles, MAX_PACKAGE_FILE_BYTES, MAX_PACKAGE_MODULES, NODE_MODULES, PackageFiles,
    Packages,
};
pub use protocol::{
    DESIGN_MODE_MESSAGE, MAX_BRIDGE_ERROR_MESSAGE_CHARS, MAX_BRIDGE_REVISION,
    PREVIEW_DESIGN_EXIT_MESSAGE, PREVIEW_ERROR_MESSAGE, PREVIEW_ESCAPE_MESSAGE,
    PREVIEW_READY_MESSAGE, PREVIEW_RUNTIME_ERROR_MESSAGE, PREVIEW_SELECTION_MESSAGE,
    PREVIEW_STYLESHEETS_MESSAGE,
};
pub use resolve::{
    PROBED_MODULE_EXTENSIONS, WORKSPACE_MODULE_SPECIFIER_PREFIX, resolve_local_path,
    workspace_module_specifier,
};
pub use runtime_errors::{
    MAX_RUNTIME_ERROR_PATH_CHARS, MAX_RUNTIME_ERRORS_PER_DOCUMENT, MAX_RUNTIME_ERRORS_PER_SECOND,
    PreviewRuntimeError, RuntimeErrorKind, RuntimeErrorSource, parse_runtime_error_message,
};
pub use selection::{
    MAX_SELECTION_CLASS_CHARS, MAX_SELECTION_CLASSES, MAX_SELECTION_COORDINATE,
    MAX_SELECTION_DEVICE_PIXEL_RATIO, MAX_SELECTION_HTML_CHARS, MAX_SELECTION_ID_CHARS,
    MAX_SELECTION_MESSAGE_BYTES, MAX_SELECTION_SELECTOR_CHARS, MAX_SELECTION_STYLE_VALUE_CHARS,
    MAX_SELECTION_TAG_CHARS, MAX_SELECTION_TEXT_CHARS, PREVIEW_SELECTION_INVALID, PreviewSelection,
    SELECTION_STYLE_PROPERTIES, ScreenState, SelectionBox, SelectionError, SelectionSource,
    parse_selection_message,
};
pub use transform::{JsxRuntime, PreviewJsx, TRANSFORMED_MODULE_EXTENSIONS};

use crate::file::{Language, WorkspaceFile};
use resolve::WorkspaceIndex;

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
    /// Installed packages bare imports resolve from (default none: a bare import no import
    /// map provides is then an `unsupported-module-reference` warning, as in the reference).
    /// With packages, an import they do not provide is an error naming its fix.
    pub packages: Option<Packages>,
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
            packages: None,
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

    /// Resolves bare imports from `packages` (the workspace's `node_modules`).
    #[must_use]
    pub fn with_packages(mut self, packages: Packages) -> Self {
        self.packages = Some(packages);
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
