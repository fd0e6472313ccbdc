//! What an incremental compile reuses from the compiles before it: rendered pieces of the
//! document (an inlined stylesheet, an escaped classic script, a rewritten module, the visit of
//! one stylesheet for diagnostics), each with the files it read, the diagnostics it reported and
//! the output budget it took.
//!
//! A piece is a function of the workspace layout (every file's path, language and kind, which
//! decides how each reference resolves), of the render target, and of the content of the files
//! it read. So a piece is reused only while the layout and target are those it was rendered
//! under and each file it read holds the same bytes (compared, never hashed: no collision can
//! serve stale output). Reuse replays the piece's diagnostics through the sink, which dedups and
//! bounds them exactly as a fresh render would, and takes its budget in one step. A piece that
//! ran out of budget is never kept, and one is reused only while the budget left covers all it
//! took, so every take it made succeeds again and the output-limit cuts fall where a full
//! compile puts them.
//!
//! After each compile the pieces it did not use are dropped, with the file contents only they
//! read, so the cache never outgrows the workspace it last compiled.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use super::Compiler;
use super::memo::HtmlScanResult;
use crate::file::{FileContent, Language, WorkspaceFile};
use crate::preview::diagnostics::RecordedCall;
use crate::preview::html::{PlanShape, StyleElement, Template};
use crate::preview::resolve::ReferenceCache;
use crate::preview::transform::PreviewJsx;
use crate::preview::{Packages, PreviewOptions, PreviewTarget};

/// A template an incremental compiler keeps, valid for the entry scan it was built from (the
/// memo hands out the same scan while the entry's bytes are unchanged) and the plan shape.
#[derive(Debug)]
pub(crate) struct CachedTemplate {
    pub(crate) scan: Arc<HtmlScanResult>,
    pub(crate) shape: PlanShape,
    pub(crate) template: Template,
}

/// One rendered piece and what it depended on.
#[derive(Debug)]
pub(crate) struct Piece<T> {
    /// Positions (in the compiled file list) of the files the render read.
    pub(crate) reads: Box<[u32]>,
    /// The diagnostics it reported, in order.
    pub(crate) calls: Box<[RecordedCall]>,
    /// Output budget it took (all takes succeeded).
    pub(crate) taken: usize,
    pub(crate) value: T,
    /// The last compile that used it.
    used: u64,
}

/// Pieces of one kind, by key.
#[derive(Debug)]
pub(crate) struct PieceMap<K, T> {
    entries: HashMap<K, Piece<T>>,
}

impl<K, T> Default for PieceMap<K, T> {
    fn default() -> Self {
        Self {
            entries: HashMap::new(),
        }
    }
}

impl<K: Eq + Hash, T> PieceMap<K, T> {
    /// The piece under `key`, if any (see [`FileChanges::is_current`] before using it).
    pub(crate) fn get_mut(&mut self, key: &K) -> Option<&mut Piece<T>> {
        self.entries.get_mut(key)
    }

    pub(crate) fn insert(&mut self, key: K, piece: Piece<T>) {
        self.entries.insert(key, piece);
    }

    fn retain_used(&mut self, generation: u64) {
        self.entries.retain(|_, piece| piece.used == generation);
    }

    fn clear(&mut self) {
        self.entries.clear();
    }

    fn reads(&self) -> impl Iterator<Item = u32> + '_ {
        self.entries
            .values()
            .flat_map(|piece| piece.reads.iter().copied())
    }
}

/// What decides how a file's references resolve: its path, language and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LayoutEntry {
    path: String,
    language: Language,
    /// The MIME type of an asset; `None` for a text file.
    asset: Option<String>,
}

impl LayoutEntry {
    fn of(file: &WorkspaceFile) -> Self {
        Self {
            path: file.path.clone(),
            language: file.language,
            asset: match &file.content {
                FileContent::Asset { mime_type, .. } => Some(mime_type.clone()),
                FileContent::Text { .. } => None,
            },
        }
    }

