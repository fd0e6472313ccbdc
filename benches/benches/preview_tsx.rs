//! TypeScript/JSX preview compile time (issue 38) on a generated site of 200 `.tsx` modules
//! (each with an enum, an interface, a generic function, a type-only import and JSX), imported
//! from `src/main.tsx` as a binary tree, with `react/jsx-runtime` mapped by the entry's import map
//! to a small runtime written here. Measured in the same run, as ratios from interleaved runs
//! (see `workspace_benches::interleaved`):
//!
//! - the export compile against `esbuild --bundle` of the same site written to a temp dir (one
//!   process per run, as a person would compare them); goal: at most 1×. The esbuild binary is
//!   `ESBUILD_BIN`, else the npm peer in `examples/tests/mcp_node` (installed by
//!   `scripts/test.sh`); without it the esbuild ratio and bench are skipped with a note;
//! - an incremental preview compile after a one-file `.tsx` edit against a full preview compile
//!   of the same revision; goal: at least 10× faster. The edit alternates between two contents;
//!   the compiler keeps only what the last compile used, so each edit is transformed again.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use live_code_editor::WorkspaceFile;
use live_code_editor::preview::{IncrementalPreviewCompiler, PreviewOptions, compile_preview};

/// Generated `.tsx` modules besides `src/main.tsx`.
const MODULES: usize = 200;

/// The module whose content the incremental bench alternates (it has two children).
const EDITED: &str = "src/m042.tsx";

/// Import edges the compile follows: every module's runtime import counts, so a 200-module app
/// needs far more than the reference's 32 (the studio's bound).
const IMPORT_EDGES: usize = 4_096;

/// Export options of the bench.
fn export_options() -> PreviewOptions {
    PreviewOptions::export().with_max_module_import_edges(IMPORT_EDGES)
}

/// Preview options of the bench.
fn preview_options() -> PreviewOptions {
    PreviewOptions::preview(Some(1), "/preview/1/assets/key/")
        .with_max_module_import_edges(IMPORT_EDGES)
}

/// Rounds of each interleaved ratio.
const RATIO_ROUNDS: usize = 40;

const INDEX_HTML: &str = r#"<!doctype html>
<html>
<head>
  <meta charset="utf-8">
  <title>TSX bench</title>
  <script type="importmap">
    { "imports": { "react/jsx-runtime": "./vendor/jsx-runtime.js" } }
  </script>
  <script type="module" src="src/main.tsx"></script>
</head>
<body>
  <div id="root"></div>
</body>
</html>
"#;

/// A tiny automatic JSX runtime: elements are DOM nodes, function components are called.
const JSX_RUNTIME: &str = r#"export const Fragment = Symbol('Fragment');

function append(parent, child) {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) return child.forEach((each) => append(parent, each));
  parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
}

export function jsx(type, props) {
  const { children, ...rest } = props ?? {};
  if (typeof type === 'function') return type({ children, ...rest });
  const node = type === Fragment ? document.createDocumentFragment() : document.createElement(type);
  for (const [name, value] of Object.entries(rest)) {
    node.setAttribute(name === 'className' ? 'class' : name, value);
  }
  append(node, children);
  return node;
}

export const jsxs = jsx;
"#;

const MAIN_TSX: &str = r#"import { Tone000, View000 } from './m000';

const root = document.getElementById('root') as HTMLElement;
root.append(<View000 label="site" tone={Tone000.Low} />);
"#;

/// The children of module `index` in the import tree.
fn children(index: usize) -> impl Iterator<Item = usize> {
    [2 * index + 1, 2 * index + 2]
        .into_iter()
        .filter(|child| *child < MODULES)
}

/// Module `index`: its enum, props interface, a generic helper and a view rendering its
/// children's views. `heading` is the expression the incremental bench edits.
fn module_source(index: usize, heading: &str) -> String {
    let id = format!("{index:03}");
    let mut imports = String::new();
    let mut child_views = String::new();
    for child in children(index) {
        let child = format!("{child:03}");
        imports.push_str(&format!(
            "import {{ Tone{child}, View{child} }} from './m{child}';\nimport type {{ Props{child} }} from './m{child}';\n"
        ));
        child_views.push_str(&format!(
            "        <View{child} {{...({{ label: `${{label}}.{child}`, tone: Tone{child}.High }} satisfies Props{child})}} />\n"
        ));
    }
    format!(
        r#"{imports}
export enum Tone{id} {{
  Low = 'low',
  High = 'high',
}}

export interface Props{id} {{
  label: string;
  tone: Tone{id};
  items?: readonly number[];
}}

type Row = {{ id: number; text: string }};

function rows<T extends number>(items: readonly T[], label: string): Row[] {{
  return items.map((id) => ({{ id, text: `${{label}} #${{id}}` }}));
}}

export function View{id}({{ label, tone, items = [1, 2, 3] }}: Props{id}) {{
  const heading: string = {heading};
  return (
    <section className={{`view tone-${{tone}}`}} data-module="{id}">
      <h2 title={{heading}}>{{heading}}</h2>
      <ul>
        {{rows(items, label).map((row) => (
          <li key={{row.id}} data-id={{row.id}}>
            {{row.text}}
          </li>
        ))}}
      </ul>
      <>
{child_views}      </>
    </section>
  );
}}
"#
    )
}

