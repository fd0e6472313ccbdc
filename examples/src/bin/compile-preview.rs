//! `compile-preview <folder> [-o out.html] [--export] [--json] [--max-output-bytes N] [--watch]`
//!
//! Reads a folder through the workspace folder import (same limits and skip rules as the
//! studio), compiles it with the preview compiler and writes one HTML document. Bare imports
//! (`import { h } from 'preact'`) resolve from the folder's `node_modules`, read on demand;
//! one nothing installs is an error.
//!
//! - default: preview mode without a bridge; assets are referenced relative to the document
//!   (`--asset-base` changes the prefix), so write the output next to the folder's files;
//! - `--export`: a standalone file (CSS/JS inlined, assets as `data:` URLs) that runs from
//!   `file://` with no network;
//! - `--json`: diagnostics as JSON lines on stdout, then a summary line; without `-o` no HTML
//!   is written (a check mode). Otherwise diagnostics go to stderr and the HTML to `-o` or stdout.
//! - `--watch` (with `-o`): keeps running, compiling again incrementally after every change of
//!   the folder's files (polled) and after an install into `node_modules`.
//!
//! Exit codes: 0 success (warnings allowed), 1 errors (missing entry, missing stylesheet or
//! script, a package import nothing installs, unparsable module, content left out by the output limit, unreadable folder, failed
//! write), 2 bad usage.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use clap::Parser;
use live_code_editor::OsFolder;
use live_code_editor::preview::{
    CompiledPreview, DEFAULT_MAX_PREVIEW_OUTPUT_BYTES, IncrementalPreviewCompiler, Packages,
    PreviewDiagnostic, PreviewOptions,
};
use live_code_editor::workspace::folder::{FolderAdapter, FolderImport};
use serde_json::json;

/// Compile a folder of HTML/CSS/JS into one preview or standalone HTML document.
#[derive(Debug, Parser)]
#[command(name = "compile-preview", version)]
struct Args {
    /// The workspace folder (its `index.html`, else its first `.html`, is the entry).
    folder: PathBuf,
    /// Write the document here (default: stdout, or nothing with `--json`).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Standalone export: assets as data URLs, no bridge.
    #[arg(long)]
    export: bool,
    /// Print diagnostics as JSON lines on stdout.
    #[arg(long)]
    json: bool,
    /// Preview mode: prefix for asset URLs (default: relative to the document).
    #[arg(
        long,
        value_name = "PREFIX",
        default_value = "",
        conflicts_with = "export"
    )]
    asset_base: String,
    /// Preview mode: inject the bridge reporting this revision to a parent window.
    #[arg(long, value_name = "N", conflicts_with = "export")]
    revision: Option<u64>,
    /// Bound on the bytes inlined beyond the entry HTML; what does not fit is left out and is
    /// an error.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_PREVIEW_OUTPUT_BYTES)]
    max_output_bytes: usize,
    /// Keep running: compile again (incrementally) whenever a file of the folder changes,
    /// printing the diagnostics and the time, and rewrite the output atomically. Needs `-o`.
    #[arg(long, requires = "output")]
    watch: bool,
    /// Local import edges the module graph follows (the studio's bound: a TypeScript/JSX app
    /// needs more than the reference's 32).
    #[arg(long, value_name = "N", default_value_t = live_code_studio::kit::preview_http::STUDIO_MAX_MODULE_IMPORT_EDGES)]
    max_import_edges: usize,
}

const EXIT_ERRORS: u8 = 1;
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    match Args::try_parse() {
        Ok(args) => ExitCode::from(run(&args)),
        Err(error) => {
            let _ = error.print();
            ExitCode::from(if error.use_stderr() { EXIT_USAGE } else { 0 })
        }
    }
}

/// Compiles, writes and reports (with `--watch`, again after every change); returns the exit
/// code.
fn run(args: &Args) -> u8 {
    if !args.folder.is_dir() {
        eprintln!("compile-preview: {} is not a folder", args.folder.display());
        return EXIT_USAGE;
    }
    if args.watch {
        return watch(args, &AtomicBool::new(false));
    }
    let packages = Packages::folder(&args.folder);
    compile_once(args, &mut IncrementalPreviewCompiler::new(), &packages)
}

/// The compile options the arguments ask for, bare imports resolving from `packages`.
fn options(args: &Args, packages: &Packages) -> PreviewOptions {
    let mut options = if args.export {
        PreviewOptions::export()
    } else {
        PreviewOptions::preview(args.revision, args.asset_base.clone())
    };
    options.max_output_bytes = args.max_output_bytes;
    options.max_module_import_edges = args.max_import_edges;
    options.with_packages(packages.clone())
}

