//! Long-term facts about a user: what they are, how sure we are, and how they change.
//!
//! A [`FactCandidate`] comes out of a [`FactExtractor`](crate::extract::FactExtractor);
//! a [`UserMemoryStore`] reconciles it with what it already holds (see [`reconcile()`](crate::store_support::reconcile))
//! and answers with a [`FactChange`].

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::Result;

mod apply;
pub mod concepts;
mod contest;
mod export;
mod health;
mod lookup;
mod memory;
mod past;
pub(crate) mod plan;
pub(crate) mod quality;
pub(crate) mod ranked;
pub(crate) mod reconcile;
pub(crate) mod semantic;
mod slot_ids;
mod snapshot;
mod stamp;
mod strength;
pub(crate) mod transition;
pub(crate) mod versions;

pub use apply::{apply_turn, log_changes, Applied};
pub use contest::{PendingContradiction, MAX_PENDING};
pub use export::{export_facts, import_facts, restore_facts, FactsExport, FACTS_EXPORT_VERSION};
pub use health::{health_domains, health_facts_for, is_health_fact, HEALTH_RELEVANCE};
pub use memory::InMemoryUserMemoryStore;
pub use past::{asks_about_the_past, past_facts};
pub use plan::ALREADY_APPLIED;
pub use semantic::{EmbeddingUserMemoryStore, FactQuery};
pub use snapshot::{SnapshotError, FACT_SNAPSHOT_VERSION};
pub use stamp::stamp;
// The rules every backend shares are public as `crate::store_support`; these are the
// ones the rest of the crate names through `facts`.
pub(crate) use ranked::RankedFacts;
pub(crate) use reconcile::{FactKey, Reconciliation};
pub(crate) use semantic::{fact_relevance_among, prepare_candidate};
#[cfg(test)]
pub(crate) use semantic::{rank_facts, reconcile_by_meaning};

/// Whether a fact states something the user has/likes or something they avoid.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Polarity {
    /// Has, is, likes.
    #[default]
    Positive,
    /// Dislikes, hates, is allergic to, avoids.
    Negative,
}

/// Where a fact was learned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactSource {
    /// The conversation / session id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The message the fact was extracted from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
}

/// How a candidate changes a held fact beyond its own attribute and value (see
/// [`reconcile()`](crate::store_support::reconcile)): "I sold my car" ends "has a car", "I switched to a Pixel" replaces
/// "uses an iPhone".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Transition {
    /// Something stopped holding; `object` names it ("car", "Deloitte", "Miso"). When no
    /// fact of the candidate's own attribute answers it, the current fact of any attribute
    /// (same subject) that `object` names, by word or lemma, or by meaning when both have
    /// embeddings, is closed: kept as history, replaced by its negation with the
    /// candidate's text. With nothing to close, the candidate is stored as it stands.
    Ends {
        /// What ended, as said.
        object: String,
    },
    /// The candidate's value takes the place of a held value of the same attribute
    /// ("switched to a Pixel" after "uses an iPhone"): the held fact it names (`from`),
    /// else the one closest in meaning, else the only one of that attribute, is superseded.
    Replaces {
        /// The old value, when said ("switched from Windows to Linux").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
    },
}

/// A fact proposed for storage, before reconciliation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FactCandidate {
    /// The fact as a short third-person statement ("likes Italian food").
    pub text: String,
    /// Whom the fact is about, when not the user: the relation and name ("daughter Zoe",
    /// "friend Sam", "dog Miso"). Facts of different subjects never reinforce or
    /// supersede each other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Attribute key: `name`, `location`, `likes`, `allergy`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribute: Option<String>,
    /// The attribute's value ("Italian food").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Positive or negative statement.
    #[serde(default)]
    pub polarity: Polarity,
    /// How sure the extractor is, `0.0..=1.0`.
    pub confidence: f32,
    /// Where it came from.
    #[serde(default)]
    pub source: FactSource,
    /// Topics it touches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topics: Vec<String>,
    /// Named entities it mentions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entities: Vec<String>,
    /// The embedding of `text`, when an embedder made one (see
    /// [`EmbeddingUserMemoryStore`]); stored with the fact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Vec<f32>>,
    /// When the user said it (the message's time); `None`: when it is stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_at: Option<DateTime<Utc>>,
    /// How it may end or replace a held fact of another attribute or value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transition: Option<Transition>,
    /// When what it states became true, when the text names it ("we moved here in
    /// March"); `None`: when it was said ([`observed_at`](Self::observed_at)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<DateTime<Utc>>,
}

