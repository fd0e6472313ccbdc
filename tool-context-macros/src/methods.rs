//! The expansion of `#[tools]` on an impl block: every method marked `#[tool(...)]` becomes a
//! tool sharing the value (through an `Arc`), with the same rules as the function form.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Ident, ImplItem, ImplItemFn, ItemImpl, Meta, Type};

use crate::expand::{
    Options, Receiver, args_struct, call_pattern, check_signature, description, hints, into_error,
    passed, result_type, split_parameters, tool_name,
};

/// Expands `#[tools] impl Type { ... }`.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    if !attr.is_empty() {
        return Err(syn::Error::new(
            attr.span(),
            "`#[tools]` takes no options: put them on each method's `#[tool(...)]`",
        ));
    }
    let mut block: ItemImpl = syn::parse2(item)?;
    check_block(&block)?;
    let module = format_ident!("__{}_tools", type_name(&block.self_ty));
    let mut modules = Vec::new();
    let mut tools = Vec::new();
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else {
            continue;
        };
        let Some(options) = take_tool_attribute(method)? else {
            continue;
        };
        let (args, tool) = method_tool(method, &options, &module)?;
        modules.push(args);
        tools.push(tool);
    }
    if tools.is_empty() {
        return Err(syn::Error::new(
            block.self_ty.span(),
            "`#[tools]` found no method marked `#[tool]` in this impl block",
        ));
    }
    let self_ty = &block.self_ty;
    let module_doc = format!(
        "The arguments (`Args`) of each `#[tool]` method of `impl {}`, by method.",
        quote!(#self_ty)
    );
    Ok(quote! {
        #block

        #[doc = #module_doc]
        #[doc(hidden)]
        #[allow(non_snake_case)]
        mod #module {
            #[allow(unused_imports)]
            use super::*;
            #(#modules)*
        }

        impl #self_ty {
            /// The tools of this impl block's `#[tool]` methods, in order, each calling its
            /// method on this shared value.
            // `E` may be `ToolCallError` itself.
            #[allow(clippy::useless_conversion)]
            pub fn tools(self: &::std::sync::Arc<Self>) -> ::std::vec::Vec<::tool_context::Tool> {
                ::std::vec![#(#tools),*]
            }
        }
    })
}

fn check_block(block: &ItemImpl) -> syn::Result<()> {
    if let Some((_, path, _)) = &block.trait_ {
        return Err(syn::Error::new(
            path.span(),
            "`#[tools]` goes on an inherent impl block (`impl MyTools { ... }`), not a trait impl",
        ));
    }
    if !block.generics.params.is_empty() || block.generics.where_clause.is_some() {
        return Err(syn::Error::new(
            block.generics.span(),
            "a `#[tools]` impl block cannot be generic: each tool's schema is fixed",
        ));
    }
    Ok(())
}

/// The last path segment of the implementing type, for the name of the arguments module.
fn type_name(ty: &Type) -> String {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .map_or_else(|| "impl".to_owned(), |segment| segment.ident.to_string()),
        _ => "impl".to_owned(),
    }
}

/// Whether `attr` is `#[tool]` or `#[...::tool]`.
fn is_tool_attribute(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|segment| segment.ident == "tool")
}

/// Removes the method's `#[tool(...)]` and returns its options, or `None` for a plain method.
fn take_tool_attribute(method: &mut ImplItemFn) -> syn::Result<Option<Options>> {
    let Some(index) = method.attrs.iter().position(is_tool_attribute) else {
        return Ok(None);
    };
    let attr = method.attrs.remove(index);
    if let Some(again) = method.attrs.iter().find(|attr| is_tool_attribute(attr)) {
        return Err(syn::Error::new(
            again.span(),
            "a method takes one `#[tool]`",
        ));
    }
    match attr.meta {
        Meta::Path(_) => Ok(Some(Options::default())),
        Meta::List(list) => Options::parse(list.tokens).map(Some),
        Meta::NameValue(value) => Err(syn::Error::new(
            value.span(),
            "write `#[tool]` or `#[tool(name = \"...\", ...)]`",
        )),
    }
}

