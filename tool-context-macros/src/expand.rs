//! The expansion of `#[tool]`, on `proc_macro2` tokens so it is unit-testable.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, ExprLit, FnArg, Ident, Item, Lit, LitBool, LitStr, Meta, Pat, ReturnType,
    Signature, Token, Type,
};

/// The options of one `#[tool(...)]`.
#[derive(Default)]
pub(crate) struct Options {
    name: Option<LitStr>,
    title: Option<LitStr>,
    read_only: Option<Span>,
    destructive: Option<Span>,
    idempotent: Option<Span>,
    open_world: Option<LitBool>,
}

const OPTIONS_HELP: &str = "expected `name = \"...\"`, `title = \"...\"`, `read_only`, `destructive`, `idempotent` or `open_world`";

impl Options {
    pub(crate) fn parse(attr: TokenStream) -> syn::Result<Self> {
        let mut options = Self::default();
        syn::meta::parser(|meta| options.parse_one(&meta)).parse2(attr)?;
        Ok(options)
    }

    fn parse_one(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let Some(ident) = meta.path.get_ident() else {
            return Err(meta.error(format!("unknown `#[tool]` option: {OPTIONS_HELP}")));
        };
        let key = ident.to_string();
        match key.as_str() {
            "name" => {
                let name = non_empty(meta.value()?.parse()?, "the tool name")?;
                set_once(&mut self.name, name, meta)
            }
            "title" => {
                let title = non_empty(meta.value()?.parse()?, "the title")?;
                set_once(&mut self.title, title, meta)
            }
            "read_only" | "destructive" | "idempotent" => {
                if !(meta.input.is_empty() || meta.input.peek(Token![,])) {
                    return Err(meta.error(format!("`{key}` takes no value")));
                }
                let span = ident.span();
                match key.as_str() {
                    "read_only" if self.destructive.is_some() => Err(conflict(span)),
                    "read_only" => set_once(&mut self.read_only, span, meta),
                    "destructive" if self.read_only.is_some() => Err(conflict(span)),
                    "destructive" => set_once(&mut self.destructive, span, meta),
                    _ => set_once(&mut self.idempotent, span, meta),
                }
            }
            "open_world" => {
                let value = if meta.input.peek(Token![=]) {
                    meta.value()?.parse()?
                } else {
                    LitBool::new(true, ident.span())
                };
                set_once(&mut self.open_world, value, meta)
            }
            _ => Err(meta.error(format!("unknown `#[tool]` option `{key}`: {OPTIONS_HELP}"))),
        }
    }
}

fn non_empty(value: LitStr, what: &str) -> syn::Result<LitStr> {
    if value.value().trim().is_empty() {
        return Err(syn::Error::new(
            value.span(),
            format!("{what} cannot be empty"),
        ));
    }
    Ok(value)
}

fn set_once<T>(slot: &mut Option<T>, value: T, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error("this `#[tool]` option is given twice"));
    }
    *slot = Some(value);
    Ok(())
}

fn conflict(span: Span) -> syn::Error {
    syn::Error::new(
        span,
        "a tool cannot be both `read_only` and `destructive` (`destructive` sets `readOnlyHint: false`)",
    )
}

/// One argument of the tool: a field of `Args`.
pub(crate) struct Argument {
    pub(crate) ident: Ident,
    ty: Type,
    attrs: Vec<Attribute>,
}

/// What the handler passes for each parameter of the function, in order.
pub(crate) enum Parameter {
    Argument(Ident),
    Invocation,
}

