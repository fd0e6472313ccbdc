//! Tool calls from the studio's pages: explicit local (`direct`) actions in the page's own
//! trace session, through the same registry path as every other caller.

use serde_json::Value;
use tool_context::ToolCallOptions;
use tool_protocol::{ToolCallContext, ToolCallMode, ToolCallSource};

use super::StudioState;

/// Session id of direct calls from the studio page.
pub(crate) const UI_SESSION_ID: &str = "studio-ui";

/// Runs a tools/call `request` as the page does: a local, direct call in the page's session.
pub(crate) async fn call_as_page(state: &StudioState, request: &Value) -> Value {
    let context = ToolCallContext::new(ToolCallSource::Local, ToolCallMode::Direct)
        .with_session(UI_SESSION_ID);
    let result = state
        .registry
        .call_tool_value(request, ToolCallOptions::default().with_context(context))
        .await;
    serde_json::to_value(result).unwrap_or(Value::Null)
}
