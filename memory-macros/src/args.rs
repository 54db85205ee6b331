//! Parsing of the attribute's arguments: `#[remember(key = value, ...)]`.
//!
//! Parsing is deliberately tolerant: any name and any expression are accepted here, so that
//! one mistake does not hide the next. Names are then resolved to [`Key`]s (unknown and
//! repeated names are reported), and [`crate::valid`] checks each value.

use std::fmt;

use proc_macro2::Ident;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, Token};

use crate::suggest;

/// The arguments as written: a comma-separated list, possibly empty.
pub(crate) struct AttrArgs {
    pub(crate) args: Punctuated<RawArg, Token![,]>,
}

/// One argument as written: `key = value`, or a bare `key` (which is an error later).
pub(crate) struct RawArg {
    /// The argument's name; keywords such as `crate` are accepted.
    pub(crate) name: Ident,
    /// The value after `=`, if there is one.
    pub(crate) value: Option<Expr>,
}

/// A known argument name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    Store,
    Extract,
    Inject,
    TopK,
    Recall,
    ExtractionModel,
    Crate,
}

/// An argument whose name is known and appears for the first time.
pub(crate) struct KeyedArg<'a> {
    pub(crate) key: Key,
    pub(crate) name: &'a Ident,
    pub(crate) value: Option<&'a Expr>,
}

impl Parse for AttrArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        Ok(Self {
            args: Punctuated::parse_terminated(input)?,
        })
    }
}

impl Parse for RawArg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if !input.peek(Ident::peek_any) {
            return Err(input.error(format!("expected an argument name, one of {}", Key::list())));
        }
        let name = input.call(Ident::parse_any)?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            Some(input.parse::<Expr>()?)
        } else if input.is_empty() || input.peek(Token![,]) {
            None
        } else if input.peek(Token![-]) {
            return Err(input.error(format!(
                "expected `=` after `{name}`; argument names use `_`, not `-`"
            )));
        } else {
            return Err(input.error(format!("expected `=` or `,` after `{name}`")));
        };
        Ok(Self { name, value })
    }
}

impl Key {
    /// Every key, in the order the documentation lists them.
    pub(crate) const ALL: [Key; 7] = [
        Key::Store,
        Key::Extract,
        Key::Inject,
        Key::TopK,
        Key::Recall,
        Key::ExtractionModel,
        Key::Crate,
    ];

    /// The key as it is written in the attribute.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Key::Store => "store",
            Key::Extract => "extract",
            Key::Inject => "inject",
            Key::TopK => "top_k",
            Key::Recall => "recall",
            Key::ExtractionModel => "extraction_model",
            Key::Crate => "crate",
        }
    }

    /// The key named `name`, if any.
    pub(crate) fn from_name(name: &str) -> Option<Key> {
        Key::ALL.into_iter().find(|key| key.name() == name)
    }

    /// A well-formed example of the argument, for error messages.
    pub(crate) fn example(self) -> &'static str {
        match self {
            Key::Store => "store = \"user_memory\"",
            Key::Extract => "extract = true",
            Key::Inject => "inject = true",
            Key::TopK => "top_k = 5",
            Key::Recall => "recall = 3",
            Key::ExtractionModel => "extraction_model = \"small-model\"",
            Key::Crate => "crate = \"my_reexport::agentmemory\"",
        }
    }

    /// "`store`, `extract`, …": every key, for error messages.
    pub(crate) fn list() -> KeyList {
        KeyList
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Displays every key as "`store`, `extract`, …".
pub(crate) struct KeyList;

impl fmt::Display for KeyList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, key) in Key::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "`{key}`")?;
        }
        Ok(())
    }
}

impl AttrArgs {
    /// Resolves every name to its [`Key`], in the order written.
    ///
    /// An unknown name is an error at the name, with a suggestion when it is a near miss of a
    /// known one; a repeated key is an error at its second occurrence, so only the first
    /// occurrence of each key comes back as `Ok`.
    pub(crate) fn resolve(&self) -> Vec<syn::Result<KeyedArg<'_>>> {
        let mut seen: Vec<Key> = Vec::with_capacity(self.args.len());
        let mut resolved = Vec::with_capacity(self.args.len());
        for arg in &self.args {
            let written = arg.name.unraw().to_string();
            resolved.push(match Key::from_name(&written) {
                None => Err(syn::Error::new(arg.name.span(), unknown_key(&written))),
                Some(key) if seen.contains(&key) => Err(syn::Error::new(
                    arg.name.span(),
                    format_args!("duplicate `{key}` argument; each argument may be given once"),
                )),
                Some(key) => {
                    seen.push(key);
                    Ok(KeyedArg {
                        key,
                        name: &arg.name,
                        value: arg.value.as_ref(),
                    })
                }
            });
        }
        resolved
    }
}

