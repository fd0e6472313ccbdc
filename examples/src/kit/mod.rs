//! The studio's shared kit: what the host and every surface use (JSON error answers, preview
//! HTTP responses and routes, live events, live stylesheet runs, tool inputs, the preview bridge and viewer registry, the security layer,
//! durable folder writes, private files and the workspace database). It imports neither
//! [`crate::host`] nor any surface.

pub(crate) mod approval_note;
pub mod bridge;
pub mod durable_folder;
pub mod error;
pub mod events;
pub mod preview_http;
pub(crate) mod private_files;
pub(crate) mod provider_codes;
pub(crate) mod repository;
pub(crate) mod responses;
pub mod security;
pub mod stylesheet_run;
pub(crate) mod tool_inputs;
