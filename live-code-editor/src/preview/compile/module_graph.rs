//! The module graph in the compile: every module reachable from the document's module scripts
//! rewritten to import workspace specifiers, registered in one import map of Blob URLs, with
//! missing, external, bare and over-limit imports reported.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use super::Compiler;
use super::pieces::{GraphRoot, ModuleKey, RenderedModule};
use super::resources::{resource_marker, resource_of_marker};
use crate::preview::diagnostics::{DiagnosticKind, Location, Position, ReferenceLabel};
use crate::preview::helpers::{helper_for_marker, helper_for_specifier};
use crate::preview::modules::{
    ModuleRequest, ModuleScan, encode_module_source, module_bootstrap_script,
};
use crate::preview::packages::package_of_marker;
use crate::preview::resolve::{
    Reference, is_local_looking, json_string, throwing_module_url, workspace_module_specifier,
};
use crate::preview::transform::{TransformedModule, is_transformed_module};

/// A module the graph walk rewrites: a workspace file or an inline `<script type="module">`.
#[derive(Debug, Clone)]
pub(crate) struct ModuleSource<'a> {
    /// Path imports resolve against and diagnostics name (the HTML path for inline modules).
    pub(crate) path: &'a str,
    pub(crate) source: &'a str,
    /// Text positions are computed in, and where `source` starts within it.
    pub(crate) position_source: &'a str,
    pub(crate) position_base: usize,
    /// `Some(n)` for the n-th inline module script; `None` for a workspace file.
    pub(crate) inline_index: Option<usize>,
}

impl<'a> ModuleSource<'a> {
    /// A workspace module file.
    pub(crate) fn file(path: &'a str, source: &'a str) -> Self {
        Self {
            path,
            source,
            position_source: source,
            position_base: 0,
            inline_index: None,
        }
    }
}

/// The module graph a document loads, rendered.
#[derive(Debug)]
pub(crate) struct RenderedGraph {
    /// How many workspace file modules the import map registers (runtime helpers left out).
    pub(crate) module_count: usize,
    /// The import-map bootstrap script, when there are file modules.
    pub(crate) bootstrap: Option<Arc<str>>,
    /// Rewritten inline module scripts, by inline index.
    pub(crate) inline: Vec<(usize, String)>,
}

impl<'a> Compiler<'a> {
    /// Walks the module graph from `roots` (document order), rewriting every module and
    /// reporting missing, external, bare and over-limit imports; with the import-map bootstrap.
    pub(crate) fn rendered_module_graph(&mut self, roots: Vec<ModuleSource<'a>>) -> RenderedGraph {
        let mut modules: Vec<(String, Arc<str>)> = Vec::new();
        let mut inline = Vec::new();
        // A file several scripts load is one module, rendered and registered once.
        let mut queued: HashSet<&'a str> = HashSet::new();
        let mut queue: Vec<ModuleSource<'a>> = roots
            .into_iter()
            .filter(|root| root.inline_index.is_some() || queued.insert(root.path))
            .collect();
        let mut edges = 0;
        let mut next = 0;
        // Runtime helper modules registered, which are no workspace files.
        let mut helpers = 0;
        // Package files imported by workspace modules, in first-import order.
        let mut packages: Vec<String> = Vec::new();
        while next < queue.len() {
            let module = queue[next].clone();
            next += 1;
            let rendered = self.rendered_module(&module, edges);
            edges = rendered.edges;
            for path in rendered.imports.iter() {
                if let Some(helper) = helper_for_marker(path) {
                    if queued.insert(helper.marker) {
                        let source = encode_module_source(helper.source);
                        modules.push((helper.specifier.to_owned(), source.into()));
                        helpers += 1;
                    }
                } else if let Some(resource) = resource_of_marker(path) {
                    if let Some((resource, _)) = self.resource_at(resource)
                        && queued.insert(resource)
                    {
                        let text = self.rendered_resource(resource);
                        modules.push((workspace_module_specifier(resource), text));
                    }
                } else if let Some(package) = package_of_marker(path) {
                    if !packages.iter().any(|queued| queued == package) {
                        packages.push(package.to_owned());
                    }
                } else if let Some((path, source)) = self.index.script_of(path)
                    && queued.insert(path)
                {
                    queue.push(ModuleSource::file(path, source));
                }
            }
            match module.inline_index {
                Some(index) => inline.push((index, rendered.text.to_string())),
                None => modules.push((workspace_module_specifier(module.path), rendered.text)),
            }
        }
        let workspace_modules = modules.len() - helpers;
        self.add_package_modules(packages, &mut modules);
        RenderedGraph {
            module_count: workspace_modules,
            bootstrap: (!modules.is_empty())
                .then(|| module_bootstrap_script(&modules, self.runs_in_preview()).into()),
            inline,
        }
    }

