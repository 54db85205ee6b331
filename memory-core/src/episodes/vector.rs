//! [`VectorEpisodeStore`]: episodes kept as documents of any [`VectorStore`].

use std::collections::HashSet;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{json, Value};

use super::id::{millis, said_at_millis};
use super::{
    rank, Episode, EpisodeQuery, EpisodeStore, RecallReason, Retention, ScoredEpisode, When,
};
use crate::error::{MemoryError, Result};
use crate::message::{Metadata, Role};
use crate::vector::{Document, Filter, SearchQuery, VectorStore};

/// The namespace prefix of episodes in a vector store.
pub const NAMESPACE_PREFIX: &str = "episodes/";

/// At most this many of the most recent episodes of a named period (and the days after
/// it) are read to find those its words name.
const PERIOD_CANDIDATES: usize = 400;

/// Episodes read per call to the vector store when many are read (listing, adding).
const READ_CHUNK: usize = 1_000;

/// Hits beyond those wanted that a search asks for first, for the window's messages
/// (the message being answered is one of them, and usually the best match).
const WINDOW_SLACK: usize = 8;

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
        for chunk in ids.chunks(READ_CHUNK) {
            for doc in self.vectors.get_many(ns, chunk).await? {
                let id = doc.id.unwrap_or_default();
                out.push(from_parts(user_id, &id, doc.content, &doc.metadata)?);
            }
        }
        Ok(out)
    }

    /// Reads `ids` in order, a few at a time (the first are often enough), more each
    /// round, and keeps those `wanted` says, until `k` are kept, each found by time alone.
    async fn read_touching(
        &self,
        ns: &str,
        ids: &[String],
        k: usize,
        out: &mut Vec<Found>,
        wanted: impl Fn(&Doc) -> bool,
    ) -> Result<()> {
        let mut rest = ids.iter();
        let mut chunk = k + 5;
        while out.len() < k {
            let ids: Vec<String> = rest.by_ref().take(chunk).cloned().collect();
            if ids.is_empty() {
                break;
            }
            chunk *= 2;
            for doc in self.vectors.get_many(ns, &ids).await? {
                let Some(id) = doc.id else { continue };
                let doc = Doc {
                    id,
                    content: doc.content,
                    metadata: doc.metadata,
                };
                if out.len() == k || !wanted(&doc) {
                    continue;
                }
                if let Some((score, reason)) = rank::score(0.0, Some(true)) {
                    out.push(Found {
                        relevance: 0.0,
                        score,
                        reason,
                        id: doc.id,
                        content: doc.content,
                        metadata: doc.metadata,
                    });
                }
            }
        }
        Ok(())
    }

    /// The ids of the range that holds every episode said in `[from, to)`, oldest first
    /// (any other id there is the caller's to leave out, see [`said_in`]).
    async fn ids_between(&self, ns: &str, from: u64, to: u64) -> Result<Vec<String>> {
        match id_range(from, to) {
            Some((lo, hi)) => self.vectors.ids_in_range(ns, &lo, &hi).await,
            None => Ok(Vec::new()),
        }
    }
}

/// A stored episode as read back by id.
struct Doc {
    id: String,
    content: String,
    metadata: Metadata,
}

/// Whether `id` is the id of an episode said in `[from, to)`.
fn said_in(id: &str, from: u64, to: u64) -> bool {
    said_at_millis(id).is_some_and(|t| t >= from && t < to)
}

