//! `durable-faults`: runs a fault campaign per backend and fails on any violation.
//!
//! ```text
//! durable-faults [--backend all|redis|postgres|sqlite] [--seconds 60 | --minutes N]
//!                [--workers 4] [--keys 8] [--seed S] [--out DIR]
//! ```
//! Prints one table row per backend (ops, faults by kind, violations, unknowns reconciled) and
//! exits 1 when the checker found a violation, 2 when a campaign could not run.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use durable_faults::campaign::{self, CampaignConfig, CampaignReport};
use durable_faults::fleet;
use durable_faults::mutant::Mutant;
use durable_faults::servers::RedisDurability;
use durable_faults::worker::{self, Backend, WorkerConfig};

#[derive(Debug, Parser)]
#[command(about = "A Jepsen-style fault campaign against tool-durable-operations")]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    campaign: CampaignArgs,
}

#[derive(Debug, clap::Args)]
struct CampaignArgs {
    /// Which backend (or all three, one after the other).
    #[arg(long, value_enum, default_value = "all")]
    backend: Which,
    /// Seconds of faults per backend.
    #[arg(long, default_value_t = 60, conflicts_with = "minutes")]
    seconds: u64,
    /// Minutes of faults per backend (a long campaign).
    #[arg(long)]
    minutes: Option<u64>,
    /// Worker processes.
    #[arg(long, default_value_t = 4)]
    workers: u32,
    /// Keys in the key space (few keys, many collisions).
    #[arg(long, default_value_t = 8)]
    keys: u32,
    /// Seed (default: the clock).
    #[arg(long)]
    seed: Option<u64>,
    /// Where servers, histories, ledgers and fault logs go (default: a new temp dir, kept).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Redis persistence: `always` (AOF, fsync per write: what the guarantee needs),
    /// `everysec` or `none` (to see what a restart loses without it).
    #[arg(long, value_enum, default_value = "always")]
    redis_durability: Durability,
    /// Break one guarantee on purpose: the campaign then exits 0 only if the checker found a
    /// violation (`redis-no-persistence` applies to Redis only; the others to every backend).
    #[arg(long, value_enum)]
    mutant: Option<Mutant>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Durability {
    Always,
    Everysec,
    None,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Which {
    All,
    Redis,
    Postgres,
    Sqlite,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// One worker process (started by the campaign).
    #[command(hide = true)]
    Worker(WorkerArgs),
    /// The MCP fleet campaign: keyed `tools/call`s through HAProxy to three `tool-host`
    /// processes on one store, while hosts are killed, answers dropped and the database paused.
    Fleet(FleetArgs),
    /// One fleet client process (started by the fleet campaign).
    #[command(hide = true)]
    FleetClient(FleetClientArgs),
    /// Checks a kept campaign directory again (`<out>/<backend>`).
    Check {
        /// The backend's directory of a campaign (holding `history/` and `ledger.jsonl`).
        dir: PathBuf,
    },
}

#[derive(Debug, clap::Args)]
struct WorkerArgs {
    #[arg(long, value_enum)]
    backend: Which,
    #[arg(long)]
    url: String,
    #[arg(long)]
    namespace: String,
    #[arg(long)]
    worker: u32,
    #[arg(long)]
    process: u32,
    #[arg(long)]
    history: PathBuf,
    #[arg(long)]
    ledger: PathBuf,
    #[arg(long)]
    keys: u32,
    #[arg(long)]
    seed: u64,
    #[arg(long, allow_hyphen_values = true)]
    clock_skew_ms: i64,
    #[arg(long)]
    lease_ms: u64,
    #[arg(long)]
    retention_ms: u64,
    #[arg(long)]
    run_for_ms: u64,
    #[arg(long, value_enum)]
    mutant: Option<Mutant>,
}

#[derive(Debug, clap::Args)]
struct FleetArgs {
    /// The shared store (`all`: PostgreSQL, then Redis).
    #[arg(long, value_enum, default_value = "all")]
    backend: FleetWhich,
    /// Seconds of faults per backend.
    #[arg(long, default_value_t = 60, conflicts_with = "minutes")]
    seconds: u64,
    /// Minutes of faults per backend (a long campaign).
    #[arg(long)]
    minutes: Option<u64>,
    /// Client processes.
    #[arg(long, default_value_t = 4)]
    clients: u32,
    /// Lease of a call's claim on the hosts (ms).
    #[arg(long, default_value_t = 3_000)]
    lease_ms: u64,
    /// Seed (default: the clock).
    #[arg(long)]
    seed: Option<u64>,
    /// Where servers, logs, histories and verdicts go (default: a new temp dir, kept).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The `tool-host` binary (default: beside this one).
    #[arg(long)]
    tool_host: Option<PathBuf>,
    /// `key-ignored`: delete the key from every call (the campaign then passes only if the
    /// checker finds double executions).
    #[arg(long, value_enum)]
    mutant: Option<FleetMutant>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FleetWhich {
    All,
    Postgres,
    Redis,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FleetMutant {
    KeyIgnored,
}

#[derive(Debug, clap::Args)]
struct FleetClientArgs {
    #[arg(long)]
    url: String,
    #[arg(long)]
    client: u32,
    #[arg(long)]
    history: PathBuf,
    #[arg(long)]
    run_for_ms: u64,
    #[arg(long)]
    grace_ms: u64,
    #[arg(long)]
    seed: u64,
}

fn backends(which: Which) -> Vec<Backend> {
    match which {
        Which::All => vec![Backend::Redis, Backend::Postgres, Backend::Sqlite],
        Which::Redis => vec![Backend::Redis],
        Which::Postgres => vec![Backend::Postgres],
        Which::Sqlite => vec![Backend::Sqlite],
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match args.command {
        Some(Command::Worker(worker)) => run_worker(worker).await,
        Some(Command::Check { dir }) => check_again(&dir),
        Some(Command::Fleet(fleet)) => run_fleet(fleet).await,
        Some(Command::FleetClient(client)) => run_fleet_client(client).await,
        None => run_campaigns(args.campaign).await,
    }
}

async fn run_worker(args: WorkerArgs) -> ExitCode {
    let backend = backends(args.backend)[0];
    let config = WorkerConfig {
        backend,
        url: args.url,
        namespace: args.namespace,
        worker: args.worker,
        process: args.process,
        history: args.history,
        ledger: args.ledger,
        keys: args.keys,
        seed: args.seed,
        clock_skew_ms: args.clock_skew_ms,
        lease: Duration::from_millis(args.lease_ms),
        retention: Duration::from_millis(args.retention_ms),
        mutant: args.mutant,
    };
    match worker::run(config, Duration::from_millis(args.run_for_ms)).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("durable-faults worker {}: {message}", args.worker);
            ExitCode::FAILURE
        }
    }
}

async fn run_fleet_client(args: FleetClientArgs) -> ExitCode {
    let config = fleet::client::ClientConfig {
        url: args.url,
        client: args.client,
        history: args.history,
        run_for: Duration::from_millis(args.run_for_ms),
        grace: Duration::from_millis(args.grace_ms),
        seed: args.seed,
    };
    match fleet::client::run(config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("durable-faults fleet client {}: {message}", args.client);
            ExitCode::FAILURE
        }
    }
}

async fn run_fleet(args: FleetArgs) -> ExitCode {
    let seconds = args.minutes.map_or(args.seconds, |minutes| minutes * 60);
    let seed = args.seed.unwrap_or_else(durable_faults::history::now_ms);
    let out = args.out.unwrap_or_else(|| {
        std::env::temp_dir().join(format!("durable-faults-{}", uuid::Uuid::new_v4().simple()))
    });
    let tool_host = args.tool_host.unwrap_or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(|dir| dir.join("tool-host")))
            .unwrap_or_else(|| PathBuf::from("tool-host"))
    });
    let key_ignored = matches!(args.mutant, Some(FleetMutant::KeyIgnored));
    println!(
        "durable-faults fleet: seed {seed}, {seconds} s per backend, mutant {}, output in {}",
        if key_ignored { "key-ignored" } else { "none" },
        out.display()
    );
    println!(
        "| Store | Calls | Attempts | Faults | Succeeded | Unknown | Failed | Unfinished | Replays | Ledger rows | Violations |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let backends = match args.backend {
        FleetWhich::All => vec![Backend::Postgres, Backend::Redis],
        FleetWhich::Postgres => vec![Backend::Postgres],
        FleetWhich::Redis => vec![Backend::Redis],
    };
    let mut code = ExitCode::SUCCESS;
    for backend in backends {
        let config = fleet::FleetConfig {
            backend,
            duration: Duration::from_secs(seconds),
            clients: args.clients,
            out: out.clone(),
            seed,
            tool_host: tool_host.clone(),
            lease: Duration::from_millis(args.lease_ms),
            key_ignored,
        };
        match fleet::run(&config).await {
            Ok(report) => {
                println!("{}", fleet_row(&report));
                if !judge_fleet(&report, key_ignored) {
                    code = ExitCode::from(1);
                }
            }
            Err(message) => {
                eprintln!(
                    "durable-faults fleet {}: the campaign could not run: {message}",
                    campaign::backend_name(backend)
                );
                return ExitCode::from(2);
            }
        }
    }
    code
}