/// The generated site as a workspace snapshot: entry, runtime, `src/main.tsx`, 200 modules.
fn generate_site() -> Vec<WorkspaceFile> {
    let mut files = vec![
        WorkspaceFile::text("index.html", INDEX_HTML),
        WorkspaceFile::text("vendor/jsx-runtime.js", JSX_RUNTIME),
        WorkspaceFile::text("src/main.tsx", MAIN_TSX),
    ];
    files.extend((0..MODULES).map(|index| {
        WorkspaceFile::text(
            format!("src/m{index:03}.tsx"),
            module_source(index, "label.toUpperCase()"),
        )
    }));
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

fn write_site(root: &Path, files: &[WorkspaceFile]) -> usize {
    files
        .iter()
        .map(|file| {
            let target = root.join(&file.path);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            let source = file.source().unwrap();
            std::fs::write(target, source).unwrap();
            source.len()
        })
        .sum()
}

/// Reads the site's files back from `root` (203 files: over the folder import's 200-file limit,
/// so not through `OsFolder`).
fn read_site(root: &Path, files: &[WorkspaceFile]) -> Vec<WorkspaceFile> {
    files
        .iter()
        .map(|file| {
            let source = std::fs::read_to_string(root.join(&file.path)).unwrap();
            WorkspaceFile::text(file.path.clone(), source)
        })
        .collect()
}

/// A workspace whose edited module alternates between two contents, one per edit.
struct AlternatingEdit {
    files: Vec<WorkspaceFile>,
    index: usize,
    contents: [String; 2],
    edits: usize,
}

impl AlternatingEdit {
    fn new(files: Vec<WorkspaceFile>) -> Self {
        let index = files.iter().position(|file| file.path == EDITED).unwrap();
        let number = EDITED.trim_start_matches("src/m").trim_end_matches(".tsx");
        let number: usize = number.parse().unwrap();
        let contents = [
            module_source(number, "label.toUpperCase()"),
            module_source(number, "`${label.toLowerCase()} (edited)`"),
        ];
        Self {
            files,
            index,
            contents,
            edits: 0,
        }
    }

    /// Writes the edited module's other content.
    fn edit(&mut self) -> &[WorkspaceFile] {
        self.edits += 1;
        let content = self.contents[self.edits % 2].clone();
        self.files[self.index] = WorkspaceFile::text(EDITED, content);
        &self.files
    }
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

fn esbuild_command(bin: &Path, site: &Path, out: &Path) -> Command {
    let mut command = Command::new(bin);
    command
        .current_dir(site)
        .args([
            "src/main.tsx",
            "--bundle",
            "--loader:.tsx=tsx",
            "--jsx=automatic",
            "--format=esm",
            // What the entry's import map says; esbuild resolves an alias from its working
            // directory.
            "--alias:react/jsx-runtime=./vendor/jsx-runtime.js",
            "--log-level=warning",
        ])
        .arg(format!("--outfile={}", out.display()));
    command
}

/// Bundles the site with esbuild into `out`; returns the bundle's size.
fn run_esbuild(bin: &Path, site: &Path, out: &Path) -> u64 {
    let status = esbuild_command(bin, site, out)
        .status()
        .expect("run esbuild");
    assert!(status.success(), "esbuild failed");
    std::fs::metadata(out).unwrap().len()
}

/// One checked esbuild run before any is timed: it exits 0, warns of nothing and bundles
/// every module.
fn check_esbuild(bin: &Path, site: &Path, out: &Path) {
    let output = esbuild_command(bin, site, out)
        .output()
        .expect("run esbuild");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stderr.trim().is_empty(),
        "esbuild {}: {stderr}",
        output.status
    );
    let bundle = std::fs::read_to_string(out).unwrap();
    let last = format!("View{:03}", MODULES - 1);
    assert!(
        bundle.contains(&last) && bundle.contains("Symbol(\"Fragment\")"),
        "the bundle holds every module and the runtime"
    );
    eprintln!("preview tsx bench: esbuild {} bytes out", bundle.len());
}

fn print_incremental_ratio(files: &[WorkspaceFile]) {
    let preview = preview_options();
    let mut edited = AlternatingEdit::new(files.to_vec());
    let mut incremental = IncrementalPreviewCompiler::new();
    incremental.compile(&edited.files, &preview);
    let compiled = incremental.compile(edited.edit(), &preview);
    assert!(compiled.html.contains("(edited)"), "the edit is compiled");
    assert_eq!(
        compiled,
        compile_preview(&edited.files, &preview),
        "the incremental compile equals the full compile"
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
        "preview tsx ratio: incremental preview compile after a one-file .tsx edit {:?}, full preview compile {:?}: {:.1}x faster (goal >= 10x)",
        ratio.subject,
        ratio.baseline,
        ratio.faster()
    );
}

fn print_esbuild_ratios(bin: &Path, site: &Path, files: &[WorkspaceFile]) {
    let export = export_options();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("bundle.js");
    let in_memory = workspace_benches::interleaved(
        RATIO_ROUNDS,
        || {
            black_box(compile_preview(files, &export));
        },
        || {
            black_box(run_esbuild(bin, site, &out));
        },
    );
    eprintln!(
        "preview tsx ratio: full export compile in memory {:?}, esbuild --bundle {:?}: {:.2}x esbuild's time (goal <= 1x)",
        in_memory.subject,
        in_memory.baseline,
        in_memory.times()
    );
    let with_read = workspace_benches::interleaved(
        RATIO_ROUNDS,
        || {
            black_box(compile_preview(&read_site(site, files), &export));
        },
        || {
            black_box(run_esbuild(bin, site, &out));
        },
    );
    eprintln!(
        "preview tsx ratio: read the files + full export compile {:?}, esbuild --bundle {:?}: {:.2}x esbuild's time",
        with_read.subject,
        with_read.baseline,
        with_read.times()
    );
}

fn preview_tsx_benches(c: &mut Criterion) {
    let site = tempfile::tempdir().unwrap();
    let files = generate_site();
    let bytes_in = write_site(site.path(), &files);
    assert!(
        read_site(site.path(), &files) == files,
        "the folder holds the generated site"
    );
    let export = export_options();
    let compiled = compile_preview(&files, &export);
    // A ratio against esbuild means nothing unless every module compiled: in particular an
    // import past the edge limit becomes a throwing stub instead of a compiled module.
    assert!(
        compiled.diagnostics.is_empty(),
        "the site must compile whole ({} diagnostics; {IMPORT_EDGES} import edges), first: {:?}",
        compiled.diagnostics.len(),
        compiled.diagnostics.first()
    );
    // The 200 modules, main.tsx and the runtime.
    assert_eq!(compiled.module_count, MODULES + 2);
    eprintln!(
        "preview tsx bench: {} files, {bytes_in} bytes in; export {} bytes out",
        files.len(),
        compiled.html.len()
    );
    let esbuild = esbuild_bin();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("bundle.js");
    match &esbuild {
        Some(bin) => {
            check_esbuild(bin, site.path(), &out);
            print_esbuild_ratios(bin, site.path(), &files);
        }
        None => eprintln!(
            "preview tsx bench: esbuild not found (set ESBUILD_BIN, or run `bash scripts/test.sh`, which installs it in examples/tests/mcp_node); esbuild ratios and bench skipped"
        ),
    }
    print_incremental_ratio(&files);

    let mut group = c.benchmark_group("preview_tsx");
    group.sample_size(20);
    group.bench_function("compile_export_full", |b| {
        b.iter(|| black_box(compile_preview(black_box(&files), &export)))
    });
    group.bench_function("read_files_and_compile_export", |b| {
        b.iter(|| black_box(compile_preview(&read_site(site.path(), &files), &export)))
    });
    let preview = preview_options();
    group.bench_function("compile_preview_full", |b| {
        b.iter(|| black_box(compile_preview(black_box(&files), &preview)))
    });
    let mut edited = AlternatingEdit::new(files.clone());
    let mut incremental = IncrementalPreviewCompiler::new();
    incremental.compile(&edited.files, &preview);
    group.bench_function("compile_preview_incremental_one_tsx_edit", |b| {
        b.iter(|| black_box(incremental.compile(edited.edit(), &preview)))
    });
    if let Some(bin) = &esbuild {
        group.bench_function("esbuild_bundle", |b| {
            b.iter(|| black_box(run_esbuild(bin, site.path(), &out)))
        });
    }
    group.finish();
}

criterion_group!(benches, preview_tsx_benches);
criterion_main!(benches);
