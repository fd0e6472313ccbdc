//! Bounds on what a mounted server may cost us: time to connect, the size of its tool list and
//! schemas, the size of one message, and how often we reconnect.

use std::time::Duration;

/// The bounds every mounted server is held to. `Default` gives the documented values; set
/// fields on it to change them.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientLimits {
    /// Spawning or reaching the server and the protocol handshake (default 30 s).
    pub connect_timeout: Duration,
    /// Listing every page of tools (default 30 s).
    pub list_timeout: Duration,
    /// Tools mounted from one server (default 1,000); the rest are skipped and reported.
    pub max_tools: usize,
    /// `tools/list` pages followed (default 100).
    pub max_pages: usize,
    /// Serialized size of one remote schema (default 64 KiB).
    pub max_schema_bytes: usize,
    /// Nesting depth of one remote schema (default 32).
    pub max_schema_depth: usize,
    /// One message from the server: a stdio line, an HTTP body or SSE event (default 16 MiB).
    /// The registry's output budget applies to the result on top of this.
    pub max_message_bytes: usize,
    /// First wait before reconnecting (default 500 ms), doubled per failure.
    pub reconnect_initial: Duration,
    /// Longest wait between reconnects (default 30 s).
    pub reconnect_max: Duration,
}

impl Default for ClientLimits {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(30),
            list_timeout: Duration::from_secs(30),
            max_tools: 1000,
            max_pages: 100,
            max_schema_bytes: 64 * 1024,
            max_schema_depth: 32,
            max_message_bytes: 16 * 1024 * 1024,
            reconnect_initial: Duration::from_millis(500),
            reconnect_max: Duration::from_secs(30),
        }
    }
}

impl ClientLimits {
    /// The wait before reconnect attempt `attempt` (0-based): doubling, capped.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(16)).unwrap_or(u32::MAX);
        self.reconnect_initial
            .saturating_mul(factor)
            .min(self.reconnect_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_stops_at_its_cap() {
        let limits = ClientLimits::default();
        assert_eq!(limits.backoff(0), Duration::from_millis(500));
        assert_eq!(limits.backoff(1), Duration::from_secs(1));
        assert_eq!(limits.backoff(6), Duration::from_secs(30));
        assert_eq!(limits.backoff(u32::MAX), Duration::from_secs(30));
    }
}
