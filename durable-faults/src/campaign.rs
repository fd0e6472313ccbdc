//! One campaign against one backend: a throwaway server, N worker processes, a nemesis that
//! injects faults at random times, then a healed final pass and the checker's verdict.
//!
//! Faults (each logged with its time in `faults.jsonl`): `kill -9` of a worker mid-operation
//! (it restarts as a new process), a database restart (Redis killed and restarted on its AOF,
//! PostgreSQL shut down immediately and recovered from its WAL), a pause (SIGSTOP) longer than
//! a lease, dropped connections (`CLIENT KILL`, `pg_terminate_backend`), and a worker restarted
//! with its lease clock skewed by up to 3/8 of a lease. SQLite gets the worker faults only.
//!
//! Redis runs with `appendonly yes` and `appendfsync always`: the settings under which an
//! acknowledged record survives a restart (see the backend docs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;
use tokio::process::{Child, Command};
use tokio::time::Instant;

use crate::checker::{self, Report};
use crate::history::{History, now_ms};
use crate::mutant::Mutant;
use crate::report;
use crate::servers::{PostgresServer, RedisDurability, RedisServer, SqliteFile};
use crate::worker::{self, Backend, WorkerConfig};

/// What to run.
#[derive(Debug, Clone)]
pub struct CampaignConfig {
    /// The backend.
    pub backend: Backend,
    /// How long workers run under faults.
    pub duration: Duration,
    /// Worker processes.
    pub workers: u32,
    /// Keys in the key space.
    pub keys: u32,
    /// Where the server, histories, ledger and faults go.
    pub out: PathBuf,
    /// Seed of the workers' and the nemesis's choices.
    pub seed: u64,
    /// Lease of a claim.
    pub lease: Duration,
    /// How the Redis server persists (the guarantee needs [`RedisDurability::AofAlways`]; the
    /// others show what a restart loses).
    pub redis_durability: RedisDurability,
    /// The guarantee to break on purpose (the campaign must then find a violation).
    pub mutant: Option<Mutant>,
}

/// What a campaign did and what the checker found.
#[derive(Debug, Serialize)]
pub struct CampaignReport {
    /// The backend's name.
    pub backend: &'static str,
    /// Operations recorded.
    pub ops: usize,
    /// Effects in the ledger.
    pub effects: usize,
    /// Faults injected, by kind.
    pub faults: BTreeMap<&'static str, usize>,
    /// Violations found (kind and key).
    pub violations: Vec<String>,
    /// Operations with an indeterminate outcome.
    pub indeterminate: usize,
    /// `unknown` records reconciled from the ledger.
    pub unknowns_reconciled: usize,
    /// Keys whose linearizability search gave up.
    pub inconclusive_keys: usize,
    /// Violations by kind.
    pub violation_kinds: BTreeMap<String, usize>,
    /// How long the checker took (s).
    pub check_seconds: f64,
    /// The HTML report beside the histories.
    pub html: PathBuf,
}

impl CampaignReport {
    /// The violation kinds found, with counts (`LostWrite 2, NotLinearizable 1`).
    pub fn kinds(&self) -> String {
        let kinds: Vec<String> = self
            .violation_kinds
            .iter()
            .map(|(kind, count)| format!("{kind} {count}"))
            .collect();
        kinds.join(", ")
    }
}

/// The name of a backend.
pub fn backend_name(backend: Backend) -> &'static str {
    match backend {
        Backend::Redis => "redis",
        Backend::Postgres => "postgres",
        Backend::Sqlite => "sqlite",
    }
}

/// The database a campaign owns.
pub(crate) enum Database {
    Redis(RedisServer),
    Postgres(PostgresServer),
    Sqlite(SqliteFile),
}

impl Database {
    async fn start(config: &CampaignConfig, dir: &Path) -> Result<Self, String> {
        Self::start_for(config.backend, redis_durability(config), dir).await
    }

