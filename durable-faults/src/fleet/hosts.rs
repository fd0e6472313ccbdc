//! The fleet's processes: `tool-host` instances sharing one store and ledger, and HAProxy in
//! front of them on loopback ports. Each writes its output to a log file in the campaign's
//! directory; everything is killed when dropped.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};
use tokio::time::Instant;

use crate::servers::free_port;

/// How every host of the fleet is started.
#[derive(Debug, Clone)]
pub struct HostSpec {
    /// The `tool-host` binary.
    pub bin: PathBuf,
    /// The shared durable store (`postgres://…`, `redis://…`).
    pub store: String,
    /// The shared ledger `ledger.append` writes to (`postgres://…`, `sqlite:PATH`).
    pub ledger: String,
    /// The fleet's sealed-state key file.
    pub key_file: PathBuf,
    /// Lease of a call's claim (ms).
    pub lease_ms: u64,
    /// Where the hosts' logs go.
    pub dir: PathBuf,
}

/// One `tool-host` process on a fixed port (a restarted host listens where it did).
pub struct Host {
    index: usize,
    port: u16,
    child: Option<Child>,
}

impl Host {
    /// Starts host `index` on a free port and waits until it listens.
    pub async fn start(spec: &HostSpec, index: usize) -> Result<Self, String> {
        let port = free_port().map_err(|error| error.to_string())?;
        let mut host = Self {
            index,
            port,
            child: None,
        };
        host.spawn(spec).await?;
        Ok(host)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `kill -9`: no shutdown, no last writes.
    pub async fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }

    /// Starts it again on its port, once killed.
    pub async fn restart(&mut self, spec: &HostSpec) -> Result<(), String> {
        self.spawn(spec).await
    }

    async fn spawn(&mut self, spec: &HostSpec) -> Result<(), String> {
        let listen = format!("127.0.0.1:{}", self.port);
        let log = append_log(&spec.dir.join(format!("host-{}.log", self.index)))?;
        let child = Command::new(&spec.bin)
            .args(["--listen", &listen, "--approve-all"])
            .args(["--store", &spec.store, "--ledger", &spec.ledger])
            .arg("--state-key-file")
            .arg(&spec.key_file)
            .args(["--lease-ms", &spec.lease_ms.to_string()])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| format!("starting {}: {error}", spec.bin.display()))?;
        self.child = Some(child);
        wait_listening(self.port, &mut self.child, Duration::from_secs(60)).await
    }
}

/// HAProxy balancing round-robin over the hosts (the README's recipe, with fast health checks
/// so a killed host leaves the rotation within a second).
pub struct Balancer {
    port: u16,
    _child: Option<Child>,
}

impl Balancer {
    /// Writes `haproxy.cfg` in `dir` and starts HAProxy in the foreground.
    pub async fn start(dir: &Path, hosts: &[u16]) -> Result<Self, String> {
        let port = free_port().map_err(|error| error.to_string())?;
        let config = dir.join("haproxy.cfg");
        std::fs::write(&config, haproxy_config(port, hosts)).map_err(|e| e.to_string())?;
        let log = append_log(&dir.join("haproxy.log"))?;
        let child = Command::new("haproxy")
            .arg("-db")
            .arg("-f")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| {
                format!("starting haproxy (install Debian's haproxy package): {error}")
            })?;
        let mut child = Some(child);
        wait_listening(port, &mut child, Duration::from_secs(20)).await?;
        Ok(Self {
            port,
            _child: child,
        })
    }

    /// Its URL for MCP clients.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

/// The configuration: `retries` with `redispatch` resend only requests a host never accepted
/// (a refused connection), so a request is never sent twice by the balancer itself.
fn haproxy_config(port: u16, hosts: &[u16]) -> String {
    let servers: String = hosts
        .iter()
        .enumerate()
        .map(|(index, host)| {
            format!("  server h{index} 127.0.0.1:{host} check inter 300 fall 1 rise 1\n")
        })
        .collect();
    format!(
        "defaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n  timeout server 30s\n  \
         retries 3\n  option redispatch\nfrontend mcp\n  bind 127.0.0.1:{port}\n  \
         default_backend hosts\nbackend hosts\n  balance roundrobin\n{servers}"
    )
}

fn append_log(path: &Path) -> Result<std::fs::File, String> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|error| format!("{}: {error}", path.display()))
}

/// Waits until `port` accepts connections, failing early when the process exits.
async fn wait_listening(
    port: u16,
    child: &mut Option<Child>,
    limit: Duration,
) -> Result<(), String> {
    let started = Instant::now();
    loop {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Ok(());
        }
        if let Some(status) = child
            .as_mut()
            .and_then(|child| child.try_wait().ok().flatten())
        {
            return Err(format!("the process for port {port} exited: {status}"));
        }
        if started.elapsed() > limit {
            return Err(format!("nothing listened on port {port} within {limit:?}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
