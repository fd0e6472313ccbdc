//! One chunk of a streamed chat completion, read straight into borrowed typed fields: a stream
//! is hundreds of small chunks, and text that needs no unescaping is never copied.
//!
//! Unknown fields are ignored; a field of the wrong type makes the chunk invalid (the serde
//! error says which field and where).

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::error::Category;

/// A string that borrows from the data line unless it had escapes (serde borrows a `Cow`
/// only when it is not inside an `Option`, so the `Option`s hold this).
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct Text<'a>(#[serde(borrow)] pub(crate) Cow<'a, str>);

impl std::ops::Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

/// A value kept only when it is a string: fields read for telemetry (`id`, `model`,
/// `finish_reason`) never fail a chunk whatever a provider writes there.
#[derive(Debug, Default)]
pub(crate) struct LenientText<'a>(pub(crate) Option<Cow<'a, str>>);

impl LenientText<'_> {
    pub(crate) fn to_owned_text(&self) -> Option<String> {
        self.0.as_deref().map(str::to_owned)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for LenientText<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visitor<'a> {
            type Value = LenientText<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(LenientText(Some(Cow::Borrowed(text))))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(LenientText(Some(Cow::Owned(text.to_owned()))))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(LenientText(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(LenientText(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(LenientText(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(LenientText(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(LenientText(None))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LenientText(None))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LenientText(None))
            }
        }
        deserializer.deserialize_any(Visitor(std::marker::PhantomData))
    }
}

/// `{id, model, choices, usage, error}` of a chunk.
#[derive(Debug, Deserialize)]
pub(crate) struct StreamChunk<'a> {
    #[serde(default, borrow)]
    pub(crate) choices: Option<Vec<StreamChoice<'a>>>,
    #[serde(default)]
    pub(crate) usage: Option<StreamUsage>,
    /// An error reported after HTTP 200 (an object, or a string as Ollama writes it).
    #[serde(default)]
    pub(crate) error: Option<Value>,
    // Last: they take any value, and a JSON array (refused as "not an object") fills the
    // fields in order.
    /// The completion's id (the same in every chunk).
    #[serde(default, borrow)]
    pub(crate) id: LenientText<'a>,
    /// The model that answers (the same in every chunk).
    #[serde(default, borrow)]
    pub(crate) model: LenientText<'a>,
}

/// One choice: its delta, finish reason and (OpenRouter) error.
#[derive(Debug, Deserialize)]
pub(crate) struct StreamChoice<'a> {
    #[serde(default, borrow)]
    pub(crate) delta: Option<StreamDelta<'a>>,
    /// `null` until the last chunk; any JSON is accepted, only text is kept.
    #[serde(default, borrow)]
    pub(crate) finish_reason: Option<LenientText<'a>>,
    #[serde(default)]
    pub(crate) error: Option<Value>,
}

/// What a chunk adds to the assistant message.
#[derive(Debug, Deserialize)]
pub(crate) struct StreamDelta<'a> {
    #[serde(default, borrow)]
    pub(crate) role: Option<Text<'a>>,
    #[serde(default, borrow)]
    pub(crate) content: Option<Text<'a>>,
    #[serde(default, borrow)]
    pub(crate) tool_calls: Option<Vec<ToolCallDelta<'a>>>,
}

/// A piece of one tool call.
#[derive(Debug, Deserialize)]
pub(crate) struct ToolCallDelta<'a> {
    #[serde(default)]
    pub(crate) index: Option<u64>,
    #[serde(default, borrow)]
    pub(crate) id: Option<Text<'a>>,
    #[serde(default, rename = "type", borrow)]
    pub(crate) kind: Option<Text<'a>>,
    #[serde(default, borrow)]
    pub(crate) function: Option<FunctionDelta<'a>>,
}

