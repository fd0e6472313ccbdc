//! Preview compiler throughput on a generated 200-file, ~2 MB site, against peers measured in
//! the same run:
//!
//! - `monolith` (a Rust single-file HTML saver, when installed on `PATH`) on the same folder;
//!   it inlines CSS, classic scripts and assets as `data:` URLs, like our export mode;
//! - a floor baseline: reading every file and naively concatenating the bytes;
//! - for the incremental compiler, a full preview-mode compile of the same revision.
//!
//! Bytes out are printed once so the outputs can be compared. Before criterion runs, the ratios
//! the issue tracks are printed from interleaved runs (see `workspace_benches::interleaved`):
//! an incremental preview compile after a one-file edit against a full preview compile and
//! against the read-and-concatenate floor, and the export compile against monolith.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use live_code_editor::OsFolder;
use live_code_editor::WorkspaceFile;
use live_code_editor::preview::{IncrementalPreviewCompiler, PreviewOptions, compile_preview};
use live_code_editor::workspace::folder::FolderAdapter;
use live_code_studio::kit::preview_http::PreviewDocuments;

const STYLESHEETS: usize = 60;
const SCRIPTS: usize = 90;
const MODULES: usize = 10;
const ASSETS: usize = 39;

/// Writes the site: 1 HTML, 60 CSS (20 linked, each importing two more), 90 classic scripts,
/// 10 modules (one root importing nine), 39 assets referenced from HTML and CSS. 200 files.
fn generate_site(root: &Path) -> usize {
    let write = |path: &str, bytes: &[u8]| {
        let target = root.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, bytes).unwrap();
        bytes.len()
    };
    let mut total = 0;
    let mut html =
        String::from("<!doctype html><html><head><meta charset=\"utf-8\"><title>Bench</title>\n");
    for index in 0..STYLESHEETS / 3 {
        html.push_str(&format!(
            "<link rel=\"stylesheet\" href=\"css/top-{index}.css\">\n"
        ));
    }
    html.push_str("</head><body>\n");
    for index in 0..ASSETS {
        html.push_str(&format!(
            "<img src=\"img/picture {index}.png\" alt=\"{index}\">\n"
        ));
        html.push_str(
            &"<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n".repeat(4),
        );
    }
    for index in 0..SCRIPTS {
        html.push_str(&format!(
            "<script src=\"js/classic-{index}.js\"></script>\n"
        ));
    }
    html.push_str("<script type=\"module\" src=\"js/mod/root.js\"></script>\n</body></html>\n");
    total += write("index.html", html.as_bytes());
    let rule_block = |seed: usize| -> String {
        (0..130)
            .map(|rule| format!(".c{seed}-{rule} {{ color: #{:06x}; margin: {rule}px; padding: 0 {seed}px; }}\n", (seed * 7919 + rule) % 0xFFFFFF))
            .collect()
    };
    for index in 0..STYLESHEETS / 3 {
        let css = format!(
            "@import \"parts/a-{index}.css\";\n@import url(\"parts/b-{index}.css\") screen;\n.top-{index} {{ background: url(\"../img/picture {}.png\"); }}\n{}",
            index % ASSETS,
            rule_block(index)
        );
        total += write(&format!("css/top-{index}.css"), css.as_bytes());
        for part in ["a", "b"] {
            let css = format!(
                ".{part}-{index} {{ background-image: url(\"../../img/picture {}.png\"); }}\n{}",
                (index + 7) % ASSETS,
                rule_block(index + 100)
            );
            total += write(&format!("css/parts/{part}-{index}.css"), css.as_bytes());
        }
    }
    let function_block = |seed: usize| -> String {
        (0..95)
            .map(|line| format!("function f{seed}_{line}(value) {{ return value * {line} + {seed}; /* '{line}' */ }}\n"))
            .collect()
    };
    for index in 0..SCRIPTS {
        total += write(
            &format!("js/classic-{index}.js"),
            function_block(index).as_bytes(),
        );
    }
    let mut root_module = String::new();
    for index in 1..MODULES {
        root_module.push_str(&format!(
            "import {{ value{index} }} from './m-{index}.js';\n"
        ));
        let module = format!(
            "export const value{index} = {index};\n{}",
            function_block(1000 + index)
        );
        total += write(&format!("js/mod/m-{index}.js"), module.as_bytes());
    }
    root_module.push_str("document.title = 'bench';\n");
    total += write("js/mod/root.js", root_module.as_bytes());
    for index in 0..ASSETS {
        let bytes: Vec<u8> = (0..22_000u32)
            .map(|byte| (byte.wrapping_mul(31).wrapping_add(index as u32)) as u8)
            .collect();
        total += write(&format!("img/picture {index}.png"), &bytes);
    }
    total
}

