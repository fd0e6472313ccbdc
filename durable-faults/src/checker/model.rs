//! The sequential specification of one key's record: a compare-and-set register.
//!
//! The model is deliberately more permissive than the store where the history cannot know
//! something: lease expiry depends on clocks, so a claim on a pending record may either see it
//! pending or take it over; retention depends on clocks, so a prune may or may not delete a
//! settled record; renewals are not recorded, so a pending record's revision may have advanced
//! unseen; an indeterminate op reports nothing, so the fence it would have granted is unknown
//! (`None`) until a later observation fills it in.

use crate::history::{ClaimView, FenceView, OpKind, Operation, StateView};

/// The record under one key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Record {
    /// Its state (never `Absent`).
    pub state: StateView,
    /// Its fence, `None` while no observation has revealed it.
    pub fence: Option<FenceView>,
    /// The fingerprint that created it.
    pub fingerprint: String,
}

/// The register: no record, or one record.
pub(crate) type Model = Option<Record>;

/// The state a read of `model` returns.
pub(crate) fn state_of(model: &Model) -> StateView {
    model.as_ref().map_or(StateView::Absent, |r| r.state)
}

/// What an op reported; every field is `None` (anything goes) for an indeterminate op.
#[derive(Debug, Clone, Copy, Default)]
struct Seen<'a> {
    state: Option<StateView>,
    claim: Option<ClaimView>,
    fence: Option<&'a FenceView>,
}

impl<'a> Seen<'a> {
    fn of(op: &'a Operation) -> Self {
        if !op.is_ok() {
            return Self::default();
        }
        Self {
            state: op.observed(),
            claim: op.claim_status(),
            fence: op.fence(),
        }
    }
}

/// Every model state `op` may leave when it takes effect on `model`; empty when it cannot.
pub(crate) fn step(model: &Model, op: &Operation) -> Vec<Model> {
    let seen = Seen::of(op);
    match op.kind() {
        OpKind::Claim => claim(model, op.fingerprint(), seen),
        OpKind::Settle => settle(model, op.settle_to(), op.input_fence()),
        OpKind::Reconcile => reconcile(model, op.settle_to(), op.input_fence(), seen.state),
        OpKind::Read => read(model, seen),
        OpKind::Prune => prune(model),
    }
}

/// Whether a reported value (if any) is `value`.
fn allows<T: PartialEq>(seen: Option<T>, value: T) -> bool {
    seen.is_none_or(|s| s == value)
}

/// `record` with the observed fence learned, or `None` when the fence contradicts it. A pending
/// record's revision may have advanced through unrecorded lease renewals.
fn learn(record: &Record, fence: Option<&FenceView>) -> Option<Record> {
    let (Some(known), Some(seen)) = (record.fence.as_ref(), fence) else {
        let fence = fence.cloned().or_else(|| record.fence.clone());
        return Some(Record {
            fence,
            ..record.clone()
        });
    };
    let renewed = record.state == StateView::Pending
        && seen.incarnation == known.incarnation
        && seen.revision >= known.revision;
    (seen == known || renewed).then(|| Record {
        fence: Some(seen.clone()),
        ..record.clone()
    })
}

fn claim(model: &Model, fingerprint: &str, seen: Seen<'_>) -> Vec<Model> {
    let Some(record) = model else {
        return create(fingerprint, seen).into_iter().collect();
    };
    if record.fingerprint != fingerprint {
        return unchanged_claim(record, ClaimView::Conflict, seen);
    }
    match record.state {
        StateView::Pending => {
            let mut next = unchanged_claim(record, ClaimView::Pending, seen);
            next.extend(takeover(record, seen));
            next
        }
        StateView::Completed | StateView::Failed => {
            unchanged_claim(record, ClaimView::Replay, seen)
        }
        StateView::Unknown => unchanged_claim(record, ClaimView::Unknown, seen),
        StateView::Absent => Vec::new(),
    }
}

/// A claim on no record creates a pending one.
fn create(fingerprint: &str, seen: Seen<'_>) -> Option<Model> {
    let allowed = allows(seen.claim, ClaimView::Owner) && allows(seen.state, StateView::Pending);
    allowed.then(|| {
        Some(Record {
            state: StateView::Pending,
            fence: seen.fence.cloned(),
            fingerprint: fingerprint.to_owned(),
        })
    })
}

/// A claim that reports the record as it is (pending, replay, unknown, conflict).
fn unchanged_claim(record: &Record, status: ClaimView, seen: Seen<'_>) -> Vec<Model> {
    if !allows(seen.claim, status) || !allows(seen.state, record.state) {
        return Vec::new();
    }
    learn(record, seen.fence).map(Some).into_iter().collect()
}

/// A claim that takes over an expired lease: same incarnation, a newer revision.
fn takeover(record: &Record, seen: Seen<'_>) -> Option<Model> {
    let allowed = allows(seen.claim, ClaimView::Owner) && allows(seen.state, StateView::Pending);
    let newer = match (record.fence.as_ref(), seen.fence) {
        (Some(known), Some(granted)) => {
            granted.incarnation == known.incarnation && granted.revision > known.revision
        }
        _ => true,
    };
    (allowed && newer).then(|| {
        Some(Record {
            fence: seen.fence.cloned(),
            ..record.clone()
        })
    })
}

/// A fenced transition of `record` to `to` (revision + 1).
fn transition(record: &Record, to: StateView, fence: Option<&FenceView>) -> Option<Model> {
    let current = learn(record, fence)?;
    Some(Some(Record {
        state: to,
        fence: current.fence.as_ref().map(FenceView::next),
        ..current
    }))
}

fn settle(model: &Model, to: Option<StateView>, fence: Option<&FenceView>) -> Vec<Model> {
    let (Some(record), Some(to)) = (model, to) else {
        return Vec::new();
    };
    let legal = record.state == StateView::Pending
        && matches!(
            to,
            StateView::Completed | StateView::Failed | StateView::Unknown
        );
    if !legal {
        return Vec::new();
    }
    // `learn` refuses a fence that is not the record's (or a renewal of it, for pending).
    transition(record, to, fence).into_iter().collect()
}

fn reconcile(
    model: &Model,
    to: Option<StateView>,
    fence: Option<&FenceView>,
    seen: Option<StateView>,
) -> Vec<Model> {
    let mut next = Vec::new();
    if let (Some(record), Some(to)) = (model, to)
        && record.state == StateView::Unknown
        && to.is_settled()
        && allows(seen, to)
    {
        next.extend(transition(record, to, fence));
    }
    // `recover` leaves a record that is not unknown (or no record) as it is.
    if let Some(seen) = seen
        && seen == state_of(model)
        && seen != StateView::Unknown
    {
        next.push(model.clone());
    }
    next
}

fn read(model: &Model, seen: Seen<'_>) -> Vec<Model> {
    if !allows(seen.state, state_of(model)) {
        return Vec::new();
    }
    match model {
        None => seen.fence.is_none().then_some(None).into_iter().collect(),
        Some(record) => learn(record, seen.fence).map(Some).into_iter().collect(),
    }
}

/// A prune may delete a record that is not pending (retention decides), or leave it.
fn prune(model: &Model) -> Vec<Model> {
    let deletable = model
        .as_ref()
        .is_some_and(|r| r.state != StateView::Pending);
    let mut next = vec![model.clone()];
    if deletable {
        next.push(None);
    }
    next
}
