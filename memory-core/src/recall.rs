//! Recall: what a turn puts in front of the model for a message — the user's relevant
//! facts and the relevant earlier messages (episodes) — and the memory block it renders.
//!
//! [`Session::prepare`](crate::Session::prepare) calls [`recall`] every turn; the
//! `agentmem recall` command, the server's `memory_prompt` and the MCP prompt tool call
//! it too, so what they show is what a turn injects.
//!
//! ```
//! # tokio_test::block_on(async {
//! use agentmemory_core::episodes::{Episode, EpisodeStore, InMemoryEpisodeStore};
//! use agentmemory_core::recall::{recall, RecallRequest};
//! use agentmemory_core::{FactCandidate, HeuristicCounter, InMemoryUserMemoryStore, Message, UserMemoryStore};
//!
//! let facts = InMemoryUserMemoryStore::new();
//! facts.upsert("ana", FactCandidate::new("lives in Porto", 0.9).with_attribute("location", "Porto")).await?;
//! let episodes = InMemoryEpisodeStore::new();
//! let said = Message::user("We adopted a kitten called Figo");
//! episodes.add("ana", vec![Episode::from_message("ana", "c1", &said)]).await?;
//!
//! let found = recall(&facts, &episodes, &RecallRequest::new("ana", "how is Figo, the kitten?"), &HeuristicCounter::default()).await;
//! assert!(found.facts.is_empty(), "nothing about Porto is relevant");
//! assert_eq!(found.episodes.len(), 1);
//! assert!(found.block.unwrap().text.contains("kitten called Figo"));
//! # Ok::<_, agentmemory_core::MemoryError>(())
//! # }).unwrap();
//! ```

use chrono::{DateTime, Utc};

use std::collections::HashSet;

use crate::episodes::{Episode, EpisodeQuery, EpisodeStore, RecallReason, ScoredEpisode};
use crate::facts::{ScoredFact, UserMemoryStore};
use crate::render::MemoryBlock;
use crate::tokens::TokenCounter;

/// What to recall for.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RecallRequest {
    /// Whose memory.
    pub user_id: String,
    /// The message (or question) to recall for.
    pub text: String,
    /// When it is asked: "last week" is resolved against it (default: now).
    pub at: Option<DateTime<Utc>>,
    /// At most this many facts (default 5; 0: none).
    pub top_k: usize,
    /// At most this many episodes (default 5; 0: none).
    pub episodes: usize,
    /// Message ids not to recall (those already in the model's window).
    pub exclude: Vec<String>,
    /// The conversation the block is for (episodes of others say so).
    pub conversation_id: Option<String>,
    /// The memory block's token cap (default 500).
    pub max_tokens: usize,
    /// Recall the memory as it was at this moment (an as-of read): the facts that held
    /// then, shown as current then, and only what had been said by then.
    pub as_of: Option<DateTime<Utc>>,
    /// The relevance a fact needs to enter the block (default
    /// [`FACT_RELEVANCE_FLOOR`]): below it nothing is injected to fill the count.
    pub min_fact_relevance: f32,
}