    fn matches(&self, file: &WorkspaceFile) -> bool {
        self.path == file.path
            && self.language == file.language
            && match (&self.asset, &file.content) {
                (Some(mime), FileContent::Asset { mime_type, .. }) => mime == mime_type,
                (None, FileContent::Text { .. }) => true,
                _ => false,
            }
    }
}

/// The part of the options pieces depend on: how asset URLs are written, how JSX compiles and
/// where the module graph stops.
/// The revision, the policy and the budget size only touch the head or the budget, which are
/// not in pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RenderTarget {
    urls: UrlTarget,
    jsx: PreviewJsx,
    /// Where the module graph stops following imports.
    max_module_import_edges: usize,
    /// Where bare imports resolve (a new [`Packages`] is new files).
    packages: Option<Packages>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum UrlTarget {
    Preview { asset_base: String },
    Export,
}

impl RenderTarget {
    fn of(options: &PreviewOptions) -> Self {
        let urls = match &options.target {
            PreviewTarget::Preview { asset_base, .. } => UrlTarget::Preview {
                asset_base: asset_base.clone(),
            },
            PreviewTarget::Export => UrlTarget::Export,
        };
        Self {
            urls,
            jsx: options.jsx.clone(),
            max_module_import_edges: options.max_module_import_edges,
            packages: options.packages.clone(),
        }
    }
}

/// A stylesheet `<link>` inlined: the `<style>` element (empty when the budget left the text
/// out) and the stylesheet's text as a running preview swaps it in.
#[derive(Debug, Clone)]
pub(crate) struct InlinedLink {
    pub(crate) element: StyleElement,
    pub(crate) text: Arc<str>,
}

/// A module of the graph: a workspace file, or the entry's n-th inline module script (whose
/// text starts at byte `base` of the entry).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum GraphRoot {
    File(String),
    Inline { index: usize, base: usize },
}

/// A module rendered after `edges` import edges were followed (the limit makes the rest of
/// a graph depend on how many came before).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ModuleKey {
    pub(crate) module: GraphRoot,
    pub(crate) edges: usize,
}

/// One module rewritten: its text (a JSON string for a file module), the workspace modules it
/// imports in order, and the edges followed after it.
#[derive(Debug, Clone)]
pub(crate) struct RenderedModule {
    pub(crate) text: Arc<str>,
    pub(crate) imports: Arc<[String]>,
    pub(crate) edges: usize,
}

/// Which files still hold the bytes the kept pieces read.
#[derive(Debug, Default)]
pub(crate) struct FileChanges {
    layout: Vec<LayoutEntry>,
    target: Option<RenderTarget>,
    /// Bytes of each file some kept piece read, by position, as of the last compile.
    contents: Vec<Option<Box<[u8]>>>,
    /// Per position: whether the file holds the bytes of the last compile (asked on demand).
    unchanged: Vec<Option<bool>>,
    generation: u64,
}

impl FileChanges {
    /// Starts a compile of `files`; `false` when the layout or target changed (then no kept
    /// piece is valid).
    fn start_compile(&mut self, files: &[WorkspaceFile], options: &PreviewOptions) -> bool {
        self.generation += 1;
        let target = RenderTarget::of(options);
        let same = self.layout.len() == files.len()
            && self
                .layout
                .iter()
                .zip(files)
                .all(|(entry, file)| entry.matches(file))
            && self.target.as_ref() == Some(&target);
        if !same {
            self.contents = vec![None; files.len()];
            self.layout = files.iter().map(LayoutEntry::of).collect();
            self.target = Some(target);
        }
        self.unchanged.clear();
        self.unchanged.resize(files.len(), None);
        same
    }

