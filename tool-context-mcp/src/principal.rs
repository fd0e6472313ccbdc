//! Who a request comes from: the [`Principal`] an authentication layer puts into the HTTP
//! request's extensions (the [`oauth`](crate::oauth) layer from a bearer JWT, or a host's own
//! check, such as the studio's per-launch token).
//!
//! The server reads it per request: approval `requestState`s, tasks and durable records are
//! bound to [`Principal::owner_id`], and [`Principal::tools`] narrows what the request may see
//! in `tools/list` and call (through the pipeline's per-call allowlist). A request without a
//! principal (stdio, an unauthenticated host) belongs to the server's configured owner and sees
//! every tool the registry serves.

use std::collections::BTreeSet;

use tool_context::ToolNamePatterns;

/// An authenticated caller. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Principal {
    /// The caller's id at its issuer (a JWT's `sub`).
    pub subject: String,
    /// Who vouched for the subject (a JWT's `iss`); `None` for a host's own credential.
    pub issuer: Option<String>,
    /// The scopes the credential grants.
    pub scopes: BTreeSet<String>,
    /// The tools the caller may see and call.
    pub tools: ToolNamePatterns,
}

impl Principal {
    /// A principal with every tool and no scopes: a host's own credential (the studio's
    /// per-launch token has one fixed owner).
    pub fn new(subject: impl Into<String>) -> Self {
        Self {
            subject: subject.into(),
            issuer: None,
            scopes: BTreeSet::new(),
            tools: ToolNamePatterns::all(),
        }
    }

    /// The same principal, vouched for by `issuer`.
    #[must_use]
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The same principal with `scopes`.
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The same principal, limited to `tools`.
    #[must_use]
    pub fn with_tools(mut self, tools: ToolNamePatterns) -> Self {
        self.tools = tools;
        self
    }

    /// The owner id its approval states, tasks and records are bound to: the subject, qualified
    /// by its issuer so equal subjects of two issuers never meet.
    pub fn owner_id(&self) -> String {
        match &self.issuer {
            Some(issuer) => format!("{issuer}#{}", self.subject),
            None => self.subject.clone(),
        }
    }
}

/// The principal an authentication layer attached to the request, if any.
pub(crate) fn of_request(
    context: &rmcp::service::RequestContext<rmcp::service::RoleServer>,
) -> Option<&Principal> {
    #[cfg(feature = "http")]
    {
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Principal>())
    }
    #[cfg(not(feature = "http"))]
    {
        let _ = context;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_of_two_issuers_never_meet() {
        let a = Principal::new("alice").with_issuer("https://a.example");
        let b = Principal::new("alice").with_issuer("https://b.example");
        assert_ne!(a.owner_id(), b.owner_id());
        assert_eq!(Principal::new("local").owner_id(), "local");
        assert!(Principal::new("local").tools.matches("any.tool"));
    }
}