/// Expands `#[tool(attr)] item`.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let options = Options::parse(attr)?;
    let mut function = match syn::parse2::<Item>(item)? {
        Item::Fn(function) => function,
        other => {
            return Err(syn::Error::new(
                other.span(),
                "`#[tool]` goes on an `async fn` (or, inside a `#[tools]` impl block, on a method)",
            ));
        }
    };
    check_signature(&function.sig)?;
    let description = description(&function.attrs, &function.sig.ident)?;
    let (arguments, parameters) = split_parameters(&mut function.sig, Receiver::Forbidden)?;
    let output = result_type(&function.sig)?;

    let ident = &function.sig.ident;
    let vis = &function.vis;
    let name = tool_name(&options, ident);
    let args_struct = args_struct(&arguments);
    let args = Ident::new("__tool_args", Span::mixed_site());
    let call = Ident::new("__tool_call", Span::mixed_site());
    let field_names = arguments.iter().map(|argument| &argument.ident);
    let passed = passed(&parameters, &call);
    let call_pattern = call_pattern(&parameters, &call);
    let into_error = into_error(&output);
    // Spanned on the return type, so a `T` that is not `Serialize + JsonSchema` or an `E`
    // that is not `Into<ToolCallError>` is reported there.
    let typed = quote_spanned! {output.span()=>
        ::tool_context::Tool::typed(
            #name,
            #description,
            |#args: Args, #call_pattern: ::tool_context::ToolInvocation| async move {
                let Args { #(#field_names,)* } = #args;
                super::#ident(#(#passed),*).await.map_err(#into_error)
            },
        )
    };
    let hints = hints(&options);
    let module_doc = format!(
        "The `{name}` tool made by `#[tool]` from the function `{ident}`: its arguments (`Args`) and `tool()`."
    );
    let tool_doc =
        format!("The `{name}` tool: decodes [`Args`] and calls [`{ident}()`](fn@super::{ident}).");

    Ok(quote! {
        #function

        #[doc = #module_doc]
        #vis mod #ident {
            #[allow(unused_imports)]
            use super::*;

            #args_struct

            #[doc = #tool_doc]
            // `E` may be `ToolCallError` itself.
            #[allow(clippy::useless_conversion)]
            pub fn tool() -> ::tool_context::Tool {
                let tool = #typed;
                #(#hints)*
                tool
            }
        }
    })
}

/// The tool's name: the `name` option, else the function's name as written.
pub(crate) fn tool_name(options: &Options, ident: &Ident) -> String {
    options
        .name
        .as_ref()
        .map_or_else(|| unraw(ident), LitStr::value)
}

/// The `Return` type, checked to be a `Result` (or an alias named `...Result`).
pub(crate) fn result_type(sig: &Signature) -> syn::Result<Type> {
    match &sig.output {
        ReturnType::Type(_, ty) if is_result(ty) => Ok(ty.as_ref().clone()),
        ReturnType::Type(_, ty) => Err(syn::Error::new(
            ty.span(),
            "a `#[tool]` function returns `Result<T, E>` (T: Serialize + JsonSchema, E: Into<ToolCallError>), or an alias of it named `...Result`",
        )),
        ReturnType::Default => Err(syn::Error::new(
            sig.paren_token.span.join(),
            "a `#[tool]` function returns `Result<T, E>` (T: Serialize + JsonSchema, E: Into<ToolCallError>); use `Result<(), E>` for an empty success",
        )),
    }
}

/// The `Args` struct of one tool: one public field per argument, deriving `Deserialize` and
/// `JsonSchema` through `tool_context`'s private re-exports.
pub(crate) fn args_struct(arguments: &[Argument]) -> TokenStream {
    let fields = arguments.iter().map(|Argument { ident, ty, attrs }| {
        quote! { #(#attrs)* pub #ident: #ty }
    });
    // `schemars` writes no `properties` for a struct without fields, so `Tool::typed` would
    // leave that schema open; a tool without arguments gets a closed, empty object.
    let no_arguments = arguments.is_empty().then(|| {
        quote! { #[schemars(extend("properties" = {}, "additionalProperties" = false))] }
    });
    quote! {
        #[derive(
            ::tool_context::__private::serde::Deserialize,
            ::tool_context::__private::schemars::JsonSchema,
        )]
        #[serde(crate = "::tool_context::__private::serde")]
        #[schemars(crate = "::tool_context::__private::schemars")]
        #no_arguments
        #[allow(missing_docs)]
        pub struct Args {
            #(#fields,)*
        }
    }
}

