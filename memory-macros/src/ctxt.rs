//! The error collector: every mistake is recorded with its span and reported together.

use std::fmt::Display;

use proc_macro2::Span;
use quote::ToTokens;

/// Collects `syn::Error`s so that one expansion reports every mistake at once.
///
/// Errors are merged with [`syn::Error::combine`]; each keeps its own span, so rustc shows
/// one diagnostic per offending token.
#[derive(Default)]
pub(crate) struct Ctxt {
    errors: Option<syn::Error>,
}

impl Ctxt {
    /// An empty collector.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Records an error at `span`.
    pub(crate) fn error(&mut self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Records an error spanning all of `tokens` (from their first to their last token).
    pub(crate) fn error_spanned_by(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an already built error (for example a parse error from `syn`).
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.errors {
            Some(all) => all.combine(error),
            None => self.errors = Some(error),
        }
    }

    /// Ends the collection: `Ok` when nothing went wrong, otherwise every error, combined.
    pub(crate) fn check(self) -> syn::Result<()> {
        match self.errors {
            Some(errors) => Err(errors),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_context_is_ok() {
        assert!(Ctxt::new().check().is_ok());
    }

    #[test]
    fn every_error_is_kept_in_order() {
        let mut cx = Ctxt::new();
        cx.error(Span::call_site(), "first");
        cx.error(Span::call_site(), "second");
        let messages: Vec<String> = match cx.check() {
            Ok(()) => Vec::new(),
            Err(errors) => errors.into_iter().map(|e| e.to_string()).collect(),
        };
        assert_eq!(messages, ["first", "second"]);
    }
}