/// The verdict of one fleet campaign: the clean build needs no violation and faults of every
/// kind that proves something (a campaign whose nemesis did nothing proves nothing); the mutant
/// needs a double execution.
fn judge_fleet(report: &fleet::FleetReport, key_ignored: bool) -> bool {
    let verdict = &report.verdict;
    for violation in verdict.violations.iter().take(20) {
        eprintln!(
            "durable-faults fleet {}: violation {} {}: {}",
            report.backend, violation.kind, violation.key, violation.detail
        );
    }
    eprintln!(
        "durable-faults fleet {}: output in {}",
        report.backend,
        report.dir.display()
    );
    let doubles = verdict
        .violations
        .iter()
        .filter(|violation| violation.kind == "DoubleExecution")
        .count();
    if key_ignored {
        if doubles == 0 {
            eprintln!(
                "durable-faults fleet {}: mutant key-ignored NOT caught",
                report.backend
            );
        }
        return doubles > 0;
    }
    let missing: Vec<&str> = ["kill-host", "drop-answer"]
        .into_iter()
        .filter(|kind| report.faults.get(kind).copied().unwrap_or(0) == 0)
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "durable-faults fleet {}: no {} happened: the campaign proves nothing",
            report.backend,
            missing.join(" and no ")
        );
    }
    verdict.violations.is_empty() && missing.is_empty() && verdict.succeeded > 0
}