/// The range of ids (`[lo, hi)` in byte order) that holds every episode id said in
/// `[from, to)`: episode ids are ULIDs, whose text sorts as their time. `None` when no id
/// can be said then.
fn id_range(from: u64, to: u64) -> Option<(String, String)> {
    /// The largest time a ULID holds (48 bits of milliseconds).
    const MAX_MS: u64 = (1 << 48) - 1;
    if from > MAX_MS || from >= to {
        return None;
    }
    let first_at = |ms: u64| ulid::Ulid::from_parts(ms, 0).to_string();
    // Past the last time an id can say: above every id's text.
    let hi = if to > MAX_MS {
        "\u{7f}".to_owned()
    } else {
        first_at(to)
    };
    Some((first_at(from), hi))
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

/// Whether a stored episode's words name a date.
fn names_a_date(metadata: &Metadata) -> bool {
    metadata
        .get("when")
        .and_then(Value::as_array)
        .is_some_and(|w| !w.is_empty())
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
    let when = dates(id, metadata)?;
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

/// A stored episode a search found, not yet parsed.
struct Found {
    id: String,
    content: String,
    metadata: Metadata,
    relevance: f32,
    score: f32,
    reason: RecallReason,
}

/// Whether the episode stored as `id` with `metadata` is about a moment in `[start, end)`,
/// read off the stored id and metadata without parsing the episode: it was said then (its id says when
/// to the millisecond, and periods start and end on whole milliseconds), or a period its
/// words name overlaps.
fn touches(
    id: &str,
    metadata: &Metadata,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Result<bool> {
    if said_at_millis(id).is_some_and(|t| t >= millis(start) && t < millis(end)) {
        return Ok(true);
    }
    Ok(dates(id, metadata)?
        .iter()
        .any(|w| w.start < end && start < w.end))
}

/// The dates a stored episode's words name.
fn dates(id: &str, metadata: &Metadata) -> Result<Vec<When>> {
    match metadata.get("when") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(v) => Vec::<When>::deserialize(v).map_err(|_| MemoryError::Corrupt {
            what: format!("episode {id}"),
            source: "its dates are malformed".into(),
        }),
    }
}

#[async_trait]
impl EpisodeStore for VectorEpisodeStore {
    async fn add(&self, user_id: &str, episodes: Vec<Episode>) -> Result<()> {
        let ns = Self::namespace(user_id)?;
        let mut seen = HashSet::new();
        let episodes: Vec<Episode> = episodes
            .into_iter()
            .filter(|e| !e.text.trim().is_empty() && seen.insert(e.id.clone()))
            .collect();
        // Stored once: an episode is never re-embedded or re-indexed.
        let mut stored = HashSet::new();
        for chunk in episodes.chunks(READ_CHUNK) {
            let ids: Vec<String> = chunk.iter().map(|e| e.id.clone()).collect();
            let docs = self.vectors.get_many(&ns, &ids).await?;
            stored.extend(docs.into_iter().filter_map(|d| d.id));
        }
        let mut fresh: Vec<Document> = episodes
            .into_iter()
            .filter(|e| !stored.contains(&e.id))
            .map(to_document)
            .collect();
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
        // Decided on the stored metadata: only the episodes returned are parsed whole.
        let until = query.said_until.map(millis);
        let keep = |id: &str, metadata: &Metadata| {
            let field = |key: &str| metadata.get(key).and_then(Value::as_str);
            until.is_none_or(|u| said_at_millis(id).is_some_and(|t| t <= u))
                && field("message").is_none_or(|m| !excluded.contains(m))
                && query
                    .conversation
                    .as_deref()
                    .is_none_or(|c| field("conversation") == Some(c))
        };
        let about_period = |id: &str, metadata: &Metadata| match period {
            Some((start, end)) => touches(id, metadata, start, end).map(Some),
            None => Ok(None),
        };

        // By words and meaning: the best `wanted` matches outside the window (more when the
        // query names a period, so that weaker matches inside it, which the time boost
        // raises, are among them). The window's messages are few among the best hits, so
        // a few more than `wanted` are asked for first; only when the window took too many
        // of them is the search repeated deep enough to make up for all it can take.
        let wanted = if period.is_some() {
            query.k * 3 + 8
        } else {
            query.k
        };
        // An as-of read leaves out what was said later: searched deeper for it.
        let wanted = if until.is_some() {
            wanted * 4 + 16
        } else {
            wanted
        };
        let mut search = SearchQuery::new(words, wanted + WINDOW_SLACK);
        if let Some(c) = &query.conversation {
            search = search.with_filter(Filter::new().eq("conversation", c.as_str()));
        }
        if let Some(v) = &query.embedding {
            search = search.with_embedding(v.clone());
        }
        let searchable = !(search.text.trim().is_empty() && query.embedding.is_none());
        let mut found: Vec<Found> = Vec::new();
        // Two rounds at most: the second is deep enough for all the window can take.
        for _ in 0..2 {
            if !searchable {
                break;
            }
            let hits = self.vectors.search(&ns, &search).await?;
            let exhausted = hits.len() < search.k;
            found.clear();
            for hit in hits {
                if !keep(&hit.id, &hit.metadata) {
                    continue;
                }
                let in_period = about_period(&hit.id, &hit.metadata)?;
                if let Some((score, reason)) = rank::score(hit.score, in_period) {
                    let score = rank::dated(score, asks_when, names_a_date(&hit.metadata));
                    found.push(Found {
                        relevance: hit.score.max(0.0),
                        score,
                        reason,
                        id: hit.id,
                        content: hit.content,
                        metadata: hit.metadata,
                    });
                }
            }
            let deep_enough = search.k >= wanted + excluded.len();
            if exhausted || found.len() >= wanted || deep_enough {
                break;
            }
            search.k = wanted + excluded.len();
        }

        // By time: what was said in (or soon after) the named period. All that is found
        // by time alone scores the same, and ties go to the most recent, so only the `k`
        // most recent that qualify can be returned: they are read newest first, up to that.
        // Then, while fewer than `k` were found, what was told any time later about the
        // period ("my uncle had surgery in June", said in July): read oldest first from
        // the end of that window, up to [`PERIOD_CANDIDATES`], each kept when a date its
        // words name falls in the period.
        if let Some((start, end)) = period {
            let (from, to) = (millis(start), millis(end + TOLD_LATER));
            let ids = self.ids_between(&ns, from, to).await?;
            let mut matched: HashSet<String> = found.iter().map(|f| f.id.clone()).collect();
            let newest_first: Vec<String> = ids
                .iter()
                .rev()
                .filter(|id| !matched.contains(id.as_str()) && said_in(id, from, to))
                .take(PERIOD_CANDIDATES)
                .cloned()
                .collect();
            let mut by_time = Vec::new();
            self.read_touching(&ns, &newest_first, query.k, &mut by_time, |doc| {
                keep(&doc.id, &doc.metadata)
                    && touches(&doc.id, &doc.metadata, start, end).unwrap_or(false)
            })
            .await?;
            let later_from = to.max(from);
            let asked = millis(at);
            if by_time.len() < query.k && later_from < asked {
                matched.extend(by_time.iter().map(|f| f.id.clone()));
                let told_later: Vec<String> = self
                    .ids_between(&ns, later_from, asked)
                    .await?
                    .into_iter()
                    .filter(|id| !matched.contains(id.as_str()) && said_in(id, later_from, asked))
                    .take(PERIOD_CANDIDATES)
                    .collect();
                let wanted = query.k - by_time.len();
                let mut later = Vec::new();
                self.read_touching(&ns, &told_later, wanted, &mut later, |doc| {
                    keep(&doc.id, &doc.metadata)
                        && dates(&doc.id, &doc.metadata)
                            .is_ok_and(|w| w.iter().any(|w| w.start < end && start < w.end))
                })
                .await?;
                by_time.extend(later);
            }
            found.extend(by_time);
        }

        // Best first (ties: the more recent first); only these are made episodes.
        rank::best(found, query.k, |f| (f.score, f.id.as_str()))
            .into_iter()
            .map(|f| {
                Ok(ScoredEpisode {
                    episode: from_parts(user_id, &f.id, f.content, &f.metadata)?,
                    relevance: f.relevance,
                    score: f.score,
                    reason: f.reason,
                })
            })
            .collect()
    }

    async fn list(
        &self,
        user_id: &str,
        from: Option<DateTime<Utc>>,
        to: Option<DateTime<Utc>>,
        limit: usize,
    ) -> Result<Vec<Episode>> {
        let ns = Self::namespace(user_id)?;
        let (from, to) = (from.map_or(0, millis), to.map_or(u64::MAX, millis));
        let mut ids = self.ids_between(&ns, from, to).await?;
        ids.retain(|id| said_in(id, from, to));
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

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;
    use crate::episodes::{episode_id, RecallReason};
    use crate::message::Message;
    use crate::vector::InMemoryVectorStore;

    fn store() -> VectorEpisodeStore {
        VectorEpisodeStore::new(Arc::new(InMemoryVectorStore::new()))
    }

    fn said(conversation: &str, text: &str, at: DateTime<Utc>) -> Episode {
        Episode::from_message("u", conversation, &Message::user(text).at(at))
    }

    #[test]
    fn a_period_is_a_range_of_ids() {
        let base = Utc.with_ymd_and_hms(2025, 3, 1, 0, 0, 0).unwrap();
        let mut ids: Vec<String> = (0..200)
            .map(|i| episode_id(base + Duration::minutes(i * 37), ulid::Ulid::new()))
            .collect();
        ids.push(episode_id(base, ulid::Ulid::new())); // two ids at the same moment
        ids.push(ulid::Ulid::from_parts((1 << 48) - 1, u128::MAX).to_string()); // the last
        ids.sort();
        let t = |minutes: i64| millis(base + Duration::minutes(minutes));
        for (from, to) in [
            (0, u64::MAX),
            (t(0), t(1)),
            (t(37), t(37 * 10)),
            (t(36), t(38)),
            (t(37 * 199), u64::MAX),
            (t(37 * 200), u64::MAX),
            (t(37 * 200), 1 << 48),
        ] {
            let expected: Vec<&String> = ids
                .iter()
                .filter(|id| said_at_millis(id).is_some_and(|ms| ms >= from && ms < to))
                .collect();
            let (lo, hi) = id_range(from, to).unwrap();
            let found: Vec<&String> = ids
                .iter()
                .filter(|id| id.as_str() >= lo.as_str() && id.as_str() < hi.as_str())
                .collect();
            assert_eq!(found, expected, "[{from}, {to})");
        }
        assert_eq!(id_range(t(100), t(100)), None);
        assert_eq!(id_range(t(500), t(100)), None);
        assert_eq!(id_range((1 << 48) + 5, u64::MAX), None);
    }

    #[test]
    fn a_period_question_finds_what_was_told_about_it_months_later() {
        tokio_test::block_on(async {
            let store = store();
            let july = Utc.with_ymd_and_hms(2025, 7, 21, 18, 0, 0).unwrap();
            let mut all = vec![said(
                "c1",
                "my grandad had a cataract operation in June",
                july,
            )];
            // Chatter in between, told later, about nothing in June.
            for i in 0..40 {
                all.push(said(
                    "c2",
                    &format!("lunch note {i}"),
                    july + Duration::days(20 + i),
                ));
            }
            store.add("u", all).await.unwrap();
            let asked = Utc.with_ymd_and_hms(2025, 12, 2, 9, 0, 0).unwrap();
            let hits = store
                .search(
                    "u",
                    &EpisodeQuery::new("what happened in June?", 3).at(asked),
                )
                .await
                .unwrap();
            assert!(
                hits.iter().any(|h| h.episode.text.contains("cataract")),
                "{hits:#?}"
            );
            assert!(!hits.iter().any(|h| h.episode.text.contains("lunch")));
        });
    }

    #[test]
    fn listing_a_period_reads_only_its_ids() {
        tokio_test::block_on(async {
            let store = store();
            let base = Utc.with_ymd_and_hms(2025, 3, 1, 0, 0, 0).unwrap();
            let all: Vec<Episode> = (0..30)
                .map(|i| said("c", &format!("note {i}"), base + Duration::days(i)))
                .collect();
            store.add("u", all.clone()).await.unwrap();
            let some = store
                .list(
                    "u",
                    Some(base + Duration::days(10)),
                    Some(base + Duration::days(13)),
                    10,
                )
                .await
                .unwrap();
            assert_eq!(some, all[10..13].to_vec());
            let listed = store.list("u", None, None, 100).await.unwrap();
            assert_eq!(listed, all);
        });
    }

    #[test]
    fn a_window_deeper_than_the_first_search_still_leaves_k_episodes() {
        tokio_test::block_on(async {
            let store = store();
            let at = Utc.with_ymd_and_hms(2025, 6, 1, 12, 0, 0).unwrap();
            // The window: the best matches by far.
            let window: Vec<Episode> = (0..2 * WINDOW_SLACK as i64)
                .map(|i| said("now", "cello practice", at + Duration::minutes(i)))
                .collect();
            let older: Vec<Episode> = (0..5)
                .map(|i| {
                    said(
                        "before",
                        "we found an old cello in the attic at my aunt's house in the spring",
                        at - Duration::days(30 + i),
                    )
                })
                .collect();
            store.add("u", window.clone()).await.unwrap();
            store.add("u", older.clone()).await.unwrap();
            let query = EpisodeQuery::new("cello practice", 3)
                .at(at + Duration::hours(1))
                .excluding(window.iter().map(|e| e.message_id.clone()));
            let found = store.search("u", &query).await.unwrap();
            assert_eq!(found.len(), 3, "{found:?}");
            assert!(found.iter().all(|f| f.episode.conversation_id == "before"));
        });
    }

    #[test]
    fn a_period_brings_its_most_recent_episodes_and_those_that_name_it() {
        tokio_test::block_on(async {
            let store = store();
            // Asked on Wednesday 2025-03-19: last weekend is 15–16 March.
            let asked = Utc.with_ymd_and_hms(2025, 3, 19, 18, 0, 0).unwrap();
            let saturday = Utc.with_ymd_and_hms(2025, 3, 15, 9, 0, 0).unwrap();
            let during: Vec<Episode> = (0..12)
                .map(|i| {
                    said(
                        "weekend",
                        "the tide was out",
                        saturday + Duration::hours(i * 3),
                    )
                })
                .collect();
            let monday = Utc.with_ymd_and_hms(2025, 3, 17, 9, 0, 0).unwrap();
            let named = said("monday", "On Saturday the tide was out", monday);
            let unrelated = said(
                "monday",
                "the tide tables are online",
                monday + Duration::hours(1),
            );
            let before = said("march", "the tide was out", saturday - Duration::days(9));
            let mut all = during.clone();
            all.extend([named.clone(), unrelated, before]);
            store.add("u", all).await.unwrap();

            let query = EpisodeQuery::new("what did I do last weekend?", 3).at(asked);
            let found = store.search("u", &query).await.unwrap();
            // All score the same by time alone; the most recent that are about the
            // weekend come first: the one that names it, then the weekend's latest two.
            let expected = [&named.id, &during[11].id, &during[10].id];
            assert_eq!(
                found.iter().map(|f| &f.episode.id).collect::<Vec<_>>(),
                expected
            );
            assert!(found.iter().all(|f| f.reason == RecallReason::Time));

            // Excluded ones are passed over, and the next most recent taken.
            let query = query.excluding([named.message_id.clone(), during[11].message_id.clone()]);
            let found = store.search("u", &query).await.unwrap();
            let expected = [&during[10].id, &during[9].id, &during[8].id];
            assert_eq!(
                found.iter().map(|f| &f.episode.id).collect::<Vec<_>>(),
                expected
            );
        });
    }
}
