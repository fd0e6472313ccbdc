//! A server child process and the tree it forks, its log file, signals sent with the `kill`
//! command, free loopback ports and the start loop shared by the servers.

use std::future::Future;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::process::{Child, Command};

use super::ServerError;

/// How often a start or an exit is polled.
const POLL: Duration = Duration::from_millis(50);

/// How many log lines a start error carries.
const TAIL_LINES: usize = 40;

/// How many fresh ports a start tries when the port turns out to be taken.
pub(super) const PORT_ATTEMPTS: usize = 5;

/// The signals the harness sends.
#[derive(Debug, Clone, Copy)]
pub(super) enum Signal {
    /// SIGKILL: no cleanup at all.
    Kill,
    /// SIGQUIT: PostgreSQL's immediate shutdown.
    Quit,
    /// SIGSTOP: freeze.
    Stop,
    /// SIGCONT: thaw.
    Cont,
}

impl Signal {
    fn name(self) -> &'static str {
        match self {
            Self::Kill => "KILL",
            Self::Quit => "QUIT",
            Self::Stop => "STOP",
            Self::Cont => "CONT",
        }
    }
}

/// Sends `signal` to every pid in `pids` by running `kill` (the crate forbids `unsafe`, so no
/// `libc::kill`). Fails if any of them could not be signalled (e.g. it had exited).
pub(super) fn send_signal(signal: Signal, pids: &[u32]) -> Result<(), ServerError> {
    if pids.is_empty() {
        return Ok(());
    }
    let targets: Vec<String> = pids.iter().map(u32::to_string).collect();
    let output = std::process::Command::new("kill")
        .args(["-s", signal.name(), "--"])
        .args(&targets)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| ServerError::io("running `kill`", e))?;
    if output.status.success() {
        return Ok(());
    }
    Err(ServerError::Fault(format!(
        "`kill -s {} -- {}` failed: {}",
        signal.name(),
        targets.join(" "),
        String::from_utf8_lossy(&output.stderr).trim()
    )))
}

