//! A call's cancellation as its handler and policy see it: a flag, and a token only once
//! something waits.
//!
//! Every call hands its handler a cancellation and most handlers never wait on it. A
//! `tokio_util` [`CancellationToken`] takes a lock on every clone, drop and check and
//! notifies on cancel (about 130 ns a call on the bench machine, a third of a trivial tool's
//! whole cost). A [`CallCancellation`] costs one small allocation and plain atomics; the token
//! it forwards to is created by the first [`CallCancellation::token`] (or
//! [`CallCancellation::cancelled`]) and cancelled with it.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

/// Fires when the registry stops waiting for the work holding it: the caller's cancellation,
/// the call's deadline, registry shutdown, or the call's future dropped. It also fires when
/// the call ends, so work a handler left behind with a clone can stop. Cheap to clone; clones
/// share one state.
#[derive(Clone, Default)]
pub struct CallCancellation {
    state: Arc<State>,
}

#[derive(Default)]
struct State {
    cancelled: AtomicBool,
    /// Created on demand; cancelled by [`CallCancellation::cancel`] or, when created after
    /// it, by its creator.
    token: OnceLock<CancellationToken>,
}

impl CallCancellation {
    /// A cancellation that has not fired. The registry makes one per call; make your own to
    /// test a handler.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether it has fired.
    pub fn is_cancelled(&self) -> bool {
        self.state.cancelled.load(Ordering::Acquire)
    }

    /// Completes once it has fired (at once if it already has).
    pub async fn cancelled(&self) {
        self.token().cancelled().await;
    }

    /// A token that fires with this cancellation, for code that takes a
    /// [`CancellationToken`] (child tokens, `select!` over `cancelled_owned`, libraries).
    pub fn token(&self) -> &CancellationToken {
        let mut created = false;
        let token = self.state.token.get_or_init(|| {
            created = true;
            CancellationToken::new()
        });
        if created {
            // Pairs with the fence in `cancel`: either it sees this token or this sees its flag.
            fence(Ordering::SeqCst);
            if self.state.cancelled.load(Ordering::Relaxed) {
                token.cancel();
            }
        }
        token
    }

    /// A child of [`Self::token`]: fires with this cancellation or on its own.
    pub fn child_token(&self) -> CancellationToken {
        self.token().child_token()
    }

    /// Fires it (again is a no-op). The registry fires each call's cancellation; a handler
    /// firing its own only tells its clones.
    pub fn cancel(&self) {
        if self.state.cancelled.swap(true, Ordering::SeqCst) {
            return;
        }
        fence(Ordering::SeqCst);
        if let Some(token) = self.state.token.get() {
            token.cancel();
        }
    }

    /// Fires it when anything but this handle could observe it: a clone or a token. The
    /// registry ends every call with this; after a handler finished, nothing else usually
    /// holds it, and firing would cost a fenced write for nobody.
    pub(crate) fn cancel_if_observed(&self) {
        if Arc::strong_count(&self.state) > 1 || self.state.token.get().is_some() {
            self.cancel();
        }
    }
}

impl fmt::Debug for CallCancellation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallCancellation")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn fires_once_and_clones_share_it() {
        let cancellation = CallCancellation::new();
        let clone = cancellation.clone();
        assert!(!clone.is_cancelled());
        cancellation.cancel();
        cancellation.cancel();
        assert!(clone.is_cancelled());
        assert!(format!("{clone:?}").contains("cancelled: true"));
    }

    #[test]
    fn ending_fires_it_for_clones_and_tokens_only() {
        let alone = CallCancellation::new();
        alone.cancel_if_observed();
        assert!(!alone.is_cancelled(), "nobody could observe it");
        let cloned = CallCancellation::new();
        let clone = cloned.clone();
        cloned.cancel_if_observed();
        assert!(clone.is_cancelled());
        let tokened = CallCancellation::new();
        let token = tokened.token().clone();
        tokened.cancel_if_observed();
        assert!(token.is_cancelled());
    }

    #[test]
    fn a_token_made_before_or_after_firing_fires_with_it() {
        let before = CallCancellation::new();
        let token = before.token().clone();
        let child = before.child_token();
        before.cancel();
        assert!(token.is_cancelled() && child.is_cancelled());
        let after = CallCancellation::new();
        after.cancel();
        assert!(after.token().is_cancelled());
    }

    #[tokio::test]
    async fn a_waiter_wakes_when_it_fires_from_another_task() {
        let cancellation = CallCancellation::new();
        let waiter = {
            let cancellation = cancellation.clone();
            tokio::spawn(async move { cancellation.cancelled().await })
        };
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert!(!waiter.is_finished());
        cancellation.cancel();
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("the waiter wakes")
            .unwrap();
    }

    #[test]
    fn racing_token_creation_and_cancel_never_loses_the_cancel() {
        for _ in 0..2_000 {
            let cancellation = CallCancellation::new();
            let creator = {
                let cancellation = cancellation.clone();
                std::thread::spawn(move || cancellation.token().clone())
            };
            cancellation.cancel();
            assert!(creator.join().unwrap().is_cancelled());
        }
    }
}
