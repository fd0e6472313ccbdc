//! The preview compiler (HTML, CSS and JavaScript): it turns whatever a model, a browser or a
//! folder wrote into one sandboxed document. Input: one option byte, then files separated by
//! NUL, each `path\ncontent` (the first file without a path line is `index.html`). Whatever
//! the workspace, the document stays within the output cap, the diagnostic list within its
//! bound, every diagnostic is bounded by the text it points into, and an incremental compile
//! after a neighbouring revision equals the full compile. With option bit 6, files under
//! `node_modules/` are installed packages instead (hostile `package.json`, CommonJS and
//! ES module package files), read through `PackageFiles`.
#![no_main]

use std::collections::BTreeMap;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use live_code_editor::file::is_asset_path;
use live_code_editor::preview::{
    DEFAULT_MAX_PREVIEW_OUTPUT_BYTES, DiagnosticKind, IncrementalPreviewCompiler,
    MAX_PREVIEW_DIAGNOSTICS, NODE_MODULES, PackageFiles, Packages, PreviewDiagnostic,
};
use live_code_editor::workspace::model::validate_path;
use live_code_editor::{CompiledPreview, Language, PreviewOptions, WorkspaceFile, compile_preview};

/// Output caps to run under: the default and caps small enough that inlining hits them.
const CAPS: [usize; 8] = [
    DEFAULT_MAX_PREVIEW_OUTPUT_BYTES,
    0,
    1,
    64,
    1024,
    16 * 1024,
    256 * 1024,
    4 * 1024 * 1024,
];
/// Fixed parts of a document the cap does not cover: charset and CSP `<meta>`, the bridge
/// script and the module bootstrap runtime.
const FIXED_OVERHEAD_BYTES: usize = 64 * 1024;
/// Longest fixed wording of a diagnostic message around the reference it quotes.
const MESSAGE_WORDING_BYTES: usize = 256;
/// A package diagnostic's fix quotes the specifier and its package name up to four times.
const MESSAGE_QUOTES: usize = 4;

/// Package files from the input.
struct InputPackages(BTreeMap<String, Arc<str>>);

impl PackageFiles for InputPackages {
    fn read(&self, path: &str) -> Option<Arc<str>> {
        self.0.get(path).cloned()
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&option, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let all_files = workspace_files(text);
    let (packages, files): (Vec<WorkspaceFile>, Vec<WorkspaceFile>) = all_files
        .iter()
        .cloned()
        .partition(|file| option & 64 != 0 && file.path.starts_with(NODE_MODULES));
    let mut options = if option & 1 == 0 {
        PreviewOptions::preview((option & 2 != 0).then_some(7), "/preview/7/assets/")
    } else {
        PreviewOptions::export()
    };
    options.content_security_policy = option & 4 == 0;
    options.max_output_bytes = CAPS[usize::from(option >> 3) & 7];
    if option & 64 != 0 {
        let texts = packages
            .iter()
            .filter_map(|file| Some((file.path.clone(), Arc::from(file.source()?))))
            .collect();
        options = options.with_packages(Packages::new(InputPackages(texts)));
    }
    let compiled = compile_preview(&files, &options);
    assert_document_bounded(&files, &compiled, options.max_output_bytes);
    for diagnostic in &compiled.diagnostics {
        assert_diagnostic_bounded(&all_files, diagnostic);
    }
    // The incremental compiler, having compiled a neighbouring revision (the last file cut in
    // half), reuses what still holds and must still write exactly the full compile's result.
    let mut incremental = IncrementalPreviewCompiler::new();
    let neighbour = neighbouring_revision(&files);
    assert_eq!(
        incremental.compile(&neighbour, &options),
        compile_preview(&neighbour, &options)
    );
    assert_eq!(incremental.compile(&files, &options), compiled);
});

/// `files` with the last text file's content cut in half.
fn neighbouring_revision(files: &[WorkspaceFile]) -> Vec<WorkspaceFile> {
    let mut neighbour = files.to_vec();
    if let Some(file) = neighbour.iter_mut().rev().find(|file| !file.is_asset())
        && let Some(source) = file.source()
    {
        let half = source.chars().count() / 2;
        let cut: String = source.chars().take(half).collect();
        *file = WorkspaceFile::text(file.path.clone(), cut);
    }
    neighbour
}

