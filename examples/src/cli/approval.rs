//! Who approves a call the policy asks about: `--approve`, a y/N prompt on the terminal, or
//! nobody (denied).

use std::io::{BufRead, IsTerminal, Write};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;
use tool_context::{BoxError, InteractionOutcome, InteractionRequest, ToolInteraction};

/// How a CLI call answers an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalMode {
    /// `--approve` was given for this call.
    Granted,
    /// stdin is a terminal: ask the person (y/N on stderr/stdin).
    Prompt,
    /// Not interactive and not approved: deny.
    Refuse,
}

impl ApprovalMode {
    /// The mode of one call: `--approve` wins, then an interactive stdin prompts, else refuse.
    pub fn for_call(approve: bool) -> Self {
        if approve {
            Self::Granted
        } else if std::io::stdin().is_terminal() {
            Self::Prompt
        } else {
            Self::Refuse
        }
    }

    /// Decides about calling `name` with arguments named `argument_names` (values are never
    /// shown: they may be large or sensitive).
    pub async fn decide(self, name: &str, argument_names: Vec<String>) -> InteractionOutcome {
        match self {
            Self::Granted => InteractionOutcome::Approved,
            Self::Refuse => InteractionOutcome::Denied,
            Self::Prompt => {
                let question = format!(
                    "Allow {name} ({})? [y/N] ",
                    if argument_names.is_empty() {
                        "no arguments".to_owned()
                    } else {
                        argument_names.join(", ")
                    }
                );
                tokio::task::spawn_blocking(move || ask_terminal(&question))
                    .await
                    .unwrap_or(InteractionOutcome::Denied)
            }
        }
    }
}

/// Asks on stderr and reads one line from stdin; only `y`/`yes` approves.
fn ask_terminal(question: &str) -> InteractionOutcome {
    let mut stderr = std::io::stderr();
    let _ = stderr.write_all(question.as_bytes());
    let _ = stderr.flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return InteractionOutcome::Denied;
    }
    if is_yes(&answer) {
        InteractionOutcome::Approved
    } else {
        InteractionOutcome::Denied
    }
}

/// Whether a typed answer approves (anything else, including an empty line, denies).
fn is_yes(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// The per-call [`ToolInteraction`] of the CLI.
#[derive(Debug, Clone, Copy)]
pub struct CliApproval(pub ApprovalMode);

#[async_trait]
impl ToolInteraction for CliApproval {
    async fn interact(
        &self,
        request: &InteractionRequest,
        cancellation: &CancellationToken,
    ) -> Result<InteractionOutcome, BoxError> {
        let names = request.arguments.keys().cloned().collect();
        tokio::select! {
            outcome = self.0.decide(&request.name, names) => Ok(outcome),
            () = cancellation.cancelled() => Ok(InteractionOutcome::Denied),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_yes_approves() {
        for answer in ["y\n", "Y", " yes \n", "YES"] {
            assert!(is_yes(answer), "{answer:?}");
        }
        for answer in ["", "\n", "n", "no", "yep", "y es"] {
            assert!(!is_yes(answer), "{answer:?}");
        }
    }

    #[tokio::test]
    async fn granted_and_refused_modes_answer_without_asking() {
        assert_eq!(
            ApprovalMode::Granted.decide("t", vec![]).await,
            InteractionOutcome::Approved
        );
        assert_eq!(
            ApprovalMode::Refuse.decide("t", vec![]).await,
            InteractionOutcome::Denied
        );
        assert_eq!(ApprovalMode::for_call(true), ApprovalMode::Granted);
    }
}
