//! [`ValidationMode`]: when a call's arguments are checked against the tool's input schema.
//! A leaf, so the tools, the handler run and the pipeline read it without the registry.

/// When arguments are checked against the input schema.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ValidationMode {
    /// Before the policy runs: invalid arguments return `TOOL_VALIDATION_FAILED` with the
    /// schema issues and never reach approval or the handler.
    #[default]
    Strict,
    /// At dispatch: issues are logged (`tracing` warning) and the handler still runs. A typed
    /// tool ([`Tool::typed`](crate::Tool::typed)) runs as long as the arguments still decode
    /// into its input type; arguments that cannot decode return `TOOL_VALIDATION_FAILED` with
    /// a message saying warn mode could not decode them (and the decode error in
    /// `details.issues`).
    Warn,
    /// No schema check; the handler gets the arguments as sent.
    Silent,
}
