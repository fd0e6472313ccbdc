//! Durable operation claim + settle per backend, against the same writes run raw.
//!
//! The baseline of every backend is exactly the two writes the store makes for a fresh key, run
//! by hand on the same pool or client with the same durability settings: on SQLite and
//! PostgreSQL the store's own insert and fenced update statements (`insert_sql`, `update_sql`)
//! with the same 14 / 16 bound values through sqlx; on Redis two `EVALSHA`s of the store's
//! compare-and-set script (insert-if-absent, then the fenced update) on the same
//! `ConnectionManager`. So the ratio is the cost of the state machine above the storage.
//!
//! Two measurements per backend:
//! - latency: one caller, claim + settle vs the two raw writes, sequentially;
//! - throughput: 8 concurrent callers (tokio tasks) sharing one pool of 8 connections
//!   (PostgreSQL), the backend's own pool (SQLite) or one multiplexed client (Redis).
//!
//! Every criterion batch times a store batch and a raw batch of the same size back to back, in
//! alternating order, so the printed ratios compare the two under the same load (the machine
//! is shared and noisy); criterion's own figure is the store's time.
//!
//! Needs the local Redis and PostgreSQL (REDIS_URL / DATABASE_URL). Every run uses its own
//! Redis prefix, PostgreSQL schema and SQLite temp file.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::SqlitePool;
use sqlx::{AssertSqlSafe, SqlSafeStr, SqlStr};
use tokio::runtime::Runtime;
use tool_durable_operations::backend::postgres::PostgresBackend;
use tool_durable_operations::backend::redis::{REDIS_DURABLE_OPERATION_CAS_SCRIPT, RedisBackend};
use tool_durable_operations::backend::sqlite::SqliteBackend;
use tool_durable_operations::clock::random_incarnation;
use tool_durable_operations::{ClaimRequest, DurableOperationStore, Settlement};

/// Concurrent callers of the throughput measurement.
const CALLERS: u64 = 8;
/// The lease the store gives a claim by default (5 minutes), written by the raw claim too.
const LEASE_MS: u64 = 300_000;

/// Mean time per operation accumulated across criterion's batches.
#[derive(Default)]
struct Mean(Mutex<(Duration, u64)>);

impl Mean {
    fn add(&self, elapsed: Duration, operations: u64) {
        let mut total = self.0.lock().unwrap();
        total.0 += elapsed;
        total.1 += operations;
    }
    fn per_operation(&self) -> Duration {
        let total = self.0.lock().unwrap();
        total.0 / u32::try_from(total.1.max(1)).unwrap_or(u32::MAX)
    }
    fn per_second(&self) -> f64 {
        1.0 / self.per_operation().as_secs_f64()
    }
}

fn now_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

fn as_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap()
}

/// The two raw writes of one claim + settle, on the store's own connections.
enum Raw {
    Sql(RawSql),
    Redis(RawRedis),
}

enum SqlPool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

struct RawSql {
    pool: SqlPool,
    insert: SqlStr,
    update: SqlStr,
}

