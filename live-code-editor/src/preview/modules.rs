//! JavaScript modules: finds `import`, `export … from` and `import()` specifiers with the `oxc`
//! parser, walks the local module graph breadth first, and rewrites every specifier to a stable
//! workspace module URL (resolved by the import map the bootstrap installs), a throwing `data:`
//! module (missing, external or over the limit), or leaves it (bare specifiers).
//!
//! The parser sees strings, comments, regular expressions and template text for what they are;
//! only real module requests are rewritten, including `import()` inside `${…}`.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use oxc_allocator::Allocator;
use oxc_ast::ast::{ImportDeclarationSpecifier, Program, Statement};
use oxc_diagnostics::OxcDiagnostic;
use oxc_parser::Parser;
use oxc_span::SourceType;

use super::resolve::json_string;

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
    /// Each `import.meta.env` (Vite's build environment), to be replaced by its value.
    pub(crate) import_meta_env: Vec<Range<usize>>,
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
            import_meta_env: Vec::new(),
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
    let import_meta_env = parsed
        .module_record
        .import_metas
        .iter()
        .filter_map(|span| env_after(source, span.start as usize, span.end as usize))
        .collect();
    ModuleScan {
        requests,
        import_meta_env,
        syntax_error,
    }
}

/// `start..` through `.env` when the `import.meta` at `start..end` is followed by `.env` (and
/// not `.envelope`).
fn env_after(source: &str, start: usize, end: usize) -> Option<Range<usize>> {
    let rest = source.get(end..)?.strip_prefix(".env")?;
    let continues = rest
        .chars()
        .next()
        .is_some_and(|next| next.is_alphanumeric() || next == '_' || next == '$');
    (!continues).then_some(start..end + ".env".len())
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

/// The first error of `diagnostics` as message and byte offset.
pub(crate) fn first_error(diagnostics: &[OxcDiagnostic]) -> Option<(String, usize)> {
    diagnostics.iter().find_map(|error| {
        (error.severity == oxc_diagnostics::Severity::Error).then(|| {
            let offset = error
                .labels
                .first()
                .map_or(0, |label| label.offset() as usize);
            (error.message.to_string(), offset)
        })
    })
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
