//! The bundled studio and command-line tools: seed workspace, controlled preview edits and the
//! deterministic local agent planner.

pub mod agent;
pub mod preview_edits;
pub mod seed;
