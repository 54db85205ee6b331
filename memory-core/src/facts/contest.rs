//! Pending contradictions: a weak statement against a well-established fact ("I'm
//! Danish" against "my name is Maria") does not replace it, but it is not forgotten
//! either. It is recorded on the fact; a second, consistent contradiction since the fact
//! was last confirmed supersedes it, and confirming the fact clears the doubt.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::reconcile::{normalize, value_key};
use super::{FactCandidate, MemoryFact, Reconciliation};

/// How many pending contradictions a fact keeps (the oldest go first).
pub const MAX_PENDING: usize = 8;

/// A statement that contradicted a fact without the confidence to replace it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingContradiction {
    /// The contradicting statement.
    pub text: String,
    /// The value it stated, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Its confidence.
    pub confidence: f32,
    /// When it was said.
    #[serde(deserialize_with = "crate::rfc3339::deserialize")]
    pub at: DateTime<Utc>,
}

impl MemoryFact {
    /// Records `candidate` as a pending contradiction of this fact, said at `now`.
    ///
    /// ```
    /// use chrono::Utc;
    /// use agentmemory_core::facts::{FactCandidate, MemoryFact};
    ///
    /// let now = Utc::now();
    /// let mut name = MemoryFact::from_candidate("u", FactCandidate::new("name is Maria", 0.95), now);
    /// name.contest(&FactCandidate::new("name is Danish", 0.4).with_attribute("name", "Danish"), now);
    /// assert_eq!(name.pending_contradictions.len(), 1);
    /// name.reinforce(0.9, now); // stated again: the doubt is answered
    /// assert!(name.pending_contradictions.is_empty());
    /// ```
    pub fn contest(&mut self, candidate: &FactCandidate, now: DateTime<Utc>) {
        if self.pending_contradictions.len() >= MAX_PENDING {
            self.pending_contradictions.remove(0);
        }
        self.pending_contradictions.push(PendingContradiction {
            text: candidate.text.clone(),
            value: candidate.value.clone(),
            confidence: candidate.confidence,
            at: now,
        });
    }

    /// The pending contradiction, recorded since the fact was last confirmed, that says
    /// what `candidate` says.
    pub fn pending_like(&self, candidate: &FactCandidate) -> Option<&PendingContradiction> {
        let same = |p: &PendingContradiction| match (&p.value, &candidate.value) {
            (Some(a), Some(b)) => value_key(a) == value_key(b),
            _ => normalize(&p.text) == normalize(&candidate.text),
        };
        self.pending_contradictions
            .iter()
            .rev()
            .find(|p| p.at >= self.last_reinforced_at && same(p))
    }
}

/// A contest becomes a supersession when the same contradiction was already pending:
/// said twice, it is no longer a slip. The new fact's confidence combines both
/// statements (`1 − (1 − a)(1 − b)`).
pub(super) fn escalate(
    current: &[MemoryFact],
    decision: Reconciliation,
    mut candidate: FactCandidate,
) -> (Reconciliation, FactCandidate) {
    let Reconciliation::Contest(id) = &decision else {
        return (decision, candidate);
    };
    let earlier = current
        .iter()
        .find(|f| &f.id == id)
        .and_then(|f| f.pending_like(&candidate))
        .map(|p| p.confidence);
    match earlier {
        Some(a) => {
            let b = candidate.confidence;
            candidate.confidence = (1.0 - (1.0 - a) * (1.0 - b)).clamp(0.0, 1.0);
            (Reconciliation::Supersede(id.clone()), candidate)
        }
        None => (decision, candidate),
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::*;

    fn name(value: &str, confidence: f32) -> FactCandidate {
        FactCandidate::new(format!("name is {value}"), confidence).with_attribute("name", value)
    }

    #[test]
    fn the_oldest_pending_contradictions_go_first() {
        let now = Utc::now();
        let mut fact = MemoryFact::from_candidate("u", name("Maria", 0.95), now);
        for i in 0..MAX_PENDING + 3 {
            fact.contest(&name(&format!("N{i}"), 0.4), now);
        }
        assert_eq!(fact.pending_contradictions.len(), MAX_PENDING);
        assert_eq!(fact.pending_contradictions[0].value.as_deref(), Some("N3"));
    }

    #[test]
    fn only_doubt_since_the_last_confirmation_counts() {
        let now = Utc::now();
        let mut fact = MemoryFact::from_candidate("u", name("Maria", 0.95), now);
        fact.contest(&name("Mara", 0.4), now);
        assert!(fact.pending_like(&name("mara", 0.4)).is_some());
        assert!(fact.pending_like(&name("Marta", 0.4)).is_none());
        fact.last_reinforced_at = now + Duration::seconds(1);
        assert!(fact.pending_like(&name("Mara", 0.4)).is_none());
    }

    #[test]
    fn a_repeated_contest_escalates_with_combined_confidence() {
        let now = Utc::now();
        let mut fact = MemoryFact::from_candidate("u", name("Maria", 0.95), now);
        let id = fact.id.clone();
        let (first, _) = escalate(
            std::slice::from_ref(&fact),
            Reconciliation::Contest(id.clone()),
            name("Mara", 0.4),
        );
        assert_eq!(first, Reconciliation::Contest(id.clone()));
        fact.contest(&name("Mara", 0.4), now);
        let (second, candidate) = escalate(
            std::slice::from_ref(&fact),
            Reconciliation::Contest(id.clone()),
            name("Mara", 0.5),
        );
        assert_eq!(second, Reconciliation::Supersede(id));
        assert!((candidate.confidence - 0.7).abs() < 1e-6, "1 - 0.6 * 0.5");
    }

    #[test]
    fn facts_written_before_pending_contradictions_still_load() {
        let now = Utc::now();
        let fact = MemoryFact::from_candidate("u", name("Maria", 0.95), now);
        let json = serde_json::to_string(&fact).expect("serialize");
        assert!(!json.contains("pending_contradictions"), "{json}");
        let old = r#"{"id":"01J0000000000000000000000A","user_id":"u","text":"name is Maria",
            "attribute":"name","value":"Maria","polarity":"positive","confidence":0.95,
            "created_at":"2025-01-01T00:00:00Z","last_reinforced_at":"2025-01-01T00:00:00Z",
            "reinforcement_count":0}"#;
        let back: MemoryFact = serde_json::from_str(old).expect("an old fact loads");
        assert!(back.pending_contradictions.is_empty());
        let mut contested = fact.clone();
        contested.contest(&name("Mara", 0.4), now);
        let json = serde_json::to_string(&contested).expect("serialize");
        let back: MemoryFact = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(
            back.pending_contradictions,
            contested.pending_contradictions
        );
    }
}
