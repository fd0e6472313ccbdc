//! A Jepsen-style fault harness for `tool-durable-operations` .
//!
//! - [`history`]: what workers did, as JSON lines: every invocation and its completion, and
//!   every side effect as the effect itself recorded it (an independent ledger).
//! - [`checker`]: reads a history and its ledger and reports violations of the exactly-once
//!   promises and of per-key linearizability.
//! - [`servers`]: throwaway Redis, PostgreSQL and SQLite instances on free loopback ports, which
//!   the harness may kill, restart, pause and disconnect.
//! - [`worker`]: one worker process's random operations, recorded as they happen.
//! - [`recording`]: every read and write the store makes to its backend, recorded beneath it.
//! - [`mutant`]: deliberately broken builds the checker must catch.
//! - [`report`]: the campaign's HTML report (timeline, latency, throughput, violations).
//! - [`backend`]: which store a campaign runs against.
//! - [`campaign`]: workers plus a nemesis against one backend, then the checker's verdict.
//! - [`fleet`]: the MCP fleet campaign: clients retrying keyed `tools/call`s through a load
//!   balancer to three `tool-host` processes while hosts die and answers are lost.
#![deny(missing_docs)]

pub mod backend;
pub mod campaign;
pub mod checker;
pub mod fleet;
pub mod history;
pub mod mutant;
pub mod recording;
pub mod report;
pub mod servers;
pub mod worker;
