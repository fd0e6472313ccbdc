//! Keeping an owner's lease alive while its effect runs.
//!
//! A lease only says how long an owner may be silent before another owner takes over. An effect
//! that outlives it must keep saying it is alive, or a second runner reclaims the record and
//! runs the effect again. [`LeaseHeartbeat`] renews the claim (fenced, see
//! [`DurableOperationStore::renew_lease`]) every [`renewal_interval`] in the background and
//! hands back the claim to settle with; a renewal that fails is reported, never retried, so the
//! owner can stop treating the outcome as its own.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::error::DurableOperationError;
use crate::store::{Claim, DurableOperationStore};

/// Renewals per lease: each renewal leaves two thirds of the lease for the next one to land.
pub const RENEWALS_PER_LEASE: u32 = 3;

/// How often a claim under `lease` is renewed: a third of it, at least 1 ms.
pub fn renewal_interval(lease: Duration) -> Duration {
    (lease / RENEWALS_PER_LEASE).max(Duration::from_millis(1))
}

/// A renewal failed: the record may already belong to another owner.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaseLost {
    /// The last claim this owner held; its fence is stale if another owner took over.
    pub claim: Claim,
    /// Why the renewal failed.
    pub error: DurableOperationError,
}

/// Renews an `Owner` claim's lease in the background until [`stop`](Self::stop)ped.
///
/// Dropping it stops the renewals too (after any renewal in flight).
#[derive(Debug)]
pub struct LeaseHeartbeat {
    latest: Arc<Mutex<Claim>>,
    stop: CancellationToken,
    lost: CancellationToken,
    task: Option<JoinHandle<Option<DurableOperationError>>>,
    backend: &'static str,
}

impl LeaseHeartbeat {
    /// Starts renewing `claim` under `lease` (`None`: the store's default lease) on its own task.
    pub fn start(store: DurableOperationStore, claim: Claim, lease: Option<Duration>) -> Self {
        let interval = renewal_interval(lease.unwrap_or(store.options().default_lease));
        let backend = store.backend().name();
        let latest = Arc::new(Mutex::new(claim));
        let (stop, lost) = (CancellationToken::new(), CancellationToken::new());
        let task = tokio::spawn(renew_until_stopped(
            Renewal {
                store,
                latest: Arc::clone(&latest),
                lease,
            },
            interval,
            stop.clone(),
            lost.clone(),
        ));
        Self {
            latest,
            stop,
            lost,
            task: Some(task),
            backend,
        }
    }

    /// The claim as of the last successful renewal.
    pub fn current(&self) -> Claim {
        lock(&self.latest).clone()
    }

    /// Completes once a renewal has failed; pending for as long as the lease is kept.
    pub async fn lost(&self) {
        self.lost.cancelled().await;
    }

    /// Stops renewing, after waiting for a renewal in flight (so the returned claim's fence is
    /// the stored one), and returns the claim to settle with, or why the lease was lost.
    pub async fn stop(mut self) -> Result<Claim, LeaseLost> {
        self.stop.cancel();
        let joined = match self.task.take() {
            Some(task) => task.await,
            None => Ok(None),
        };
        let error = match joined {
            Ok(None) => return Ok(self.current()),
            Ok(Some(error)) => error,
            Err(join) => DurableOperationError::Backend {
                backend: self.backend,
                message: format!("the lease renewal task failed: {join}"),
            },
        };
        Err(LeaseLost {
            claim: self.current(),
            error,
        })
    }
}

impl Drop for LeaseHeartbeat {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// What one renewal needs.
struct Renewal {
    store: DurableOperationStore,
    latest: Arc<Mutex<Claim>>,
    lease: Option<Duration>,
}

/// Renews every `interval` until `stop`; the first failure cancels `lost` and ends the loop.
async fn renew_until_stopped(
    renewal: Renewal,
    interval: Duration,
    stop: CancellationToken,
    lost: CancellationToken,
) -> Option<DurableOperationError> {
    loop {
        tokio::select! {
            biased;
            () = stop.cancelled() => return None,
            () = tokio::time::sleep(interval) => {}
        }
        // Never cancelled mid-flight: a renewal whose outcome is unknown would leave the
        // owner unsure which fence is current.
        let claim = lock(&renewal.latest).clone();
        match renewal.store.renew_lease(&claim, renewal.lease).await {
            Ok(renewed) => *lock(&renewal.latest) = renewed,
            Err(error) => {
                lost.cancel();
                return Some(error);
            }
        }
    }
}

/// The claim is replaced whole under the lock, so a poisoned lock still holds a valid claim.
fn lock(latest: &Mutex<Claim>) -> std::sync::MutexGuard<'_, Claim> {
    latest.lock().unwrap_or_else(PoisonError::into_inner)
}
