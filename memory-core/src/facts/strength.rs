//! A current fact's strength in a form that decays cheaply, so a search can tell which
//! facts cannot enter its top k without the decay maths of every fact.
//!
//! A fact's effective confidence at `now` is `confidence × 0.5^(age / half_life)`, that
//! is `2^(log2(confidence) − age / half_life)`: with the logarithm and the time of the
//! last reinforcement kept as numbers, its logarithm costs a subtraction and a multiply.

use chrono::{DateTime, Utc};

use super::MemoryFact;

/// Slack, in log2 units, that keeps the bound on the safe side of float rounding: a fact
/// is only skipped when it misses by more than this, and the exact maths decides the rest.
const SLACK: f64 = 1e-6;

/// What a search needs to bound a fact's effective confidence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Strength {
    confidence: f32,
    log2_confidence: f64,
    /// The last reinforcement, in seconds since the Unix epoch.
    reinforced: f64,
    /// The same instant as whole seconds and nanoseconds, for the exact decay.
    reinforced_at: (i64, u32),
}

impl Strength {
    pub(super) fn of(fact: &MemoryFact) -> Self {
        let t = fact.last_reinforced_at;
        Self {
            confidence: fact.confidence,
            log2_confidence: f64::from(fact.confidence).log2(),
            reinforced: seconds(t),
            reinforced_at: (t.timestamp(), t.timestamp_subsec_nanos()),
        }
    }
}

/// The clock and decay of one search.
#[derive(Debug, Clone, Copy)]
pub(super) struct Decay {
    now: f64,
    per_second: f64,
    now_at: (i64, u32),
    half_life: f64,
}

impl Decay {
    /// Decay at `now` with confidence halving every `half_life` (none when it is zero).
    pub(super) fn at(now: DateTime<Utc>, half_life: std::time::Duration) -> Self {
        let hl = half_life.as_secs_f64();
        Self {
            now: seconds(now),
            per_second: if hl > 0.0 { 1.0 / hl } else { 0.0 },
            now_at: (now.timestamp(), now.timestamp_subsec_nanos()),
            half_life: hl,
        }
    }

    /// The fact's effective confidence, bit for bit what
    /// [`MemoryFact::effective_confidence`] returns at the same instant, without date
    /// arithmetic (for clock times, which never carry a leap second).
    pub(super) fn effective(self, s: Strength) -> f32 {
        if self.half_life <= 0.0 {
            return s.confidence;
        }
        let (mut secs, mut nanos) = (
            self.now_at.0 - s.reinforced_at.0,
            i64::from(self.now_at.1) - i64::from(s.reinforced_at.1),
        );
        if nanos < 0 {
            secs -= 1;
            nanos += 1_000_000_000;
        }
        let age = if secs < 0 {
            0.0
        } else {
            std::time::Duration::new(secs as u64, nanos as u32).as_secs_f64()
        };
        (f64::from(s.confidence) * 0.5f64.powf(age / self.half_life)) as f32
    }

    /// log2 of the fact's effective confidence (up to rounding).
    fn log2_effective(self, s: Strength) -> f64 {
        s.log2_confidence - (self.now - s.reinforced).max(0.0) * self.per_second
    }

    /// Whether a fact of strength `s` may reach an effective confidence of `needed`;
    /// `false` only when it certainly cannot.
    pub(super) fn may_reach(self, s: Strength, needed: Needed) -> bool {
        self.log2_effective(s) >= needed.0 - SLACK
    }
}

/// An effective confidence to reach, kept as its logarithm (computed once per threshold,
/// compared against many facts).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Needed(f64);

impl Needed {
    pub(super) fn new(effective_confidence: f32) -> Self {
        Self(if effective_confidence > 0.0 {
            f64::from(effective_confidence).log2()
        } else {
            f64::NEG_INFINITY
        })
    }
}

fn seconds(t: DateTime<Utc>) -> f64 {
    t.timestamp() as f64 + f64::from(t.timestamp_subsec_nanos()) * 1e-9
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chrono::Timelike;

    use super::*;
    use crate::facts::FactCandidate;

    #[test]
    fn the_bound_agrees_with_the_exact_decay() {
        let start = Utc::now();
        let month = Duration::from_secs(30 * 24 * 3600);
        for (confidence, age_hours) in [(0.8, 0.0), (0.5, 12.0), (0.99, 1000.0), (0.21, 3.0)] {
            let fact = MemoryFact::from_candidate("u", FactCandidate::new("x", confidence), start);
            let now = start + chrono::Duration::seconds((age_hours * 3600.0) as i64);
            let exact = fact.effective_confidence(now, month);
            let decay = Decay::at(now, month);
            let s = Strength::of(&fact);
            assert!(
                decay.may_reach(s, Needed::new(exact)),
                "{confidence} {age_hours}"
            );
            assert!(!decay.may_reach(s, Needed::new(exact * 1.001)));
            assert!(decay.may_reach(s, Needed::new(0.0)));
        }
        // The exact decay matches the fact's own, bit for bit, at any offset.
        for offset_ns in [
            0i64,
            1,
            999_999_999,
            1_000_000_001,
            86_400_000_000_123,
            -5_000,
        ] {
            for fact_ns in [0u32, 1, 500_000_000, 999_999_999] {
                let t = start.with_nanosecond(fact_ns).unwrap();
                let fact = MemoryFact::from_candidate("u", FactCandidate::new("x", 0.77), t);
                let now = t + chrono::Duration::nanoseconds(offset_ns);
                assert_eq!(
                    Decay::at(now, month)
                        .effective(Strength::of(&fact))
                        .to_bits(),
                    fact.effective_confidence(now, month).to_bits(),
                    "{offset_ns} {fact_ns}"
                );
            }
        }
        // Without decay, the confidence itself.
        let fact = MemoryFact::from_candidate("u", FactCandidate::new("x", 0.6), start);
        let later = start + chrono::Duration::days(400);
        let none = Decay::at(later, Duration::ZERO);
        assert!(none.may_reach(Strength::of(&fact), Needed::new(0.6)));
        assert!(!none.may_reach(Strength::of(&fact), Needed::new(0.61)));
    }
}
