//! Throwaway database servers that the harness owns: started on free loopback ports in
//! directories the harness chose, so that the nemesis may kill, restart, pause and disconnect
//! them without touching anybody else's database.
//!
//! Why not the machine's own Redis on 6379 and PostgreSQL on 5432: a nemesis has to send
//! SIGKILL, SIGQUIT and SIGSTOP to the server process and restart it on the same data, which
//! is only safe (and only possible without privileges over the system services) on a server
//! the harness started itself and nobody else uses.
//!
//! - [`RedisServer`]: `redis-server` with a chosen [`RedisDurability`] (no persistence, AOF
//!   fsynced every second, AOF fsynced on every write).
//! - [`PostgresServer`]: a fresh cluster (`initdb`) and its postmaster; as root, both run as
//!   the `postgres` user (PostgreSQL refuses to run as root).
//! - [`SqliteFile`]: only a path. SQLite is a library inside the workers, not a server: its
//!   faults are process kills of the workers (done by the harness that runs them), and the
//!   file survives them.
//!
//! Pauses and kills reach a server's whole process tree (PostgreSQL backends, Redis rewrite
//! children), found through `/proc` since PostgreSQL backends leave the postmaster's process
//! group; the leader is stopped first, so that it forks nothing meanwhile. Its stdout and
//! stderr go to a log file in its directory, into which each fault method also writes a timestamped
//! `# durable-faults <unix ms>: ...` note; a failed start reports the tail of that log.
//!
//! Fault methods return once the fault is in effect (a killed server has exited, a restarted
//! one answers), so the caller can record the fault in its history with its own clock. Signals
//! are sent by running the `kill` command (this crate forbids `unsafe`, hence no `libc`).
//! Dropping a server stops it; a harness that is itself SIGKILLed leaves its servers running.

mod postgres;
mod process;
mod redis;
mod sqlite;

use std::path::PathBuf;

pub use postgres::PostgresServer;
pub(crate) use process::free_port;
pub use redis::{RedisDurability, RedisServer};
pub use sqlite::SqliteFile;

/// Why starting a server or applying a fault failed.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A server binary is not installed (or not where it was looked for).
    #[error("missing server binary: {0}")]
    MissingBinary(String),
    /// A file or process operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A server did not come up (or back up).
    #[error("{server} did not start: {reason}\n--- last lines of {} ---\n{tail}", log.display())]
    Start {
        /// Which server (`redis-server`, `postgres`, `initdb`).
        server: String,
        /// What happened: it exited, or it did not answer in time.
        reason: String,
        /// The server's log file.
        log: PathBuf,
        /// The last lines it wrote during this attempt.
        tail: String,
    },
    /// A fault could not be applied (the server was not running, a signal failed, ...).
    #[error("{0}")]
    Fault(String),
    /// A client request the harness itself makes (e.g. to drop connections) failed.
    #[error("{server} client: {message}")]
    Client {
        /// Which server.
        server: &'static str,
        /// The client's error.
        message: String,
    },
}

impl ServerError {
    fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            context: context.into(),
            source,
        }
    }

    fn not_running(server: &str) -> Self {
        Self::Fault(format!(
            "{server} is not running (killed, and not restarted)"
        ))
    }

    fn still_running(server: &str) -> Self {
        Self::Fault(format!(
            "{server} is still running: kill or shut it down first"
        ))
    }
}
