//! Tools: a definition plus an async handler, in a dynamic form (JSON Schema and
//! `serde_json::Value`) or a typed form (Rust input/output types whose schemas come from
//! `schemars`).

use std::any::TypeId;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use futures::TryFutureExt;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tool_protocol::{
    ToolAnnotations, ToolCallContext, ToolCallError, ToolCallId, ToolCallResult, ToolDefinition,
    codes,
};

use crate::cancellation::CallCancellation;
use crate::failure::result_unserializable;
use crate::policy::PolicyDecision;
use crate::trace::TraceId;
use crate::validation::ValidationMode;

/// What a handler gets besides its arguments.
#[derive(Debug, Clone)]
pub struct ToolInvocation {
    /// Name of the tool being called.
    pub tool_name: String,
    /// The call context (source, mode, session, revision).
    pub context: ToolCallContext,
    /// Provider correlation id.
    pub tool_call_id: Option<ToolCallId>,
    /// Registry-assigned id unique to this call (its events carry it as text).
    pub trace_id: TraceId,
    /// Fires on cancellation, timeout or shutdown. The registry stops waiting for the handler
    /// then; a handler that ignores it keeps running detached.
    pub cancellation: CallCancellation,
}

/// What a handler returns on success.
#[derive(Debug, Clone, PartialEq)]
pub enum HandlerOutput {
    /// A value: becomes `structuredContent` and its JSON text the content.
    Value(Value),
    /// Nothing: a fixed "completed" text and no structured content.
    Empty,
    /// A complete result, used as is (checked against the result contract).
    Result(ToolCallResult),
}

impl From<Value> for HandlerOutput {
    fn from(value: Value) -> Self {
        Self::Value(value)
    }
}

impl From<()> for HandlerOutput {
    fn from((): ()) -> Self {
        Self::Empty
    }
}

impl From<ToolCallResult> for HandlerOutput {
    fn from(result: ToolCallResult) -> Self {
        Self::Result(result)
    }
}

/// A handler's future as the registry runs it: it owns everything it needs, so a call that
/// stops waiting can hand it to a task of its own to drain.
pub type HandlerFuture =
    Pin<Box<dyn Future<Output = Result<HandlerOutput, ToolCallError>> + Send + 'static>>;

/// An async tool handler. Closures and async fns get this through [`Tool::new`] and
/// [`Tool::typed`]; implement it directly for handlers with state.
#[async_trait]
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs the tool with validated `arguments` (a JSON object).
    async fn call(
        &self,
        arguments: Value,
        invocation: ToolInvocation,
    ) -> Result<HandlerOutput, ToolCallError>;

    /// [`Self::call`] as a future that owns the handler: the registry polls it in place and
    /// moves it to a task when the call stops waiting. The default boxes `call` with the
    /// handler; the closure handlers of [`Tool::new`] and [`Tool::typed`] box their own future,
    /// one allocation instead of two.
    fn call_owned(self: Arc<Self>, arguments: Value, invocation: ToolInvocation) -> HandlerFuture {
        Box::pin(async move { self.call(arguments, invocation).await })
    }
}

struct FnHandler<F>(F);

impl<F, Fut, O> FnHandler<F>
where
    F: Fn(Value, ToolInvocation) -> Fut,
    Fut: Future<Output = Result<O, ToolCallError>> + Send + 'static,
    O: Into<HandlerOutput> + 'static,
{
    /// The closure's own future: it owns what it needs, so both trait methods use it as is.
    fn run(
        &self,
        arguments: Value,
        invocation: ToolInvocation,
    ) -> impl Future<Output = Result<HandlerOutput, ToolCallError>> + Send + 'static {
        (self.0)(arguments, invocation).map_ok(Into::into)
    }
}

#[async_trait]
impl<F, Fut, O> ToolHandler for FnHandler<F>
where
    F: Fn(Value, ToolInvocation) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolCallError>> + Send + 'static,
    O: Into<HandlerOutput> + 'static,
{
    async fn call(
        &self,
        arguments: Value,
        invocation: ToolInvocation,
    ) -> Result<HandlerOutput, ToolCallError> {
        self.run(arguments, invocation).await
    }

    fn call_owned(self: Arc<Self>, arguments: Value, invocation: ToolInvocation) -> HandlerFuture {
        Box::pin(self.run(arguments, invocation))
    }
}

