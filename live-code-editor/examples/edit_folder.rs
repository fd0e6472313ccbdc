//! Open a folder, edit it through the manager with revision guards, undo/redo, save back to
//! disk and reload — with a headless preview bridge that compiles every revision.
//!
//! ```text
//! cargo run -p live-code-editor --example edit_folder -- <dir>
//! ```
//!
//! Without `<dir>` a small demo site is created in a temporary directory. With `<dir>` the
//! example adds `lce-example-notes.md`, saves, reloads, then deletes it and saves again, so the
//! folder ends as it started.

use std::path::PathBuf;
use std::sync::Arc;

use live_code_editor::WorkspaceFile;
use live_code_editor::preview::{PreviewOptions, compile_preview};
use live_code_editor::workspace::{
    HeadlessPreviewBridge, ImportGuard, ManagerOptions, Occurrence, OsFolder,
    SqliteWorkspaceRepository, WorkspaceDocumentManager, WorkspaceError, WriteOptions,
};

const NOTES: &str = "lce-example-notes.md";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (root, _demo) = folder_from_args()?;
    let repository = Arc::new(SqliteWorkspaceRepository::in_memory("edit-folder-example").await?);
    // A headless host: a revision is acknowledged once the preview compiler accepts it.
    let bridge = Arc::new(HeadlessPreviewBridge::new(|files: &[WorkspaceFile]| {
        let compiled = compile_preview(files, &PreviewOptions::preview(None, "/assets/"));
        if compiled.entry_required {
            Err("the workspace has no HTML entry".to_owned())
        } else {
            Ok(())
        }
    }));
    let seed = vec![WorkspaceFile::text(
        "index.html",
        "<h1>Empty workspace</h1>",
    )];
    let manager =
        WorkspaceDocumentManager::open(seed, repository, bridge, ManagerOptions::default()).await?;

    let opened = manager
        .open_folder(Arc::new(OsFolder::open(&root)?), ImportGuard::default())
        .await
        .map_err(report)?;
    println!(
        "opened {} files at revision {} ({} skipped)",
        opened.file_count,
        opened.revision,
        opened.skipped.len()
    );
    for line in &opened.skipped {
        println!("  skipped: {line}");
    }

    // Every mutation names the revision it was based on.
    let revision = manager.revision().await;
    let created = manager
        .create_file(NOTES, "# Notes\n\nstatus: draft\n", Some(revision))
        .await
        .map_err(report)?;
    println!(
        "created {NOTES} -> revision {} (preview {:?})",
        created.revision, created.preview.status
    );

    // A caller holding an old revision is refused before anything changes.
    let stale = manager.write_file(
        NOTES,
        "lost update",
        WriteOptions::default().with_expected_revision(Some(revision)),
    );
    if let Err(error) = stale.await {
        println!(
            "stale write refused: {} (retryable: {})",
            error.code, error.retryable
        );
    }

    let patched = manager
        .apply_patch(
            NOTES,
            "draft",
            "reviewed",
            Occurrence::First,
            Some(created.revision),
        )
        .await
        .map_err(report)?;
    println!(
        "patched -> revision {}, dirty: {:?}",
        patched.revision, patched.dirty_paths
    );

    let undone = manager.undo(Some(patched.revision)).await.map_err(report)?;
    println!(
        "undo -> revision {}: {:?}",
        undone.revision,
        status_line(&manager).await
    );
    let redone = manager.redo(Some(undone.revision)).await.map_err(report)?;
    println!(
        "redo -> revision {}: {:?}",
        redone.revision,
        status_line(&manager).await
    );

    let saved = manager
        .save_all(Some(redone.revision))
        .await
        .map_err(report)?;
    println!(
        "saved {:?}, deleted {:?}, clean: {}",
        saved.saved_paths, saved.deleted_paths, saved.clean
    );
    println!("on disk: {:?}", std::fs::read_to_string(root.join(NOTES))?);

    let reloaded = manager
        .reload_folder(ImportGuard::at(Some(saved.revision)))
        .await
        .map_err(report)?;
    println!(
        "reloaded {} files -> revision {}",
        reloaded.file_count, reloaded.revision
    );

    // Leave the folder as it was: delete the notes file and save the deletion.
    let deleted = manager
        .delete_file(NOTES, Some(reloaded.revision))
        .await
        .map_err(report)?;
    let cleaned = manager
        .save_all(Some(deleted.revision))
        .await
        .map_err(report)?;
    println!(
        "removed {:?}; still on disk: {}",
        cleaned.deleted_paths,
        root.join(NOTES).exists()
    );
    Ok(())
}

/// The folder named on the command line, or a demo site in a temporary directory.
fn folder_from_args() -> std::io::Result<(PathBuf, Option<tempfile::TempDir>)> {
    if let Some(dir) = std::env::args_os().nth(1) {
        return Ok((PathBuf::from(dir), None));
    }
    let demo = tempfile::tempdir()?;
    std::fs::write(
        demo.path().join("index.html"),
        "<link rel=\"stylesheet\" href=\"styles.css\"><h1>Demo</h1>",
    )?;
    std::fs::write(demo.path().join("styles.css"), "h1 { color: teal; }")?;
    println!(
        "no folder given; using a demo site in {}",
        demo.path().display()
    );
    Ok((demo.path().to_path_buf(), Some(demo)))
}

async fn status_line(manager: &WorkspaceDocumentManager) -> String {
    let source = manager
        .read_file(NOTES)
        .await
        .map(|file| file.source)
        .unwrap_or_default();
    source.lines().last().unwrap_or_default().to_owned()
}

fn report(error: WorkspaceError) -> WorkspaceError {
    eprintln!("{}: {} {}", error.code, error.message, error.details);
    error
}
