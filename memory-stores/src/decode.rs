//! Decoding many stored records at once: a user's whole set of facts is read on the first
//! search or upsert after opening, and decoding it is most of that read's cost, so large
//! sets are decoded on the rayon pool (the one the shared text analysis already uses).

use agentmemory_core::Result;
use rayon::prelude::*;

/// Fewest records worth splitting across threads.
const PARALLEL_MIN: usize = 4096;

/// `decode` of every item of `items`, in order; one of the errors when any fails.
pub(crate) fn decode_all<S, T>(
    items: &[S],
    decode: impl Fn(&S) -> Result<T> + Sync,
) -> Result<Vec<T>>
where
    S: Sync,
    T: Send,
{
    if items.len() < PARALLEL_MIN {
        return items.iter().map(decode).collect();
    }
    items.par_iter().map(&decode).collect()
}

#[cfg(test)]
mod tests {
    use agentmemory_core::MemoryError;

    use super::*;

    #[test]
    fn decodes_in_order_and_reports_a_failure() {
        let items: Vec<String> = (0..10_000).map(|i| i.to_string()).collect();
        let parse = |s: &String| {
            s.parse::<u32>()
                .map_err(|e| MemoryError::invalid("number", e.to_string()))
        };
        let all = decode_all(&items, parse).unwrap();
        assert_eq!(all, (0..10_000).collect::<Vec<u32>>());
        let mut bad = items.clone();
        bad[7_000] = "x".into();
        bad[9_000] = "y".into();
        let err = decode_all(&bad, parse).unwrap_err().to_string();
        assert!(err.contains("invalid digit"), "{err}");
    }
}