struct TypedHandler<I, O, F> {
    handler: F,
    types: PhantomData<fn(I) -> O>,
}

impl<I, O, F, Fut> TypedHandler<I, O, F>
where
    I: DeserializeOwned,
    O: Serialize + 'static,
    F: Fn(I, ToolInvocation) -> Fut,
    Fut: Future<Output = Result<O, ToolCallError>> + Send + 'static,
{
    /// Decodes the arguments and calls the function now; the future awaits it and encodes
    /// its output, owning all it needs.
    fn run(
        &self,
        arguments: Value,
        invocation: ToolInvocation,
    ) -> impl Future<Output = Result<HandlerOutput, ToolCallError>> + Send + 'static {
        let name = invocation.tool_name.clone();
        let started = serde_json::from_value::<I>(arguments)
            .map(|input| (self.handler)(input, invocation))
            .map_err(|error| undecodable_arguments(&name, &error, current_validation_mode()));
        async move {
            let output = started?.await?;
            if TypeId::of::<O>() == TypeId::of::<()>() {
                return Ok(HandlerOutput::Empty);
            }
            serde_json::to_value(&output)
                .map(HandlerOutput::Value)
                .map_err(|error| result_unserializable(&name, &error.to_string()))
        }
    }
}

#[async_trait]
impl<I, O, F, Fut> ToolHandler for TypedHandler<I, O, F>
where
    I: DeserializeOwned + Send + 'static,
    O: Serialize + 'static,
    F: Fn(I, ToolInvocation) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolCallError>> + Send + 'static,
{
    async fn call(
        &self,
        arguments: Value,
        invocation: ToolInvocation,
    ) -> Result<HandlerOutput, ToolCallError> {
        self.run(arguments, invocation).await
    }

    fn call_owned(self: Arc<Self>, arguments: Value, invocation: ToolInvocation) -> HandlerFuture {
        Box::pin(self.run(arguments, invocation))
    }
}

tokio::task_local! {
    /// The registry's validation mode while a handler is called: a typed handler's decode
    /// error (made in the call, before its future) says when warn mode let arguments through
    /// that its input type cannot hold.
    static VALIDATION_MODE: ValidationMode;
}

/// Runs `call` (calling a handler) under the registry's validation `mode`.
pub(crate) fn with_validation_mode<R>(mode: ValidationMode, call: impl FnOnce() -> R) -> R {
    VALIDATION_MODE.sync_scope(mode, call)
}

fn current_validation_mode() -> ValidationMode {
    VALIDATION_MODE.try_with(|mode| *mode).unwrap_or_default()
}

fn undecodable_arguments(
    name: &str,
    error: &serde_json::Error,
    mode: ValidationMode,
) -> ToolCallError {
    let message = match mode {
        ValidationMode::Warn => format!(
            "Tool \"{name}\" arguments could not be decoded in warn mode: warn mode runs a typed handler only on arguments that decode into its input type"
        ),
        ValidationMode::Strict | ValidationMode::Silent => {
            format!("Tool \"{name}\" arguments could not be decoded")
        }
    };
    ToolCallError::new(codes::TOOL_VALIDATION_FAILED, message)
        .with_details(json!({ "issues": [{ "path": "", "message": error.to_string() }] }))
}

/// A tool: its definition, handler and optional default policy decision. Schemas are compiled
/// when the registry is built.
#[derive(Clone)]
pub struct Tool {
    pub(crate) definition: ToolDefinition,
    pub(crate) handler: Arc<dyn ToolHandler>,
    pub(crate) default_policy: Option<PolicyDecision>,
    /// For a typed tool: its schemas as `schemars` generates them, objects left open
    /// (see [`Tool::open_objects`]).
    open_schemas: Option<OpenSchemas>,
}

