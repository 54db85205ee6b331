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

use crate::episodes::{EpisodeQuery, EpisodeStore, ScoredEpisode};
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
        }
    }

    /// Asked at `at`.
    pub fn at(mut self, at: DateTime<Utc>) -> Self {
        self.at = Some(at);
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
pub const FACT_RELEVANCE_FLOOR: f32 = 0.0;

/// `found` ranked by relevance first, the store's score (confidence, recency) only
/// breaking ties, those at or under [`FACT_RELEVANCE_FLOOR`] left out, at most `k`.
fn by_relevance(mut found: Vec<ScoredFact>, k: usize) -> Vec<ScoredFact> {
    found.retain(|f| f.relevance > FACT_RELEVANCE_FLOOR);
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
/// names. Facts and episodes share the block's cap (see
/// [`render::memory_block`](crate::render::memory_block)).
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
        facts
            .search(user, &request.text, request.top_k.saturating_mul(FACT_POOL))
            .await
    };
    let found_episodes = async {
        if request.episodes == 0 {
            return Ok(Vec::new());
        }
        let mut query = EpisodeQuery::new(request.text.as_str(), request.episodes)
            .excluding(request.exclude.iter().cloned());
        if let Some(at) = request.at {
            query = query.at(at);
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
    let (found_facts, found_episodes, past, health) =
        tokio::join!(found_facts, found_episodes, past, health);
    let mut out = Recalled::default();
    let found_facts = found_facts.and_then(|mut current| {
        current.extend(past?);
        // Health facts a message about food, drink, medicine, travel or exercise needs.
        for h in health? {
            match current.iter_mut().find(|f| f.fact.id == h.fact.id) {
                Some(f) => f.relevance = f.relevance.max(h.relevance),
                None => current.push(h),
            }
        }
        Ok(current)
    });
    let facts = match found_facts {
        Ok(found) => by_relevance(found, request.top_k),
        Err(e) => {
            tracing::warn!(error = %e.chain(), "searching the user's facts failed; recall goes on without them");
            out.facts_error = Some(e.chain().to_string());
            Vec::new()
        }
    };
    let episodes = match found_episodes {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!(error = %e.chain(), "recalling episodes failed; recall goes on without them");
            out.episodes_error = Some(e.chain().to_string());
            Vec::new()
        }
    };
    if let Some(block) = crate::render::memory_block(
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
