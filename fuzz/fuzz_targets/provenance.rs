//! The provenance parser (CONTRACT 2.3): a durable record or an MCP client hands back
//! provenance it claims the pipeline wrote. Whatever it accepts re-serialises to JSON it
//! accepts again as the same value, satisfies the documented field rules, and every refusal
//! names the path it was given.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use tool_protocol::event::{is_canonical_owner_id, parse_tool_execution_provenance};

/// Largest integer a JavaScript consumer reads exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

fuzz_target!(|data: &[u8]| {
    let Some(input) = common::json_input(data) else {
        return;
    };
    let parse = |value: &serde_json::Value| parse_tool_execution_provenance(value, "provenance");
    if let Err(message) = parse(&input) {
        assert!(
            message.starts_with("provenance"),
            "refusal {message:?} does not name the path"
        );
    }
    let Some(provenance) = common::assert_round_trip(&input, parse) else {
        return;
    };
    assert!(
        is_canonical_owner_id(&provenance.owner_id),
        "accepted owner id {:?}",
        provenance.owner_id
    );
    let wire = serde_json::to_value(&provenance).expect("serialises");
    for field in [
        "elapsedMs",
        "usedOutputBytes",
        "maxOutputBytes",
        "timeoutMs",
    ] {
        if let Some(number) = wire.get(field) {
            let number = number
                .as_u64()
                .unwrap_or_else(|| panic!("{field} {number} is not a non-negative integer"));
            assert!(
                number <= MAX_SAFE_INTEGER,
                "{field} {number} is not a safe integer"
            );
        }
    }
});
