//! [`RegisteredTool`]: one tool with its schemas compiled, as the frozen catalog and the
//! mounted groups hold it, and [`register`], which compiles it.

use std::sync::Arc;

use tool_protocol::ToolDefinition;

use crate::build_error::BuildError;
use crate::policy::PolicyDecision;
use crate::schema::CompiledSchema;
use crate::tool::{Tool, ToolHandler};

/// A registered tool with its compiled schemas.
pub(crate) struct RegisteredTool {
    pub(crate) definition: ToolDefinition,
    pub(crate) handler: Arc<dyn ToolHandler>,
    pub(crate) default_policy: Option<PolicyDecision>,
    pub(crate) input: CompiledSchema,
    pub(crate) output: Option<CompiledSchema>,
}

/// Name lookups on every call: keyed by registered names only (a lookup cannot add one), so a
/// fast seeded hash replaces SipHash's flood resistance at no risk.
pub(crate) type NameHasher = foldhash::fast::RandomState;

/// Checks `tool`'s name and compiles its schemas: the one way into a catalog, built or mounted.
pub(crate) fn register(tool: Tool) -> Result<RegisteredTool, BuildError> {
    let name = tool.definition.name.clone();
    if name.trim().is_empty() {
        return Err(BuildError::BlankToolName);
    }
    let input_error = |reason: String| BuildError::InvalidInputSchema {
        tool: name.clone(),
        reason,
    };
    let schema = &tool.definition.input_schema;
    if !schema.is_object() {
        return Err(input_error("the schema must be a JSON object".into()));
    }
    if schema.get("type").is_some_and(|kind| kind != "object") {
        return Err(input_error(
            "the schema must describe an object (\"type\": \"object\")".into(),
        ));
    }
    let input = CompiledSchema::compile(schema).map_err(input_error)?;
    let output = tool
        .definition
        .output_schema
        .as_ref()
        .map(|schema| {
            CompiledSchema::compile(schema).map_err(|reason| BuildError::InvalidOutputSchema {
                tool: name.clone(),
                reason,
            })
        })
        .transpose()?;
    Ok(RegisteredTool {
        definition: tool.definition,
        handler: tool.handler,
        default_policy: tool.default_policy,
        input,
        output,
    })
}
