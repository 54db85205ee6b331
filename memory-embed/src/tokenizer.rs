//! Reading `tokenizer.json`, quickly when it holds a WordPiece model (BERT's, MiniLM's).
//!
//! The `tokenizers` crate reads a model of any kind by first buffering it whole, as a
//! generic JSON tree and then as a `serde_json::Value`, before building it: for MiniLM's
//! 30,522-token vocabulary that is most of the time a process spends starting the
//! embedder (12 ms of 13 warm, several times that cold). A WordPiece model is read here
//! straight into its own type instead, and the tokenizer assembled from the file's other
//! parts exactly as `tokenizers` assembles it; any other file goes through
//! `tokenizers`, as does the error for a file that is not a tokenizer at all.

use std::path::Path;

use serde::Deserialize;
use tokenizers::models::wordpiece::WordPiece;
use tokenizers::{
    AddedToken, DecoderWrapper, ModelWrapper, NormalizerWrapper, PaddingParams,
    PostProcessorWrapper, PreTokenizerWrapper, Tokenizer, TokenizerBuilder, TokenizerImpl,
    TruncationParams,
};

/// The tokenizer in the `tokenizer.json` at `path`; the error says what is wrong with it.
pub(crate) fn load(path: &Path) -> Result<Tokenizer, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    parse(&text)
}

/// The tokenizer `text` (the content of a `tokenizer.json`) describes.
pub(crate) fn parse(text: &str) -> Result<Tokenizer, String> {
    match serde_json::from_str::<WordPieceFile>(text) {
        Ok(file) if file.version == "1.0" => file.tokenizer(),
        // Another model or version, or not a tokenizer: `tokenizers` reads it or says why not.
        _ => text.parse::<Tokenizer>().map_err(|e| e.to_string()),
    }
}

/// A `tokenizer.json` whose model is WordPiece: the fields `tokenizers` reads, each of
/// the small ones with `tokenizers`' own type, the model with `WordPiece`'s own reader.
#[derive(Deserialize)]
struct WordPieceFile {
    version: String,
    truncation: Option<TruncationParams>,
    padding: Option<PaddingParams>,
    #[serde(default)]
    added_tokens: Vec<AddedTokenWithId>,
    normalizer: Option<NormalizerWrapper>,
    pre_tokenizer: Option<PreTokenizerWrapper>,
    post_processor: Option<PostProcessorWrapper>,
    decoder: Option<DecoderWrapper>,
    model: WordPiece,
}

/// An entry of `added_tokens`: the token and the id it was saved with (which, as in
/// `tokenizers`, is looked up again rather than trusted).
#[derive(Deserialize)]
struct AddedTokenWithId {
    #[allow(dead_code)]
    id: u32,
    #[serde(flatten)]
    token: AddedToken,
}

