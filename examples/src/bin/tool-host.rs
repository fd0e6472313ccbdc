//! A deployable MCP host: a registry of sample tools with a real side effect (a ledger table
//! in PostgreSQL or SQLite) served over streamable HTTP at `/mcp`. Everything a retried call
//! needs lives in the shared store named by `--store` (idempotency records, tasks, the approval
//! replay guard) and approval states are sealed with the fleet's shared `--state-key-file`, so
//! any host of a fleet behind a load balancer can answer a call another host started, and a
//! client retrying with its `tool-context/idempotency-key` gets the first answer instead of a
//! second append.
//!
//! ```text
//! tool-host --listen 127.0.0.1:8931 --store postgres://postgres@127.0.0.1/test \
//!           --state-key-file fleet.key [--ledger URL] [--owner NAME] [--approve-all]
//! ```
//!
//! - `ledger.append {entry}` appends one row (destructive: asks the client for approval through
//!   MCP elicitation, or runs at once with `--approve-all`); `ledger.count` reads.
//! - `--ledger` defaults to the store when it is `postgres://` or `sqlite:`; a `redis://` store
//!   needs one.
//! - `--state-key-file` is created (32 random bytes) when missing: give every host the same file.
//! - `--lease-ms` (default 30 s, renewed while a call runs): how long retries of a call whose
//!   host died wait before they are told its outcome is unknown (`TOOL_IDEMPOTENCY_UNKNOWN`:
//!   the append is never run a second time).
//! - `--oauth-issuer URL` (with `--oauth-resource`, `--oauth-scopes`) accepts only that
//!   issuer's bearer tokens for this resource; each token's subject owns its calls' keys.
//! - `--owner` names who unauthenticated calls belong to (their idempotency keys are scoped by
//!   it): the same on every host of a fleet.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use axum::serve::ListenerExt;
use clap::Parser;
use sqlx::postgres::PgPoolOptions;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::{PgPool, SqlitePool};
use tool_context::prelude::*;
use tool_context::{AllowAll, LeaseTakeover, StandardPolicy};
use tool_context_mcp::oauth::OAuthResourceServer;
use tool_context_mcp::rmcp::transport::StreamableHttpServerConfig;
use tool_context_mcp::{McpToolServer, RequestStateKey, streamable_http_service};
use tool_durable_operations::DurableOperationStore;

/// Command-line flags (each also read from the environment).
#[derive(Parser, Debug)]
#[command(
    name = "tool-host",
    about = "Serve sample tools with a durable side effect over MCP (streamable HTTP at /mcp)."
)]
struct Flags {
    /// Address to listen on.
    #[arg(long, env = "TOOL_HOST_LISTEN", default_value = "127.0.0.1:8931")]
    listen: SocketAddr,
    /// The shared durable store: `postgres://…`, `redis://…` or `sqlite:PATH`.
    #[arg(
        long,
        env = "TOOL_HOST_STORE",
        default_value = "sqlite:tool-host/operations.db"
    )]
    store: String,
    /// Where `ledger.append` writes: `postgres://…` or `sqlite:PATH` (default: the store).
    #[arg(long, env = "TOOL_HOST_LEDGER")]
    ledger: Option<String>,
    /// The fleet's key for sealed approval states (created when missing).
    #[arg(
        long,
        env = "TOOL_HOST_STATE_KEY_FILE",
        default_value = "tool-host/state.key"
    )]
    state_key_file: PathBuf,
    /// Who unauthenticated calls belong to; the same on every host of a fleet.
    #[arg(long, env = "TOOL_HOST_OWNER", default_value = "tool-host")]
    owner: String,
    /// Run mutations without asking the client (a test fleet, a trusted network).
    #[arg(long, env = "TOOL_HOST_APPROVE_ALL")]
    approve_all: bool,
    /// How long a call's claim lasts without renewal (ms): a host that dies mid-call blocks
    /// retries of that call this long, then they are told the outcome is unknown.
    #[arg(long, env = "TOOL_HOST_LEASE_MS", default_value_t = 30_000)]
    lease_ms: u64,
    /// Accept only bearer tokens of this OAuth issuer (its JWKS is found through its metadata);
    /// each token's subject owns its calls' idempotency keys, approvals and tasks.
    #[arg(long, env = "TOOL_HOST_OAUTH_ISSUER")]
    oauth_issuer: Option<String>,
    /// The URL clients reach the fleet at, which tokens must name as their audience (default:
    /// `http://LISTEN/mcp`; behind a load balancer, the balancer's URL).
    #[arg(long, env = "TOOL_HOST_OAUTH_RESOURCE", requires = "oauth_issuer")]
    oauth_resource: Option<String>,
    /// Scopes every token must carry (comma-separated).
    #[arg(
        long,
        env = "TOOL_HOST_OAUTH_SCOPES",
        value_delimiter = ',',
        requires = "oauth_issuer"
    )]
    oauth_scopes: Vec<String>,
}

