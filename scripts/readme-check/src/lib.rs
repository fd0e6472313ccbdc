//! Every library crate's README, as docs: `cargo test --doc` here compiles (and runs) each README
//! code block against the crates' normal dependencies and default features only, as in a user's
//! crate. See Cargo.toml for why this is its own crate.

#[doc = include_str!("../../../tool-protocol/README.md")]
pub mod tool_protocol_readme {}

#[doc = include_str!("../../../tool-durable-operations/README.md")]
pub mod tool_durable_operations_readme {}

#[doc = include_str!("../../../tool-context/README.md")]
pub mod tool_context_readme {}

#[doc = include_str!("../../../tool-context-macros/README.md")]
pub mod tool_context_macros_readme {}

#[doc = include_str!("../../../tool-context-mcp/README.md")]
pub mod tool_context_mcp_readme {}

#[doc = include_str!("../../../live-code-editor/README.md")]
pub mod live_code_editor_readme {}

#[doc = include_str!("../../../openrouter-client/README.md")]
pub mod openrouter_tool_loop_readme {}

#[doc = include_str!("../../../GETTING_STARTED.md")]
pub mod getting_started {}