    /// One module rewritten (and, for a file module, encoded within the budget), as a piece
    /// keyed by the module and the import edges followed before it.
    fn rendered_module(&mut self, module: &ModuleSource<'a>, edges: usize) -> RenderedModule {
        let key = ModuleKey {
            module: match module.inline_index {
                Some(index) => GraphRoot::Inline {
                    index,
                    base: module.position_base,
                },
                None => GraphRoot::File(module.path.to_owned()),
            },
            edges,
        };
        self.through_cache(
            |pieces| (&mut pieces.changes, &mut pieces.modules),
            key,
            |compiler| {
                // An inline module's text is the entry's: it depends on the entry file.
                compiler.index.note_read_of(module.path);
                let mut edges = edges;
                let mut imports = Vec::new();
                let rewritten = compiler.rewrite_module(module, &mut edges, &mut |path| {
                    imports.push(path.to_owned());
                });
                let text = match module.inline_index {
                    Some(_) => rewritten,
                    None => compiler.encoded_within_budget(module.path, &rewritten),
                };
                RenderedModule {
                    text: text.into(),
                    imports: imports.into(),
                    edges,
                }
            },
        )
    }

    /// A file module's rewritten source as a JSON string, or a module that throws when the
    /// budget cannot take it.
    fn encoded_within_budget(&mut self, path: &str, rewritten: &str) -> String {
        let encoded = encode_module_source(rewritten);
        if self.take_or_report(encoded.len(), path, path) {
            return encoded;
        }
        let reason = format!("Preview output limit reached at: {path}");
        encode_module_source(&format!("throw new Error({});", json_string(&reason)))
    }

    fn rewrite_module(
        &mut self,
        module: &ModuleSource<'a>,
        edges: &mut usize,
        enqueue: &mut dyn FnMut(&str),
    ) -> String {
        if module.inline_index.is_none() && is_transformed_module(module.path) {
            return self.rewrite_transformed_module(module.path, module.source, edges, enqueue);
        }
        let scan = match module.inline_index {
            Some(index) => self
                .memo
                .module_scan(&inline_module_key(module.path, index), module.source),
            None => self.memo.module_scan(module.path, module.source),
        };
        let location = |offset: usize| {
            Some(Location::new(
                module.position_source,
                module.position_base + offset,
            ))
        };
        if let Some((message, offset)) = &scan.syntax_error {
            self.sink.other(
                DiagnosticKind::ModuleSyntaxError,
                module.path,
                module.path,
                location(*offset),
                format!("JavaScript module could not be parsed: {message}"),
            );
        }
        let places: Vec<_> = scan
            .requests
            .iter()
            .map(|request| location(request.range.start))
            .collect();
        let from = Importer {
            path: module.path,
            probes: false,
        };
        self.rewrite_requests(from, module.source, &scan, &places, edges, enqueue)
    }

    /// A TypeScript or JSX file module: transformed, then its requests rewritten like any
    /// module's, each reported at its place in the file as written. One that cannot be
    /// transformed becomes a module that throws the reason with its position, so the preview
    /// shows why instead of going blank.
    fn rewrite_transformed_module(
        &mut self,
        path: &'a str,
        source: &'a str,
        edges: &mut usize,
        enqueue: &mut dyn FnMut(&str),
    ) -> String {
        let transformed = self.transformed(path, source);
        if let Some((message, offset)) = &transformed.error {
            let thrown = self.report_transform_failure(path, source, message, *offset);
            return format!("throw new SyntaxError({});", json_string(&thrown));
        }
        let scan = self
            .memo
            .module_scan(&transformed_module_key(path), &transformed.code);
        // The k-th request of a specifier in the output is its k-th in the original; one the
        // transform added (the JSX runtime import) is reported at the start of the file.
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let places: Vec<_> = scan
            .requests
            .iter()
            .map(|request| {
                let nth = seen.entry(request.specifier.as_str()).or_default();
                *nth += 1;
                let offset = transformed
                    .request_offsets
                    .get(&request.specifier)
                    .and_then(|starts| starts.get(*nth - 1))
                    .copied()
                    .unwrap_or(0);
                Some(Location::new(source, offset))
            })
            .collect();
        let from = Importer { path, probes: true };
        self.rewrite_requests(from, &transformed.code, &scan, &places, edges, enqueue)
    }