    /// Whether `piece` can stand for a fresh render: every file it read is unchanged and the
    /// `remaining` budget covers what it took.
    pub(crate) fn is_current<T>(
        &mut self,
        piece: &Piece<T>,
        files: &[WorkspaceFile],
        remaining: usize,
    ) -> bool {
        piece.taken <= remaining
            && piece
                .reads
                .iter()
                .all(|&position| self.file_unchanged(position as usize, files))
    }

    /// Whether the file at `position` holds the bytes some piece read in the last compile.
    fn file_unchanged(&mut self, position: usize, files: &[WorkspaceFile]) -> bool {
        if let Some(known) = self.unchanged[position] {
            return known;
        }
        let same = self.contents[position]
            .as_deref()
            .is_some_and(|before| before == content_bytes(&files[position]));
        self.unchanged[position] = Some(same);
        same
    }

    /// Marks `piece` as used by this compile.
    pub(crate) fn mark_used<T>(&self, piece: &mut Piece<T>) {
        piece.used = self.generation;
    }

    /// A piece this compile rendered.
    pub(crate) fn piece<T>(&self, render: PieceRender, value: T) -> Piece<T> {
        Piece {
            reads: render.reads.into(),
            calls: render.calls.into(),
            taken: render.taken,
            value,
            used: self.generation,
        }
    }

    /// Keeps the bytes of each file in `needed` (by position) and forgets the others.
    fn keep_contents(&mut self, needed: &[bool], files: &[WorkspaceFile]) {
        for (position, needed) in needed.iter().enumerate() {
            if !needed {
                self.contents[position] = None;
            } else if !self.file_unchanged(position, files) {
                self.contents[position] = Some(content_bytes(&files[position]).into());
            }
        }
    }
}

/// Pieces kept across the compiles of one [`IncrementalPreviewCompiler`](super::IncrementalPreviewCompiler).
#[derive(Debug, Default)]
pub(crate) struct PieceCache {
    pub(crate) changes: FileChanges,
    /// By stylesheet path and `media` attribute.
    pub(crate) links: PieceMap<(String, Option<String>), InlinedLink>,
    /// Escaped classic scripts, by path.
    pub(crate) scripts: PieceMap<String, Arc<str>>,
    /// Per stylesheet key: the stylesheets its visit found to queue for diagnostics.
    pub(crate) css_visits: PieceMap<String, Arc<[String]>>,
    pub(crate) modules: PieceMap<ModuleKey, RenderedModule>,
    /// The entry's rewrite, checked on its own terms (see [`CachedTemplate`]).
    pub(crate) template: Option<CachedTemplate>,
}

impl PieceCache {
    /// Starts a compile of `files`: pieces survive only an unchanged layout and target.
    pub(crate) fn start_compile(&mut self, files: &[WorkspaceFile], options: &PreviewOptions) {
        if !self.changes.start_compile(files, options) {
            self.links.clear();
            self.scripts.clear();
            self.css_visits.clear();
            self.modules.clear();
        }
    }

    /// Ends a compile: drops the pieces it did not use and keeps the bytes of each file a
    /// remaining piece read.
    pub(crate) fn finish_compile(&mut self, files: &[WorkspaceFile]) {
        let generation = self.changes.generation;
        self.links.retain_used(generation);
        self.scripts.retain_used(generation);
        self.css_visits.retain_used(generation);
        self.modules.retain_used(generation);
        let mut needed = vec![false; files.len()];
        let reads = self
            .links
            .reads()
            .chain(self.scripts.reads())
            .chain(self.css_visits.reads())
            .chain(self.modules.reads());
        for position in reads {
            needed[position as usize] = true;
        }
        self.changes.keep_contents(&needed, files);
    }
}

/// Everything an incremental compiler keeps between compiles besides the per-file scans.
#[derive(Debug, Default)]
pub(crate) struct Reuse {
    pub(crate) pieces: PieceCache,
    pub(crate) references: ReferenceCache,
}

