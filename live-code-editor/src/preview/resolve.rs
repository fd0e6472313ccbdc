//! How a reference written in HTML, CSS or JavaScript maps to a workspace file.
//!
//! Follows the reference resolver: trim, cut at the first `?`/`#`, decode like
//! `decodeURIComponent`, reject schemes and protocol-relative URLs, resolve a leading `/` from
//! the workspace root and anything else from the referencing file's directory; `..` pops and is
//! clamped at the root.

use std::cell::RefCell;
use std::collections::HashMap;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::file::{Language, WorkspaceFile};
use crate::path::decode_local_reference;

/// Origin and path prefix of the stable module specifiers the preview import map resolves.
pub const WORKSPACE_MODULE_SPECIFIER_PREFIX: &str =
    "https://context-action.local/workspace-module/";

/// Characters `encodeURIComponent` escapes (everything but `A-Z a-z 0-9 - _ . ! ~ * ' ( )`).
const URI_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// `encodeURIComponent` plus `! ' ( ) *`, as used for `data:` module bodies.
const DATA_URL_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// What a reference is, before looking it up in the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reference {
    /// Empty, a fragment, or a `data:`/`blob:`/`javascript:` URL: never reported, never rewritten.
    Ignored,
    /// An absolute URL with a scheme, or protocol-relative `//host/...`.
    External,
    /// A workspace path (normalized), or `None` when decoding or normalizing failed.
    Local(Option<String>),
}

/// Classifies a reference written in `from` (a workspace path).
pub(crate) fn classify_reference(from: &str, requested: &str) -> Reference {
    let value = requested.trim();
    if is_ignored_reference(value) {
        Reference::Ignored
    } else if is_external_reference(value) {
        Reference::External
    } else {
        Reference::Local(resolve_local_path(from, value))
    }
}

/// Empty, `#…`, `data:`, `blob:` and `javascript:` references are neither checked nor rewritten.
pub(crate) fn is_ignored_reference(value: &str) -> bool {
    let value = value.trim();
    value.is_empty()
        || value.starts_with('#')
        || ["data:", "blob:", "javascript:"]
            .iter()
            .any(|prefix| starts_with_ignore_case(value, prefix))
}

/// `scheme:` (RFC 3986 scheme syntax) or `//…`.
pub(crate) fn is_external_reference(value: &str) -> bool {
    let value = value.trim();
    value.starts_with("//") || has_scheme(value)
}

/// Whether a bare module specifier is local-looking (`./x`, `../x`, `/x`).
pub(crate) fn is_local_looking(value: &str) -> bool {
    let value = value.trim();
    value.starts_with('.') || value.starts_with('/')
}

fn has_scheme(value: &str) -> bool {
    let Some(colon) = value.find(':') else {
        return false;
    };
    let scheme = &value.as_bytes()[..colon];
    scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme
            .iter()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'.' | b'-'))
}

