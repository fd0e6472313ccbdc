//! Workspace engine costs, each next to a plain baseline on the same bytes:
//! - `workspace_patch`: a literal patch on a 200-file workspace (pure model + history, and the
//!   manager with memory / SQLite persistence and a headless preview acknowledgement) against a
//!   plain `String::replacen` + store of the same source.
//! - `workspace_import`: importing a 200-file folder at the 12 MiB total limit through the OS
//!   adapter against plain `read_dir` + `fs::read` of the same files.

use std::cell::Cell;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use live_code_editor::WorkspaceFile;
use live_code_editor::workspace::history::RecordKind;
use live_code_editor::workspace::{
    FolderAdapter, HeadlessPreviewBridge, History, MAX_IMPORT_FILES, MAX_IMPORT_TOTAL_BYTES,
    ManagerOptions, MemoryWorkspaceRepository, Occurrence, Operation, OsFolder,
    SqliteWorkspaceRepository, Workspace, WorkspaceDocumentManager, WorkspaceRepository,
};

const FILE_COUNT: usize = 200;
const SOURCE_BYTES: usize = 2_048;

fn source(index: usize) -> String {
    let body = format!("export const value{index} = {index};\n");
    let mut text = String::from("// marker: alpha\n");
    while text.len() < SOURCE_BYTES {
        text.push_str(&body);
    }
    text
}

fn workspace_files() -> Vec<WorkspaceFile> {
    let mut files = vec![WorkspaceFile::text(
        "index.html",
        "<script type=module src=m000.js></script>",
    )];
    files.extend(
        (1..FILE_COUNT).map(|index| WorkspaceFile::text(format!("m{index:03}.js"), source(index))),
    );
    files
}

/// Alternates the marker so every iteration's patch finds its search text.
fn next_patch(flip: &Cell<bool>) -> (&'static str, &'static str) {
    flip.set(!flip.get());
    if flip.get() {
        ("alpha", "omega")
    } else {
        ("omega", "alpha")
    }
}

fn bench_patch(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("workspace_patch");
    let target = "m100.js";

    let flip = Cell::new(false);
    let mut sources: Vec<String> = (0..FILE_COUNT).map(source).collect();
    group.bench_function("baseline_string_replacen_store", |b| {
        b.iter(|| {
            let (search, replace) = next_patch(&flip);
            let patched = sources[100].replacen(search, replace, 1);
            sources[100] = black_box(patched);
        });
    });

    let flip = Cell::new(false);
    let mut workspace = Workspace::new(workspace_files()).unwrap();
    let mut history = History::new();
    group.bench_function("model_apply_patch_and_history", |b| {
        b.iter(|| {
            let (search, replace) = next_patch(&flip);
            let operation = Operation::Patch {
                path: target.into(),
                search: search.into(),
                replace: replace.into(),
                occurrence: Occurrence::First,
            };
            let next = workspace.apply(&operation).unwrap();
            history.record(workspace.content(), RecordKind::Checkpoint, 0);
            workspace = black_box(next);
        });
    });

    let repositories: [(&str, Arc<dyn WorkspaceRepository>); 2] = [
        (
            "manager_apply_patch_memory",
            Arc::new(MemoryWorkspaceRepository::new()),
        ),
        (
            "manager_apply_patch_sqlite",
            Arc::new(
                runtime
                    .block_on(SqliteWorkspaceRepository::in_memory("bench"))
                    .unwrap(),
            ),
        ),
    ];
    for (name, repository) in repositories {
        let manager = runtime
            .block_on(WorkspaceDocumentManager::open(
                workspace_files(),
                repository,
                Arc::new(HeadlessPreviewBridge::accept_all()),
                ManagerOptions::default(),
            ))
            .unwrap();
        let flip = Cell::new(false);
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| {
                let (search, replace) = next_patch(&flip);
                let manager = &manager;
                async move {
                    black_box(
                        manager
                            .apply_patch(target, search, replace, Occurrence::First, None)
                            .await
                            .unwrap(),
                    )
                }
            });
        });
    }
    group.finish();
}

fn bench_import(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let per_file = usize::try_from(MAX_IMPORT_TOTAL_BYTES).unwrap() / MAX_IMPORT_FILES;
    for index in 0..MAX_IMPORT_FILES {
        let name = if index == 0 {
            "index.html".to_owned()
        } else {
            format!("f{index:03}.js")
        };
        std::fs::write(dir.path().join(name), "x".repeat(per_file)).unwrap();
    }
    let mut group = c.benchmark_group("workspace_import");
    group.sample_size(20);
    group.bench_function("baseline_read_dir_and_read", |b| {
        b.iter(|| {
            // Keep every file in memory, as an import does.
            let mut entries: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|entry| entry.unwrap().path())
                .collect();
            entries.sort();
            let files: Vec<Vec<u8>> = entries
                .iter()
                .map(|path| std::fs::read(path).unwrap())
                .collect();
            black_box(files)
        });
    });
    let folder = OsFolder::open(dir.path()).unwrap();
    group.bench_function("os_folder_read_200_files_12mib", |b| {
        b.to_async(&runtime).iter(|| async {
            let import = folder.read().await.unwrap();
            assert_eq!(import.files.len(), MAX_IMPORT_FILES);
            black_box(import)
        });
    });
    group.finish();
}

criterion_group!(benches, bench_patch, bench_import);
criterion_main!(benches);
