//! The sequential specification of one key beneath the store: a compare-and-set register.
//!
//! The recording ([`crate::recording`]) captures every backend call, so the model needs no
//! guessing: a read returns exactly the stored record (or none); a compare-and-set applies iff
//! the stored record's fence is the expected one (none expects no record), and then stores the
//! written record (none deletes). Lease clocks, retention and renewals are decisions the store
//! made above the backend; here they are just the values it wrote.
//!
//! Records and fences are interned to small numbers so a search state is two words.

use std::collections::HashMap;

use crate::history::{FenceView, OpKind, Operation, RecordValue};

/// An interned record value.
pub(crate) type ValueId = u32;
/// An interned fence.
pub(crate) type FenceId = u32;
/// The register: no record, or one record.
pub(crate) type State = Option<ValueId>;

/// What a call did to the register, as the history knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Call {
    /// A read that returned this.
    Observe(State),
    /// A compare-and-set expecting a fence (none: no record) and writing a value (none: delete).
    Cas {
        expected: Option<FenceId>,
        next: State,
        outcome: CasOutcome,
    },
}

/// What a compare-and-set answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CasOutcome {
    /// It applied.
    Applied,
    /// Its precondition did not hold; nothing was written.
    Refused,
    /// Unknown: it applied or it did not.
    Maybe,
}

/// Interns values and fences, and answers which fence a value has.
#[derive(Debug, Default)]
pub(crate) struct Interner<'a> {
    values: HashMap<&'a RecordValue, ValueId>,
    fences: HashMap<&'a FenceView, FenceId>,
    fence_of: Vec<FenceId>,
    shown: Vec<&'a RecordValue>,
}

impl<'a> Interner<'a> {
    pub(crate) fn value(&mut self, value: &'a RecordValue) -> ValueId {
        if let Some(&id) = self.values.get(value) {
            return id;
        }
        let id = ValueId::try_from(self.fence_of.len()).unwrap_or(ValueId::MAX);
        let fence = self.fence(&value.fence);
        self.values.insert(value, id);
        self.fence_of.push(fence);
        self.shown.push(value);
        id
    }

    pub(crate) fn fence(&mut self, fence: &'a FenceView) -> FenceId {
        let next = FenceId::try_from(self.fences.len()).unwrap_or(FenceId::MAX);
        *self.fences.entry(fence).or_insert(next)
    }

    /// The fence of the record in `state` (none for no record).
    pub(crate) fn fence_of(&self, state: State) -> Option<FenceId> {
        state.map(|id| self.fence_of[id as usize])
    }

    /// A readable form of `state`.
    pub(crate) fn show(&self, state: State) -> String {
        state.map_or_else(
            || "no record".to_owned(),
            |id| self.shown[id as usize].to_string(),
        )
    }

    /// The call `op` (a `Get` or `Write`) made, or `None` when it tells nothing (a read that
    /// failed).
    pub(crate) fn call(&mut self, op: &'a Operation) -> Option<Call> {
        match op.kind() {
            OpKind::Get if op.is_ok() => Some(Call::Observe(op.value().map(|v| self.value(v)))),
            OpKind::Write => {
                let outcome = match (op.is_ok(), op.applied()) {
                    (true, Some(true)) => CasOutcome::Applied,
                    (true, _) => CasOutcome::Refused,
                    (false, _) => CasOutcome::Maybe,
                };
                Some(Call::Cas {
                    expected: op.input_fence().map(|f| self.fence(f)),
                    next: op.value().map(|v| self.value(v)),
                    outcome,
                })
            }
            _ => None,
        }
    }
}

impl Call {
    /// Every state the call may leave when it takes effect on `state`; empty when it cannot.
    /// A `Maybe` call's "did not apply" is the search's skip, not a step.
    pub(crate) fn step(self, state: State, interner: &Interner<'_>) -> Option<State> {
        match self {
            Self::Observe(seen) => (seen == state).then_some(state),
            Self::Cas {
                expected,
                next,
                outcome,
            } => {
                let matches = interner.fence_of(state) == expected;
                match outcome {
                    CasOutcome::Applied | CasOutcome::Maybe => matches.then_some(next),
                    CasOutcome::Refused => (!matches).then_some(state),
                }
            }
        }
    }

    /// Whether taking effect never changes the state (a read, a refused write).
    pub(crate) fn is_observation(self) -> bool {
        matches!(
            self,
            Self::Observe(_)
                | Self::Cas {
                    outcome: CasOutcome::Refused,
                    ..
                }
        )
    }
}