/// The open-object schemas of a typed tool's input and output types.
#[derive(Clone, Copy)]
struct OpenSchemas {
    input: fn() -> Value,
    output: fn() -> Option<Value>,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("definition", &self.definition)
            .field("default_policy", &self.default_policy)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// A dynamic tool: `definition` (with its JSON Schemas) and a closure over JSON arguments.
    ///
    /// ```
    /// use serde_json::{Value, json};
    /// use tool_context::{Tool, ToolInvocation};
    /// use tool_protocol::{ToolCallError, ToolDefinition};
    ///
    /// let echo = Tool::new(
    ///     ToolDefinition::new("echo", "Returns its arguments.", json!({"type": "object"})),
    ///     |arguments: Value, _call: ToolInvocation| async move { Ok::<_, ToolCallError>(arguments) },
    /// )
    /// .read_only();
    /// assert!(echo.definition().is_read_only());
    /// ```
    pub fn new<F, Fut, O>(definition: ToolDefinition, handler: F) -> Self
    where
        F: Fn(Value, ToolInvocation) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ToolCallError>> + Send + 'static,
        O: Into<HandlerOutput> + 'static,
    {
        Self::from_handler(definition, FnHandler(handler))
    }

    /// A dynamic tool with a handler object.
    pub fn from_handler(definition: ToolDefinition, handler: impl ToolHandler) -> Self {
        Self {
            definition,
            handler: Arc::new(handler),
            default_policy: None,
            open_schemas: None,
        }
    }

    /// A typed tool: a plain async fn from an input type to an output type. The input schema
    /// is derived from `I` (draft-07); the output schema from `O` when `O` is an object type.
    /// Returning `()` produces an empty success.
    ///
    /// Both schemas are *closed*: every object schema generated from a Rust type gets
    /// `additionalProperties: false` (see [`input_schema_for`]), so strict validation refuses
    /// an unknown argument such as `{"path": "a", "x": 1}` without
    /// `#[serde(deny_unknown_fields)]`, and provider strict modes accept the schema.
    /// [`Tool::open_objects`] opts a tool out.
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::{Deserialize, Serialize};
    /// use tool_context::{Tool, ToolInvocation};
    /// use tool_protocol::ToolCallError;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct AddInput { a: i64, b: i64 }
    /// #[derive(Serialize, JsonSchema)]
    /// struct AddOutput { sum: i64 }
    ///
    /// async fn add(input: AddInput, _call: ToolInvocation) -> Result<AddOutput, ToolCallError> {
    ///     Ok(AddOutput { sum: input.a + input.b })
    /// }
    ///
    /// let tool = Tool::typed("math.add", "Adds two integers.", add).read_only();
    /// assert_eq!(tool.definition().input_schema["required"], serde_json::json!(["a", "b"]));
    /// assert!(tool.definition().output_schema.is_some());
    /// ```
    pub fn typed<I, O, F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        F: Fn(I, ToolInvocation) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ToolCallError>> + Send + 'static,
    {
        let mut definition = ToolDefinition::new(name, description, input_schema_for::<I>());
        if TypeId::of::<O>() != TypeId::of::<()>() {
            definition.output_schema = output_schema_for::<O>();
        }
        let mut tool = Self::from_handler(
            definition,
            TypedHandler {
                handler,
                types: PhantomData::<fn(I) -> O>,
            },
        );
        tool.open_schemas = Some(OpenSchemas {
            input: open_input_schema_for::<I>,
            output: if TypeId::of::<O>() == TypeId::of::<()>() {
                || None
            } else {
                open_output_schema_for::<O>
            },
        });
        tool
    }

    /// Opts a typed tool out of closed object schemas: its input (and generated output)
    /// schema is used as `schemars` writes it, so objects accept properties they do not list
    /// unless the type says otherwise (`#[serde(deny_unknown_fields)]`). An output schema
    /// set with [`Tool::output_schema`] is kept. No effect on a dynamic tool, whose schemas
    /// are the caller's.
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use tool_context::{Tool, ToolInvocation};
    /// use tool_protocol::ToolCallError;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Query { text: String }
    ///
    /// async fn search(_input: Query, _call: ToolInvocation) -> Result<(), ToolCallError> { Ok(()) }
    ///
    /// let closed = Tool::typed("search", "Searches.", search);
    /// assert_eq!(closed.definition().input_schema["additionalProperties"], false);
    /// let open = Tool::typed("search", "Searches.", search).open_objects();
    /// assert!(open.definition().input_schema.get("additionalProperties").is_none());
    /// ```
    #[must_use]
    pub fn open_objects(mut self) -> Self {
        if let Some(open) = self.open_schemas {
            self.definition.input_schema = (open.input)();
            let generated = (open.output)().map(|mut schema| {
                close_object_schemas(&mut schema);
                schema
            });
            if self.definition.output_schema == generated {
                self.definition.output_schema = (open.output)();
            }
        }
        self
    }

