//! JavaScript modules: finds `import`, `export … from` and `import()` specifiers with the `oxc`
//! parser, walks the local module graph breadth first, and rewrites every specifier to a stable
//! workspace module URL (resolved by the import map the bootstrap installs), a throwing `data:`
//! module (missing, external or over the limit), or leaves it (bare specifiers).
//!
//! The parser sees strings, comments, regular expressions and template text for what they are;
//! only real module requests are rewritten, including `import()` inside `${…}`.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use oxc_allocator::Allocator;
use oxc_ast::ast::{ImportDeclarationSpecifier, Program, Statement};
use oxc_parser::Parser;
use oxc_span::SourceType;

use super::Compiler;
use super::diagnostics::{DiagnosticKind, Location, Position, ReferenceLabel};
use super::helpers::{helper_for_marker, helper_for_specifier};
use super::pieces::{GraphRoot, ModuleKey, RenderedModule};
use super::resolve::{
    Reference, is_local_looking, json_string, throwing_module_url, workspace_module_specifier,
};
use super::transform::{TransformedModule, first_error, is_transformed_module};

/// At most this many resolved local import edges are followed across one document's module
/// graph; later ones become modules that throw and `module-graph-limit` diagnostics.
pub const MAX_MODULE_IMPORT_EDGES: usize = 32;

/// One module request in a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModuleRequest {
    /// The specifier value.
    pub(crate) specifier: String,
    /// The string literal (quotes included) to replace.
    pub(crate) range: Range<usize>,
    /// Names a static import or re-export takes from the module (`default` included).
    pub(crate) names: Vec<String>,
}

/// What the parser found in a module.
#[derive(Debug, Default)]
pub(crate) struct ModuleScan {
    pub(crate) requests: Vec<ModuleRequest>,
    /// The first syntax error: message and byte offset.
    pub(crate) syntax_error: Option<(String, usize)>,
}

/// Modules whose bracket nesting or prefix-operator run exceeds this are not parsed (the
/// parser recurses per level); they are reported and left as written.
pub const MAX_MODULE_NESTING_DEPTH: usize = 1_000;

