//! [`Reembed`] for the file store.
//!
//! Pages run over users' fact files, then namespaces' document files, each in id order:
//! cursor `f\0<user>\0<fact id>` or `d\0<namespace>\0<document id>`. Vectors are written
//! one file at a time, under the file's lock. The model is recorded in the store's header
//! file, `<dir>/store.json`.

use std::collections::BTreeMap;

use agentmemory_core::reembed::{
    Embedded, EmbeddingModel, EmbeddingTarget, Reembed, Unembedded, UnembeddedPage,
};
use agentmemory_core::store_support::normalized;
use agentmemory_core::{MemoryError, MemoryFact, Result};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::atomic::{read_doc, write_doc, FORMAT_VERSION};
use super::{FileStore, FACTS_DIR, VECTORS_DIR};

const HEADER_FORMAT: &str = "agentmem.store";
const HEADER_FILE: &str = "store.json";

/// `<dir>/store.json`: what holds for the whole store.
#[derive(Serialize, Deserialize)]
struct Header {
    format: String,
    version: u32,
    /// The model that made the stored vectors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    embedding_model: Option<EmbeddingModel>,
}

fn needs_vector(fact: &MemoryFact) -> bool {
    fact.is_current() && fact.embedding.is_none() && !fact.text.trim().is_empty()
}

/// `(kind, scope, id)` of a cursor.
fn parse(after: Option<&str>) -> Result<Option<(char, String, String)>> {
    let Some(after) = after else { return Ok(None) };
    let mut parts = after.splitn(3, '\u{0}');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(k @ ("f" | "d")), Some(scope), Some(id)) => Ok(Some((
            k.chars().next().unwrap_or('f'),
            scope.to_owned(),
            id.to_owned(),
        ))),
        _ => Err(MemoryError::invalid(
            "reembed cursor",
            format!("`{after}` is not one of this store's"),
        )),
    }
}

fn cursor_of(u: &Unembedded) -> String {
    match &u.target {
        EmbeddingTarget::Fact { user_id, fact_id } => format!("f\u{0}{user_id}\u{0}{fact_id}"),
        EmbeddingTarget::Document { namespace, id } => format!("d\u{0}{namespace}\u{0}{id}"),
        _ => String::new(),
    }
}

impl FileStore {
    /// `(scope, id, text)` of what has no vector: every user's current facts, then every
    /// namespace's documents, in order.
    async fn all_unembedded(&self) -> Result<Vec<Unembedded>> {
        let mut out = Vec::new();
        for user in self.ids_in(FACTS_DIR, "list users").await? {
            let mut facts: Vec<MemoryFact> = self
                .read_facts(&user, "list facts without a vector")
                .await?
                .into_iter()
                .filter(needs_vector)
                .collect();
            facts.sort_by(|a, b| a.id.cmp(&b.id));
            out.extend(facts.into_iter().map(|f| {
                Unembedded::new(
                    EmbeddingTarget::Fact {
                        user_id: user.clone(),
                        fact_id: f.id,
                    },
                    f.text,
                )
            }));
        }
        for ns in self.ids_in(VECTORS_DIR, "list namespaces").await? {
            let Some(file) = self
                .read_vectors(&ns, "list documents without a vector")
                .await?
            else {
                continue;
            };
            out.extend(
                file.documents
                    .into_iter()
                    .filter(|(_, d)| d.embedding.is_none() && !d.content.trim().is_empty())
                    .map(|(id, d)| {
                        Unembedded::new(
                            EmbeddingTarget::Document {
                                namespace: ns.clone(),
                                id,
                            },
                            d.content,
                        )
                    }),
            );
        }
        Ok(out)
    }
}

#[async_trait]
impl Reembed for FileStore {
    async fn embedding_model(&self) -> Result<Option<EmbeddingModel>> {
        let path = self.inner.root.join(HEADER_FILE);
        let header = self
            .blocking("read the store header", move || {
                read_doc::<Header>(&path, HEADER_FORMAT)
            })
            .await?;
        Ok(header.and_then(|h| h.embedding_model))
    }