    /// Starts a throwaway `backend` in `dir` (Redis with `durability`).
    pub(crate) async fn start_for(
        backend: Backend,
        durability: RedisDurability,
        dir: &Path,
    ) -> Result<Self, String> {
        let started = match backend {
            Backend::Redis => RedisServer::start(dir, durability).await.map(Self::Redis),
            Backend::Postgres => PostgresServer::start(dir).await.map(Self::Postgres),
            Backend::Sqlite => {
                std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
                Ok(Self::Sqlite(SqliteFile::new(dir)))
            }
        };
        started.map_err(|error| error.to_string())
    }

    pub(crate) fn url(&self) -> String {
        match self {
            Self::Redis(server) => server.url(),
            Self::Postgres(server) => server.url(),
            Self::Sqlite(file) => file.path().display().to_string(),
        }
    }

    pub(crate) async fn restart(&mut self) -> Result<(), String> {
        let restarted = match self {
            Self::Redis(server) => match server.kill9().await {
                Ok(()) => server.restart().await,
                Err(error) => Err(error),
            },
            Self::Postgres(server) => match server.immediate_shutdown().await {
                Ok(()) => server.restart().await,
                Err(error) => Err(error),
            },
            Self::Sqlite(_) => Ok(()),
        };
        restarted.map_err(|error| error.to_string())
    }

    pub(crate) async fn pause_for(&mut self, pause: Duration) -> Result<(), String> {
        let paused = match self {
            Self::Redis(server) => server.pause(),
            Self::Postgres(server) => server.pause(),
            Self::Sqlite(_) => Ok(()),
        };
        paused.map_err(|error| error.to_string())?;
        tokio::time::sleep(pause).await;
        let resumed = match self {
            Self::Redis(server) => server.resume(),
            Self::Postgres(server) => server.resume(),
            Self::Sqlite(_) => Ok(()),
        };
        resumed.map_err(|error| error.to_string())
    }

    async fn drop_connections(&self) -> Result<(), String> {
        let dropped = match self {
            Self::Redis(server) => server.drop_connections().await.map(|_| ()),
            Self::Postgres(server) => server.drop_connections().await.map(|_| ()),
            Self::Sqlite(_) => Ok(()),
        };
        dropped.map_err(|error| error.to_string())
    }

    fn is_server(&self) -> bool {
        !matches!(self, Self::Sqlite(_))
    }
}

/// One worker slot: the running process and how to start the next one.
struct Slot {
    config: WorkerConfig,
    child: Option<Child>,
}

/// The Redis persistence a campaign runs with: none for the `redis-no-persistence` mutant.
fn redis_durability(config: &CampaignConfig) -> RedisDurability {
    if config.mutant == Some(Mutant::RedisNoPersistence) {
        RedisDurability::None
    } else {
        config.redis_durability
    }
}

/// Runs the campaign and checks its history.
pub async fn run(config: &CampaignConfig) -> Result<CampaignReport, String> {
    let name = backend_name(config.backend);
    let dir = config.out.join(name);
    let histories = dir.join("history");
    std::fs::create_dir_all(&histories).map_err(|e| e.to_string())?;
    let mut database = Database::start(config, &dir.join("db")).await?;
    let base = worker_base(config, &database, &dir);
    worker::prepare(&base).await?;
    let mut slots: Vec<Slot> = (0..config.workers)
        .map(|worker| Slot {
            config: WorkerConfig {
                worker,
                seed: config.seed ^ u64::from(worker).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                ..base.clone()
            },
            child: None,
        })
        .collect();
    let deadline = Instant::now() + config.duration;
    for slot in &mut slots {
        start(slot, deadline, &histories)?;
    }
    let mut faults = FaultLog::open(&dir.join("faults.jsonl"))?;
    let mut choices = config.seed | 1;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500 + pick(&mut choices, 2_000))).await;
        restart_exited(&mut slots, deadline, &histories)?;
        if Instant::now() >= deadline {
            break;
        }
        let fault = inject(
            &mut database,
            &mut slots,
            &mut choices,
            config,
            deadline,
            &histories,
        )
        .await?;
        faults.record(fault)?;
    }
    stop_all(&mut slots).await;
    final_pass(&base, config.workers, &histories).await?;
    let history = History::load(&histories, &base.ledger).map_err(|e| e.to_string())?;
    let started = std::time::Instant::now();
    let report = checker::check(&history);
    let check_seconds = started.elapsed().as_secs_f64();
    let heading = report::Heading {
        title: format!(
            "durable-faults: {name}, seed {}, mutant {}",
            config.seed,
            config.mutant.map_or("none", Mutant::name)
        ),
        check_seconds,
    };
    let html = report::write(
        &dir,
        &heading,
        &history,
        &report::read_faults(&dir),
        &report,
    )
    .map_err(|e| format!("writing the report: {e}"))?;
    let mut summary = campaign_report(name, &report, faults.counts, check_seconds);
    summary.html = html;
    Ok(summary)
}

