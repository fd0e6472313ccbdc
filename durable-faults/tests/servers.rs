//! The throwaway servers against the real binaries (`redis-server`, PostgreSQL's
//! `/usr/lib/postgresql/*/bin`): kills lose exactly what their durability says, pauses stop
//! answers, dropped connections break. Missing binaries fail these tests, never skip them.

use std::time::Duration;

use durable_faults::servers::{
    PostgresServer, RedisDurability, RedisServer, ServerError, SqliteFile,
};
use sqlx::Connection;
use sqlx::postgres::PgConnection;

/// The client-side timeout for a request to a paused server (no assumption on speed: a paused
/// server never answers, however long one waits).
const PAUSED_WAIT: Duration = Duration::from_millis(300);

async fn redis(dir: &tempfile::TempDir, durability: RedisDurability) -> RedisServer {
    RedisServer::start(dir.path(), durability)
        .await
        .unwrap_or_else(|e| panic!("redis-server must be installed and start: {e}"))
}

async fn postgres(dir: &tempfile::TempDir) -> PostgresServer {
    PostgresServer::start(dir.path())
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL must be installed and start: {e}"))
}

async fn redis_connection(url: &str) -> redis::aio::MultiplexedConnection {
    redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap()
}

async fn redis_get(url: &str, key: &str) -> Option<String> {
    let mut connection = redis_connection(url).await;
    redis::cmd("GET")
        .arg(key)
        .query_async(&mut connection)
        .await
        .unwrap()
}

async fn redis_set(url: &str, key: &str, value: &str) {
    let mut connection = redis_connection(url).await;
    let () = redis::cmd("SET")
        .arg(key)
        .arg(value)
        .query_async(&mut connection)
        .await
        .unwrap();
}

async fn ping(connection: &mut redis::aio::MultiplexedConnection) -> redis::RedisResult<String> {
    redis::cmd("PING").query_async(connection).await
}

async fn select_one(connection: &mut PgConnection) -> Result<i32, sqlx::Error> {
    sqlx::query_scalar("SELECT 1").fetch_one(connection).await
}

#[tokio::test]
async fn redis_aof_always_keeps_an_acknowledged_value_across_kill9() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = redis(&dir, RedisDurability::AofAlways).await;
    let (url, port) = (server.url(), server.port());
    redis_set(&url, "k", "v").await;

    server.kill9().await.unwrap();
    assert_eq!(server.pid(), None);
    server.restart().await.unwrap();

    assert_eq!(server.port(), port, "a restart keeps the port");
    assert_eq!(redis_get(&server.url(), "k").await.as_deref(), Some("v"));
    let log = std::fs::read_to_string(server.log_path()).unwrap();
    assert!(
        log.contains("# durable-faults") && log.contains("kill -9"),
        "{log}"
    );
}

#[tokio::test]
async fn redis_without_persistence_loses_the_value_across_kill9() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = redis(&dir, RedisDurability::None).await;
    redis_set(&server.url(), "k", "v").await;

    server.kill9().await.unwrap();
    server.restart().await.unwrap();

    assert_eq!(redis_get(&server.url(), "k").await, None);
}

#[tokio::test]
async fn redis_restart_refuses_a_running_server_and_faults_refuse_a_killed_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = redis(&dir, RedisDurability::AofEverySec).await;
    assert!(server.restart().await.is_err());
    server.kill9().await.unwrap();
    assert!(server.kill9().await.is_err());
    assert!(server.pause().is_err());
    assert!(server.drop_connections().await.is_err());
}

#[tokio::test]
async fn redis_paused_does_not_answer_and_answers_again_when_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = redis(&dir, RedisDurability::AofEverySec).await;
    let mut connection = redis_connection(&server.url()).await;
    assert_eq!(ping(&mut connection).await.unwrap(), "PONG");

    server.pause().unwrap();
    let answer = tokio::time::timeout(PAUSED_WAIT, ping(&mut connection)).await;
    assert!(
        !matches!(answer, Ok(Ok(_))),
        "a paused server answered: {answer:?}"
    );

    server.resume().unwrap();
    let mut fresh = redis_connection(&server.url()).await;
    assert_eq!(ping(&mut fresh).await.unwrap(), "PONG");
}

#[tokio::test]
async fn redis_drop_connections_breaks_an_existing_connection_only() {
    let dir = tempfile::tempdir().unwrap();
    let server = redis(&dir, RedisDurability::None).await;
    let mut existing = redis_connection(&server.url()).await;
    assert_eq!(ping(&mut existing).await.unwrap(), "PONG");

    let dropped = server.drop_connections().await.unwrap();

    assert!(dropped >= 1, "dropped {dropped}");
    assert!(ping(&mut existing).await.is_err());
    let mut fresh = redis_connection(&server.url()).await;
    assert_eq!(ping(&mut fresh).await.unwrap(), "PONG");
}

