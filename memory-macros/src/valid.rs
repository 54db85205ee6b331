//! The rules each argument's value must follow, checked into [`Settings`].
//!
//! - `store`, `extraction_model`: a non-empty string literal;
//! - `extract`, `inject`: `true` or `false`;
//! - `top_k`: a positive integer literal that fits `usize`;
//! - `recall`: a non-negative integer literal that fits `usize` (`0` turns recall off);
//! - `crate`: a string literal that parses as a path.
//!
//! Every broken rule is recorded in the [`Ctxt`] with the span of the offending value, and
//! checking goes on, so all mistakes are reported together.

use proc_macro2::Span;
use syn::{Expr, ExprLit, Lit, LitBool, LitStr, Path};

use crate::args::{Key, KeyedArg};
use crate::ctxt::Ctxt;

/// The checked arguments: only the ones that were written, each well-formed.
#[derive(Default)]
pub(crate) struct Settings {
    pub(crate) store: Option<LitStr>,
    pub(crate) extract: Option<LitBool>,
    pub(crate) inject: Option<LitBool>,
    pub(crate) top_k: Option<Count>,
    pub(crate) recall: Option<Count>,
    pub(crate) extraction_model: Option<LitStr>,
    pub(crate) krate: CratePath,
}

/// A checked integer argument (`top_k`, `recall`) and the span of its literal.
pub(crate) struct Count {
    pub(crate) value: usize,
    pub(crate) span: Span,
}

/// Where the runtime is reached from.
#[derive(Default)]
pub(crate) enum CratePath {
    /// `::agentmemory`.
    #[default]
    Default,
    /// The path given with `crate = "…"`.
    Given(Path),
    /// `crate = …` was given but is not a path: the runtime cannot be named at all.
    Invalid,
}

/// Checks the value of every resolved argument; errors from resolving are recorded in the
/// same, source, order.
pub(crate) fn validate(args: Vec<syn::Result<KeyedArg<'_>>>, cx: &mut Ctxt) -> Settings {
    let mut settings = Settings::default();
    for arg in args {
        let arg = match arg {
            Ok(arg) => arg,
            Err(err) => {
                cx.push(err);
                continue;
            }
        };
        let Some(value) = arg.value.map(strip_groups) else {
            cx.error(
                arg.name.span(),
                format_args!(
                    "`{key}` needs a value, e.g. `{example}`",
                    key = arg.key,
                    example = arg.key.example()
                ),
            );
            if arg.key == Key::Crate {
                settings.krate = CratePath::Invalid;
            }
            continue;
        };
        match arg.key {
            Key::Store => settings.store = non_empty_string(Key::Store, value, cx),
            Key::Extract => settings.extract = boolean(Key::Extract, value, cx),
            Key::Inject => settings.inject = boolean(Key::Inject, value, cx),
            Key::TopK => settings.top_k = top_k(value, cx),
            Key::Recall => settings.recall = recall(value, cx),
            Key::ExtractionModel => {
                settings.extraction_model = non_empty_string(Key::ExtractionModel, value, cx);
            }
            Key::Crate => {
                settings.krate = match crate_path(value, cx) {
                    Some(path) => CratePath::Given(path),
                    None => CratePath::Invalid,
                }
            }
        }
    }
    contradictions(&settings, cx);
    settings
}

/// Rules between arguments: an argument that cannot take effect because another one
/// turns its feature off is an error at that argument.
fn contradictions(settings: &Settings, cx: &mut Ctxt) {
    if let (Some(extract), Some(model)) = (&settings.extract, &settings.extraction_model) {
        if !extract.value {
            cx.error(
                model.span(),
                "`extraction_model` has no effect with `extract = false`; remove one of them",
            );
        }
    }
    // Facts and recalled episodes both reach the prompt through the injected memory block.
    if settings.inject.as_ref().is_some_and(|inject| !inject.value) {
        for (key, count) in [
            (Key::TopK, &settings.top_k),
            (Key::Recall, &settings.recall),
        ] {
            if let Some(count) = count {
                cx.error(
                    count.span,
                    format_args!("`{key}` has no effect with `inject = false`; remove one of them"),
                );
            }
        }
    }
}

