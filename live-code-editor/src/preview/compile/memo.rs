//! What the compiler derives from one file's content alone (stylesheet references, module
//! requests, the HTML scan, an asset's `data:` URL), remembered per path.
//!
//! A one-shot compile remembers within the compile only (a path's content cannot change
//! there). An [`IncrementalPreviewCompiler`](super::IncrementalPreviewCompiler) keeps the
//! results across compiles: each entry is keyed by path and holds the content it was derived
//! from, and is reused only while the file's bytes are equal to it. A byte comparison is exact
//! (no digest collision can serve stale output) and cheaper than hashing the content. After each
//! compile, entries the compile did not use are dropped, so the memo never outgrows the
//! workspace it last compiled.

use std::collections::HashMap;
use std::sync::Arc;

use crate::file::{FileContent, WorkspaceFile};
use crate::preview::css::{CssReference, scan_css_references};
use crate::preview::html::{HtmlScan, scan_html};
use crate::preview::modules::{ModuleScan, scan_module};
use crate::preview::transform::{PreviewJsx, TransformedModule, transform_module};

/// The HTML scan of an entry, or why `lol_html` could not scan it.
pub(crate) type HtmlScanResult = Result<HtmlScan, String>;

/// Per-path results of the pure per-file passes.
#[derive(Debug, Default)]
pub(crate) struct ScanMemo {
    /// Whether entries keep their content and outlive the compile.
    across_compiles: bool,
    /// The compile in progress (entries used by it carry this stamp).
    generation: u64,
    css: MemoMap<Arc<Vec<CssReference>>>,
    modules: MemoMap<Arc<ModuleScan>>,
    transforms: MemoMap<Arc<TransformedModule>>,
    html: MemoMap<Arc<HtmlScanResult>>,
    data_urls: MemoMap<Arc<str>>,
    /// How many results were derived rather than reused (tests count them).
    derived: usize,
}

impl ScanMemo {
    /// A memo that keeps its entries across compiles.
    pub(crate) fn across_compiles() -> Self {
        Self {
            across_compiles: true,
            ..Self::default()
        }
    }

    /// Starts a compile: entries it does not use are dropped by [`Self::finish_compile`].
    pub(crate) fn start_compile(&mut self) {
        self.generation += 1;
    }

    /// Drops the entries the compile just finished did not use.
    pub(crate) fn finish_compile(&mut self) {
        let generation = self.generation;
        self.css.retain_used(generation);
        self.modules.retain_used(generation);
        self.transforms.retain_used(generation);
        self.html.retain_used(generation);
        self.data_urls.retain_used(generation);
    }

    /// The `@import` and `url()` references of the stylesheet `key` (a path or inline key).
    pub(crate) fn css_references(&mut self, key: &str, source: &str) -> Arc<Vec<CssReference>> {
        let (value, derived) = self.css.get_or_derive(
            key,
            source.as_bytes(),
            self.across_compiles,
            self.generation,
            || Arc::new(scan_css_references(source)),
        );
        self.derived += usize::from(derived);
        value
    }

    /// The module requests of the module `key` (a path or inline key).
    pub(crate) fn module_scan(&mut self, key: &str, source: &str) -> Arc<ModuleScan> {
        let (value, derived) = self.modules.get_or_derive(
            key,
            source.as_bytes(),
            self.across_compiles,
            self.generation,
            || Arc::new(scan_module(source)),
        );
        self.derived += usize::from(derived);
        value
    }

    /// The TypeScript/JSX module at `path` as JavaScript, compiled with `jsx` and, with
    /// `source_map`, an inline source map.
    pub(crate) fn module_transform(
        &mut self,
        path: &str,
        source: &str,
        jsx: &PreviewJsx,
        source_map: bool,
    ) -> Arc<TransformedModule> {
        // The options are part of the key: output compiled under others is never reused.
        let key = format!(
            "{path}\u{0}{:?}\u{0}{}\u{0}{}\u{0}{}\u{0}{source_map}",
            jsx.runtime, jsx.import_source, jsx.pragma, jsx.pragma_frag
        );
        let (value, derived) = self.transforms.get_or_derive(
            &key,
            source.as_bytes(),
            self.across_compiles,
            self.generation,
            || Arc::new(transform_module(path, source, jsx, source_map)),
        );
        self.derived += usize::from(derived);
        value
    }

    /// The scan of the HTML entry at `path`.
    pub(crate) fn html_scan(&mut self, path: &str, source: &str) -> Arc<HtmlScanResult> {
        let (value, derived) = self.html.get_or_derive(
            path,
            source.as_bytes(),
            self.across_compiles,
            self.generation,
            || Arc::new(scan_html(source).map_err(|error| error.to_string())),
        );
        self.derived += usize::from(derived);
        value
    }

    /// The `data:` URL of the asset at `path` with `bytes` of `mime_type`.
    pub(crate) fn data_url(
        &mut self,
        path: &str,
        mime_type: &str,
        bytes: &[u8],
        encode: impl FnOnce() -> String,
    ) -> Arc<str> {
        let key = data_url_key(path, mime_type);
        let (value, derived) = self.data_urls.get_or_derive(
            &key,
            bytes,
            self.across_compiles,
            self.generation,
            || Arc::from(encode()),
        );
        self.derived += usize::from(derived);
        value
    }

    /// Keeps what was derived from `file` for the next compile although this one reused a
    /// piece instead of asking for it.
    pub(crate) fn keep_alive(&mut self, file: &WorkspaceFile) {
        let generation = self.generation;
        self.css.keep_alive(&file.path, generation);
        self.modules.keep_alive(&file.path, generation);
        if let FileContent::Asset { mime_type, .. } = &file.content {
            self.data_urls
                .keep_alive(&data_url_key(&file.path, mime_type), generation);
        }
    }

    /// How many results were derived (not reused) so far.
    #[cfg(test)]
    pub(crate) fn derived(&self) -> usize {
        self.derived
    }
}

fn data_url_key(path: &str, mime_type: &str) -> String {
    format!("{mime_type}\u{0}{path}")
}

/// Results of one pass, by key.
#[derive(Debug)]
struct MemoMap<T> {
    entries: HashMap<String, MemoEntry<T>>,
}

impl<T> Default for MemoMap<T> {
    fn default() -> Self {
        Self {
            entries: HashMap::new(),
        }
    }
}

#[derive(Debug)]
struct MemoEntry<T> {
    /// The content the value was derived from (`None` within a one-shot compile).
    content: Option<Box<[u8]>>,
    /// The last compile that used the entry.
    used: u64,
    value: T,
}

impl<T: Clone> MemoMap<T> {
    /// The value for `key` derived from `content`, and whether it had to be derived now.
    fn get_or_derive(
        &mut self,
        key: &str,
        content: &[u8],
        keep_content: bool,
        generation: u64,
        derive: impl FnOnce() -> T,
    ) -> (T, bool) {
        if let Some(entry) = self.entries.get_mut(key)
            && entry
                .content
                .as_deref()
                .is_none_or(|derived_from| derived_from == content)
        {
            entry.used = generation;
            return (entry.value.clone(), false);
        }
        let value = derive();
        let entry = MemoEntry {
            content: keep_content.then(|| content.into()),
            used: generation,
            value: value.clone(),
        };
        self.entries.insert(key.to_owned(), entry);
        (value, true)
    }

    fn keep_alive(&mut self, key: &str, generation: u64) {
        if let Some(entry) = self.entries.get_mut(key) {
            entry.used = generation;
        }
    }

    fn retain_used(&mut self, generation: u64) {
        self.entries.retain(|_, entry| entry.used == generation);
    }
}