/// What the handler passes for each parameter, in order (`call` for the invocation).
pub(crate) fn passed(parameters: &[Parameter], call: &Ident) -> Vec<TokenStream> {
    parameters
        .iter()
        .map(|parameter| match parameter {
            Parameter::Argument(ident) => quote! { #ident },
            Parameter::Invocation => quote! { #call },
        })
        .collect()
}

/// The handler's pattern for the invocation: `call` when a parameter takes it, else `_`.
pub(crate) fn call_pattern(parameters: &[Parameter], call: &Ident) -> TokenStream {
    if parameters
        .iter()
        .any(|parameter| matches!(parameter, Parameter::Invocation))
    {
        quote! { #call }
    } else {
        quote! { _ }
    }
}

/// The conversion of the function's error into `ToolCallError`, spanned on the return type.
pub(crate) fn into_error(output: &Type) -> TokenStream {
    quote_spanned! {output.span()=>
        ::core::convert::Into::<::tool_context::__private::ToolCallError>::into
    }
}

/// The statements that set the options' annotations and title on `tool`.
pub(crate) fn hints(options: &Options) -> Vec<TokenStream> {
    let mut hints = Vec::new();
    if options.read_only.is_some() {
        hints.push(quote! { let tool = tool.read_only(); });
    }
    if options.destructive.is_some() {
        hints.push(quote! { let tool = tool.destructive(); });
    }
    if options.idempotent.is_some() {
        hints.push(quote! { let tool = tool.idempotent(); });
    }
    if let Some(open_world) = &options.open_world {
        hints.push(quote! {
            let tool = {
                let mut annotations = tool.definition().annotations.clone().unwrap_or_default();
                annotations.open_world_hint = ::core::option::Option::Some(#open_world);
                tool.annotations(annotations)
            };
        });
    }
    if let Some(title) = &options.title {
        hints.push(quote! { let tool = tool.title(#title); });
    }
    hints
}

pub(crate) fn check_signature(sig: &Signature) -> syn::Result<()> {
    if let Some(constness) = &sig.constness {
        return Err(syn::Error::new(
            constness.span,
            "a `#[tool]` function cannot be `const`",
        ));
    }
    if let Some(unsafety) = &sig.unsafety {
        return Err(syn::Error::new(
            unsafety.span,
            "a `#[tool]` function cannot be `unsafe`: the tool calls it with any decoded arguments",
        ));
    }
    if let Some(abi) = &sig.abi {
        return Err(syn::Error::new(
            abi.span(),
            "a `#[tool]` function cannot be `extern`",
        ));
    }
    if sig.asyncness.is_none() {
        return Err(syn::Error::new(
            sig.fn_token.span,
            "`#[tool]` needs an `async fn`",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(syn::Error::new(
            sig.generics.span(),
            "a `#[tool]` function cannot be generic: its arguments are decoded into one concrete type and its schema is fixed",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        return Err(syn::Error::new(
            variadic.span(),
            "a `#[tool]` function cannot be variadic",
        ));
    }
    Ok(())
}

/// The doc comment's text: every `#[doc = "..."]` line, common indentation removed, joined
/// with newlines and trimmed.
pub(crate) fn description(attrs: &[Attribute], ident: &Ident) -> syn::Result<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        let Meta::NameValue(value) = &attr.meta else {
            continue; // `#[doc(hidden)]`, `#[doc(alias = "..")]`
        };
        match &value.value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(text),
                ..
            }) => lines.extend(text.value().split('\n').map(str::to_owned)),
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "`#[tool]` reads the description from literal doc comments (`///`)",
                ));
            }
        }
    }
    let indent = lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    let text = lines
        .iter()
        .map(|line| line.get(indent..).unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n");
    let text = text.trim();
    if text.is_empty() {
        return Err(syn::Error::new(
            ident.span(),
            "a `#[tool]` function needs a doc comment (`/// ...`): it is the tool's description, what the model reads to decide when to call it",
        ));
    }
    Ok(text.to_owned())
}

/// What a `#[tool]` signature may start with.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Receiver {
    /// A free function: no `self`.
    Forbidden,
    /// A method of a `#[tools]` impl block: `&self` first.
    RefSelf,
}

/// Splits the parameters into arguments (fields of `Args`) and the optional invocation, and
/// strips from the function the parameter attributes that move to the fields. A method's
/// `&self` is checked and left out.
pub(crate) fn split_parameters(
    sig: &mut Signature,
    receiver: Receiver,
) -> syn::Result<(Vec<Argument>, Vec<Parameter>)> {
    let mut arguments = Vec::new();
    let mut parameters = Vec::new();
    let mut invocation = false;
    if receiver == Receiver::RefSelf {
        check_ref_self(sig)?;
    }
    for input in &mut sig.inputs {
        let typed = match input {
            FnArg::Receiver(_) if receiver == Receiver::RefSelf => continue,
            FnArg::Receiver(receiver) => {
                return Err(syn::Error::new(
                    receiver.span(),
                    "`#[tool]` on a method goes inside a `#[tools]` impl block (`#[tool_context::tools] impl MyTools { ... }`); on a free `async fn`, `self` cannot be a tool argument",
                ));
            }
            FnArg::Typed(typed) => typed,
        };
        if is_invocation(&typed.ty) {
            if invocation {
                return Err(syn::Error::new(
                    typed.ty.span(),
                    "a `#[tool]` function takes at most one `ToolInvocation` parameter",
                ));
            }
            invocation = true;
            typed.attrs.retain(|attr| !attr.path().is_ident("doc"));
            parameters.push(Parameter::Invocation);
            continue;
        }
        let ident = match typed.pat.as_ref() {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => pat.ident.clone(),
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "a tool argument needs a plain name (`name: Type`): the name is its JSON key",
                ));
            }
        };
        check_argument_type(&typed.ty)?;
        let mut field_attrs = Vec::new();
        let mut kept = Vec::new();
        for attr in std::mem::take(&mut typed.attrs) {
            let path = attr.path();
            if path.is_ident("cfg") || path.is_ident("cfg_attr") {
                return Err(syn::Error::new(
                    attr.span(),
                    "a tool argument cannot be `cfg`-gated",
                ));
            }
            if path.is_ident("doc") || path.is_ident("serde") || path.is_ident("schemars") {
                field_attrs.push(attr);
            } else {
                kept.push(attr);
            }
        }
        typed.attrs = kept;
        parameters.push(Parameter::Argument(ident.clone()));
        arguments.push(Argument {
            ident,
            ty: typed.ty.as_ref().clone(),
            attrs: field_attrs,
        });
    }
    Ok((arguments, parameters))
}