    /// The TypeScript/JSX module at `path` transformed (remembered like a scan); preview
    /// output carries an inline source map.
    fn transformed(&mut self, path: &str, source: &str) -> Arc<TransformedModule> {
        let with_map = self.runs_in_preview();
        self.memo
            .module_transform(path, source, &self.options.jsx, with_map)
    }

    /// Reports the module at `path` that could not be transformed; returns the reason with
    /// its position, as the module loading it throws it.
    fn report_transform_failure(
        &mut self,
        path: &str,
        source: &str,
        message: &str,
        offset: usize,
    ) -> String {
        self.sink.other(
            DiagnosticKind::ModuleSyntaxError,
            path,
            path,
            Some(Location::new(source, offset)),
            format!("TypeScript/JSX module could not be transformed: {message}"),
        );
        let position = Position::of_offset(source, offset);
        format!("{path}:{}:{}: {message}", position.line, position.column)
    }

    /// Why the module at `path` cannot load because its transform failed, reported; `None`
    /// for a module that transforms (or needs no transform). An import of it becomes a module
    /// that throws this and declares the names imported, so the reason, not a link error
    /// about missing exports, is what the page sees.
    fn failed_transform(&mut self, path: &'a str) -> Option<String> {
        if !is_transformed_module(path) {
            return None;
        }
        let (_, source) = self.index.script_of(path)?;
        let transformed = self.transformed(path, source);
        let (message, offset) = transformed.error.as_ref()?;
        Some(self.report_transform_failure(path, source, message, *offset))
    }

