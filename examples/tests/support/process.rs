//! The studio binary run as a child process, the way a person runs it.

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// Follows `child`'s piped stdout on a thread until the studio prints the URL it serves.
/// Returns that URL (without the trailing slash) and the lines printed after it.
pub fn wait_for_url(child: &mut Child) -> (String, Receiver<String>) {
    let (lines, stdout) = std::sync::mpsc::channel();
    let out = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let base = loop {
        let line = stdout
            .recv_timeout(Duration::from_secs(60))
            .expect("the studio prints its URL");
        if let Some(url) = line.strip_prefix("Live Code Studio is running at ") {
            break url.trim_end_matches('/').to_owned();
        }
    };
    (base, stdout)
}
