//! A versioned JSON document of every fact of one user, history included, and how to
//! load it back into any [`UserMemoryStore`].
//!
//! The store traits have no raw insert, so an import *replays* the facts: every version,
//! oldest first, goes through [`UserMemoryStore::upsert`] as a candidate (reconciliation
//! rebuilds the supersession chains), then each current fact is restated as many times
//! as it had been reinforced. Texts, attributes, values, polarities, sources, topics and
//! entities come back as they were; ids and timestamps are new, and confidences are the
//! ones reconciliation computes again.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{FactCandidate, FactChange, MemoryFact, UserMemoryStore};
use crate::error::{MemoryError, Result};

/// The version of the facts export format this build writes and the newest it reads.
pub const FACTS_EXPORT_VERSION: u32 = 1;

const WHAT: &str = "facts export";

/// Every fact of one user: the current ones and the versions they superseded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactsExport {
    /// Format version ([`FACTS_EXPORT_VERSION`]).
    pub version: u32,
    /// Whose facts these are.
    pub user_id: String,
    /// When the export was made.
    pub exported_at: DateTime<Utc>,
    /// Every version of every fact, each chain oldest first.
    pub facts: Vec<MemoryFact>,
}

impl FactsExport {
    /// The export as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| String::from("{}"))
    }

    /// Reads and [validates](Self::validate) an export, refusing malformed JSON and
    /// versions newer than this build's.
    ///
    /// ```
    /// use agentmemory_core::facts::FactsExport;
    /// use agentmemory_core::MemoryError;
    ///
    /// let doc = r#"{"version": 1, "user_id": "alice", "exported_at": "2026-01-01T00:00:00Z", "facts": []}"#;
    /// assert_eq!(FactsExport::from_json(doc).unwrap().user_id, "alice");
    ///
    /// let future = doc.replace("\"version\": 1", "\"version\": 9");
    /// assert!(matches!(
    ///     FactsExport::from_json(&future),
    ///     Err(MemoryError::UnsupportedVersion { found: 9, .. })
    /// ));
    /// assert!(FactsExport::from_json("{").is_err());
    /// ```
    pub fn from_json(json: &str) -> Result<Self> {
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| MemoryError::corrupt(WHAT, e))?;
        let version = value
            .get("version")
            .and_then(|v| v.as_u64())
            .ok_or_else(|| MemoryError::corrupt(WHAT, "missing numeric `version`"))?;
        if version == 0 || version > u64::from(FACTS_EXPORT_VERSION) {
            return Err(MemoryError::UnsupportedVersion {
                what: WHAT,
                found: u32::try_from(version).unwrap_or(u32::MAX),
                supported: FACTS_EXPORT_VERSION,
            });
        }
        let export: Self =
            serde_json::from_value(value).map_err(|e| MemoryError::corrupt(WHAT, e))?;
        export.validate()?;
        Ok(export)
    }

    /// Checks the whole document: a known version, a user id, every fact belonging to
    /// that user with a unique id, a text and a confidence in `0.0..=1.0`, and every
    /// `superseded_by` naming a fact of the document.
    pub fn validate(&self) -> Result<()> {
        if self.version == 0 || self.version > FACTS_EXPORT_VERSION {
            return Err(MemoryError::UnsupportedVersion {
                what: WHAT,
                found: self.version,
                supported: FACTS_EXPORT_VERSION,
            });
        }
        if self.user_id.trim().is_empty() {
            return Err(MemoryError::corrupt(WHAT, "empty `user_id`"));
        }
        let mut ids = HashSet::with_capacity(self.facts.len());
        for (n, fact) in self.facts.iter().enumerate() {
            let at = |reason: &str| MemoryError::corrupt(WHAT, format!("fact {}: {reason}", n + 1));
            if fact.user_id != self.user_id {
                return Err(at(&format!(
                    "belongs to user `{}`, not `{}`",
                    fact.user_id, self.user_id
                )));
            }
            if fact.id.is_empty() || !ids.insert(fact.id.as_str()) {
                return Err(at("missing or repeated `id`"));
            }
            if fact.text.trim().is_empty() {
                return Err(at("empty `text`"));
            }
            if !(0.0..=1.0).contains(&fact.confidence) {
                return Err(at("`confidence` outside 0.0..=1.0"));
            }
        }
        // Every chain of versions must end: no fact superseded by two, no cycle.
        let mut successor_of: HashMap<&str, &str> = HashMap::new();
        for fact in &self.facts {
            if let Some(next) = fact.superseded_by.as_deref() {
                if let Some(first) = successor_of.insert(next, fact.id.as_str()) {
                    return Err(MemoryError::corrupt(
                        WHAT,
                        format!("`{next}` supersedes both `{first}` and `{}`", fact.id),
                    ));
                }
            }
        }
        let next_of: HashMap<&str, &str> = self
            .facts
            .iter()
            .filter_map(|f| f.superseded_by.as_deref().map(|n| (f.id.as_str(), n)))
            .collect();
        for start in next_of.keys() {
            let mut at = *start;
            for _ in 0..=next_of.len() {
                match next_of.get(at) {
                    Some(next) if next == start => {
                        return Err(MemoryError::corrupt(
                            WHAT,
                            format!(
                                "the versions through `{start}` supersede each other in a cycle"
                            ),
                        ));
                    }
                    Some(next) => at = next,
                    None => break,
                }
            }
        }
        for (n, fact) in self.facts.iter().enumerate() {
            if let Some(next) = &fact.superseded_by {
                if !ids.contains(next.as_str()) {
                    return Err(MemoryError::corrupt(
                        WHAT,
                        format!(
                            "fact {}: superseded by `{next}`, which is not in the export",
                            n + 1
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// How many facts of the export are current.
    pub fn current_count(&self) -> usize {
        self.facts.iter().filter(|f| f.is_current()).count()
    }
}

/// Exports every fact of `user_id`: each current fact's history chain, oldest first.
pub async fn export_facts(store: &dyn UserMemoryStore, user_id: &str) -> Result<FactsExport> {
    let mut facts = Vec::new();
    let mut seen = HashSet::new();
    for current in store.list(user_id).await? {
        for version in store.history(user_id, &current.id).await? {
            if seen.insert(version.id.clone()) {
                facts.push(version);
            }
        }
    }
    Ok(FactsExport {
        version: FACTS_EXPORT_VERSION,
        user_id: user_id.to_owned(),
        exported_at: Utc::now(),
        facts,
    })
}

/// Replays `export` into `store` for `as_user` (or the export's user): every version in
/// the order it was first stored, then the reinforcements of the current facts. Facts
/// the user already has are reconciled with, not replaced. Validates the whole document
/// before writing anything. Returns what each upsert did.
///
/// ```
/// # tokio_test::block_on(async {
/// use agentmemory_core::facts::{export_facts, import_facts, FactCandidate, InMemoryUserMemoryStore, UserMemoryStore};
///
/// let old = InMemoryUserMemoryStore::new();
/// old.upsert("alice", FactCandidate::new("lives in Paris", 0.9).with_attribute("location", "Paris")).await?;
/// old.upsert("alice", FactCandidate::new("lives in Berlin", 0.9).with_attribute("location", "Berlin")).await?;
/// let export = export_facts(&old, "alice").await?;
/// assert_eq!(export.facts.len(), 2);
///
/// let new = InMemoryUserMemoryStore::new();
/// import_facts(&new, &export, Some("bob")).await?;
/// let current = new.list("bob").await?;
/// assert_eq!(current.len(), 1);
/// assert_eq!(current[0].text, "lives in Berlin");
/// assert_eq!(new.history("bob", &current[0].id).await?.len(), 2);
/// # Ok::<_, agentmemory_core::MemoryError>(())
/// # }).unwrap();
/// ```
pub async fn import_facts(
    store: &dyn UserMemoryStore,
    export: &FactsExport,
    as_user: Option<&str>,
) -> Result<Vec<FactChange>> {
    export.validate()?;
    let user = as_user.unwrap_or(&export.user_id);
    if user.trim().is_empty() {
        return Err(MemoryError::invalid("user id", "must not be empty"));
    }
    let mut order: Vec<&MemoryFact> = export.facts.iter().collect();
    // stable: versions stored at the same instant keep their order in the document
    order.sort_by_key(|f| f.created_at);
    let mut changes = Vec::with_capacity(order.len());
    for fact in &order {
        changes.push(
            store
                .upsert(user, candidate(fact, first_confidence(fact)))
                .await?,
        );
    }
    for fact in order.iter().filter(|f| f.is_current()) {
        let confidence = first_confidence(fact);
        for _ in 0..fact.reinforcement_count {
            changes.push(store.upsert(user, candidate(fact, confidence)).await?);
        }
    }
    Ok(changes)
}

/// Restores `export` into `store` for `as_user` (or the export's user) as it is: every
/// version with its id, timestamps, confidence and supersession link, in one batch
/// ([`UserMemoryStore::import_records`]) instead of one reconciliation per fact.
/// Validates the whole document first (unknown versions, foreign users, dangling links,
/// cycles: nothing is written). Records the user already has are skipped, so restoring
/// the same export twice writes nothing the second time. Under another user the ids are
/// derived from the user and the original ids, so that too is idempotent. Returns how
/// many records were written.
///
/// ```
/// # tokio_test::block_on(async {
/// use agentmemory_core::facts::{export_facts, restore_facts, FactCandidate, InMemoryUserMemoryStore, UserMemoryStore};
///
/// let old = InMemoryUserMemoryStore::new();
/// old.upsert("ana", FactCandidate::new("lives in Paris", 0.9).with_attribute("location", "Paris")).await?;
/// old.upsert("ana", FactCandidate::new("lives in Berlin", 0.9).with_attribute("location", "Berlin")).await?;
/// let export = export_facts(&old, "ana").await?;
///
/// let new = InMemoryUserMemoryStore::new();
/// assert_eq!(restore_facts(&new, &export, None).await?, 2);
/// assert_eq!(restore_facts(&new, &export, None).await?, 0); // already there
/// let current = new.list("ana").await?;
/// assert_eq!(current[0].text, "lives in Berlin");
/// assert_eq!(new.history("ana", &current[0].id).await?.len(), 2);
/// # Ok::<_, agentmemory_core::MemoryError>(())
/// # }).unwrap();
/// ```
pub async fn restore_facts(
    store: &dyn UserMemoryStore,
    export: &FactsExport,
    as_user: Option<&str>,
) -> Result<usize> {
    export.validate()?;
    let user = as_user.unwrap_or(&export.user_id);
    if user.trim().is_empty() {
        return Err(MemoryError::invalid("user id", "must not be empty"));
    }
    let mut records = export.facts.clone();
    if user != export.user_id {
        // Each id is derived once, from its own fact, and links follow the same map (an
        // id that is not a ULID takes its time from the fact it names).
        let new_ids: HashMap<String, String> = records
            .iter()
            .map(|f| (f.id.clone(), derived_id(user, &f.id, f.created_at)))
            .collect();
        // (validated above: every link names a fact of the export)
        let renamed = |id: &mut String| {
            if let Some(new) = new_ids.get(id.as_str()) {
                id.clone_from(new);
            }
        };
        for fact in &mut records {
            renamed(&mut fact.id);
            if let Some(next) = &mut fact.superseded_by {
                renamed(next);
            }
        }
    }
    // oldest first, as the store would have written them
    records.sort_by_key(|f| f.created_at);
    store.import_records(user, records).await
}

/// The id a fact restored under `user` gets: a ULID with the original's time (or the
/// fact's creation time) and randomness derived from the user and the original id, so
/// the same restore always gives the same ids.
fn derived_id(user: &str, id: &str, created_at: chrono::DateTime<Utc>) -> String {
    let fnv = |seed: u64| {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
        for b in user.bytes().chain([0]).chain(id.bytes()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    };
    let ms = ulid::Ulid::from_string(id)
        .map(|u| u.timestamp_ms())
        .unwrap_or_else(|_| created_at.timestamp_millis().max(0) as u64);
    let random = (u128::from(fnv(1)) << 64 | u128::from(fnv(2))) & ((1u128 << 80) - 1);
    ulid::Ulid::from_parts(ms, random).to_string()
}

/// The confidence a current fact must start from so that its reinforcements (each moving
/// confidence halfway to 1.0, see [`MemoryFact::reinforce`]) end at its exported
/// confidence; the exported confidence itself when no such start exists (superseded
/// facts are replayed once, with their last confidence).
fn first_confidence(fact: &MemoryFact) -> f32 {
    if !fact.is_current() || fact.reinforcement_count == 0 {
        return fact.confidence;
    }
    let halvings = fact.reinforcement_count.min(30) as i32;
    let start = 1.0 - (1.0 - f64::from(fact.confidence)) * 2f64.powi(halvings);
    if start > 0.0 {
        start as f32
    } else {
        fact.confidence
    }
}

fn candidate(fact: &MemoryFact, confidence: f32) -> FactCandidate {
    FactCandidate {
        text: fact.text.clone(),
        subject: fact.subject.clone(),
        attribute: fact.attribute.clone(),
        value: fact.value.clone(),
        polarity: fact.polarity,
        confidence,
        source: fact.source.clone(),
        topics: fact.topics.clone(),
        entities: fact.entities.clone(),
        embedding: fact.embedding.clone(),
        observed_at: fact.observed_at,
        transition: None,
        valid_from: fact.valid_from,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::InMemoryUserMemoryStore;

    #[tokio::test]
    async fn invalid_documents_write_nothing() {
        let store = InMemoryUserMemoryStore::new();
        store
            .upsert("alice", FactCandidate::new("likes tea", 0.8))
            .await
            .unwrap();
        let mut export = export_facts(&store, "alice").await.unwrap();
        export.facts[0].user_id = "mallory".into();
        let target = InMemoryUserMemoryStore::new();
        assert!(import_facts(&target, &export, None).await.is_err());
        export.facts[0].user_id = "alice".into();
        export.facts[0].superseded_by = Some("nowhere".into());
        assert!(import_facts(&target, &export, None).await.is_err());
        assert!(target.list("alice").await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn reinforcements_are_replayed() {
        let store = InMemoryUserMemoryStore::new();
        for _ in 0..3 {
            store
                .upsert("alice", FactCandidate::new("likes tea", 0.6))
                .await
                .unwrap();
        }
        let export = export_facts(&store, "alice").await.unwrap();
        let json = export.to_json();
        let back = FactsExport::from_json(&json).unwrap();
        let target = InMemoryUserMemoryStore::new();
        import_facts(&target, &back, None).await.unwrap();
        let facts = target.list("alice").await.unwrap();
        assert_eq!(facts.len(), 1);
        assert_eq!(facts[0].reinforcement_count, 2);
        let original = store.list("alice").await.unwrap();
        assert!((facts[0].confidence - original[0].confidence).abs() < 1e-4);
    }

    async fn moved_twice() -> FactsExport {
        let store = InMemoryUserMemoryStore::new();
        for city in ["Paris", "Berlin", "Oslo"] {
            store
                .upsert(
                    "alice",
                    FactCandidate::new(format!("lives in {city}"), 0.9)
                        .with_attribute("location", city),
                )
                .await
                .unwrap();
        }
        export_facts(&store, "alice").await.unwrap()
    }

    #[tokio::test]
    async fn cycles_and_branches_are_refused_naming_the_ids() {
        let export = moved_twice().await;
        let (a, b) = (export.facts[0].id.clone(), export.facts[1].id.clone());
        let mut cyclic = export.clone();
        for f in &mut cyclic.facts {
            if f.superseded_by.is_none() {
                f.superseded_by = Some(a.clone()); // the current one points back to the first
            }
        }
        let err = cyclic.validate().unwrap_err().chain().to_string();
        assert!(err.contains("cycle"), "{err}");
        let mut branching = export.clone();
        branching.facts[2].superseded_by = branching.facts[0].superseded_by.clone();
        let err = branching.validate().unwrap_err().chain().to_string();
        assert!(
            err.contains("supersedes both") && (err.contains(&a) || err.contains(&b)),
            "{err}"
        );
        let target = InMemoryUserMemoryStore::new();
        assert!(restore_facts(&target, &cyclic, None).await.is_err());
        assert!(target.list("alice").await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn ids_that_are_not_ulids_keep_their_links_under_another_user() {
        let mut export = moved_twice().await;
        let names: Vec<String> = export.facts.iter().map(|f| f.id.clone()).collect();
        let rename = |id: &str| format!("fact-{}", names.iter().position(|n| n == id).unwrap());
        for fact in &mut export.facts {
            fact.id = rename(&fact.id);
            fact.superseded_by = fact.superseded_by.as_deref().map(rename);
        }
        // versions days apart, so each id's time differs from its predecessor's
        for (i, fact) in export.facts.iter_mut().enumerate() {
            fact.created_at -= chrono::Duration::days(10 - i as i64);
        }
        let target = InMemoryUserMemoryStore::new();
        assert_eq!(
            restore_facts(&target, &export, Some("bob")).await.unwrap(),
            3
        );
        let current = target.list("bob").await.unwrap();
        assert_eq!(current.len(), 1);
        assert_eq!(current[0].text, "lives in Oslo");
        let history = target.history("bob", &current[0].id).await.unwrap();
        assert_eq!(
            history.len(),
            3,
            "links follow the renamed ids: {history:?}"
        );
    }

    #[tokio::test]
    async fn restoring_is_batched_exact_and_idempotent_under_any_user() {
        let export = moved_twice().await;
        let target = InMemoryUserMemoryStore::new();
        assert_eq!(restore_facts(&target, &export, None).await.unwrap(), 3);
        assert_eq!(restore_facts(&target, &export, None).await.unwrap(), 0);
        let current = target.list("alice").await.unwrap();
        assert_eq!(current.len(), 1);
        assert_eq!(current[0].id, export.facts[2].id, "ids kept");
        assert_eq!(
            target.history("alice", &current[0].id).await.unwrap().len(),
            3
        );
        // under another user: new, stable ids
        assert_eq!(
            restore_facts(&target, &export, Some("bob")).await.unwrap(),
            3
        );
        assert_eq!(
            restore_facts(&target, &export, Some("bob")).await.unwrap(),
            0
        );
        let bob = target.list("bob").await.unwrap();
        assert_eq!(bob.len(), 1);
        assert_ne!(bob[0].id, current[0].id);
        assert_eq!(bob[0].text, "lives in Oslo");
        assert_eq!(target.history("bob", &bob[0].id).await.unwrap().len(), 3);
    }
}
