//! Streamable HTTP sessions bound to the principal that opened them (the MCP security best
//! practice "bind session IDs to user-specific information"): a session id is not a credential,
//! so another principal presenting it (a leaked or guessed id) is answered as if the session did
//! not exist, and never reads the owner's stream of approval prompts and results.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

/// Most sessions remembered; the oldest binding is forgotten first (its session then answers
/// `404`, and the client starts a new one, as the transport specifies).
pub const MAX_BOUND_SESSIONS: usize = 65_536;

/// Which principal opened each session.
#[derive(Debug, Default)]
pub(crate) struct SessionOwners {
    inner: Mutex<Bindings>,
}

#[derive(Debug, Default)]
struct Bindings {
    owners: HashMap<String, String>,
    order: VecDeque<String>,
}

/// What a request presenting a session may do.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SessionCheck {
    /// No session header: a new session may start.
    NoSession,
    /// The session was opened by this principal.
    Owned,
    /// Unknown here, or opened by another principal.
    Refused,
}

impl SessionOwners {
    pub(crate) fn check(&self, session: Option<&str>, owner: &str) -> SessionCheck {
        let Some(session) = session else {
            return SessionCheck::NoSession;
        };
        match self.lock().owners.get(session) {
            Some(opened_by) if opened_by == owner => SessionCheck::Owned,
            _ => SessionCheck::Refused,
        }
    }

    pub(crate) fn bind(&self, session: &str, owner: &str) {
        let mut bindings = self.lock();
        if bindings
            .owners
            .insert(session.to_owned(), owner.to_owned())
            .is_none()
        {
            bindings.order.push_back(session.to_owned());
        }
        while bindings.order.len() > MAX_BOUND_SESSIONS {
            if let Some(oldest) = bindings.order.pop_front() {
                bindings.owners.remove(&oldest);
            }
        }
    }

    pub(crate) fn forget(&self, session: &str) {
        let mut bindings = self.lock();
        if bindings.owners.remove(session).is_some() {
            bindings.order.retain(|bound| bound != session);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Bindings> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_answers_only_the_principal_that_opened_it() {
        let owners = SessionOwners::default();
        owners.bind("s1", "alice");
        assert_eq!(owners.check(Some("s1"), "alice"), SessionCheck::Owned);
        assert_eq!(owners.check(Some("s1"), "mallory"), SessionCheck::Refused);
        assert_eq!(owners.check(Some("s2"), "alice"), SessionCheck::Refused);
        assert_eq!(owners.check(None, "mallory"), SessionCheck::NoSession);
        owners.forget("s1");
        assert_eq!(owners.check(Some("s1"), "alice"), SessionCheck::Refused);
    }

    #[test]
    fn the_oldest_binding_goes_first_past_the_bound() {
        let owners = SessionOwners::default();
        for index in 0..=MAX_BOUND_SESSIONS {
            owners.bind(&format!("s{index}"), "alice");
        }
        assert_eq!(owners.check(Some("s0"), "alice"), SessionCheck::Refused);
        assert_eq!(owners.check(Some("s1"), "alice"), SessionCheck::Owned);
        let last = format!("s{MAX_BOUND_SESSIONS}");
        assert_eq!(owners.check(Some(&last), "alice"), SessionCheck::Owned);
    }
}