impl FactCandidate {
    /// A candidate with only text and confidence.
    pub fn new(text: impl Into<String>, confidence: f32) -> Self {
        Self {
            text: text.into(),
            subject: None,
            attribute: None,
            value: None,
            polarity: Polarity::Positive,
            confidence,
            source: FactSource::default(),
            topics: Vec::new(),
            entities: Vec::new(),
            embedding: None,
            observed_at: None,
            transition: None,
            valid_from: None,
        }
    }

    /// When the statement took effect, for ordering: [`valid_from`](Self::valid_from),
    /// else when it was said, else `None` (now, when stored).
    pub fn effective_at(&self) -> Option<DateTime<Utc>> {
        self.valid_from.or(self.observed_at)
    }

    /// Sets when what it states became true (see [`valid_from`](Self::valid_from)).
    pub fn valid_from(mut self, at: DateTime<Utc>) -> Self {
        self.valid_from = Some(at);
        self
    }

    /// Sets when the user said it.
    pub fn said_at(mut self, at: DateTime<Utc>) -> Self {
        self.observed_at = Some(at);
        self
    }

    /// Sets whom the fact is about ("daughter Zoe"); `None` is the user.
    pub fn with_subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// Sets how the candidate may end or replace a held fact.
    pub fn with_transition(mut self, transition: Transition) -> Self {
        self.transition = Some(transition);
        self
    }

    /// Sets the attribute and its value.
    pub fn with_attribute(
        mut self,
        attribute: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        self.attribute = Some(attribute.into());
        self.value = Some(value.into());
        self
    }

    /// Sets the polarity.
    pub fn with_polarity(mut self, polarity: Polarity) -> Self {
        self.polarity = polarity;
        self
    }

    /// Sets the source.
    pub fn with_source(mut self, source: FactSource) -> Self {
        self.source = source;
        self
    }
}

/// A stored fact about a user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MemoryFact {
    /// Unique id (a ULID string).
    pub id: String,
    /// Whose fact it is.
    pub user_id: String,
    /// The statement.
    pub text: String,
    /// Whom the fact is about when not the user ("daughter Zoe"); see
    /// [`FactCandidate::subject`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Attribute key, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribute: Option<String>,
    /// Attribute value, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Positive or negative statement.
    #[serde(default)]
    pub polarity: Polarity,
    /// Confidence at the last reinforcement, `0.0..=1.0`.
    pub confidence: f32,
    /// When first stored.
    #[serde(deserialize_with = "crate::rfc3339::deserialize")]
    pub created_at: DateTime<Utc>,
    /// When last stated again.
    #[serde(deserialize_with = "crate::rfc3339::deserialize")]
    pub last_reinforced_at: DateTime<Utc>,
    /// How many times it was stated again after the first.
    pub reinforcement_count: u32,
    /// Where it was learned.
    #[serde(default)]
    pub source: FactSource,
    /// Topics.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topics: Vec<String>,
    /// Entities.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entities: Vec<String>,
    /// The id of the fact that replaced this one; `None` while current.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// The embedding of `text` (L2-normalised), made once when the fact was written;
    /// `None` when no embedder was configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Vec<f32>>,
    /// Weak statements that contradicted this fact since it was stored, oldest first
    /// (see [`MemoryFact::contest`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_contradictions: Vec<PendingContradiction>,
    /// When the user said it, when that differs from `created_at` (a conversation
    /// imported after it happened); see [`observed_at`](Self::observed_at).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_at: Option<DateTime<Utc>>,
    /// When what it states became true, when that differs from when it was said (the
    /// text named a time); see [`valid_from`](Self::valid_from).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<DateTime<Utc>>,
    /// When it stopped being true: the time the statement that closed it took effect.
    /// `None` while current (and for versions closed before validity was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_to: Option<DateTime<Utc>>,
    /// The messages that stated it, the first one and each one that stated it again
    /// (at most [`MAX_STATED_IN`], the latest kept): applying one of them again
    /// changes nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stated_in: Vec<String>,
    /// When it was said again after it was first said, oldest first (the
    /// latest [`MAX_STATED_IN`] kept): a statement folded in between two of them
    /// ("vegetarian" in February between "vegan" in January and "vegan" in March) held
    /// until the next one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restated_at: Vec<DateTime<Utc>>,
    /// How the statement it came from changed other facts ("sold my car" ends "has a
    /// car"): kept so that an older statement folded in later is closed by it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transition: Option<Transition>,
}