/// A tool method takes `&self`: its tools share the value through an `Arc`.
fn check_ref_self(sig: &Signature) -> syn::Result<()> {
    match sig.inputs.first() {
        Some(FnArg::Receiver(receiver))
            if receiver.reference.is_some()
                && receiver.mutability.is_none()
                && receiver.colon_token.is_none() =>
        {
            Ok(())
        }
        Some(FnArg::Receiver(receiver)) => Err(syn::Error::new(
            receiver.span(),
            "a tool method takes `&self`: its tools share the value through an `Arc`, so they cannot take `self` or `&mut self` (use a `Mutex` inside for state that changes)",
        )),
        _ => Err(syn::Error::new(
            sig.ident.span(),
            "a `#[tool]` method takes `&self` first (an associated function without `self` can be a free `#[tool]` function)",
        )),
    }
}

fn check_argument_type(ty: &Type) -> syn::Result<()> {
    if let Some(args) = unqualified_args(quote!(#ty)) {
        return Err(syn::Error::new(
            args.span(),
            "this `Args` would name the generated `Args` struct inside the tool's module: name the type by a path (`crate::...::Args`) or import it under another name",
        ));
    }
    match ty {
        Type::Reference(_) => Err(syn::Error::new(
            ty.span(),
            "a tool argument must be an owned type (it is decoded from JSON): use `String` for `&str`, `Vec<T>` for `&[T]`",
        )),
        Type::ImplTrait(_) => Err(syn::Error::new(
            ty.span(),
            "a tool argument cannot be `impl Trait`: its type must be concrete",
        )),
        Type::Group(group) => check_argument_type(&group.elem),
        Type::Paren(paren) => check_argument_type(&paren.elem),
        _ => Ok(()),
    }
}

/// An `Args` in the tokens that is not after `::`: inside the generated module it would
/// resolve to the generated struct, not to the type the function means.
fn unqualified_args(tokens: TokenStream) -> Option<Ident> {
    let mut after_colons = false;
    for token in tokens {
        match token {
            TokenTree::Ident(ident) if ident == "Args" && !after_colons => return Some(ident),
            TokenTree::Group(group) => {
                if let Some(ident) = unqualified_args(group.stream()) {
                    return Some(ident);
                }
                after_colons = false;
            }
            TokenTree::Punct(punct) if punct.as_char() == ':' => {
                after_colons = true;
                continue;
            }
            _ => after_colons = false,
        }
    }
    None
}

/// The type's last path segment, through groups and parentheses.
fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        Type::Group(group) => last_segment(&group.elem),
        Type::Paren(paren) => last_segment(&paren.elem),
        _ => None,
    }
}

fn is_invocation(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|segment| segment.ident == "ToolInvocation")
}

/// `Result<..>`, `io::Result<..>`, or an alias named like one (`ToolResult<..>`): the
/// handler converts its error with `map_err`, so the compiler checks the rest.
fn is_result(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|segment| segment.ident.to_string().ends_with("Result"))
}

