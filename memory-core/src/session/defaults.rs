//! The offline defaults a session uses when the container names none.

use std::sync::Arc;

use crate::extract::FactExtractor;
use crate::summarize::Summarizer;

/// The rule-based extractor.
pub(crate) fn extractor() -> Arc<dyn FactExtractor> {
    Arc::new(crate::extract::RuleExtractor::new())
}

/// The extractive summariser.
pub(crate) fn summarizer() -> Arc<dyn Summarizer> {
    Arc::new(crate::summarize::ExtractiveSummarizer::new())
}
