//! Durable operation claim + settle round trips per backend, as a ratio to the backend's own
//! minimal round trip measured in the same run (SQLite `SELECT 1`, Redis `PING`, PostgreSQL
//! `SELECT 1`, all through `DurableOperationBackend::ping`).
//!
//! A claim of a new key is one insert and settling the own claim is one fenced write, so the
//! ideal ratio is about 2 (plus the cost of the record payload, Lua or SQL work).
//! Needs the local Redis and PostgreSQL (REDIS_URL / DATABASE_URL).

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio::runtime::Runtime;
use tool_durable_operations::backend::postgres::PostgresBackend;
use tool_durable_operations::backend::redis::RedisBackend;
use tool_durable_operations::backend::sqlite::SqliteBackend;
use tool_durable_operations::{
    ClaimRequest, DurableOperationBackend, DurableOperationStore, Settlement,
};

/// Mean time per iteration accumulated across criterion's batches.
#[derive(Default)]
struct Mean(Mutex<(Duration, u64)>);

impl Mean {
    fn add(&self, elapsed: Duration, iterations: u64) {
        let mut total = self.0.lock().unwrap();
        total.0 += elapsed;
        total.1 += iterations;
    }
    fn per_iteration(&self) -> Duration {
        let total = self.0.lock().unwrap();
        total.0 / u32::try_from(total.1.max(1)).unwrap_or(u32::MAX)
    }
}

fn bench_backend(
    c: &mut Criterion,
    runtime: &Runtime,
    name: &str,
    backend: Arc<dyn DurableOperationBackend>,
) {
    let store = DurableOperationStore::new(backend.clone());
    let baseline = Arc::new(Mean::default());
    let transition = Arc::new(Mean::default());
    let counter = Arc::new(AtomicU64::new(0));
    let mut group = c.benchmark_group(format!("durable_operations/{name}"));
    group.bench_function("baseline_round_trip", |b| {
        b.to_async(runtime).iter_custom(|iterations| {
            let (backend, baseline) = (backend.clone(), baseline.clone());
            async move {
                let start = Instant::now();
                for _ in 0..iterations {
                    backend.ping().await.unwrap();
                }
                let elapsed = start.elapsed();
                baseline.add(elapsed, iterations);
                elapsed
            }
        })
    });
    group.bench_function("claim_and_settle", |b| {
        b.to_async(runtime).iter_custom(|iterations| {
            let (store, transition, counter) = (store.clone(), transition.clone(), counter.clone());
            async move {
                let start = Instant::now();
                for _ in 0..iterations {
                    let key = format!("bench:{}", counter.fetch_add(1, Ordering::Relaxed));
                    let request = ClaimRequest {
                        key: &key,
                        fingerprint: "fp",
                        owner_id: "bench",
                        lease: None,
                    };
                    let claim = store.claim(request).await.unwrap();
                    let settlement = Settlement::Completed {
                        result: json!({"ok": true}),
                    };
                    black_box(store.settle(&claim, settlement).await.unwrap());
                }
                let elapsed = start.elapsed();
                transition.add(elapsed, iterations);
                elapsed
            }
        })
    });
    group.finish();
    let ratio = transition.per_iteration().as_secs_f64() / baseline.per_iteration().as_secs_f64();
    println!(
        "durable_operations/{name}: claim+settle {:?} vs round trip {:?} = {ratio:.2}x",
        transition.per_iteration(),
        baseline.per_iteration()
    );
    // Remove the bench records (all completed) through the state machine itself.
    runtime.block_on(store.prune_before(u64::MAX)).unwrap();
}

fn database_url() -> String {
    std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

fn redis_url() -> String {
    std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

fn durable_operations(c: &mut Criterion) {
    let runtime = Runtime::new().unwrap();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let unique = format!("{}_{nanos}", std::process::id());

    let dir = tempfile::tempdir().unwrap();
    let sqlite = runtime
        .block_on(SqliteBackend::open(dir.path().join("operations.db")))
        .unwrap();
    bench_backend(c, &runtime, "sqlite", Arc::new(sqlite));

    let prefix = format!("bench:durable-operation:{unique}:");
    let redis = runtime
        .block_on(RedisBackend::connect(&redis_url(), &prefix))
        .unwrap();
    bench_backend(c, &runtime, "redis", Arc::new(redis));

    let schema = format!("durable_bench_{unique}");
    let postgres = runtime
        .block_on(PostgresBackend::connect(
            &database_url(),
            &format!("{schema}.operations"),
            4,
        ))
        .unwrap();
    let create = format!("CREATE SCHEMA \"{schema}\"");
    runtime
        .block_on(sqlx::raw_sql(sqlx::AssertSqlSafe(create)).execute(postgres.pool()))
        .unwrap();
    runtime.block_on(postgres.apply_schema()).unwrap();
    let pool = postgres.pool().clone();
    bench_backend(c, &runtime, "postgres", Arc::new(postgres));
    let drop = format!("DROP SCHEMA \"{schema}\" CASCADE");
    runtime
        .block_on(sqlx::raw_sql(sqlx::AssertSqlSafe(drop)).execute(&pool))
        .unwrap();
}

criterion_group!(benches, durable_operations);
criterion_main!(benches);
