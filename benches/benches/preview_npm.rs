//! npm projects in the preview (issue 57) on create-vite's react-ts template as `npm create vite`
//! writes it, with React 19 and react-dom installed in `node_modules` (the template comes from
//! the `create-vite` package and the packages from `live-code-editor/tests/fixtures/npm`, both
//! installed by `scripts/test.sh`; without them the bench is skipped with a note). Ratios from
//! interleaved runs in the same process (see `workspace_benches::interleaved`):
//!
//! - the full export compile, resolving, reading and wrapping every package file afresh (a new
//!   `Packages`), against `esbuild --bundle` of the same folder (one process per run); goal: at
//!   most 1×. The same compile with the packages already read (the studio's and a watch loop's
//!   case) is printed beside it;
//! - an incremental preview compile after a one-file edit of `src/App.tsx`, with React in the
//!   graph, against a full preview compile; goal: at most 10 ms.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use live_code_editor::WorkspaceFile;
use live_code_editor::file::is_asset_path;
use live_code_editor::preview::{
    IncrementalPreviewCompiler, Packages, PreviewOptions, compile_preview,
};

/// Rounds of each interleaved ratio.
const RATIO_ROUNDS: usize = 30;

/// The file the incremental bench edits, and the text it alternates.
const EDITED: &str = "src/App.tsx";
const EDITED_TEXT: [&str; 2] = ["count is {count}", "clicked {count} times"];

fn fixture_node_modules() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../live-code-editor/tests/fixtures/npm/node_modules")
}

/// `ESBUILD_BIN`, else the npm peer installed by `scripts/test.sh`.
fn esbuild_bin() -> Option<PathBuf> {
    let bin = std::env::var_os("ESBUILD_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../examples/tests/mcp_node/node_modules/.bin/esbuild")
        });
    bin.is_file().then_some(bin)
}

/// Copies the template into `root` as `npm create vite` does and links the packages.
fn create_site(root: &Path) {
    let template = fixture_node_modules().join("create-vite/template-react-ts");
    let mut pending = vec![template.clone()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let relative = path.strip_prefix(&template).unwrap().to_string_lossy();
            let target = root.join(relative.replace("_gitignore", ".gitignore"));
            if path.is_dir() {
                std::fs::create_dir_all(&target).unwrap();
                pending.push(path);
            } else {
                std::fs::copy(&path, &target).unwrap();
            }
        }
    }
    std::os::unix::fs::symlink(fixture_node_modules(), root.join("node_modules")).unwrap();
}