/// How many message ids a fact keeps in [`MemoryFact::stated_in`].
pub const MAX_STATED_IN: usize = 32;

impl MemoryFact {
    /// A new current fact for `user_id` from `candidate`, stamped `now`.
    pub fn from_candidate(user_id: &str, candidate: FactCandidate, now: DateTime<Utc>) -> Self {
        Self {
            id: ulid::Ulid::new().to_string(),
            user_id: user_id.to_owned(),
            text: candidate.text,
            subject: candidate.subject,
            attribute: candidate.attribute,
            value: candidate.value,
            polarity: candidate.polarity,
            confidence: candidate.confidence.clamp(0.0, 1.0),
            created_at: now,
            last_reinforced_at: now,
            reinforcement_count: 0,
            source: candidate.source,
            topics: candidate.topics,
            entities: candidate.entities,
            superseded_by: None,
            embedding: candidate.embedding,
            pending_contradictions: Vec::new(),
            observed_at: candidate.observed_at,
            valid_from: candidate
                .valid_from
                .filter(|from| Some(*from) != candidate.observed_at),
            valid_to: None,
            stated_in: Vec::new(),
            restated_at: Vec::new(),
            transition: candidate.transition,
        }
    }

    /// When what it states became true: the time its text named, else when it was said.
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use agentmemory_core::facts::{FactCandidate, MemoryFact};
    ///
    /// let said = Utc.with_ymd_and_hms(2025, 6, 3, 9, 0, 0).unwrap();
    /// let moved = Utc.with_ymd_and_hms(2025, 5, 27, 0, 0, 0).unwrap();
    /// let c = FactCandidate::new("lives in York", 0.9).said_at(said).valid_from(moved);
    /// let fact = MemoryFact::from_candidate("u", c, Utc::now());
    /// assert_eq!(fact.valid_from(), moved);
    /// assert_eq!(fact.observed_at(), said);
    /// ```
    pub fn valid_from(&self) -> DateTime<Utc> {
        self.valid_from.unwrap_or_else(|| self.observed_at())
    }

    /// Whether it held at `at`: it had become true by then and nothing had closed it.
    /// A version superseded without a recorded end is taken to hold until its
    /// successor, which [`facts_as_of`](UserMemoryStore::facts_as_of) works out from the chain.
    pub fn valid_at(&self, at: DateTime<Utc>) -> bool {
        self.valid_from() <= at && self.valid_to.is_none_or(|end| at < end)
    }

    /// Whether `message_id` stated this fact (it is in [`stated_in`](Self::stated_in)
    /// or is the fact's source).
    pub fn stated_in(&self, message_id: &str) -> bool {
        self.source.message_id.as_deref() == Some(message_id)
            || self.stated_in.iter().any(|m| m == message_id)
    }

    /// The first time after `at` the fact was said (first, or again): where a statement
    /// said at `at` that contradicts it stops holding.
    pub fn next_statement_after(&self, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        std::iter::once(self.observed_at())
            .chain(self.restated_at.iter().copied())
            .find(|t| *t > at)
    }

    /// Records that the fact was said again at `at`.
    pub(crate) fn record_restatement(&mut self, at: DateTime<Utc>) {
        if at <= self.observed_at() {
            return;
        }
        let i = self.restated_at.partition_point(|t| *t < at);
        if self.restated_at.get(i) == Some(&at) {
            return;
        }
        self.restated_at.insert(i, at);
        if self.restated_at.len() > MAX_STATED_IN {
            self.restated_at.remove(0);
        }
    }

    /// Records that `message_id` stated the fact (again), keeping the latest
    /// [`MAX_STATED_IN`].
    pub(crate) fn record_statement(&mut self, message_id: Option<&str>) {
        let Some(id) = message_id else { return };
        if self.stated_in(id) {
            return;
        }
        if self.stated_in.len() >= MAX_STATED_IN {
            self.stated_in.remove(0);
        }
        self.stated_in.push(id.to_owned());
    }

    /// When the user said it: the message's time where it was recorded, else when the
    /// fact was stored.
    pub fn observed_at(&self) -> DateTime<Utc> {
        self.observed_at.unwrap_or(self.created_at)
    }

    /// Whether the fact is current (not superseded).
    pub fn is_current(&self) -> bool {
        self.superseded_by.is_none()
    }