/// Looks through the invisible groups `macro_rules!` wraps around `$value:expr`.
fn strip_groups(mut expr: &Expr) -> &Expr {
    while let Expr::Group(group) = expr {
        expr = &group.expr;
    }
    expr
}

/// The literal `expr` is, if it is one (without attributes).
fn literal(expr: &Expr) -> Option<&Lit> {
    match expr {
        Expr::Lit(ExprLit { attrs, lit }) if attrs.is_empty() => Some(lit),
        _ => None,
    }
}

/// "a string literal", "a path", …: what the user wrote instead, for error messages.
fn describe(expr: &Expr) -> &'static str {
    match literal(expr) {
        Some(Lit::Str(_)) => "a string literal",
        Some(Lit::Int(_)) => "an integer literal",
        Some(Lit::Float(_)) => "a float literal",
        Some(Lit::Bool(_)) => "a bool literal",
        Some(Lit::Char(_)) => "a char literal",
        Some(Lit::ByteStr(_) | Lit::CStr(_) | Lit::Byte(_)) => "a byte literal",
        Some(_) => "a literal",
        None => match expr {
            Expr::Path(_) => "a path",
            Expr::Unary(_) => "a unary expression",
            _ => "an expression",
        },
    }
}

/// `store` and `extraction_model`: a string literal with something in it.
fn non_empty_string(key: Key, expr: &Expr, cx: &mut Ctxt) -> Option<LitStr> {
    let Some(Lit::Str(lit)) = literal(expr) else {
        let hint = match expr {
            Expr::Path(path) => match path.path.get_ident() {
                Some(ident) => format!("; write `{key} = \"{ident}\"`"),
                None => format!(", e.g. `{}`", key.example()),
            },
            _ => format!(", e.g. `{}`", key.example()),
        };
        cx.error_spanned_by(
            expr,
            format_args!(
                "`{key}` expects a string literal, found {}{hint}",
                describe(expr)
            ),
        );
        return None;
    };
    if !lit.suffix().is_empty() {
        cx.error(
            lit.span(),
            format_args!("`{key}` expects a string literal without a suffix"),
        );
        return None;
    }
    if lit.value().trim().is_empty() {
        cx.error(
            lit.span(),
            format_args!(
                "`{key}` must not be empty, e.g. `{}`; leave `{key}` out for the default",
                key.example()
            ),
        );
        return None;
    }
    Some(lit.clone())
}

/// `extract` and `inject`: `true` or `false`.
fn boolean(key: Key, expr: &Expr, cx: &mut Ctxt) -> Option<LitBool> {
    match literal(expr) {
        Some(Lit::Bool(lit)) => Some(lit.clone()),
        Some(Lit::Str(lit)) if matches!(lit.value().as_str(), "true" | "false") => {
            cx.error(
                lit.span(),
                format_args!(
                    "`{key}` expects `true` or `false` without quotes: `{key} = {}`",
                    lit.value()
                ),
            );
            None
        }
        _ => {
            cx.error_spanned_by(
                expr,
                format_args!(
                    "`{key}` expects `true` or `false`, found {}",
                    describe(expr)
                ),
            );
            None
        }
    }
}

/// What an integer argument counts, for its error messages.
struct Counted {
    key: Key,
    /// "a positive integer", "a non-negative integer": what the value must be.
    kind: &'static str,
    /// What the number means, e.g. "how many facts to inject".
    meaning: &'static str,
}

/// `top_k`: how many facts are injected; at least 1.
const TOP_K: Counted = Counted {
    key: Key::TopK,
    kind: "a positive integer",
    meaning: "how many facts to inject",
};

/// `recall`: how many earlier messages (episodes) are recalled; 0 turns recall off.
const RECALL: Counted = Counted {
    key: Key::Recall,
    kind: "a non-negative integer",
    meaning: "how many earlier messages to recall, 0 for none",
};