fn worker_base(config: &CampaignConfig, database: &Database, dir: &Path) -> WorkerConfig {
    WorkerConfig {
        backend: config.backend,
        url: database.url(),
        namespace: format!("faults_{}", uuid::Uuid::new_v4().simple()),
        worker: 0,
        process: 0,
        history: PathBuf::new(),
        ledger: dir.join("ledger.jsonl"),
        keys: config.keys,
        seed: config.seed,
        clock_skew_ms: 0,
        lease: config.lease,
        // Long enough that a prune never removes a record the campaign still works on
        // mid-lease; short enough that prunes do delete settled records.
        retention: config.lease * 5,
        mutant: config.mutant,
    }
}

/// Starts the slot's next process (a new incarnation) to run until `deadline`.
fn start(slot: &mut Slot, deadline: Instant, histories: &Path) -> Result<(), String> {
    slot.config.process += 1;
    let file = format!("w{}-p{}.jsonl", slot.config.worker, slot.config.process);
    slot.config.history = histories.join(file);
    slot.config.seed = slot.config.seed.rotate_left(7) ^ u64::from(slot.config.process);
    let run_for = deadline.saturating_duration_since(Instant::now());
    let child = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
        .args(worker_args(&slot.config, run_for))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("starting a worker: {e}"))?;
    slot.child = Some(child);
    Ok(())
}

/// The command line of a worker process (parsed back by the binary's `worker` command).
pub fn worker_args(config: &WorkerConfig, run_for: Duration) -> Vec<String> {
    let mut args = vec![
        "worker".into(),
        format!("--backend={}", backend_name(config.backend)),
        format!("--url={}", config.url),
        format!("--namespace={}", config.namespace),
        format!("--worker={}", config.worker),
        format!("--process={}", config.process),
        format!("--history={}", config.history.display()),
        format!("--ledger={}", config.ledger.display()),
        format!("--keys={}", config.keys),
        format!("--seed={}", config.seed),
        format!("--clock-skew-ms={}", config.clock_skew_ms),
        format!("--lease-ms={}", config.lease.as_millis()),
        format!("--retention-ms={}", config.retention.as_millis()),
        format!("--run-for-ms={}", run_for.as_millis()),
    ];
    if let Some(mutant) = config.mutant {
        args.push(format!("--mutant={}", mutant.name()));
    }
    args
}

/// Workers that exited early (a database fault made them give up) start again.
fn restart_exited(slots: &mut [Slot], deadline: Instant, histories: &Path) -> Result<(), String> {
    for slot in slots {
        let exited = slot
            .child
            .as_mut()
            .is_none_or(|child| matches!(child.try_wait(), Ok(Some(_))));
        if exited && Instant::now() < deadline {
            start(slot, deadline, histories)?;
        }
    }
    Ok(())
}

/// A fault and when it happened.
#[derive(Debug, Serialize)]
pub(crate) struct Fault {
    pub(crate) time_ms: u64,
    pub(crate) kind: &'static str,
    pub(crate) detail: String,
}

