//! Ranking episodes by words, meaning and time together.

use super::RecallReason;

/// What falling inside the period a question names adds to an episode's score. Word and
/// meaning relevance is a cosine in `0.0..=1.0`, so an episode of the asked period that
/// matches a little outranks one of another period that matches well, while among
/// episodes of the period the better match still wins.
pub const TIME_BOOST: f32 = 0.5;

/// Scores `relevance` for an episode that is (`in_period = Some(true)`) or is not
/// (`Some(false)`) in the period the query names, or for a query naming none (`None`).
/// `None` means the episode is not recalled at all: it neither matches nor falls in the
/// period, so it would only fill the count.
pub fn score(relevance: f32, in_period: Option<bool>) -> Option<(f32, RecallReason)> {
    let relevance = if relevance.is_finite() {
        relevance.max(0.0)
    } else {
        0.0
    };
    match (relevance > 0.0, in_period) {
        (true, Some(true)) => Some((relevance + TIME_BOOST, RecallReason::MatchAndTime)),
        (false, Some(true)) => Some((TIME_BOOST, RecallReason::Time)),
        (true, _) => Some((relevance, RecallReason::Match)),
        (false, _) => None,
    }
}

/// What a dated episode (its words name when something happened) gains for a question
/// that asks when: such an episode is where the answer's date is.
pub const DATED_BOOST: f32 = 0.1;

/// `score` raised by [`DATED_BOOST`] when the question asks when and the episode's words
/// name a date.
pub fn dated(score: f32, asks_when: bool, names_a_date: bool) -> f32 {
    if asks_when && names_a_date {
        score + DATED_BOOST
    } else {
        score
    }
}

/// The best `k`, best first (ties: the more recent first), through the one top-k
/// ([`crate::vector::best`]); `key` gives each item's score and episode id.
pub fn best<T>(found: Vec<T>, k: usize, key: impl for<'a> Fn(&'a T) -> (f32, &'a str)) -> Vec<T> {
    crate::vector::topk::best(found, k, key, crate::vector::topk::Ties::LargerIdFirst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_recalled_for_nothing() {
        assert_eq!(score(0.0, None), None);
        assert_eq!(score(0.0, Some(false)), None);
        assert_eq!(score(f32::NAN, None), None);
        assert_eq!(score(-0.3, None), None);
    }

    #[test]
    fn the_period_lifts_a_weak_match_above_a_strong_one_outside_it() {
        let (inside, why) = score(0.1, Some(true)).unwrap();
        assert_eq!(why, RecallReason::MatchAndTime);
        let (outside, _) = score(0.55, Some(false)).unwrap();
        assert!(inside > outside);
        let (only_time, why) = score(0.0, Some(true)).unwrap();
        assert_eq!(why, RecallReason::Time);
        assert!(only_time < inside);
    }
}