/// `top_k`: an unsuffixed (or `usize`) integer literal, at least 1, that fits `usize`.
fn top_k(expr: &Expr, cx: &mut Ctxt) -> Option<Count> {
    let count = count(&TOP_K, expr, cx)?;
    if count.value == 0 {
        cx.error(
            count.span,
            "`top_k` must be at least 1; to inject no facts write `inject = false`",
        );
        return None;
    }
    Some(count)
}

/// `recall`: an unsuffixed (or `usize`) integer literal that fits `usize`; 0 is allowed.
fn recall(expr: &Expr, cx: &mut Ctxt) -> Option<Count> {
    count(&RECALL, expr, cx)
}

/// An unsuffixed (or `usize`) integer literal that fits `usize`, for the argument `counted`.
fn count(counted: &Counted, expr: &Expr, cx: &mut Ctxt) -> Option<Count> {
    let Counted { key, kind, meaning } = *counted;
    let lit = match literal(expr) {
        Some(Lit::Int(lit)) => lit,
        Some(Lit::Str(lit)) if lit.value().trim().parse::<usize>().is_ok() => {
            cx.error(
                lit.span(),
                format_args!(
                    "`{key}` expects an integer literal without quotes: `{key} = {}`",
                    lit.value().trim()
                ),
            );
            return None;
        }
        _ if matches!(
            expr,
            Expr::Unary(syn::ExprUnary {
                op: syn::UnOp::Neg(_),
                ..
            })
        ) =>
        {
            cx.error_spanned_by(expr, format_args!("`{key}` must be {kind}: {meaning}"));
            return None;
        }
        _ => {
            cx.error_spanned_by(
                expr,
                format_args!(
                    "`{key}` expects {kind} literal, found {}, e.g. `{}`",
                    describe(expr),
                    key.example()
                ),
            );
            return None;
        }
    };
    if !matches!(lit.suffix(), "" | "usize") {
        cx.error(
            lit.span(),
            format_args!(
                "`{key}` is a `usize`; write `{key} = {}` without the `{}` suffix",
                lit.base10_digits(),
                lit.suffix()
            ),
        );
        return None;
    }
    match lit.base10_parse::<usize>() {
        Ok(value) => Some(Count {
            value,
            span: lit.span(),
        }),
        Err(_) => {
            cx.error(
                lit.span(),
                format_args!(
                    "`{key}` is too large: it must fit in `usize` (at most {})",
                    usize::MAX
                ),
            );
            None
        }
    }
}

