//! A package file as the modules of the document's import map. An ES module has its imports
//! pointed at the files they resolve to. A CommonJS (or JSON) file becomes two modules, as
//! esbuild's `__commonJS` wrapper does in one bundle: a *body* exporting `__init()`, which runs
//! the file once with `module`, `exports` and a `require` that calls the bodies (or copies the
//! namespaces) of what it requires, lazily and in order; and a *facade* at the file's own
//! specifier that ES importers see: `default` is `module.exports` (its `default` when it says
//! `__esModule`), plus each name the CommonJS lexer found.

use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;
use std::sync::Arc;

use super::commonjs::{Facts, Format};
use super::{NodeEnv, Packages};
use crate::preview::modules::{encode_module_source, scan_module};
use crate::preview::resolve::{
    json_string, push_encoded_path, throwing_module_url, workspace_module_specifier,
};
use crate::preview::resources::stylesheet_module;

/// Where CommonJS bodies are registered (their facades use the file's workspace specifier).
const COMMONJS_BODY_SPECIFIER_PREFIX: &str = "https://context-action.local/commonjs-module/";

/// Re-exports (`module.exports = require("./x")`) are followed this deep for export names.
const MAX_REEXPORT_DEPTH: usize = 8;

/// One package file, rendered.
#[derive(Debug, Default)]
pub(crate) struct PackageModule {
    /// Import map entries: specifier and module text encoded as a JSON string.
    pub(crate) entries: Vec<(String, Arc<str>)>,
    /// The package files it loads.
    pub(crate) imports: Vec<String>,
    /// What the compile reports about it.
    pub(crate) reports: Vec<PackageReport>,
    /// The file's text, which report offsets point into.
    pub(crate) source: Option<Arc<str>>,
}

/// A problem in a package file.
#[derive(Debug)]
pub(crate) struct PackageReport {
    pub(crate) requested: String,
    pub(crate) offset: Option<usize>,
    pub(crate) message: String,
    /// An import the module cannot load without (else a `require` that throws when called).
    pub(crate) error: bool,
}

/// Renders the package file at `path`.
pub(super) fn render(packages: &Packages, path: &str, env: NodeEnv) -> PackageModule {
    let (Some(source), Some(facts)) = (packages.read(path), packages.facts(path, env)) else {
        let reason = format!("Package file could not be read: {path}");
        return PackageModule {
            entries: vec![(
                workspace_module_specifier(path),
                encode_module_source(&format!("throw new Error({});", json_string(&reason))).into(),
            )],
            reports: vec![PackageReport {
                requested: path.to_owned(),
                offset: None,
                message: reason,
                error: true,
            }],
            ..PackageModule::default()
        };
    };
    let mut module = match facts.format() {
        Format::Module => render_module(packages, path, &source, &facts, env),
        Format::CommonJs | Format::Json => render_commonjs(packages, path, &source, &facts, env),
        Format::Stylesheet => PackageModule {
            entries: vec![(
                workspace_module_specifier(path),
                encode_module_source(&stylesheet_module(path, &source)).into(),
            )],
            ..PackageModule::default()
        },
    };
    if let Some((message, offset)) = &facts.syntax_error {
        module.reports.push(PackageReport {
            requested: path.to_owned(),
            offset: Some(*offset),
            message: format!("Package module could not be parsed: {message}"),
            error: true,
        });
    }
    module.source = Some(source);
    module
}

/// An ES module: each import pointed at its file (or at a module that throws why not).
fn render_module(
    packages: &Packages,
    path: &str,
    source: &str,
    facts: &Facts,
    env: NodeEnv,
) -> PackageModule {
    let mut module = PackageModule::default();
    let mut edits = node_env_edits(facts, env);
    for request in scan_module(source).requests {
        let specifier = request.specifier.trim();
        let target = match packages.resolve(path, specifier) {
            Ok(target) => {
                let specifier = workspace_module_specifier(&target);
                module.imports.push(target);
                specifier
            }
            Err(why) => {
                let message = why.explain(specifier);
                let thrown = throwing_module_url(&message, &request.names);
                module.reports.push(PackageReport {
                    requested: specifier.to_owned(),
                    offset: Some(request.range.start),
                    message,
                    error: true,
                });
                thrown
            }
        };
        edits.push((request.range.start, request.range.end, json_string(&target)));
    }
    let text = edited(source, edits);
    module.entries.push((
        workspace_module_specifier(path),
        encode_module_source(&text).into(),
    ));
    module
}

/// A CommonJS or JSON file: its body and its facade.
fn render_commonjs(
    packages: &Packages,
    path: &str,
    source: &str,
    facts: &Facts,
    env: NodeEnv,
) -> PackageModule {
    let mut module = PackageModule::default();
    let (header, cases) = required_modules(packages, path, facts, env, &mut module);
    for offset in &facts.dynamic_requires {
        module.reports.push(PackageReport {
            requested: "require(…)".to_owned(),
            offset: Some(*offset),
            message: format!(
                "A require of a computed name cannot be resolved in the preview; the call throws when it runs ({path})"
            ),
            error: false,
        });
    }
    let code = match facts.format() {
        Format::Json => format!("module.exports = {source};"),
        _ => edited(source, node_env_edits(facts, env)),
    };
    let body = commonjs_body(path, &header, &cases, &code, env);
    let names = export_names(packages, path, facts, env);
    module.entries.push((
        commonjs_body_specifier(path),
        encode_module_source(&body).into(),
    ));
    module.entries.push((
        workspace_module_specifier(path),
        encode_module_source(&commonjs_facade(path, &names)).into(),
    ));
    module
}

