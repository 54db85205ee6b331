//! Hybrid ranking: one ranking from a sparse (words) and a dense (meaning) one.
//!
//! Every backend fuses with this module, so a hybrid search ranks the same way whatever
//! stores the documents.

use std::collections::HashMap;
use std::hash::Hash;

/// How a sparse and a dense score (or ranking) combine into one.
///
/// The default, [`Fusion::DEFAULT`], was chosen against the alternatives on every labelled
/// set `memory-core/examples/fusion_eval.rs` reads (statements and the questions that
/// bring them back, multi-session conversations, bare values looked up in them) and judged
/// once on a hold-out set; `memory-core/tests/retrieval_eval.rs` keeps it within 0.5 point
/// of the better single side on two of them.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Fusion {
    /// `dense_weight × max(cosine, 0) + (1 − dense_weight) × sparse`: both scores are
    /// cosines in `0.0..=1.0`, so the fused score is one too, and a document missing from
    /// one side counts 0 there.
    Weighted {
        /// The dense side's share, `0.0..=1.0`.
        dense_weight: f32,
    },
    /// Reciprocal rank fusion: `Σ 1 / (k + rank)` over the rankings a document appears
    /// in (ranks from 1); scores ignored beyond their order.
    ReciprocalRank {
        /// The damping constant (60 in the original paper).
        k: f32,
    },
    /// [`Fusion::Weighted`] with the dense share set per query from how informative each
    /// ranking is: a side's confidence `c` is the margin of its best score over its score
    /// at position `depth` (0 past the list's end) raised to `power`, and the query's dense
    /// share is `w·c_dense / (w·c_dense + (1 − w)·c_sparse)` with `w = dense_weight` (`w`
    /// itself when neither side separates anything). A keyword that singles out one message pulls
    /// the weight to words; a query that shares no word with any document, or matches
    /// every document alike, leaves it to meaning. The fused score stays a convex mix of
    /// the two cosines, in `0.0..=1.0`, so thresholds on it keep their meaning.
    ///
    /// Scoring one document alone ([`Fusion::combine`]) has no rankings to judge, and
    /// falls back to the fixed `dense_weight`.
    Adaptive {
        /// The dense side's prior share, `0.0..=1.0`.
        dense_weight: f32,
        /// The position (from 0) whose score the best score is compared with.
        depth: usize,
        /// How sharply the side with the larger margin takes over (1 = in proportion).
        power: f32,
    },
    /// `dense_weight × max(cosine, 0) + (1 − dense_weight) × sparse / best`, with `best`
    /// the query's best sparse score: the word side counts relative to the best word
    /// match of the query, the meaning side as the cosine it is.
    ///
    /// Sparse cosines shrink as documents grow (a passage of six messages that holds the
    /// answer's rare word scores 0.2, a one-line fact 0.6), while their order stays
    /// reliable; the dense cosines of one model keep their scale. Scaling the word side by
    /// its best match makes the pull of the best word match the same on any text: it
    /// decides between documents that meaning rates within `(1 − w) / w` of each other
    /// (0.042 cosine at `w` = 0.96) and never overturns a clearer meaning difference. When
    /// meaning is flat (long text, a query naming a rare thing), words decide; when
    /// meaning separates, it leads. The fused score stays in `0.0..=1.0`.
    ///
    /// Scoring one document alone ([`Fusion::combine`]) has no best word match to scale
    /// by and takes it as 1 (the sparse cosine as it is); [`Fusion::combine_scaled`]
    /// takes the query's best.
    MaxScaled {
        /// The dense side's share, `0.0..=1.0`.
        dense_weight: f32,
    },
    /// `dense_weight × max(cosine, 0) + (1 − dense_weight) × coverageᵖ`, with `coverage`
    /// the share of the query's own term weight the document holds
    /// ([`tfidf::coverage`](crate::tfidf::coverage): IDF-weighted, a query
    /// word no document holds weighing as the rarest word), `p` = `power`.
    ///
    /// The word side asks "does this document say what the query says?" rather than
    /// "how similar are the two bags of words?". A bare name or value found in a message
    /// covers the query fully and pulls by the whole `1 − w`, however long the message;
    /// a question whose content words the documents do not use (a paraphrase) leaves every
    /// document with low coverage, and meaning decides; documents that all hold the query's
    /// one common word are covered alike, and meaning orders them. The power keeps partial
    /// matches weak (half the weight covered pulls by an eighth at `p` = 3). The fused
    /// score stays in `0.0..=1.0`.
    ///
    /// Needs each document's coverage: [`fuse_covered`], and the stores' hybrid searches,
    /// compute it. Without it ([`Fusion::combine`], [`Fusion::combine_scaled`], [`fuse`])
    /// the word side is the sparse score relative to the query's best, as
    /// [`Fusion::MaxScaled`] reads it.
    Coverage {
        /// The dense side's share, `0.0..=1.0`.
        dense_weight: f32,
        /// The power coverage is raised to (1 = in proportion).
        power: f32,
    },
}

