//! The fleet campaign: exactly-once across the MCP wire on several hosts under faults.
//!
//! ```text
//! clients (processes) ──► dropping proxy ──► HAProxy ──► tool-host × 3 ──► one store + ledger
//! ```
//!
//! Client processes send keyed `ledger.append` calls (`_meta["tool-context/idempotency-key"]`)
//! and retry every unanswered one with its key. The nemesis, every 0.3–1.5 s: `kill -9` of a
//! host (started again on its port at once), a swallowed answer (the proxy cuts the client's
//! connection after the host committed), a database pause (SIGSTOP, shorter than a lease) or a
//! database restart (PostgreSQL immediate shutdown, Redis `kill -9` on its AOF). When the
//! clients stop, the [`checker`] reads their attempts, the swallowed answers and the ledger.
//!
//! Backends: PostgreSQL (store and ledger on one throwaway server) and Redis (`appendfsync
//! always`; the ledger is a SQLite file the hosts share). SQLite as the store is not run: one
//! file shared by processes on one machine is not a fleet.

pub mod checker;
pub mod client;
pub mod hosts;
pub mod proxy;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;
use tokio::process::{Child, Command};
use tokio::time::Instant;

use crate::backend::Backend;
use crate::campaign::{Database, Fault, FaultLog, backend_name};
use crate::history::now_ms;
use crate::servers::RedisDurability;
use checker::Verdict;
use client::Attempt;
use hosts::{Balancer, Host, HostSpec};
use proxy::DropProxy;

pub(crate) use crate::campaign::pick;

/// Hosts in the fleet.
pub const HOSTS: usize = 3;

/// What to run.
#[derive(Debug, Clone)]
pub struct FleetConfig {
    /// The shared store: [`Backend::Postgres`] or [`Backend::Redis`].
    pub backend: Backend,
    /// How long the nemesis runs.
    pub duration: Duration,
    /// Client processes.
    pub clients: u32,
    /// Where servers, logs, histories and the verdict go.
    pub out: PathBuf,
    /// Seed of the nemesis's and the clients' choices.
    pub seed: u64,
    /// The `tool-host` binary.
    pub tool_host: PathBuf,
    /// Lease of a call's claim on the hosts.
    pub lease: Duration,
    /// The `key-ignored` mutant: the key is deleted from every call before it reaches a host.
    pub key_ignored: bool,
}

/// What a fleet campaign did and found.
#[derive(Debug, Serialize)]
pub struct FleetReport {
    /// The store's name.
    pub backend: &'static str,
    /// Faults injected, by kind (`drop-answer` counts answers the proxy really swallowed).
    pub faults: BTreeMap<&'static str, usize>,
    /// The checker's verdict.
    pub verdict: Verdict,
    /// Where everything is.
    pub dir: PathBuf,
}

/// The processes and servers of one campaign.
struct Fleet {
    database: Database,
    spec: HostSpec,
    hosts: Vec<Host>,
    _balancer: Balancer,
    proxy: DropProxy,
}

/// Runs the campaign and checks it.
pub async fn run(config: &FleetConfig) -> Result<FleetReport, String> {
    let name = backend_name(config.backend);
    let dir = config.out.join(format!("fleet-{name}"));
    std::fs::create_dir_all(dir.join("history")).map_err(|e| e.to_string())?;
    let mut fleet = start_fleet(config, &dir).await?;
    let clients = start_clients(config, &fleet.proxy.url(), &dir)?;
    let mut faults = FaultLog::open(&dir.join("faults.jsonl"))?;
    let mut choices = config.seed | 1;
    let deadline = Instant::now() + config.duration;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(300 + pick(&mut choices, 1_200))).await;
        if Instant::now() >= deadline {
            break;
        }
        let fault = inject(&mut fleet, &mut choices, config).await?;
        faults.record(fault)?;
    }
    wait_for(clients, grace(config) + Duration::from_secs(15)).await;
    let mut counts = faults.counts.clone();
    counts.remove("arm-drop");
    counts.insert("drop-answer", fleet.proxy.dropped() as usize);
    let verdict = check(&dir, &ledger_url(config, &fleet.database, &dir)).await?;
    std::fs::write(
        dir.join("verdict.json"),
        serde_json::to_vec_pretty(&verdict).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    Ok(FleetReport {
        backend: name,
        faults: counts,
        verdict,
        dir,
    })
}

async fn start_fleet(config: &FleetConfig, dir: &Path) -> Result<Fleet, String> {
    if !config.tool_host.exists() {
        return Err(format!(
            "no tool-host binary at {} (cargo build -p live-code-studio --bin tool-host)",
            config.tool_host.display()
        ));
    }
    let database =
        Database::start_for(config.backend, RedisDurability::AofAlways, &dir.join("db")).await?;
    let spec = HostSpec {
        bin: config.tool_host.clone(),
        store: database.url(),
        ledger: ledger_url(config, &database, dir),
        key_file: dir.join("state.key"),
        lease_ms: u64::try_from(config.lease.as_millis()).unwrap_or(u64::MAX),
        dir: dir.to_owned(),
    };
    let mut hosts = Vec::with_capacity(HOSTS);
    for index in 0..HOSTS {
        hosts.push(Host::start(&spec, index).await?);
    }
    let ports: Vec<u16> = hosts.iter().map(Host::port).collect();
    let balancer = Balancer::start(dir, &ports).await?;
    let proxy = DropProxy::start(
        balancer.url(),
        &dir.join("dropped.jsonl"),
        config.key_ignored,
    )
    .await?;
    Ok(Fleet {
        database,
        spec,
        hosts,
        _balancer: balancer,
        proxy,
    })
}

