//! A real second process claims a key on Redis and on PostgreSQL and is killed before it
//! completes: this process sees PENDING during the lease and reclaims the key once the lease
//! deadline has passed. Runs without the libtest harness: the same binary is the parent and,
//! with `DURABLE_CHILD_BACKEND` set, the child.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tool_durable_operations::backend::postgres::{PostgresBackend, postgres_schema_sql};
use tool_durable_operations::backend::redis::RedisBackend;
use tool_durable_operations::{
    ClaimRequest, ClaimStatus, DurableOperationBackend, DurableOperationStore, Fence,
    OperationState,
};

const CHILD_BACKEND: &str = "DURABLE_CHILD_BACKEND";
const CHILD_TARGET: &str = "DURABLE_CHILD_TARGET";
const KEY: &str = "child-process:charge";
const CHILD_LEASE: Duration = Duration::from_millis(1_500);

fn database_url() -> String {
    std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

fn redis_url() -> String {
    std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

/// Connects to `backend` (`redis` or `postgres`) at `target` (key prefix or table).
async fn connect(backend: &str, target: &str) -> Arc<dyn DurableOperationBackend> {
    match backend {
        "redis" => {
            let client = redis::Client::open(redis_url()).unwrap();
            let connection = client.get_connection_manager().await.unwrap();
            Arc::new(RedisBackend::with_prefix(connection, target).unwrap())
        }
        "postgres" => {
            let pool = sqlx::postgres::PgPoolOptions::new()
                .max_connections(1)
                .connect(&database_url())
                .await
                .unwrap();
            Arc::new(PostgresBackend::new(pool, target).unwrap())
        }
        other => panic!("unknown backend {other}"),
    }
}

fn claim_request(owner: &str) -> ClaimRequest<'_> {
    ClaimRequest {
        key: KEY,
        fingerprint: "fp",
        owner_id: owner,
        lease: Some(CHILD_LEASE),
    }
}

/// The child: claim, report the fence on stdout, then hang until killed.
async fn child(backend: String, target: String) {
    let store = DurableOperationStore::new(connect(&backend, &target).await);
    let claim = store.claim(claim_request("child")).await.unwrap();
    assert_eq!(claim.status, ClaimStatus::Owner);
    println!("{}", serde_json::to_string(&claim.fence).unwrap());
    tokio::time::sleep(Duration::from_secs(3_600)).await;
}

/// The parent scenario against one backend.
async fn parent(backend: &str, target: &str) {
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .env(CHILD_BACKEND, backend)
        .env(CHILD_TARGET, target)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = lines
        .next_line()
        .await
        .unwrap()
        .expect("child reports its fence");
    let child_fence: Fence = serde_json::from_str(&line).unwrap();
    child.kill().await.unwrap();

    let store = DurableOperationStore::new(connect(backend, target).await);
    let seen = store.claim(claim_request("parent")).await.unwrap();
    assert_eq!(
        seen.status,
        ClaimStatus::Pending,
        "{backend}: the killed child's lease is still live"
    );
    assert_eq!(seen.record.owner_id, "child");
    assert_eq!(seen.fence, child_fence);

    let deadline = seen
        .record
        .lease_expires_at
        .expect("pending records carry a deadline");
    while store.now_ms() <= deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let reclaimed = store.claim(claim_request("parent")).await.unwrap();
    assert_eq!(
        reclaimed.status,
        ClaimStatus::Owner,
        "{backend}: expired lease is reclaimed"
    );
    assert_eq!(reclaimed.record.incarnation, child_fence.incarnation);
    assert_eq!(reclaimed.record.revision, child_fence.revision + 1);
    let late = store
        .complete(KEY, "child", serde_json::json!("late"), &child_fence)
        .await
        .unwrap_err();
    assert_eq!(
        late.code(),
        "DURABLE_OPERATION_OWNER_MISMATCH",
        "{backend}: the dead owner is fenced out"
    );
    let done = store
        .complete(KEY, "parent", serde_json::json!("done"), &reclaimed.fence)
        .await
        .unwrap();
    assert_eq!(done.state, OperationState::Completed);
    eprintln!("child_process: {backend} ok");
}

async fn redis_scenario() {
    let prefix = format!("test:durable-operation:{}:", uuid::Uuid::new_v4().simple());
    parent("redis", &prefix).await;
    let client = redis::Client::open(redis_url()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query_async(&mut connection)
        .await
        .unwrap();
    let _: () = redis::cmd("DEL")
        .arg(keys)
        .query_async(&mut connection)
        .await
        .unwrap();
}

async fn postgres_scenario() {
    let schema = format!("durable_test_{}", uuid::Uuid::new_v4().simple());
    let table = format!("{schema}.operations");
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(&database_url())
        .await
        .unwrap();
    let setup = format!(
        "CREATE SCHEMA \"{schema}\";\n{}",
        postgres_schema_sql(&table).unwrap()
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(setup))
        .execute(&pool)
        .await
        .unwrap();
    parent("postgres", &table).await;
    let drop = format!("DROP SCHEMA \"{schema}\" CASCADE");
    sqlx::raw_sql(sqlx::AssertSqlSafe(drop))
        .execute(&pool)
        .await
        .unwrap();
}

/// The one test this binary holds, as nextest lists it.
const TEST_NAME: &str = "lease_reclaim_after_kill";

fn main() {
    // nextest lists a harness-less binary with `--list --format terse` (and again with
    // `--ignored`): answer with the test's name, without running the scenario at list time.
    let arguments: Vec<String> = std::env::args().collect();
    if arguments.iter().any(|argument| argument == "--list") {
        if !arguments.iter().any(|argument| argument == "--ignored") {
            println!("{TEST_NAME}: test");
        }
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    if let (Ok(backend), Ok(target)) = (std::env::var(CHILD_BACKEND), std::env::var(CHILD_TARGET)) {
        runtime.block_on(child(backend, target));
        return;
    }
    runtime.block_on(async {
        tokio::join!(redis_scenario(), postgres_scenario());
    });
}
