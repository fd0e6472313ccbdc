//! The fleet campaign's checker: the clients' attempts, the answers the proxy swallowed and the
//! ledger's rows, key by key.
//!
//! - `DoubleExecution`: a key has more than one ledger row (its append ran twice).
//! - `LostSuccess`: a client was told "appended" and the ledger has no row.
//! - `AnswerMismatch`: two successes of one key differ (a swallowed first answer included):
//!   every retry must get the first answer.
//! - `NotReplayed`: a success after an earlier success of the key is not marked as a replay.
//! - `Conflict`: the same key and arguments were refused as another call's.
//! - `FailedButApplied`: a call ended in an error that says nothing happened (any code but the
//!   ones meaning "may have happened") and the ledger has its row.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::client::{Attempt, Outcome, interpret, messages_in};
use super::proxy::DroppedAnswer;

/// One broken promise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// What broke.
    pub kind: &'static str,
    /// The call's key.
    pub key: String,
    /// What was seen.
    pub detail: String,
}

/// What the checker read and found.
#[derive(Debug, Default, Serialize)]
pub struct Verdict {
    /// Calls (keys) the clients made.
    pub keys: usize,
    /// Attempts sent (first sends, retries and duplicates).
    pub attempts: usize,
    /// Keys that ended in a success.
    pub succeeded: usize,
    /// Keys whose final error says the effect may have happened (`TOOL_IDEMPOTENCY_UNKNOWN`:
    /// a host died mid-call; `TOOL_EXECUTION_UNKNOWN`: the ledger failed mid-statement).
    pub unknown: usize,
    /// Keys that ended in another error.
    pub failed: usize,
    /// Keys still unanswered when the clients stopped.
    pub unfinished: usize,
    /// Answers marked as replays.
    pub replays: usize,
    /// Rows in the ledger written by the campaign's keys.
    pub rows: usize,
    /// Broken promises.
    pub violations: Vec<Violation>,
}

/// Checks every key. `rows` counts the ledger's rows by entry (the entry is the key).
pub fn check(
    attempts: &[Attempt],
    dropped: &[DroppedAnswer],
    rows: &HashMap<String, usize>,
) -> Verdict {
    let mut by_key: BTreeMap<&str, Vec<&Attempt>> = BTreeMap::new();
    for attempt in attempts {
        by_key.entry(&attempt.key).or_default().push(attempt);
    }
    let mut swallowed: HashMap<&str, Vec<Attempt>> = HashMap::new();
    for answer in dropped {
        if let Some(message) = answered_message(&answer.body) {
            let mut attempt = interpret(&answer.key, &message);
            attempt.time_ms = answer.time_ms;
            swallowed.entry(&answer.key).or_default().push(attempt);
        }
    }
    let mut verdict = Verdict {
        keys: by_key.len(),
        attempts: attempts.len(),
        replays: attempts.iter().filter(|a| a.replayed).count(),
        rows: rows.values().sum(),
        ..Verdict::default()
    };
    for (key, tries) in &by_key {
        let lost = swallowed.get(key).map_or(&[][..], Vec::as_slice);
        let written = rows.get(*key).copied().unwrap_or(0);
        tally(&mut verdict, tries);
        check_key(key, tries, lost, written, &mut verdict.violations);
    }
    verdict
}

fn tally(verdict: &mut Verdict, tries: &[&Attempt]) {
    let last = tries.iter().rev().find(|attempt| !attempt.duplicate);
    match last {
        Some(attempt) if attempt.outcome == Outcome::Ok => verdict.succeeded += 1,
        Some(attempt) if attempt.is_final() && !says_not_applied(attempt) => {
            verdict.unknown += 1;
        }
        Some(attempt) if attempt.is_final() => verdict.failed += 1,
        _ => verdict.unfinished += 1,
    }
}