/// Binds the 14 record columns (in the store's column order) of a fresh pending record, or of
/// that record completed with `{"ok":true}` at revision 2, as the store's row mapping does.
macro_rules! bind_record {
    ($query:expr, $key:expr, $incarnation:expr, $now:expr, $completed:expr) => {{
        let (state, result, lease) = if $completed {
            ("completed", Some(r#"{"ok":true}"#), None)
        } else {
            ("pending", None, Some(as_i64($now + LEASE_MS)))
        };
        $query
            .bind($key.to_owned())
            .bind("fp".to_owned())
            .bind("bench".to_owned())
            .bind(Some($incarnation.to_owned()))
            .bind(if $completed { 2_i64 } else { 1_i64 })
            .bind(state.to_owned())
            .bind(result.map(str::to_owned))
            .bind(result.is_some())
            .bind(None::<String>)
            .bind(as_i64($now))
            .bind(as_i64($now))
            .bind(lease)
            .bind(None::<String>)
            .bind(None::<i64>)
    }};
}

/// Runs the store's insert, then its fenced update, on `$pool`; both must write one row.
macro_rules! raw_sql_claim_and_settle {
    ($pool:expr, $raw:expr, $key:expr) => {{
        let incarnation = random_incarnation();
        let now = now_ms();
        let inserted = bind_record!(
            sqlx::query($raw.insert.clone()),
            $key,
            incarnation,
            now,
            false
        )
        .execute($pool)
        .await
        .unwrap();
        assert_eq!(inserted.rows_affected(), 1);
        let updated = bind_record!(
            sqlx::query($raw.update.clone()),
            $key,
            incarnation,
            now,
            true
        )
        .bind(incarnation.clone())
        .bind(1_i64)
        .execute($pool)
        .await
        .unwrap();
        assert_eq!(updated.rows_affected(), 1);
    }};
}

impl RawSql {
    async fn claim_and_settle(&self, key: &str) {
        match &self.pool {
            SqlPool::Sqlite(pool) => raw_sql_claim_and_settle!(pool, self, key),
            SqlPool::Postgres(pool) => raw_sql_claim_and_settle!(pool, self, key),
        }
    }
}

struct RawRedis {
    connection: redis::aio::ConnectionManager,
    backend: RedisBackend<redis::aio::ConnectionManager>,
    script: redis::Script,
}

/// Lowercase hex of the key's UTF-8 bytes: the store's index member.
fn hex(key: &str) -> String {
    key.bytes().map(|b| format!("{b:02x}")).collect()
}

/// The camelCase JSON the store keeps in Redis for a pending record, or for it completed.
fn record_json(key: &str, incarnation: &str, now: u64, completed: bool) -> String {
    let record = if completed {
        json!({"key": key, "fingerprint": "fp", "ownerId": "bench", "incarnation": incarnation,
               "revision": 2, "state": "completed", "result": {"ok": true},
               "createdAt": now, "updatedAt": now})
    } else {
        json!({"key": key, "fingerprint": "fp", "ownerId": "bench", "incarnation": incarnation,
               "revision": 1, "state": "pending", "createdAt": now, "updatedAt": now,
               "leaseExpiresAt": now + LEASE_MS})
    };
    record.to_string()
}

impl RawRedis {
    /// `EVALSHA` of the store's script: insert-if-absent, then the update fenced on revision 1.
    async fn claim_and_settle(&self, key: &str) {
        let (incarnation, now) = (random_incarnation(), now_ms());
        let (record_key, member) = (self.backend.record_key(key), hex(key));
        let mut connection = self.connection.clone();
        let inserted: i64 = self
            .script
            .key(&record_key)
            .key(self.backend.index_key())
            .arg("")
            .arg("")
            .arg(record_json(key, &incarnation, now, false))
            .arg(&member)
            .invoke_async(&mut connection)
            .await
            .unwrap();
        assert_eq!(inserted, 1);
        let updated: i64 = self
            .script
            .key(&record_key)
            .key(self.backend.index_key())
            .arg(&incarnation)
            .arg("1")
            .arg(record_json(key, &incarnation, now, true))
            .arg(&member)
            .invoke_async(&mut connection)
            .await
            .unwrap();
        assert_eq!(updated, 1);
    }
}

/// One backend: the store and the raw writes over the same connections.
struct Subject {
    name: &'static str,
    store: DurableOperationStore,
    raw: Raw,
    keys: AtomicU64,
}

impl Subject {
    fn next_key(&self, kind: &str) -> String {
        format!("{kind}:{}", self.keys.fetch_add(1, Ordering::Relaxed))
    }

    async fn store_claim_and_settle(&self) {
        let key = self.next_key("store");
        let request = ClaimRequest {
            key: &key,
            fingerprint: "fp",
            owner_id: "bench",
            lease: None,
        };
        let claim = store_call(self.store.claim(request)).await;
        let settlement = Settlement::Completed {
            result: json!({"ok": true}),
        };
        std::hint::black_box(store_call(self.store.settle(&claim, settlement)).await);
    }

    async fn raw_claim_and_settle(&self) {
        let key = self.next_key("raw");
        match &self.raw {
            Raw::Sql(raw) => raw.claim_and_settle(&key).await,
            Raw::Redis(raw) => raw.claim_and_settle(&key).await,
        }
    }
}

async fn store_call<T>(
    call: impl Future<Output = Result<T, tool_durable_operations::DurableOperationError>>,
) -> T {
    call.await.unwrap()
}

/// Runs `operations` operations one after another.
async fn sequential<F, Fut>(subject: &Arc<Subject>, operations: u64, operation: F) -> Duration
where
    F: Fn(Arc<Subject>) -> Fut,
    Fut: Future<Output = ()>,
{
    let start = Instant::now();
    for _ in 0..operations {
        operation(subject.clone()).await;
    }
    start.elapsed()
}

/// Runs `operations` operations spread over [`CALLERS`] tokio tasks; the time until all end.
async fn concurrent<F, Fut>(subject: &Arc<Subject>, operations: u64, operation: F) -> Duration
where
    F: Fn(Arc<Subject>) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let start = Instant::now();
    let tasks: Vec<_> = (0..CALLERS)
        .map(|caller| {
            let share = operations / CALLERS + u64::from(caller < operations % CALLERS);
            let (subject, operation) = (subject.clone(), operation.clone());
            tokio::spawn(async move {
                for _ in 0..share {
                    operation(subject.clone()).await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    start.elapsed()
}

async fn store_operation(subject: Arc<Subject>) {
    subject.store_claim_and_settle().await
}

async fn raw_operation(subject: Arc<Subject>) {
    subject.raw_claim_and_settle().await
}

/// Store and raw means of one measurement.
#[derive(Default)]
struct Pair {
    store: Mean,
    raw: Mean,
    batches: AtomicU64,
}

/// Times one batch of `operations` store operations and one of raw ones, in alternating
/// order, so drifting load on a shared machine hits both sides alike. Gives the store's time.
async fn paired_batch(
    subject: &Arc<Subject>,
    pair: &Pair,
    operations: u64,
    parallel: bool,
) -> Duration {
    let run = |store: bool| async move {
        match (parallel, store) {
            (false, true) => sequential(subject, operations, store_operation).await,
            (false, false) => sequential(subject, operations, raw_operation).await,
            (true, true) => concurrent(subject, operations, store_operation).await,
            (true, false) => concurrent(subject, operations, raw_operation).await,
        }
    };
    let (store, raw) = if pair
        .batches
        .fetch_add(1, Ordering::Relaxed)
        .is_multiple_of(2)
    {
        let store = run(true).await;
        (store, run(false).await)
    } else {
        let raw = run(false).await;
        (run(true).await, raw)
    };
    pair.store.add(store, operations);
    pair.raw.add(raw, operations);
    store
}

/// Latency (one caller) and throughput (8 callers) of claim + settle, each paired with the raw
/// writes, printing both and their ratio.
fn bench_subject(c: &mut Criterion, runtime: &Runtime, subject: &Arc<Subject>) {
    let name = subject.name;
    let (latency, throughput) = (Arc::new(Pair::default()), Arc::new(Pair::default()));
    let mut group = c.benchmark_group(format!("durable_operations/{name}"));
    group.sample_size(10);
    for (label, pair, parallel) in [
        ("claim_and_settle", &latency, false),
        ("claim_and_settle_8_callers", &throughput, true),
    ] {
        group.bench_function(label, |b| {
            b.to_async(runtime).iter_custom(|operations| {
                let (subject, pair) = (subject.clone(), pair.clone());
                async move { paired_batch(&subject, &pair, operations, parallel).await }
            })
        });
    }
    group.finish();
    if latency.batches.load(Ordering::Relaxed) == 0
        || throughput.batches.load(Ordering::Relaxed) == 0
    {
        return; // filtered out on the command line
    }
    let (store, raw) = (latency.store.per_operation(), latency.raw.per_operation());
    println!(
        "durable_operations/{name}: claim+settle {store:?} vs raw writes {raw:?} = {:.2}x",
        store.as_secs_f64() / raw.as_secs_f64()
    );
    let (store, raw) = (throughput.store.per_second(), throughput.raw.per_second());
    println!(
        "durable_operations/{name}: {CALLERS} callers: {store:.0} claim+settle/s vs {raw:.0} raw/s = {:.2}x",
        store / raw
    );
}

fn database_url() -> String {
    std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

fn redis_url() -> String {
    std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

fn sql(text: String) -> SqlStr {
    AssertSqlSafe(text).into_sql_str()
}

fn subject(name: &'static str, store: DurableOperationStore, raw: Raw) -> Arc<Subject> {
    Arc::new(Subject {
        name,
        store,
        raw,
        keys: AtomicU64::new(0),
    })
}

fn durable_operations(c: &mut Criterion) {
    let runtime = Runtime::new().unwrap();
    let unique = format!("{}_{}", std::process::id(), now_ms());

    let dir = tempfile::tempdir().unwrap();
    let sqlite = runtime
        .block_on(SqliteBackend::open(dir.path().join("operations.db")))
        .unwrap();
    let raw = Raw::Sql(RawSql {
        pool: SqlPool::Sqlite(sqlite.pool().clone()),
        insert: sql(sqlite.insert_sql().to_owned()),
        update: sql(sqlite.update_sql().to_owned()),
    });
    let store = DurableOperationStore::new(Arc::new(sqlite));
    bench_subject(c, &runtime, &subject("sqlite", store, raw));

    let prefix = format!("bench:durable-operation:{unique}:");
    let client = redis::Client::open(redis_url()).unwrap();
    let connection = runtime.block_on(client.get_connection_manager()).unwrap();
    let redis = RedisBackend::with_prefix(connection.clone(), &prefix).unwrap();
    let raw = Raw::Redis(RawRedis {
        connection,
        backend: redis.clone(),
        script: redis::Script::new(REDIS_DURABLE_OPERATION_CAS_SCRIPT),
    });
    let store = DurableOperationStore::new(Arc::new(redis));
    bench_subject(c, &runtime, &subject("redis", store.clone(), raw));
    // Remove this run's records (all completed, raw ones included) through the state machine.
    runtime.block_on(store.prune_before(u64::MAX)).unwrap();

    let schema = format!("durable_bench_{unique}");
    let pool = runtime
        .block_on(
            PgPoolOptions::new()
                .max_connections(u32::try_from(CALLERS).unwrap())
                .connect(&database_url()),
        )
        .unwrap();
    let postgres = PostgresBackend::new(pool.clone(), &format!("{schema}.operations")).unwrap();
    let create = format!("CREATE SCHEMA \"{schema}\"");
    runtime
        .block_on(sqlx::raw_sql(AssertSqlSafe(create)).execute(&pool))
        .unwrap();
    runtime.block_on(postgres.apply_schema()).unwrap();
    let raw = Raw::Sql(RawSql {
        pool: SqlPool::Postgres(pool.clone()),
        insert: sql(postgres.insert_sql().to_owned()),
        update: sql(postgres.update_sql().to_owned()),
    });
    let store = DurableOperationStore::new(Arc::new(postgres));
    bench_subject(c, &runtime, &subject("postgres", store, raw));
    let drop = format!("DROP SCHEMA \"{schema}\" CASCADE");
    runtime
        .block_on(sqlx::raw_sql(AssertSqlSafe(drop)).execute(&pool))
        .unwrap();
}

criterion_group!(benches, durable_operations);
criterion_main!(benches);
