//! The `#[tool]` attribute of [`tool-context`](https://docs.rs/tool-context).
//!
//! Use it through `tool-context` with its `macros` feature, as `tool_context::tool`: the code
//! it generates names `::tool_context` (and reaches `serde` and `schemars` through it), so a
//! crate using it needs no other dependency for the generated code.

mod expand;
mod methods;

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
/// For tools that share state, put `#[tool]` on the methods of a [`macro@tools`] impl block.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Turns the `#[tool(...)]` methods of an inherent impl block into typed tools that share the
/// value: state (a database, a folder, a client) lives in the struct, not in globals.
///
/// ```text
/// #[tool_context::tools]
/// impl Notes {
///     /// Appends a line to the notes.            (the tool's description)
///     #[tool(name = "notes.append", destructive)]  (the same options as the function form)
///     async fn append(&self, /// The line.
///                     text: String) -> Result<usize, NotesError> { ... }
///
///     fn helper(&self) { ... }                      (methods without `#[tool]` stay as written)
/// }
///
/// let notes = Arc::new(Notes::new(path));
/// let registry = ToolRegistry::builder().tools(notes.tools()) ...
/// ```
///
/// Each marked method follows the rules of [`macro@tool`] (a documented `async fn` returning a
/// `Result`, plain owned arguments, at most one `ToolInvocation`), and takes `&self` first. The
/// block stays as written, without the `#[tool]` markers; beside it the macro adds
/// `pub fn tools(self: &Arc<Self>) -> Vec<Tool>`, the tools in the order of their methods, each
/// holding a clone of the `Arc` (so `Self: Send + Sync + 'static`), and a hidden module with
/// each method's `Args` struct.
///
/// Compile errors, besides those of [`macro@tool`]: options on `#[tools]` itself, a trait impl,
/// a generic impl, a block without `#[tool]` methods, a method that takes `self`, `&mut self`
/// or no receiver, and two `#[tool]` attributes on one method. One `#[tools]` block per type
/// (each adds `tools()`).
#[proc_macro_attribute]
pub fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    methods::expand(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