    /// `code` with each request of `scan` rewritten (see [`Self::rewrite_request`]); `places`
    /// says where each request is reported.
    fn rewrite_requests(
        &mut self,
        from: Importer<'a>,
        code: &str,
        scan: &ModuleScan,
        places: &[Option<Location<'_>>],
        edges: &mut usize,
        enqueue: &mut dyn FnMut(&str),
    ) -> String {
        let mut edits: Vec<(Range<usize>, String)> = Vec::new();
        for (request, at) in scan.requests.iter().zip(places) {
            if let Some(replacement) = self.rewrite_request(from, request, *at, edges, enqueue) {
                edits.push((request.range.clone(), json_string(&replacement)));
            }
        }
        if !scan.import_meta_env.is_empty() {
            let env = import_meta_env(self.runs_in_preview());
            edits.extend(
                scan.import_meta_env
                    .iter()
                    .map(|range| (range.clone(), env.clone())),
            );
            edits.sort_by_key(|(range, _)| range.start);
        }
        let mut out = String::with_capacity(code.len());
        let mut last = 0;
        for (range, replacement) in edits {
            out.push_str(&code[last..range.start]);
            out.push_str(&replacement);
            last = range.end;
        }
        out.push_str(&code[last..]);
        out
    }

    /// The new specifier for one request, or `None` to keep it.
    fn rewrite_request(
        &mut self,
        from: Importer<'a>,
        request: &ModuleRequest,
        at: Option<Location<'_>>,
        edges: &mut usize,
        enqueue: &mut dyn FnMut(&str),
    ) -> Option<String> {
        let requested = request.specifier.trim();
        let throwing = |reason: String| throwing_module_url(&reason, &request.names);
        let reference = self.index.classify(from.path, requested);
        let local_looking = is_local_looking(requested);
        // A written path that names a workspace module is followed even when it looks bare
        // (`app.js`), as before import maps; only `./` and `../` imports are probed.
        if let Reference::Local(Some(path)) = &reference
            && let Some(path) = self.index.module_path(path, from.probes && local_looking)
        {
            return Some(self.follow_edge(from.path, request, path, at, edges, enqueue));
        }
        if let Reference::Local(Some(path)) = &reference
            && let Some((path, _)) = self.resource_at(path).or_else(|| {
                // Vite serves its `public/` folder at the root: `import logo from '/vite.svg'`.
                requested
                    .starts_with('/')
                    .then(|| self.resource_at(&format!("{PUBLIC_FOLDER}/{path}")))
                    .flatten()
            })
        {
            enqueue(&resource_marker(path));
            return Some(workspace_module_specifier(path));
        }
        if let Reference::Local(_) = &reference
            && !local_looking
        {
            return self.rewrite_bare_request(from.path, request, at, edges, enqueue);
        }
        let reason = match reference {
            Reference::Ignored => return None,
            Reference::External => "External module import blocked",
            Reference::Local(_) => "Missing local module import",
        };
        self.report_reference(
            ReferenceLabel::ModuleImport,
            from.path,
            requested,
            at,
            false,
        );
        Some(throwing(format!("{reason}: {requested}")))
    }

    /// A bare specifier (`react`): through the import map to a workspace module, else kept
    /// and reported as unsupported (or blocked or missing, when the map sends it elsewhere).
    fn rewrite_bare_request(
        &mut self,
        from: &'a str,
        request: &ModuleRequest,
        at: Option<Location<'_>>,
        edges: &mut usize,
        enqueue: &mut dyn FnMut(&str),
    ) -> Option<String> {
        let requested = request.specifier.trim();
        if let Some(helper) = helper_for_specifier(requested) {
            enqueue(helper.marker);
            return Some(helper.specifier.to_owned());
        }
        // What a bare specifier becomes depends on the maps, whether they resolve it or not.
        for base in self.import_map.bases() {
            self.index.note_read_of(base);
        }
        let Some(mapped) = self.import_map.resolve(requested) else {
            if let Some(rewritten) = self.rewrite_package_request(from, request, at, enqueue) {
                return Some(rewritten);
            }
            self.sink.reference(
                DiagnosticKind::UnsupportedModuleReference,
                ReferenceLabel::ModuleImport,
                from,
                requested,
                at,
            );
            return None;
        };
        let (target, base) = (mapped.target, mapped.base.to_owned());
        let shown = format!("{requested} (mapped to {target})");
        let throwing = |reason: String| throwing_module_url(&reason, &request.names);
        match self.index.classify(&base, &target) {
            Reference::Local(Some(path)) => {
                if let Some(path) = self.index.module_path(&path, false) {
                    return Some(self.follow_edge(from, request, path, at, edges, enqueue));
                }
            }
            Reference::External => {
                self.sink.reference(
                    DiagnosticKind::BlockedExternalReference,
                    ReferenceLabel::ModuleImport,
                    from,
                    &shown,
                    at,
                );
                return Some(throwing(format!("External module import blocked: {shown}")));
            }
            Reference::Ignored | Reference::Local(None) => {}
        }
        self.sink.reference(
            DiagnosticKind::MissingReference,
            ReferenceLabel::ModuleImport,
            from,
            &shown,
            at,
        );
        Some(throwing(format!("Missing local module import: {shown}")))
    }

    /// Counts one import edge to the workspace module `path` and queues it; past
    /// [`PreviewOptions::max_module_import_edges`](super::PreviewOptions) the import becomes
    /// a module that throws.
    fn follow_edge(
        &mut self,
        from: &'a str,
        request: &ModuleRequest,
        path: &'a str,
        at: Option<Location<'_>>,
        edges: &mut usize,
        enqueue: &mut dyn FnMut(&str),
    ) -> String {
        let (requested, names) = (request.specifier.trim(), &request.names);
        if *edges >= self.options.max_module_import_edges {
            self.sink.reference(
                DiagnosticKind::ModuleGraphLimit,
                ReferenceLabel::ModuleImport,
                from,
                requested,
                at,
            );
            return throwing_module_url(
                &format!("JavaScript module import limit exceeded at: {requested}"),
                names,
            );
        }
        *edges += 1;
        if let Some(failure) = self.failed_transform(path) {
            return throwing_module_url(&failure, names);
        }
        enqueue(path);
        workspace_module_specifier(path)
    }
}

/// `import.meta.env` as Vite defines it: development in previews, production in exports.
fn import_meta_env(preview: bool) -> String {
    format!(
        "({{\"BASE_URL\":\"/\",\"MODE\":\"{}\",\"DEV\":{preview},\"PROD\":{},\"SSR\":false}})",
        if preview { "development" } else { "production" },
        !preview
    )
}

/// The folder whose files a root-absolute import also finds, as in Vite.
const PUBLIC_FOLDER: &str = "public";

/// The module a request is written in, and whether its extensionless imports are probed.
#[derive(Debug, Clone, Copy)]
struct Importer<'a> {
    path: &'a str,
    probes: bool,
}

/// The memo key of the transformed output of the module at `path`.
fn transformed_module_key(path: &str) -> String {
    format!("{path}\u{0}transformed")
}

/// The memo key of the `index`-th inline module script of the entry at `path`.
fn inline_module_key(path: &str, index: usize) -> String {
    format!("{path}\u{0}module\u{0}{index}")
}
