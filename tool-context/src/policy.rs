//! Allow / ask / deny policies, decided after validation and before any handler runs.

use async_trait::async_trait;
use tool_protocol::{
    ToolCallContext, ToolCallMode, ToolCallRequest, ToolCallSource, ToolDefinition,
};

use crate::cancellation::CallCancellation;

/// A boxed error from a policy or interaction handler; its text becomes the
/// `TOOL_POLICY_FAILED` message.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a policy decides for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyDecision {
    /// Run the call.
    Allow,
    /// Ask a person (the call's interaction handler); without one the call returns
    /// `TOOL_APPROVAL_REQUIRED`.
    Ask,
    /// Refuse the call with `TOOL_POLICY_DENIED`.
    Deny,
}

/// Everything a policy may look at. Arguments have passed strict validation when the registry
/// validates in strict mode.
#[derive(Debug, Clone, Copy)]
pub struct PolicyRequest<'a> {
    /// The canonical request.
    pub request: &'a ToolCallRequest,
    /// The tool's definition as listed.
    pub definition: &'a ToolDefinition,
    /// The call context (source, mode, session).
    pub context: &'a ToolCallContext,
    /// The decision the tool declared for itself, if any.
    pub tool_default: Option<PolicyDecision>,
    /// Fires when the call is cancelled, times out or the registry shuts down; a policy that
    /// waits on something should stop waiting then.
    pub cancellation: &'a CallCancellation,
}

/// Decides allow / ask / deny for each call. Errors (and panics) become the retryable
/// `TOOL_POLICY_FAILED`.
#[async_trait]
pub trait ToolPolicy: Send + Sync {
    /// The decision for `request`.
    async fn decide(&self, request: PolicyRequest<'_>) -> Result<PolicyDecision, BoxError>;

    /// The decision when it needs no waiting, else `None` (the default) and the registry
    /// awaits [`Self::decide`]. A policy that decides from the request alone answers here and
    /// costs its calls no future; the answer must be the one `decide` would give.
    fn decide_now(&self, request: &PolicyRequest<'_>) -> Option<Result<PolicyDecision, BoxError>> {
        let _ = request;
        None
    }
}

/// What a policy built with [`policy_fn`] gets: an owned copy of the [`PolicyRequest`], so
/// the closure's future can outlive the borrow.
#[derive(Debug, Clone)]
pub struct PolicyCall {
    /// The canonical request.
    pub request: ToolCallRequest,
    /// The tool's definition as listed.
    pub definition: ToolDefinition,
    /// The call context (source, mode, session).
    pub context: ToolCallContext,
    /// The decision the tool declared for itself, if any.
    pub tool_default: Option<PolicyDecision>,
    /// Fires when the call is cancelled, times out or the registry shuts down.
    pub cancellation: CallCancellation,
}

impl From<PolicyRequest<'_>> for PolicyCall {
    fn from(request: PolicyRequest<'_>) -> Self {
        Self {
            request: request.request.clone(),
            definition: request.definition.clone(),
            context: request.context.clone(),
            tool_default: request.tool_default,
            cancellation: request.cancellation.clone(),
        }
    }
}

/// A policy from an async closure (see [`policy_fn`]).
#[derive(Clone, Copy)]
pub struct FnPolicy<F>(F);

impl<F> std::fmt::Debug for FnPolicy<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnPolicy")
    }
}

/// Builds a policy from an async closure over an owned [`PolicyCall`].
///
/// ```
/// use tool_context::{PolicyDecision, ToolRegistry, policy_fn};
/// let registry = ToolRegistry::builder()
///     .policy(policy_fn(|call| async move {
///         Ok(if call.definition.is_read_only() { PolicyDecision::Allow } else { PolicyDecision::Ask })
///     }))
///     .build()
///     .unwrap();
/// # let _ = registry;
/// ```
pub fn policy_fn<F, Fut>(decide: F) -> FnPolicy<F>
where
    F: Fn(PolicyCall) -> Fut + Send + Sync,
    Fut: std::future::Future<Output = Result<PolicyDecision, BoxError>> + Send,
{
    FnPolicy(decide)
}

#[async_trait]
impl<F, Fut> ToolPolicy for FnPolicy<F>
where
    F: Fn(PolicyCall) -> Fut + Send + Sync,
    Fut: std::future::Future<Output = Result<PolicyDecision, BoxError>> + Send,
{
    async fn decide(&self, request: PolicyRequest<'_>) -> Result<PolicyDecision, BoxError> {
        (self.0)(PolicyCall::from(request)).await
    }
}

/// Allows every call. Use only where every caller is trusted.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

#[async_trait]
impl ToolPolicy for AllowAll {
    async fn decide(&self, _request: PolicyRequest<'_>) -> Result<PolicyDecision, BoxError> {
        Ok(PolicyDecision::Allow)
    }

    fn decide_now(&self, _request: &PolicyRequest<'_>) -> Option<Result<PolicyDecision, BoxError>> {
        Some(Ok(PolicyDecision::Allow))
    }
}

/// Answers every call with one fixed decision.
#[derive(Debug, Clone, Copy)]
pub struct FixedPolicy(pub PolicyDecision);

#[async_trait]
impl ToolPolicy for FixedPolicy {
    async fn decide(&self, _request: PolicyRequest<'_>) -> Result<PolicyDecision, BoxError> {
        Ok(self.0)
    }

    fn decide_now(&self, _request: &PolicyRequest<'_>) -> Option<Result<PolicyDecision, BoxError>> {
        Some(Ok(self.0))
    }
}

/// The reference demo policy: allow read-only tools and explicit direct local calls (a person
/// pressing a button or palette entry); everything else, including every model- and
/// MCP-originated mutation, asks.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOnlyOrDirectLocal;

