//! `long_term_memory_strategy`: what background extraction makes of a session's messages.
//!
//! | strategy | config | long-term memories |
//! |---|---|---|
//! | `discrete` (default) | — | the facts agentmem's extractor reads in the user's messages (the rule extractor offline, the LLM extractor with a model), `semantic`, reconciled: a repeat reinforces, a contradiction supersedes |
//! | `summary` | `max_summary_length` (words, default 500) | one `episodic` memory per session, topic `summary`, rewritten as the session grows; written by the model, by the extractive summariser offline or when the model fails |
//! | `preferences` | — | the preference-like facts only: likes and dislikes, favourites, diet |
//! | `custom` | `custom_prompt` (required; `{message}` is replaced by the messages, `{current_datetime}` by the time) | what the model answers as `{"memories": [{"type", "text", "topics", "entities", "event_date"}]}`; needs a model (400 without one) |

use serde_json::Value;

use super::error::ApiError;

/// The default `max_summary_length`, in words.
pub const DEFAULT_SUMMARY_WORDS: usize = 500;

/// A session's parsed `long_term_memory_strategy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Strategy {
    /// Facts about the user, reconciled.
    Discrete,
    /// One summary memory of the session.
    Summary {
        /// Longest summary, in words.
        max_words: usize,
    },
    /// Preference-like facts only.
    Preferences,
    /// A prompt of the client's, run by the configured model.
    Custom {
        /// The prompt template.
        prompt: String,
    },
}

impl Strategy {
    /// Parses `{"strategy": "...", "config": {...}}` (a bare name is accepted too);
    /// `has_model` says whether a generation model is configured (`custom` needs one).
    pub fn parse(value: &Value, has_model: bool) -> Result<Self, ApiError> {
        let (name, config) = match value {
            Value::Null => return Ok(Strategy::Discrete),
            Value::String(name) => (name.as_str(), None),
            Value::Object(object) => (
                object
                    .get("strategy")
                    .and_then(Value::as_str)
                    .unwrap_or("discrete"),
                object.get("config").filter(|c| !c.is_null()),
            ),
            _ => {
                return Err(ApiError::unprocessable(
                    "body",
                    "long_term_memory_strategy must be an object {\"strategy\", \"config\"}",
                ))
            }
        };
        if config.is_some_and(|c| !c.is_object()) {
            return Err(ApiError::unprocessable(
                "body",
                "long_term_memory_strategy.config must be an object",
            ));
        }
        let field = |key: &str| config.and_then(|c| c.get(key)).filter(|v| !v.is_null());
        match name {
            "discrete" => Ok(Strategy::Discrete),
            "preferences" => Ok(Strategy::Preferences),
            "summary" => {
                let max_words = match field("max_summary_length") {
                    None => DEFAULT_SUMMARY_WORDS,
                    Some(v) => v.as_u64().filter(|n| *n > 0).ok_or_else(|| {
                        ApiError::unprocessable(
                            "body",
                            "max_summary_length must be a positive whole number of words",
                        )
                    })? as usize,
                };
                Ok(Strategy::Summary { max_words })
            }
            "custom" => {
                let prompt = field("custom_prompt")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .ok_or_else(|| {
                        ApiError::BadRequest(
                            "The custom strategy needs config.custom_prompt".into(),
                        )
                    })?;
                if !has_model {
                    return Err(ApiError::BadRequest(
                        "The custom strategy needs a generation model, and none is configured: \
                         set GENERATION_MODEL (and OPENAI_BASE_URL / OPENAI_API_KEY) where the server runs"
                            .into(),
                    ));
                }
                Ok(Strategy::Custom {
                    prompt: prompt.to_owned(),
                })
            }
            other => Err(ApiError::unprocessable(
                "body",
                format!(
                    "unknown long_term_memory_strategy `{other}`: expected discrete, summary, preferences or custom"
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;
    use serde_json::json;

    #[test]
    fn strategies_parse_with_their_config() {
        assert_eq!(
            Strategy::parse(&json!({"strategy": "discrete", "config": {}}), false).unwrap(),
            Strategy::Discrete
        );
        assert_eq!(
            Strategy::parse(&json!({"strategy": "summary"}), false).unwrap(),
            Strategy::Summary { max_words: 500 }
        );
        assert_eq!(
            Strategy::parse(
                &json!({"strategy": "summary", "config": {"max_summary_length": 40}}),
                false
            )
            .unwrap(),
            Strategy::Summary { max_words: 40 }
        );
        assert_eq!(
            Strategy::parse(&json!("preferences"), false).unwrap(),
            Strategy::Preferences
        );
        let custom = json!({"strategy": "custom", "config": {"custom_prompt": "Find: {message}"}});
        assert_eq!(
            Strategy::parse(&custom, true).unwrap(),
            Strategy::Custom {
                prompt: "Find: {message}".into()
            }
        );
    }

    #[test]
    fn bad_strategies_are_client_errors() {
        let custom = json!({"strategy": "custom", "config": {"custom_prompt": "Find: {message}"}});
        let err = Strategy::parse(&custom, false).unwrap_err();
        assert_eq!(err.status(), StatusCode::BAD_REQUEST);
        assert!(err.to_string().contains("GENERATION_MODEL"), "{err}");
        let err = Strategy::parse(&json!({"strategy": "custom"}), true).unwrap_err();
        assert_eq!(err.status(), StatusCode::BAD_REQUEST);
        for bad in [
            json!({"strategy": "everything"}),
            json!({"strategy": "summary", "config": {"max_summary_length": "long"}}),
            json!({"strategy": "discrete", "config": []}),
            json!(3),
        ] {
            let err = Strategy::parse(&bad, true).unwrap_err();
            assert_eq!(err.status(), StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
        }
    }
}
