//! The bundled Live Code Studio: an axum host that owns one tool registry, the workspace, the
//! approval queue and the trace; the workspace/preview tool catalog; the deterministic local
//! agent; and the embedded browser UI.

pub mod agent;
pub mod catalog;
pub mod cli;
pub mod host;
pub mod preview_edits;
pub mod seed;
pub mod surfaces;