/// Picks and injects one fault.
async fn inject(
    database: &mut Database,
    slots: &mut [Slot],
    choices: &mut u64,
    config: &CampaignConfig,
    deadline: Instant,
    histories: &Path,
) -> Result<Fault, String> {
    let server_faults = if database.is_server() { 5 } else { 2 };
    let time_ms = now_ms();
    let worker = usize::try_from(pick(choices, slots.len() as u64)).unwrap_or(0);
    let (kind, detail) = match pick(choices, server_faults) {
        0 => {
            kill(&mut slots[worker]).await;
            start(&mut slots[worker], deadline, histories)?;
            ("kill-worker", format!("worker {worker}"))
        }
        1 => {
            let lease = i64::try_from(config.lease.as_millis()).unwrap_or(i64::MAX);
            // Within the guarantee's condition: skew between owners below half a lease.
            // Beyond a lease, a skewed owner takes over a live lease and the effect runs twice
            // (the fence still refuses the stale settlement); the README says so.
            let skew = i64::try_from(pick(choices, 4)).unwrap_or(0) * lease / 8 * sign(choices);
            kill(&mut slots[worker]).await;
            slots[worker].config.clock_skew_ms = skew;
            start(&mut slots[worker], deadline, histories)?;
            ("skew-clock", format!("worker {worker} by {skew} ms"))
        }
        2 => {
            database.restart().await?;
            ("restart-db", String::new())
        }
        3 => {
            let pause = config.lease + config.lease / 2;
            database.pause_for(pause).await?;
            ("pause-db", format!("{} ms", pause.as_millis()))
        }
        _ => {
            database.drop_connections().await?;
            ("drop-connections", String::new())
        }
    };
    Ok(Fault {
        time_ms,
        kind,
        detail,
    })
}

async fn kill(slot: &mut Slot) {
    if let Some(mut child) = slot.child.take() {
        let _ = child.start_kill();
        let _ = child.wait().await;
    }
}

async fn stop_all(slots: &mut [Slot]) {
    for slot in slots {
        if let Some(child) = slot.child.as_mut() {
            // Workers stop by themselves at the deadline; one stuck on a dead connection is
            // killed like any crashed worker.
            if tokio::time::timeout(Duration::from_secs(10), child.wait())
                .await
                .is_err()
            {
                kill(slot).await;
            }
        }
    }
}

/// Healed, a last worker reads every key and reconciles what is still `unknown`.
async fn final_pass(base: &WorkerConfig, workers: u32, histories: &Path) -> Result<(), String> {
    let config = WorkerConfig {
        worker: workers,
        process: 1,
        history: histories.join(format!("w{workers}-p1.jsonl")),
        // The final pass reads what the store holds, unbroken.
        mutant: None,
        ..base.clone()
    };
    worker::final_pass(config).await
}

fn campaign_report(
    backend: &'static str,
    report: &Report,
    faults: BTreeMap<&'static str, usize>,
    check_seconds: f64,
) -> CampaignReport {
    let mut violation_kinds = BTreeMap::new();
    for violation in &report.violations {
        *violation_kinds
            .entry(format!("{:?}", violation.kind))
            .or_default() += 1;
    }
    CampaignReport {
        backend,
        ops: report.ops,
        effects: report.effects,
        faults,
        violations: report
            .violations
            .iter()
            .map(|violation| format!("{violation:?}"))
            .collect(),
        indeterminate: report.indeterminate,
        unknowns_reconciled: report.unknowns_reconciled,
        inconclusive_keys: report.inconclusive_keys,
        violation_kinds,
        check_seconds,
        html: PathBuf::new(),
    }
}

/// Faults appended to `faults.jsonl` and counted by kind.
pub(crate) struct FaultLog {
    file: std::fs::File,
    pub(crate) counts: BTreeMap<&'static str, usize>,
}

impl FaultLog {
    pub(crate) fn open(path: &Path) -> Result<Self, String> {
        let file = std::fs::File::create(path).map_err(|e| e.to_string())?;
        Ok(Self {
            file,
            counts: BTreeMap::new(),
        })
    }

    pub(crate) fn record(&mut self, fault: Fault) -> Result<(), String> {
        use std::io::Write as _;
        *self.counts.entry(fault.kind).or_default() += 1;
        let line = serde_json::to_string(&fault).map_err(|e| e.to_string())?;
        writeln!(self.file, "{line}").map_err(|e| e.to_string())
    }
}

/// A number below `bound` from a xorshift state.
pub(crate) fn pick(state: &mut u64, bound: u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state % bound.max(1)
}

fn sign(state: &mut u64) -> i64 {
    if pick(state, 2) == 0 { 1 } else { -1 }
}
