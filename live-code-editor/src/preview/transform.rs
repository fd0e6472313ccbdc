//! TypeScript and JSX modules (`.ts`, `.tsx`, `.mts`, `.cts`, `.jsx`) become JavaScript with
//! `oxc_transformer`: types stripped, enums and namespaces compiled, decorators compiled as
//! TypeScript's `experimentalDecorators`, JSX turned into calls of the
//! configured runtime ([`PreviewJsx`], overridden per file by the `@jsx`, `@jsxFrag`,
//! `@jsxImportSource` and `@jsxRuntime` pragmas). The output carries a source map back to the
//! file, and where each import request of the original stood, so diagnostics about the
//! transformed module's imports point into the file the person wrote.

use std::collections::HashMap;
use std::path::Path;

use oxc_allocator::Allocator;
use oxc_codegen::{Codegen, CodegenOptions};
use oxc_parser::Parser;
use oxc_semantic::SemanticBuilder;
use oxc_span::SourceType;
use oxc_transformer::{JsxRuntime as OxcJsxRuntime, TransformOptions, Transformer};

use super::modules::first_error;

/// Extensions whose modules the compiler transforms before loading them.
pub const TRANSFORMED_MODULE_EXTENSIONS: [&str; 5] = ["ts", "tsx", "mts", "cts", "jsx"];

/// Which functions compiled JSX calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum JsxRuntime {
    /// `jsx()` / `jsxs()` imported from `<import source>/jsx-runtime` (React 17+, Preact, Solid).
    #[default]
    Automatic,
    /// Calls of the pragma (`React.createElement`, `h`) that must be in scope.
    Classic,
}

/// How JSX compiles when a file's pragmas do not say otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PreviewJsx {
    /// The runtime (default [`JsxRuntime::Automatic`]).
    pub runtime: JsxRuntime,
    /// Where the automatic runtime is imported from (default `react`): the compiled module
    /// imports `<import_source>/jsx-runtime`, which the workspace's import map must provide.
    pub import_source: String,
    /// The classic runtime's element factory (default `React.createElement`).
    pub pragma: String,
    /// The classic runtime's fragment (default `React.Fragment`).
    pub pragma_frag: String,
}

impl Default for PreviewJsx {
    fn default() -> Self {
        Self {
            runtime: JsxRuntime::Automatic,
            import_source: "react".into(),
            pragma: "React.createElement".into(),
            pragma_frag: "React.Fragment".into(),
        }
    }
}

impl PreviewJsx {
    /// The automatic runtime imported from `import_source` (`react`, `preact`, ...).
    pub fn automatic(import_source: impl Into<String>) -> Self {
        Self {
            runtime: JsxRuntime::Automatic,
            import_source: import_source.into(),
            ..Self::default()
        }
    }

    /// The classic runtime calling `pragma` and `pragma_frag` (`h`, `Fragment`).
    pub fn classic(pragma: impl Into<String>, pragma_frag: impl Into<String>) -> Self {
        Self {
            runtime: JsxRuntime::Classic,
            pragma: pragma.into(),
            pragma_frag: pragma_frag.into(),
            ..Self::default()
        }
    }

    fn transform_options(&self) -> TransformOptions {
        let mut options = TransformOptions::default();
        options.jsx.runtime = match self.runtime {
            JsxRuntime::Automatic => OxcJsxRuntime::Automatic,
            JsxRuntime::Classic => OxcJsxRuntime::Classic,
        };
        options.jsx.import_source = Some(self.import_source.clone());
        options.jsx.pragma = Some(self.pragma.clone());
        options.jsx.pragma_frag = Some(self.pragma_frag.clone());
        options.typescript.jsx_pragma = self.pragma.clone().into();
        options.typescript.jsx_pragma_frag = self.pragma_frag.clone().into();
        // Browsers do not run decorators yet and oxc does not lower the standard ones, so
        // they compile as TypeScript's `experimentalDecorators`, into code that runs.
        options.decorator.legacy = true;
        options
    }
}

/// Whether the module at `path` is transformed before it loads (by extension, ignoring case).
pub(crate) fn is_transformed_module(path: &str) -> bool {
    let Some((_, extension)) = path.rsplit_once('.') else {
        return false;
    };
    TRANSFORMED_MODULE_EXTENSIONS
        .iter()
        .any(|known| extension.eq_ignore_ascii_case(known))
}