/// An upper estimate of the parser's recursion: the deepest bracket nesting plus the longest
/// run of prefix operators (`!`, `~`, `+`, `-`). Linear, no allocation.
pub(crate) fn nesting_estimate(source: &str) -> usize {
    let (mut depth, mut deepest, mut run, mut longest_run) = (0usize, 0usize, 0usize, 0usize);
    for byte in source.bytes() {
        match byte {
            b'(' | b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        match byte {
            b'!' | b'~' | b'+' | b'-' => {
                run += 1;
                longest_run = longest_run.max(run);
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => run = 0,
        }
    }
    deepest + longest_run
}

/// Parses `source` as an ES module and lists its static and literal dynamic module requests
/// in source order.
pub(crate) fn scan_module(source: &str) -> ModuleScan {
    let nesting = nesting_estimate(source);
    if nesting > MAX_MODULE_NESTING_DEPTH {
        let message = format!(
            "module nests deeper than {MAX_MODULE_NESTING_DEPTH} levels (about {nesting}); its imports were not inspected"
        );
        return ModuleScan {
            requests: Vec::new(),
            syntax_error: Some((message, 0)),
        };
    }
    // The parser recurses once per nesting level and per link of a statement chain (`else
    // if`, labels), which brackets do not bound: it gets a stack of its own.
    stacker::grow(super::PARSER_STACK_BYTES, || parse_module_requests(source))
}

/// [`scan_module`] past the nesting guard.
fn parse_module_requests(source: &str) -> ModuleScan {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, SourceType::mjs()).parse();
    let mut names = imported_names(&parsed.program);
    let mut requests: Vec<ModuleRequest> = parsed
        .module_record
        .requested_modules
        .iter()
        .flat_map(|(specifier, occurrences)| {
            occurrences.iter().map(move |occurrence| ModuleRequest {
                specifier: specifier.to_string(),
                range: occurrence.span.start as usize..occurrence.span.end as usize,
                names: Vec::new(),
            })
        })
        .collect();
    requests.extend(
        parsed
            .module_record
            .dynamic_imports
            .iter()
            .filter_map(|dynamic| {
                let range =
                    dynamic.module_request.start as usize..dynamic.module_request.end as usize;
                literal_value(source.get(range.clone())?).map(|specifier| ModuleRequest {
                    specifier,
                    range,
                    names: Vec::new(),
                })
            }),
    );
    requests.sort_by_key(|request| request.range.start);
    requests.dedup_by_key(|request| request.range.start);
    for request in &mut requests {
        request.names = names.remove(&request.range.start).unwrap_or_default();
    }
    let syntax_error = first_error(&parsed.diagnostics);
    ModuleScan {
        requests,
        syntax_error,
    }
}

/// Names each top-level `import … from` / `export { … } from` takes, by source literal start.
fn imported_names(program: &Program<'_>) -> HashMap<usize, Vec<String>> {
    let mut names: HashMap<usize, Vec<String>> = HashMap::new();
    for statement in &program.body {
        let (start, taken): (u32, Vec<String>) = match statement {
            Statement::ImportDeclaration(declaration) => (
                declaration.source.span.start,
                declaration
                    .specifiers
                    .iter()
                    .flatten()
                    .filter_map(|specifier| match specifier {
                        ImportDeclarationSpecifier::ImportSpecifier(named) => {
                            Some(named.imported.name().to_string())
                        }
                        ImportDeclarationSpecifier::ImportDefaultSpecifier(_) => {
                            Some("default".to_owned())
                        }
                        ImportDeclarationSpecifier::ImportNamespaceSpecifier(_) => None,
                    })
                    .collect(),
            ),
            Statement::ExportFromDeclaration(declaration) => (
                declaration.source.span.start,
                declaration
                    .specifiers
                    .iter()
                    .map(|specifier| specifier.local.name().to_string())
                    .collect(),
            ),
            _ => continue,
        };
        let entry = names.entry(start as usize).or_default();
        for name in taken {
            if !entry.contains(&name) {
                entry.push(name);
            }
        }
    }
    names
}

/// The value of a plain string or substitution-free template literal without escapes.
pub(crate) fn literal_value(raw: &str) -> Option<String> {
    let quote = raw.chars().next()?;
    if !matches!(quote, '"' | '\'' | '`') || raw.len() < 2 || !raw.ends_with(quote) {
        return None;
    }
    let inner = &raw[1..raw.len() - 1];
    let escaped_or_interpolated =
        inner.contains('\\') || inner.contains(quote) || (quote == '`' && inner.contains("${"));
    (!escaped_or_interpolated).then(|| inner.to_owned())
}

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
        let mut queued: HashSet<&'a str> = roots
            .iter()
            .filter(|root| root.inline_index.is_none())
            .map(|root| root.path)
            .collect();
        let mut queue = roots;
        let mut edges = 0;
        let mut next = 0;
        // Runtime helper modules registered, which are no workspace files.
        let mut helpers = 0;
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
        RenderedGraph {
            module_count: modules.len() - helpers,
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
        enqueue: &mut dyn FnMut(&'a str),
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
        enqueue: &mut dyn FnMut(&'a str),
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
        enqueue: &mut dyn FnMut(&'a str),
    ) -> String {
        let mut out = String::with_capacity(code.len());
        let mut last = 0;
        for (request, at) in scan.requests.iter().zip(places) {
            out.push_str(&code[last..request.range.start]);
            last = request.range.end;
            match self.rewrite_request(from, request, *at, edges, enqueue) {
                Some(replacement) => out.push_str(&json_string(&replacement)),
                None => out.push_str(&code[request.range.clone()]),
            }
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
        enqueue: &mut dyn FnMut(&'a str),
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
        enqueue: &mut dyn FnMut(&'a str),
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
        enqueue: &mut dyn FnMut(&'a str),
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

/// A module source as a JSON string literal that cannot close a `<script>` element.
pub(crate) fn encode_module_source(source: &str) -> String {
    json_string(source).replace('<', "\\u003c")
}

/// The classic script that registers every module as a Blob URL under its workspace specifier
/// in one import map, before any module script runs. Sources are JSON with `<` escaped, so no
/// source text can close the script element. With `published` (preview documents) the URLs
/// and sources stay readable as the non-enumerable `window.__contextActionModules`, from which
/// the bridge traces a runtime error's Blob URL position back to its file.
pub(crate) fn module_bootstrap_script(modules: &[(String, Arc<str>)], published: bool) -> String {
    let sources = modules
        .iter()
        .map(|(specifier, encoded)| specifier.len() + encoded.len() + 8)
        .sum::<usize>();
    let mut script = String::with_capacity(sources + 640);
    script.push_str("<script>(function(){var sources={");
    for (index, (specifier, encoded)) in modules.iter().enumerate() {
        if index > 0 {
            script.push(',');
        }
        script.push_str(&json_string(specifier));
        script.push(':');
        script.push_str(encoded);
    }
    script.push_str("};var urls=Object.create(null);\
Object.keys(sources).forEach(function(specifier){urls[specifier]=URL.createObjectURL(new Blob([sources[specifier]],{type:'text/javascript'}))});\
");
    if published {
        script.push_str("try{Object.defineProperty(window,'__contextActionModules',{value:{urls:urls,sources:sources}})}catch(ignored){}");
    }
    script.push_str("\
window.addEventListener('pagehide',function(){Object.keys(urls).forEach(function(specifier){URL.revokeObjectURL(urls[specifier])})},{once:true});\
var map=document.createElement('script');map.type='importmap';map.textContent=JSON.stringify({imports:urls});\
(document.head||document.documentElement).appendChild(map)})();</script>");
    script
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specifiers(source: &str) -> Vec<String> {
        scan_module(source)
            .requests
            .into_iter()
            .map(|request| request.specifier)
            .collect()
    }

    #[test]
    fn finds_static_reexport_and_dynamic_requests_in_order() {
        let source = "import a from './a.js';\nimport './side.js';\nexport * from \"./star.js\";\nexport { b } from './b.js';\nconst c = await import('./c.js');\nimport(`./t.js`);";
        assert_eq!(
            specifiers(source),
            [
                "./a.js",
                "./side.js",
                "./star.js",
                "./b.js",
                "./c.js",
                "./t.js"
            ]
        );
    }

    #[test]
    fn strings_comments_regexes_and_template_text_are_not_requests() {
        let source = r#"
            const s = "import x from './no1.js'";
            // import './no2.js';
            /* export * from './no3.js' */
            const r = /import('.\/no4.js')/g;
            const t = `import('./no5.js') ${import('./yes.js')}`;
            const u = `${`nested ${import('./deep.js')}`}`;
        "#;
        assert_eq!(specifiers(source), ["./yes.js", "./deep.js"]);
    }

    #[test]
    fn ranges_cover_the_string_literal() {
        let source = "import x from 'a b.js'; import(\"./d.js\")";
        let scan = scan_module(source);
        assert_eq!(&source[scan.requests[0].range.clone()], "'a b.js'");
        assert_eq!(&source[scan.requests[1].range.clone()], "\"./d.js\"");
        assert!(scan.syntax_error.is_none());
    }

    #[test]
    fn static_requests_carry_the_names_they_import() {
        let scan = scan_module(
            "import d, { a, b as c, 'x-y' as z } from './m.js';\nexport { e, a } from './m.js';\nimport * as ns from './n.js';",
        );
        let names: Vec<_> = scan
            .requests
            .iter()
            .map(|request| request.names.clone())
            .collect();
        assert_eq!(
            names,
            [vec!["default", "a", "b", "x-y"], vec!["e", "a"], vec![]]
        );
    }

    #[test]
    fn nesting_is_estimated_from_brackets_and_prefix_runs() {
        assert_eq!(nesting_estimate("a(b[c{d}])"), 3);
        assert_eq!(nesting_estimate("x = !!!~-y; (((1)))"), 3 + 5);
        assert_eq!(
            nesting_estimate(")))((("),
            3,
            "stray closers do not go negative"
        );
    }

    #[test]
    fn over_deep_modules_are_not_parsed() {
        let at_limit = format!(
            "import './a.js';{}1{}",
            "(".repeat(MAX_MODULE_NESTING_DEPTH),
            ")".repeat(MAX_MODULE_NESTING_DEPTH)
        );
        let over = format!(
            "import './a.js';{}1{}",
            "(".repeat(MAX_MODULE_NESTING_DEPTH + 1),
            ")".repeat(MAX_MODULE_NESTING_DEPTH + 1)
        );
        // On the test thread's stack: the parse switches to a stack of its own.
        let (at_limit, over) = (scan_module(&at_limit), scan_module(&over));
        assert_eq!(at_limit.requests.len(), 1);
        assert!(at_limit.syntax_error.is_none());
        assert!(over.requests.is_empty());
        assert!(
            over.syntax_error
                .unwrap()
                .0
                .contains("nests deeper than 1000")
        );
        let unary = format!("import './a.js'; x = {}y;", "!".repeat(100_000));
        assert!(
            scan_module(&unary).syntax_error.is_some(),
            "long prefix chains are refused, not recursed"
        );
    }

    #[test]
    fn computed_dynamic_imports_are_left_alone() {
        assert!(specifiers("import('./' + name); import(`./${name}.js`);").is_empty());
    }

    #[test]
    fn syntax_errors_are_reported_with_an_offset() {
        let scan = scan_module("import x from './a.js';\nlet = = 1;");
        let (message, offset) = scan.syntax_error.expect("error");
        assert!(!message.is_empty());
        assert!(offset >= 24, "{offset}");
    }

    #[test]
    fn the_bootstrap_escapes_markup_in_sources() {
        for published in [false, true] {
            let script = module_bootstrap_script(
                &[(
                    "https://context-action.local/workspace-module/a.js".into(),
                    encode_module_source("'</script><b>'").into(),
                )],
                published,
            );
            assert!(!script[8..].contains("</script><b>"));
            assert!(script.contains("\\u003c/script>\\u003cb>"));
            assert!(script.contains("type='importmap'"));
            assert_eq!(script.contains("__contextActionModules"), published);
        }
    }
}
