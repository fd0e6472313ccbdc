//! Preview compiler throughput on a generated 200-file, ~2 MB site, against peers measured in
//! the same run:
//!
//! - `monolith` (a Rust single-file HTML saver, when installed on `PATH`) on the same folder;
//!   it inlines CSS, classic scripts and assets as `data:` URLs, like our export mode;
//! - a floor baseline: reading every file and naively concatenating the bytes.
//!
//! Bytes out are printed once so the outputs can be compared.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use live_code_editor::OsFolder;
use live_code_editor::preview::{PreviewOptions, compile_preview};
use live_code_editor::workspace::folder::FolderAdapter;

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

    let mut group = c.benchmark_group("preview");
    group.sample_size(20);
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
