//! `studio`: the Live Code Studio host.
//!
//! ```text
//! cargo run --release --bin studio -- [--port 4870] [--data-dir .studio-data] [--folder DIR] [--mcp-config FILE]
//! cargo run --release --bin studio -- mcp [--folder DIR] [--data-dir .studio-data] [--mcp-config FILE] [--approve-with URL [--token T]]
//! cargo run --release --bin studio -- tools list [--json] [--folder DIR | --url URL]
//! cargo run --release --bin studio -- tools call NAME --args JSON [--expected-revision N] [--approve]
//! ```
//!
//! The first form serves the browser UI (and MCP at `/mcp`); `studio mcp` serves the same
//! workspace tools to one MCP client over stdin/stdout, headless. In that mode stdout carries
//! only MCP messages: logs go to stderr. `studio tools` runs one explicit registry command
//! (headless, or against a running studio with `--url` and `--token`) under the same policy.
//!
//! `--otlp-endpoint URL` (or `OTEL_EXPORTER_OTLP_ENDPOINT`) exports the spans of every agent
//! run, model request, tool call and MCP request, and their metrics, over OTLP/HTTP; without it
//! nothing is exported.
//!
//! `--mcp-config FILE` reads a Claude Desktop (`mcpServers`) or VS Code (`servers`) MCP
//! configuration, saves it as the studio's MCP servers (in `settings.json`, replacing the saved
//! ones) and mounts them: their tools join the registry as `<server>.<tool>`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use live_code_studio::cli;
use live_code_studio::host::otel::{OtlpEndpoint, Telemetry};
use live_code_studio::host::remote_approval::RemoteApprovals;
use live_code_studio::host::{self, DEFAULT_DATA_DIR, DEFAULT_PORT, StudioOptions};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Live Code Studio: edit a small web project with an agent, approvals and a live preview.
#[derive(Debug, Parser)]
#[command(name = "studio", version, args_conflicts_with_subcommands = true)]
struct Args {
    /// Loopback port to serve on (0 picks a free one).
    #[arg(long, default_value_t = DEFAULT_PORT)]
    port: u16,
    /// Directory for the workspace database and settings.
    #[arg(long, default_value = DEFAULT_DATA_DIR)]
    data_dir: PathBuf,
    /// A folder to open at start (read, edited, saved back on request).
    #[arg(long)]
    folder: Option<PathBuf>,
    /// Let --folder replace unsaved edits stored from another source (edits stored from the
    /// same folder are always kept).
    #[arg(long)]
    discard_changes: bool,
    /// MCP servers to mount (a Claude Desktop or VS Code JSON file); saved into the settings.
    #[arg(long, value_name = "FILE")]
    mcp_config: Option<PathBuf>,
    /// Follow-up turns a provider run takes to fix what its change broke in the preview (each
    /// fix still asks for approval); 0 turns them off.
    #[arg(long, default_value_t = host::DEFAULT_MAX_FIX_TURNS, value_name = "N")]
    max_fix_turns: u32,
    /// Export traces and metrics over OTLP/HTTP to this base URL (e.g.
    /// `http://127.0.0.1:4318`); default: `OTEL_EXPORTER_OTLP_ENDPOINT`, else nothing is exported.
    #[arg(long, value_name = "URL", global = true)]
    otlp_endpoint: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the workspace tools over MCP on stdin/stdout (headless; logs go to stderr).
    Mcp {
        /// A folder to open at start.
        #[arg(long)]
        folder: Option<PathBuf>,
        /// Let --folder replace unsaved edits stored from another source.
        #[arg(long)]
        discard_changes: bool,
        /// Directory for the workspace database and settings.
        #[arg(long, default_value = DEFAULT_DATA_DIR)]
        data_dir: PathBuf,
        /// MCP servers to mount and re-export (a Claude Desktop or VS Code JSON file); saved
        /// into the settings.
        #[arg(long, value_name = "FILE")]
        mcp_config: Option<PathBuf>,
        /// Ask approvals on the page of the studio running at this URL (e.g.
        /// `http://127.0.0.1:4870`), for clients that cannot be asked themselves.
        #[arg(long, value_name = "URL")]
        approve_with: Option<String>,
        /// That studio's per-launch token (default: the `STUDIO_TOKEN` environment variable).
        #[arg(long, requires = "approve_with")]
        token: Option<String>,
    },
    /// List or call registry tools from the terminal, under the studio's approval policy.
    Tools(cli::ToolsArgs),
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let telemetry = match OtlpEndpoint::resolve(args.otlp_endpoint.as_deref()) {
        Ok(endpoint) => endpoint,
        Err(message) => {
            eprintln!("studio: {message}");
            return std::process::ExitCode::from(2);
        }
    };
    run(args, telemetry.as_ref()).await
}

async fn run(args: Args, otlp: Option<&OtlpEndpoint>) -> std::process::ExitCode {
    match args.command {
        Some(Command::Mcp {
            folder,
            discard_changes,
            data_dir,
            mcp_config,
            approve_with,
            token,
        }) => {
            if let Err(message) = import_mcp_config(&data_dir, mcp_config.as_deref()) {
                eprintln!("studio mcp: {message}");
                return std::process::ExitCode::from(2);
            }
            let options = StudioOptions::ephemeral(&data_dir)
                .with_folder(folder)
                .with_discard_changes(discard_changes);
            let telemetry = install_logging(otlp, Output::Stderr);
            let code = serve_mcp(options, approve_with, token).await;
            shut_down(telemetry).await;
            code
        }
        Some(Command::Tools(tools)) => cli::run(tools).await,
        None => {
            if let Err(message) = import_mcp_config(&args.data_dir, args.mcp_config.as_deref()) {
                eprintln!("studio: {message}");
                return std::process::ExitCode::from(2);
            }
            let telemetry = install_logging(otlp, Output::Stdout);
            let code = serve_ui(
                StudioOptions::default()
                    .with_port(args.port)
                    .with_data_dir(args.data_dir)
                    .with_folder(args.folder)
                    .with_discard_changes(args.discard_changes)
                    .with_max_fix_turns(args.max_fix_turns),
            )
            .await;
            shut_down(telemetry).await;
            code
        }
    }
}

