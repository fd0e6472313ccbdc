//! A throwaway PostgreSQL cluster and postmaster on a free loopback port.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sqlx::Connection;
use tokio::process::Command;

use super::ServerError;
use super::process::{self, Launch, LogFile, ServerProcess, Signal, StartFailure};

const SERVER: &str = "postgres";

/// Where Debian-style packages install the server binaries (`<root>/<version>/bin`).
const INSTALL_ROOT: &str = "/usr/lib/postgresql";

/// How long a start (including crash recovery) may take.
const START_LIMIT: Duration = Duration::from_secs(60);

/// How long a shut-down server may take to disappear.
const EXIT_LIMIT: Duration = Duration::from_secs(30);

/// How long a drop waits for an immediate shutdown before it kills.
const DROP_LIMIT: Duration = Duration::from_secs(10);

/// How long one client request of the harness itself may take.
const CLIENT_LIMIT: Duration = Duration::from_secs(10);

/// A PostgreSQL cluster the harness owns, in `<dir>/data`, with its unix socket in `<dir>`, its
/// logs in `<dir>/initdb.log` and `<dir>/postgres.log`, listening on `127.0.0.1` only, trust
/// authentication, `fsync=on`. As root, `<dir>` is chowned to the `postgres` user and the
/// server runs as that user (so `<dir>`'s parents must be searchable by it, as `/tmp` is).
/// `<dir>` must be short enough for a unix socket path in it (about 100 bytes).
/// Dropping it shuts it down (immediate shutdown).
#[derive(Debug)]
pub struct PostgresServer {
    dir: PathBuf,
    bin: PathBuf,
    owner: Option<Owner>,
    port: u16,
    log: LogFile,
    process: Option<ServerProcess>,
}

/// The user and group the server processes run as (when the harness runs as root).
#[derive(Debug, Clone, Copy)]
struct Owner {
    uid: u32,
    gid: u32,
}

impl PostgresServer {
    /// Creates a cluster in `<dir>/data` with `initdb` (trust authentication, `--no-sync`),
    /// starts it on a free port and waits until it accepts connections. A port taken
    /// meanwhile by someone else is retried with another. Fails with
    /// [`ServerError::MissingBinary`] when no `/usr/lib/postgresql/*/bin/postgres` exists.
    pub async fn start(dir: impl AsRef<Path>) -> Result<Self, ServerError> {
        let dir = dir.as_ref().to_path_buf();
        let owner = prepare_dir(&dir)?;
        let mut server = Self {
            bin: bin_dir()?,
            log: LogFile::new(dir.join("postgres.log")),
            dir,
            owner,
            port: 0,
            process: None,
        };
        server.initdb().await?;
        process::launch_on_free_port(&mut server).await?;
        Ok(server)
    }

    /// `postgres://postgres@127.0.0.1:<port>/postgres`.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// The port, the same across restarts.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The directory holding the cluster, the socket and the logs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cluster's data directory, `<dir>/data`.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The server's log file: its output and the harness's fault notes.
    pub fn log_path(&self) -> &Path {
        self.log.path()
    }