fn starts_with_ignore_case(value: &str, prefix: &str) -> bool {
    value.len() >= prefix.len()
        && value.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// Resolves `requested` against the directory of `from`; `None` when it is not a workspace path.
pub fn resolve_local_path(from: &str, requested: &str) -> Option<String> {
    let raw = requested.trim();
    let raw = raw.split(['?', '#']).next().unwrap_or_default();
    let path = decode_local_reference(raw)?;
    if path.is_empty() || path.starts_with("//") || path.starts_with('#') || has_scheme(&path) {
        return None;
    }
    let mut segments: Vec<&str> = Vec::new();
    if !path.starts_with('/') {
        segments.extend(from.split('/'));
        segments.pop();
    }
    let mut normalized: Vec<&str> = Vec::new();
    for segment in segments.into_iter().chain(path.split('/')) {
        match segment {
            "" | "." => {}
            ".." => {
                normalized.pop();
            }
            other => normalized.push(other),
        }
    }
    (!normalized.is_empty()).then(|| normalized.join("/"))
}

/// Extensions an extensionless import from a TypeScript or JSX module tries, in order.
pub const PROBED_MODULE_EXTENSIONS: [&str; 6] = [".tsx", ".ts", ".jsx", ".js", ".mts", ".mjs"];

/// `https://context-action.local/workspace-module/<each segment encodeURIComponent'd>`.
pub fn workspace_module_specifier(path: &str) -> String {
    let mut specifier = String::from(WORKSPACE_MODULE_SPECIFIER_PREFIX);
    push_encoded_path(&mut specifier, path);
    specifier
}

/// Appends `path` with every segment encoded like `encodeURIComponent`.
pub(crate) fn push_encoded_path(out: &mut String, path: &str) {
    for (index, segment) in path.split('/').enumerate() {
        if index > 0 {
            out.push('/');
        }
        out.extend(utf8_percent_encode(segment, URI_COMPONENT));
    }
}

/// A `data:` JavaScript module whose evaluation throws `reason`. It declares `exports` (the
/// names its importer asks for), so linking succeeds and the importer sees `reason` rather
/// than a "does not provide an export named" error.
pub(crate) fn throwing_module_url(reason: &str, exports: &[String]) -> String {
    let mut body = format!("throw new Error({});", json_string(reason));
    if !exports.is_empty() {
        let bindings: Vec<String> = (0..exports.len())
            .map(|index| format!("__{index}"))
            .collect();
        let names: Vec<String> = exports
            .iter()
            .enumerate()
            .map(|(index, name)| format!("__{index} as {}", json_string(name)))
            .collect();
        body.push_str(&format!(
            "let {};export{{{}}};",
            bindings.join(","),
            names.join(",")
        ));
    }
    let mut url = String::from("data:text/javascript;charset=utf-8,");
    url.extend(utf8_percent_encode(&body, DATA_URL_COMPONENT));
    url
}

/// A JSON string literal, as `JSON.stringify` would write it.
pub(crate) fn json_string(value: &str) -> String {
    serde_json::Value::from(value).to_string()
}

/// Classifications remembered across the compiles of an incremental compiler: a reference's
/// class depends on the referencing path and the text alone. Answers no compile asked for are
/// dropped after it.
#[derive(Debug, Default)]
pub(crate) struct ReferenceCache {
    by_source: HashMap<Box<str>, Answers>,
    generation: u64,
}

/// Classes by reference text, with the last compile that asked.
type Answers = HashMap<Box<str>, (Reference, u64)>;

impl ReferenceCache {
    pub(crate) fn start_compile(&mut self) {
        self.generation += 1;
    }

    pub(crate) fn finish_compile(&mut self) {
        let generation = self.generation;
        self.by_source.retain(|_, answers| {
            answers.retain(|_, (_, used)| *used == generation);
            !answers.is_empty()
        });
    }

    fn classify(&mut self, from: &str, requested: &str) -> Reference {
        let generation = self.generation;
        if let Some((reference, used)) = self
            .by_source
            .get_mut(from)
            .and_then(|answers| answers.get_mut(requested))
        {
            *used = generation;
            return reference.clone();
        }
        let reference = classify_reference(from, requested);
        self.by_source
            .entry(from.into())
            .or_default()
            .insert(requested.into(), (reference.clone(), generation));
        reference
    }
}

/// The workspace snapshot, indexed by path. The first file with a path wins, like `Array.find`.
///
/// While a reusable piece renders (see the compiler's `pieces`), the index notes the position of
/// each file whose content it hands out: those are the files the piece depends on.
pub(crate) struct WorkspaceIndex<'a> {
    files: &'a [WorkspaceFile],
    by_path: HashMap<&'a str, u32>,
    reads: RefCell<Option<Vec<u32>>>,
    references: Option<RefCell<&'a mut ReferenceCache>>,
}

impl<'a> WorkspaceIndex<'a> {
    pub(crate) fn new(files: &'a [WorkspaceFile]) -> Self {
        Self::remembering(files, None)
    }

    /// An index that classifies references through `references` when given.
    pub(crate) fn remembering(
        files: &'a [WorkspaceFile],
        references: Option<&'a mut ReferenceCache>,
    ) -> Self {
        let mut by_path = HashMap::with_capacity(files.len());
        for (position, file) in files.iter().enumerate() {
            let position = u32::try_from(position).unwrap_or(u32::MAX);
            by_path.entry(file.path.as_str()).or_insert(position);
        }
        Self {
            files,
            by_path,
            reads: RefCell::new(None),
            references: references.map(RefCell::new),
        }
    }

    /// [`classify_reference`], remembered across compiles when the index has a cache.
    pub(crate) fn classify(&self, from: &str, requested: &str) -> Reference {
        match &self.references {
            Some(cache) => cache.borrow_mut().classify(from, requested),
            None => classify_reference(from, requested),
        }
    }

