//! Keeping an owner's lease alive while its effect runs.
//!
//! A lease only says how long an owner may be silent before another owner takes over. An effect
//! that outlives it must keep saying it is alive, or a second runner reclaims the record and
//! runs the effect again. [`LeaseHeartbeat`] renews the claim (fenced, see
//! [`DurableOperationStore::renew_lease`]) every [`renewal_interval`] in the background and
//! hands back the claim to settle with; a renewal that fails is reported, never retried, so the
//! owner can stop treating the outcome as its own. Started with
//! [`LeaseHeartbeat::start_marking_unknown`], it also marks the record `unknown` right away, so
//! no other owner takes it over while the effect may still be running.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use serde_json::Value;

use crate::error::DurableOperationError;
use crate::record::OperationRecord;
use crate::store::{Claim, DurableOperationStore, Settlement};

/// Renewals per lease: each renewal leaves two thirds of the lease for the next one to land.
pub const RENEWALS_PER_LEASE: u32 = 3;

/// How often a claim under `lease` is renewed: a third of it, at least 1 ms.
pub fn renewal_interval(lease: Duration) -> Duration {
    (lease / RENEWALS_PER_LEASE).max(Duration::from_millis(1))
}

/// The `unknown` reason and diagnostic to store when a renewal fails, given its error.
pub type OnLeaseLoss =
    Box<dyn Fn(&DurableOperationError) -> (String, Option<Value>) + Send + Sync + 'static>;

/// A renewal failed: the record may already belong to another owner.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaseLost {
    /// The last claim this owner held; its fence is stale if another owner took over.
    pub claim: Claim,
    /// Why the renewal failed.
    pub error: DurableOperationError,
    /// The `unknown` record the heartbeat stored right after the failure
    /// ([`LeaseHeartbeat::start_marking_unknown`]); `None` if it could not (or was not asked to).
    pub unknown: Option<OperationRecord>,
}

impl LeaseLost {
    /// The renewal of `claim` failed with `error`; no `unknown` record was stored.
    pub fn new(claim: Claim, error: DurableOperationError) -> Self {
        Self {
            claim,
            error,
            unknown: None,
        }
    }

    /// Sets the `unknown` record stored right after the failure.
    #[must_use]
    pub fn with_unknown(mut self, unknown: OperationRecord) -> Self {
        self.unknown = Some(unknown);
        self
    }
}

/// Renews an `Owner` claim's lease in the background until [`stop`](Self::stop)ped.
///
/// Dropping it stops the renewals too (after any renewal in flight).
#[derive(Debug)]
pub struct LeaseHeartbeat {
    latest: Arc<Mutex<Claim>>,
    stop: CancellationToken,
    lost: CancellationToken,
    task: Option<JoinHandle<Option<RenewalFailure>>>,
    backend: &'static str,
}

impl LeaseHeartbeat {
    /// Starts renewing `claim` under `lease` (`None`: the store's default lease) on its own task.
    pub fn start(store: DurableOperationStore, claim: Claim, lease: Option<Duration>) -> Self {
        Self::spawn(store, claim, lease, None)
    }

    /// Like [`start`](Self::start), and when a renewal fails, marks the record `unknown` at
    /// once with the reason and diagnostic `on_loss` derives from the error (while the fence
    /// still allows it; an expired lease nobody reclaimed is renewed first).
    pub fn start_marking_unknown(
        store: DurableOperationStore,
        claim: Claim,
        lease: Option<Duration>,
        on_loss: OnLeaseLoss,
    ) -> Self {
        Self::spawn(store, claim, lease, Some(on_loss))
    }

    fn spawn(
        store: DurableOperationStore,
        claim: Claim,
        lease: Option<Duration>,
        on_loss: Option<OnLeaseLoss>,
    ) -> Self {
        let interval = renewal_interval(lease.unwrap_or(store.options().default_lease));
        let backend = store.backend().name();
        let latest = Arc::new(Mutex::new(claim));
        let (stop, lost) = (CancellationToken::new(), CancellationToken::new());
        let task = tokio::spawn(renew_until_stopped(
            Renewal {
                store,
                latest: Arc::clone(&latest),
                lease,
                on_loss,
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
        let (error, unknown) = match joined {
            Ok(None) => return Ok(self.current()),
            Ok(Some(lost)) => lost,
            Err(join) => {
                let message = format!("the lease renewal task failed: {join}");
                let backend = self.backend;
                (DurableOperationError::Backend { backend, message }, None)
            }
        };
        Err(LeaseLost {
            claim: self.current(),
            error,
            unknown,
        })
    }
}

impl Drop for LeaseHeartbeat {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Why the renewals ended early, and the `unknown` record stored after it, if any.
type RenewalFailure = (DurableOperationError, Option<OperationRecord>);

/// What one renewal needs.
struct Renewal {
    store: DurableOperationStore,
    latest: Arc<Mutex<Claim>>,
    lease: Option<Duration>,
    on_loss: Option<OnLeaseLoss>,
}

/// Renews every `interval` until `stop`; the first failure (after the optional `unknown`
/// transition) cancels `lost` and ends the loop.
async fn renew_until_stopped(
    renewal: Renewal,
    interval: Duration,
    stop: CancellationToken,
    lost: CancellationToken,
) -> Option<RenewalFailure> {
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
                let unknown = match &renewal.on_loss {
                    Some(on_loss) => {
                        let (reason, diagnostic) = on_loss(&error);
                        let settlement = Settlement::Unknown { reason, diagnostic };
                        settle_renewing(&renewal.store, &claim, settlement, renewal.lease)
                            .await
                            .ok()
                    }
                    None => None,
                };
                lost.cancel();
                return Some((error, unknown));
            }
        }
    }
}

/// Settles `claim`; a lease that expired without anyone reclaiming it is renewed once first,
/// since the matching fence proves the record is still this owner's.
pub(crate) async fn settle_renewing(
    store: &DurableOperationStore,
    claim: &Claim,
    settlement: Settlement,
    lease: Option<Duration>,
) -> Result<OperationRecord, DurableOperationError> {
    match store.settle(claim, settlement.clone()).await {
        Err(DurableOperationError::LeaseExpired { .. }) => {
            let renewed = store.renew_lease(claim, lease).await?;
            store.settle(&renewed, settlement).await
        }
        other => other,
    }
}

/// The claim is replaced whole under the lock, so a poisoned lock still holds a valid claim.
fn lock(latest: &Mutex<Claim>) -> std::sync::MutexGuard<'_, Claim> {
    latest.lock().unwrap_or_else(PoisonError::into_inner)
}