/// PostgreSQL keeps the ledger beside the store; with Redis it is a SQLite file.
fn ledger_url(config: &FleetConfig, database: &Database, dir: &Path) -> String {
    match config.backend {
        Backend::Redis => format!("sqlite:{}", dir.join("ledger.db").display()),
        _ => database.url(),
    }
}

/// How long clients keep retrying after the faults stop: a key stranded by a killed host is
/// pending for one lease, then unknown.
fn grace(config: &FleetConfig) -> Duration {
    config.lease * 2 + Duration::from_secs(10)
}

fn start_clients(config: &FleetConfig, url: &str, dir: &Path) -> Result<Vec<Child>, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    (0..config.clients)
        .map(|client| {
            Command::new(&exe)
                .arg("fleet-client")
                .arg(format!("--url={url}"))
                .arg(format!("--client={client}"))
                .arg(format!(
                    "--history={}",
                    dir.join("history")
                        .join(format!("c{client}.jsonl"))
                        .display()
                ))
                .arg(format!("--run-for-ms={}", config.duration.as_millis()))
                .arg(format!("--grace-ms={}", grace(config).as_millis()))
                .arg(format!("--seed={}", config.seed ^ u64::from(client)))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .kill_on_drop(true)
                .spawn()
                .map_err(|e| format!("starting a client: {e}"))
        })
        .collect()
}

/// Waits for every client to finish, killing those still running after `limit`.
async fn wait_for(clients: Vec<Child>, limit: Duration) {
    let give_up = Instant::now() + limit;
    for mut child in clients {
        let left = give_up.saturating_duration_since(Instant::now());
        if tokio::time::timeout(left, child.wait()).await.is_err() {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }
}

/// Picks and injects one fault.
async fn inject(
    fleet: &mut Fleet,
    choices: &mut u64,
    config: &FleetConfig,
) -> Result<Fault, String> {
    let time_ms = now_ms();
    let (kind, detail) = match pick(choices, 20) {
        0..=7 => {
            let index = usize::try_from(pick(choices, HOSTS as u64)).unwrap_or(0);
            let host = &mut fleet.hosts[index];
            host.kill9().await;
            host.restart(&fleet.spec).await?;
            ("kill-host", format!("host {index}"))
        }
        8..=16 => {
            fleet.proxy.arm();
            ("arm-drop", String::new())
        }
        17 | 18 => {
            let pause = Duration::from_millis(300 + pick(choices, 1_200)).min(config.lease / 2);
            fleet.database.pause_for(pause).await?;
            ("pause-db", format!("{} ms", pause.as_millis()))
        }
        _ => {
            fleet.database.restart().await?;
            ("restart-db", String::new())
        }
    };
    Ok(Fault {
        time_ms,
        kind,
        detail,
    })
}

/// Reads the campaign's attempts, swallowed answers and ledger, and checks them.
async fn check(dir: &Path, ledger: &str) -> Result<Verdict, String> {
    let attempts = read_attempts(&dir.join("history"))?;
    let dropped = proxy::read_dropped(&dir.join("dropped.jsonl"))?;
    let rows = ledger_rows(ledger).await?;
    Ok(checker::check(&attempts, &dropped, &rows))
}

fn read_attempts(histories: &Path) -> Result<Vec<Attempt>, String> {
    let mut attempts = Vec::new();
    let entries = std::fs::read_dir(histories).map_err(|e| e.to_string())?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        // A client killed mid-write leaves at most a torn last line.
        attempts.extend(
            text.lines()
                .filter_map(|line| serde_json::from_str::<Attempt>(line).ok()),
        );
    }
    Ok(attempts)
}

/// Rows per entry in the hosts' ledger.
async fn ledger_rows(url: &str) -> Result<HashMap<String, usize>, String> {
    const QUERY: &str = "SELECT entry, COUNT(*) FROM tool_host_ledger GROUP BY entry";
    let rows: Vec<(String, i64)> = if let Some(path) = url.strip_prefix("sqlite:") {
        let options = sqlx::sqlite::SqliteConnectOptions::new().filename(path);
        let pool = sqlx::SqlitePool::connect_with(options)
            .await
            .map_err(|e| format!("ledger {url}: {e}"))?;
        sqlx::query_as(QUERY).fetch_all(&pool).await
    } else {
        let pool = sqlx::PgPool::connect(url)
            .await
            .map_err(|e| format!("ledger {url}: {e}"))?;
        sqlx::query_as(QUERY).fetch_all(&pool).await
    }
    .map_err(|e| format!("reading the ledger: {e}"))?;
    Ok(rows
        .into_iter()
        .map(|(entry, count)| (entry, usize::try_from(count).unwrap_or(0)))
        .collect())
}