/// Reads the folder, compiles it with `compiler`, writes and reports; returns the exit code.
fn compile_once(args: &Args, compiler: &mut IncrementalPreviewCompiler, packages: &Packages) -> u8 {
    let started = Instant::now();
    let import = match read_folder(&args.folder) {
        Ok(import) => import,
        Err(message) => {
            eprintln!("compile-preview: {message}");
            return EXIT_ERRORS;
        }
    };
    let compiled = compiler.compile(&import.files, &options(args, packages));
    if let Err(message) = write_document(args, &compiled) {
        eprintln!("compile-preview: {message}");
        return EXIT_ERRORS;
    }
    report(args, &import, &compiled, started.elapsed());
    if compiled.has_errors() {
        EXIT_ERRORS
    } else {
        0
    }
}

/// How often `--watch` looks at the folder.
const WATCH_POLL: Duration = Duration::from_millis(200);

/// `--watch`: compiles, then again (incrementally) whenever a file of the folder changes, until
/// `stop` is set (the command runs until interrupted); returns the last compile's exit code.
/// A change under `node_modules` (an install) starts a new package cache.
fn watch(args: &Args, stop: &AtomicBool) -> u8 {
    let mut compiler = IncrementalPreviewCompiler::new();
    let mut packages = Packages::folder(&args.folder);
    let mut seen: Option<FolderState> = None;
    let mut code = 0;
    while !stop.load(Ordering::Relaxed) {
        let state = FolderState::of(&args.folder, args.output.as_deref());
        if seen.as_ref() != Some(&state) {
            if seen
                .as_ref()
                .is_some_and(|seen| seen.packages != state.packages)
            {
                packages = Packages::folder(&args.folder);
            }
            seen = Some(state);
            code = compile_once(args, &mut compiler, &packages);
        }
        std::thread::sleep(WATCH_POLL);
    }
    code
}

/// What `--watch` compares between looks: each workspace file's path, size and modification
/// time (not `node_modules`, dot folders or the output), and when the installed packages last
/// changed.
#[derive(Debug, PartialEq, Eq)]
struct FolderState {
    files: Vec<(PathBuf, u64, Option<SystemTime>)>,
    packages: Option<SystemTime>,
}

impl FolderState {
    fn of(root: &Path, output: Option<&Path>) -> Self {
        let output = output.and_then(|path| path.canonicalize().ok());
        let mut files = Vec::new();
        let mut pending = vec![root.to_path_buf()];
        while let Some(dir) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name == "node_modules" || name.starts_with('.') {
                    continue;
                }
                let path = entry.path();
                let Ok(metadata) = entry.metadata() else {
                    continue;
                };
                if metadata.is_dir() {
                    pending.push(path);
                } else if path.canonicalize().ok() != output {
                    files.push((path, metadata.len(), metadata.modified().ok()));
                }
            }
        }
        files.sort();
        let modified = |path: PathBuf| {
            std::fs::metadata(path)
                .and_then(|meta| meta.modified())
                .ok()
        };
        let node_modules = root.join("node_modules");
        // npm rewrites its hidden lockfile on every install, and the folder changes when a
        // package is added or removed.
        let packages =
            modified(node_modules.join(".package-lock.json")).max(modified(node_modules));
        Self { files, packages }
    }
}

/// Reads the folder with the workspace folder import (bounded by its file and byte limits).
fn read_folder(folder: &Path) -> Result<FolderImport, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("cannot start the runtime: {error}"))?;
    runtime.block_on(async {
        let adapter = OsFolder::open(folder).map_err(|error| error.to_string())?;
        adapter.read().await.map_err(|error| error.to_string())
    })
}

/// Writes the HTML to `-o` (through a temporary file renamed into place, so a failed write
/// never leaves a truncated document) or stdout; `--json` without `-o` writes nothing.
fn write_document(args: &Args, compiled: &CompiledPreview) -> Result<(), String> {
    match &args.output {
        Some(path) => {
            let file_name = path
                .file_name()
                .ok_or_else(|| format!("{} is not a file path", path.display()))?;
            let temporary = path.with_file_name(format!(".{}.tmp", file_name.to_string_lossy()));
            std::fs::write(&temporary, &compiled.html)
                .and_then(|()| std::fs::rename(&temporary, path))
                .map_err(|error| {
                    let _ = std::fs::remove_file(&temporary);
                    format!("cannot write {}: {error}", path.display())
                })
        }
        None if args.json => Ok(()),
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(compiled.html.as_bytes())
                .and_then(|()| stdout.flush())
                .map_err(|error| format!("cannot write the document: {error}"))
        }
    }
}