/// The site's own files as a workspace (what a folder import reads: no `node_modules`).
fn read_workspace(root: &Path) -> Vec<WorkspaceFile> {
    let mut files = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|name| name == "node_modules") {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let bytes = std::fs::read(&path).unwrap();
            files.push(if is_asset_path(&relative) {
                WorkspaceFile::asset(relative, bytes)
            } else {
                WorkspaceFile::text(relative, String::from_utf8(bytes).unwrap())
            });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

/// esbuild's copy of the site: it has no `public/` folder, so the logo is imported from there.
fn esbuild_site(root: &Path) {
    create_site(root);
    let app = root.join(EDITED);
    let text = std::fs::read_to_string(&app).unwrap();
    std::fs::write(&app, text.replace("'/vite.svg'", "'../public/vite.svg'")).unwrap();
}

fn run_esbuild(bin: &Path, site: &Path, out: &Path) {
    let output = Command::new(bin)
        .current_dir(site)
        .args([
            "src/main.tsx",
            "--bundle",
            "--format=esm",
            "--jsx=automatic",
        ])
        .args(["--loader:.svg=dataurl", "--log-level=warning"])
        .arg(format!("--outfile={}", out.display()))
        .output()
        .expect("run esbuild");
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "esbuild: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The workspace with `src/App.tsx` alternating between two texts, one per edit.
struct AlternatingEdit {
    files: Vec<WorkspaceFile>,
    index: usize,
    contents: [String; 2],
    edits: usize,
}

impl AlternatingEdit {
    fn new(files: Vec<WorkspaceFile>) -> Self {
        let index = files.iter().position(|file| file.path == EDITED).unwrap();
        let original = files[index].source().unwrap().to_owned();
        assert!(original.contains(EDITED_TEXT[0]), "the template's App.tsx");
        let contents = [
            original.clone(),
            original.replace(EDITED_TEXT[0], EDITED_TEXT[1]),
        ];
        Self {
            files,
            index,
            contents,
            edits: 0,
        }
    }

    fn edit(&mut self) -> &[WorkspaceFile] {
        self.edits += 1;
        self.files[self.index] = WorkspaceFile::text(EDITED, self.contents[self.edits % 2].clone());
        &self.files
    }
}

fn export_options(root: &Path) -> PreviewOptions {
    PreviewOptions::export().with_packages(Packages::folder(root))
}

fn print_esbuild_ratios(bin: &Path, root: &Path, files: &[WorkspaceFile]) {
    let esbuild_root = tempfile::tempdir().unwrap();
    esbuild_site(esbuild_root.path());
    let out = esbuild_root.path().join("bundle.js");
    run_esbuild(bin, esbuild_root.path(), &out);
    eprintln!(
        "preview npm bench: esbuild {} bytes out",
        std::fs::metadata(&out).unwrap().len()
    );
    let cold = workspace_benches::interleaved(
        RATIO_ROUNDS,
        || {
            black_box(compile_preview(files, &export_options(root)));
        },
        || run_esbuild(bin, esbuild_root.path(), &out),
    );
    eprintln!(
        "preview npm ratio: export compile with every package read and wrapped afresh {:?}, esbuild --bundle {:?}: {:.2}x esbuild's time (goal <= 1x)",
        cold.subject,
        cold.baseline,
        cold.times()
    );
    let warm_options = export_options(root);
    compile_preview(files, &warm_options);
    let warm = workspace_benches::interleaved(
        RATIO_ROUNDS,
        || {
            black_box(compile_preview(files, &warm_options));
        },
        || run_esbuild(bin, esbuild_root.path(), &out),
    );
    eprintln!(
        "preview npm ratio: export compile with the packages already read {:?}, esbuild --bundle {:?}: {:.2}x esbuild's time",
        warm.subject,
        warm.baseline,
        warm.times()
    );
}

fn print_incremental_ratio(root: &Path, files: &[WorkspaceFile]) {
    let preview = PreviewOptions::preview(Some(1), "/preview/1/assets/")
        .with_packages(Packages::folder(root));
    let mut edited = AlternatingEdit::new(files.to_vec());
    let mut incremental = IncrementalPreviewCompiler::new();
    incremental.compile(&edited.files, &preview);
    let compiled = incremental.compile(edited.edit(), &preview);
    assert!(compiled.html.contains("clicked"), "the edit is compiled");
    assert_eq!(
        compiled,
        compile_preview(&edited.files, &preview),
        "incremental equals full"
    );
    let ratio = workspace_benches::interleaved(
        RATIO_ROUNDS,
        || {
            black_box(incremental.compile(edited.edit(), &preview));
        },
        || {
            black_box(compile_preview(files, &preview));
        },
    );
    eprintln!(
        "preview npm ratio: incremental preview compile after editing {EDITED} (React in the graph) {:?}, full preview compile {:?}: {:.1}x faster (goal <= 10 ms)",
        ratio.subject,
        ratio.baseline,
        ratio.faster()
    );
}

fn preview_npm_benches(c: &mut Criterion) {
    if !fixture_node_modules()
        .join("create-vite/template-react-ts")
        .is_dir()
    {
        eprintln!(
            "preview npm bench: the fixture packages are not installed (`npm ci` in live-code-editor/tests/fixtures/npm, or `bash scripts/test.sh`); skipped"
        );
        return;
    }
    let site = tempfile::tempdir().unwrap();
    create_site(site.path());
    let files = read_workspace(site.path());
    let compiled = compile_preview(&files, &export_options(site.path()));
    assert!(
        compiled.diagnostics.is_empty(),
        "the template compiles whole: {:?}",
        compiled.diagnostics
    );
    eprintln!(
        "preview npm bench: {} workspace files; export {} bytes out",
        files.len(),
        compiled.html.len()
    );
    let esbuild = esbuild_bin();
    match &esbuild {
        Some(bin) => print_esbuild_ratios(bin, site.path(), &files),
        None => {
            eprintln!("preview npm bench: esbuild not found (ESBUILD_BIN); esbuild ratios skipped")
        }
    }
    print_incremental_ratio(site.path(), &files);

    let mut group = c.benchmark_group("preview_npm");
    group.sample_size(20);
    group.bench_function("compile_export_packages_afresh", |b| {
        b.iter(|| black_box(compile_preview(&files, &export_options(site.path()))))
    });
    let preview = PreviewOptions::preview(Some(1), "/preview/1/assets/")
        .with_packages(Packages::folder(site.path()));
    let mut edited = AlternatingEdit::new(files.clone());
    let mut incremental = IncrementalPreviewCompiler::new();
    incremental.compile(&edited.files, &preview);
    group.bench_function("compile_preview_incremental_app_edit", |b| {
        b.iter(|| black_box(incremental.compile(edited.edit(), &preview)))
    });
    group.finish();
}

criterion_group!(benches, preview_npm_benches);
criterion_main!(benches);
