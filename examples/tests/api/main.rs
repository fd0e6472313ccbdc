//! The studio over its HTTP API, its binaries and its command line: one test binary for the
//! API-level suites, each a module named for what it covers.

#[path = "../support/mod.rs"]
pub mod support;

mod agent_quickstart;
mod approval_review;
mod cli_tools;
mod editor_api;
mod editor_saves;
mod folder_upload;
mod lifecycle;
mod mcp_servers_api;
mod prompt_table;
mod security_api;
mod studio_api;
mod studio_durable_save;
mod unsaved_work;
mod web_api;
