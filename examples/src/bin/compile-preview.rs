//! `compile-preview <folder> [-o out.html] [--export] [--json]`
//!
//! Reads a folder through the workspace folder import (same limits and skip rules as the
//! studio), compiles it with the preview compiler and writes one HTML document.
//!
//! - default: preview mode without a bridge; assets are referenced relative to the document
//!   (`--asset-base` changes the prefix), so write the output next to the folder's files;
//! - `--export`: a standalone file (CSS/JS inlined, assets as `data:` URLs) that runs from
//!   `file://` with no network;
//! - `--json`: diagnostics as JSON lines on stdout, then a summary line; without `-o` no HTML
//!   is written (a check mode). Otherwise diagnostics go to stderr and the HTML to `-o` or stdout.
//!
//! Exit codes: 0 success (warnings allowed), 1 errors (missing entry, missing stylesheet or
//! script, unparsable module, unreadable folder, failed write), 2 bad usage.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use live_code_editor::OsFolder;
use live_code_editor::preview::{
    CompiledPreview, PreviewDiagnostic, PreviewOptions, compile_preview,
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
}

const EXIT_ERRORS: u8 = 1;
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(error) => {
            let _ = error.print();
            let code = if error.use_stderr() { EXIT_USAGE } else { 0 };
            return ExitCode::from(code);
        }
    };
    if !args.folder.is_dir() {
        eprintln!("compile-preview: {} is not a folder", args.folder.display());
        return ExitCode::from(EXIT_USAGE);
    }
    let import = match read_folder(&args.folder) {
        Ok(import) => import,
        Err(message) => {
            eprintln!("compile-preview: {message}");
            return ExitCode::from(EXIT_ERRORS);
        }
    };
    let options = if args.export {
        PreviewOptions::export()
    } else {
        PreviewOptions::preview(args.revision, args.asset_base.clone())
    };
    let compiled = compile_preview(&import.files, &options);
    if let Err(message) = write_document(&args, &compiled) {
        eprintln!("compile-preview: {message}");
        return ExitCode::from(EXIT_ERRORS);
    }
    report(&args, &import, &compiled);
    if compiled.has_errors() {
        ExitCode::from(EXIT_ERRORS)
    } else {
        ExitCode::SUCCESS
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

fn report(args: &Args, import: &FolderImport, compiled: &CompiledPreview) {
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
        "compiled {} ({} files, {} modules) into {} bytes",
        compiled.entry.as_deref().unwrap_or("no entry"),
        import.files.len(),
        compiled.module_count,
        compiled.html.len()
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