/// A piece of a tool call's function: its name (usually whole, in the first piece) and more
/// argument text.
#[derive(Debug, Deserialize)]
pub(crate) struct FunctionDelta<'a> {
    #[serde(default, borrow)]
    pub(crate) name: Option<Text<'a>>,
    #[serde(default, borrow)]
    pub(crate) arguments: Option<Text<'a>>,
}

/// `usage` of the last chunk.
#[derive(Debug, Deserialize)]
pub(crate) struct StreamUsage {
    #[serde(default)]
    pub(crate) prompt_tokens: Option<u64>,
    #[serde(default)]
    pub(crate) completion_tokens: Option<u64>,
    #[serde(default)]
    pub(crate) total_tokens: Option<u64>,
}

/// Why a data line is not a chunk.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ChunkError {
    /// Not JSON, or not an object.
    NotAnObject,
    /// An object whose fields have the wrong types.
    Shape(String),
}

/// Reads a data line.
pub(crate) fn parse_chunk(data: &str) -> Result<StreamChunk<'_>, ChunkError> {
    serde_json::from_str(data).map_err(|error| match error.classify() {
        Category::Data if data.trim_start().starts_with('{') => {
            ChunkError::Shape(error.to_string())
        }
        _ => ChunkError::NotAnObject,
    })
}

/// A non-blank, trimmed text.
pub(crate) fn non_blank(text: Option<&Text<'_>>) -> Option<String> {
    text.map(|text| text.trim())
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_names_are_read_when_text_and_never_fail_a_chunk() {
        let chunk = parse_chunk(
            r#"{"id":"gen-1","model":"m/1","choices":[{"delta":{},"finish_reason":"stop"}]}"#,
        )
        .unwrap();
        assert_eq!(chunk.id.to_owned_text().as_deref(), Some("gen-1"));
        assert_eq!(chunk.model.to_owned_text().as_deref(), Some("m/1"));
        let reason = chunk.choices.as_ref().unwrap()[0].finish_reason.as_ref();
        assert_eq!(
            reason.and_then(LenientText::to_owned_text).as_deref(),
            Some("stop")
        );

        let odd = parse_chunk(
            r#"{"id":7,"model":{"name":"m"},"choices":[{"delta":{},"finish_reason":["stop"]}]}"#,
        )
        .unwrap();
        assert_eq!(odd.id.to_owned_text(), None);
        assert_eq!(odd.model.to_owned_text(), None);
        let reason = odd.choices.as_ref().unwrap()[0].finish_reason.as_ref();
        assert!(
            reason.is_some(),
            "a finish reason of any shape still ends the stream"
        );
        assert_eq!(reason.and_then(LenientText::to_owned_text), None);
    }

    #[test]
    fn text_without_escapes_is_borrowed() {
        let chunk = parse_chunk(
            r#"{"id":"x","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}"#,
        )
        .unwrap();
        let choice = &chunk.choices.as_ref().unwrap()[0];
        assert!(choice.finish_reason.is_none());
        let content = choice.delta.as_ref().unwrap().content.as_ref().unwrap();
        assert!(matches!(content.0, Cow::Borrowed("hi")));
        let escaped = parse_chunk(r#"{"choices":[{"delta":{"content":"a\nb"}}]}"#).unwrap();
        let choices = escaped.choices.unwrap();
        assert_eq!(
            choices[0].delta.as_ref().unwrap().content.as_deref(),
            Some("a\nb")
        );
    }

    #[test]
    fn wrong_types_and_non_objects_are_told_apart() {
        assert_eq!(parse_chunk("[1]").unwrap_err(), ChunkError::NotAnObject);
        assert_eq!(
            parse_chunk("{\"choices\": [").unwrap_err(),
            ChunkError::NotAnObject
        );
        let ChunkError::Shape(message) =
            parse_chunk(r#"{"choices":[{"delta":{"content":3}}]}"#).unwrap_err()
        else {
            panic!()
        };
        assert!(message.contains("invalid type"), "{message}");
        assert!(parse_chunk(r#"{"choices":null,"usage":{"prompt_tokens":3}}"#).is_ok());
    }
}