/// The ledger the sample tools write to.
enum Ledger {
    Postgres(PgPool),
    Sqlite(SqlitePool),
}

static LEDGER: OnceLock<Ledger> = OnceLock::new();
/// This host's name in the rows it writes (its listen address).
static HOST: OnceLock<String> = OnceLock::new();

fn ledger() -> &'static Ledger {
    LEDGER.get().expect("opened before serving")
}

/// What a failed ledger statement means. Only a pool that never handed out a connection
/// proves nothing was sent; any later failure (the server refused, died or went silent) may
/// come after the commit, so it is ambiguous: the registry then marks the call unknown instead
/// of telling the client it failed while the row exists.
fn ledger_failed(error: sqlx::Error) -> ToolCallError {
    match error {
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed => ToolCallError::new(
            "LEDGER_UNAVAILABLE",
            format!("The ledger could not be reached; nothing was written: {error}"),
        )
        .with_retryable(true),
        error => ToolCallError::new(
            codes::TOOL_EXECUTION_UNKNOWN,
            format!("The ledger failed while the statement was sent; it may or may not have been applied: {error}"),
        )
        .with_retryable(false),
    }
}

/// How many entries the ledger holds.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Entries {
    /// The number of rows.
    entries: i64,
}

/// Appends one entry to the ledger and returns how many entries it holds.
#[tool(destructive, name = "ledger.append")]
async fn append(
    /// The entry to append.
    entry: String,
) -> Result<Entries, ToolCallError> {
    let host = HOST.get().map_or("", String::as_str);
    match ledger() {
        Ledger::Postgres(pool) => {
            sqlx::query("INSERT INTO tool_host_ledger (entry, host) VALUES ($1, $2)")
                .bind(&entry)
                .bind(host)
                .execute(pool)
                .await
                .map_err(ledger_failed)?;
        }
        Ledger::Sqlite(pool) => {
            sqlx::query("INSERT INTO tool_host_ledger (entry, host) VALUES (?, ?)")
                .bind(&entry)
                .bind(host)
                .execute(pool)
                .await
                .map_err(ledger_failed)?;
        }
    }
    count().await
}

/// Counts the ledger's entries.
#[tool(read_only, name = "ledger.count")]
async fn count() -> Result<Entries, ToolCallError> {
    let query = "SELECT COUNT(*) FROM tool_host_ledger";
    let entries = match ledger() {
        Ledger::Postgres(pool) => sqlx::query_scalar(query).fetch_one(pool).await,
        Ledger::Sqlite(pool) => sqlx::query_scalar(query).fetch_one(pool).await,
    }
    .map_err(ledger_failed)?;
    Ok(Entries { entries })
}

/// Opens the ledger `url` names and creates its table.
async fn open_ledger(url: &str) -> Result<Ledger, String> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let pool = PgPoolOptions::new()
            .max_connections(4)
            .connect(url)
            .await
            .map_err(|error| format!("ledger {url}: {error}"))?;
        sqlx::query("CREATE TABLE IF NOT EXISTS tool_host_ledger (id BIGSERIAL PRIMARY KEY, entry TEXT NOT NULL, host TEXT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT now())")
            .execute(&pool)
            .await
            .map_err(|error| format!("ledger table: {error}"))?;
        return Ok(Ledger::Postgres(pool));
    }
    let Some(path) = url
        .strip_prefix("sqlite:")
        .map(|path| path.trim_start_matches("//"))
    else {
        return Err(format!(
            "--ledger must be postgres://… or sqlite:PATH, not {url}"
        ));
    };
    create_parent(Path::new(path))?;
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .busy_timeout(std::time::Duration::from_secs(10));
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .map_err(|error| format!("ledger {url}: {error}"))?;
    sqlx::query("CREATE TABLE IF NOT EXISTS tool_host_ledger (id INTEGER PRIMARY KEY AUTOINCREMENT, entry TEXT NOT NULL, host TEXT NOT NULL, at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)")
        .execute(&pool)
        .await
        .map_err(|error| format!("ledger table: {error}"))?;
    Ok(Ledger::Sqlite(pool))
}

