//! The cost of the durable layer inside the tool-context pipeline, next to baselines measured
//! in the same process: a keyed `call_tool` on a registry with a durable store (memory backend,
//! and SQLite on a temp file) against the same keyed call on a registry with only the
//! in-memory idempotency registry. Each call uses a fresh key, so every call claims, runs and
//! completes. The ratios are printed before criterion runs.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tokio::runtime::Runtime;
use tool_context::{AllowAll, Tool, ToolCallOptions, ToolInvocation, ToolRegistry};
use tool_durable_operations::backend::sqlite::SqliteBackend;
use tool_durable_operations::{DurableOperationStore, MemoryBackend};
use tool_protocol::{ToolCallError, ToolCallRequest, ToolDefinition};

const RATIO_ITERATIONS: u64 = 5_000;

fn registry(store: Option<Arc<DurableOperationStore>>) -> ToolRegistry {
    let builder = ToolRegistry::builder()
        .tool(Tool::new(
            ToolDefinition::new("payments.charge", "Charges.", json!({"type": "object"})),
            |arguments: Value, _: ToolInvocation| async move {
                Ok::<_, ToolCallError>(json!({"charged": arguments["cents"]}))
            },
        ))
        .policy(AllowAll);
    match store {
        Some(store) => builder.durable_store(store).durable_owner_id("bench"),
        None => builder,
    }
    .build()
    .expect("a valid registry")
}

async fn keyed_call(registry: &ToolRegistry, sequence: &AtomicU64) {
    let n = sequence.fetch_add(1, Ordering::Relaxed);
    let arguments = json!({"cents": 5}).as_object().cloned().unwrap();
    let result = registry
        .call_tool(
            ToolCallRequest::new("payments.charge", arguments),
            ToolCallOptions::default().with_idempotency_key(format!("charge-{n}")),
        )
        .await;
    assert!(!result.is_error(), "{result:?}");
    black_box(result);
}

fn time(runtime: &Runtime, registry: &ToolRegistry, sequence: &AtomicU64) -> Duration {
    runtime.block_on(async {
        let started = Instant::now();
        for _ in 0..RATIO_ITERATIONS {
            keyed_call(registry, sequence).await;
        }
        started.elapsed() / u32::try_from(RATIO_ITERATIONS).unwrap()
    })
}

fn bench_durable_pipeline(c: &mut Criterion) {
    let runtime = Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sqlite = runtime.block_on(async {
        let backend = SqliteBackend::open(dir.path().join("bench.sqlite"))
            .await
            .unwrap();
        Arc::new(DurableOperationStore::new(Arc::new(backend)))
    });
    let memory_store = Arc::new(DurableOperationStore::new(Arc::new(MemoryBackend::new())));
    let registries = [
        ("in_memory_only", registry(None)),
        ("durable_memory", registry(Some(memory_store))),
        ("durable_sqlite", registry(Some(sqlite))),
    ];
    let sequence = AtomicU64::new(0);
    let baseline = time(&runtime, &registries[0].1, &sequence);
    for (name, registry) in &registries {
        let per_call = time(&runtime, registry, &sequence);
        println!(
            "tool_context_durable {name}: {per_call:?} per keyed call, {:.2}x the in-memory-only call",
            per_call.as_secs_f64() / baseline.as_secs_f64()
        );
    }
    let mut group = c.benchmark_group("tool_context_durable");
    for (name, registry) in &registries {
        group.bench_function(*name, |b| {
            b.to_async(&runtime)
                .iter(|| keyed_call(registry, &sequence));
        });
    }
    group.finish();
}

criterion_group!(benches, bench_durable_pipeline);
criterion_main!(benches);