    /// The definition as it will be listed.
    pub fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// Sets the display title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.definition.title = Some(title.into());
        self
    }

    /// Replaces the annotations.
    #[must_use]
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.definition.annotations = Some(annotations);
        self
    }

    /// Marks the tool read-only (`readOnlyHint: true`).
    #[must_use]
    pub fn read_only(mut self) -> Self {
        self.annotations_mut().read_only_hint = Some(true);
        self
    }

    /// Marks the tool destructive (`destructiveHint: true`, `readOnlyHint: false`).
    #[must_use]
    pub fn destructive(mut self) -> Self {
        let annotations = self.annotations_mut();
        annotations.destructive_hint = Some(true);
        annotations.read_only_hint = Some(false);
        self
    }

    /// Marks the tool idempotent (`idempotentHint: true`).
    #[must_use]
    pub fn idempotent(mut self) -> Self {
        self.annotations_mut().idempotent_hint = Some(true);
        self
    }

    /// Sets (or replaces) the output schema.
    #[must_use]
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.definition.output_schema = Some(schema);
        self
    }

    /// The decision this tool asks for under the registry's [`StandardPolicy`](crate::StandardPolicy)
    /// (custom policies see it as [`PolicyRequest::tool_default`](crate::PolicyRequest)).
    #[must_use]
    pub fn default_policy(mut self, decision: PolicyDecision) -> Self {
        self.default_policy = Some(decision);
        self
    }

    fn annotations_mut(&mut self) -> &mut ToolAnnotations {
        self.definition
            .annotations
            .get_or_insert_with(ToolAnnotations::default)
    }
}

/// Deepest schema nesting [`input_schema_for`] and [`output_schema_for`] close; deeper
/// subschemas are left as generated.
pub const MAX_CLOSED_SCHEMA_DEPTH: usize = 64;

/// The draft-07 JSON Schema of an input type (as accepted from a caller), with closed objects:
/// every object schema `schemars` generates for a struct (one that lists `properties` and
/// says nothing about `additionalProperties`) gets `additionalProperties: false`, at the root,
/// in nested properties, array items and `definitions`. Maps keep their
/// `additionalProperties` (the value schema), free-form values (`serde_json::Value`) stay
/// open, and so do the parts of an object merged from several schemas (`#[serde(flatten)]`
/// of an enum: a node with both `properties` and `allOf`/`anyOf`/`oneOf`, and those
/// branches), where closing one part would refuse the other parts' properties.
///
/// ```
/// use schemars::JsonSchema;
/// use tool_context::tool::input_schema_for;
///
/// #[derive(JsonSchema)]
/// #[allow(dead_code)]
/// struct Move { from: String, to: String }
///
/// let schema = input_schema_for::<Move>();
/// assert_eq!(schema["additionalProperties"], false);
/// ```
pub fn input_schema_for<T: JsonSchema>() -> Value {
    let mut schema = open_input_schema_for::<T>();
    close_object_schemas(&mut schema);
    schema
}

/// The draft-07 JSON Schema of an output type, when it describes an object (MCP output
/// schemas must), with closed objects as in [`input_schema_for`].
pub fn output_schema_for<T: JsonSchema>() -> Option<Value> {
    open_output_schema_for::<T>().map(|mut schema| {
        close_object_schemas(&mut schema);
        schema
    })
}