    /// Confidence decayed by the time since the last reinforcement:
    /// `confidence × 0.5^(age / half_life)`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use chrono::Utc;
    /// use agentmemory_core::facts::{FactCandidate, MemoryFact};
    ///
    /// let now = Utc::now();
    /// let fact = MemoryFact::from_candidate("u", FactCandidate::new("likes tea", 0.8), now);
    /// let month = Duration::from_secs(30 * 24 * 3600);
    /// let later = now + chrono::Duration::from_std(month).unwrap();
    /// assert!((fact.effective_confidence(later, month) - 0.4).abs() < 1e-4);
    /// ```
    pub fn effective_confidence(&self, now: DateTime<Utc>, half_life: Duration) -> f32 {
        let age = (now - self.last_reinforced_at)
            .to_std()
            .unwrap_or(Duration::ZERO)
            .as_secs_f64();
        let hl = half_life.as_secs_f64();
        if hl <= 0.0 {
            return self.confidence;
        }
        (self.confidence as f64 * 0.5f64.powf(age / hl)) as f32
    }

    /// States the fact again at `now`: confidence moves halfway to 1.0 (never below the
    /// new candidate's confidence), the count goes up, decay restarts.
    pub fn reinforce(&mut self, candidate_confidence: f32, now: DateTime<Utc>) {
        let raised = self.confidence + (1.0 - self.confidence) * 0.5;
        self.confidence = raised.max(candidate_confidence).clamp(0.0, 1.0);
        self.last_reinforced_at = now;
        self.reinforcement_count += 1;
        self.pending_contradictions.clear();
    }
}

/// What a [`UserMemoryStore::upsert`] did with a candidate.
// The variants carry whole facts on purpose: a change is produced once per candidate and
// handed straight to the caller, so boxing would only add allocations.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum FactChange {
    /// A new fact was stored.
    Added {
        /// The new fact.
        fact: MemoryFact,
    },
    /// An existing fact was stated again; its confidence rose.
    Reinforced {
        /// The fact after reinforcement.
        fact: MemoryFact,
    },
    /// A contradiction: `old` is kept as history, `new` is current.
    Superseded {
        /// The fact that no longer holds (its `superseded_by` is `new.id`).
        old: MemoryFact,
        /// The fact that replaced it.
        new: MemoryFact,
    },
    /// A contradiction too weak to replace a well-established fact: `fact` stays current,
    /// `candidate` is a pending contradiction, recorded on the fact
    /// ([`MemoryFact::pending_contradictions`]); the same contradiction said again, or
    /// stated with more confidence (e.g. "my name is …"), supersedes.
    Contested {
        /// The fact that stays current.
        fact: MemoryFact,
        /// The contradicting candidate.
        candidate: FactCandidate,
    },
    /// A fact about something the change beside it ended stopped holding with it ("dog
    /// Rolo is 3 years old" once "we had to put Rolo down" closed the dog): `fact` as
    /// stored, its [`valid_to`](MemoryFact::valid_to) set and
    /// [`superseded_by`](MemoryFact::superseded_by) naming the fact that says what ended.
    /// Made by a store beside an upsert's own change ([`RankedFacts::dependents`](crate::store_support::RankedFacts::dependents)).
    Closed {
        /// The fact, no longer current.
        fact: MemoryFact,
    },
    /// The fact (and the versions before it) was deleted on request, e.g. by a
    /// `forget` tool; logged so a conversation's history says what was forgotten.
    Deleted {
        /// The fact as it was when deleted.
        fact: MemoryFact,
    },
    /// Nothing was stored.
    Ignored {
        /// The candidate.
        candidate: FactCandidate,
        /// Why.
        reason: String,
    },
}

impl FactChange {
    /// The fact that is current after the change, if any.
    pub fn current(&self) -> Option<&MemoryFact> {
        match self {
            FactChange::Added { fact } if !fact.is_current() => None,
            FactChange::Added { fact } | FactChange::Reinforced { fact } => Some(fact),
            FactChange::Superseded { new, .. } => Some(new),
            FactChange::Contested { fact, .. } => Some(fact),
            FactChange::Closed { .. } | FactChange::Deleted { .. } | FactChange::Ignored { .. } => {
                None
            }
        }
    }