/// A transformed module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TransformedModule {
    /// The JavaScript, ending in an inline source map comment when one was asked for.
    pub(crate) code: String,
    /// Byte offsets of each import request's string literal in the original, by specifier, in
    /// source order (type-only imports left out: the transform removes them).
    pub(crate) request_offsets: HashMap<String, Vec<usize>>,
    /// Why the file could not be transformed (message and byte offset in the original); the
    /// code is then empty.
    pub(crate) error: Option<(String, usize)>,
}

/// Transforms the module at `path` (its extension decides TypeScript and JSX parsing). With
/// `source_map`, the code ends in a `//# sourceMappingURL=data:…` comment mapping it back to
/// `path` with the original text embedded.
pub(crate) fn transform_module(
    path: &str,
    source: &str,
    jsx: &PreviewJsx,
    source_map: bool,
) -> TransformedModule {
    // The parser and the transform recurse per nesting level, like the module scan. A panic
    // inside the transformer on input it did not foresee is this module's error, never the
    // host's crash.
    let transformed = stacker::grow(super::PARSER_STACK_BYTES, || {
        std::panic::catch_unwind(|| transform_on_this_stack(path, source, jsx, source_map))
    });
    transformed.unwrap_or_else(|_| TransformedModule {
        code: String::new(),
        request_offsets: HashMap::new(),
        error: Some((
            "the TypeScript/JSX transformer failed on this module".into(),
            0,
        )),
    })
}

fn transform_on_this_stack(
    path: &str,
    source: &str,
    jsx: &PreviewJsx,
    source_map: bool,
) -> TransformedModule {
    let failed = |error| TransformedModule {
        code: String::new(),
        request_offsets: HashMap::new(),
        error: Some(error),
    };
    let nesting = super::modules::nesting_estimate(source);
    if nesting > super::MAX_MODULE_NESTING_DEPTH {
        return failed((
            format!(
                "module nests deeper than {} levels (about {nesting}); it was not transformed",
                super::MAX_MODULE_NESTING_DEPTH
            ),
            0,
        ));
    }
    let source_type = SourceType::from_path(path)
        .unwrap_or_else(|_| SourceType::tsx())
        .with_module(true);
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, source_type).parse();
    if let Some(error) = first_error(&parsed.diagnostics) {
        return failed(error);
    }
    let request_offsets = request_offsets(source, &parsed.module_record);
    let mut program = parsed.program;
    // Enum members are evaluated for the enum transform; room is left for the bindings the
    // transforms add (the JSX runtime import).
    let semantic = SemanticBuilder::new()
        .with_enum_eval(true)
        .with_excess_capacity(2.0)
        .build(&program);
    if let Some(error) = first_error(&semantic.diagnostics) {
        return failed(error);
    }
    let scoping = semantic.semantic.into_scoping();
    let transformed = Transformer::new(&allocator, Path::new(path), &jsx.transform_options())
        .build_with_scoping(scoping, &mut program);
    if let Some(error) = first_error(&transformed.diagnostics) {
        return failed(error);
    }
    let generated = Codegen::new()
        .with_options(CodegenOptions {
            source_map_path: source_map.then(|| path.into()),
            ..CodegenOptions::default()
        })
        .build(&program);
    let mut code = generated.code;
    if let Some(mut map) = generated.map {
        map.set_source_contents(vec![Some(source)]);
        if !code.ends_with('\n') {
            code.push('\n');
        }
        code.push_str("//# sourceMappingURL=");
        code.push_str(&map.to_data_url());
        code.push('\n');
    }
    TransformedModule {
        code,
        request_offsets,
        error: None,
    }
}