impl Reuse {
    pub(crate) fn start_compile(&mut self, files: &[WorkspaceFile], options: &PreviewOptions) {
        self.pieces.start_compile(files, options);
        self.references.start_compile();
    }

    pub(crate) fn finish_compile(&mut self, files: &[WorkspaceFile]) {
        self.pieces.finish_compile(files);
        self.references.finish_compile();
    }
}

/// What one piece's render read, reported and took; filled while it renders.
#[derive(Debug, Default)]
pub(crate) struct PieceRender {
    pub(crate) reads: Vec<u32>,
    pub(crate) calls: Vec<RecordedCall>,
    pub(crate) taken: usize,
}

fn content_bytes(file: &WorkspaceFile) -> &[u8] {
    match &file.content {
        FileContent::Text { source } => source.as_bytes(),
        FileContent::Asset { bytes, .. } => bytes,
    }
}

/// Picks a kind of piece out of the cache, with the change tracker beside it.
pub(crate) type PieceKind<K, T> = fn(&mut PieceCache) -> (&mut FileChanges, &mut PieceMap<K, T>);

impl<'a> Compiler<'a> {
    /// `render` as a piece under `key`: an incremental compile reuses the kept piece when it
    /// is current (replaying its diagnostics and budget), else renders and keeps it; a one-shot
    /// compile just renders.
    pub(crate) fn through_cache<K: Eq + Hash, T: Clone>(
        &mut self,
        kind: PieceKind<K, T>,
        key: K,
        render: impl FnOnce(&mut Self) -> T,
    ) -> T {
        if self.pieces.is_none() {
            return render(self);
        }
        if let Some(value) = self.reuse_piece(kind, &key) {
            return value;
        }
        self.start_piece();
        let value = render(self);
        if let Some(rendered) = self.finish_piece()
            && let Some(pieces) = self.pieces.as_deref_mut()
        {
            let (changes, map) = kind(pieces);
            let piece = changes.piece(rendered, value.clone());
            map.insert(key, piece);
        }
        value
    }

    /// The kept piece's value when it is current, after replaying what its render did to the
    /// sink and the budget.
    fn reuse_piece<K: Eq + Hash, T: Clone>(&mut self, kind: PieceKind<K, T>, key: &K) -> Option<T> {
        let (changes, map) = kind(self.pieces.as_deref_mut()?);
        let piece = map.get_mut(key)?;
        let files = self.index.files();
        if !changes.is_current(piece, files, self.budget.remaining) {
            return None;
        }
        changes.mark_used(piece);
        let taken = self.budget.take(piece.taken);
        debug_assert!(taken, "is_current checked the budget");
        for call in piece.calls.iter() {
            call.replay(&mut self.sink, |position| {
                files[position].source().unwrap_or_default()
            });
        }
        for &position in piece.reads.iter() {
            self.memo.keep_alive(&files[position as usize]);
        }
        Some(piece.value.clone())
    }

    fn start_piece(&mut self) {
        debug_assert!(self.piece_start.is_none(), "pieces do not nest");
        self.piece_start = Some((self.budget.taken, self.budget.refused));
        self.index.start_noting_reads();
        self.sink.start_recording();
    }

    /// What the piece that just rendered read, reported and took; `None` when it cannot be
    /// kept (the budget refused it something, or a diagnostic points outside the workspace).
    fn finish_piece(&mut self) -> Option<PieceRender> {
        let (taken, refused) = self.piece_start.take()?;
        let mut reads = self.index.stop_noting_reads();
        let mut calls = self.sink.stop_recording();
        if self.budget.refused != refused {
            return None;
        }
        for call in &mut calls {
            if !call.locate(|address| self.index.position_of_source(address)) {
                return None;
            }
            if let Some((position, _)) = call.location {
                reads.push(u32::try_from(position).ok()?);
            }
        }
        reads.sort_unstable();
        reads.dedup();
        Some(PieceRender {
            reads,
            calls,
            taken: self.budget.taken - taken,
        })
    }
}