    /// `"added"`, `"reinforced"`, `"superseded"`, `"contested"`, `"closed"`, `"deleted"` or
    /// `"ignored"`.
    pub fn kind(&self) -> &'static str {
        match self {
            FactChange::Added { .. } => "added",
            FactChange::Reinforced { .. } => "reinforced",
            FactChange::Superseded { .. } => "superseded",
            FactChange::Contested { .. } => "contested",
            FactChange::Closed { .. } => "closed",
            FactChange::Deleted { .. } => "deleted",
            FactChange::Ignored { .. } => "ignored",
        }
    }
}

/// A fact returned by a search, with how it ranked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ScoredFact {
    /// The fact.
    pub fact: MemoryFact,
    /// Similarity of the fact to the query, `0.0..=1.0`.
    pub relevance: f32,
    /// Confidence after decay.
    pub effective_confidence: f32,
    /// The ranking score, [`rank_score`]`(relevance, effective_confidence)`.
    pub score: f32,
}

impl ScoredFact {
    /// `fact` ranked with this relevance and effective confidence: its
    /// [`score`](Self::score) is [`rank_score`]`(relevance, effective_confidence)`, the
    /// ranking every backend shares.
    ///
    /// ```
    /// use agentmemory_core::facts::{rank_score, MemoryFact, FactCandidate, ScoredFact};
    ///
    /// let fact = MemoryFact::from_candidate("alice", FactCandidate::new("loves museums", 0.9), chrono::Utc::now());
    /// let scored = ScoredFact::new(fact, 0.5, 0.9);
    /// assert_eq!(scored.score, rank_score(0.5, 0.9));
    /// ```
    pub fn new(fact: MemoryFact, relevance: f32, effective_confidence: f32) -> Self {
        Self {
            fact,
            relevance,
            effective_confidence,
            score: rank_score(relevance, effective_confidence),
        }
    }
}

/// The ranking score of a fact for a query, shared by every backend:
/// `effective_confidence × (RELEVANCE_FLOOR + (1 − RELEVANCE_FLOOR) × relevance)`.
///
/// The floor lets a user's strongest facts surface even for a query that shares no
/// words with them (asked "any plans for this weekend?", an assistant should still know
/// the user loves museums), while relevant facts always rank above unrelated ones of
/// the same confidence.
///
/// ```
/// use agentmemory_core::facts::rank_score;
/// assert!(rank_score(0.9, 0.8) > rank_score(0.0, 0.8));
/// assert!(rank_score(0.0, 0.8) > 0.0);
/// assert_eq!(rank_score(1.0, 0.5), 0.5);
/// ```
pub fn rank_score(relevance: f32, effective_confidence: f32) -> f32 {
    let relevance = relevance.clamp(0.0, 1.0);
    effective_confidence * (RELEVANCE_FLOOR + (1.0 - RELEVANCE_FLOOR) * relevance)
}

/// The share of a fact's score it gets regardless of relevance (see [`rank_score`]).
pub const RELEVANCE_FLOOR: f32 = 0.25;

/// How confidence decays and what is too weak to return.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FactPolicy {
    /// Time for confidence to halve without reinforcement (default 30 days).
    pub half_life: Duration,
    /// Facts whose effective confidence is below this are not returned by search (default 0.2).
    pub min_confidence: f32,
}

impl Default for FactPolicy {
    fn default() -> Self {
        Self {
            half_life: Duration::from_secs(30 * 24 * 3600),
            min_confidence: 0.2,
        }
    }
}

