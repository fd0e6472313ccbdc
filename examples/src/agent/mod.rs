//! The deterministic local agent: a pure prompt planner (no model, no network), typed run
//! outcomes with recovery actions, and the runner that sends planned calls through the registry.

pub mod design;
pub mod guards;
pub mod outcome;
pub mod planner;
pub mod prompt;
pub mod reply;
pub mod runner;
pub mod targets;
pub mod understanding;