fn report(args: &Args, import: &FolderImport, compiled: &CompiledPreview, took: Duration) {
    if args.json {
        let mut stdout = std::io::stdout().lock();
        for diagnostic in &compiled.diagnostics {
            let mut line = serde_json::to_value(diagnostic).unwrap_or_default();
            line["type"] = json!("diagnostic");
            let _ = writeln!(stdout, "{line}");
        }
        let summary = json!({
            "type": "summary",
            "entry": compiled.entry,
            "entryRequired": compiled.entry_required,
            "files": import.files.len(),
            "skipped": import.skipped,
            "modules": compiled.module_count,
            "bytes": compiled.html.len(),
            "diagnostics": compiled.diagnostics.len(),
            "omittedDiagnostics": compiled.omitted_diagnostics,
            "errors": compiled.has_errors(),
            "milliseconds": took.as_secs_f64() * 1000.0,
        });
        let _ = writeln!(stdout, "{summary}");
        return;
    }
    for skipped in &import.skipped {
        eprintln!("skipped: {skipped}");
    }
    if compiled.entry_required {
        eprintln!("error[WORKSPACE_PREVIEW_ENTRY_REQUIRED]: add index.html or another .html file");
    }
    for diagnostic in &compiled.diagnostics {
        eprintln!("{}", human_line(diagnostic));
    }
    if compiled.omitted_diagnostics > 0 {
        eprintln!(
            "... {} more diagnostics omitted",
            compiled.omitted_diagnostics
        );
    }
    eprintln!(
        "compiled {} ({} files, {} modules) into {} bytes in {:.1} ms",
        compiled.entry.as_deref().unwrap_or("no entry"),
        import.files.len(),
        compiled.module_count,
        compiled.html.len(),
        took.as_secs_f64() * 1000.0
    );
}

