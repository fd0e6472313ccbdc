//! Invariants shared by the JSON validator targets.
// Each target uses the helpers it needs.
#![allow(dead_code)]

use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tool_protocol::ValidationIssue;
use tool_protocol::validate::MAX_ISSUES;

/// The fuzz input as a JSON value; `None` for bytes that are not JSON text (the transports
/// reject those before any validator runs).
pub fn json_input(data: &[u8]) -> Option<Value> {
    serde_json::from_slice(data).ok()
}

/// A validator's verdict must agree with the type's `Deserialize` (documented as accepting
/// exactly what the validator accepts), and an accepted value must re-serialise to JSON the
/// validator accepts again as the same value, both as a value and through JSON text.
pub fn assert_round_trip<T, E>(input: &Value, parse: impl Fn(&Value) -> Result<T, E>) -> Option<T>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
    E: Debug,
{
    let verdict = parse(input);
    let deserialized = serde_json::from_value::<T>(input.clone());
    assert_eq!(
        verdict.is_ok(),
        deserialized.is_ok(),
        "validator and Deserialize disagree on {input}: {verdict:?} vs {deserialized:?}"
    );
    let accepted = verdict.ok()?;
    assert_eq!(Some(&accepted), deserialized.ok().as_ref());
    let reserialized = serde_json::to_value(&accepted).expect("an accepted value serialises");
    let again = parse(&reserialized)
        .unwrap_or_else(|error| panic!("re-serialised {reserialized} is refused: {error:?}"));
    assert_eq!(
        again, accepted,
        "re-parsing {reserialized} changed the value"
    );
    assert_eq!(
        serde_json::to_value(&again).expect("serialises"),
        reserialized,
        "serialisation is not stable"
    );
    let text = serde_json::to_string(&accepted).expect("serialises to text");
    let from_text: Value = serde_json::from_str(&text)
        .unwrap_or_else(|error| panic!("serialised text {text} is not JSON again: {error}"));
    let again = parse(&from_text)
        .unwrap_or_else(|error| panic!("re-serialised text {text} is refused: {error:?}"));
    assert_eq!(
        again, accepted,
        "re-parsing the text {text} changed the value"
    );
    Some(accepted)
}

/// A refusal carries at least one issue, at most the documented bound plus the note that
/// says the rest was omitted, each at a JSON pointer.
pub fn assert_issues_bounded<T: Debug>(verdict: &Result<T, Vec<ValidationIssue>>) {
    let Err(issues) = verdict else { return };
    assert!(!issues.is_empty(), "a refusal without issues");
    assert!(
        issues.len() <= MAX_ISSUES + 1,
        "{} issues exceed the bound of {MAX_ISSUES}",
        issues.len()
    );
    for issue in issues {
        assert!(
            issue.pointer.is_empty() || issue.pointer.starts_with('/'),
            "issue pointer {:?} is not a JSON pointer",
            issue.pointer
        );
        assert!(
            !issue.message.trim().is_empty(),
            "an issue without a message"
        );
    }
}
