//! [`Reembed`] for [`InMemoryVectorStore`]: documents without a vector, in namespace and
//! id order.

use std::sync::Arc;

use async_trait::async_trait;

use super::{InMemoryVectorStore, Namespace};
use crate::error::Result;
use crate::reembed::{
    Embedded, EmbeddingModel, EmbeddingTarget, Reembed, Unembedded, UnembeddedPage,
};
use crate::vector::normalized;

/// Cursor of the page after `(namespace, id)`: the two joined by a NUL, which neither
/// contains in practice (and which sorts before every other character, so the order of
/// cursors is the order of the pairs).
fn cursor(namespace: &str, id: &str) -> String {
    format!("{namespace}\u{0}{id}")
}

fn missing(ns: &Namespace, slot: u32) -> bool {
    ns.dense.get(slot).is_none()
}

impl InMemoryVectorStore {
    /// The namespaces, in name order.
    fn sorted_namespaces(&self) -> Vec<(String, Arc<parking_lot::RwLock<Namespace>>)> {
        let mut all: Vec<_> = self
            .namespaces
            .iter()
            .map(|e| (e.key().clone(), Arc::clone(e.value())))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }
}

#[async_trait]
impl Reembed for InMemoryVectorStore {
    async fn embedding_model(&self) -> Result<Option<EmbeddingModel>> {
        Ok(self.embedding_model.lock().clone())
    }

    async fn record_embedding_model(&self, model: &EmbeddingModel) -> Result<()> {
        *self.embedding_model.lock() = Some(model.clone());
        Ok(())
    }

    async fn unembedded(&self, after: Option<&str>, limit: usize) -> Result<UnembeddedPage> {
        let (after_ns, after_id) = match after.and_then(|a| a.split_once('\u{0}')) {
            Some((ns, id)) => (Some(ns), id),
            None => (None, ""),
        };
        let mut items = Vec::new();
        for (name, ns) in self.sorted_namespaces() {
            if after_ns.is_some_and(|a| name.as_str() < a) {
                continue;
            }
            let ns = ns.read();
            let from = match after_ns {
                Some(a) if a == name => std::ops::Bound::Excluded(after_id),
                _ => std::ops::Bound::Unbounded,
            };
            for (id, &slot) in ns.ids.range::<str, _>((from, std::ops::Bound::Unbounded)) {
                let Some(rec) = ns.record(slot) else { continue };
                if !missing(&ns, slot) || rec.content.trim().is_empty() {
                    continue;
                }
                if items.len() == limit {
                    let next = items.last().map(|u: &Unembedded| match &u.target {
                        EmbeddingTarget::Document { namespace, id } => cursor(namespace, id),
                        EmbeddingTarget::Fact { .. } => String::new(),
                    });
                    return Ok(UnembeddedPage::new(items, next));
                }
                items.push(Unembedded::new(
                    EmbeddingTarget::Document {
                        namespace: name.clone(),
                        id: id.to_string(),
                    },
                    rec.content.clone(),
                ));
            }
        }
        Ok(UnembeddedPage::new(items, None))
    }

    async fn count_unembedded(&self) -> Result<usize> {
        Ok(self
            .sorted_namespaces()
            .iter()
            .map(|(_, ns)| {
                let ns = ns.read();
                ns.ids
                    .values()
                    .filter(|&&slot| {
                        missing(&ns, slot)
                            && ns
                                .record(slot)
                                .is_some_and(|r| !r.content.trim().is_empty())
                    })
                    .count()
            })
            .sum())
    }

    async fn set_embeddings(&self, embedded: Vec<Embedded>) -> Result<usize> {
        let mut written = 0;
        for e in embedded {
            let EmbeddingTarget::Document { namespace, id } = &e.target else {
                continue;
            };
            let Some(ns) = self.namespace(namespace) else {
                continue;
            };
            let v = normalized(e.embedding, "document embedding")?;
            let mut ns = ns.write();
            let Some(&slot) = ns.ids.get(id.as_str()) else {
                continue;
            };
            let same = ns.record(slot).is_some_and(|r| r.content == e.text);
            if same && missing(&ns, slot) {
                ns.dense.insert(slot, &v)?;
                written += 1;
            }
        }
        Ok(written)
    }

    async fn drop_embeddings(&self) -> Result<usize> {
        let mut dropped = 0;
        for (_, ns) in self.sorted_namespaces() {
            let mut ns = ns.write();
            let slots: Vec<u32> = ns.ids.values().copied().collect();
            for slot in slots {
                if !missing(&ns, slot) {
                    ns.dense.remove(slot);
                    dropped += 1;
                }
            }
        }
        Ok(dropped)
    }
}