impl RecallRequest {
    /// Recall for `text` in `user_id`'s memory, with the defaults.
    pub fn new(user_id: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            user_id: user_id.into(),
            text: text.into(),
            at: None,
            top_k: 5,
            episodes: 5,
            exclude: Vec::new(),
            conversation_id: None,
            max_tokens: 500,
            as_of: None,
            min_fact_relevance: FACT_RELEVANCE_FLOOR,
        }
    }

    /// Asked at `at`.
    pub fn at(mut self, at: DateTime<Utc>) -> Self {
        self.at = Some(at);
        self
    }

    /// The memory as it was at `as_of`: the facts that held then (a fact closed later is
    /// shown as it was then, current) and the messages said by then. The question is
    /// taken as asked then too, unless [`at`](Self::at) says otherwise.
    ///
    /// ```
    /// use agentmemory_core::facts::{FactCandidate, InMemoryUserMemoryStore, UserMemoryStore};
    /// use agentmemory_core::episodes::InMemoryEpisodeStore;
    /// use agentmemory_core::recall::{recall, RecallRequest};
    /// use agentmemory_core::HeuristicCounter;
    /// use chrono::{TimeZone, Utc};
    ///
    /// # tokio_test::block_on(async {
    /// let facts = InMemoryUserMemoryStore::new();
    /// let jan = Utc.with_ymd_and_hms(2025, 1, 10, 9, 0, 0).unwrap();
    /// let jun = Utc.with_ymd_and_hms(2025, 6, 10, 9, 0, 0).unwrap();
    /// let city = |text: &str, place: &str| {
    ///     FactCandidate::new(text, 0.9).with_attribute("residence", place)
    /// };
    /// facts.upsert("ann", city("lives in Leeds", "Leeds").said_at(jan)).await?;
    /// facts.upsert("ann", city("lives in York", "York").said_at(jun)).await?;
    /// let episodes = InMemoryEpisodeStore::new();
    /// let march = Utc.with_ymd_and_hms(2025, 3, 1, 0, 0, 0).unwrap();
    /// let request = RecallRequest::new("ann", "where does ann live?").as_of(march);
    /// let then = recall(&facts, &episodes, &request, &HeuristicCounter::default()).await;
    /// let texts: Vec<&str> = then.facts.iter().map(|f| f.fact.text.as_str()).collect();
    /// assert_eq!(texts, ["lives in Leeds"]);
    /// # Ok::<_, agentmemory_core::MemoryError>(())
    /// # }).unwrap();
    /// ```
    pub fn as_of(mut self, as_of: DateTime<Utc>) -> Self {
        self.as_of = Some(as_of);
        self.at.get_or_insert(as_of);
        self
    }

    /// Facts whose relevance to the text is at or under `floor` are left out of the block
    /// (default [`FACT_RELEVANCE_FLOOR`]).
    pub fn min_fact_relevance(mut self, floor: f32) -> Self {
        self.min_fact_relevance = floor;
        self
    }

    /// At most `top_k` facts and `episodes` episodes.
    pub fn limits(mut self, top_k: usize, episodes: usize) -> Self {
        self.top_k = top_k;
        self.episodes = episodes;
        self
    }

    /// The memory block's token cap.
    pub fn max_tokens(mut self, max_tokens: usize) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// For a block in `conversation_id`, leaving out the messages `exclude`.
    pub fn in_conversation(
        mut self,
        conversation_id: impl Into<String>,
        exclude: impl IntoIterator<Item = String>,
    ) -> Self {
        self.conversation_id = Some(conversation_id.into());
        self.exclude.extend(exclude);
        self
    }
}

/// What was recalled: the facts and episodes rendered into the block, and any store
/// error met on the way (recall never fails a turn).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Recalled {
    /// Facts in the block, best first.
    pub facts: Vec<ScoredFact>,
    /// Episodes in the block, best first.
    pub episodes: Vec<ScoredEpisode>,
    /// The memory block; `None` when nothing relevant was found.
    pub block: Option<MemoryBlock>,
    /// Searching the facts failed.
    pub facts_error: Option<String>,
    /// Searching the episodes failed.
    pub episodes_error: Option<String>,
}

/// How many more facts than it injects a turn reads from the store, to rank them by
/// relevance ([`by_relevance`]).
const FACT_POOL: usize = 4;

/// The relevance a fact needs to enter a block: below it, nothing is injected to fill the
/// count. The store ranks by relevance × decayed confidence with a floor, so a strong
/// but unrelated fact can outrank a weakly related one there; the block does not.
///
/// 0.2, chosen on `tests/data/facts_eval` with the local embedder (0.0 / 0.1 / 0.2 / 0.3;
/// its health and histories parts are tune sets for this knob): at 0.2 against 0.0 the
/// block is 26 % shorter (809 → 595 characters on the histories), one fewer stale fact
/// is presented as current (2 → 1), current answers are the same (24/34), one question
/// fewer is answered (26 → 25) and one health disclosure alone in its store is missed
/// (35 → 34 of 36). Lexical recall gives the same figures at 0.0 and 0.2 (a word match
/// scores well above it). `RecallRequest::min_fact_relevance` and `agentmem recall
/// --min-fact-relevance` set another.
pub const FACT_RELEVANCE_FLOOR: f32 = 0.2;

