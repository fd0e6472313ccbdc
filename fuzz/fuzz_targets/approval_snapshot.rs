//! The approval-snapshot parser (CONTRACT 2.4 `isToolApprovalSnapshot`): a browser or MCP
//! client hands back the approval it was shown. Whatever the parser accepts re-serialises to
//! JSON it accepts again as the same value, and a snapshot the approval queue builds from a
//! valid `tools/call` request is one the parser accepts, unless an argument name is blank:
//! CONTRACT 2.4 builds `argumentKeys` from `Object.keys(arguments)` yet requires non-blank keys,
//! so such a snapshot is refused, naming `/argumentKeys`.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use tool_protocol::approval::ApprovalCall;
use tool_protocol::{ToolApprovalSnapshot, parse_tool_approval_snapshot, parse_tool_call_request};

fuzz_target!(|data: &[u8]| {
    let Some(input) = common::json_input(data) else {
        return;
    };
    common::assert_issues_bounded(&parse_tool_approval_snapshot(&input));
    if let Some(snapshot) = common::assert_round_trip(&input, parse_tool_approval_snapshot) {
        assert_eq!(snapshot.method, "tools/call");
        assert!(!snapshot.id.trim().is_empty() && !snapshot.name.trim().is_empty());
        assert!(
            snapshot
                .argument_keys
                .iter()
                .all(|key| !key.trim().is_empty())
        );
    }
    if let Ok(request) = parse_tool_call_request(&input) {
        assert_built_snapshot_is_accepted(&request);
    }
});

/// The snapshot built for an accepted request (every argument named safe, so the preview is
/// exercised too) passes the parser unchanged.
fn assert_built_snapshot_is_accepted(request: &tool_protocol::ToolCallRequest) {
    let safe_names: Vec<String> = request
        .arguments
        .iter()
        .flat_map(|arguments| arguments.keys().cloned())
        .collect();
    let built = ToolApprovalSnapshot::new(
        "approval-1".to_owned(),
        ApprovalCall {
            tool_call_id: request.id.clone(),
            name: &request.name,
            arguments: request.arguments.as_ref(),
            ..ApprovalCall::default()
        },
        &safe_names,
        0,
    );
    let wire = serde_json::to_value(&built).expect("a snapshot serialises");
    if built.argument_keys.iter().any(|key| key.trim().is_empty()) {
        let issues = parse_tool_approval_snapshot(&wire)
            .expect_err("a blank argument key is refused (CONTRACT 2.4)");
        assert!(
            issues
                .iter()
                .any(|issue| issue.pointer.starts_with("/argumentKeys")),
            "the refusal names the blank key: {issues:?}"
        );
        return;
    }
    let parsed = parse_tool_approval_snapshot(&wire).unwrap_or_else(|issues| {
        panic!("the snapshot built for an accepted request is refused: {wire} {issues:?}")
    });
    assert_eq!(parsed, built);
}