/// A process's state letter and parent, from `/proc/<pid>/stat`.
fn proc_stat(pid: &str) -> Option<(char, u32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid ...`; `comm` may hold spaces and parentheses.
    let after_comm = &text[text.rfind(')')? + 1..];
    let mut fields = after_comm.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    Some((state, parent))
}

/// Whether `pid` is a process that is neither gone nor a zombie.
fn is_live(pid: u32) -> bool {
    proc_stat(&pid.to_string()).is_some_and(|(state, _)| !matches!(state, 'Z' | 'X' | 'x'))
}

/// Whether `pid` is stopped (by a signal).
fn is_stopped(pid: u32) -> bool {
    proc_stat(&pid.to_string()).is_some_and(|(state, _)| state == 'T')
}

/// Every live descendant of `root` (reads `/proc`). PostgreSQL backends call `setsid()`, so a
/// process group would not reach them: the tree is walked instead.
pub(super) fn descendants(root: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let processes: Vec<(u32, u32)> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let pid = name.parse().ok()?;
            let (state, parent) = proc_stat(&name)?;
            (!matches!(state, 'Z' | 'X' | 'x')).then_some((pid, parent))
        })
        .collect();
    let mut found = vec![root];
    let mut next = 0;
    while next < found.len() {
        let parent = found[next];
        found.extend(processes.iter().filter(|p| p.1 == parent).map(|p| p.0));
        next += 1;
    }
    found.remove(0);
    found
}

/// A free loopback port: bind port 0, read the port, release it. Another process may take it
/// before the server binds it; the start loop then retries with another port.
pub(crate) fn free_port() -> Result<u16, ServerError> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| ServerError::io("binding 127.0.0.1:0 to find a free port", e))?;
    let port = listener
        .local_addr()
        .map_err(|e| ServerError::io("reading the free port", e))?
        .port();
    Ok(port)
}

/// A server's log file: the server's stdout and stderr, plus the harness's fault notes.
#[derive(Debug, Clone)]
pub(super) struct LogFile {
    path: PathBuf,
}

impl LogFile {
    pub(super) fn new(path: PathBuf) -> Self {
        Self { path }
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the file for appending (created if missing).
    fn open(&self) -> Result<std::fs::File, ServerError> {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| ServerError::io(format!("opening log {}", self.path.display()), e))
    }

    /// The current length, where the output of the next start begins.
    pub(super) fn len(&self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }

    /// Redirects `command`'s stdout and stderr to the end of the file.
    pub(super) fn attach(&self, command: &mut Command) -> Result<(), ServerError> {
        let out = self.open()?;
        let err = out
            .try_clone()
            .map_err(|e| ServerError::io("duplicating the log file handle", e))?;
        command.stdout(out).stderr(err).stdin(Stdio::null());
        Ok(())
    }

    /// Appends `# durable-faults <unix ms>: <message>`, so a server's own log shows when the
    /// harness did what to it. Best effort: a note that cannot be written is dropped.
    pub(super) fn note(&self, message: &str) {
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        if let Ok(mut file) = self.open() {
            let _ = writeln!(file, "# durable-faults {millis}: {message}");
        }
    }

    /// The last lines written since `offset`.
    pub(super) fn tail_since(&self, offset: u64) -> String {
        let mut text = String::new();
        if let Ok(mut file) = std::fs::File::open(&self.path) {
            let _ = file.seek(SeekFrom::Start(offset));
            let mut bytes = Vec::new();
            let _ = file.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
    }
}

/// A running server process: its leader (the process the harness spawned) and the tree of
/// processes it forked (PostgreSQL backends, Redis rewrite children), found through `/proc`.
#[derive(Debug)]
pub(super) struct ServerProcess {
    child: Child,
    pid: u32,
    /// The descendants signalled by the last kill or shutdown, to wait for.
    doomed: Vec<u32>,
}

impl ServerProcess {
    /// Spawns `command`. The server stays in the harness's process group, so a Ctrl-C or a
    /// test runner's group kill also reaches it.
    pub(super) fn spawn(mut command: Command, program: &str) -> Result<Self, ServerError> {
        command.kill_on_drop(false);
        let child = command.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                ServerError::MissingBinary(format!("`{program}` was not found: {e}"))
            }
            _ => ServerError::io(format!("spawning `{program}`"), e),
        })?;
        let pid = child
            .id()
            .ok_or_else(|| ServerError::Fault(format!("`{program}` exited at once")))?;
        Ok(Self {
            child,
            pid,
            doomed: Vec::new(),
        })
    }

    /// The leader's pid.
    pub(super) fn pid(&self) -> u32 {
        self.pid
    }

    /// Fails if the leader has already exited (then its pid may have been reused, and the
    /// server died on its own).
    fn ensure_running(&mut self) -> Result<(), ServerError> {
        match self.exited() {
            Some(status) => Err(ServerError::Fault(format!(
                "pid {} already exited on its own with {status}",
                self.pid
            ))),
            None => Ok(()),
        }
    }

    /// Sends `signal` to the leader only.
    pub(super) fn signal_leader(&mut self, signal: Signal) -> Result<(), ServerError> {
        self.ensure_running()?;
        send_signal(signal, &[self.pid])
    }

    /// SIGSTOP to the leader, and once it is stopped (so it forks no more), to all its
    /// descendants. Returns the descendants.
    pub(super) fn freeze(&mut self) -> Result<Vec<u32>, ServerError> {
        self.signal_leader(Signal::Stop)?;
        let deadline = Instant::now() + Duration::from_secs(2);
        while !is_stopped(self.pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let tree = descendants(self.pid);
        // A descendant exiting meanwhile is not an error.
        let _ = send_signal(Signal::Stop, &tree);
        Ok(tree)
    }

    /// SIGCONT to the descendants, then to the leader.
    pub(super) fn thaw(&mut self) -> Result<(), ServerError> {
        self.ensure_running()?;
        let _ = send_signal(Signal::Cont, &descendants(self.pid));
        send_signal(Signal::Cont, &[self.pid])
    }

    /// Freezes the tree, then SIGKILLs all of it at once.
    pub(super) fn kill_tree(&mut self) -> Result<(), ServerError> {
        let mut tree = self.freeze()?;
        let _ = send_signal(Signal::Kill, &tree);
        send_signal(Signal::Kill, &[self.pid])?;
        self.doomed.append(&mut tree);
        Ok(())
    }

    /// `signal` to the leader, then SIGCONT to the tree (in case it was paused, since a stopped
    /// process acts on no signal but SIGKILL).
    pub(super) fn shut_down(&mut self, signal: Signal) -> Result<(), ServerError> {
        let mut tree = descendants(self.pid);
        self.signal_leader(signal)?;
        let _ = send_signal(Signal::Cont, &tree);
        let _ = send_signal(Signal::Cont, &[self.pid]);
        self.doomed.append(&mut tree);
        Ok(())
    }

    /// The exit status if the leader has exited.
    pub(super) fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits until the leader has exited and the descendants signalled are gone, up to
    /// `limit` (after which a leader still running is SIGKILLed with its tree).
    pub(super) async fn wait_gone(&mut self, limit: Duration) -> Result<ExitStatus, ServerError> {
        let deadline = Instant::now() + limit;
        let Ok(waited) = tokio::time::timeout(limit, self.child.wait()).await else {
            // Not left running behind the caller's back: it believes the server is down.
            self.kill_tree_blocking();
            let pid = self.pid;
            return Err(ServerError::Fault(format!(
                "pid {pid} did not exit in {limit:?}, so it was SIGKILLed"
            )));
        };
        let status = waited.map_err(|e| ServerError::io("waiting for a server to exit", e))?;
        while self.doomed.iter().any(|&pid| is_live(pid)) {
            if Instant::now() >= deadline {
                return Err(ServerError::Fault(format!(
                    "children {:?} of pid {} outlived it by {limit:?}",
                    self.doomed, self.pid
                )));
            }
            tokio::time::sleep(POLL).await;
        }
        Ok(status)
    }

    /// SIGKILL to the whole tree, then a short blocking reap; for `Drop`. Nothing is sent once
    /// the leader has been reaped, as its pid may belong to someone else by then.
    pub(super) fn kill_tree_blocking(&mut self) {
        if self.kill_tree().is_ok() {
            self.reap_blocking(Duration::from_secs(2));
        }
    }

    /// Polls the leader's exit for up to `limit` without a runtime (for `Drop`).
    pub(super) fn reap_blocking(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if self.exited().is_some() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(POLL);
        }
    }
}

