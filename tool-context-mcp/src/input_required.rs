//! Approvals on protocol 2026-07-28: multi round-trip requests instead of `elicitation/create`.
//!
//! That revision has no server-to-client requests, so a `tools/call` whose policy asks for a
//! person's approval answers `resultType: "input_required"` with one input request,
//! [`APPROVAL_INPUT_KEY`]: the confirmation form (`elicitation/create`, a form with no field),
//! and a sealed `requestState` ([`crate::request_state`]). The client shows the form and calls
//! again with the same tool and arguments, `inputResponses: {approval: <ElicitResult>}` and the
//! echoed `requestState`. Then:
//!
//! - the state is checked and used up first (altered, expired or replayed states are JSON-RPC
//!   `-32602` errors whose `data.code` says which, and the call does not run), except that a
//!   call carrying an idempotency key whose state was already used goes on without an answer:
//!   a continuation resent after its answer was lost gets the key's recorded result, replayed,
//!   and without a record the call asks again;
//! - `accept` approves and the call runs through the pipeline; `decline`, `cancel` or a missing
//!   or malformed answer deny it (`TOOL_POLICY_DENIED`).
//!
//! A client that did not declare form elicitation in its request capabilities cannot be asked,
//! so the call is denied with the usual explanation (`approvalRoute: "unavailable"`).

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, InputRequest,
    InputRequests, InputRequiredResult, InputResponses,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use tool_context::InteractionOutcome;
use tool_durable_operations::DurableOperationStore;
use tool_protocol::{ToolCallError, ToolCallResult, codes};

use crate::approval::{ClientRound, approves, confirmation_prompt};
use crate::change_preview::with_change;
use crate::discovery::uses_request_lifecycle;
use crate::request_state::{Binding, MCP_REQUEST_STATE_REPLAYED, StateSeal};

/// The key of the approval in `inputRequests` and `inputResponses`.
pub const APPROVAL_INPUT_KEY: &str = "approval";

/// How a call's `requestState` is sealed and used up, and whose call it binds.
pub(crate) struct StateSealing<'a> {
    pub(crate) seal: &'a StateSeal,
    /// Where a redeemed state is recorded as used.
    pub(crate) store: &'a DurableOperationStore,
    pub(crate) owner: &'a str,
}

/// The round of this call, after checking and using up a retry's `requestState`.
pub(crate) async fn client_round(
    params: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    sealing: &StateSealing<'_>,
    keyed: bool,
) -> Result<ClientRound, McpError> {
    let &StateSealing { seal, store, owner } = sealing;
    if !uses_request_lifecycle(context) {
        return Ok(ClientRound::Session);
    }
    if let Some(state) = params.request_state.as_deref() {
        let binding = Binding::new(&params.name, params.arguments.as_ref(), owner);
        match seal.redeem(state, &binding, store).await {
            Ok(()) => {
                return Ok(ClientRound::Answered(answer(
                    params.input_responses.as_ref(),
                )));
            }
            // A keyed continuation sent again after its answer was lost: the first send used
            // the state and recorded the outcome under the key, which answers this one
            // (replayed). A used state approves nothing: without a record the call asks anew.
            Err(error) if keyed && is_replayed(&error) => {}
            Err(error) => return Err(error),
        }
    }
    let answers_forms = context
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none());
    Ok(if answers_forms {
        ClientRound::Ask
    } else {
        ClientRound::Unreachable
    })
}

/// Whether `error` refuses a state that was already used.
fn is_replayed(error: &McpError) -> bool {
    error
        .data
        .as_ref()
        .and_then(|data| data.get("code"))
        .and_then(Value::as_str)
        == Some(MCP_REQUEST_STATE_REPLAYED)
}

/// The approval's answer in a retry: only `accept` of the confirmation approves.
fn answer(responses: Option<&InputResponses>) -> InteractionOutcome {
    let approved = responses
        .and_then(|responses| responses.get(APPROVAL_INPUT_KEY))
        .and_then(|response| serde_json::from_value::<ElicitResult>(response.clone()).ok())
        .is_some_and(|result| approves(result.action, result.content.as_ref()));
    if approved {
        InteractionOutcome::Approved
    } else {
        InteractionOutcome::Denied
    }
}

/// The `input_required` answer to a call that waits for its client's approval.
pub(crate) fn approval_request(
    tool: &str,
    arguments: Option<&serde_json::Map<String, Value>>,
    change: Option<String>,
    sealing: &StateSealing<'_>,
) -> InputRequiredResult {
    let shown = arguments.cloned().map(Value::Object).unwrap_or(json!({}));
    let prompt = confirmation_prompt(tool, &shown);
    let form = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: with_change(prompt.message, change),
        requested_schema: prompt.requested_schema,
    };
    let mut requests = InputRequests::new();
    requests.insert(
        APPROVAL_INPUT_KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(form)),
    );
    let state = sealing
        .seal
        .seal(&Binding::new(tool, arguments, sealing.owner));
    InputRequiredResult::new(Some(requests), Some(state))
}

/// What the host's observer hears about a call that ended by asking its client: it did not
/// run, and runs only when the client retries with an approval.
pub(crate) fn awaiting_client(tool: &str) -> ToolCallResult {
    ToolCallResult::failure(
        ToolCallError::new(
            codes::TOOL_APPROVAL_REQUIRED,
            format!(
                "Tool \"{tool}\" waits for the MCP client's approval (input_required); it runs when the client retries with the answer."
            ),
        )
        .with_retryable(true),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn responses(value: Value) -> InputResponses {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn only_an_accept_approves() {
        let accept = responses(json!({APPROVAL_INPUT_KEY: {"action": "accept", "content": {}}}));
        assert_eq!(answer(Some(&accept)), InteractionOutcome::Approved);
        let bare = responses(json!({APPROVAL_INPUT_KEY: {"action": "accept"}}));
        assert_eq!(answer(Some(&bare)), InteractionOutcome::Approved);
        for denied in [
            json!({APPROVAL_INPUT_KEY: {"action": "decline"}}),
            json!({APPROVAL_INPUT_KEY: {"action": "cancel"}}),
            json!({APPROVAL_INPUT_KEY: {"action": "maybe"}}),
            json!({"other": {"action": "accept"}}),
        ] {
            assert_eq!(answer(Some(&responses(denied))), InteractionOutcome::Denied);
        }
        assert_eq!(answer(None), InteractionOutcome::Denied);
    }
}
