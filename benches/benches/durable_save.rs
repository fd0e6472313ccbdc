//! Durable `workspace.saveAll` writes, each reported next to a baseline measured in the same run:
//!
//! - `durable_folder_write`: one file write through the durable folder (claim, atomic write,
//!   completion on the SQLite operation store in a temp data dir), new bytes every iteration,
//!   against `baseline_os_folder_write`: the same write through the plain OS folder.
//! - `durable_folder_replay`: a repeated save of bytes the file already holds (claim replay
//!   plus read-back, no write), against the same baseline.

use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use live_code_editor::WorkspaceFile;
use live_code_editor::workspace::folder::FolderAdapter;
use live_code_editor::workspace::os_folder::OsFolder;
use live_code_studio::kit::durable_folder::DurableSaves;

const SOURCE_BYTES: usize = 4 * 1024;

fn source(counter: &AtomicU64) -> WorkspaceFile {
    let n = counter.fetch_add(1, Ordering::Relaxed);
    let mut text = format!("/* {n} */\n");
    text.push_str(&"body { color: teal; }\n".repeat(SOURCE_BYTES / 22));
    WorkspaceFile::text("styles.css", text)
}

fn durable_save(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let data = tempfile::tempdir().expect("data dir");
    let root = tempfile::tempdir().expect("folder");
    let saves = runtime.block_on(DurableSaves::open(data.path()));
    assert_eq!(saves.storage_mode(), "sqlite");
    let durable = saves.open_folder(root.path()).expect("durable folder");
    let plain = OsFolder::open(root.path()).expect("os folder");
    let counter = AtomicU64::new(0);

    let mut group = c.benchmark_group("durable_save");
    group.bench_function("baseline_os_folder_write", |b| {
        b.to_async(&runtime)
            .iter(|| async { plain.write_file(&source(&counter)).await.expect("write") });
    });
    group.bench_function("durable_folder_write", |b| {
        b.to_async(&runtime)
            .iter(|| async { durable.write_file(&source(&counter)).await.expect("write") });
    });
    let same = source(&counter);
    runtime
        .block_on(durable.write_file(&same))
        .expect("first write");
    group.bench_function("durable_folder_replay", |b| {
        b.to_async(&runtime)
            .iter(|| async { durable.write_file(&same).await.expect("replay") });
    });
    group.finish();
}

criterion_group!(benches, durable_save);
criterion_main!(benches);
