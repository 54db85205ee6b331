//! Generation: the struct as written, plus `impl Remember` carrying the spec.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Item, ItemStruct};

use crate::args::AttrArgs;
use crate::ctxt::Ctxt;
use crate::valid::{self, CratePath, Settings};

/// Expands `#[remember(args)] item`.
///
/// The item is always re-emitted unchanged. On success an `impl Remember` follows it; on
/// failure every error follows it as a `compile_error!`, and, when the item is a struct and the
/// runtime path is known, an empty `impl Remember` (spec `None`) so that uses of the struct as
/// an agent do not add a second, spurious error.
pub(crate) fn remember(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut cx = Ctxt::new();
    let settings = match syn::parse2::<AttrArgs>(args) {
        Ok(parsed) => Some(valid::validate(parsed.resolve(), &mut cx)),
        Err(err) => {
            cx.push(err);
            None
        }
    };
    let target = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Struct(target)) => Some(target),
        Ok(other) => {
            cx.push(not_a_struct(&other));
            None
        }
        Err(err) => {
            cx.push(err);
            None
        }
    };
    let generated = match cx.check() {
        Ok(()) => match (&target, &settings) {
            (Some(target), Some(settings)) => impl_remember(target, settings, true),
            // Unreachable: both are `Some` whenever no error was recorded.
            _ => TokenStream::new(),
        },
        Err(errors) => {
            let compile_errors = errors.to_compile_error();
            let fallback = match (&target, &settings) {
                (Some(target), Some(settings)) => impl_remember(target, settings, false),
                _ => TokenStream::new(),
            };
            quote! { #compile_errors #fallback }
        }
    };
    quote! { #item #generated }
}

/// The `const _: () = { impl Remember for … };` block.
///
/// With `with_spec` false the impl is empty (`SPEC` keeps its default, `None`): the fallback
/// emitted next to compile errors. Nothing is emitted when the runtime path is invalid.
fn impl_remember(target: &ItemStruct, settings: &Settings, with_spec: bool) -> TokenStream {
    let private = match &settings.krate {
        CratePath::Default => quote!(::agentmemory::__private),
        CratePath::Given(path) => quote!(#path::__private),
        CratePath::Invalid => return TokenStream::new(),
    };
    let ident = &target.ident;
    let (impl_generics, ty_generics, where_clause) = target.generics.split_for_impl();
    // A `#[cfg]` written below `#[remember]` must also switch the impl off with the struct.
    let cfgs = target
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("cfg"));
    let body = if with_spec {
        let calls = builder_calls(settings);
        quote! {
            const SPEC: ::core::option::Option<#private::RememberSpec> =
                ::core::option::Option::Some(#private::RememberSpec::new() #(#calls)*);
        }
    } else {
        TokenStream::new()
    };
    quote! {
        #(#cfgs)*
        const _: () = {
            #[automatically_derived]
            #[allow(unused_qualifications)]
            impl #impl_generics #private::Remember for #ident #ty_generics #where_clause {
                #body
            }
        };
    }
}

/// `.store("…")`, `.top_k(…)`, …: one call per argument written, spanned at its value.
fn builder_calls(settings: &Settings) -> Vec<TokenStream> {
    let mut calls = Vec::new();
    if let Some(store) = &settings.store {
        calls.push(quote_spanned!(store.span()=> .store(#store)));
    }
    if let Some(extract) = &settings.extract {
        calls.push(quote_spanned!(extract.span=> .extract(#extract)));
    }
    if let Some(inject) = &settings.inject {
        calls.push(quote_spanned!(inject.span=> .inject(#inject)));
    }
    if let Some(top_k) = &settings.top_k {
        let mut value = Literal::usize_unsuffixed(top_k.value);
        value.set_span(top_k.span);
        calls.push(quote_spanned!(top_k.span=> .top_k(#value)));
    }
    if let Some(recall) = &settings.recall {
        let mut value = Literal::usize_unsuffixed(recall.value);
        value.set_span(recall.span);
        calls.push(quote_spanned!(recall.span=> .recall(#value)));
    }
    if let Some(model) = &settings.extraction_model {
        calls.push(quote_spanned!(model.span()=> .extraction_model(#model)));
    }
    calls
}

/// The error for anything that is not a struct, at the item's keyword.
fn not_a_struct(item: &Item) -> syn::Error {
    let (span, what) = keyword(item);
    syn::Error::new(
        span,
        format_args!("`#[remember]` applies to agent structs, not to {what}"),
    )
}

/// The span of the item's keyword (`enum`, `fn`, …) and what the item is, for messages.
fn keyword(item: &Item) -> (Span, &'static str) {
    match item {
        Item::Enum(item) => (item.enum_token.span, "enums"),
        Item::Union(item) => (item.union_token.span, "unions"),
        Item::Fn(item) => (item.sig.fn_token.span, "functions"),
        Item::Trait(item) => (item.trait_token.span, "traits"),
        Item::TraitAlias(item) => (item.trait_token.span, "trait aliases"),
        Item::Impl(item) => (item.impl_token.span, "impl blocks"),
        Item::Mod(item) => (item.mod_token.span, "modules"),
        Item::Type(item) => (item.type_token.span, "type aliases"),
        Item::Const(item) => (item.const_token.span, "constants"),
        Item::Static(item) => (item.static_token.span, "statics"),
        Item::Use(item) => (item.use_token.span, "`use` declarations"),
        Item::ExternCrate(item) => (item.extern_token.span, "`extern crate` declarations"),
        Item::ForeignMod(item) => (item.abi.extern_token.span, "`extern` blocks"),
        Item::Macro(item) => (item.mac.path.span(), "macro invocations"),
        other => (other.to_token_stream().span(), "this kind of item"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(args: &str, item: &str) -> String {
        let (Ok(args), Ok(item)) = (args.parse::<TokenStream>(), item.parse::<TokenStream>())
        else {
            return "<lex error>".to_owned();
        };
        remember(args, item).to_string()
    }

    fn normalized(tokens: TokenStream) -> String {
        tokens.to_string()
    }

    #[test]
    fn a_struct_gets_its_spec() {
        let out = expand(
            r#"store = "s", top_k = 3usize"#,
            "pub struct Agent { x: u8 }",
        );
        let expected = normalized(quote! {
            pub struct Agent { x: u8 }
            const _: () = {
                #[automatically_derived]
                #[allow(unused_qualifications)]
                impl ::agentmemory::__private::Remember for Agent {
                    const SPEC: ::core::option::Option<::agentmemory::__private::RememberSpec> =
                        ::core::option::Option::Some(
                            ::agentmemory::__private::RememberSpec::new().store("s").top_k(3)
                        );
                }
            };
        });
        assert_eq!(out, expected);
    }

    #[test]
    fn recall_is_emitted_when_written_and_left_to_the_default_otherwise() {
        let out = expand("top_k = 2, recall = 0usize", "struct Agent;");
        assert!(
            out.contains("RememberSpec :: new () . top_k (2) . recall (0))"),
            "{out}"
        );
        let out = expand("recall = 8", "struct Agent;");
        assert!(
            out.contains("RememberSpec :: new () . recall (8))"),
            "{out}"
        );
        let out = expand("top_k = 2", "struct Agent;");
        assert!(!out.contains("recall"), "{out}");
    }

    #[test]
    fn recall_with_inject_false_is_an_error_and_an_empty_impl() {
        let out = expand("inject = false, recall = 2", "struct Agent;");
        assert_eq!(out.matches("compile_error").count(), 1, "{out}");
        assert!(
            out.contains("`recall` has no effect with `inject = false`"),
            "{out}"
        );
        assert!(out.contains("Remember for Agent { }"), "{out}");
    }

    #[test]
    fn generics_and_where_clauses_go_through_split_for_impl() {
        let out = expand(
            "",
            "struct Agent<'a, T: Clone, const N: usize> where T: Send { x: &'a [T; N] }",
        );
        assert!(
            out.contains(
                "impl < 'a , T : Clone , const N : usize > :: agentmemory :: __private :: Remember \
                 for Agent < 'a , T , N > where T : Send"
            ),
            "{out}"
        );
    }

    #[test]
    fn the_crate_override_replaces_the_runtime_path() {
        let out = expand(r#"crate = "my::agentmemory""#, "struct Agent;");
        assert!(
            out.contains("impl my :: agentmemory :: __private :: Remember for Agent"),
            "{out}"
        );
        assert!(!out.contains("impl :: agentmemory"), "{out}");
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn cfg_attributes_are_copied_onto_the_impl() {
        let out = expand("", "#[cfg(test)] #[derive(Debug)] struct Agent;");
        assert!(out.contains("# [cfg (test)] const _"), "{out}");
        assert!(!out.contains("# [derive (Debug)] const _"), "{out}");
    }

    #[test]
    fn the_item_is_kept_verbatim() {
        let item = "/// Docs.\n#[derive(Debug)]\npub(crate) struct Agent<T>(T) where T: Copy;";
        let out = expand("", item);
        let Ok(original) = item.parse::<TokenStream>() else {
            panic!("the test item does not lex");
        };
        assert!(out.starts_with(&original.to_string()), "{out}");
    }

    #[test]
    fn errors_keep_the_item_and_add_an_empty_impl() {
        let out = expand("top_k = 0, topk = 1", "struct Agent;");
        assert!(out.starts_with("struct Agent ;"), "{out}");
        assert_eq!(out.matches("compile_error").count(), 2, "{out}");
        assert!(out.contains("Remember for Agent { }"), "{out}");
        assert!(!out.contains("SPEC"), "{out}");
    }

    #[test]
    fn a_bad_crate_path_emits_no_impl_at_all() {
        let out = expand(r#"crate = "not a path""#, "struct Agent;");
        assert_eq!(out.matches("compile_error").count(), 1, "{out}");
        assert!(!out.contains("Remember"), "{out}");
    }

    #[test]
    fn an_enum_is_rejected_and_kept() {
        let out = expand("", "enum Agent { A }");
        assert!(out.starts_with("enum Agent { A }"), "{out}");
        assert!(
            out.contains("`#[remember]` applies to agent structs, not to enums"),
            "{out}"
        );
        assert!(!out.contains("impl"), "{out}");
    }

    #[test]
    fn a_function_is_rejected() {
        let out = expand("store = 1", "fn agent() {}");
        assert!(out.contains("not to functions"), "{out}");
        assert_eq!(out.matches("compile_error").count(), 2, "{out}");
    }

    #[test]
    fn unparsable_arguments_are_one_error_and_no_impl() {
        let out = expand("store = ", "struct Agent;");
        assert!(out.starts_with("struct Agent ;"), "{out}");
        assert_eq!(out.matches("compile_error").count(), 1, "{out}");
        assert!(!out.contains("Remember"), "{out}");
    }
}
