//! The studio as an MCP server (streamable HTTP and stdio), driven by rmcp, raw JSON-RPC and
//! independent Node and Python peers: one test binary for the MCP suites.

#[path = "../support/mod.rs"]
pub mod support;

mod editor_mcp;
mod mcp_2026;
mod mcp_gateway;
mod mcp_http;
mod mcp_node;
mod mcp_python;
mod mcp_stdio;
mod tool_host;