fn read_folder(
    root: &Path,
    runtime: &tokio::runtime::Runtime,
) -> Vec<live_code_editor::WorkspaceFile> {
    runtime.block_on(async { OsFolder::open(root).unwrap().read().await.unwrap().files })
}

/// The floor: read every file under `root` and concatenate the bytes.
fn read_and_concatenate(root: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                out.extend(std::fs::read(path).unwrap());
            }
        }
    }
    out
}

fn monolith_bin() -> Option<PathBuf> {
    let from_path = std::env::var_os("PATH").map(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("monolith"))
            .find(|candidate| candidate.is_file())
    });
    from_path.flatten().or_else(|| {
        let home = PathBuf::from(std::env::var_os("HOME")?).join(".cargo/bin/monolith");
        home.is_file().then_some(home)
    })
}

fn run_monolith(bin: &Path, root: &Path, out: &Path) -> u64 {
    let status = Command::new(bin)
        .args(["-q", "-M", "-o"])
        .arg(out)
        .arg(root.join("index.html"))
        .status()
        .expect("run monolith");
    assert!(status.success(), "monolith failed");
    std::fs::metadata(out).unwrap().len()
}

/// Rounds of each interleaved ratio.
const RATIO_ROUNDS: usize = 60;

/// The files one-file edits rotate through: a stylesheet part, a classic script, a module.
const EDITED: [&str; 3] = ["css/parts/a-4.css", "js/classic-17.js", "js/mod/m-3.js"];

/// A workspace the bench edits one file at a time, each edit a content never seen before.
struct EditedSite {
    files: Vec<WorkspaceFile>,
    originals: Vec<(usize, String)>,
    edits: usize,
}

impl EditedSite {
    fn new(files: Vec<WorkspaceFile>) -> Self {
        let originals = EDITED
            .iter()
            .map(|path| {
                let index = files.iter().position(|file| file.path == *path).unwrap();
                (index, files[index].source().unwrap().to_owned())
            })
            .collect();
        Self {
            files,
            originals,
            edits: 0,
        }
    }

    /// Rewrites the next edited file with a unique trailing comment.
    fn edit_one_file(&mut self) -> &[WorkspaceFile] {
        self.edits += 1;
        let (index, original) = &self.originals[self.edits % self.originals.len()];
        let path = self.files[*index].path.clone();
        let edited = format!("{original}/* edit {} */\n", self.edits);
        self.files[*index] = WorkspaceFile::text(path, edited);
        &self.files
    }
}

