//! The deterministic local agent (no model, no network): the plan vocabulary ([`plan`]) and what
//! every surface's planner shares (reading a prompt, judging what it understood, checking its
//! targets, Design Mode CSS edits), typed run outcomes with recovery actions, and the runner
//! that sends planned calls through the registry. Each surface owns its planner.

pub(crate) mod design;
pub(crate) mod guards;
pub mod outcome;
pub mod plan;
pub(crate) mod prompt;
pub(crate) mod reply;
pub mod runner;
pub(crate) mod targets;
pub(crate) mod understanding;