    async fn record_embedding_model(&self, model: &EmbeddingModel) -> Result<()> {
        let path = self.inner.root.join(HEADER_FILE);
        let model = model.clone();
        self.exclusive(path.clone(), "record the embedding model", move || {
            let mut header = read_doc::<Header>(&path, HEADER_FORMAT)?.unwrap_or(Header {
                format: HEADER_FORMAT.to_owned(),
                version: FORMAT_VERSION,
                embedding_model: None,
            });
            header.embedding_model = Some(model);
            write_doc(&path, &header)
        })
        .await
    }

    async fn unembedded(&self, after: Option<&str>, limit: usize) -> Result<UnembeddedPage> {
        let after = parse(after)?;
        let limit = limit.max(1);
        let mut items: Vec<Unembedded> = self
            .all_unembedded()
            .await?
            .into_iter()
            .filter(|u| match (&after, &u.target) {
                (None, _) => true,
                (Some(('f', user, id)), EmbeddingTarget::Fact { user_id, fact_id }) => {
                    (user_id, fact_id) > (user, id)
                }
                (Some(('f', _, _)), _) => true,
                (Some((_, ns, id)), EmbeddingTarget::Document { namespace, id: doc }) => {
                    (namespace, doc) > (ns, id)
                }
                (Some(_), _) => false,
            })
            .take(limit + 1)
            .collect();
        let next = if items.len() > limit {
            items.truncate(limit);
            items.last().map(cursor_of)
        } else {
            None
        };
        Ok(UnembeddedPage::new(items, next))
    }

    async fn count_unembedded(&self) -> Result<usize> {
        Ok(self.all_unembedded().await?.len())
    }

    async fn set_embeddings(&self, embedded: Vec<Embedded>) -> Result<usize> {
        // One rewrite per file.
        let mut by_user: BTreeMap<String, Vec<(String, String, Vec<f32>)>> = BTreeMap::new();
        let mut by_ns: BTreeMap<String, Vec<(String, String, Vec<f32>)>> = BTreeMap::new();
        for e in embedded {
            let v = normalized(e.embedding, "embedding")?;
            match e.target {
                EmbeddingTarget::Fact { user_id, fact_id } => {
                    by_user
                        .entry(user_id)
                        .or_default()
                        .push((fact_id, e.text, v));
                }
                EmbeddingTarget::Document { namespace, id } => {
                    by_ns.entry(namespace).or_default().push((id, e.text, v));
                }
                _ => {}
            }
        }
        let mut written = 0;
        for (user, vectors) in by_user {
            written += self
                .modify_facts(&user, "store facts' vectors", move |file| {
                    let mut n = 0;
                    for (id, text, v) in vectors {
                        if let Some(f) = file
                            .facts
                            .iter_mut()
                            .find(|f| f.id == id && needs_vector(f) && f.text == text)
                        {
                            f.embedding = Some(v);
                            n += 1;
                        }
                    }
                    Ok((n, n > 0))
                })
                .await?;
        }
        for (ns, vectors) in by_ns {
            written += self
                .modify_vectors(&ns, "store documents' vectors", move |file| {
                    let mut n = 0;
                    let mut dimension = file.dimension();
                    for (id, text, v) in vectors {
                        let Some(doc) = file.documents.get_mut(&id) else {
                            continue;
                        };
                        if doc.embedding.is_some() || doc.content != text {
                            continue;
                        }
                        match dimension {
                            Some(d) if d != v.len() => {
                                return Err(MemoryError::DimensionMismatch {
                                    expected: d,
                                    found: v.len(),
                                })
                            }
                            _ => dimension = Some(v.len()),
                        }
                        doc.embedding = Some(v);
                        n += 1;
                    }
                    Ok((n, n > 0))
                })
                .await?;
        }
        Ok(written)
    }

    async fn drop_embeddings(&self) -> Result<usize> {
        let mut dropped = 0;
        for user in self.ids_in(FACTS_DIR, "list users").await? {
            dropped += self
                .modify_facts(&user, "drop facts' vectors", |file| {
                    let n = file
                        .facts
                        .iter_mut()
                        .filter_map(|f| f.embedding.take())
                        .count();
                    Ok((n, n > 0))
                })
                .await?;
        }
        for ns in self.ids_in(VECTORS_DIR, "list namespaces").await? {
            dropped += self
                .modify_vectors(&ns, "drop documents' vectors", |file| {
                    let n = file
                        .documents
                        .values_mut()
                        .filter_map(|d| d.embedding.take())
                        .count();
                    Ok((n, n > 0))
                })
                .await?;
        }
        Ok(dropped)
    }
}
