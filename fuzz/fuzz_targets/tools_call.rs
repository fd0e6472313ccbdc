//! The `tools/call` validators: the request a model or MCP client sends and the result a
//! server returns. Whatever they accept re-serialises to JSON they accept again as the same
//! value, and a refusal is a bounded list of issues.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use tool_protocol::validate::MAX_VALIDATION_DEPTH;
use tool_protocol::{parse_tool_call_request, parse_tool_call_result};

fuzz_target!(|data: &[u8]| {
    let Some(input) = common::json_input(data) else {
        return;
    };
    common::assert_issues_bounded(&parse_tool_call_request(&input));
    if let Some(request) = common::assert_round_trip(&input, parse_tool_call_request) {
        assert!(
            !request.name.trim().is_empty(),
            "accepted a blank tool name"
        );
        assert_eq!(input["method"], "tools/call");
        if let Some(arguments) = &request.arguments {
            let arguments = serde_json::Value::Object(arguments.clone());
            assert!(!tool_protocol::validate::exceeds_depth(
                &arguments,
                MAX_VALIDATION_DEPTH
            ));
        }
    }
    common::assert_issues_bounded(&parse_tool_call_result(&input));
    if let Some(result) = common::assert_round_trip(&input, parse_tool_call_result) {
        let wire = serde_json::to_value(&result).expect("serialises");
        // `isError` is written only for a failure.
        assert_eq!(
            wire.get("isError").and_then(serde_json::Value::as_bool),
            result.error.is_some().then_some(true),
            "isError disagrees with error in {wire}"
        );
    }
});