/// Splits the input into a workspace: normalized, distinct paths (as a workspace stores them),
/// assets by extension.
fn workspace_files(text: &str) -> Vec<WorkspaceFile> {
    let mut files = BTreeMap::new();
    for (index, chunk) in text.split('\0').enumerate() {
        let (path, content) = match (index, chunk.split_once('\n')) {
            (0, _) => ("index.html", chunk),
            (_, Some(split)) => split,
            (_, None) => (chunk, ""),
        };
        let Ok(path) = validate_path(path) else {
            continue;
        };
        let file = if is_asset_path(&path) {
            WorkspaceFile::asset(path.clone(), content.as_bytes().to_vec())
        } else {
            WorkspaceFile::text(path.clone(), content)
        };
        files.entry(path).or_insert(file);
    }
    files.into_values().collect()
}

fn assert_document_bounded(files: &[WorkspaceFile], compiled: &CompiledPreview, cap: usize) {
    let has_html = files
        .iter()
        .any(|file| !file.is_asset() && file.language == Language::Html);
    assert_eq!(compiled.entry_required, !has_html);
    assert_eq!(compiled.entry.is_none(), compiled.entry_required);
    if compiled.entry_required {
        assert!(compiled.diagnostics.is_empty());
    }
    assert!(
        compiled.diagnostics.len() <= MAX_PREVIEW_DIAGNOSTICS,
        "{} diagnostics",
        compiled.diagnostics.len()
    );
    let entry_len = compiled
        .entry
        .as_ref()
        .and_then(|entry| files.iter().find(|file| &file.path == entry))
        .and_then(WorkspaceFile::source)
        .map_or(0, str::len);
    // The entry is rewritten in place (escaping and per-element replacements at most triple
    // it); everything inlined from other files is charged to the cap.
    let bound = entry_len.saturating_mul(3) + cap.min(1 << 30) + FIXED_OVERHEAD_BYTES;
    assert!(
        compiled.html.len() <= bound,
        "document of {} bytes over its bound {bound} (entry {entry_len}, cap {cap})",
        compiled.html.len()
    );
    if compiled.output_limited() {
        assert!(
            compiled.has_errors(),
            "a cut document must count as an error"
        );
    }
}

fn assert_diagnostic_bounded(files: &[WorkspaceFile], diagnostic: &PreviewDiagnostic) {
    let source = files
        .iter()
        .find(|file| file.path == diagnostic.source_path)
        .unwrap_or_else(|| panic!("diagnostic names no workspace file: {diagnostic:?}"));
    let longest = files
        .iter()
        .map(|file| {
            file.source()
                .map_or(file.path.len(), str::len)
                .max(file.path.len())
        })
        .max()
        .unwrap_or(0);
    assert!(
        diagnostic.requested_path.len() <= longest,
        "requested path longer than any file: {diagnostic:?}"
    );
    assert_eq!(diagnostic.requested_path.trim(), diagnostic.requested_path);
    assert!(
        diagnostic.message.len() <= MESSAGE_WORDING_BYTES + MESSAGE_QUOTES * longest,
        "message of {} bytes: {diagnostic:?}",
        diagnostic.message.len()
    );
    if diagnostic.kind != DiagnosticKind::OutputLimit {
        assert!(!diagnostic.message.is_empty());
    }
    if let (Some(line), Some(column)) = (diagnostic.line, diagnostic.column) {
        let text = source.source().unwrap_or_default();
        let lines = text.split('\n').count();
        assert!(
            line >= 1 && line as usize <= lines,
            "line {line} of {lines}: {diagnostic:?}"
        );
        assert!(column >= 1, "column {column}");
        let longest_line = text
            .split('\n')
            .map(|line| line.chars().count())
            .max()
            .unwrap_or(0);
        assert!(
            column as usize <= longest_line + 1,
            "column {column}: {diagnostic:?}"
        );
    } else {
        assert_eq!(diagnostic.line, diagnostic.column, "half a position");
    }
}