async fn insert_committed_row(url: &str) {
    let mut connection = PgConnection::connect(url).await.unwrap();
    sqlx::query("CREATE TABLE t (k text PRIMARY KEY, v text NOT NULL)")
        .execute(&mut connection)
        .await
        .unwrap();
    sqlx::query("INSERT INTO t VALUES ('k', 'v')")
        .execute(&mut connection)
        .await
        .unwrap();
}

async fn read_row(url: &str) -> Option<String> {
    let mut connection = PgConnection::connect(url).await.unwrap();
    sqlx::query_scalar("SELECT v FROM t WHERE k = 'k'")
        .fetch_optional(&mut connection)
        .await
        .unwrap()
}

#[tokio::test]
async fn postgres_keeps_a_committed_row_across_immediate_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = postgres(&dir).await;
    let port = server.port();
    insert_committed_row(&server.url()).await;

    server.immediate_shutdown().await.unwrap();
    assert!(PgConnection::connect(&server.url()).await.is_err());
    server.restart().await.unwrap();

    assert_eq!(server.port(), port, "a restart keeps the port");
    assert_eq!(read_row(&server.url()).await.as_deref(), Some("v"));
    let log = std::fs::read_to_string(server.log_path()).unwrap();
    assert!(log.contains("immediate shutdown"), "{log}");
}

#[tokio::test]
async fn postgres_keeps_a_committed_row_across_kill9_of_all_its_processes() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = postgres(&dir).await;
    insert_committed_row(&server.url()).await;

    server.kill9().await.unwrap();
    server.restart().await.unwrap();

    assert_eq!(read_row(&server.url()).await.as_deref(), Some("v"));
}

#[tokio::test]
async fn postgres_paused_does_not_answer_and_answers_again_when_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = postgres(&dir).await;
    let mut existing = PgConnection::connect(&server.url()).await.unwrap();
    assert_eq!(select_one(&mut existing).await.unwrap(), 1);

    server.pause().unwrap();
    let answer = tokio::time::timeout(PAUSED_WAIT, select_one(&mut existing)).await;
    assert!(
        !matches!(answer, Ok(Ok(_))),
        "a paused backend answered: {answer:?}"
    );
    let connect = tokio::time::timeout(PAUSED_WAIT, PgConnection::connect(&server.url())).await;
    assert!(
        !matches!(connect, Ok(Ok(_))),
        "a paused postmaster accepted a connection"
    );

    server.resume().unwrap();
    let mut fresh = PgConnection::connect(&server.url()).await.unwrap();
    assert_eq!(select_one(&mut fresh).await.unwrap(), 1);
}

#[tokio::test]
async fn postgres_drop_connections_breaks_an_existing_connection_only() {
    let dir = tempfile::tempdir().unwrap();
    let server = postgres(&dir).await;
    let mut existing = PgConnection::connect(&server.url()).await.unwrap();
    assert_eq!(select_one(&mut existing).await.unwrap(), 1);

    let dropped = server.drop_connections().await.unwrap();

    assert!(dropped >= 1, "dropped {dropped}");
    assert!(select_one(&mut existing).await.is_err());
    let mut fresh = PgConnection::connect(&server.url()).await.unwrap();
    assert_eq!(select_one(&mut fresh).await.unwrap(), 1);
}

#[tokio::test]
async fn postgres_dropped_while_paused_still_stops() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = postgres(&dir).await;
    let pid = server.pid().unwrap();
    server.pause().unwrap();

    drop(server);

    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the postmaster {pid} outlived its drop"
    );
}

#[test]
fn sqlite_file_lives_in_its_dir() {
    let dir = tempfile::tempdir().unwrap();
    let file = SqliteFile::new(dir.path());
    assert_eq!(file.path().parent(), Some(dir.path()));
    assert!(file.url().starts_with("sqlite://") && file.url().ends_with("?mode=rwc"));
}

#[tokio::test]
async fn sqlite_file_opens_with_the_backend() {
    let dir = tempfile::tempdir().unwrap();
    let file = SqliteFile::new(dir.path());
    tool_durable_operations::backend::sqlite::SqliteBackend::open(file.path())
        .await
        .unwrap();
    assert!(file.path().is_file());
}

#[tokio::test]
async fn a_failed_start_reports_the_tail_of_its_log() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/occupied"), "").unwrap();

    let error = PostgresServer::start(dir.path()).await.unwrap_err();

    assert!(matches!(error, ServerError::Start { .. }), "{error}");
    let message = error.to_string();
    assert!(message.contains("initdb did not start"), "{message}");
    assert!(
        message.contains("initdb.log ---\n") && message.contains("data"),
        "{message}"
    );
}
