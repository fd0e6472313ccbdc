//! The bundled Live Code Studio: an axum host that owns one tool registry, the workspace, the
//! approval queue and the trace; the workspace/preview tool catalog; the deterministic local
//! agent; and the embedded browser UI.
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
//!    a state of their own (for example [`surfaces::editor::EditorRoutes`]).
//! 4. [`agent`]: the deterministic local agent (planner, runner, outcomes).
//! 5. [`catalog`]: the workspace/preview tool catalog.
//! 6. [`kit`] and [`seed`]: what the layers above share (JSON errors, preview HTTP responses,
//!    events, the security layer, durable folder writes) and the seed project.
//! 7. [`preview_edits`]: pure source edits of the seed project.
//!
//! The library crates sit below all of them.

pub mod agent;
pub mod catalog;
pub mod cli;
pub mod host;
pub mod kit;
pub mod preview_edits;
pub mod seed;
pub mod surfaces;