fn fleet_row(report: &fleet::FleetReport) -> String {
    let verdict = &report.verdict;
    let faults: Vec<String> = report
        .faults
        .iter()
        .map(|(kind, count)| format!("{kind} {count}"))
        .collect();
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        report.backend,
        verdict.keys,
        verdict.attempts,
        faults.join(", "),
        verdict.succeeded,
        verdict.unknown,
        verdict.failed,
        verdict.unfinished,
        verdict.replays,
        verdict.rows,
        verdict.violations.len()
    )
}

async fn run_campaigns(args: CampaignArgs) -> ExitCode {
    let seconds = args.minutes.map_or(args.seconds, |minutes| minutes * 60);
    let seed = args.seed.unwrap_or_else(durable_faults::history::now_ms);
    let out = args.out.unwrap_or_else(|| {
        std::env::temp_dir().join(format!("durable-faults-{}", uuid::Uuid::new_v4().simple()))
    });
    let mutant = args.mutant.map_or("none", Mutant::name);
    println!(
        "durable-faults: seed {seed}, {seconds} s per backend, mutant {mutant}, output in {}",
        out.display()
    );
    println!(
        "| Backend | Ops | Effects | Faults | Violations | Indeterminate | Unknowns reconciled | Inconclusive keys | Check time |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut code = ExitCode::SUCCESS;
    let applicable = backends(args.backend)
        .into_iter()
        .filter(|&backend| args.mutant.is_none_or(|m| m.applies_to(backend)));
    for backend in applicable {
        let config = CampaignConfig {
            backend,
            duration: Duration::from_secs(seconds),
            workers: args.workers,
            keys: args.keys,
            out: out.clone(),
            seed,
            lease: Duration::from_millis(1_000),
            redis_durability: match args.redis_durability {
                Durability::Always => RedisDurability::AofAlways,
                Durability::Everysec => RedisDurability::AofEverySec,
                Durability::None => RedisDurability::None,
            },
            mutant: args.mutant,
        };
        match campaign::run(&config).await {
            Ok(report) => {
                println!("{}", table_row(&report));
                if !judge(&report, args.mutant) {
                    code = ExitCode::from(1);
                }
            }
            Err(message) => {
                eprintln!(
                    "durable-faults {}: the campaign could not run: {message}",
                    campaign::backend_name(backend)
                );
                return ExitCode::from(2);
            }
        }
    }
    code
}

/// Prints the verdict of one campaign; `false` when it failed: a violation on the clean build,
/// or none on a mutant.
fn judge(report: &CampaignReport, mutant: Option<Mutant>) -> bool {
    for violation in &report.violations {
        eprintln!("durable-faults {}: violation: {violation}", report.backend);
    }
    eprintln!(
        "durable-faults {}: report {}",
        report.backend,
        report.html.display()
    );
    match mutant {
        None => report.violations.is_empty(),
        Some(mutant) if report.violations.is_empty() => {
            eprintln!(
                "durable-faults {}: mutant {} NOT caught: the checker found no violation",
                report.backend,
                mutant.name()
            );
            false
        }
        Some(mutant) => {
            eprintln!(
                "durable-faults {}: mutant {} caught ({})",
                report.backend,
                mutant.name(),
                report.kinds()
            );
            true
        }
    }
}

fn check_again(dir: &std::path::Path) -> ExitCode {
    let history =
        durable_faults::history::History::load(&dir.join("history"), &dir.join("ledger.jsonl"));
    match history {
        Ok(history) => {
            let started = std::time::Instant::now();
            let report = durable_faults::checker::check(&history);
            let heading = durable_faults::report::Heading {
                title: format!("durable-faults: {}", dir.display()),
                check_seconds: started.elapsed().as_secs_f64(),
            };
            let faults = durable_faults::report::read_faults(dir);
            match durable_faults::report::write(dir, &heading, &history, &faults, &report) {
                Ok(path) => println!("report {}", path.display()),
                Err(error) => eprintln!("durable-faults check: writing the report: {error}"),
            }
            println!(
                "{} ops, {} effects, {} violations, {} indeterminate, {} unknowns reconciled, {} inconclusive keys",
                report.ops,
                report.effects,
                report.violations.len(),
                report.indeterminate,
                report.unknowns_reconciled,
                report.inconclusive_keys
            );
            for violation in &report.violations {
                println!("violation: {violation:?}");
            }
            if report.violations.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(error) => {
            eprintln!("durable-faults check: {error}");
            ExitCode::from(2)
        }
    }
}

fn table_row(report: &CampaignReport) -> String {
    let faults: usize = report.faults.values().sum();
    let kinds: Vec<String> = report
        .faults
        .iter()
        .map(|(kind, count)| format!("{kind} {count}"))
        .collect();
    format!(
        "| {} | {} | {} | {faults} ({}) | {} | {} | {} | {} | {:.1} s |",
        report.backend,
        report.ops,
        report.effects,
        kinds.join(", "),
        report.violations.len(),
        report.indeterminate,
        report.unknowns_reconciled,
        report.inconclusive_keys,
        report.check_seconds
    )
}
