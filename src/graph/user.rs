//! The user's entity: observations on it are the user's facts, and the user's facts are
//! its observations.
//!
//! A graph linked to a user (see [`KnowledgeGraph::for_user`](super::KnowledgeGraph::for_user))
//! treats the entity named exactly like the user id as the user. An observation added to
//! it (by `create_entities` or `add_observations`) is also upserted as a fact of the user,
//! reconciled with what is known like any stated fact; deleting it forgets the current
//! facts of the same text. Reading the entity shows, after its own observations, the
//! user's current facts it does not hold yet (learned in chat, for instance); when the
//! graph holds no such entity but the user has facts, reads show one of type
//! [`USER_ENTITY_TYPE`].

use std::collections::HashSet;
use std::sync::Arc;

use agentmemory_core::error::Result;
use agentmemory_core::facts::{FactCandidate, FactSource, UserMemoryStore};

use super::index::{shares_a_word, MEANING_THRESHOLD};
use super::model::Entity;

/// The user (and so the name of the user's entity) when none is configured: the name the
/// reference MCP `memory` server's suggested system prompt gives the user
/// ("Assume that you are interacting with default_user").
pub const DEFAULT_USER: &str = "default_user";

/// The type of the user's entity when it is shown from the user's facts alone.
pub const USER_ENTITY_TYPE: &str = "person";

/// How sure a statement written to the graph is, as a fact: stated outright.
const STATED_CONFIDENCE: f32 = 0.9;

/// How many facts a search considers.
const FACT_SEARCH_DEPTH: usize = 20;

/// A graph's link to its user's facts.
#[derive(Clone)]
pub(crate) struct UserLink {
    facts: Arc<dyn UserMemoryStore>,
    user_id: String,
    /// Where facts written from the graph say they came from: the graph's log.
    source: String,
}

impl UserLink {
    pub(crate) fn new(facts: Arc<dyn UserMemoryStore>, user_id: String, source: String) -> Self {
        Self {
            facts,
            user_id,
            source,
        }
    }

    /// The user id, which is also the name of the user's entity.
    pub(crate) fn user_id(&self) -> &str {
        &self.user_id
    }

    /// Upserts `texts` as facts of the user.
    pub(crate) async fn remember(&self, texts: &[String]) -> Result<()> {
        for text in texts {
            let mut source = FactSource::default();
            source.session_id = Some(self.source.clone());
            let candidate =
                FactCandidate::new(text.as_str(), STATED_CONFIDENCE).with_source(source);
            self.facts.upsert(&self.user_id, candidate).await?;
        }
        Ok(())
    }

    /// Deletes the user's current facts whose text is one of `texts`.
    pub(crate) async fn forget(&self, texts: &[String]) -> Result<()> {
        if texts.is_empty() {
            return Ok(());
        }
        for fact in self.facts.list(&self.user_id).await? {
            if texts.contains(&fact.text) {
                self.facts.delete(&self.user_id, &fact.id).await?;
            }
        }
        Ok(())
    }

    /// The texts of the user's current facts, oldest first.
    pub(crate) async fn fact_texts(&self) -> Result<Vec<String>> {
        Ok(self
            .facts
            .list(&self.user_id)
            .await?
            .into_iter()
            .map(|f| f.text)
            .collect())
    }

    /// The user's entity as the graph shows it: `held` (the graph's own, if any) with the
    /// facts it lacks appended; `None` when there is neither.
    pub(crate) async fn entity(&self, held: Option<&Entity>) -> Result<Option<Entity>> {
        let facts = self.fact_texts().await?;
        let mut entity = match held {
            Some(e) => e.clone(),
            None if facts.is_empty() => return Ok(None),
            None => Entity::new(
                self.user_id.as_str(),
                USER_ENTITY_TYPE,
                Vec::<String>::new(),
            ),
        };
        for text in facts {
            if !entity.observations.contains(&text) {
                entity.observations.push(text);
            }
        }
        Ok(Some(entity))
    }

    /// The best relevance of a user's fact to `query`, when one matches: it shares a word
    /// with the query or is close in meaning.
    pub(crate) async fn search(&self, query: &str) -> Result<Option<f32>> {
        let words: HashSet<String> = agentmemory_core::store_support::terms(query)
            .into_iter()
            .collect();
        let found = self
            .facts
            .search(&self.user_id, query, FACT_SEARCH_DEPTH)
            .await?;
        Ok(found
            .iter()
            .filter(|f| f.relevance >= MEANING_THRESHOLD || shares_a_word(&words, &f.fact.text))
            .map(|f| f.relevance)
            .reduce(f32::max))
    }
}