/// The message for an unknown argument name.
fn unknown_key(written: &str) -> String {
    let names = Key::ALL.map(Key::name);
    match suggest::closest(written, &names) {
        Some(near) => format!("unknown argument `{written}`; did you mean `{near}`?"),
        None => format!(
            "unknown argument `{written}`; expected one of {}",
            Key::list()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(tokens: &str) -> syn::Result<AttrArgs> {
        syn::parse_str::<AttrArgs>(tokens)
    }

    /// Resolves `tokens` and returns the keys found and the messages reported.
    fn resolve(tokens: &str) -> (Vec<Key>, Vec<String>) {
        let args = match parse(tokens) {
            Ok(args) => args,
            Err(err) => return (Vec::new(), vec![format!("parse error: {err}")]),
        };
        let mut keys = Vec::new();
        let mut messages = Vec::new();
        for resolved in args.resolve() {
            match resolved {
                Ok(arg) => keys.push(arg.key),
                Err(err) => messages.push(err.to_string()),
            }
        }
        (keys, messages)
    }

    #[test]
    fn empty_arguments_parse() {
        assert!(parse("").is_ok_and(|args| args.args.is_empty()));
    }

    #[test]
    fn every_key_is_recognised() {
        let (keys, errors) = resolve(
            r#"store = "s", extract = true, inject = false, top_k = 3, recall = 0,
               extraction_model = "m", crate = "a::b","#,
        );
        assert_eq!(keys, Key::ALL);
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn raw_identifiers_are_their_plain_name() {
        let (keys, errors) = resolve(r#"r#store = "s""#);
        assert_eq!(keys, [Key::Store]);
        assert!(errors.is_empty());
    }

    #[test]
    fn a_bare_key_parses_without_a_value() {
        let args = parse("store, top_k = 2").ok();
        let values: Vec<bool> = args
            .iter()
            .flat_map(|args| args.args.iter().map(|arg| arg.value.is_some()))
            .collect();
        assert_eq!(values, [false, true]);
    }

    #[test]
    fn a_near_miss_gets_a_suggestion() {
        let (keys, errors) = resolve("topk = 5");
        assert!(keys.is_empty());
        assert_eq!(errors, ["unknown argument `topk`; did you mean `top_k`?"]);
        let (keys, errors) = resolve("recal = 2");
        assert!(keys.is_empty());
        assert_eq!(errors, ["unknown argument `recal`; did you mean `recall`?"]);
    }

    #[test]
    fn a_far_miss_lists_the_keys() {
        let (_, errors) = resolve("color = \"red\"");
        assert_eq!(
            errors,
            [
                "unknown argument `color`; expected one of `store`, `extract`, `inject`, \
              `top_k`, `recall`, `extraction_model`, `crate`"
            ]
        );
    }

    #[test]
    fn a_repeated_key_is_reported_once_and_the_first_wins() {
        let (keys, errors) = resolve("top_k = 1, store = \"s\", top_k = 2, top_k = 3");
        assert_eq!(keys, [Key::TopK, Key::Store]);
        assert_eq!(
            errors,
            [
                "duplicate `top_k` argument; each argument may be given once",
                "duplicate `top_k` argument; each argument may be given once",
            ]
        );
    }

    #[test]
    fn a_repeated_recall_is_reported_at_its_second_occurrence() {
        let (keys, errors) = resolve("recall = 0, top_k = 2, recall = 4");
        assert_eq!(keys, [Key::Recall, Key::TopK]);
        assert_eq!(
            errors,
            ["duplicate `recall` argument; each argument may be given once"]
        );
    }

    #[test]
    fn every_unknown_and_repeated_key_is_reported() {
        let (keys, errors) = resolve("stor = \"a\", inject = true, injct = true, inject = false");
        assert_eq!(keys, [Key::Inject]);
        assert_eq!(errors.len(), 3, "{errors:?}");
    }

    #[test]
    fn a_dash_in_a_name_is_explained() {
        let err = parse("top-k = 5").err().map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("expected `=` after `top`; argument names use `_`, not `-`")
        );
    }

    #[test]
    fn a_literal_where_a_name_belongs_is_a_parse_error() {
        let err = parse("\"store\" = 1").err().map(|e| e.to_string());
        assert!(
            err.as_deref()
                .is_some_and(|e| e.starts_with("expected an argument name")),
            "{err:?}"
        );
    }
}