/// `error[missing-reference] index.html:3:14: Missing script: app.js`
fn human_line(diagnostic: &PreviewDiagnostic) -> String {
    let severity = match diagnostic.severity {
        live_code_editor::preview::Severity::Error => "error",
        live_code_editor::preview::Severity::Warning => "warning",
    };
    let location = match (diagnostic.line, diagnostic.column) {
        (Some(line), Some(column)) => format!("{}:{line}:{column}", diagnostic.source_path),
        _ => diagnostic.source_path.clone(),
    };
    format!(
        "{severity}[{}] {location}: {}",
        diagnostic.kind.code(),
        diagnostic.message
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        format!(
            "{}/../live-code-editor/tests/fixtures/{name}",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    fn args(list: &[&str]) -> Args {
        Args::try_parse_from(std::iter::once("compile-preview").chain(list.iter().copied()))
            .unwrap()
    }

    #[test]
    fn a_clean_folder_exits_zero_and_writes_the_document() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site.html");
        let out_arg = out.to_str().unwrap();
        assert_eq!(
            run(&args(&[&fixture("site"), "-o", out_arg, "--export"])),
            0
        );
        let html = std::fs::read_to_string(&out).unwrap();
        assert!(html.contains("data:image/svg+xml;base64,"));
        assert!(
            !dir.path().join(".site.html.tmp").exists(),
            "the temporary file is renamed away"
        );
    }

    #[test]
    fn warnings_exit_zero_and_errors_exit_one() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.html");
        let out_arg = out.to_str().unwrap();
        let site = dir.path().join("site");
        std::fs::create_dir(&site).unwrap();
        std::fs::write(
            site.join("index.html"),
            "<script type=module>import 'https://esm.example.test/x.js';</script>",
        )
        .unwrap();
        assert_eq!(
            run(&args(&[site.to_str().unwrap(), "-o", out_arg])),
            0,
            "blocked externals are warnings"
        );
        assert_eq!(
            run(&args(&[&fixture("external"), "-o", out_arg])),
            EXIT_ERRORS,
            "its `@preact/signals` is installed nowhere"
        );
        assert_eq!(
            run(&args(&[&fixture("broken"), "-o", out_arg])),
            EXIT_ERRORS
        );
        assert_eq!(run(&args(&[&fixture("no-entry"), "--json"])), EXIT_ERRORS);
    }

    #[test]
    fn content_left_out_by_the_output_limit_exits_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.html"), "<script src=a.js></script>").unwrap();
        std::fs::write(dir.path().join("a.js"), "12345").unwrap();
        let folder = dir.path().to_str().unwrap();
        for mode in [&["--export"][..], &[]] {
            let at_cap = [&[folder, "--json", "--max-output-bytes", "5"], mode].concat();
            assert_eq!(run(&args(&at_cap)), 0, "the script fits exactly");
            let one_over = [&[folder, "--json", "--max-output-bytes", "4"], mode].concat();
            assert_eq!(run(&args(&one_over)), EXIT_ERRORS, "the script is left out");
        }
    }

    #[test]
    fn bare_imports_resolve_from_the_folders_node_modules_and_a_missing_package_exits_one() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        };
        write("index.html", "<script type=module src=main.js></script>");
        write(
            "main.js",
            "import pad from 'left-pad';\ndocument.title = pad('7', 3);\n",
        );
        write(
            "node_modules/left-pad/package.json",
            r#"{"main":"index.js"}"#,
        );
        write(
            "node_modules/left-pad/index.js",
            "module.exports = function leftPad(text, width) { return text.padStart(width, '0'); };",
        );
        let folder = dir.path().to_str().unwrap();
        let out = dir.path().join("out.html");
        let out_arg = out.to_str().unwrap();
        assert_eq!(run(&args(&[folder, "--export", "-o", out_arg])), 0);
        let html = std::fs::read_to_string(&out).unwrap();
        assert!(
            html.contains("padStart(width"),
            "the package is in the export"
        );
        write(
            "main.js",
            "import confetti from 'canvas-confetti';\nconfetti();\n",
        );
        assert_eq!(
            run(&args(&[folder, "--export", "-o", out_arg])),
            EXIT_ERRORS,
            "an import nothing installs is an error"
        );
    }

    #[test]
    fn watch_compiles_again_after_a_change_and_rewrites_the_output() {
        let dir = tempfile::tempdir().unwrap();
        let out_dir = tempfile::tempdir().unwrap();
        let out = out_dir.path().join("site.html");
        std::fs::write(dir.path().join("index.html"), "<p>first</p>").unwrap();
        let args = args(&[
            dir.path().to_str().unwrap(),
            "--watch",
            "-o",
            out.to_str().unwrap(),
        ]);
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let watcher = {
            let stop = std::sync::Arc::clone(&stop);
            std::thread::spawn(move || watch(&args, &stop))
        };
        let wait_for = |text: &str| {
            let deadline = Instant::now() + Duration::from_secs(20);
            while !std::fs::read_to_string(&out).is_ok_and(|html| html.contains(text)) {
                assert!(Instant::now() < deadline, "the output never held {text}");
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        wait_for("<p>first</p>");
        std::fs::write(dir.path().join("index.html"), "<p>second edit</p>").unwrap();
        wait_for("<p>second edit</p>");
        std::fs::write(
            dir.path().join("index.html"),
            "<p>third</p><script src=gone.js></script>",
        )
        .unwrap();
        wait_for("<p>third</p>");
        stop.store(true, Ordering::Relaxed);
        assert_eq!(
            watcher.join().unwrap(),
            EXIT_ERRORS,
            "the last compile had an error"
        );
        assert!(
            Args::try_parse_from(["compile-preview", "x", "--watch"]).is_err(),
            "needs -o"
        );
    }

    #[test]
    fn bad_usage_exits_two() {
        assert!(
            Args::try_parse_from(["compile-preview"])
                .unwrap_err()
                .use_stderr()
        );
        assert!(Args::try_parse_from(["compile-preview", "x", "--bogus"]).is_err());
        assert!(
            Args::try_parse_from(["compile-preview", "x", "--export", "--revision", "3"]).is_err()
        );
        assert_eq!(run(&args(&["/definitely/not/a/folder"])), EXIT_USAGE);
    }

    #[test]
    fn a_failed_write_is_an_error_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("missing-dir/out.html");
        assert_eq!(
            run(&args(&[&fixture("site"), "-o", out.to_str().unwrap()])),
            EXIT_ERRORS
        );
        assert!(!out.exists());
    }

    #[test]
    fn human_lines_carry_severity_kind_and_position() {
        let compiled = live_code_editor::preview::compile_preview(
            &[live_code_editor::WorkspaceFile::text(
                "index.html",
                "<script src=gone.js></script>",
            )],
            &PreviewOptions::export(),
        );
        assert_eq!(
            human_line(&compiled.diagnostics[0]),
            "error[missing-reference] index.html:1:13: Missing script: gone.js"
        );
    }
}
