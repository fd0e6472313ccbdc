//! Injectable time and incarnation sources, so leases and retention can be tested exactly.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A source of wall-clock time in milliseconds since the Unix epoch.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time in ms since the Unix epoch.
    fn now_ms(&self) -> u64;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// A clock that only moves when told to; share it (it is cheap to clone) between stores.
#[derive(Debug, Default, Clone)]
pub struct ManualClock {
    now: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock reading `start_ms`.
    pub fn new(start_ms: u64) -> Self {
        Self {
            now: Arc::new(AtomicU64::new(start_ms)),
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        self.now.fetch_add(duration_ms(by), Ordering::SeqCst);
    }

    /// Sets the clock to `now_ms`.
    pub fn set(&self, now_ms: u64) {
        self.now.store(now_ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
}

/// Produces a fresh opaque incarnation for every newly created key lifetime.
pub type IncarnationGenerator = Arc<dyn Fn() -> String + Send + Sync>;

/// The default incarnation: a random UUID v4 as 32 lowercase hex digits.
pub fn random_incarnation() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// A duration in whole milliseconds, saturating at `u64::MAX`.
pub(crate) fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let clock = ManualClock::new(10);
        let shared = clock.clone();
        clock.advance(Duration::from_millis(5));
        assert_eq!(shared.now_ms(), 15);
        shared.set(3);
        assert_eq!(clock.now_ms(), 3);
    }

    #[test]
    fn random_incarnations_are_32_hex_and_distinct() {
        let a = random_incarnation();
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, random_incarnation());
    }
}
