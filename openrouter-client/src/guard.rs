//! The repeated-failure guard: the same failing call (tool, arguments, error code) three times
//! in one run ends the run instead of burning the remaining budget.

use serde_json::{Map, Value};

/// Identical failures of one call that end the run.
pub const MAX_IDENTICAL_TOOL_FAILURES: u32 = 3;

/// Counts identical failing calls of one run (at most the run's call budget of entries).
#[derive(Debug, Default)]
pub(crate) struct FailureGuard {
    failures: Vec<(String, Map<String, Value>, String, u32)>,
}

impl FailureGuard {
    /// Records a failure and returns how often this exact failure has now happened.
    /// Arguments compare as JSON values, so key order does not matter.
    pub(crate) fn record(&mut self, name: &str, arguments: &Map<String, Value>, code: &str) -> u32 {
        let existing = self
            .failures
            .iter_mut()
            .find(|(n, a, c, _)| n == name && a == arguments && c == code);
        match existing {
            Some((_, _, _, count)) => {
                *count += 1;
                *count
            }
            None => {
                self.failures
                    .push((name.to_owned(), arguments.clone(), code.to_owned(), 1));
                1
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn counts_only_identical_failures() {
        let mut guard = FailureGuard::default();
        assert_eq!(guard.record("t", &args(json!({"a": 1, "b": 2})), "E"), 1);
        assert_eq!(
            guard.record("t", &args(json!({"b": 2, "a": 1})), "E"),
            2,
            "key order is irrelevant"
        );
        assert_eq!(guard.record("t", &args(json!({"a": 1, "b": 3})), "E"), 1);
        assert_eq!(guard.record("t", &args(json!({"a": 1, "b": 2})), "F"), 1);
        assert_eq!(guard.record("u", &args(json!({"a": 1, "b": 2})), "E"), 1);
        assert_eq!(
            guard.record("t", &args(json!({"a": 1, "b": 2})), "E"),
            MAX_IDENTICAL_TOOL_FAILURES
        );
    }
}