/// Where each value import request's string literal is in the original, by specifier.
fn request_offsets(
    source: &str,
    record: &oxc_syntax::module_record::ModuleRecord<'_>,
) -> HashMap<String, Vec<usize>> {
    let mut offsets: HashMap<String, Vec<usize>> = HashMap::new();
    for (specifier, requests) in &record.requested_modules {
        let starts: Vec<usize> = requests
            .iter()
            .filter(|request| !request.is_type)
            .map(|request| request.span.start as usize)
            .collect();
        if !starts.is_empty() {
            offsets
                .entry(specifier.to_string())
                .or_default()
                .extend(starts);
        }
    }
    for dynamic in &record.dynamic_imports {
        let start = dynamic.module_request.start as usize;
        // The literal's value, quotes stripped; computed specifiers have no stable name.
        if let Some(value) = source
            .get(start..dynamic.module_request.end as usize)
            .and_then(super::modules::literal_value)
        {
            offsets.entry(value).or_default().push(start);
        }
    }
    for starts in offsets.values_mut() {
        starts.sort_unstable();
    }
    offsets
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transform(path: &str, source: &str) -> TransformedModule {
        transform_module(path, source, &PreviewJsx::default(), false)
    }

    #[test]
    fn types_are_stripped_and_enums_compiled() {
        let out = transform(
            "a.ts",
            "import type { T } from './t';\nenum Color { Red, Green }\nconst n: number = Color.Green;\nexport const x = n as unknown as T;\n",
        );
        assert!(out.error.is_none(), "{:?}", out.error);
        assert!(!out.code.contains(": number"), "{}", out.code);
        assert!(
            !out.code.contains("./t"),
            "type-only imports go: {}",
            out.code
        );
        assert!(
            out.code.contains("Color[Color[\"Green\"] = 1]"),
            "{}",
            out.code
        );
        assert!(!out.request_offsets.contains_key("./t"));
    }

    #[test]
    fn decorators_compile_into_code_a_browser_runs() {
        let out = transform(
            "d.ts",
            "function dec(value: any) { return value; }\n@dec\nexport class A { @dec m() {} }\n",
        );
        assert!(out.error.is_none(), "{:?}", out.error);
        assert!(!out.code.contains("@dec"), "{}", out.code);
        assert!(out.code.contains("dec"), "{}", out.code);
    }

    #[test]
    fn jsx_uses_the_automatic_runtime_by_default_and_pragmas_override_it() {
        let out = transform("App.tsx", "export const App = () => <div>hi</div>;");
        assert!(out.code.contains("react/jsx-runtime"), "{}", out.code);
        let preact = transform(
            "App.jsx",
            "/** @jsxImportSource preact */\nexport const App = () => <div>hi</div>;",
        );
        assert!(
            preact.code.contains("preact/jsx-runtime"),
            "{}",
            preact.code
        );
        let classic = transform(
            "App.jsx",
            "/** @jsxRuntime classic */\n/** @jsx h */\n/** @jsxFrag Fragment */\nimport { h, Fragment } from './h.js';\nexport const App = () => <><b /></>;",
        );
        assert!(classic.code.contains("h(Fragment"), "{}", classic.code);
        assert!(!classic.code.contains("jsx-runtime"), "{}", classic.code);
    }

    #[test]
    fn the_configured_classic_runtime_is_used_without_pragmas() {
        let out = transform_module(
            "App.tsx",
            "import { h, F } from './h';\nexport const App = () => <><i /></>;",
            &PreviewJsx::classic("h", "F"),
            false,
        );
        assert!(out.code.contains("h(F"), "{}", out.code);
    }

    #[test]
    fn request_offsets_point_at_the_original_literals() {
        let source = "import a from './a';\nconst b: string = await import('./b.tsx');\n";
        let out = transform("m.ts", source);
        let at = |specifier: &str| out.request_offsets[specifier][0];
        assert_eq!(&source[at("./a")..at("./a") + 5], "'./a'");
        assert_eq!(&source[at("./b.tsx")..at("./b.tsx") + 9], "'./b.tsx'");
    }

    #[test]
    fn syntax_errors_are_reported_with_their_offset() {
        let source = "const x: number = ;\n";
        let out = transform("bad.ts", source);
        let (message, offset) = out.error.expect("an error");
        assert!(!message.is_empty());
        assert_eq!(offset, source.find(';').unwrap());
        assert!(out.code.is_empty());
    }

    #[test]
    fn a_source_map_maps_back_to_the_file() {
        let out = transform_module(
            "src/App.tsx",
            "export const a: number = 1;",
            &PreviewJsx::default(),
            true,
        );
        let url = out
            .code
            .lines()
            .find_map(|line| line.strip_prefix("//# sourceMappingURL=data:application/json;"))
            .expect("an inline map");
        assert!(
            url.starts_with("charset=utf-8;base64,") || url.starts_with("base64,"),
            "{url}"
        );
    }

    #[test]
    fn transformed_extensions_are_recognised_ignoring_case() {
        for path in ["a.ts", "b/App.TSX", "c.mts", "d.cts", "e.jsx"] {
            assert!(is_transformed_module(path), "{path}");
        }
        for path in ["a.js", "b.mjs", "c", "d.tsx.css"] {
            assert!(!is_transformed_module(path), "{path}");
        }
    }
}
