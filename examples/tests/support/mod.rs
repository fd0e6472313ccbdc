//! Setup shared by the studio's integration test binaries. Each binary declares this module
//! `pub` and uses the part it needs; its public items are what the binaries' tests may use.

pub mod browser;
pub mod echo_provider;
pub mod http;
pub mod mcp;
pub mod otel;
pub mod process;
