//! [`VectorEpisodeStore`]: episodes kept as documents of any [`VectorStore`].

use std::collections::HashSet;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::id::{millis, said_at_millis};
use super::{rank, Episode, EpisodeQuery, EpisodeStore, Retention, ScoredEpisode, When};
use crate::error::{MemoryError, Result};
use crate::message::{Metadata, Role};
use crate::vector::{Document, Filter, SearchHit, SearchQuery, VectorStore};

/// The namespace prefix of episodes in a vector store.
pub const NAMESPACE_PREFIX: &str = "episodes/";

/// How many episodes of a named period are read to rank them by time.
const PERIOD_CANDIDATES: usize = 400;

/// Episodes said up to this long after a period may be about it ("last weekend I…").
const TOLD_LATER: chrono::Duration = chrono::Duration::days(14);

/// An [`EpisodeStore`] over any [`VectorStore`]: each user's episodes are the documents of
/// namespace `episodes/{user}`, with the episode's conversation, role, time and named
/// dates as metadata. Search is the vector store's own (sparse, dense or hybrid, as it is
/// configured); ids sort by time, so listing and retention read ids only.
///
/// ```
/// use std::sync::Arc;
/// use agentmemory_core::episodes::VectorEpisodeStore;
/// use agentmemory_core::InMemoryVectorStore;
///
/// let episodes = VectorEpisodeStore::new(Arc::new(InMemoryVectorStore::new()));
/// ```
#[derive(Clone)]
pub struct VectorEpisodeStore {
    vectors: Arc<dyn VectorStore>,
}

impl std::fmt::Debug for VectorEpisodeStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorEpisodeStore").finish_non_exhaustive()
    }
}

impl VectorEpisodeStore {
    /// Episodes stored in `vectors`.
    pub fn new(vectors: Arc<dyn VectorStore>) -> Self {
        Self { vectors }
    }

    fn namespace(user_id: &str) -> Result<String> {
        if user_id.is_empty() {
            return Err(MemoryError::invalid("user id", "must not be empty"));
        }
        Ok(format!("{NAMESPACE_PREFIX}{user_id}"))
    }

    /// The episodes with these ids, in the order given (missing ones skipped).
    async fn read(&self, ns: &str, user_id: &str, ids: &[String]) -> Result<Vec<Episode>> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(doc) = self.vectors.get(ns, id).await? {
                out.push(from_parts(user_id, id, doc.content, &doc.metadata)?);
            }
        }
        Ok(out)
    }

    /// The ids of episodes said in `[from, to)`, oldest first.
    async fn ids_between(&self, ns: &str, from: u64, to: u64) -> Result<Vec<String>> {
        let ids = self.vectors.ids(ns).await?;
        Ok(ids
            .into_iter()
            .filter(|id| said_at_millis(id).is_some_and(|t| t >= from && t < to))
            .collect())
    }
}

/// The document an episode is stored as.
fn to_document(episode: Episode) -> Document {
    let mut metadata = Metadata::new();
    metadata.insert(
        "conversation".into(),
        Value::String(episode.conversation_id),
    );
    metadata.insert("message".into(), Value::String(episode.message_id));
    metadata.insert("role".into(), Value::String(episode.role.as_str().into()));
    metadata.insert("at".into(), json!(episode.observed_at.to_rfc3339()));
    if !episode.when.is_empty() {
        metadata.insert(
            "when".into(),
            serde_json::to_value(&episode.when).unwrap_or(Value::Null),
        );
    }
    // The message it answers is searched with it: stored after the text, whose length
    // says where to cut when reading back.
    let content = match episode.context {
        Some(context) => {
            metadata.insert("text_len".into(), json!(episode.text.len()));
            format!("{}\n\n{context}", episode.text)
        }
        None => episode.text,
    };
    let mut document = Document::new(content).with_id(episode.id);
    document.metadata = metadata;
    document
}

/// The episode a stored document holds.
fn from_parts(user_id: &str, id: &str, content: String, metadata: &Metadata) -> Result<Episode> {
    let corrupt = |what: &str| MemoryError::Corrupt {
        what: format!("episode {id}"),
        source: format!("its {what} is missing or malformed").into(),
    };
    let field = |key: &str| metadata.get(key).and_then(Value::as_str);
    let role = match field("role") {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("system") => Role::System,
        Some("tool") => Role::Tool,
        _ => return Err(corrupt("role")),
    };
    let observed_at = field("at")
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&Utc))
        .ok_or_else(|| corrupt("time"))?;
    let (text, context) = match metadata.get("text_len").and_then(Value::as_u64) {
        None => (content, None),
        Some(n) => {
            let n = usize::try_from(n)
                .ok()
                .filter(|n| content.is_char_boundary(*n));
            let n = n.ok_or_else(|| corrupt("text length"))?;
            let context = content[n..].trim_start().to_owned();
            let mut text = content;
            text.truncate(n);
            (text, Some(context).filter(|c| !c.is_empty()))
        }
    };
    let when: Vec<When> = match metadata.get("when") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => serde_json::from_value(v.clone()).map_err(|_| corrupt("dates"))?,
    };
    Ok(Episode {
        id: id.to_owned(),
        user_id: user_id.to_owned(),
        conversation_id: field("conversation")
            .ok_or_else(|| corrupt("conversation"))?
            .to_owned(),
        message_id: field("message").unwrap_or_default().to_owned(),
        role,
        text,
        observed_at,
        when,
        context,
    })
}

fn from_hit(user_id: &str, hit: SearchHit) -> Result<(Episode, f32)> {
    let episode = from_parts(user_id, &hit.id, hit.content, &hit.metadata)?;
    Ok((episode, hit.score))
}

