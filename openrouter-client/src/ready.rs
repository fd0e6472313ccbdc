//! A response's tool calls made ready to run: arguments parsed (malformed or non-object JSON
//! rejects the whole response, never coerced to `{}`), canonical names, input-schema issues,
//! and the [`RunEvent::ToolCallReady`] that shows them, with the digest an approval binds to.

use serde_json::{Map, Value};
use tool_protocol::idempotency::tool_call_fingerprint;
use tool_protocol::validate::ValidationIssue;

use crate::codes::{OPENROUTER_INVALID_TOOL_CALL, OPENROUTER_TOOL_CALL_LIMIT};
use crate::decode::ProviderToolCall;
use crate::error::OpenRouterError;
use crate::events::RunEvent;
use crate::toolset::ProviderToolset;

/// Tool calls per run; a response that would go past it runs none of its calls.
pub const MAX_TOOL_CALLS: usize = 12;

/// A tool call whose arguments parsed to a JSON object, with its canonical name (the
/// provider's when it maps to no tool) and its input-schema issues.
pub(crate) struct ParsedCall {
    pub(crate) call: ProviderToolCall,
    pub(crate) name: String,
    pub(crate) arguments: Map<String, Value>,
    pub(crate) issues: Vec<ValidationIssue>,
    /// [`tool_call_fingerprint`] of the name and arguments.
    pub(crate) digest: String,
}

impl ParsedCall {
    /// The call's [`RunEvent::ToolCallReady`].
    pub(crate) fn ready_event(&self, turn: u32, index: usize) -> RunEvent {
        RunEvent::ToolCallReady {
            turn,
            index,
            tool_call_id: self.call.id.clone(),
            name: self.name.clone(),
            digest: self.digest.clone(),
            arguments: self.arguments.clone(),
            issues: self.issues.iter().map(ToString::to_string).collect(),
        }
    }
}

/// Parses every call's arguments and checks them against the tool's input schema before any
/// call runs; malformed or non-object JSON rejects the whole response (never coerced to `{}`).
pub(crate) fn parse_calls(
    calls: &[ProviderToolCall],
    toolset: &ProviderToolset,
) -> Result<Vec<ParsedCall>, OpenRouterError> {
    calls
        .iter()
        .map(|call| {
            let invalid = |what: &str| {
                OpenRouterError::new(
                    OPENROUTER_INVALID_TOOL_CALL,
                    format!(
                        "Provider returned {what} arguments for tool \"{}\".",
                        call.name
                    ),
                )
            };
            match serde_json::from_str::<Value>(&call.arguments) {
                Ok(value @ Value::Object(_)) => {
                    let name = toolset.display_name(&call.name).to_owned();
                    let issues = toolset.check_arguments(&name, &value);
                    let digest = tool_call_fingerprint(&name, &value);
                    let Value::Object(arguments) = value else {
                        unreachable!("matched as an object above")
                    };
                    Ok(ParsedCall {
                        call: call.clone(),
                        name,
                        arguments,
                        issues,
                        digest,
                    })
                }
                Ok(_) => Err(invalid("non-object JSON")),
                Err(_) => Err(invalid("invalid JSON")),
            }
        })
        .collect()
}

/// Rejects a response whose calls would take the run past [`MAX_TOOL_CALLS`].
pub(crate) fn check_call_budget(completed: usize, requested: usize) -> Result<(), OpenRouterError> {
    if completed + requested > MAX_TOOL_CALLS {
        return Err(OpenRouterError::new(
            OPENROUTER_TOOL_CALL_LIMIT,
            format!(
                "Tool loop reached the {MAX_TOOL_CALLS}-call limit: the response asked for {requested} call(s) after {completed} completed; none of them ran."
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_call_budget_allows_exactly_twelve() {
        assert!(check_call_budget(0, 12).is_ok());
        assert!(check_call_budget(11, 1).is_ok());
        let error = check_call_budget(0, 13).unwrap_err();
        assert_eq!(
            (error.code, error.retryable),
            (OPENROUTER_TOOL_CALL_LIMIT, false)
        );
        assert_eq!(
            check_call_budget(12, 1).unwrap_err().code,
            OPENROUTER_TOOL_CALL_LIMIT
        );
    }

    fn toolset() -> ProviderToolset {
        ProviderToolset::new(&[])
    }

    fn call(arguments: &str) -> ProviderToolCall {
        ProviderToolCall {
            id: "c".into(),
            name: "t".into(),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn arguments_must_be_json_objects() {
        assert_eq!(
            parse_calls(&[call(r#"{"a":1}"#)], &toolset()).unwrap()[0].arguments["a"],
            1
        );
        for (arguments, what) in [
            ("[]", "non-object JSON"),
            ("null", "non-object JSON"),
            ("3", "non-object JSON"),
            ("", "invalid JSON"),
            ("{", "invalid JSON"),
        ] {
            let error = parse_calls(&[call(r#"{}"#), call(arguments)], &toolset())
                .err()
                .unwrap();
            assert_eq!(
                (error.code, error.retryable),
                (OPENROUTER_INVALID_TOOL_CALL, true),
                "{arguments}"
            );
            assert_eq!(
                error.message,
                format!("Provider returned {what} arguments for tool \"t\".")
            );
        }
    }
}