/// Where log lines go: stderr when stdout carries MCP.
#[derive(Clone, Copy)]
enum Output {
    Stdout,
    Stderr,
}

/// Installs the log subscriber and, with an endpoint, the OpenTelemetry layer beside it (the
/// log filter does not filter what is exported). An exporter that cannot start is reported
/// and the studio runs without it.
fn install_logging(otlp: Option<&OtlpEndpoint>, output: Output) -> Option<Telemetry> {
    let telemetry = otlp.and_then(|endpoint| match Telemetry::start(endpoint) {
        Ok(telemetry) => Some(telemetry),
        Err(message) => {
            eprintln!("studio: not exporting telemetry: {message}");
            None
        }
    });
    let logs = tracing_subscriber::fmt::layer().with_target(false);
    let logs = match output {
        Output::Stdout => logs.boxed(),
        Output::Stderr => logs.with_writer(std::io::stderr).boxed(),
    };
    tracing_subscriber::registry()
        .with(logs.with_filter(log_filter()))
        .with(telemetry.as_ref().map(Telemetry::layer))
        .init();
    if let Some(endpoint) = otlp.filter(|_| telemetry.is_some()) {
        eprintln!(
            "studio: exporting traces and metrics to {}",
            endpoint.as_str()
        );
    }
    telemetry
}

/// Sends what is queued before the process ends (bounded; off the async runtime).
async fn shut_down(telemetry: Option<Telemetry>) {
    if let Some(telemetry) = telemetry {
        let _ = tokio::task::spawn_blocking(move || telemetry.shutdown()).await;
    }
}

/// `--mcp-config FILE`: saves the file's servers as the studio's before it starts.
fn import_mcp_config(
    data_dir: &std::path::Path,
    file: Option<&std::path::Path>,
) -> Result<(), String> {
    let Some(file) = file else {
        return Ok(());
    };
    let count = host::mcp_servers::import_config_file(data_dir, file)?;
    eprintln!(
        "studio: {count} MCP server(s) from {} saved in the settings",
        file.display()
    );
    Ok(())
}

fn log_filter() -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into())
}

/// `studio mcp`: one MCP session over stdio; stdout is reserved for the protocol.
async fn serve_mcp(
    options: StudioOptions,
    approve_with: Option<String>,
    token: Option<String>,
) -> std::process::ExitCode {
    let state = match host::build_state(&options, options.port).await {
        Ok(state) => state,
        Err(message) => {
            eprintln!("studio mcp: {message}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let remote = match approve_with {
        None => None,
        Some(url) => {
            let token = token
                .or_else(|| std::env::var(cli::TOKEN_ENV).ok())
                .filter(|token| !token.trim().is_empty());
            let Some(token) = token else {
                eprintln!(
                    "studio mcp: --approve-with needs the running studio's token (--token or STUDIO_TOKEN)"
                );
                return std::process::ExitCode::from(2);
            };
            Some(RemoteApprovals::new(&url, token.trim()))
        }
    };
    // The configured MCP servers' tools are re-exported: let them connect first (bounded), so
    // the client's first tools/list lists them.
    state
        .mcp_servers
        .wait_until_settled(host::mcp_servers::GATEWAY_SETTLE_TIMEOUT)
        .await;
    match host::mcp::serve_stdio_session(&state, remote).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("studio mcp: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// `studio`: the browser UI on loopback.
async fn serve_ui(options: StudioOptions) -> std::process::ExitCode {
    let studio = match host::start(options).await {
        Ok(studio) => studio,
        Err(message) => {
            eprintln!("studio: {message}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let status = studio.state.workspace.manager().status().await;
    println!("Live Code Studio is running at {}", studio.url());
    println!(
        "storage: {}{}",
        status.storage.storage_mode,
        status
            .storage
            .storage_error
            .map(|e| format!(" ({e})"))
            .unwrap_or_default()
    );
    if let Some(resumed) = &status.resumed {
        println!(
            "kept {} unsaved change(s) from the last session, not yet saved to {}: {}",
            resumed.unsaved_count,
            resumed.folder_name,
            resumed.unsaved_paths.join(", ")
        );
    }
    let state = studio.state.clone();
    tokio::select! {
        result = studio.wait() => {
            if let Err(error) = result {
                eprintln!("studio: {error}");
                return std::process::ExitCode::FAILURE;
            }
        }
        () = stop_requested() => {
            println!("studio: stopping");
            state.mcp_servers.shutdown().await;
            let unsaved = state.workspace.manager().status().await;
            if unsaved.is_dirty {
                println!(
                    "studio: {} unsaved change(s) stay stored in the data directory for the next start",
                    unsaved.dirty_paths.len() + unsaved.pending_deletions.len()
                );
            }
        }
    }
    std::process::ExitCode::SUCCESS
}

/// Ctrl+C or SIGTERM (a service manager's stop): both end the process the same clean way.
async fn stop_requested() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
                return;
            }
            Err(error) => eprintln!("studio: SIGTERM is not handled ({error})"),
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