fn check_key(
    key: &str,
    tries: &[&Attempt],
    swallowed: &[Attempt],
    written: usize,
    out: &mut Vec<Violation>,
) {
    let mut violation = |kind, detail: String| {
        out.push(Violation {
            kind,
            key: key.to_owned(),
            detail,
        });
    };
    if written > 1 {
        violation("DoubleExecution", format!("{written} ledger rows"));
    }
    let successes: Vec<&Attempt> = tries
        .iter()
        .copied()
        .filter(|attempt| attempt.outcome == Outcome::Ok)
        .collect();
    if !successes.is_empty() && written == 0 {
        violation("LostSuccess", "told appended, no ledger row".to_owned());
    }
    // In the order the answers were given: a swallowed one when the proxy swallowed it (before
    // the client saw its connection cut), the others when the client read them.
    let mut ordered: Vec<&Attempt> = swallowed
        .iter()
        .filter(|attempt| attempt.outcome == Outcome::Ok)
        .chain(successes.iter().copied())
        .collect();
    ordered.sort_by_key(|attempt| attempt.time_ms);
    let mut first: Option<&Attempt> = None;
    for success in ordered {
        match first {
            None => first = Some(success),
            Some(first) => {
                if success.answer != first.answer {
                    violation(
                        "AnswerMismatch",
                        format!("first {:?}, then {:?}", first.answer, success.answer),
                    );
                }
                if !success.replayed {
                    violation(
                        "NotReplayed",
                        format!("attempt {} answered anew", success.attempt),
                    );
                }
            }
        }
    }
    let last = tries.iter().rev().find(|attempt| !attempt.duplicate);
    if let Some(failed) = last.filter(|attempt| says_not_applied(attempt))
        && written > 0
    {
        violation(
            "FailedButApplied",
            format!("told {:?}, the ledger has its row", failed.code),
        );
    }
    if tries
        .iter()
        .any(|attempt| attempt.code.as_deref() == Some("TOOL_IDEMPOTENCY_CONFLICT"))
    {
        violation(
            "Conflict",
            "the same call was refused as another".to_owned(),
        );
    }
}

/// Codes after which the effect may have happened (the registry's ambiguous outcomes).
const MAYBE_APPLIED: [&str; 5] = [
    "TOOL_IDEMPOTENCY_UNKNOWN",
    "TOOL_EXECUTION_UNKNOWN",
    "TOOL_EXECUTION_ABORTED",
    "TOOL_TIMEOUT",
    "TOOL_CANCELLED",
];

/// A final error that claims the call did not happen.
fn says_not_applied(attempt: &Attempt) -> bool {
    attempt.outcome == Outcome::Error
        && attempt.is_final()
        && !attempt
            .code
            .as_deref()
            .is_some_and(|code| MAYBE_APPLIED.contains(&code))
}