/// `found` ranked by relevance first, the store's score (confidence, recency) only
/// breaking ties, those at or under `floor` ([`FACT_RELEVANCE_FLOOR`] by default) left
/// out, at most `k`.
fn by_relevance(mut found: Vec<ScoredFact>, k: usize, floor: f32) -> Vec<ScoredFact> {
    found.retain(|f| f.relevance > floor);
    found.sort_by(|a, b| {
        b.relevance
            .total_cmp(&a.relevance)
            .then(b.score.total_cmp(&a.score))
            .then_with(|| a.fact.id.cmp(&b.fact.id))
    });
    found.truncate(k);
    found
}

/// At most this many facts that no longer hold join a block, for a question about the
/// past ([`past_facts`](crate::facts::past_facts)).
const PAST_FACTS: usize = 2;

/// Searches `facts` and `episodes` together for `request` and renders what is relevant.
///
/// A fact that shares nothing with the text (relevance zero) is never injected to fill
/// the count, nor is an episode that neither matches nor falls in the period the text
/// names. Content-free turns ("ok", "thanks", "how did it go?") never take an episode
/// slot, and an episode that repeats a better one is left out. The block is
/// [`render::compact_block`](crate::render::compact_block): each episode shown as the
/// sentences that matched, a fact not beside the message it came from, facts and
/// episodes sharing the cap by relevance.
pub async fn recall(
    facts: &dyn UserMemoryStore,
    episodes: &dyn EpisodeStore,
    request: &RecallRequest,
    counter: &dyn TokenCounter,
) -> Recalled {
    let user = request.user_id.as_str();
    let found_facts = async {
        if request.top_k == 0 {
            return Ok(Vec::new());
        }
        // A deeper pool than the block takes: it is re-ranked by relevance below.
        let pool = request.top_k.saturating_mul(FACT_POOL);
        match request.as_of {
            None => facts.search(user, &request.text, pool).await,
            Some(as_of) => facts_held_at(facts, user, &request.text, as_of, pool).await,
        }
    };
    let found_episodes = async {
        if request.episodes == 0 {
            return Ok(Vec::new());
        }
        // More than asked for: content-free turns and near-duplicates are left out
        // before they take a slot.
        let mut query = EpisodeQuery::new(request.text.as_str(), fetch(request.episodes))
            .excluding(request.exclude.iter().cloned());
        if let Some(at) = request.at {
            query = query.at(at);
        }
        if let Some(as_of) = request.as_of {
            query = query.said_until(as_of);
        }
        episodes.search(user, &query).await
    };
    let past = async {
        let at = request.at.unwrap_or_else(Utc::now);
        crate::facts::past_facts(
            facts,
            user,
            &request.text,
            at,
            PAST_FACTS.min(request.top_k),
        )
        .await
    };
    let health = crate::facts::health_facts_for(facts, user, &request.text, request.top_k);
    let concern = concern_episode(episodes, request);
    let (found_facts, found_episodes, past, health, concern) =
        tokio::join!(found_facts, found_episodes, past, health, concern);
    let mut out = Recalled::default();
    let found_facts = found_facts.and_then(|mut current| {
        let mut past = past?;
        let mut health = health?;
        if let Some(as_of) = request.as_of {
            // As it was then: what had closed by then, and what held then.
            past.retain(|f| f.fact.valid_to.is_some_and(|end| end <= as_of));
            health.retain(|f| f.fact.valid_at(as_of));
        }
        current.extend(past);
        // Health facts a message about food, drink, medicine, travel or exercise needs.
        for h in health {
            match current.iter_mut().find(|f| f.fact.id == h.fact.id) {
                Some(f) => f.relevance = f.relevance.max(h.relevance),
                None => current.push(h),
            }
        }
        Ok(current)
    });
    let facts = match found_facts {
        Ok(found) => by_relevance(found, request.top_k, request.min_fact_relevance),
        Err(e) => {
            tracing::warn!(error = %e.chain(), "searching the user's facts failed; recall goes on without them");
            out.facts_error = Some(e.chain().to_string());
            Vec::new()
        }
    };
    let episodes = match found_episodes {
        Ok(found) => {
            let kept =
                with_follow_ups(episodes, user, select(found, request.episodes), request).await;
            with_concern(kept, concern)
        }
        Err(e) => {
            tracing::warn!(error = %e.chain(), "recalling episodes failed; recall goes on without them");
            out.episodes_error = Some(e.chain().to_string());
            Vec::new()
        }
    };
    if let Some(block) = crate::render::compact_block(
        &request.text,
        facts,
        episodes,
        request.conversation_id.as_deref(),
        request.max_tokens,
        counter,
    ) {
        out.facts = block.facts.clone();
        out.episodes = block.episodes.clone();
        out.block = Some(block);
    }
    out
}