/// `crate`: a string literal holding a module path, such as `"my_reexport::agentmemory"`.
fn crate_path(expr: &Expr, cx: &mut Ctxt) -> Option<Path> {
    let Some(Lit::Str(lit)) = literal(expr) else {
        let hint = match expr {
            Expr::Path(path) => {
                let written = quote::ToTokens::to_token_stream(&path.path)
                    .to_string()
                    .replace(' ', "");
                format!("; write `crate = \"{written}\"`")
            }
            _ => format!(", e.g. `{}`", Key::Crate.example()),
        };
        cx.error_spanned_by(
            expr,
            format_args!(
                "`crate` expects a string literal holding a path, found {}{hint}",
                describe(expr)
            ),
        );
        return None;
    };
    match lit.parse_with(Path::parse_mod_style) {
        Ok(path) => Some(path),
        Err(_) => {
            cx.error(
                lit.span(),
                format_args!(
                    "`crate` must be a path to the agentmemory crate or a re-export of it, \
                     such as \"my_reexport::agentmemory\"; {:?} is not a path",
                    lit.value()
                ),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::AttrArgs;

    /// Parses, resolves and validates `tokens`; returns the settings and every message.
    fn check(tokens: &str) -> (Settings, Vec<String>) {
        let args = match syn::parse_str::<AttrArgs>(tokens) {
            Ok(args) => args,
            Err(err) => return (Settings::default(), vec![format!("parse error: {err}")]),
        };
        let mut cx = Ctxt::new();
        let settings = validate(args.resolve(), &mut cx);
        let messages = match cx.check() {
            Ok(()) => Vec::new(),
            Err(errors) => errors.into_iter().map(|e| e.to_string()).collect(),
        };
        (settings, messages)
    }

    fn one_error(tokens: &str) -> String {
        let (_, mut messages) = check(tokens);
        assert_eq!(messages.len(), 1, "{tokens}: {messages:?}");
        messages.remove(0)
    }

    #[test]
    fn well_formed_arguments_are_kept() {
        let (settings, messages) = check(
            r#"store = "user_memory", extract = true, inject = true, top_k = 12usize,
               recall = 7, extraction_model = "small-model", crate = "::reexport::agentmemory""#,
        );
        assert!(messages.is_empty(), "{messages:?}");
        assert_eq!(
            settings.store.map(|s| s.value()).as_deref(),
            Some("user_memory")
        );
        assert_eq!(settings.extract.map(|b| b.value), Some(true));
        assert_eq!(settings.inject.map(|b| b.value), Some(true));
        assert_eq!(settings.top_k.map(|k| k.value), Some(12));
        assert_eq!(settings.recall.map(|r| r.value), Some(7));
        assert_eq!(
            settings.extraction_model.map(|s| s.value()).as_deref(),
            Some("small-model")
        );
        let CratePath::Given(path) = settings.krate else {
            panic!("the crate path was not kept");
        };
        assert!(path.leading_colon.is_some());
        assert_eq!(path.segments.len(), 2);
    }

    #[test]
    fn arguments_that_cannot_take_effect_are_rejected() {
        assert_eq!(
            one_error(r#"extract = false, extraction_model = "m""#),
            "`extraction_model` has no effect with `extract = false`; remove one of them"
        );
        assert_eq!(
            one_error("top_k = 3, inject = false"),
            "`top_k` has no effect with `inject = false`; remove one of them"
        );
        assert_eq!(
            one_error("recall = 2, inject = false"),
            "`recall` has no effect with `inject = false`; remove one of them"
        );
        // Even `recall = 0` says something that `inject = false` already says.
        assert_eq!(
            one_error("inject = false, recall = 0"),
            "`recall` has no effect with `inject = false`; remove one of them"
        );
        let (_, both) =
            check(r#"extract = false, inject = false, top_k = 2, extraction_model = "m""#);
        assert_eq!(both.len(), 2, "{both:?}");
        let (_, all) = check("inject = false, recall = 1, top_k = 2");
        assert_eq!(
            all,
            [
                "`top_k` has no effect with `inject = false`; remove one of them",
                "`recall` has no effect with `inject = false`; remove one of them",
            ]
        );
        // With the feature on (or left at its default) the argument is fine.
        for ok in [
            r#"extract = true, extraction_model = "m""#,
            "inject = true, top_k = 3",
            "top_k = 3",
            "inject = true, recall = 3",
            "recall = 0",
        ] {
            assert!(check(ok).1.is_empty(), "{ok}");
        }
    }

    #[test]
    fn nothing_written_is_all_defaults() {
        let (settings, messages) = check("");
        assert!(messages.is_empty());
        assert!(settings.store.is_none() && settings.top_k.is_none());
        assert!(settings.recall.is_none());
        assert!(matches!(settings.krate, CratePath::Default));
    }

    #[test]
    fn top_k_rules() {
        assert_eq!(
            one_error("top_k = 0"),
            "`top_k` must be at least 1; to inject no facts write `inject = false`"
        );
        assert_eq!(
            one_error("top_k = \"5\""),
            "`top_k` expects an integer literal without quotes: `top_k = 5`"
        );
        assert_eq!(
            one_error("top_k = -1"),
            "`top_k` must be a positive integer: how many facts to inject"
        );
        assert_eq!(
            one_error("top_k = 2.5"),
            "`top_k` expects a positive integer literal, found a float literal, e.g. `top_k = 5`"
        );
        assert_eq!(
            one_error("top_k = 5u8"),
            "`top_k` is a `usize`; write `top_k = 5` without the `u8` suffix"
        );
        assert!(one_error("top_k = 99999999999999999999999999").starts_with("`top_k` is too large"));
        assert!(one_error("top_k = K").contains("found a path"));
    }

    #[test]
    fn recall_rules() {
        for (written, value) in [
            ("recall = 0", 0),
            ("recall = 3", 3),
            ("recall = 40usize", 40),
        ] {
            let (settings, messages) = check(written);
            assert!(messages.is_empty(), "{written}: {messages:?}");
            assert_eq!(settings.recall.map(|r| r.value), Some(value), "{written}");
        }
        assert_eq!(
            one_error("recall = \"3\""),
            "`recall` expects an integer literal without quotes: `recall = 3`"
        );
        assert_eq!(
            one_error("recall = -1"),
            "`recall` must be a non-negative integer: how many earlier messages to recall, 0 for none"
        );
        assert_eq!(
            one_error("recall = 2.5"),
            "`recall` expects a non-negative integer literal, found a float literal, e.g. `recall = 3`"
        );
        assert_eq!(
            one_error("recall = 5u8"),
            "`recall` is a `usize`; write `recall = 5` without the `u8` suffix"
        );
        assert!(
            one_error("recall = 99999999999999999999999999").starts_with("`recall` is too large")
        );
        assert!(one_error("recall = N").contains("found a path"));
        assert!(one_error("recall = true").contains("found a bool literal"));
        let (settings, _) = check("recall = -1");
        assert!(settings.recall.is_none());
    }

    #[test]
    fn string_rules() {
        assert_eq!(
            one_error("store = 5"),
            "`store` expects a string literal, found an integer literal, e.g. `store = \"user_memory\"`"
        );
        assert_eq!(
            one_error("store = user_memory"),
            "`store` expects a string literal, found a path; write `store = \"user_memory\"`"
        );
        assert!(one_error("store = \"\"").starts_with("`store` must not be empty"));
        assert!(one_error("extraction_model = \"  \"")
            .starts_with("`extraction_model` must not be empty"));
        assert!(one_error("store = \"a\"x").contains("without a suffix"));
    }

    #[test]
    fn bool_rules() {
        assert_eq!(
            one_error("extract = \"yes\""),
            "`extract` expects `true` or `false`, found a string literal"
        );
        assert_eq!(
            one_error("inject = \"false\""),
            "`inject` expects `true` or `false` without quotes: `inject = false`"
        );
        assert!(one_error("inject = 1").contains("found an integer literal"));
    }

    #[test]
    fn crate_rules() {
        assert!(one_error("crate = \"not a path\"").contains("\"not a path\" is not a path"));
        assert!(one_error("crate = \"a::\"").contains("is not a path"));
        assert!(one_error("crate = \"\"").contains("is not a path"));
        assert_eq!(
            one_error("crate = my::agentmemory"),
            "`crate` expects a string literal holding a path, found a path; \
             write `crate = \"my::agentmemory\"`"
        );
        let (settings, _) = check("crate = \"a b\"");
        assert!(matches!(settings.krate, CratePath::Invalid));
    }

    #[test]
    fn a_key_without_a_value_shows_an_example() {
        assert_eq!(
            one_error("store"),
            "`store` needs a value, e.g. `store = \"user_memory\"`"
        );
        let (settings, _) = check("crate");
        assert!(matches!(settings.krate, CratePath::Invalid));
    }

    #[test]
    fn every_mistake_is_reported_together_in_source_order() {
        let (_, messages) = check(
            r#"store = "", top_k = 0, colour = 1, extract = "yes", store = "x", recall = -2"#,
        );
        let starts: Vec<&str> = messages
            .iter()
            .map(|m| m.split_once(' ').map_or(m.as_str(), |(first, _)| first))
            .collect();
        assert_eq!(
            starts,
            [
                "`store`",
                "`top_k`",
                "unknown",
                "`extract`",
                "duplicate",
                "`recall`"
            ],
            "{messages:?}"
        );
    }
}