    /// The postmaster's pid while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(ServerProcess::pid)
    }

    /// Immediate shutdown: SIGQUIT to the postmaster (then SIGCONT to it and its backends, in
    /// case they were paused), which stops every backend without a checkpoint; waits until
    /// all are gone. [`Self::restart`] then runs crash recovery from the WAL.
    pub async fn immediate_shutdown(&mut self) -> Result<(), ServerError> {
        let mut process = self.take_process()?;
        self.log
            .note("immediate shutdown (SIGQUIT to the postmaster)");
        process.shut_down(Signal::Quit)?;
        process.wait_gone(EXIT_LIMIT).await?;
        Ok(())
    }

    /// SIGKILL to the postmaster and all its backends at once (as close to a power cut as a
    /// process kill gets; the OS page cache survives), and waits until all are gone.
    pub async fn kill9(&mut self) -> Result<(), ServerError> {
        let mut process = self.take_process()?;
        self.log
            .note("kill -9 (SIGKILL to the postmaster and its backends)");
        process.kill_tree()?;
        process.wait_gone(EXIT_LIMIT).await?;
        Ok(())
    }

    /// Starts the postmaster again on the same data directory and port (crash recovery replays
    /// the WAL), and waits until it accepts connections. It must have been stopped first; it
    /// fails (with the log's tail) if someone else took the port meanwhile.
    pub async fn restart(&mut self) -> Result<(), ServerError> {
        if self.process.is_some() {
            return Err(ServerError::still_running(SERVER));
        }
        self.log.note("restart");
        self.launch_once().await.map_err(|failure| failure.error)
    }

    /// SIGSTOP to the postmaster, then (once it forks no more) to every backend it forked
    /// (found through `/proc`, as backends leave its process group): connections stay open,
    /// new ones queue in the listen backlog, nothing answers until [`Self::resume`].
    pub fn pause(&mut self) -> Result<(), ServerError> {
        let process = self.running()?;
        let backends = process.freeze()?;
        let note = format!(
            "pause (SIGSTOP to the postmaster and {} backends)",
            backends.len()
        );
        self.log.note(&note);
        Ok(())
    }

    /// SIGCONT to the postmaster and every backend, after [`Self::pause`].
    pub fn resume(&mut self) -> Result<(), ServerError> {
        self.running()?.thaw()?;
        self.log
            .note("resume (SIGCONT to the backends and the postmaster)");
        Ok(())
    }

    /// Terminates every client backend (`pg_terminate_backend`, waiting up to 5 s for each)
    /// through a connection of its own. Returns how many were terminated.
    pub async fn drop_connections(&self) -> Result<u64, ServerError> {
        if self.process.is_none() {
            return Err(ServerError::not_running(SERVER));
        }
        self.log
            .note("drop connections (pg_terminate_backend of every client backend)");
        tokio::time::timeout(CLIENT_LIMIT, terminate_backends(&self.url()))
            .await
            .map_err(|_| client_error(format!("terminating took over {CLIENT_LIMIT:?}")))?
    }

    fn take_process(&mut self) -> Result<ServerProcess, ServerError> {
        self.process
            .take()
            .ok_or_else(|| ServerError::not_running(SERVER))
    }

    fn running(&mut self) -> Result<&mut ServerProcess, ServerError> {
        self.process
            .as_mut()
            .ok_or_else(|| ServerError::not_running(SERVER))
    }

    /// A command for the binary `name` of the installation, as the cluster's owner, in `dir`.
    fn command(&self, name: &str) -> Command {
        let mut command = Command::new(self.bin.join(name));
        command.current_dir(&self.dir).env("LC_ALL", "C");
        if let Some(owner) = self.owner {
            command.uid(owner.uid).gid(owner.gid);
        }
        command
    }

    /// `initdb` into `<dir>/data`, output in `<dir>/initdb.log`.
    async fn initdb(&self) -> Result<(), ServerError> {
        let log = LogFile::new(self.dir.join("initdb.log"));
        let mut command = self.command("initdb");
        command
            .arg("-D")
            .arg(self.data_dir())
            .args(["-U", "postgres", "--auth=trust", "--no-sync"])
            .args(["--encoding=UTF8", "--locale=C"]);
        log.attach(&mut command)?;
        let status = command
            .status()
            .await
            .map_err(|e| spawn_error("initdb", &self.bin, e))?;
        if status.success() {
            return Ok(());
        }
        Err(ServerError::Start {
            server: "initdb".into(),
            reason: format!("it exited with {status}"),
            log: log.path().to_path_buf(),
            tail: log.tail_since(0),
        })
    }

    /// One attempt: spawn on `self.port`, wait until this very postmaster accepts connections
    /// (asked through the unix socket in `<dir>`, which no other server uses).
    async fn launch_once(&mut self) -> Result<(), StartFailure> {
        let offset = self.log.len();
        let mut process = self.spawn().map_err(|error| StartFailure {
            error,
            port_taken: false,
        })?;
        let probe = || self.accepts_connections();
        let log = &self.log;
        process::wait_ready(SERVER, &mut process, log, offset, START_LIMIT, probe).await?;
        self.process = Some(process);
        Ok(())
    }

    fn spawn(&self) -> Result<ServerProcess, ServerError> {
        let mut command = self.command(SERVER);
        command
            .arg("-D")
            .arg(self.data_dir())
            .args(["-p", &self.port.to_string()])
            .arg("-k")
            .arg(&self.dir)
            .args(["-c", "listen_addresses=127.0.0.1"])
            .args(["-c", "fsync=on", "-c", "synchronous_commit=on"])
            .args(["-c", "full_page_writes=on", "-c", "logging_collector=off"]);
        self.log.attach(&mut command)?;
        ServerProcess::spawn(command, &self.bin.join(SERVER).display().to_string())
    }

    /// `pg_isready` through the unix socket in `<dir>`.
    async fn accepts_connections(&self) -> bool {
        let status = Command::new(self.bin.join("pg_isready"))
            .arg("-h")
            .arg(&self.dir)
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                "postgres",
            ])
            .args(["-t", "2", "-q"])
            .stdin(std::process::Stdio::null())
            .status()
            .await;
        status.is_ok_and(|s| s.success())
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        let Some(mut process) = self.process.take() else {
            return;
        };
        // Immediate shutdown cleans up its shared memory, unlike a SIGKILL.
        if process.shut_down(Signal::Quit).is_ok() && process.reap_blocking(DROP_LIMIT) {
            return;
        }
        process.kill_tree_blocking();
    }
}

