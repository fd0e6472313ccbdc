//! Transient-retry policy: exponential backoff capped at a maximum, honouring `Retry-After`
//! within the same cap.

use std::time::{Duration, SystemTime};

/// Transient retries per provider turn (the counter resets every turn).
pub const MAX_TRANSIENT_RETRIES: u32 = 2;
/// Backoff of the first retry; each further retry doubles it.
pub const RETRY_BASE_DELAY: Duration = Duration::from_millis(350);
/// Upper bound of any backoff, including one asked for by `Retry-After`.
pub const RETRY_MAX_DELAY: Duration = Duration::from_millis(4_000);

/// How often and how long to wait before retrying a transient failure (429, 5xx, network
/// error, timeout).
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use openrouter_tool_loop::RetryPolicy;
/// let policy = RetryPolicy::default();
/// let delays: Vec<_> = (0..5).map(|n| policy.delay(n, None, SystemTime::now())).collect();
/// let ms: Vec<u128> = delays.iter().map(Duration::as_millis).collect();
/// assert_eq!(ms, [350, 700, 1400, 2800, 4000]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt of a turn.
    pub max_retries: u32,
    /// Delay of the first retry.
    pub base_delay: Duration,
    /// Cap of every delay.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: MAX_TRANSIENT_RETRIES,
            base_delay: RETRY_BASE_DELAY,
            max_delay: RETRY_MAX_DELAY,
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry_index` (0 for the first retry): the server's
    /// `Retry-After` when given, else `base * 2^retry_index`, both capped at `max_delay`.
    pub fn delay(
        &self,
        retry_index: u32,
        retry_after: Option<RetryAfter>,
        now: SystemTime,
    ) -> Duration {
        let wanted = match retry_after {
            Some(RetryAfter::Delay(delay)) => delay,
            Some(RetryAfter::At(when)) => when.duration_since(now).unwrap_or(Duration::ZERO),
            None => self
                .base_delay
                .saturating_mul(2u32.saturating_pow(retry_index)),
        };
        wanted.min(self.max_delay)
    }
}

/// A parsed `Retry-After` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfter {
    /// Delay in (possibly fractional) seconds.
    Delay(Duration),
    /// An HTTP date.
    At(SystemTime),
}

/// Parses `Retry-After`: non-negative seconds (fractions allowed) or an HTTP date; anything
/// else is ignored (`None`) and the normal backoff applies.
pub fn parse_retry_after(value: &str) -> Option<RetryAfter> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds)
            .ok()
            .map(RetryAfter::Delay);
    }
    httpdate::parse_http_date(value).ok().map(RetryAfter::At)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(delay: Duration) -> u128 {
        delay.as_millis()
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let policy = RetryPolicy::default();
        let now = SystemTime::now();
        assert_eq!(ms(policy.delay(0, None, now)), 350);
        assert_eq!(ms(policy.delay(1, None, now)), 700);
        assert_eq!(ms(policy.delay(3, None, now)), 2_800);
        assert_eq!(ms(policy.delay(4, None, now)), 4_000);
        assert_eq!(ms(policy.delay(u32::MAX, None, now)), 4_000);
    }

    #[test]
    fn retry_after_seconds_are_honoured_within_the_cap() {
        let policy = RetryPolicy::default();
        let now = SystemTime::now();
        let delay = |header| policy.delay(0, parse_retry_after(header), now);
        assert_eq!(ms(delay("0")), 0);
        assert_eq!(ms(delay("1.5")), 1_500);
        assert_eq!(ms(delay("4")), 4_000);
        assert_eq!(ms(delay("4.001")), 4_000);
        assert_eq!(ms(delay("120")), 4_000);
        assert_eq!(ms(delay("-1")), 350, "negative seconds are ignored");
        assert_eq!(ms(delay("soon")), 350, "garbage is ignored");
        assert_eq!(ms(delay("NaN")), 350);
    }

    #[test]
    fn retry_after_dates_count_from_now() {
        let policy = RetryPolicy::default();
        let now = httpdate::parse_http_date("Mon, 30 Nov 2026 07:00:00 GMT").unwrap();
        let delay = |header| policy.delay(1, parse_retry_after(header), now);
        assert_eq!(ms(delay("Mon, 30 Nov 2026 07:00:02 GMT")), 2_000);
        assert_eq!(ms(delay("Mon, 30 Nov 2026 07:01:00 GMT")), 4_000);
        assert_eq!(
            ms(delay("Mon, 30 Nov 2026 06:59:00 GMT")),
            0,
            "a past date means now"
        );
    }
}