impl WordPieceFile {
    /// The tokenizer, assembled as `tokenizers` assembles a deserialised one: every part
    /// set on a builder, then the added tokens added.
    fn tokenizer(self) -> Result<Tokenizer, String> {
        let built: TokenizerImpl<
            ModelWrapper,
            NormalizerWrapper,
            PreTokenizerWrapper,
            PostProcessorWrapper,
            DecoderWrapper,
        > = TokenizerBuilder::new()
            .with_truncation(self.truncation)
            .with_padding(self.padding)
            .with_normalizer(self.normalizer)
            .with_pre_tokenizer(self.pre_tokenizer)
            .with_model(ModelWrapper::WordPiece(self.model))
            .with_decoder(self.decoder)
            .with_post_processor(self.post_processor)
            .build()
            .map_err(|e| e.to_string())?;
        let mut tokenizer = Tokenizer::from(built);
        let added: Vec<AddedToken> = self.added_tokens.into_iter().map(|t| t.token).collect();
        tokenizer.add_tokens(&added);
        Ok(tokenizer)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::BERT_STYLE;
    use super::*;

    /// What `tokenizers` itself reads from `text`.
    fn generic(text: &str) -> Tokenizer {
        text.parse().unwrap()
    }

    #[test]
    fn a_wordpiece_file_reads_as_tokenizers_reads_it() {
        let fast = parse(BERT_STYLE).unwrap();
        let generic = generic(BERT_STYLE);
        // The whole state, saved back: model, vocabulary, added tokens, every part.
        assert_eq!(
            fast.to_string(false).unwrap(),
            generic.to_string(false).unwrap()
        );
        for text in ["The cats sat on the MAT.", "the dog <extra> sat", ""] {
            let a = fast.encode(text, true).unwrap();
            let b = generic.encode(text, true).unwrap();
            assert_eq!(a.get_ids(), b.get_ids(), "{text:?}");
            assert_eq!(a.get_tokens(), b.get_tokens(), "{text:?}");
        }
        let cats = fast.encode("The cats sat.", true).unwrap();
        assert_eq!(cats.get_ids(), [2, 4, 5, 7, 6, 10, 3]);
        assert_eq!(fast.token_to_id("<extra>"), Some(11));
    }

    #[test]
    fn the_real_tokenizer_reads_as_tokenizers_reads_it() {
        let Some(dir) = crate::test_model_dir() else {
            return;
        };
        let text = std::fs::read_to_string(dir.join("tokenizer.json")).unwrap();
        let fast = parse(&text).unwrap();
        let generic = generic(&text);
        assert_eq!(
            fast.to_string(false).unwrap(),
            generic.to_string(false).unwrap()
        );
        let sentence = "Café crème at 07:45, 我住在北京 🍕 supercalifragilistic [MASK]";
        assert_eq!(
            fast.encode(sentence, true).unwrap().get_ids(),
            generic.encode(sentence, true).unwrap().get_ids()
        );
    }

    #[test]
    fn other_models_and_versions_go_through_tokenizers() {
        let word_level = r#"{"version": "1.0", "truncation": null, "padding": null,
          "added_tokens": [], "normalizer": null, "pre_tokenizer": {"type": "Whitespace"},
          "post_processor": null, "decoder": null,
          "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "hello": 1, "world": 2}, "unk_token": "[UNK]"}}"#;
        let tokenizer = parse(word_level).unwrap();
        assert_eq!(
            tokenizer.encode("hello world", false).unwrap().get_ids(),
            [1, 2]
        );

        let future = BERT_STYLE.replacen(r#""version": "1.0""#, r#""version": "9.0""#, 1);
        let error = parse(&future).unwrap_err();
        assert!(error.contains("9.0"), "{error}");
    }

    #[test]
    fn a_broken_file_is_an_error_not_a_panic() {
        for text in ["", "{ corrupt", "[]", r#"{"version": "1.0"}"#] {
            assert!(parse(text).is_err(), "{text:?}");
        }
        let cut = &BERT_STYLE[..BERT_STYLE.len() / 2];
        assert!(parse(cut).is_err());
    }
}

/// A tokenizer for tests.
#[cfg(test)]
pub(crate) mod testing {
    /// A small BERT-style tokenizer.json: WordPiece model, BERT normaliser and
    /// pre-tokeniser, [CLS]/[SEP] template, one added token missing from the vocabulary.
    pub(crate) const BERT_STYLE: &str = r###"{
      "version": "1.0",
      "truncation": {"max_length": 8, "strategy": "LongestFirst", "stride": 0},
      "padding": null,
      "added_tokens": [
        {"id": 0, "special": true, "content": "[PAD]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false},
        {"id": 1, "special": true, "content": "[UNK]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false},
        {"id": 2, "special": true, "content": "[CLS]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false},
        {"id": 3, "special": true, "content": "[SEP]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false},
        {"id": 11, "special": false, "content": "<extra>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": true}
      ],
      "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
      "pre_tokenizer": {"type": "BertPreTokenizer"},
      "post_processor": {"type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
        "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]}, "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
      "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
      "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
        "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "the": 4, "cat": 5, "sat": 6, "##s": 7, "on": 8, "mat": 9, ".": 10}}
    }"###;
}
