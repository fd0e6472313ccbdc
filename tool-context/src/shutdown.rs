//! The registry's shutdown: a token to wait on, and a flag every call reads.
//!
//! Every call checks readiness twice (before the policy and after it), and reading a
//! `tokio_util` [`CancellationToken`] takes its lock. The registry's own
//! [`RegistryShutdown::fire`] sets a flag first, so a registry that owns its token is checked
//! with one atomic load. A token handed to the builder can also be cancelled by its owner,
//! which the flag cannot see, so only then is the token itself read as well.

use std::sync::atomic::{AtomicBool, Ordering};

use tokio_util::sync::CancellationToken;

pub(crate) struct RegistryShutdown {
    token: CancellationToken,
    /// Set by [`Self::fire`] before the token is cancelled.
    fired: AtomicBool,
    /// Whether the token came from the builder (its owner may cancel it directly).
    shared: bool,
}

impl RegistryShutdown {
    /// The shutdown of a registry built with `token` (from the builder), else its own.
    pub(crate) fn new(token: Option<CancellationToken>) -> Self {
        Self {
            shared: token.is_some(),
            token: token.unwrap_or_default(),
            fired: AtomicBool::new(false),
        }
    }

    /// Shuts the registry down: the flag, then the token (which wakes the waiters).
    pub(crate) fn fire(&self) {
        self.fired.store(true, Ordering::Release);
        self.token.cancel();
    }

    /// Whether it has fired, by [`Self::fire`] or by the shared token's owner.
    pub(crate) fn is_fired(&self) -> bool {
        self.fired.load(Ordering::Acquire) || (self.shared && self.token.is_cancelled())
    }

    /// Completes once it has fired.
    pub(crate) async fn fired(&self) {
        self.token.cancelled().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owned_shutdown_fires_once_fired() {
        let shutdown = RegistryShutdown::new(None);
        assert!(!shutdown.is_fired());
        shutdown.fire();
        assert!(shutdown.is_fired());
    }

    #[test]
    fn a_shared_token_cancelled_by_its_owner_is_seen() {
        let token = CancellationToken::new();
        let shutdown = RegistryShutdown::new(Some(token.clone()));
        assert!(!shutdown.is_fired());
        token.cancel();
        assert!(shutdown.is_fired());
    }

    #[tokio::test]
    async fn waiters_wake_when_it_fires() {
        let shutdown = std::sync::Arc::new(RegistryShutdown::new(None));
        let waiter = tokio::spawn({
            let shutdown = shutdown.clone();
            async move { shutdown.fired().await }
        });
        tokio::task::yield_now().await;
        shutdown.fire();
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("the waiter wakes")
            .expect("the waiter completes");
    }
}