impl ReadOnlyOrDirectLocal {
    /// The decision without the tool's own default.
    pub fn decision(definition: &ToolDefinition, context: &ToolCallContext) -> PolicyDecision {
        let direct_local = context.source == Some(ToolCallSource::Local)
            && context.mode == Some(ToolCallMode::Direct);
        if definition.is_read_only() || direct_local {
            PolicyDecision::Allow
        } else {
            PolicyDecision::Ask
        }
    }
}

#[async_trait]
impl ToolPolicy for ReadOnlyOrDirectLocal {
    async fn decide(&self, request: PolicyRequest<'_>) -> Result<PolicyDecision, BoxError> {
        Ok(Self::decision(request.definition, request.context))
    }

    fn decide_now(&self, request: &PolicyRequest<'_>) -> Option<Result<PolicyDecision, BoxError>> {
        Some(Ok(Self::decision(request.definition, request.context)))
    }
}

/// The registry's default policy: a tool's own declared decision when it has one, otherwise
/// [`ReadOnlyOrDirectLocal`]. Safe by default: an undeclared mutating tool called by a model
/// or an MCP client needs an explicit approval.
#[derive(Debug, Clone, Copy, Default)]
pub struct StandardPolicy;

impl StandardPolicy {
    /// The tool's declared decision, else [`ReadOnlyOrDirectLocal::decision`].
    pub fn decision(request: &PolicyRequest<'_>) -> PolicyDecision {
        request
            .tool_default
            .unwrap_or_else(|| ReadOnlyOrDirectLocal::decision(request.definition, request.context))
    }
}

#[async_trait]
impl ToolPolicy for StandardPolicy {
    async fn decide(&self, request: PolicyRequest<'_>) -> Result<PolicyDecision, BoxError> {
        Ok(Self::decision(&request))
    }

    fn decide_now(&self, request: &PolicyRequest<'_>) -> Option<Result<PolicyDecision, BoxError>> {
        Some(Ok(Self::decision(request)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tool_protocol::ToolAnnotations;

    fn definition(read_only: bool) -> ToolDefinition {
        let mut definition = ToolDefinition::new("t", "d", json!({"type": "object"}));
        definition.annotations = Some(ToolAnnotations {
            read_only_hint: Some(read_only),
            ..ToolAnnotations::default()
        });
        definition
    }

    #[test]
    fn demo_policy_allows_read_only_and_direct_local_only() {
        let writer = definition(false);
        let local_direct = ToolCallContext::new(ToolCallSource::Local, ToolCallMode::Direct);
        assert_eq!(
            ReadOnlyOrDirectLocal::decision(&writer, &local_direct),
            PolicyDecision::Allow
        );
        for context in [
            ToolCallContext::new(ToolCallSource::Model, ToolCallMode::Direct),
            ToolCallContext::new(ToolCallSource::Mcp, ToolCallMode::Direct),
            ToolCallContext::new(ToolCallSource::Local, ToolCallMode::Agent),
            ToolCallContext::default(),
        ] {
            assert_eq!(
                ReadOnlyOrDirectLocal::decision(&writer, &context),
                PolicyDecision::Ask
            );
            assert_eq!(
                ReadOnlyOrDirectLocal::decision(&definition(true), &context),
                PolicyDecision::Allow
            );
        }
    }

    #[tokio::test]
    async fn standard_policy_prefers_the_tool_default() {
        let request = ToolCallRequest::new("t", serde_json::Map::new());
        let writer = definition(false);
        let context = ToolCallContext::default();
        let token = CallCancellation::new();
        let ask = PolicyRequest {
            request: &request,
            definition: &writer,
            context: &context,
            tool_default: None,
            cancellation: &token,
        };
        assert_eq!(
            StandardPolicy.decide(ask).await.unwrap(),
            PolicyDecision::Ask
        );
        let deny = PolicyRequest {
            tool_default: Some(PolicyDecision::Deny),
            ..ask
        };
        assert_eq!(
            StandardPolicy.decide(deny).await.unwrap(),
            PolicyDecision::Deny
        );
        assert_eq!(
            FixedPolicy(PolicyDecision::Deny).decide(ask).await.unwrap(),
            PolicyDecision::Deny
        );
        assert_eq!(AllowAll.decide(ask).await.unwrap(), PolicyDecision::Allow);
    }

    #[tokio::test]
    async fn built_in_policies_decide_now_what_they_decide() {
        let request = ToolCallRequest::new("t", serde_json::Map::new());
        let token = CallCancellation::new();
        let policies: [&dyn ToolPolicy; 5] = [
            &AllowAll,
            &FixedPolicy(PolicyDecision::Deny),
            &FixedPolicy(PolicyDecision::Ask),
            &ReadOnlyOrDirectLocal,
            &StandardPolicy,
        ];
        for read_only in [false, true] {
            let definition = definition(read_only);
            for tool_default in [
                None,
                Some(PolicyDecision::Deny),
                Some(PolicyDecision::Allow),
            ] {
                for context in [
                    ToolCallContext::new(ToolCallSource::Local, ToolCallMode::Direct),
                    ToolCallContext::new(ToolCallSource::Model, ToolCallMode::Agent),
                    ToolCallContext::default(),
                ] {
                    let asked = PolicyRequest {
                        request: &request,
                        definition: &definition,
                        context: &context,
                        tool_default,
                        cancellation: &token,
                    };
                    for policy in policies {
                        let now = policy.decide_now(&asked).map(Result::unwrap);
                        assert_eq!(now, Some(policy.decide(asked).await.unwrap()));
                    }
                }
            }
        }
    }
}