/// The identifier as written, without `r#`.
fn unraw(ident: &Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#")
        .map_or_else(|| text.clone(), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(attr: TokenStream, item: TokenStream) -> String {
        match expand(attr, item) {
            Ok(tokens) => panic!("expected an error, expanded to {tokens}"),
            Err(error) => error.to_string(),
        }
    }

    fn expanded(attr: TokenStream, item: TokenStream) -> String {
        expand(attr, item).unwrap().to_string()
    }

    const RESULT_ERROR: &str = "returns `Result<T, E>`";

    #[test]
    fn expands_to_the_function_and_a_module() {
        let text = expanded(
            quote!(read_only, name = "math.add", title = "Add", open_world),
            quote! {
                /// Adds two integers.
                ///
                ///   Indented.
                pub async fn add(
                    /// The first addend.
                    a: i64,
                    #[serde(default)]
                    #[allow(unused_mut)]
                    mut b: i64,
                    call: tool_context::ToolInvocation,
                ) -> Result<i64, MyError> {
                    Ok(a + b)
                }
            },
        );
        // The function is kept, without the attributes that moved to the fields.
        assert!(text.contains("pub async fn add (a : i64 , # [allow (unused_mut)] mut b : i64 , call : tool_context :: ToolInvocation ,)"), "{text}");
        assert!(text.contains("pub mod add"), "{text}");
        assert!(text.contains("The first addend.\"] pub a : i64"), "{text}");
        assert!(text.contains("# [serde (default)] pub b : i64"), "{text}");
        assert!(
            text.contains("\"math.add\" , \"Adds two integers.\\n\\n  Indented.\""),
            "{text}"
        );
        assert!(
            text.contains("super :: add (a , b , __tool_call)"),
            "{text}"
        );
        assert!(text.contains("tool . read_only ()"), "{text}");
        assert!(text.contains("tool . title (\"Add\")"), "{text}");
        assert!(text.contains("open_world_hint"), "{text}");
        assert!(!text.contains("destructive ()"), "{text}");
    }

    #[test]
    fn the_name_defaults_to_the_function_name() {
        let text = expanded(
            quote!(),
            quote! {
                #[doc = "Deletes."]
                async fn r#delete(path: String) -> std::result::Result<(), Error> { Ok(()) }
            },
        );
        assert!(
            text.contains("Tool :: typed (\"delete\" , \"Deletes.\""),
            "{text}"
        );
        assert!(text.contains("mod r#delete"), "{text}");
        // Without a `ToolInvocation` parameter the handler ignores the call.
        assert!(
            text.contains("_ : :: tool_context :: ToolInvocation"),
            "{text}"
        );
    }

    #[test]
    fn qualified_args_types_are_accepted() {
        let item = quote! { /// D.
        async fn f(a: cli::Args, b: Vec<crate::Args>, c: ::x::Args) -> Result<(), E> { Ok(()) } };
        assert!(expand(quote!(), item).is_ok());
    }

    #[test]
    fn result_aliases_are_accepted() {
        for output in [quote!(ToolResult<i64>), quote!(std::io::Result<()>)] {
            let item = quote! { /// D.
            async fn f() -> #output { todo!() } };
            assert!(expand(quote!(), item).is_ok(), "{output}");
        }
    }

    #[test]
    fn unknown_and_repeated_options_are_refused() {
        let item = quote! { /// D.
        async fn f() -> Result<(), E> { Ok(()) } };
        assert!(
            error(quote!(readonly), item.clone()).contains("unknown `#[tool]` option `readonly`")
        );
        assert!(error(quote!(a::b), item.clone()).contains("unknown `#[tool]` option"));
        assert!(error(quote!(read_only, read_only), item.clone()).contains("given twice"));
        assert!(error(quote!(name = "a", name = "b"), item.clone()).contains("given twice"));
        assert!(error(quote!(read_only = true), item.clone()).contains("takes no value"));
        assert!(error(quote!(name = ""), item.clone()).contains("cannot be empty"));
        assert!(error(quote!(name = 3), item.clone()).contains("expected string literal"));
        assert!(
            error(quote!(read_only, destructive), item.clone())
                .contains("both `read_only` and `destructive`")
        );
        assert!(
            error(quote!(destructive, read_only), item.clone())
                .contains("both `read_only` and `destructive`")
        );
        assert!(expand(quote!(open_world = false, idempotent, destructive), item).is_ok());
    }

    #[test]
    fn a_missing_doc_comment_is_refused() {
        let message = error(
            quote!(),
            quote! { async fn f() -> Result<(), E> { Ok(()) } },
        );
        assert!(message.contains("needs a doc comment"), "{message}");
        let message = error(
            quote!(),
            quote! { #[doc = "  "] #[doc(hidden)] async fn f() -> Result<(), E> { Ok(()) } },
        );
        assert!(message.contains("needs a doc comment"), "{message}");
        let message = error(
            quote!(),
            quote! { #[doc = include_str!("x.md")] async fn f() -> Result<(), E> { Ok(()) } },
        );
        assert!(message.contains("literal doc comments"), "{message}");
    }

    #[test]
    fn signatures_that_cannot_be_tools_are_refused() {
        let cases = [
            (
                quote! { /// D.
                fn f() -> Result<(), E> { Ok(()) } },
                "needs an `async fn`",
            ),
            (
                quote! { /// D.
                const async fn f() -> Result<(), E> { Ok(()) } },
                "cannot be `const`",
            ),
            (
                quote! { /// D.
                async unsafe fn f() -> Result<(), E> { Ok(()) } },
                "cannot be `unsafe`",
            ),
            (
                quote! { /// D.
                async extern "C" fn f() -> Result<(), E> { Ok(()) } },
                "cannot be `extern`",
            ),
            (
                quote! { /// D.
                async fn f<T>(t: T) -> Result<(), E> { Ok(()) } },
                "cannot be generic",
            ),
            (
                quote! { /// D.
                async fn f<'a>(t: Cow<'a, str>) -> Result<(), E> { Ok(()) } },
                "cannot be generic",
            ),
            (
                quote! { /// D.
                async fn f(t: T) -> Result<(), E> where T: Clone { Ok(()) } },
                "cannot be generic",
            ),
            (
                quote! { /// D.
                async fn f(&self) -> Result<(), E> { Ok(()) } },
                "inside a `#[tools]` impl block",
            ),
            (
                quote! { /// D.
                async fn f(self: Arc<Self>) -> Result<(), E> { Ok(()) } },
                "inside a `#[tools]` impl block",
            ),
            (
                quote! { /// D.
                async fn f((a, b): (i64, i64)) -> Result<(), E> { Ok(()) } },
                "plain name",
            ),
            (
                quote! { /// D.
                async fn f(ref a: i64) -> Result<(), E> { Ok(()) } },
                "plain name",
            ),
            (
                quote! { /// D.
                async fn f(path: &str) -> Result<(), E> { Ok(()) } },
                "owned type",
            ),
            (
                quote! { /// D.
                async fn f(path: impl AsRef<str>) -> Result<(), E> { Ok(()) } },
                "`impl Trait`",
            ),
            (
                quote! { /// D.
                async fn f(#[cfg(test)] a: i64) -> Result<(), E> { Ok(()) } },
                "`cfg`-gated",
            ),
            (
                quote! { /// D.
                async fn f(a: ToolInvocation, b: x::ToolInvocation) -> Result<(), E> { Ok(()) } },
                "at most one `ToolInvocation`",
            ),
            (
                quote! { /// D.
                async fn f() { } },
                RESULT_ERROR,
            ),
            (
                quote! { /// D.
                async fn f() -> i64 { 1 } },
                RESULT_ERROR,
            ),
            (
                quote! { /// D.
                async fn f() -> Option<i64> { None } },
                RESULT_ERROR,
            ),
            (
                quote! { /// D.
                async fn f() -> (Result<(), E>,) { (Ok(()),) } },
                RESULT_ERROR,
            ),
            (
                quote! { /// D.
                async fn f() -> Resultant { todo!() } },
                RESULT_ERROR,
            ),
            (
                quote! { /// D.
                async fn f(a: Vec<Args>) -> Result<(), E> { Ok(()) } },
                "generated `Args`",
            ),
            (
                quote! { /// D.
                struct S; },
                "goes on an `async fn`",
            ),
        ];
        for (item, expected) in cases {
            let message = error(quote!(), item.clone());
            assert!(message.contains(expected), "{item}: {message}");
        }
    }

    #[test]
    fn the_description_keeps_paragraphs_and_drops_common_indentation() {
        let function: syn::ItemFn = syn::parse2(quote! {
            /// First line
            /// continues.
            ///
            ///     code stays indented
            /** Block. */
            async fn f() -> Result<(), E> { Ok(()) }
        })
        .unwrap();
        assert_eq!(
            description(&function.attrs, &function.sig.ident).unwrap(),
            "First line\ncontinues.\n\n    code stays indented\nBlock."
        );
    }
}
