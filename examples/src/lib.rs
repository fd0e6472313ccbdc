//! The bundled Live Code Studio: an axum host that owns one tool registry, the approval queue
//! and the trace; three tool surfaces (the workspace, the Live Code Editor and web coding); the
//! deterministic local agent; and the embedded browser UI.
//!
//! # Layering
//!
//! Imports flow one way, from the composition root down (`tests/layering.rs` checks it, and that
//! no import cycle spans two folders):
//!
//! 1. [`cli`]: the command-line bridges (drive a studio in-process or over HTTP).
//! 2. [`host`]: the composition root: start-up, router assembly and the shared state.
//! 3. [`surfaces`]: the workspace, editor and web surfaces, each owning its tools, routes,
//!    planner and preview clock; a surface's routes take what they need from the host through
//!    a state of their own (for example [`surfaces::editor::EditorRoutes`]), and its preview
//!    is served by the one set of routes in [`kit::preview_http::serving`].
//! 4. [`agent`]: the deterministic local agent (planner, runner, outcomes).
//! 5. [`kit`] and [`seed`]: what the layers above share (JSON errors, preview HTTP routes,
//!    events, tool inputs, the security layer, durable folder writes) and the seed project.
//! 6. [`preview_edits`]: pure source edits of the seed project.
//!
//! The library crates sit below all of them.

#![warn(unreachable_pub)]

pub mod agent;
pub mod cli;
pub mod host;
pub mod kit;
pub mod preview_edits;
pub mod seed;
pub mod surfaces;