/// The body's imports of what the file requires, and the `case`s of its `require`.
fn required_modules(
    packages: &Packages,
    path: &str,
    facts: &Facts,
    env: NodeEnv,
    module: &mut PackageModule,
) -> (String, String) {
    let (mut header, mut cases) = (String::new(), String::new());
    let mut seen = HashSet::new();
    for (index, (specifier, offset)) in facts.requires.iter().enumerate() {
        if !seen.insert(specifier.as_str()) {
            continue;
        }
        let target = match packages.resolve(path, specifier) {
            Ok(target) => target,
            Err(why) => {
                module.reports.push(PackageReport {
                    requested: specifier.clone(),
                    offset: Some(*offset),
                    message: format!(
                        "{} (this require throws when it runs)",
                        why.explain(specifier)
                    ),
                    error: false,
                });
                continue;
            }
        };
        let local = format!("__required{index}");
        let case = json_string(specifier);
        // What `require` returns: a CommonJS body's `__init()`, else an ES namespace.
        let is_module = packages
            .facts(&target, env)
            .is_some_and(|facts| matches!(facts.format(), Format::Module | Format::Stylesheet));
        if is_module {
            let specifier = json_string(&workspace_module_specifier(&target));
            let _ = writeln!(header, "import * as {local} from {specifier};");
            let _ = writeln!(cases, "      case {case}: return __commonJsOf({local});");
        } else {
            let specifier = json_string(&commonjs_body_specifier(&target));
            let _ = writeln!(header, "import {{ __init as {local} }} from {specifier};");
            let _ = writeln!(cases, "      case {case}: return {local}();");
        }
        module.imports.push(target);
    }
    (header, cases)
}

/// The body module: `__init()` runs `code` once, as Node would, and returns `module.exports`.
fn commonjs_body(path: &str, header: &str, cases: &str, code: &str, env: NodeEnv) -> String {
    let filename = json_string(&format!("/{path}"));
    let dirname = json_string(&format!(
        "/{}",
        path.rsplit_once('/').map_or("", |(dir, _)| dir)
    ));
    let missing = json_string(&format!("' from {path}"));
    let node_env = json_string(env.as_str());
    format!(
        "{header}const __commonJsOf = (namespace) => Object.defineProperty(Object.assign({{}}, namespace), \"__esModule\", {{ value: true }});
let __module;
export function __init() {{
  if (__module !== undefined) return __module.exports;
  __module = {{ exports: {{}} }};
  const require = (id) => {{
    switch (id) {{
{cases}    }}
    throw new Error(\"Cannot find module '\" + id + {missing});
  }};
  (function (exports, require, module, __filename, __dirname, process, global) {{
{code}
}}).call(__module.exports, __module.exports, require, __module, {filename}, {dirname}, {{ env: {{ NODE_ENV: {node_env} }} }}, globalThis);
  return __module.exports;
}}
"
    )
}

/// The facade ES importers load: esbuild's interop for `default`, and each found name.
fn commonjs_facade(path: &str, names: &BTreeSet<String>) -> String {
    let body = json_string(&commonjs_body_specifier(path));
    let mut facade = format!(
        "import {{ __init }} from {body};\nconst __exports = __init();\n\
         export default __exports != null && __exports.__esModule ? __exports.default : __exports;\n"
    );
    let named: Vec<&String> = names.iter().filter(|name| *name != "default").collect();
    for (index, name) in named.iter().enumerate() {
        let _ = writeln!(
            facade,
            "const __named{index} = __exports[{}];",
            json_string(name)
        );
    }
    if !named.is_empty() {
        let list: Vec<String> = named
            .iter()
            .enumerate()
            .map(|(index, name)| format!("__named{index} as {}", json_string(name)))
            .collect();
        let _ = writeln!(facade, "export {{ {} }};", list.join(", "));
    }
    facade
}

/// The names a CommonJS file exports, with those of the files it re-exports whole.
fn export_names(packages: &Packages, path: &str, facts: &Facts, env: NodeEnv) -> BTreeSet<String> {
    let mut names = facts.exports.clone();
    let mut visited = HashSet::from([path.to_owned()]);
    let mut frontier: Vec<(String, Vec<String>)> = vec![(path.to_owned(), facts.reexports.clone())];
    for _ in 0..MAX_REEXPORT_DEPTH {
        let mut next = Vec::new();
        for (from, specifiers) in frontier {
            for specifier in specifiers {
                let Ok(target) = packages.resolve(&from, &specifier) else {
                    continue;
                };
                if !visited.insert(target.clone()) {
                    continue;
                }
                if let Some(facts) = packages.facts(&target, env) {
                    names.extend(facts.exports.iter().cloned());
                    next.push((target, facts.reexports.clone()));
                }
            }
        }
        frontier = next;
    }
    names
}

/// `process.env.NODE_ENV` replaced by the environment's value, as bundlers define it.
fn node_env_edits(facts: &Facts, env: NodeEnv) -> Vec<(usize, usize, String)> {
    let value = json_string(env.as_str());
    facts
        .node_env
        .iter()
        .map(|(start, end)| (*start, *end, value.clone()))
        .collect()
}

/// `source` with the non-overlapping `edits` (start, end, replacement) applied.
fn edited(source: &str, mut edits: Vec<(usize, usize, String)>) -> String {
    edits.sort_by_key(|(start, _, _)| *start);
    let mut out = String::with_capacity(source.len());
    let mut last = 0;
    for (start, end, replacement) in edits {
        if start < last {
            continue;
        }
        out.push_str(&source[last..start]);
        out.push_str(&replacement);
        last = end;
    }
    out.push_str(&source[last..]);
    out
}

/// The specifier of the CommonJS body of the package file at `path`.
fn commonjs_body_specifier(path: &str) -> String {
    let mut specifier = String::from(COMMONJS_BODY_SPECIFIER_PREFIX);
    push_encoded_path(&mut specifier, path);
    specifier
}
