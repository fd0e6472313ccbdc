//! The deterministic local agent: a pure prompt planner (no model, no network).

pub mod planner;
