//! The `#[tool]` attribute of [`tool-context`](https://docs.rs/tool-context).
//!
//! Use it through `tool-context` with its `macros` feature, as `tool_context::tool`: the code
//! it generates names `::tool_context` (and reaches `serde` and `schemars` through it), so a
//! crate using it needs no other dependency for the generated code.

mod expand;

use proc_macro::TokenStream;

/// Turns a documented `async fn` into a typed [`tool_context::Tool`](https://docs.rs/tool-context).
///
/// ```text
/// /// Description the model reads (the whole doc comment, trimmed).
/// #[tool_context::tool(name = "math.add", title = "Add", read_only, idempotent)]
/// async fn add(
///     /// Described in the input schema.
///     a: i64,
///     b: i64,
///     call: ToolInvocation, // optional, passed through, not an argument
/// ) -> Result<T, E>         // T: Serialize + JsonSchema, E: Into<ToolCallError>
/// ```
///
/// The function stays as written (callable directly). Beside it, a module of the same name
/// and visibility holds:
///
/// - `Args`: a struct with one public field per argument (same name and type, the parameter's
///   doc comment as its schema description, `#[serde(..)]` / `#[schemars(..)]` parameter
///   attributes moved onto the field), deriving `Deserialize` and `JsonSchema`;
/// - `tool()`: the [`Tool`](https://docs.rs/tool-context) built by `Tool::typed` from `Args`
///   to `T` (closed object schemas; `()` is an empty success), whose handler calls the
///   function and converts its error with `Into<ToolCallError>`.
///
/// Options, comma-separated, each at most once:
///
/// | Option | Effect |
/// |---|---|
/// | `name = "..."` | The tool's name (default: the function's name). |
/// | `title = "..."` | The display title (`Tool::title`). |
/// | `read_only` | `readOnlyHint: true` (`Tool::read_only`). |
/// | `destructive` | `destructiveHint: true`, `readOnlyHint: false` (`Tool::destructive`). |
/// | `idempotent` | `idempotentHint: true` (`Tool::idempotent`). |
/// | `open_world`, `open_world = true / false` | `openWorldHint`. |
///
/// Compile errors (on the offending tokens): an unknown or repeated option, `read_only`
/// with `destructive`, a missing doc comment, a function that is not `async`, is `const`,
/// `unsafe` or `extern`, has generics or a `self` receiver, an argument that is not a plain
/// `name: Type` or is a reference, `impl Trait` or `cfg`-gated, an argument type that says
/// `Args` unqualified (it would name the generated struct), more than one `ToolInvocation`
/// parameter, and a return type that is not a `Result` (or an alias named `...Result`).
///
/// Use it on functions at module level: the generated module reaches the function and the
/// argument types through `super::`, which does not see items declared inside a function body.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