fn create_parent(path: &Path) -> Result<(), String> {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => std::fs::create_dir_all(parent)
            .map_err(|error| format!("cannot create {}: {error}", parent.display())),
        _ => Ok(()),
    }
}

/// The fleet's state key: read from `path`, or created there (owner-only) when missing.
fn state_key(path: &Path) -> Result<RequestStateKey, String> {
    if let Ok(bytes) = std::fs::read(path) {
        return RequestStateKey::from_bytes(&bytes)
            .map_err(|error| format!("{}: {error}", path.display()));
    }
    create_parent(path)?;
    let key = RequestStateKey::generate();
    write_owner_only(path, key.as_bytes())
        .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    Ok(key)
}

/// Writes a new file only its owner can read (the key seals approval states).
fn write_owner_only(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(bytes)
}

fn ledger_url(flags: &Flags) -> Result<&str, String> {
    match &flags.ledger {
        Some(url) => Ok(url),
        None if flags.store.starts_with("redis") => {
            Err("a redis:// store needs --ledger postgres://… or sqlite:PATH".to_owned())
        }
        None => Ok(&flags.store),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let flags = Flags::parse();
    if let Some(path) = flags.store.strip_prefix("sqlite:") {
        create_parent(Path::new(path.trim_start_matches("//")))?;
    }
    let store = Arc::new(DurableOperationStore::connect(&flags.store).await?);
    LEDGER.set(open_ledger(ledger_url(&flags)?).await?).ok();
    HOST.set(flags.listen.to_string()).ok();
    let builder = ToolRegistry::builder()
        .tool(append::tool())
        .tool(count::tool())
        .durable_store(Arc::clone(&store))
        .durable_lease_ms(flags.lease_ms)
        // `ledger.append` cannot tell whether a dead host's append happened: a retry after the
        // lease is told "unknown" rather than appending again.
        .durable_takeover(LeaseTakeover::MarkUnknown)
        .execution_owner_id(format!("tool-host:{}:{}", flags.listen, std::process::id()));
    let registry = if flags.approve_all {
        builder.policy(AllowAll).build()?
    } else {
        builder.policy(StandardPolicy).build()?
    };
    let server = McpToolServer::new(registry)
        .with_implementation("tool-host", env!("CARGO_PKG_VERSION"))
        .with_request_state_key(state_key(&flags.state_key_file)?)
        .with_request_owner(flags.owner.clone())
        .with_durable_store(store);
    let service = streamable_http_service(&server, StreamableHttpServerConfig::default());
    let app = match oauth(&flags)? {
        // `/mcp` behind the bearer-token check, and the protected-resource metadata that tells
        // clients where to get a token.
        Some(oauth) => oauth.metadata_paths().iter().fold(
            axum::Router::new().nest_service("/mcp", oauth.layer().wrap(service)),
            |app, path| app.route_service(path, oauth.metadata_service()),
        ),
        None => axum::Router::new().nest_service("/mcp", service),
    };
    // Answers go out at once: with Nagle's algorithm the second write of a streamed answer waits
    // for the client's delayed ACK (about 40 ms a call).
    let listener = tokio::net::TcpListener::bind(flags.listen)
        .await?
        .tap_io(|tcp| {
            if let Err(error) = tcp.set_nodelay(true) {
                tracing::debug!(%error, "could not set TCP_NODELAY");
            }
        });
    tracing::info!(listen = %flags.listen, store = %redacted(&flags.store), "tool-host serving /mcp");
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

/// The OAuth resource server `--oauth-issuer` asks for.
fn oauth(flags: &Flags) -> Result<Option<OAuthResourceServer>, String> {
    let Some(issuer) = &flags.oauth_issuer else {
        return Ok(None);
    };
    let resource = flags
        .oauth_resource
        .clone()
        .unwrap_or_else(|| format!("http://{}/mcp", flags.listen));
    OAuthResourceServer::builder(resource, issuer.clone())
        .required_scopes(flags.oauth_scopes.iter().cloned())
        .resource_name("tool-host")
        .build()
        .map(Some)
        .map_err(|error| format!("--oauth-issuer: {error}"))
}

/// A store URL without its password, for the log.
fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}