fn open_input_schema_for<T: JsonSchema>() -> Value {
    SchemaSettings::draft07()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

fn open_output_schema_for<T: JsonSchema>() -> Option<Value> {
    let schema = SchemaSettings::draft07()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    (schema.get("type") == Some(&Value::String("object".into()))).then_some(schema)
}

/// Keywords whose value is one subschema.
const SUBSCHEMA_KEYWORDS: &[&str] = &[
    "items",
    "additionalItems",
    "additionalProperties",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
];
/// Keywords whose value maps names to subschemas.
const SUBSCHEMA_MAP_KEYWORDS: &[&str] =
    &["properties", "patternProperties", "definitions", "$defs"];
/// Keywords whose value is a list of subschemas (`items` in its tuple form too).
const SUBSCHEMA_LIST_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "items", "prefixItems"];
/// Keywords that combine the node's own `properties` with other schemas'.
const MERGING_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf"];

fn close_object_schemas(schema: &mut Value) {
    close_node(schema, true, 0);
}

/// Closes `schema` when it is a struct-like object schema and `may_close` (it is not one part
/// of a merged object), then its subschemas.
fn close_node(schema: &mut Value, may_close: bool, depth: usize) {
    let Value::Object(map) = schema else {
        return;
    };
    if depth >= MAX_CLOSED_SCHEMA_DEPTH {
        return;
    }
    let merges =
        map.contains_key("properties") && MERGING_KEYWORDS.iter().any(|key| map.contains_key(*key));
    let is_object = match map.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
        _ => map.contains_key("properties"),
    };
    if may_close
        && !merges
        && is_object
        && map.contains_key("properties")
        && !map.contains_key("additionalProperties")
        && !map.contains_key("unevaluatedProperties")
    {
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    for (key, value) in map.iter_mut() {
        let key = key.as_str();
        if SUBSCHEMA_MAP_KEYWORDS.contains(&key) {
            if let Value::Object(entries) = value {
                for entry in entries.values_mut() {
                    close_node(entry, true, depth + 1);
                }
            }
        } else if SUBSCHEMA_LIST_KEYWORDS.contains(&key) && value.is_array() {
            let branch_may_close = !(merges && MERGING_KEYWORDS.contains(&key));
            if let Value::Array(items) = value {
                for item in items {
                    close_node(item, branch_may_close, depth + 1);
                }
            }
        } else if SUBSCHEMA_KEYWORDS.contains(&key) {
            close_node(value, true, depth + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_objects_stay_open_and_their_branches_too() {
        let mut schema = json!({
            "type": "object",
            "properties": {"x": {"type": "string"}},
            "oneOf": [
                {"type": "object", "properties": {"kind": {"const": "a"}, "a": {"type": "string"}}},
                {"type": "object", "properties": {"kind": {"const": "b"}}}
            ]
        });
        let expected = schema.clone();
        close_object_schemas(&mut schema);
        assert_eq!(schema, expected);
    }

    #[test]
    fn enum_branches_and_existing_choices_are_respected() {
        let mut schema = json!({
            "oneOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}},
                {"type": "object", "properties": {"b": {}}, "additionalProperties": true}
            ],
            "definitions": {
                "Map": {"type": "object", "additionalProperties": {"type": "integer"}},
                "Unit": {"type": "object", "properties": {}}
            }
        });
        close_object_schemas(&mut schema);
        assert_eq!(schema["oneOf"][0]["additionalProperties"], false);
        assert_eq!(schema["oneOf"][1]["additionalProperties"], true);
        assert_eq!(
            schema["definitions"]["Map"]["additionalProperties"],
            json!({"type": "integer"})
        );
        assert_eq!(schema["definitions"]["Unit"]["additionalProperties"], false);
        // A root without `properties` next to `oneOf` is not a merge, and is no object to close.
        assert!(schema.get("additionalProperties").is_none());
    }

    #[test]
    fn closing_is_depth_bounded() {
        let mut deep = (0..200).fold(
            json!({"type": "string"}),
            |inner, _| json!({"type": "object", "properties": {"n": inner}}),
        );
        close_object_schemas(&mut deep);
        assert_eq!(deep["additionalProperties"], false);
        let mut node = &deep;
        for _ in 0..MAX_CLOSED_SCHEMA_DEPTH {
            node = &node["properties"]["n"];
        }
        assert!(node.get("additionalProperties").is_none());
    }
}
