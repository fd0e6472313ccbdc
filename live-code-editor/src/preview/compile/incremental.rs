//! The incremental compiler: compiles one workspace revision after another, deriving per-file
//! results and rendering document pieces again only where the files they read changed.

use super::compile_with_memo;
use super::memo::ScanMemo;
use super::pieces::Reuse;
use crate::file::WorkspaceFile;
use crate::preview::{CompiledPreview, PreviewOptions};

/// Compiles successive revisions of a workspace, each exactly as [`super::compile_preview`]
/// would, while keeping
///
/// - what it derived from each file (stylesheet references, module requests, the HTML scan,
///   `data:` URLs of assets), keyed by path and checked against the file's bytes;
/// - the pieces of the document it rendered (each linked stylesheet inlined, each classic script
///   escaped, each module rewritten, each stylesheet's diagnostics) with the files each read,
///   the diagnostics it reported and the output budget it took, reused while the workspace
///   layout (paths, languages, kinds) and asset URL form are unchanged and those files hold the
///   same bytes;
/// - the entry rewritten into a template with a slot per piece, refilled while the entry, the
///   plan's shape and its asset URLs are unchanged.
///
/// After a one-file edit only that file is parsed and only the pieces that read it are
/// rendered again; the document is the template filled with the pieces.
///
/// It holds what the last compile used and nothing more: results of files a revision no longer
/// references are dropped after that compile.
///
/// ```
/// use live_code_editor::WorkspaceFile;
/// use live_code_editor::preview::{compile_preview, IncrementalPreviewCompiler, PreviewOptions};
///
/// let mut compiler = IncrementalPreviewCompiler::new();
/// let options = PreviewOptions::preview(Some(1), "/preview/1/assets/");
/// let mut files = vec![
///     WorkspaceFile::text("index.html", r#"<link rel="stylesheet" href="a.css"><h1>Hi</h1>"#),
///     WorkspaceFile::text("a.css", "h1 { color: teal }"),
/// ];
/// compiler.compile(&files, &options);
/// files[1] = WorkspaceFile::text("a.css", "h1 { color: navy }");
/// assert_eq!(compiler.compile(&files, &options), compile_preview(&files, &options));
/// ```
#[derive(Debug)]
pub struct IncrementalPreviewCompiler {
    memo: ScanMemo,
    reuse: Reuse,
}

impl Default for IncrementalPreviewCompiler {
    fn default() -> Self {
        Self::new()
    }
}

impl IncrementalPreviewCompiler {
    /// A compiler with nothing remembered yet.
    pub fn new() -> Self {
        Self {
            memo: ScanMemo::across_compiles(),
            reuse: Reuse::default(),
        }
    }

    /// Compiles `files`; the output equals `compile_preview(files, options)`.
    pub fn compile(
        &mut self,
        files: &[WorkspaceFile],
        options: &PreviewOptions,
    ) -> CompiledPreview {
        compile_with_memo(files, options, &mut self.memo, Some(&mut self.reuse))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(css: &str) -> Vec<WorkspaceFile> {
        vec![
            WorkspaceFile::text(
                "index.html",
                "<link rel=stylesheet href=a.css><link rel=stylesheet href=b.css><script type=module src=m.js></script><img src=i.png>",
            ),
            WorkspaceFile::text("a.css", css),
            WorkspaceFile::text("b.css", "p { background: url(i.png) }"),
            WorkspaceFile::text("m.js", "import './n.js';"),
            WorkspaceFile::text("n.js", "export const n = 1;"),
            WorkspaceFile::asset("i.png", vec![1, 2, 3]),
        ]
    }

    #[test]
    fn after_a_one_file_edit_only_that_file_is_derived_again() {
        let mut compiler = IncrementalPreviewCompiler::new();
        let options = PreviewOptions::export();
        compiler.compile(&site("a { color: red }"), &options);
        let first = compiler.memo.derived();
        assert_eq!(first, 6, "html, two stylesheets, two modules, one data URL");
        compiler.compile(&site("a { color: red }"), &options);
        assert_eq!(compiler.memo.derived(), first, "nothing changed");
        compiler.compile(&site("a { color: blue }"), &options);
        assert_eq!(compiler.memo.derived(), first + 1, "only a.css");
    }

    #[test]
    fn results_of_files_no_longer_referenced_are_dropped() {
        let mut compiler = IncrementalPreviewCompiler::new();
        let options = PreviewOptions::preview(Some(1), "/assets/");
        compiler.compile(&site(""), &options);
        let mut files = site("");
        files[0] = WorkspaceFile::text("index.html", "<h1>Hi</h1>");
        compiler.compile(&files, &options);
        let derived = compiler.memo.derived();
        compiler.compile(&site(""), &options);
        assert_eq!(
            compiler.memo.derived(),
            derived + 5,
            "the entry and its four sources were derived again"
        );
    }
}