/// The JSON-RPC response in a swallowed body (JSON or SSE).
fn answered_message(body: &str) -> Option<serde_json::Value> {
    messages_in(body)
        .into_iter()
        .find(|message| message.get("result").is_some() || message.get("error").is_some())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn attempt(
        key: &str,
        n: u32,
        outcome: Outcome,
        answer: Option<Value>,
        replayed: bool,
    ) -> Attempt {
        Attempt {
            key: key.to_owned(),
            attempt: n,
            duplicate: false,
            time_ms: u64::from(n) * 10,
            outcome,
            code: None,
            retryable: outcome == Outcome::Lost,
            replayed,
            answer,
            detail: None,
        }
    }

    fn kinds(verdict: &Verdict) -> Vec<&'static str> {
        verdict.violations.iter().map(|v| v.kind).collect()
    }

    fn swallowed(key: &str, entries: i64) -> DroppedAnswer {
        let body = json!({"jsonrpc": "2.0", "id": 7, "result": {
            "content": [], "isError": false, "structuredContent": {"entries": entries}}});
        DroppedAnswer {
            time_ms: 5,
            key: key.to_owned(),
            status: 200,
            body: format!("event: message\ndata: {body}\n\n"),
        }
    }

    #[test]
    fn a_lost_answer_replayed_once_applied_is_clean() {
        let attempts = [
            attempt("k", 1, Outcome::Lost, None, false),
            attempt("k", 2, Outcome::Ok, Some(json!({"entries": 3})), true),
        ];
        let rows = HashMap::from([("k".to_owned(), 1)]);
        let verdict = check(&attempts, &[swallowed("k", 3)], &rows);
        assert!(verdict.violations.is_empty(), "{:?}", verdict.violations);
        assert_eq!((verdict.succeeded, verdict.replays), (1, 1));
    }

    #[test]
    fn a_retry_that_ran_again_is_caught_three_ways() {
        let attempts = [
            attempt("k", 1, Outcome::Lost, None, false),
            attempt("k", 2, Outcome::Ok, Some(json!({"entries": 4})), false),
        ];
        let rows = HashMap::from([("k".to_owned(), 2)]);
        let verdict = check(&attempts, &[swallowed("k", 3)], &rows);
        assert_eq!(
            kinds(&verdict),
            ["DoubleExecution", "AnswerMismatch", "NotReplayed"]
        );
    }

    #[test]
    fn a_swallowed_duplicate_after_the_first_success_is_judged_in_its_place() {
        let mut duplicate = attempt("k", 2, Outcome::Lost, None, false);
        duplicate.duplicate = true;
        let first = attempt("k", 1, Outcome::Ok, Some(json!({"entries": 3})), false);
        let late = |replayed: bool| {
            let mut late = swallowed("k", 3);
            late.time_ms = 15;
            if replayed {
                late.body = late.body.replace(
                    "\"isError\":false",
                    "\"isError\":false,\"_meta\":{\"tool-context/replay\":{\"replayed\":true}}",
                );
            }
            late
        };
        let rows = HashMap::from([("k".to_owned(), 1)]);
        let verdict = check(&[first.clone(), duplicate], &[late(true)], &rows);
        assert!(verdict.violations.is_empty(), "{:?}", verdict.violations);
        // The same swallowed duplicate without the replay mark ran anew.
        let verdict = check(&[first], &[late(false)], &rows);
        assert_eq!(kinds(&verdict), ["NotReplayed"]);
    }

    #[test]
    fn a_failure_whose_row_exists_is_caught_and_an_unknown_one_is_not() {
        let failed = |code: &str| {
            let mut failed = attempt("k", 1, Outcome::Error, None, false);
            failed.code = Some(code.to_owned());
            failed
        };
        let rows = HashMap::from([("k".to_owned(), 1)]);
        let verdict = check(&[failed("LEDGER_UNAVAILABLE")], &[], &rows);
        assert_eq!(kinds(&verdict), ["FailedButApplied"]);
        let verdict = check(&[failed("TOOL_EXECUTION_UNKNOWN")], &[], &rows);
        assert!(verdict.violations.is_empty());
        assert_eq!((verdict.unknown, verdict.failed), (1, 0));
    }

    #[test]
    fn a_success_without_a_row_is_a_lost_success() {
        let attempts = [attempt(
            "k",
            1,
            Outcome::Ok,
            Some(json!({"entries": 1})),
            false,
        )];
        let verdict = check(&attempts, &[], &HashMap::new());
        assert_eq!(kinds(&verdict), ["LostSuccess"]);
    }

    #[test]
    fn unknown_and_unfinished_keys_are_counted_not_judged() {
        let mut unknown = attempt("u", 2, Outcome::Error, None, false);
        unknown.code = Some("TOOL_IDEMPOTENCY_UNKNOWN".to_owned());
        let attempts = [
            attempt("u", 1, Outcome::Lost, None, false),
            unknown,
            attempt("open", 1, Outcome::Lost, None, false),
        ];
        let rows = HashMap::from([("u".to_owned(), 1)]);
        let verdict = check(&attempts, &[], &rows);
        assert!(verdict.violations.is_empty());
        assert_eq!((verdict.unknown, verdict.unfinished), (1, 1));
    }
}