/// The arguments module of one method and the expression building its tool.
fn method_tool(
    method: &mut ImplItemFn,
    options: &Options,
    module: &Ident,
) -> syn::Result<(TokenStream, TokenStream)> {
    check_signature(&method.sig)?;
    let description = description(&method.attrs, &method.sig.ident)?;
    let (arguments, parameters) = split_parameters(&mut method.sig, Receiver::RefSelf)?;
    let output = result_type(&method.sig)?;
    let ident = &method.sig.ident;
    let name = tool_name(options, ident);
    let args_struct = args_struct(&arguments);
    let args_module = quote! {
        pub mod #ident {
            #[allow(unused_imports)]
            use super::*;
            #args_struct
        }
    };
    let this = Ident::new("__tool_self", Span::mixed_site());
    let args = Ident::new("__tool_args", Span::mixed_site());
    let call = Ident::new("__tool_call", Span::mixed_site());
    let field_names = arguments.iter().map(|argument| &argument.ident);
    let passed = passed(&parameters, &call);
    let call_pattern = call_pattern(&parameters, &call);
    let into_error = into_error(&output);
    let hints = hints(options);
    // Spanned on the return type, as in the function form.
    let typed = quote_spanned! {output.span()=>
        ::tool_context::Tool::typed(
            #name,
            #description,
            move |#args: #module::#ident::Args, #call_pattern: ::tool_context::ToolInvocation| {
                let #this = ::std::sync::Arc::clone(&#this);
                async move {
                    let #module::#ident::Args { #(#field_names,)* } = #args;
                    #this.#ident(#(#passed),*).await.map_err(#into_error)
                }
            },
        )
    };
    let tool = quote! {
        {
            let #this = ::std::sync::Arc::clone(self);
            let tool = #typed;
            #(#hints)*
            tool
        }
    };
    Ok((args_module, tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(item: TokenStream) -> String {
        match expand(TokenStream::new(), item) {
            Ok(tokens) => panic!("expected an error, expanded to {tokens}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn marked_methods_become_tools_and_the_rest_stay_as_written() {
        let text = expand(
            TokenStream::new(),
            quote! {
                impl Notes {
                    /// Appends a line.
                    #[tool(name = "notes.append", destructive)]
                    pub async fn append(&self, /// The line.
                        text: String, call: ToolInvocation) -> Result<usize, Error> { todo!() }
                    /// Reads them.
                    #[tool_context::tool(read_only)]
                    async fn read(&self) -> Result<Vec<String>, Error> { todo!() }
                    fn helper(&self) -> usize { 1 }
                }
            },
        )
        .unwrap()
        .to_string();
        assert!(!text.contains("# [tool"), "the markers are removed: {text}");
        assert!(
            text.contains("pub async fn append (& self , text : String , call : ToolInvocation)"),
            "{text}"
        );
        assert!(text.contains("fn helper (& self) -> usize"), "{text}");
        assert!(text.contains("mod __Notes_tools"), "{text}");
        assert!(text.contains("pub mod append"), "{text}");
        assert!(text.contains("The line.\"] pub text : String"), "{text}");
        assert!(
            text.contains("\"notes.append\" , \"Appends a line.\""),
            "{text}"
        );
        assert!(text.contains("\"read\" , \"Reads them.\""), "{text}");
        assert!(text.contains(". append (text , __tool_call)"), "{text}");
        assert!(text.contains("tool . destructive ()"), "{text}");
        assert!(text.contains("tool . read_only ()"), "{text}");
        assert!(
            text.contains("pub fn tools (self : & :: std :: sync :: Arc < Self >)"),
            "{text}"
        );
    }

    #[test]
    fn misuse_is_refused_with_a_reason() {
        let cases = [
            (
                quote! { impl Notes { fn helper(&self) {} } },
                "found no method marked",
            ),
            (
                quote! { impl Display for Notes { /// D.
                #[tool] async fn f(&self) -> Result<(), E> { Ok(()) } } },
                "not a trait impl",
            ),
            (
                quote! { impl<T> Notes<T> { /// D.
                #[tool] async fn f(&self) -> Result<(), E> { Ok(()) } } },
                "cannot be generic",
            ),
            (
                quote! { impl Notes { /// D.
                #[tool] async fn f(&mut self) -> Result<(), E> { Ok(()) } } },
                "takes `&self`",
            ),
            (
                quote! { impl Notes { /// D.
                #[tool] async fn f(self) -> Result<(), E> { Ok(()) } } },
                "takes `&self`",
            ),
            (
                quote! { impl Notes { /// D.
                #[tool] async fn f(a: i64) -> Result<(), E> { Ok(()) } } },
                "takes `&self` first",
            ),
            (
                quote! { impl Notes {
                #[tool] async fn f(&self) -> Result<(), E> { Ok(()) } } },
                "needs a doc comment",
            ),
            (
                quote! { impl Notes { /// D.
                #[tool(readonly)] async fn f(&self) -> Result<(), E> { Ok(()) } } },
                "unknown `#[tool]` option",
            ),
            (
                quote! { impl Notes { /// D.
                #[tool] #[tool] async fn f(&self) -> Result<(), E> { Ok(()) } } },
                "one `#[tool]`",
            ),
            (
                quote! { impl Notes { /// D.
                #[tool] fn f(&self) -> Result<(), E> { Ok(()) } } },
                "needs an `async fn`",
            ),
        ];
        for (item, expected) in cases {
            let message = error(item.clone());
            assert!(message.contains(expected), "{item}: {message}");
        }
        assert!(
            expand(quote!(name = "x"), quote! { impl Notes {} })
                .unwrap_err()
                .to_string()
                .contains("takes no options")
        );
    }
}
