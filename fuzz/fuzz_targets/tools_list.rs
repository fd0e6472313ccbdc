//! The `tools/list` validators: the optional request and each result page a server returns.
//! Whatever they accept re-serialises to JSON they accept again as the same value, an accepted
//! page passes the typed check, and a refusal is a bounded list of issues.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use tool_protocol::validate::check_tool_list_result;
use tool_protocol::{ToolListRequest, parse_tool_list_request, parse_tool_list_result};

fuzz_target!(|data: &[u8]| {
    let Some(input) = common::json_input(data) else {
        return;
    };
    let request = parse_tool_list_request(Some(&input));
    common::assert_issues_bounded(&request);
    let accepted: Option<ToolListRequest> = common::assert_round_trip(&input, |value| {
        parse_tool_list_request(Some(value)).map(|request| request.expect("a present request"))
    });
    if let Some(accepted) = accepted {
        assert_eq!(input["method"], "tools/list", "{accepted:?}");
    }
    common::assert_issues_bounded(&parse_tool_list_result(&input));
    if let Some(page) = common::assert_round_trip(&input, parse_tool_list_result) {
        check_tool_list_result(&page)
            .unwrap_or_else(|issues| panic!("accepted page fails the typed check: {issues:?}"));
        for tool in &page.tools {
            assert!(!tool.name.trim().is_empty(), "accepted a blank tool name");
            assert!(tool.input_schema.is_object());
        }
    }
});
