//! `studio`: the Live Code Studio host.
//!
//! ```text
//! cargo run --release --bin studio -- [--port 4870] [--data-dir .studio-data] [--folder DIR]
//! ```

use std::path::PathBuf;

use clap::Parser;
use live_code_studio::host::{self, DEFAULT_DATA_DIR, DEFAULT_PORT, StudioOptions};

/// Live Code Studio: edit a small web project with an agent, approvals and a live preview.
#[derive(Debug, Parser)]
#[command(name = "studio", version)]
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
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_target(false)
        .init();
    let args = Args::parse();
    let options = StudioOptions {
        port: args.port,
        data_dir: args.data_dir,
        folder: args.folder,
    };
    let studio = match host::start(options).await {
        Ok(studio) => studio,
        Err(message) => {
            eprintln!("studio: {message}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let status = studio.state.manager.status().await;
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
    tokio::select! {
        result = studio.wait() => {
            if let Err(error) = result {
                eprintln!("studio: {error}");
                return std::process::ExitCode::FAILURE;
            }
        }
        _ = tokio::signal::ctrl_c() => println!("studio: stopping"),
    }
    std::process::ExitCode::SUCCESS
}
