//! Exactly-once on a fleet, what it costs (issue 56): a keyed `ledger.append` sent through
//! HAProxy to three `tool-host` processes sharing one PostgreSQL store, against an unkeyed
//! `ledger.append` sent straight to one of them, in the same run.
//!
//! Both are 2026-07-28 `tools/call` POSTs (each request stands alone, so the balancer may send
//! each to any host) made by the same plain HTTP client; every keyed call has a fresh key, so it
//! runs (the cost of the durable claim and settlement, and of the balancer hop) rather than
//! replays. 200 calls per side, interleaved, with a keyed call straight to one host as a third
//! side (the durable record's share without the balancer); prints the p50s and their ratios.
//! Goal: ≤ 1.3×.
//!
//! Needs the `tool-host` binary of the same profile (`cargo build --release -p
//! live-code-studio --bin tool-host` before `cargo bench`), `haproxy` on the PATH (Debian's
//! package) and PostgreSQL at `DATABASE_URL` (default `postgres://postgres@127.0.0.1:5432/test`).
//!
//! `cargo bench -p workspace-benches --bench fleet`

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::process::{Child, Command};
use workspace_benches::median;

/// Calls per side.
const CALLS: usize = 200;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("its address")
        .port()
}

/// `tool-host` beside this bench's own binary (`target/<profile>/deps/fleet-…`).
fn tool_host_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("the bench binary");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>");
    let bin = profile_dir.join("tool-host");
    assert!(
        bin.exists(),
        "{} is missing: cargo build -p live-code-studio --bin tool-host (same profile as the bench)",
        bin.display()
    );
    bin
}

async fn wait_listening(port: u16) {
    let started = Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "nothing listened on {port}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Three hosts on one store and a balancer in front; killed when dropped.
struct Fleet {
    _processes: Vec<Child>,
    _dir: tempfile::TempDir,
    direct: String,
    balanced: String,
}

async fn start_fleet(database: &str) -> Fleet {
    let dir = tempfile::tempdir().expect("temp dir");
    let bin = tool_host_bin();
    let ports = [free_port(), free_port(), free_port()];
    let mut processes = Vec::new();
    for port in ports {
        let child = Command::new(&bin)
            .args(["--listen", &format!("127.0.0.1:{port}"), "--approve-all"])
            .args(["--store", database, "--owner", "fleet-bench"])
            .arg("--state-key-file")
            .arg(dir.path().join("fleet.key"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("tool-host starts");
        processes.push(child);
        // One at a time: the first creates the shared key file the others read.
        wait_listening(port).await;
    }
    let front = free_port();
    let servers: String = ports
        .iter()
        .enumerate()
        .map(|(index, port)| format!("  server h{index} 127.0.0.1:{port}\n"))
        .collect();
    let config = format!(
        "defaults\n  mode http\n  timeout connect 5s\n  timeout client 60s\n  timeout server 60s\nfrontend mcp\n  bind 127.0.0.1:{front}\n  default_backend hosts\nbackend hosts\n  balance roundrobin\n{servers}"
    );
    let config_path = dir.path().join("fleet.cfg");
    std::fs::write(&config_path, config).expect("haproxy config");
    let haproxy = Command::new("haproxy")
        .arg("-f")
        .arg(&config_path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("haproxy starts (apt-get install haproxy)");
    processes.push(haproxy);
    wait_listening(front).await;
    Fleet {
        _processes: processes,
        _dir: dir,
        direct: format!("http://127.0.0.1:{}/mcp", ports[0]),
        balanced: format!("http://127.0.0.1:{front}/mcp"),
    }
}

/// One 2026-07-28 `ledger.append`, keyed or not; returns its round trip.
async fn append(http: &reqwest::Client, url: &str, key: Option<&str>) -> Duration {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "fleet-bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if let Some(key) = key {
        meta["tool-context/idempotency-key"] = json!(key);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "ledger.append", "arguments": {"entry": "bench"}, "_meta": meta}});
    let started = Instant::now();
    let text = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "ledger.append")
        .json(&body)
        .send()
        .await
        .expect("sent")
        .text()
        .await
        .expect("answered");
    let elapsed = started.elapsed();
    let json = text
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .unwrap_or(&text);
    let answer: Value = serde_json::from_str(json).expect("a JSON-RPC answer");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    elapsed
}

fn main() {
    if workspace_benches::filtered_out("fleet") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(measure());
}

async fn measure() {
    let database = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let fleet = start_fleet(&database).await;
    let http = reqwest::Client::new();
    let run = std::process::id();
    // Warm up both paths (connections, prepared statements).
    for index in 0..20 {
        append(&http, &fleet.direct, None).await;
        append(&http, &fleet.balanced, Some(&format!("warm-{run}-{index}"))).await;
    }
    let (mut keyed, mut keyed_direct, mut unkeyed) = (Vec::new(), Vec::new(), Vec::new());
    for index in 0..CALLS {
        unkeyed.push(append(&http, &fleet.direct, None).await);
        keyed.push(
            append(
                &http,
                &fleet.balanced,
                Some(&format!("bench-{run}-{index}")),
            )
            .await,
        );
        let direct_key = format!("direct-{run}-{index}");
        keyed_direct.push(append(&http, &fleet.direct, Some(&direct_key)).await);
    }
    let (ours, direct, baseline) = (
        median(&mut keyed),
        median(&mut keyed_direct),
        median(&mut unkeyed),
    );
    let ms = |duration: Duration| duration.as_secs_f64() * 1000.0;
    println!(
        "ledger.append, p50 over {CALLS}: keyed through HAProxy to 3 hosts on PostgreSQL {:.2} ms vs unkeyed to one host {:.2} ms = {:.2}x (keyed to one host: {:.2} ms = {:.2}x)",
        ms(ours),
        ms(baseline),
        ms(ours) / ms(baseline),
        ms(direct),
        ms(direct) / ms(baseline)
    );
}