    /// The snapshot, in order.
    pub(crate) fn files(&self) -> &'a [WorkspaceFile] {
        self.files
    }

    /// `index.html`, else the first HTML file in snapshot order.
    pub(crate) fn entry(&self) -> Option<&'a WorkspaceFile> {
        self.get("index.html")
            .filter(|file| file.source().is_some())
            .or_else(|| {
                self.files
                    .iter()
                    .find(|file| file.language == Language::Html && file.source().is_some())
            })
    }

    pub(crate) fn get(&self, path: &str) -> Option<&'a WorkspaceFile> {
        self.position(path)
            .map(|position| &self.files[position as usize])
    }

    /// Where the file at `path` is in the snapshot.
    pub(crate) fn position(&self, path: &str) -> Option<u32> {
        self.by_path.get(path).copied()
    }

    /// The text file at `path` if its language matches (stylesheets must be CSS, scripts JavaScript).
    pub(crate) fn text_of(&self, path: &str, language: Language) -> Option<(&'a str, &'a str)> {
        let position = self.position(path)?;
        let file = &self.files[position as usize];
        if file.language != language {
            return None;
        }
        let source = file.source()?;
        self.note_read(position);
        Some((file.path.as_str(), source))
    }

    /// The path of the text file at `path` if its language matches, without reading it.
    pub(crate) fn text_path(&self, path: &str, language: Language) -> Option<&'a str> {
        let file = self.get(path)?;
        (file.language == language && !file.is_asset()).then_some(file.path.as_str())
    }

    /// Resolves a reference from `from` to a text file of `language`.
    pub(crate) fn find_text(
        &self,
        from: &str,
        requested: &str,
        language: Language,
    ) -> Option<(&'a str, &'a str)> {
        let Reference::Local(Some(path)) = self.classify(from, requested) else {
            return None;
        };
        self.text_of(&path, language)
    }

    /// The script (JavaScript or TypeScript) file at `path`.
    pub(crate) fn script_of(&self, path: &str) -> Option<(&'a str, &'a str)> {
        self.text_of(path, Language::Javascript)
            .or_else(|| self.text_of(path, Language::Typescript))
    }

    /// Resolves a module script reference from `from` to a script file.
    pub(crate) fn find_script(&self, from: &str, requested: &str) -> Option<(&'a str, &'a str)> {
        let Reference::Local(Some(path)) = self.classify(from, requested) else {
            return None;
        };
        self.script_of(&path)
    }

    /// The script file a module import of `path` loads, without reading it. With `probe` (an
    /// import written in TypeScript or JSX, resolved the way their bundlers do) a path that is
    /// no script also tries, in order: the TypeScript twin of a `.js`/`.jsx`/`.mjs` path, the
    /// path with each of [`PROBED_MODULE_EXTENSIONS`], and `index` with each in the folder.
    pub(crate) fn module_path(&self, path: &str, probe: bool) -> Option<&'a str> {
        let script = |candidate: &str| {
            self.text_path(candidate, Language::Javascript)
                .or_else(|| self.text_path(candidate, Language::Typescript))
        };
        if let Some(found) = script(path) {
            return Some(found);
        }
        if !probe {
            return None;
        }
        let twins: &[(&str, &[&str])] = &[
            (".js", &[".ts", ".tsx"]),
            (".jsx", &[".tsx"]),
            (".mjs", &[".mts"]),
        ];
        for (written, replacements) in twins {
            if let Some(stem) = path.strip_suffix(written) {
                for replacement in *replacements {
                    if let Some(found) = script(&format!("{stem}{replacement}")) {
                        return Some(found);
                    }
                }
            }
        }
        PROBED_MODULE_EXTENSIONS
            .iter()
            .map(|extension| format!("{path}{extension}"))
            .chain(
                PROBED_MODULE_EXTENSIONS
                    .iter()
                    .map(|extension| format!("{path}/index{extension}")),
            )
            .find_map(|candidate| script(&candidate))
    }

    /// Whether any file has this path (diagnostics treat any language as present).
    pub(crate) fn exists(&self, path: &str) -> bool {
        self.by_path.contains_key(path)
    }

    /// Notes that the piece being rendered depends on the content at `position`.
    pub(crate) fn note_read(&self, position: u32) {
        if let Some(reads) = self.reads.borrow_mut().as_mut() {
            reads.push(position);
        }
    }

    /// [`Self::note_read`] of the file at `path`.
    pub(crate) fn note_read_of(&self, path: &str) {
        if let Some(position) = self.position(path) {
            self.note_read(position);
        }
    }

    /// Starts noting reads for a piece.
    pub(crate) fn start_noting_reads(&self) {
        *self.reads.borrow_mut() = Some(Vec::new());
    }

    /// The positions read since [`Self::start_noting_reads`], sorted, each once.
    pub(crate) fn stop_noting_reads(&self) -> Vec<u32> {
        let mut reads = self.reads.borrow_mut().take().unwrap_or_default();
        reads.sort_unstable();
        reads.dedup();
        reads
    }

    /// The position of the file whose source text starts at `address`.
    pub(crate) fn position_of_source(&self, address: usize) -> Option<usize> {
        self.files.iter().position(|file| {
            file.source()
                .is_some_and(|source| source.as_ptr() as usize == address)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_to_the_referencing_directory() {
        assert_eq!(
            resolve_local_path("pages/a/index.html", "../b.css").as_deref(),
            Some("pages/b.css")
        );
        assert_eq!(
            resolve_local_path("pages/index.html", "./x/./y.js").as_deref(),
            Some("pages/x/y.js")
        );
        assert_eq!(
            resolve_local_path("pages/index.html", "/root.css").as_deref(),
            Some("root.css")
        );
        assert_eq!(
            resolve_local_path("index.html", "../../../a.css").as_deref(),
            Some("a.css"),
            "clamped at root"
        );
    }

    #[test]
    fn cuts_queries_and_fragments_and_decodes() {
        assert_eq!(
            resolve_local_path("index.html", " app.css?v=2#x ").as_deref(),
            Some("app.css")
        );
        assert_eq!(
            resolve_local_path("index.html", "img/my%20photo.png").as_deref(),
            Some("img/my photo.png")
        );
        assert_eq!(
            resolve_local_path("index.html", "img/my photo.png").as_deref(),
            Some("img/my photo.png")
        );
        assert_eq!(resolve_local_path("index.html", "bad%zz.css"), None);
    }

    #[test]
    fn rejects_empty_external_and_fragment_only_references() {
        for value in [
            "",
            "?x",
            "#top",
            "https://x.test/a.css",
            "//cdn.test/a.js",
            "data:text/css,a",
            "mailto:x",
            ".",
        ] {
            assert_eq!(resolve_local_path("index.html", value), None, "{value}");
        }
        assert_eq!(
            resolve_local_path("index.html", "%2F%2Fhost/a.css"),
            None,
            "decoded protocol-relative"
        );
    }

    #[test]
    fn classifies_ignored_external_and_local_references() {
        for value in ["", "  ", "#a", "DATA:x", "blob:abc", "JavaScript:void(0)"] {
            assert_eq!(
                classify_reference("index.html", value),
                Reference::Ignored,
                "{value}"
            );
        }
        for value in ["https://a.test/x", "//a.test/x", "ftp+x.y-z:abc"] {
            assert_eq!(
                classify_reference("index.html", value),
                Reference::External,
                "{value}"
            );
        }
        assert_eq!(
            classify_reference("a/index.html", "b.js"),
            Reference::Local(Some("a/b.js".into()))
        );
        assert_eq!(
            classify_reference("index.html", "1http:x"),
            Reference::Local(Some("1http:x".into()))
        );
    }

    #[test]
    fn module_specifiers_encode_each_segment() {
        assert_eq!(
            workspace_module_specifier("src/card file.js"),
            "https://context-action.local/workspace-module/src/card%20file.js"
        );
        assert_eq!(
            workspace_module_specifier("a/(b)!~*'.js"),
            "https://context-action.local/workspace-module/a/(b)!~*'.js"
        );
        assert_eq!(
            workspace_module_specifier("é.js"),
            "https://context-action.local/workspace-module/%C3%A9.js"
        );
    }

    #[test]
    fn throwing_modules_escape_like_the_reference() {
        assert_eq!(
            throwing_module_url("Missing local module import: ./x's.js", &[]),
            "data:text/javascript;charset=utf-8,throw%20new%20Error%28%22Missing%20local%20module%20import%3A%20.%2Fx%27s.js%22%29%3B"
        );
    }

    #[test]
    fn throwing_modules_declare_the_requested_exports() {
        let url = throwing_module_url("x", &["a".into(), "default".into()]);
        let body = percent_encoding::percent_decode_str(url.split_once(',').unwrap().1)
            .decode_utf8()
            .unwrap();
        assert_eq!(
            body,
            r#"throw new Error("x");let __0,__1;export{__0 as "a",__1 as "default"};"#
        );
    }

    #[test]
    fn entry_prefers_index_html_then_first_html() {
        let files = vec![
            WorkspaceFile::text("b.html", "b"),
            WorkspaceFile::text("a.html", "a"),
            WorkspaceFile::text("index.html", "i"),
        ];
        assert_eq!(
            WorkspaceIndex::new(&files).entry().unwrap().path,
            "index.html"
        );
        let files = vec![
            WorkspaceFile::text("app.js", ""),
            WorkspaceFile::text("b.html", ""),
            WorkspaceFile::text("a.html", ""),
        ];
        assert_eq!(WorkspaceIndex::new(&files).entry().unwrap().path, "b.html");
        assert!(
            WorkspaceIndex::new(&[WorkspaceFile::text("a.css", "")])
                .entry()
                .is_none()
        );
    }
}
