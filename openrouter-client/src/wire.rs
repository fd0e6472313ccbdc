//! Chat-completions messages and the request body.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tool_protocol::export::OpenAiToolDefinition;

use crate::config::{OpenRouterConfig, TOOL_CHOICE};

/// One chat message in OpenAI/OpenRouter shape, tagged by `role`.
///
/// ```
/// use openrouter_tool_loop::ChatMessage;
/// use serde_json::json;
/// let message = ChatMessage::tool("call_1", r#"{"ok":true}"#);
/// assert_eq!(serde_json::to_value(&message).unwrap(),
///     json!({"role": "tool", "tool_call_id": "call_1", "content": "{\"ok\":true}"}));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum ChatMessage {
    /// Instructions for the model.
    System {
        /// The instructions.
        content: String,
    },
    /// The person's prompt.
    User {
        /// The prompt.
        content: String,
    },
    /// A model turn: text (`null` when absent) and the tool calls it asked for.
    Assistant {
        /// Text of the turn; serialized as `null` when absent.
        content: Option<String>,
        /// Tool calls, omitted when empty.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<AssistantToolCall>,
    },
    /// The result of one tool call.
    Tool {
        /// The id of the call this answers.
        tool_call_id: String,
        /// The serialized result (see [`crate::tool_message`]).
        content: String,
    },
}

impl ChatMessage {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::System {
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::User {
            content: content.into(),
        }
    }

    /// A tool message.
    pub fn tool(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self::Tool {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
        }
    }
}

/// A tool call inside an assistant message: `{id, type: "function", function: {name, arguments}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssistantToolCall {
    /// Provider correlation id.
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: FunctionKind,
    /// The function called.
    pub function: FunctionCall,
}

impl AssistantToolCall {
    /// A function call with the provider's name and raw JSON arguments text.
    pub fn function(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            kind: FunctionKind::Function,
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
        }
    }
}

/// The only tool call type chat completions use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FunctionKind {
    /// `"function"`.
    Function,
}

/// The function part of a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The provider-facing (OpenAI-safe) tool name.
    pub name: String,
    /// The arguments as the provider sent them: JSON text.
    pub arguments: String,
}

/// The body of one chat-completions request: `{model, messages, tools, tool_choice, max_tokens,
/// provider?}`. `tools` and `tool_choice` are left out when there are no tools; `provider`
/// (OpenRouter's routing and data policy) is sent to OpenRouter only.
pub fn chat_request_body(
    config: &OpenRouterConfig,
    messages: &[ChatMessage],
    tools: &[OpenAiToolDefinition],
) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), Value::String(config.model.clone()));
    body.insert("messages".into(), json!(messages));
    if !tools.is_empty() {
        body.insert("tools".into(), json!(tools));
        body.insert("tool_choice".into(), Value::String(TOOL_CHOICE.into()));
    }
    body.insert("max_tokens".into(), json!(config.max_tokens));
    if config.streaming {
        body.insert("stream".into(), Value::Bool(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if let Some(provider) = config
        .data_policy
        .provider_preferences()
        .filter(|_| config.provider.is_openrouter())
    {
        body.insert("provider".into(), provider);
    }
    Value::Object(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ApiKey, DataPolicy};

    #[test]
    fn assistant_messages_keep_null_content_and_tool_calls() {
        let message = ChatMessage::Assistant {
            content: None,
            tool_calls: vec![AssistantToolCall::function("c1", "read_file", "{}")],
        };
        assert_eq!(
            serde_json::to_value(&message).unwrap(),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]})
        );
        let text = ChatMessage::Assistant {
            content: Some("done".into()),
            tool_calls: vec![],
        };
        assert_eq!(
            serde_json::to_value(&text).unwrap(),
            json!({"role": "assistant", "content": "done"})
        );
        assert_eq!(
            serde_json::from_value::<ChatMessage>(json!({"role": "assistant", "content": "done"}))
                .unwrap(),
            text
        );
    }

    #[test]
    fn request_body_carries_model_tools_and_policy() {
        let config = OpenRouterConfig::new(ApiKey::new("k")).with_data_policy(DataPolicy::Deny);
        let definitions = [tool_protocol::ToolDefinition::new(
            "a.t",
            "T",
            json!({"type": "object"}),
        )];
        let tools =
            tool_protocol::export::to_openai_tool_definitions(&definitions, &Default::default());
        let body = chat_request_body(&config, &[ChatMessage::user("hi")], &tools);
        assert_eq!(
            body,
            json!({
                "model": "openai/gpt-4o-mini",
                "messages": [{"role": "user", "content": "hi"}],
                "tools": [{"type": "function", "function": {"name": "a_t", "description": "T", "parameters": {"type": "object"}}}],
                "tool_choice": "auto",
                "max_tokens": 1200,
                "provider": {"data_collection": "deny"}
            })
        );
        let bare = chat_request_body(&config.with_data_policy(DataPolicy::Allow), &[], &[]);
        assert_eq!(
            bare,
            json!({"model": "openai/gpt-4o-mini", "messages": [], "max_tokens": 1200})
        );
    }
}