/// The facts of `user` that held at `as_of`, ranked for `text` as a search ranks current
/// ones, each shown as it was then: current, its later end and successor not yet known.
async fn facts_held_at(
    facts: &dyn UserMemoryStore,
    user: &str,
    text: &str,
    as_of: DateTime<Utc>,
    k: usize,
) -> crate::error::Result<Vec<ScoredFact>> {
    let held: Vec<crate::facts::MemoryFact> = facts
        .facts_as_of(user, as_of)
        .await?
        .into_iter()
        .map(|mut f| {
            f.valid_to = None;
            f.superseded_by = None;
            f
        })
        .collect();
    let query = crate::facts::FactQuery::new(text, k);
    Ok(crate::facts::semantic::rank_facts(
        held,
        &query,
        crate::facts::FactPolicy::default(),
        as_of,
    ))
}

/// The user's earlier message that the [concept map](crate::concept_map) says `request`
/// must keep in mind (an allergy for a recipe, a fear of flying for a trip), if any: the
/// best episode that holds a concern word of a domain the text touches. A failed search
/// finds none (the main search reports store errors).
async fn concern_episode(
    episodes: &dyn EpisodeStore,
    request: &RecallRequest,
) -> Option<ScoredEpisode> {
    if request.episodes < CONCERN_MIN_EPISODES {
        return None;
    }
    let concerns = crate::concept_map::Concerns::of(&request.text)?;
    let mut query =
        EpisodeQuery::new(concerns.query(), fetch(1)).excluding(request.exclude.iter().cloned());
    if let Some(at) = request.at {
        query = query.at(at);
    }
    if let Some(as_of) = request.as_of {
        query = query.said_until(as_of);
    }
    let found = episodes.search(&request.user_id, &query).await.ok()?;
    found.into_iter().find(|e| {
        e.relevance > 0.0
            && !crate::render::is_content_free(&e.episode.text)
            && concerns.held_by(&e.episode.text)
    })
}

/// How many of the best episodes bring the messages that follow them in their
/// conversation ([`with_follow_ups`]).
///
/// Chosen on `tests/data/long_conversations` (a tune set for it from then on), sparse,
/// k = 5, anchors × messages: none 41.8 % of answers at 566 characters a block; 2 × 1
/// 50.6 % at 711; 3 × 1 51.8 % at 772; 2 × 2 53.4 % at 813; 5 × 1 53.8 % at 889; 3 × 2
/// 55.4 % at 925. 2 × 2 is where each further line stops paying for itself.
const FOLLOW_UPS: usize = 2;

/// How many messages follow each of them, at most.
const FOLLOW_UP_MESSAGES: usize = 2;

