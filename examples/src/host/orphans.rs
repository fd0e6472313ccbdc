//! Approvals whose asking page is gone. A run started from a page waits for that page's person;
//! when the page crashed (no `pagehide` cancelled the run) nobody is there to answer, and the
//! approval must not stay pending for a later page to approve unseen. Once no page of the run's
//! surface has been attached for the grace period, the host denies the approval, saying why
//! (`TOOL_POLICY_DENIED` with `details.reason` [`STUDIO_APPROVAL_ORPHANED`]). Another open page
//! of the same surface shows the approval, so it keeps it pending.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tool_context::Denial;

use super::StudioState;

/// `details.reason` of an approval denied because its asking page is gone.
pub const STUDIO_APPROVAL_ORPHANED: &str = "STUDIO_APPROVAL_ORPHANED";
/// How long an approval may wait with no page of its surface attached.
pub const DEFAULT_ORPHAN_GRACE: Duration = Duration::from_secs(30);
/// How often pending approvals are checked (at most; shorter graces check more often).
const CHECK_EVERY: Duration = Duration::from_secs(1);

/// The grace period, adjustable while the studio runs (tests and embedders shorten it).
#[derive(Debug)]
pub struct OrphanGrace(Mutex<Duration>);

impl Default for OrphanGrace {
    fn default() -> Self {
        Self(Mutex::new(DEFAULT_ORPHAN_GRACE))
    }
}

impl OrphanGrace {
    /// The current grace period.
    pub fn get(&self) -> Duration {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets the grace period (checked from the next tick on).
    pub fn set(&self, grace: Duration) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = grace;
    }
}

/// Denies page-run approvals whose surface has had no attached page for the grace period,
/// until the studio stops.
pub(super) fn watch_orphaned_approvals(state: &Arc<StudioState>) {
    let state = Arc::clone(state);
    tokio::spawn(async move {
        // Approval id -> when it was first seen without a page to answer it.
        let mut unattended: HashMap<String, Instant> = HashMap::new();
        loop {
            let tick = (state.orphan_grace.get() / 4).clamp(Duration::from_millis(20), CHECK_EVERY);
            tokio::select! {
                () = state.stopping.cancelled() => return,
                () = tokio::time::sleep(tick) => {}
            }
            deny_orphans(&state, &mut unattended);
        }
    });
}

fn deny_orphans(state: &StudioState, unattended: &mut HashMap<String, Instant>) {
    let grace = state.orphan_grace.get();
    let pending = state.approvals.snapshot();
    unattended.retain(|id, _| pending.iter().any(|approval| &approval.id == id));
    for approval in pending.iter() {
        let Some(surface) = approval
            .session_id
            .as_deref()
            .and_then(|session| state.runs.page_of_session(session))
        else {
            continue;
        };
        if state.viewers_for(surface).count() > 0 {
            unattended.remove(&approval.id);
            continue;
        }
        let since = *unattended
            .entry(approval.id.clone())
            .or_insert_with(Instant::now);
        if since.elapsed() >= grace {
            unattended.remove(&approval.id);
            state
                .approvals
                .deny_with(&approval.id, orphaned(surface.as_str(), grace));
        }
    }
}

fn orphaned(surface: &str, grace: Duration) -> Denial {
    let details = json!({
        "reason": STUDIO_APPROVAL_ORPHANED,
        "decidedBy": "host",
        "surface": surface,
        "graceMs": u64::try_from(grace.as_millis()).unwrap_or(u64::MAX),
    });
    Denial::new(
        format!(
            "The approval expired: the page that asked for it closed and no other {surface} page was open to answer it within {}.",
            spoken(grace)
        ),
        details.as_object().cloned().unwrap_or_default(),
    )
}

/// `30 s`, or `300 ms` under a second.
fn spoken(duration: Duration) -> String {
    if duration >= Duration::from_secs(1) {
        format!("{} s", duration.as_secs())
    } else {
        format!("{} ms", duration.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_denial_says_why_who_decided_and_after_how_long() {
        let denial = orphaned("editor", Duration::from_millis(300));
        assert!(
            denial.message.contains("no other editor page"),
            "{}",
            denial.message
        );
        assert!(
            denial.message.ends_with("within 300 ms."),
            "{}",
            denial.message
        );
        assert_eq!(
            serde_json::Value::Object(denial.details),
            json!({"reason": STUDIO_APPROVAL_ORPHANED, "decidedBy": "host", "surface": "editor", "graceMs": 300})
        );
        assert_eq!(spoken(DEFAULT_ORPHAN_GRACE), "30 s");
    }
}