impl Fusion {
    /// The fusion every store uses unless told otherwise: [`Fusion::Coverage`] with
    /// `dense_weight: 0.6, power: 5.0`, `0.6 × cosine + 0.4 × coverage⁵`.
    ///
    /// Meaning ranks, and a document holding (nearly) all of the query's own words is
    /// pulled up whatever else it says: a bare name or value found in a long message, a
    /// question's rare words in a passage. The fifth power keeps a document sharing only
    /// part of the query's weight (one common word of a paraphrase) from overturning
    /// meaning.
    ///
    /// Chosen by a rule fixed beforehand over the nine labelled sets the project had read
    /// (within 0.5 point of the better of words and meaning alone on all nine, then the
    /// largest word pull), then judged once on a hold-out set written for the purpose and
    /// never tuned on (`bench/results/fusion.md`, reproduced by `cargo run --release -p
    /// agentmemory-core --features local-embed --example fusion_eval -- --fresh --frozen2
    /// --holdout`). The fixed weight it replaces (`Weighted { dense_weight: 0.8 }`) lost up
    /// to 8.7 points to words alone on conversations.
    pub const DEFAULT: Fusion = Fusion::Coverage {
        dense_weight: 0.6,
        power: 5.0,
    };

    /// The fused score of one document from its sparse cosine and dense cosine, for
    /// [`Fusion::Weighted`]; `None` for rank-based fusion, which needs whole rankings.
    ///
    /// ```
    /// use agentmemory_index::fuse::Fusion;
    ///
    /// let f = Fusion::Weighted { dense_weight: 0.75 };
    /// assert_eq!(f.combine(0.0, 0.8), Some(0.6));
    /// assert_eq!(f.combine(1.0, -0.3), Some(0.25)); // negative cosines count 0
    /// ```
    pub fn combine(self, sparse: f32, dense: f32) -> Option<f32> {
        match self {
            Fusion::Weighted { dense_weight } => {
                let w = dense_weight.clamp(0.0, 1.0);
                Some(w * dense.max(0.0) + (1.0 - w) * sparse.clamp(0.0, 1.0))
            }
            Fusion::Adaptive { dense_weight, .. } => {
                Fusion::Weighted { dense_weight }.combine(sparse, dense)
            }
            Fusion::MaxScaled { dense_weight } | Fusion::Coverage { dense_weight, .. } => {
                Fusion::Weighted { dense_weight }.combine(sparse, dense)
            }
            Fusion::ReciprocalRank { .. } => None,
        }
    }