#[async_trait]
impl EpisodeStore for VectorEpisodeStore {
    async fn add(&self, user_id: &str, episodes: Vec<Episode>) -> Result<()> {
        let ns = Self::namespace(user_id)?;
        let mut fresh = Vec::with_capacity(episodes.len());
        let mut seen = HashSet::new();
        for episode in episodes {
            if episode.text.trim().is_empty() || !seen.insert(episode.id.clone()) {
                continue;
            }
            // Stored once: an episode is never re-embedded or re-indexed.
            if self.vectors.get(&ns, &episode.id).await?.is_none() {
                fresh.push(to_document(episode));
            }
        }
        match fresh.len() {
            0 => Ok(()),
            1 => self.vectors.upsert(&ns, fresh.remove(0)).await.map(|_| ()),
            _ => self.vectors.upsert_batch(&ns, fresh).await.map(|_| ()),
        }
    }

    async fn search(&self, user_id: &str, query: &EpisodeQuery) -> Result<Vec<ScoredEpisode>> {
        let ns = Self::namespace(user_id)?;
        if query.k == 0 {
            return Ok(Vec::new());
        }
        let at = query.at.unwrap_or_else(Utc::now);
        let mentions = crate::time::resolve(&query.text, at);
        let words = if mentions.is_empty() {
            query.text.clone()
        } else {
            crate::time::strip(&query.text, &mentions)
        };
        let period = mentions
            .iter()
            .map(|m| (m.span.start, m.span.end))
            .reduce(|(s, e), (s2, e2)| (s.min(s2), e.max(e2)));
        let asks_when = crate::time::asks_when(&query.text);
        let excluded: HashSet<&str> = query.exclude.iter().map(String::as_str).collect();
        let keep = |e: &Episode| {
            !excluded.contains(e.message_id.as_str())
                && query
                    .conversation
                    .as_deref()
                    .is_none_or(|c| c == e.conversation_id)
        };

        // By words and meaning.
        let mut search = SearchQuery::new(words.clone(), (query.k + excluded.len()) * 3 + 8);
        if let Some(c) = &query.conversation {
            search = search.with_filter(Filter::new().eq("conversation", c.as_str()));
        }
        if let Some(v) = &query.embedding {
            search = search.with_embedding(v.clone());
        }
        let hits = if words.trim().is_empty() && query.embedding.is_none() {
            Vec::new()
        } else {
            self.vectors.search(&ns, &search).await?
        };
        let mut found = Vec::with_capacity(hits.len());
        let mut matched = HashSet::with_capacity(hits.len());
        for hit in hits {
            let (episode, relevance) = from_hit(user_id, hit)?;
            if !keep(&episode) {
                continue;
            }
            let in_period = period.map(|(s, e)| episode.touches(s, e));
            if let Some((score, reason)) = rank::score(relevance, in_period) {
                matched.insert(episode.id.clone());
                let score = rank::dated(score, asks_when, !episode.when.is_empty());
                found.push(ScoredEpisode {
                    episode,
                    relevance: relevance.max(0.0),
                    score,
                    reason,
                });
            }
        }

        // By time: what was said in (or soon after) the named period.
        if let Some((start, end)) = period {
            let from = millis(start);
            let to = millis(end + TOLD_LATER);
            let mut ids = self.ids_between(&ns, from, to).await?;
            ids.retain(|id| !matched.contains(id));
            if ids.len() > PERIOD_CANDIDATES {
                ids.drain(..ids.len() - PERIOD_CANDIDATES);
            }
            for episode in self.read(&ns, user_id, &ids).await? {
                if keep(&episode) && episode.touches(start, end) {
                    if let Some((score, reason)) = rank::score(0.0, Some(true)) {
                        found.push(ScoredEpisode {
                            episode,
                            relevance: 0.0,
                            score,
                            reason,
                        });
                    }
                }
            }
        }
        Ok(rank::best(found, query.k))
    }

    async fn list(
        &self,
        user_id: &str,
        from: Option<DateTime<Utc>>,
        to: Option<DateTime<Utc>>,
        limit: usize,
    ) -> Result<Vec<Episode>> {
        let ns = Self::namespace(user_id)?;
        let mut ids = self
            .ids_between(&ns, from.map_or(0, millis), to.map_or(u64::MAX, millis))
            .await?;
        ids.truncate(limit);
        self.read(&ns, user_id, &ids).await
    }

    async fn len(&self, user_id: &str) -> Result<usize> {
        self.vectors.len(&Self::namespace(user_id)?).await
    }

    async fn retain(
        &self,
        user_id: &str,
        retention: Retention,
        now: DateTime<Utc>,
    ) -> Result<usize> {
        let ns = Self::namespace(user_id)?;
        if retention == Retention::all() {
            return Ok(0);
        }
        let ids = self.vectors.ids(&ns).await?;
        let cutoff = retention
            .max_age
            .and_then(|age| chrono::Duration::from_std(age).ok())
            .map(|age| millis(now - age));
        let mut drop: Vec<String> = Vec::new();
        let mut kept = ids.len();
        for id in &ids {
            let too_old = cutoff.is_some_and(|c| said_at_millis(id).is_some_and(|t| t < c));
            let too_many = retention.max_per_user.is_some_and(|max| kept > max);
            if !(too_old || too_many) {
                break; // ids are oldest first: the rest is newer and within the count
            }
            drop.push(id.clone());
            kept -= 1;
        }
        if drop.is_empty() {
            return Ok(0);
        }
        self.vectors.delete(&ns, &drop).await
    }

    async fn forget(&self, user_id: &str) -> Result<usize> {
        let ns = Self::namespace(user_id)?;
        let n = self.vectors.len(&ns).await?;
        self.vectors.clear(&ns).await?;
        Ok(n)
    }
}
