//! A throwaway `redis-server` on a free loopback port.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::process::Command;

use super::ServerError;
use super::process::{self, Launch, LogFile, ServerProcess, StartFailure};

const SERVER: &str = "redis-server";

/// How long a start (including loading the AOF) may take.
const START_LIMIT: Duration = Duration::from_secs(30);

/// How long a killed server may take to disappear.
const EXIT_LIMIT: Duration = Duration::from_secs(10);

/// How long one client request of the harness itself may take.
const CLIENT_LIMIT: Duration = Duration::from_secs(5);

/// What Redis persists, i.e. what a crash may lose. Snapshots (RDB) are always off
/// (`--save ''`), so only the append-only file, if any, survives a kill.
///
/// Note that a process kill (the page cache survives) differs from a machine crash: with
/// `AofEverySec`, writes reach the AOF file before the reply in the common case, so a kill
/// rarely loses acknowledged writes, but Redis may postpone that write while a slow fsync is
/// in progress (up to about two seconds of writes); only `AofAlways` promises none are lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedisDurability {
    /// No persistence: a kill loses everything.
    None,
    /// `--appendonly yes --appendfsync everysec`.
    AofEverySec,
    /// `--appendonly yes --appendfsync always`.
    AofAlways,
}

impl RedisDurability {
    fn args(self) -> &'static [&'static str] {
        match self {
            Self::None => &["--appendonly", "no"],
            Self::AofEverySec => &["--appendonly", "yes", "--appendfsync", "everysec"],
            Self::AofAlways => &["--appendonly", "yes", "--appendfsync", "always"],
        }
    }
}

/// A `redis-server` the harness owns: data and log (`redis.log`) in its directory, listening
/// on `127.0.0.1` only. Dropping it kills it.
#[derive(Debug)]
pub struct RedisServer {
    dir: PathBuf,
    port: u16,
    durability: RedisDurability,
    log: LogFile,
    process: Option<ServerProcess>,
}

impl RedisServer {
    /// Starts a server with its data in `dir` (created if missing) on a free port, and waits
    /// until it answers PING. A port taken meanwhile by someone else is retried with another.
    pub async fn start(
        dir: impl AsRef<Path>,
        durability: RedisDurability,
    ) -> Result<Self, ServerError> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir)
            .map_err(|e| ServerError::io(format!("creating {}", dir.display()), e))?;
        let log = LogFile::new(dir.join("redis.log"));
        let mut server = Self {
            dir,
            port: 0,
            durability,
            log,
            process: None,
        };
        process::launch_on_free_port(&mut server).await?;
        Ok(server)
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The port, the same across restarts.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The data directory (AOF, log).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The log file: the server's output and the harness's fault notes.
    pub fn log_path(&self) -> &Path {
        self.log.path()
    }

    /// The durability it runs with.
    pub fn durability(&self) -> RedisDurability {
        self.durability
    }

    /// The server's pid while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(ServerProcess::pid)
    }

    /// SIGKILL (to it and any child it forked, paused or not), and waits until all are gone.
    pub async fn kill9(&mut self) -> Result<(), ServerError> {
        let mut process = self
            .process
            .take()
            .ok_or_else(|| ServerError::not_running(SERVER))?;
        self.log.note("kill -9 (SIGKILL to the process tree)");
        process.kill_tree()?;
        process.wait_gone(EXIT_LIMIT).await?;
        Ok(())
    }

    /// Starts it again on the same port and directory (so the AOF, if enabled, is replayed),
    /// and waits until it answers. It must have been killed first.
    pub async fn restart(&mut self) -> Result<(), ServerError> {
        if self.process.is_some() {
            return Err(ServerError::still_running(SERVER));
        }
        self.log.note("restart");
        self.launch_once().await.map_err(|failure| failure.error)
    }

    /// SIGSTOP: it keeps its connections and port but answers nothing until [`Self::resume`].
    pub fn pause(&mut self) -> Result<(), ServerError> {
        self.running()?.freeze()?;
        self.log.note("pause (SIGSTOP)");
        Ok(())
    }

    /// SIGCONT after [`Self::pause`].
    pub fn resume(&mut self) -> Result<(), ServerError> {
        self.running()?.thaw()?;
        self.log.note("resume (SIGCONT)");
        Ok(())
    }

    /// `CLIENT KILL TYPE normal` through a connection of its own (which is spared): every
    /// client connection is closed by the server. Returns how many were closed.
    pub async fn drop_connections(&self) -> Result<u64, ServerError> {
        if self.process.is_none() {
            return Err(ServerError::not_running(SERVER));
        }
        self.log.note("drop connections (CLIENT KILL TYPE normal)");
        let killed = tokio::time::timeout(CLIENT_LIMIT, client_kill_normal(&self.url()))
            .await
            .map_err(|_| client_error(format!("CLIENT KILL took over {CLIENT_LIMIT:?}")))??;
        Ok(killed)
    }

    fn running(&mut self) -> Result<&mut ServerProcess, ServerError> {
        self.process
            .as_mut()
            .ok_or_else(|| ServerError::not_running(SERVER))
    }

    /// One attempt: spawn on `self.port`, wait until this very process answers.
    async fn launch_once(&mut self) -> Result<(), StartFailure> {
        let offset = self.log.len();
        let mut process = self.spawn().map_err(|error| StartFailure {
            error,
            port_taken: false,
        })?;
        let (url, pid) = (self.url(), process.pid());
        let probe = || answers_as(url.clone(), pid);
        process::wait_ready(SERVER, &mut process, &self.log, offset, START_LIMIT, probe).await?;
        self.process = Some(process);
        Ok(())
    }

    fn spawn(&self) -> Result<ServerProcess, ServerError> {
        let mut command = Command::new(SERVER);
        command
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(&self.dir)
            .args(["--save", "", "--daemonize", "no", "--logfile", ""])
            .args(self.durability.args())
            .current_dir(&self.dir);
        self.log.attach(&mut command)?;
        ServerProcess::spawn(command, SERVER)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(mut process) = self.process.take() {
            process.kill_tree_blocking();
        }
    }
}

fn client_error(message: impl Into<String>) -> ServerError {
    ServerError::Client {
        server: SERVER,
        message: message.into(),
    }
}

/// Whether the server at `url` answers PING and is the process `pid` (not someone else who
/// took the port).
async fn answers_as(url: String, pid: u32) -> bool {
    let probe = async {
        let client = redis::Client::open(url.as_str()).ok()?;
        let mut connection = client.get_multiplexed_async_connection().await.ok()?;
        redis::cmd("PING")
            .query_async::<String>(&mut connection)
            .await
            .ok()?;
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query_async(&mut connection)
            .await
            .ok()?;
        let expected = format!("process_id:{pid}");
        Some(info.lines().any(|line| line.trim() == expected))
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(2), probe).await,
        Ok(Some(true))
    )
}

async fn client_kill_normal(url: &str) -> Result<u64, ServerError> {
    let client = redis::Client::open(url).map_err(|e| client_error(e.to_string()))?;
    let mut connection = client
        .get_multiplexed_async_connection()
        .await
        .map_err(|e| client_error(e.to_string()))?;
    redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("normal")
        .query_async(&mut connection)
        .await
        .map_err(|e| client_error(e.to_string()))
}

impl Launch for RedisServer {
    fn set_port(&mut self, port: u16) {
        self.port = port;
    }

    async fn launch(&mut self) -> Result<(), StartFailure> {
        self.launch_once().await
    }
}