    /// The fused score of one document, like [`Fusion::combine`], given `best_sparse`, the
    /// query's best sparse score over the documents it ranks: [`Fusion::MaxScaled`]
    /// divides the document's sparse score by it; every other fusion ignores it.
    ///
    /// ```
    /// use agentmemory_index::fuse::Fusion;
    ///
    /// let f = Fusion::MaxScaled { dense_weight: 0.75 };
    /// // The best word match of the query scored 0.25: this document has it.
    /// assert_eq!(f.combine_scaled(0.25, 0.5, 0.25), Some(0.625));
    /// // Half the best word score.
    /// assert_eq!(f.combine_scaled(0.125, 0.5, 0.25), Some(0.5));
    /// // No document shares a word with the query: meaning alone.
    /// assert_eq!(f.combine_scaled(0.0, 0.5, 0.0), Some(0.375));
    /// ```
    pub fn combine_scaled(self, sparse: f32, dense: f32, best_sparse: f32) -> Option<f32> {
        match self {
            Fusion::MaxScaled { .. } | Fusion::Coverage { .. } => {
                let best = best_sparse.clamp(0.0, 1.0);
                let relative = if best > 0.0 {
                    (sparse.clamp(0.0, 1.0) / best).min(1.0)
                } else {
                    0.0
                };
                self.combine(relative, dense)
            }
            other => other.combine(sparse, dense),
        }
    }

    /// The fused score of one document given everything a fusion may read of it: its
    /// sparse and dense cosines, the query's best sparse score, and the document's query
    /// coverage ([`tfidf::coverage`](crate::tfidf::coverage), 0 for a
    /// document sharing no word with the query). [`Fusion::Coverage`] reads the coverage;
    /// every other fusion is [`Fusion::combine_scaled`].
    ///
    /// ```
    /// use agentmemory_index::fuse::Fusion;
    ///
    /// let f = Fusion::Coverage { dense_weight: 0.75, power: 2.0 };
    /// // The document holds every query word: the whole word share.
    /// assert_eq!(f.combine_covered(0.3, 0.5, 0.6, 1.0), Some(0.625));
    /// // Half the query's weight: a quarter of it.
    /// assert_eq!(f.combine_covered(0.3, 0.5, 0.6, 0.5), Some(0.4375));
    /// // No query word: meaning alone.
    /// assert_eq!(f.combine_covered(0.0, 0.5, 0.6, 0.0), Some(0.375));
    /// ```
    pub fn combine_covered(
        self,
        sparse: f32,
        dense: f32,
        best_sparse: f32,
        coverage: f32,
    ) -> Option<f32> {
        match self {
            Fusion::Coverage { power, .. } => {
                let c = coverage.clamp(0.0, 1.0);
                let words = if c > 0.0 { c.powf(power.max(0.0)) } else { 0.0 };
                self.combine(words, dense)
            }
            other => other.combine_scaled(sparse, dense, best_sparse),
        }
    }

    /// The fixed-weight fusion to use for one query, given its two rankings (each best
    /// first): for [`Fusion::Adaptive`] the weight its rankings' margins give, otherwise
    /// `self` unchanged.
    ///
    /// ```
    /// use agentmemory_index::fuse::Fusion;
    ///
    /// let adaptive = Fusion::Adaptive { dense_weight: 0.5, depth: 1, power: 1.0 };
    /// // Words single out one document (margin 0.75); meaning separates less (0.25).
    /// let f = adaptive.for_query(&[0.75], &[0.5, 0.25]);
    /// assert_eq!(f, Fusion::Weighted { dense_weight: 0.25 });
    /// ```
    pub fn for_query(self, sparse: &[f32], dense: &[f32]) -> Fusion {
        match self {
            Fusion::Adaptive {
                dense_weight,
                depth,
                power,
            } => {
                let w = dense_weight.clamp(0.0, 1.0);
                let margin = |scores: &[f32], clamp: fn(f32) -> f32| -> f32 {
                    let top = scores.first().map_or(0.0, |s| clamp(*s));
                    let at = scores.get(depth).map_or(0.0, |s| clamp(*s));
                    (top - at).max(0.0).powf(power)
                };
                let c_s = margin(sparse, |s| s.clamp(0.0, 1.0));
                let c_d = margin(dense, |d| d.max(0.0));
                let (a, b) = (w * c_d, (1.0 - w) * c_s);
                let dense_weight = if a + b > 0.0 { a / (a + b) } else { w };
                Fusion::Weighted { dense_weight }
            }
            other => other,
        }
    }
}

