//! Property: in strict mode, arguments that a schema rejects never reach the policy or the
//! handler, and arguments it accepts always do (jsonschema used directly is the oracle).

mod common;

use common::Counter;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tool_context::{
    BoxError, PolicyDecision, PolicyRequest, Tool, ToolCallOptions, ToolInvocation, ToolPolicy,
    ToolRegistry,
};
use tool_protocol::{ToolCallError, ToolCallRequest, ToolDefinition, codes};

const NAMES: [&str; 5] = ["a", "b", "c", "d", "e"];

struct CountingAllow(Counter);

#[async_trait::async_trait]
impl ToolPolicy for CountingAllow {
    async fn decide(&self, _request: PolicyRequest<'_>) -> Result<PolicyDecision, BoxError> {
        self.0.bump();
        Ok(PolicyDecision::Allow)
    }
}

fn property_schema() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0u64..4).prop_map(|min| json!({"type": "string", "minLength": min})),
        (-5i64..5).prop_map(|min| json!({"type": "integer", "minimum": min})),
        Just(json!({"type": "boolean"})),
        Just(json!({"type": "number"})),
        prop::collection::vec("[a-c]{1,2}", 1..3).prop_map(|values| json!({"enum": values})),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    (prop::collection::vec(property_schema(), 0..=5), prop::collection::vec(any::<bool>(), 5), any::<bool>()).prop_map(
        |(properties, required, closed)| {
            let names = &NAMES[..properties.len()];
            let required: Vec<&str> = names.iter().zip(&required).filter(|(_, yes)| **yes).map(|(name, _)| *name).collect();
            let properties: Map<String, Value> = names.iter().map(|name| (*name).to_owned()).zip(properties).collect();
            json!({"type": "object", "properties": properties, "required": required, "additionalProperties": !closed})
        },
    )
}

fn argument_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        "[a-c]{0,4}".prop_map(Value::from),
        (-8i64..8).prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        (-4.0f64..4.0).prop_map(Value::from),
        Just(Value::Null),
        Just(json!([1])),
    ]
}

fn arguments() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map(
        prop::sample::select(vec!["a", "b", "c", "d", "e", "extra"]),
        argument_value(),
        0..6,
    )
    .prop_map(|entries| {
        entries
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn strict_mode_only_dispatches_schema_valid_arguments(schema in schema(), arguments in arguments()) {
        let expected_valid = jsonschema::validator_for(&schema).unwrap().is_valid(&Value::Object(arguments.clone()));
        let (handler_runs, policy_runs) = (Counter::default(), Counter::default());
        let runs = handler_runs.clone();
        let tool = Tool::new(ToolDefinition::new("t", "t", schema), move |_: Value, _: ToolInvocation| {
            let runs = runs.clone();
            async move {
                runs.bump();
                Ok::<_, ToolCallError>(())
            }
        });
        let registry = ToolRegistry::builder().tool(tool).policy(CountingAllow(policy_runs.clone())).build().unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let result = runtime.block_on(registry.call_tool(ToolCallRequest::new("t", arguments), ToolCallOptions::default()));
        if expected_valid {
            prop_assert!(!result.is_error());
            prop_assert_eq!((policy_runs.get(), handler_runs.get()), (1, 1));
        } else {
            prop_assert_eq!(result.error_code(), Some(codes::TOOL_VALIDATION_FAILED));
            prop_assert!(result.error.unwrap().details.unwrap()["issues"].as_array().is_some_and(|issues| !issues.is_empty()));
            prop_assert_eq!((policy_runs.get(), handler_runs.get()), (0, 0));
        }
    }
}