/// A follow-up is said at most this long after the episode it follows.
const FOLLOW_UP_WITHIN: chrono::Duration = chrono::Duration::minutes(10);

/// `kept` with, after each of the first [`FOLLOW_UPS`] that matched by words or meaning,
/// the next [`FOLLOW_UP_MESSAGES`] messages of its conversation that say something
/// (within [`FOLLOW_UP_WITHIN`]): the reply to a question, the rest of a story told over
/// several lines ("my brother's coming for christmas!!" → "yeah at McGill. he's doing
/// pediatrics"). A follow-up ranks just under the episode it follows; one already kept
/// is not repeated. A failed read adds nothing.
async fn with_follow_ups(
    store: &dyn EpisodeStore,
    user: &str,
    kept: Vec<ScoredEpisode>,
    request: &RecallRequest,
) -> Vec<ScoredEpisode> {
    // The anchors' reads go out together: one round trip's wait, not one per read.
    let anchors: Vec<usize> = (0..kept.len())
        .filter(|&i| kept[i].relevance > 0.0)
        .take(FOLLOW_UPS)
        .collect();
    let kept_ref = &kept;
    let around = futures_util::future::join_all(anchors.iter().map(|&i| async move {
        let anchor = &kept_ref[i];
        let (answered, follows) = tokio::join!(
            answered_by(store, user, anchor, request),
            following(store, user, anchor, request)
        );
        (i, answered, follows)
    }))
    .await;
    let mut seen: HashSet<String> = kept.iter().map(|e| e.episode.id.clone()).collect();
    // What is shown already, by terms: a neighbour that repeats it (an assistant echoing
    // the message it answers) is left out, as `select` leaves out repeats.
    let mut shown: Vec<HashSet<String>> = kept.iter().map(|e| term_set(&e.episode.text)).collect();
    let mut new_here = |episode: &Episode| {
        let terms = term_set(&episode.text);
        let fresh = seen.insert(episode.id.clone())
            && !shown.iter().any(|s| overlap(&terms, s) >= NEAR_DUPLICATE);
        if fresh {
            shown.push(terms);
        }
        fresh
    };
    let mut out = Vec::with_capacity(kept.len() + FOLLOW_UPS * (FOLLOW_UP_MESSAGES + 1));
    let mut around = around.into_iter().peekable();
    for (i, e) in kept.into_iter().enumerate() {
        let Some((_, answered, follows)) = around.next_if(|(at, _, _)| *at == i) else {
            out.push(e);
            continue;
        };
        let near = |episode: Episode, scale: f32, reason: RecallReason| ScoredEpisode {
            episode,
            relevance: e.relevance * scale,
            score: e.score * scale,
            reason,
        };
        if let Some(answered) = answered.filter(|a| new_here(a)) {
            out.push(near(answered, 1.0, RecallReason::Answered));
        }
        let follows: Vec<ScoredEpisode> = follows
            .into_iter()
            .filter(|f| new_here(f))
            .map(|f| near(f, 0.99, RecallReason::FollowUp))
            .collect();
        out.push(e);
        out.extend(follows);
    }
    out
}

/// The next [`FOLLOW_UP_MESSAGES`] messages after `anchor` in its conversation that say
/// something, within [`FOLLOW_UP_WITHIN`] (and the request's as-of time). A failed read
/// finds none.
async fn following(
    store: &dyn EpisodeStore,
    user: &str,
    anchor: &ScoredEpisode,
    request: &RecallRequest,
) -> Vec<Episode> {
    let from = anchor.episode.observed_at + chrono::Duration::milliseconds(1);
    let mut to = anchor.episode.observed_at + FOLLOW_UP_WITHIN;
    if let Some(as_of) = request.as_of {
        to = to.min(as_of);
    }
    let Ok(next) = store.list(user, Some(from), Some(to), 4).await else {
        return Vec::new();
    };
    next.into_iter()
        .filter(|n| {
            n.conversation_id == anchor.episode.conversation_id
                && !crate::render::is_content_free(&n.text)
                && !request.exclude.contains(&n.message_id)
        })
        .take(FOLLOW_UP_MESSAGES)
        .collect()
}