/// A server that can be started on a given port.
pub(super) trait Launch {
    /// Uses `port` for the next launch.
    fn set_port(&mut self, port: u16);
    /// One start attempt on the set port.
    async fn launch(&mut self) -> Result<(), StartFailure>;
}

/// Starts `server` on a free port, trying another one when a stranger took the port between
/// the probe and the start (up to [`PORT_ATTEMPTS`] times).
pub(super) async fn launch_on_free_port(server: &mut impl Launch) -> Result<(), ServerError> {
    let mut last = None;
    for _ in 0..PORT_ATTEMPTS {
        server.set_port(free_port()?);
        match server.launch().await {
            Ok(()) => return Ok(()),
            Err(StartFailure {
                error,
                port_taken: true,
            }) => last = Some(error),
            Err(failure) => return Err(failure.error),
        }
    }
    Err(last.unwrap_or_else(|| ServerError::Fault("no port attempt was made".into())))
}

/// Why one start attempt failed.
#[derive(Debug)]
pub(super) struct StartFailure {
    /// What went wrong, with the tail of the log.
    pub(super) error: ServerError,
    /// Whether the log says the port was taken (worth another port).
    pub(super) port_taken: bool,
}

/// Polls `probe` until it reports the server ready, the process exits, or `limit` passes. On
/// failure the process tree is killed and the error carries the log written since `offset`.
pub(super) async fn wait_ready<F, Fut>(
    server: &str,
    process: &mut ServerProcess,
    log: &LogFile,
    offset: u64,
    limit: Duration,
    mut probe: F,
) -> Result<(), StartFailure>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + limit;
    let reason = loop {
        if let Some(status) = process.exited() {
            break format!("it exited with {status}");
        }
        if probe().await {
            return Ok(());
        }
        if Instant::now() >= deadline {
            break format!("it did not answer within {limit:?}");
        }
        tokio::time::sleep(POLL).await;
    };
    process.kill_tree_blocking();
    let tail = log.tail_since(offset);
    Err(StartFailure {
        port_taken: tail.contains("Address already in use"),
        error: ServerError::Start {
            server: server.to_owned(),
            reason,
            log: log.path().to_path_buf(),
            tail,
        },
    })
}