impl Default for Fusion {
    fn default() -> Self {
        Fusion::DEFAULT
    }
}

/// Fuses a sparse and a dense ranking (each best first, `(key, score)`) into one, best
/// first. Every key of either list appears once; ties keep the order in which keys were
/// first met (sparse list first).
///
/// For [`Fusion::Weighted`] a key missing from a list scores 0 on that side, so pass
/// every candidate the side scored (or enough that the rest cannot matter).
///
/// ```
/// use agentmemory_index::fuse::{fuse, Fusion};
///
/// let sparse = [("berlin", 0.9), ("paris", 0.2)];
/// let dense = [("paris", 0.8), ("lyon", 0.5)];
/// let fused = fuse(&sparse, &dense, Fusion::Weighted { dense_weight: 0.5 });
/// let keys: Vec<_> = fused.iter().map(|(k, _)| *k).collect();
/// assert_eq!(keys, ["paris", "berlin", "lyon"]);
/// ```
pub fn fuse<K: Clone + Eq + Hash>(
    sparse: &[(K, f32)],
    dense: &[(K, f32)],
    fusion: Fusion,
) -> Vec<(K, f32)> {
    fuse_covered(sparse, None, dense, fusion)
}

/// [`fuse`], given also the query coverage of each document of `sparse`
/// (`coverage[i]` for `sparse[i]`, see
/// [`tfidf::coverage`](crate::tfidf::coverage)), which
/// [`Fusion::Coverage`] ranks by; documents only in `dense` cover nothing. With `None`
/// (or a length other than `sparse`'s) this is [`fuse`].
///
/// ```
/// use agentmemory_index::fuse::{fuse_covered, Fusion};
///
/// // "nairobi": one message names it (a low cosine: it is long), meaning prefers another.
/// let sparse = [("trip", 0.2)];
/// let dense = [("weather", 0.45), ("trip", 0.40)];
/// let f = Fusion::Coverage { dense_weight: 0.8, power: 3.0 };
/// let fused = fuse_covered(&sparse, Some(&[1.0]), &dense, f);
/// assert_eq!(fused[0].0, "trip");
/// // Covering a tenth of the query's weight does not overturn meaning.
/// let fused = fuse_covered(&sparse, Some(&[0.1]), &dense, f);
/// assert_eq!(fused[0].0, "weather");
/// ```
pub fn fuse_covered<K: Clone + Eq + Hash>(
    sparse: &[(K, f32)],
    coverage: Option<&[f32]>,
    dense: &[(K, f32)],
    fusion: Fusion,
) -> Vec<(K, f32)> {
    let coverage = coverage.filter(|c| c.len() == sparse.len());
    // An adaptive fusion becomes this query's fixed weighting (margins within each head).
    let fusion = match fusion {
        Fusion::Adaptive { depth, .. } => {
            let head = |list: &[(K, f32)]| -> Vec<f32> {
                list.iter()
                    .take(depth.saturating_add(1))
                    .map(|(_, s)| *s)
                    .collect()
            };
            fusion.for_query(&head(sparse), &head(dense))
        }
        other => other,
    };
    // The query's best word score, for a fusion that scales the word side by it.
    let best_sparse = sparse.iter().map(|(_, s)| *s).fold(0.0f32, f32::max);
    // Per key: sparse part, dense part, coverage.
    let mut order: Vec<(K, f32, f32, f32)> = Vec::with_capacity(sparse.len() + dense.len());
    let mut at: HashMap<&K, usize> = HashMap::with_capacity(sparse.len() + dense.len());
    // What one list contributes: its score, or for rank fusion `1 / (k + rank)`.
    let part = |rank: usize, score: f32| match fusion {
        Fusion::ReciprocalRank { k } => 1.0 / (k + rank as f32 + 1.0),
        Fusion::Weighted { .. }
        | Fusion::Adaptive { .. }
        | Fusion::MaxScaled { .. }
        | Fusion::Coverage { .. } => score,
    };
    for (rank, (key, score)) in sparse.iter().enumerate() {
        if !at.contains_key(key) {
            at.insert(key, order.len());
            let covered = coverage.map_or(0.0, |c| c[rank]);
            order.push((key.clone(), part(rank, *score), 0.0, covered));
        }
    }
    for (rank, (key, score)) in dense.iter().enumerate() {
        match at.get(key) {
            Some(&i) => {
                if order[i].2 == 0.0 {
                    order[i].2 = part(rank, *score);
                }
            }
            None => {
                at.insert(key, order.len());
                order.push((key.clone(), 0.0, part(rank, *score), 0.0));
            }
        }
    }
    let mut fused: Vec<(K, f32)> = order
        .into_iter()
        .map(|(key, s, d, c)| {
            let score = match coverage {
                Some(_) => fusion.combine_covered(s, d, best_sparse, c),
                None => fusion.combine_scaled(s, d, best_sparse),
            };
            (key, score.unwrap_or(s + d))
        })
        .collect();
    // Stable: ties keep first-met order.
    fused.sort_by(|a, b| b.1.total_cmp(&a.1));
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reciprocal_rank_rewards_agreement() {
        let sparse = [("a", 0.9), ("b", 0.5), ("c", 0.1)];
        let dense = [("d", 0.9), ("b", 0.8), ("c", 0.7)];
        let fused = fuse(&sparse, &dense, Fusion::ReciprocalRank { k: 60.0 });
        assert_eq!(fused[0].0, "b"); // second in both beats first in one
        assert_eq!(fused.len(), 4);
        let want_b = 2.0 / 62.0;
        assert!((fused[0].1 - want_b).abs() < 1e-6);
    }

    #[test]
    fn weighted_ends_are_the_single_rankings() {
        let sparse = [("a", 0.9), ("b", 0.3)];
        let dense = [("b", 0.9), ("a", 0.1)];
        let only_sparse = fuse(&sparse, &dense, Fusion::Weighted { dense_weight: 0.0 });
        assert_eq!(only_sparse[0].0, "a");
        let only_dense = fuse(&sparse, &dense, Fusion::Weighted { dense_weight: 1.0 });
        assert_eq!(only_dense[0].0, "b");
        assert!((only_dense[0].1 - 0.9).abs() < 1e-6);
    }

    #[test]
    fn adaptive_gives_way_to_the_side_that_separates() {
        let f = Fusion::Adaptive {
            dense_weight: 0.8,
            depth: 2,
            power: 1.0,
        };
        // Meaning is flat at its head, one word match stands out: words lead.
        let sparse = [("a", 0.6)];
        let dense = [("b", 0.41), ("a", 0.40), ("c", 0.40)];
        assert_eq!(fuse(&sparse, &dense, f)[0].0, "a");
        // The same word match against a dense ranking that singles out `b`: meaning leads.
        let dense = [("b", 0.9), ("a", 0.2), ("c", 0.1)];
        assert_eq!(fuse(&sparse, &dense, f)[0].0, "b");
        // Neither side separates anything: the prior weight, as `Weighted`.
        assert_eq!(
            f.for_query(&[], &[0.3, 0.3, 0.3]),
            Fusion::Weighted { dense_weight: 0.8 }
        );
        // One document alone has no rankings: the prior weight.
        assert_eq!(
            f.combine(1.0, 0.5),
            Fusion::Weighted { dense_weight: 0.8 }.combine(1.0, 0.5)
        );
    }

    #[test]
    fn max_scaled_weighs_words_against_the_best_word_match() {
        let f = Fusion::MaxScaled { dense_weight: 0.9 };
        // Long text: the rare word scores 0.2 and meaning is flat (within 0.05): words
        // decide, as they would at any length.
        let sparse = [("a", 0.2), ("b", 0.05)];
        let dense = [("b", 0.45), ("a", 0.41), ("c", 0.40)];
        let fused = fuse(&sparse, &dense, f);
        assert_eq!(fused[0].0, "a");
        assert!((fused[0].1 - (0.9 * 0.41 + 0.1)).abs() < 1e-6);
        // The same rankings with every word score scaled: the same fused scores.
        let scaled: Vec<(&str, f32)> = sparse.iter().map(|&(k, s)| (k, s * 4.0)).collect();
        assert_eq!(fuse(&scaled, &dense, f), fused);
        // A fixed weight reads the small word scores as weak evidence: meaning decides.
        let fixed = fuse(&sparse, &dense, Fusion::Weighted { dense_weight: 0.9 });
        assert_eq!(fixed[0].0, "b");
        // Meaning separates clearly (0.3 apart): the best word match does not overturn it.
        let dense = [("b", 0.75), ("a", 0.45), ("c", 0.40)];
        assert_eq!(fuse(&sparse, &dense, f)[0].0, "b");
        // No word match at all: meaning alone, scaled by its weight.
        let only = fuse::<&str>(&[], &dense, f);
        assert_eq!(only[0].0, "b");
        assert!((only[0].1 - 0.9 * 0.75).abs() < 1e-6);
        // One document alone: its sparse score as it is.
        assert_eq!(f.combine(0.5, 0.5), f.combine_scaled(0.5, 0.5, 1.0));
    }

    #[test]
    fn coverage_ranks_words_by_how_much_of_the_query_a_document_holds() {
        let f = Fusion::Coverage {
            dense_weight: 0.8,
            power: 3.0,
        };
        // A bare value named in one long message (low cosine: the message is long) against
        // a message meaning prefers by 0.07: the full coverage decides.
        let sparse = [("long", 0.15), ("short", 0.6)];
        let coverage = [1.0, 0.3];
        let dense = [("other", 0.42), ("long", 0.35), ("short", 0.3)];
        let fused = fuse_covered(&sparse, Some(&coverage), &dense, f);
        assert_eq!(fused[0].0, "long");
        assert!((fused[0].1 - (0.8 * 0.35 + 0.2)).abs() < 1e-6);
        // The fixed weight reads the cosines: the short message's shared word wins.
        let fixed = fuse(&sparse, &dense, Fusion::Weighted { dense_weight: 0.8 });
        assert_eq!(fixed[0].0, "short");
        // Every candidate holds the query's one word: covered alike, meaning orders them.
        let fused = fuse_covered(&sparse, Some(&[1.0, 1.0]), &dense, f);
        assert_eq!(fused[0].0, "long");
        assert_eq!(fused[1].0, "short");
        let dense = [("short", 0.5), ("long", 0.35)];
        assert_eq!(
            fuse_covered(&sparse, Some(&[1.0, 1.0]), &dense, f)[0].0,
            "short"
        );
        // Partial coverage pulls by its cube: a third of the query is worth 0.2 / 27.
        let fused = fuse_covered(&[("a", 0.9)], Some(&[1.0 / 3.0]), &[("a", 0.5)], f);
        assert!((fused[0].1 - (0.4 + 0.2 / 27.0)).abs() < 1e-6);
        // Without coverage the word side is read as `MaxScaled` reads it.
        assert_eq!(
            fuse(&sparse, &dense, f),
            fuse(&sparse, &dense, Fusion::MaxScaled { dense_weight: 0.8 })
        );
        // A coverage list of the wrong length is ignored rather than misread.
        assert_eq!(
            fuse_covered(&sparse, Some(&[1.0]), &dense, f),
            fuse(&sparse, &dense, f)
        );
    }

    #[test]
    fn duplicates_count_once_and_empty_lists_fuse_to_nothing() {
        let sparse = [("a", 0.5), ("a", 0.4)];
        let fused = fuse(&sparse, &[], Fusion::DEFAULT);
        assert_eq!(fused.len(), 1);
        assert!(fuse::<&str>(&[], &[], Fusion::DEFAULT).is_empty());
    }
}