/// Facts about users, reconciled on write and ranked on read.
///
/// Users are isolated: no call with one user id ever returns or changes another's facts.
#[async_trait]
pub trait UserMemoryStore: Send + Sync {
    /// Reconciles `candidate` with the user's current facts (see [`reconcile()`](crate::store_support::reconcile)).
    async fn upsert(&self, user_id: &str, candidate: FactCandidate) -> Result<FactChange>;
    /// Reconciles each of `candidates` in turn, as [`upsert`](Self::upsert) one after
    /// another would (a later candidate sees what an earlier one changed); the changes, in
    /// the order of the candidates.
    ///
    /// Provided as one [`upsert`](Self::upsert) after another, which may stop part way
    /// on an error; a store that can write them in one transaction overrides it (the
    /// facts one turn extracts are then one write).
    async fn upsert_many(
        &self,
        user_id: &str,
        candidates: Vec<FactCandidate>,
    ) -> Result<Vec<FactChange>> {
        let mut changes = Vec::with_capacity(candidates.len());
        for candidate in candidates {
            changes.push(self.upsert(user_id, candidate).await?);
        }
        Ok(changes)
    }
    /// The user's current facts most relevant to `query`, best first, at most
    /// `query.top_k`: ranked by [`rank_score`] (relevance × effective confidence, with a
    /// floor), facts whose effective confidence is under the policy's minimum left out.
    /// When the query carries an embedding, relevance is hybrid ([`fact_relevance_among`]); a
    /// store without embeddings ranks by words alone.
    async fn search_query(&self, user_id: &str, query: &FactQuery) -> Result<Vec<ScoredFact>>;
    /// [`search_query`](Self::search_query) for a words-only query: the user's current
    /// facts most relevant to `query`, at most `top_k`.
    ///
    /// Provided: stores implement [`search_query`](Self::search_query) only.
    async fn search(&self, user_id: &str, query: &str, top_k: usize) -> Result<Vec<ScoredFact>> {
        self.search_query(user_id, &FactQuery::new(query, top_k))
            .await
    }
    /// The user's current facts, oldest first.
    async fn list(&self, user_id: &str) -> Result<Vec<MemoryFact>>;
    /// One fact (current or superseded) by id.
    async fn get(&self, user_id: &str, fact_id: &str) -> Result<Option<MemoryFact>>;
    /// Deletes one fact and the history chain that leads to it; whether it existed.
    async fn delete(&self, user_id: &str, fact_id: &str) -> Result<bool>;
    /// Erases every fact of the user, history included; how many records were removed.
    async fn forget_user(&self, user_id: &str) -> Result<usize>;
    /// The chain of versions of a fact, oldest first, ending with the current one.
    async fn history(&self, user_id: &str, fact_id: &str) -> Result<Vec<MemoryFact>>;
    /// Every version of the user's facts, current and closed, in no particular order.
    ///
    /// Provided through [`list`](Self::list) and [`history`](Self::history); a store that
    /// can read all of a user's records at once overrides it.
    async fn versions(&self, user_id: &str) -> Result<Vec<MemoryFact>> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for current in self.list(user_id).await? {
            for version in self.history(user_id, &current.id).await? {
                if seen.insert(version.id.clone()) {
                    out.push(version);
                }
            }
        }
        Ok(out)
    }
    /// The user's facts as they stood at `at`: each version that held then, with
    /// [`valid_to`](MemoryFact::valid_to) set to when it stopped holding (`None`: it
    /// still holds), in the order they took effect. "Where did I live in 2023?"
    ///
    /// ```
    /// # tokio_test::block_on(async {
    /// use chrono::{TimeZone, Utc};
    /// use agentmemory_core::facts::{FactCandidate, InMemoryUserMemoryStore, UserMemoryStore};
    ///
    /// let store = InMemoryUserMemoryStore::new();
    /// let jan = Utc.with_ymd_and_hms(2025, 1, 10, 9, 0, 0).unwrap();
    /// let jun = Utc.with_ymd_and_hms(2025, 6, 10, 9, 0, 0).unwrap();
    /// // Imported out of order: June first, then January.
    /// store.upsert("ana", FactCandidate::new("lives in Cork", 0.9).with_attribute("location", "Cork").said_at(jun)).await?;
    /// store.upsert("ana", FactCandidate::new("lives in Sligo", 0.9).with_attribute("location", "Sligo").said_at(jan)).await?;
    /// assert_eq!(store.list("ana").await?[0].text, "lives in Cork");
    /// let march = Utc.with_ymd_and_hms(2025, 3, 1, 0, 0, 0).unwrap();
    /// let then = store.facts_as_of("ana", march).await?;
    /// assert_eq!(then[0].text, "lives in Sligo");
    /// assert_eq!(then[0].valid_to, Some(jun));
    /// # Ok::<_, agentmemory_core::MemoryError>(())
    /// # }).unwrap();
    /// ```
    async fn facts_as_of(&self, user_id: &str, at: DateTime<Utc>) -> Result<Vec<MemoryFact>> {
        Ok(versions::facts_at(&self.versions(user_id).await?, at))
    }
    /// Writes fact records as they are — ids, timestamps, confidences, supersession
    /// links — for `user_id`, without reconciling them: how an export is restored
    /// ([`import_facts`]). A record whose id the user already has is left alone, so a
    /// second import of the same records writes nothing. All records are written in one
    /// transaction where the backend has them. Returns how many were written.
    ///
    /// The records must be consistent (see [`FactsExport::validate`]): callers check.
    async fn import_records(&self, user_id: &str, records: Vec<MemoryFact>) -> Result<usize>;
}
