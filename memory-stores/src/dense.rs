//! Exact dense ranking in the client: what PostgreSQL does when the `vector` extension
//! is missing (SQLite ranks in its in-memory mirror). Embeddings are stored L2-normalised, so cosine
//! similarity is a dot product.

#[cfg(feature = "postgres")]
use agentmemory_core::store_support::Ties;
#[cfg(feature = "postgres")]
use agentmemory_core::vector::SearchHit;
use agentmemory_core::Result;

/// L2-normalised copy of `v`, refusing empty, non-finite and zero vectors (see
/// [`agentmemory_core::store_support::normalized`]).
pub(crate) fn normalised(v: &[f32]) -> Result<Vec<f32>> {
    agentmemory_core::store_support::normalized(v.to_vec(), "embedding")
}

/// Cosine similarity of two normalised vectors, in `-1.0..=1.0`.
#[cfg(feature = "postgres")]
pub(crate) fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| x * y)
        .sum::<f32>()
        .clamp(-1.0, 1.0)
}

/// The `k` best hits, best first, ties broken by id (core's one top-k).
#[cfg(feature = "postgres")]
pub(crate) fn best(hits: Vec<SearchHit>, k: usize) -> Vec<SearchHit> {
    agentmemory_core::store_support::best(
        hits,
        k,
        |h| (h.score, h.id.as_str()),
        Ties::SmallerIdFirst,
    )
}

#[cfg(all(test, feature = "postgres"))]
mod tests {
    use super::*;

    fn hit(id: &str, score: f32) -> SearchHit {
        SearchHit::new(id, "", score)
    }

    #[test]
    fn best_is_the_sorted_prefix_of_a_full_sort() {
        let hits: Vec<SearchHit> = (0..50)
            .map(|i| hit(&format!("d{i:02}"), ((i * 37) % 11) as f32 / 10.0))
            .collect();
        let mut full = hits.clone();
        full.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        for k in [0, 1, 3, 11, 49, 50, 80] {
            let ids: Vec<String> = best(hits.clone(), k).into_iter().map(|h| h.id).collect();
            let want: Vec<String> = full.iter().take(k).map(|h| h.id.clone()).collect();
            assert_eq!(ids, want, "k = {k}");
        }
    }

    #[test]
    fn normalised_vectors_and_cosine() {
        let v = normalised(&[3.0, 4.0]).expect("valid");
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
        assert!(normalised(&[]).is_err());
        assert!(normalised(&[0.0, 0.0]).is_err());
        assert!(normalised(&[f32::NAN]).is_err());
        assert!((cosine(&v, &v) - 1.0).abs() < 1e-6);
        assert!((cosine(&v, &[-0.6, -0.8]) + 1.0).abs() < 1e-6);
    }
}
