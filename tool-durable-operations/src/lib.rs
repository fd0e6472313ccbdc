//! Durable, fenced operation records and the exactly-once side-effect runner.