fn client_error(message: impl Into<String>) -> ServerError {
    ServerError::Client {
        server: SERVER,
        message: message.into(),
    }
}

fn spawn_error(name: &str, bin: &Path, error: std::io::Error) -> ServerError {
    match error.kind() {
        std::io::ErrorKind::NotFound => {
            ServerError::MissingBinary(format!("{}: {error}", bin.join(name).display()))
        }
        _ => ServerError::io(format!("running {name}"), error),
    }
}

async fn terminate_backends(url: &str) -> Result<u64, ServerError> {
    let mut connection = sqlx::PgConnection::connect(url)
        .await
        .map_err(|e| client_error(e.to_string()))?;
    let terminated: i64 = sqlx::query_scalar(
        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM pg_stat_activity \
         WHERE pid <> pg_backend_pid() AND datname IS NOT NULL",
    )
    .fetch_one(&mut connection)
    .await
    .map_err(|e| client_error(e.to_string()))?;
    let _ = connection.close().await;
    Ok(u64::try_from(terminated).unwrap_or(0))
}

/// The newest `/usr/lib/postgresql/<version>/bin` holding a `postgres` binary.
fn bin_dir() -> Result<PathBuf, ServerError> {
    newest_bin_dir(Path::new(INSTALL_ROOT))
}

/// The newest `<root>/<version>/bin` holding a `postgres` binary.
fn newest_bin_dir(root: &Path) -> Result<PathBuf, ServerError> {
    let missing = || {
        ServerError::MissingBinary(format!(
            "no PostgreSQL server found: {}/*/bin/postgres does not exist \
             (install the postgresql server package, e.g. postgresql-15)",
            root.display()
        ))
    };
    let entries = std::fs::read_dir(root).map_err(|_| missing())?;
    entries
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            bin.join(SERVER).is_file().then_some((version, bin))
        })
        .max_by_key(|(version, _)| *version)
        .map(|(_, bin)| bin)
        .ok_or_else(missing)
}

/// Creates `dir`; as root, hands it to the `postgres` user and returns that user.
fn prepare_dir(dir: &Path) -> Result<Option<Owner>, ServerError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| ServerError::io(format!("creating {}", dir.display()), e))?;
    if !running_as_root() {
        return Ok(None);
    }
    let owner = postgres_user()?;
    std::os::unix::fs::chown(dir, Some(owner.uid), Some(owner.gid))
        .map_err(|e| ServerError::io(format!("chown postgres {}", dir.display()), e))?;
    Ok(Some(owner))
}

/// Whether this process runs as root (the owner of `/proc/self`).
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The `postgres` user's uid and gid, from `/etc/passwd`.
fn postgres_user() -> Result<Owner, ServerError> {
    let passwd = std::fs::read_to_string("/etc/passwd")
        .map_err(|e| ServerError::io("reading /etc/passwd", e))?;
    passwd
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.first() == Some(&"postgres")).then_some(())?;
            let uid = fields.get(2)?.parse().ok()?;
            let gid = fields.get(3)?.parse().ok()?;
            Some(Owner { uid, gid })
        })
        .ok_or_else(|| {
            ServerError::Fault(
                "running as root, PostgreSQL needs an unprivileged `postgres` user, and \
                 /etc/passwd has none"
                    .into(),
            )
        })
}

impl Launch for PostgresServer {
    fn set_port(&mut self, port: u16) {
        self.port = port;
    }

    async fn launch(&mut self) -> Result<(), StartFailure> {
        self.launch_once().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_server_binaries_are_a_clear_error() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("15/bin")).unwrap();
        let error = newest_bin_dir(root.path()).unwrap_err();
        assert!(matches!(error, ServerError::MissingBinary(_)), "{error}");
        assert!(
            error.to_string().contains("/*/bin/postgres does not exist"),
            "{error}"
        );
    }

    #[test]
    fn the_newest_installed_version_is_chosen() {
        let root = tempfile::tempdir().unwrap();
        for version in ["9", "15", "16", "17"] {
            let bin = root.path().join(version).join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            if version != "17" {
                std::fs::write(bin.join("postgres"), "").unwrap();
            }
        }
        assert_eq!(
            newest_bin_dir(root.path()).unwrap(),
            root.path().join("16/bin")
        );
    }
}