/// The message `found` answers, when `found` matched by it: its own words share no term
/// with the query and the message it answers (searched with it, `Episode::context`)
/// does. Shown before it, so the line that holds the query's words is in the block.
async fn answered_by(
    store: &dyn EpisodeStore,
    user: &str,
    found: &ScoredEpisode,
    request: &RecallRequest,
) -> Option<Episode> {
    let context = found.episode.context.as_deref()?;
    let query = term_set(&request.text);
    if query.is_empty()
        || !term_set(&found.episode.text).is_disjoint(&query)
        || term_set(context).is_disjoint(&query)
    {
        return None;
    }
    let at = found.episode.observed_at;
    let before = store
        .list(user, Some(at - FOLLOW_UP_WITHIN), Some(at), 64)
        .await
        .ok()?;
    before
        .into_iter()
        .rev()
        .find(|e| e.conversation_id == found.episode.conversation_id)
        .filter(|e| !request.exclude.contains(&e.message_id))
}

/// Recall asks the concept map only when this many episodes or more are wanted.
const CONCERN_MIN_EPISODES: usize = 2;

/// `kept` with `concern` after them, unless it is already there or repeats one kept: one
/// line more than asked for, so a disclosure never takes the place of a match (taking the
/// last slot instead cost 3 of 251 answers on the long-conversation set).
fn with_concern(
    mut kept: Vec<ScoredEpisode>,
    concern: Option<ScoredEpisode>,
) -> Vec<ScoredEpisode> {
    let Some(mut concern) = concern else {
        return kept;
    };
    let terms = term_set(&concern.episode.text);
    if kept.iter().any(|e| {
        e.episode.id == concern.episode.id
            || overlap(&terms, &term_set(&e.episode.text)) >= NEAR_DUPLICATE
    }) {
        return kept;
    }
    // Ranked in the block after the matches it joins.
    let last = kept
        .last()
        .map_or(concern.score, |e| e.score.max(e.relevance));
    concern.score = concern.score.min(last);
    concern.relevance = concern.relevance.min(last);
    kept.push(concern);
    kept
}

/// How many episodes to search for when `k` are wanted: room for the content-free and
/// near-duplicate ones [`select`] leaves out.
fn fetch(k: usize) -> usize {
    if k == 0 {
        0
    } else {
        k * 2 + 2
    }
}

/// Two episodes whose terms overlap this much (Jaccard) say the same: the better is kept.
pub const NEAR_DUPLICATE: f32 = 0.6;

/// The best `k` of `found` (best first) that say something ("ok", "thanks", "how did it
/// go?" say nothing, see [`is_content_free`](crate::render::is_content_free)) and do not
/// repeat a better one.
fn select(found: Vec<ScoredEpisode>, k: usize) -> Vec<ScoredEpisode> {
    let mut kept: Vec<(ScoredEpisode, HashSet<String>)> = Vec::with_capacity(k);
    for e in found {
        if kept.len() == k {
            break;
        }
        if crate::render::is_content_free(&e.episode.text) {
            continue;
        }
        let terms = term_set(&e.episode.text);
        if kept
            .iter()
            .any(|(_, other)| overlap(&terms, other) >= NEAR_DUPLICATE)
        {
            continue;
        }
        kept.push((e, terms));
    }
    kept.into_iter().map(|(e, _)| e).collect()
}

/// The distinct terms of `text` (the search's text analysis).
fn term_set(text: &str) -> HashSet<String> {
    let mut terms = HashSet::new();
    crate::text::for_each_term(text, |t| {
        terms.insert(t.to_owned());
    });
    terms
}