fn print_ratios(site: &Path, files: &[WorkspaceFile], runtime: &tokio::runtime::Runtime) {
    let preview = PreviewOptions::preview(Some(1), "/preview/1/assets/key/");
    let export = PreviewOptions::export();
    let mut edited = EditedSite::new(files.to_vec());
    let mut incremental = IncrementalPreviewCompiler::new();
    incremental.compile(&edited.files, &preview);
    let mut checked = IncrementalPreviewCompiler::new();
    checked.compile(edited.edit_one_file(), &preview);
    assert_eq!(
        checked.compile(edited.edit_one_file(), &preview),
        compile_preview(&edited.files, &preview),
        "the incremental compile equals the full compile"
    );
    let full = workspace_benches::interleaved(
        RATIO_ROUNDS,
        || {
            black_box(incremental.compile(edited.edit_one_file(), &preview));
        },
        || {
            black_box(compile_preview(files, &preview));
        },
    );
    eprintln!(
        "preview ratio: incremental preview compile after a one-file edit {:?}, full preview compile {:?}: {:.1}x faster (goal >= 10x)",
        full.subject,
        full.baseline,
        full.faster()
    );
    let floor = workspace_benches::interleaved(
        RATIO_ROUNDS,
        || {
            black_box(incremental.compile(edited.edit_one_file(), &preview));
        },
        || {
            black_box(read_and_concatenate(site));
        },
    );
    eprintln!(
        "preview ratio: incremental preview compile {:?}, read-and-concatenate floor {:?}: {:.2}x the floor (goal < 3x)",
        floor.subject,
        floor.baseline,
        floor.times()
    );
    print_cached_revision_ratio(files, runtime);
    let Some(bin) = monolith_bin() else {
        eprintln!("preview ratio: monolith not installed; export ratio skipped");
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("monolith-out.html");
    let in_memory = workspace_benches::interleaved(
        RATIO_ROUNDS / 3,
        || {
            black_box(compile_preview(files, &export));
        },
        || {
            black_box(run_monolith(&bin, site, &out));
        },
    );
    eprintln!(
        "preview ratio: full export compile in memory {:?}, monolith {:?}: {:.1}x faster (goal >= 8x)",
        in_memory.subject,
        in_memory.baseline,
        in_memory.faster()
    );
    let with_read = workspace_benches::interleaved(
        RATIO_ROUNDS / 3,
        || {
            black_box(compile_preview(&read_folder(site, runtime), &export));
        },
        || {
            black_box(run_monolith(&bin, site, &out));
        },
    );
    eprintln!(
        "preview ratio: read folder + full export compile {:?}, monolith {:?}: {:.1}x faster",
        with_read.subject,
        with_read.baseline,
        with_read.faster()
    );
}

/// Serving a preview revision again (the studio's per-surface document cache) against
/// compiling it: the second request must not compile.
fn print_cached_revision_ratio(files: &[WorkspaceFile], runtime: &tokio::runtime::Runtime) {
    let previews = PreviewDocuments::default();
    let preview = PreviewOptions::preview(Some(1), "/preview/1/assets/key/");
    let serve = |files: Vec<WorkspaceFile>| {
        let options = preview.clone();
        runtime.block_on(previews.get_or_compile("workspace", 1, move |compiler| {
            compiler.compile(&files, &options).into()
        }))
    };
    serve(files.to_vec()).expect("a document");
    let cached = workspace_benches::interleaved(
        RATIO_ROUNDS,
        || {
            black_box(serve(Vec::new()));
        },
        || {
            black_box(compile_preview(files, &preview));
        },
    );
    assert_eq!(previews.compiles(), 1, "the revision compiled once");
    eprintln!(
        "preview ratio: serving a revision again {:?}, compiling it {:?}: {:.0}x faster; {} compile for {} requests",
        cached.subject,
        cached.baseline,
        cached.faster(),
        previews.compiles(),
        RATIO_ROUNDS + 1
    );
}

fn preview_benches(c: &mut Criterion) {
    let site = tempfile::tempdir().unwrap();
    let bytes_in = generate_site(site.path());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let files = read_folder(site.path(), &runtime);
    assert_eq!(files.len(), 200, "the folder import keeps all 200 files");
    let export = PreviewOptions::export();
    let compiled = compile_preview(&files, &export);
    assert!(
        compiled.diagnostics.is_empty(),
        "{:?}",
        compiled.diagnostics
    );
    eprintln!(
        "preview bench: {} files, {bytes_in} bytes in; export {} bytes out",
        files.len(),
        compiled.html.len()
    );

    print_ratios(site.path(), &files, &runtime);

    let mut group = c.benchmark_group("preview");
    group.sample_size(20);
    let preview = PreviewOptions::preview(Some(1), "/preview/1/assets/key/");
    group.bench_function("compile_preview_full", |b| {
        b.iter(|| black_box(compile_preview(black_box(&files), &preview)))
    });
    let mut edited = EditedSite::new(files.clone());
    let mut incremental = IncrementalPreviewCompiler::new();
    incremental.compile(&edited.files, &preview);
    group.bench_function("compile_preview_incremental_one_file_edit", |b| {
        b.iter(|| black_box(incremental.compile(edited.edit_one_file(), &preview)))
    });
    group.bench_function("compile_export_in_memory", |b| {
        b.iter(|| black_box(compile_preview(black_box(&files), &export)))
    });
    group.bench_function("read_folder_and_compile_export", |b| {
        b.iter(|| {
            black_box(compile_preview(
                &read_folder(site.path(), &runtime),
                &export,
            ))
        })
    });
    group.bench_function("baseline_read_and_concatenate", |b| {
        b.iter(|| black_box(read_and_concatenate(site.path())))
    });
    // Issue 22 item 6: a revision served again comes from the per-surface document cache.
    let previews = PreviewDocuments::default();
    let cached_files = files.clone();
    let cached_options = preview.clone();
    runtime
        .block_on(previews.get_or_compile("workspace", 1, move |compiler| {
            compiler.compile(&cached_files, &cached_options).into()
        }))
        .expect("a document");
    group.bench_function("serve_cached_revision", |b| {
        b.iter(|| {
            black_box(
                runtime.block_on(previews.get_or_compile("workspace", 1, |compiler| {
                    compiler.compile(&[], &PreviewOptions::export()).into()
                })),
            )
        })
    });
    assert_eq!(
        previews.compiles(),
        1,
        "the cached revision never compiled again"
    );
    match monolith_bin() {
        Some(bin) => {
            let out_dir = tempfile::tempdir().unwrap();
            let out = out_dir.path().join("monolith-out.html");
            eprintln!(
                "preview bench: monolith {} bytes out",
                run_monolith(&bin, site.path(), &out)
            );
            group.bench_function("monolith_export", |b| {
                b.iter(|| black_box(run_monolith(&bin, site.path(), &out)))
            });
        }
        None => eprintln!(
            "preview bench: monolith not installed (cargo install monolith --locked); peer skipped"
        ),
    }
    group.finish();
}

criterion_group!(benches, preview_benches);
criterion_main!(benches);
