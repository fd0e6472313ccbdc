//! The one tool-call pipeline: registry, allowlist, validation, policy and approvals,
//! timeout, cancellation, output budget, idempotency and lifecycle events.
