//! Provider-neutral tool-calling contract: `tools/list` and `tools/call` types, stable error
//! codes, validators for untrusted JSON, provider exports, paging and audit redaction.
