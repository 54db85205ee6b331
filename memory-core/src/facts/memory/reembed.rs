//! [`Reembed`] for [`InMemoryUserMemoryStore`]: current facts without a vector, in user
//! and fact id order.

use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::RwLock;

use super::{InMemoryUserMemoryStore, UserFacts};
use crate::error::Result;
use crate::facts::{FactChange, MemoryFact};
use crate::reembed::{
    Embedded, EmbeddingModel, EmbeddingTarget, Reembed, Unembedded, UnembeddedPage,
};
use crate::vector::normalized;

fn needs_vector(fact: &MemoryFact) -> bool {
    fact.embedding.is_none() && !fact.text.trim().is_empty()
}

impl InMemoryUserMemoryStore {
    /// The users, in id order.
    fn sorted_users(&self) -> Vec<(String, Arc<RwLock<UserFacts>>)> {
        let mut all: Vec<_> = self
            .users
            .iter()
            .map(|e| (e.key().clone(), Arc::clone(e.value())))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }
}

/// Replaces the current fact `fact.id` of `user` by `fact`.
fn replace(user: &mut UserFacts, fact: MemoryFact) -> bool {
    user.current.apply(&FactChange::Reinforced { fact })
}

#[async_trait]
impl Reembed for InMemoryUserMemoryStore {
    async fn embedding_model(&self) -> Result<Option<EmbeddingModel>> {
        Ok(self.embedding_model.lock().clone())
    }

    async fn record_embedding_model(&self, model: &EmbeddingModel) -> Result<()> {
        *self.embedding_model.lock() = Some(model.clone());
        Ok(())
    }

    async fn unembedded(&self, after: Option<&str>, limit: usize) -> Result<UnembeddedPage> {
        let after = after.and_then(|a| a.split_once('\u{0}'));
        let mut items: Vec<Unembedded> = Vec::new();
        for (user_id, user) in self.sorted_users() {
            if after.is_some_and(|(u, _)| user_id.as_str() < u) {
                continue;
            }
            let mut facts: Vec<MemoryFact> = user
                .read()
                .current
                .facts()
                .filter(|f| needs_vector(f))
                .filter(|f| after.is_none_or(|(u, id)| u != user_id || f.id.as_str() > id))
                .cloned()
                .collect();
            facts.sort_by(|a, b| a.id.cmp(&b.id));
            for fact in facts {
                if items.len() == limit {
                    let next = items.last().map(|u| match &u.target {
                        EmbeddingTarget::Fact { user_id, fact_id } => {
                            format!("{user_id}\u{0}{fact_id}")
                        }
                        EmbeddingTarget::Document { .. } => String::new(),
                    });
                    return Ok(UnembeddedPage::new(items, next));
                }
                items.push(Unembedded::new(
                    EmbeddingTarget::Fact {
                        user_id: user_id.clone(),
                        fact_id: fact.id,
                    },
                    fact.text,
                ));
            }
        }
        Ok(UnembeddedPage::new(items, None))
    }

    async fn count_unembedded(&self) -> Result<usize> {
        Ok(self
            .sorted_users()
            .iter()
            .map(|(_, u)| u.read().current.facts().filter(|f| needs_vector(f)).count())
            .sum())
    }

    async fn set_embeddings(&self, embedded: Vec<Embedded>) -> Result<usize> {
        let mut written = 0;
        for e in embedded {
            let EmbeddingTarget::Fact { user_id, fact_id } = &e.target else {
                continue;
            };
            let Some(user) = self.user(user_id) else {
                continue;
            };
            let v = normalized(e.embedding, "fact embedding")?;
            let mut user = user.write();
            let Some(mut fact) = user.current.current(fact_id).cloned() else {
                continue;
            };
            if fact.text != e.text || fact.embedding.is_some() {
                continue;
            }
            fact.embedding = Some(v);
            if replace(&mut user, fact) {
                written += 1;
            }
        }
        Ok(written)
    }

    async fn drop_embeddings(&self) -> Result<usize> {
        let mut dropped = 0;
        for (_, user) in self.sorted_users() {
            let mut user = user.write();
            let embedded: Vec<MemoryFact> = user
                .current
                .facts()
                .filter(|f| f.embedding.is_some())
                .cloned()
                .collect();
            for mut fact in embedded {
                fact.embedding = None;
                if replace(&mut user, fact) {
                    dropped += 1;
                }
            }
            for fact in user.superseded.values_mut() {
                dropped += usize::from(fact.embedding.take().is_some());
            }
        }
        Ok(dropped)
    }
}