/// Jaccard overlap of two term sets (`0.0` when either is empty).
fn overlap(a: &HashSet<String>, b: &HashSet<String>) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let shared = a.intersection(b).count();
    shared as f32 / (a.len() + b.len() - shared) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::episodes::{Episode, InMemoryEpisodeStore, RecallReason};
    use crate::facts::{FactCandidate, InMemoryUserMemoryStore};
    use crate::message::Message;
    use crate::tokens::HeuristicCounter;

    fn scored(text: &str, score: f32) -> ScoredEpisode {
        ScoredEpisode {
            episode: Episode::from_message("u", "c", &Message::user(text)),
            relevance: score,
            score,
            reason: RecallReason::Match,
        }
    }

    fn texts(found: &[ScoredEpisode]) -> Vec<&str> {
        found.iter().map(|e| e.episode.text.as_str()).collect()
    }

    #[test]
    fn content_free_turns_and_repeats_take_no_slot() {
        let found = vec![
            scored("Thanks for telling me.", 0.9),
            scored("How did it go?", 0.8),
            scored("we adopted a kitten called Figo last week", 0.7),
            scored("We adopted a kitten, called Figo, last week!", 0.6),
            scored("Figo already climbs the curtains", 0.5),
            scored("the vet says Figo is healthy", 0.4),
        ];
        let kept = select(found, 2);
        assert_eq!(
            texts(&kept),
            [
                "we adopted a kitten called Figo last week",
                "Figo already climbs the curtains"
            ]
        );
    }

    #[test]
    fn overlap_is_jaccard_of_terms() {
        let a = term_set("sold the sailboat to a neighbour");
        let b = term_set("I sold my sailboat to my neighbour");
        let c = term_set("the neighbour has a dog");
        assert!(overlap(&a, &b) >= NEAR_DUPLICATE);
        assert!(overlap(&a, &c) < NEAR_DUPLICATE);
        assert_eq!(overlap(&a, &HashSet::new()), 0.0);
    }

    #[tokio::test]
    async fn recall_skips_filler_and_shows_a_fact_and_its_message_once() {
        let facts = InMemoryUserMemoryStore::new();
        let episodes = InMemoryEpisodeStore::new();
        let said = Message::user("I cycle to work now, since the bus got too expensive");
        let mut fact = FactCandidate::new("cycles to work", 0.9);
        fact.source.message_id = Some(said.id.to_string());
        facts.upsert("ana", fact).await.unwrap();
        // Each shares "go" with the question, and says nothing.
        let filler = [
            Message::assistant("Of course! How did it go?"),
            Message::assistant("Sounds good, keep going!"),
        ];
        let mut all = vec![Episode::from_message("ana", "c1", &said)];
        all.extend(filler.iter().map(|m| Episode::from_message("ana", "c1", m)));
        episodes.add("ana", all).await.unwrap();

        let found = recall(
            &facts,
            &episodes,
            &RecallRequest::new("ana", "how is the cycling going?").limits(5, 1),
            &HeuristicCounter::default(),
        )
        .await;
        assert_eq!(texts(&found.episodes), [said.text()]);
        assert!(
            found.facts.is_empty(),
            "the fact's message is shown instead"
        );
        let block = found.block.unwrap().text;
        assert!(
            !block.contains("Of course") && !block.contains("Facts:"),
            "{block}"
        );
    }

    fn said(conversation: &str, text: &str, minute: u32, user: bool) -> Episode {
        use chrono::TimeZone;
        let at = Utc.with_ymd_and_hms(2025, 3, 4, 18, minute, 0).unwrap();
        let m = if user {
            Message::user(text)
        } else {
            Message::assistant(text)
        };
        Episode::from_message("kim", conversation, &m.at(at))
    }

    /// Empty facts, and `said` as kim's episodes.
    async fn stores_with(said: Vec<Episode>) -> (InMemoryUserMemoryStore, InMemoryEpisodeStore) {
        let episodes = InMemoryEpisodeStore::new();
        episodes.add("kim", said).await.unwrap();
        (InMemoryUserMemoryStore::new(), episodes)
    }

    #[tokio::test]
    async fn the_message_after_a_match_comes_with_it() {
        let (facts, episodes) = stores_with(vec![
            said("c1", "Leila: my brother is coming for christmas!!", 0, true),
            said("c1", "lol", 1, false),
            said(
                "c1",
                "Leila: he's training in pediatrics at McGill",
                2,
                true,
            ),
            // Another conversation at the same time is not a follow-up.
            said("c2", "Sam: the boiler broke again", 0, false),
            said("c1", "Owen: nice", 40, false),
        ])
        .await;
        let found = recall(
            &facts,
            &episodes,
            &RecallRequest::new("kim", "what is Leila's brother doing?").limits(5, 1),
            &HeuristicCounter::default(),
        )
        .await;
        assert_eq!(
            texts(&found.episodes),
            [
                "Leila: my brother is coming for christmas!!",
                "Leila: he's training in pediatrics at McGill"
            ]
        );
    }

    #[tokio::test]
    async fn a_request_recalls_a_disclosure_it_shares_no_word_with() {
        let (facts, episodes) = stores_with(vec![
            said("c1", "I get panic attacks on planes, always have", 0, true),
            said("c2", "the garden needs weeding this weekend", 30, true),
            said("c3", "we booked Lisbon for May, so excited", 50, true),
        ])
        .await;
        let ask = |text: &str| {
            let request = RecallRequest::new("kim", text).limits(5, 3);
            let (facts, episodes) = (&facts, &episodes);
            async move { recall(facts, episodes, &request, &HeuristicCounter::default()).await }
        };
        // "trip" is a travel cue: the fear of flying joins the match on "Lisbon".
        let trip = ask("any tips for our Lisbon trip?").await;
        assert_eq!(
            texts(&trip.episodes),
            [
                "we booked Lisbon for May, so excited",
                "I get panic attacks on planes, always have"
            ]
        );
        // Nothing about travel: the map adds nothing.
        let other = ask("what should I plant in the garden?").await;
        assert_eq!(
            texts(&other.episodes),
            ["the garden needs weeding this weekend"]
        );
    }

    #[tokio::test]
    async fn a_reply_found_by_the_message_it_answers_brings_that_message() {
        let episodes = InMemoryEpisodeStore::new();
        let asked = said("c1", "Gavin: what do you do for work these days?", 0, true);
        let reply = said(
            "c1",
            "Renata: HVAC project manager, very glamorous",
            1,
            false,
        )
        .answering(&asked.text);
        episodes
            .add("kim", vec![asked.clone(), reply.clone()])
            .await
            .unwrap();
        let request = RecallRequest::new("kim", "what work does Renata do?");
        let found = |episode: Episode| ScoredEpisode {
            episode,
            relevance: 0.4,
            score: 0.4,
            reason: RecallReason::Match,
        };
        // The reply holds "Renata" itself: it matched by its own words.
        assert!(
            answered_by(&episodes, "kim", &found(reply.clone()), &request)
                .await
                .is_none()
        );
        // Its own words share nothing with the question, the message it answers does.
        let request = RecallRequest::new("kim", "what work is Gavin asking about?");
        let got = answered_by(&episodes, "kim", &found(reply), &request).await;
        assert_eq!(got.map(|e| e.id), Some(asked.id));
    }

    #[tokio::test]
    async fn a_neighbour_that_echoes_the_match_is_left_out() {
        let (facts, episodes) = stores_with(vec![
            said(
                "c1",
                "we adopted a kitten called Figo from the shelter",
                0,
                true,
            ),
            said("c1", "You adopted a kitten called Figo!", 1, false),
            said("c1", "she is ginger and already rules the flat", 2, true),
        ])
        .await;
        let found = recall(
            &facts,
            &episodes,
            &RecallRequest::new("kim", "which kitten did we get from the shelter?").limits(5, 1),
            &HeuristicCounter::default(),
        )
        .await;
        assert_eq!(
            texts(&found.episodes),
            [
                "we adopted a kitten called Figo from the shelter",
                "she is ginger and already rules the flat"
            ]
        );
    }
}
