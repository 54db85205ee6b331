//! The query parameters of a server store URL: agentmem's own (`schema`, `pool_size`,
//! ...) taken off before the driver parses the rest, unknown ones refused by name.

use std::time::Duration;

use agentmemory_core::{MemoryError, Result};

/// Agentmem's own parameters of `url`, taken off it, and the URL left for the driver.
///
/// `ours` are the parameters agentmem reads; `driver` those the driver reads itself. Any
/// other parameter is a [`MemoryError::UrlParameter`] naming it and listing both sets.
pub(crate) struct UrlParams {
    /// What is left of the URL for the driver.
    pub(crate) rest: String,
    /// The URL as shown in messages (password hidden).
    pub(crate) shown: String,
    taken: Vec<(String, String)>,
}

impl UrlParams {
    pub(crate) fn take(url: &str, ours: &[&str], driver: &[&str]) -> Result<Self> {
        let shown = crate::url::redact(url);
        if let Some(query) = query_of(url) {
            for pair in query.split('&').filter(|p| !p.is_empty()) {
                let key = pair.split_once('=').map_or(pair, |(k, _)| k);
                if !ours.contains(&key) && !driver.contains(&key) {
                    let mut known: Vec<&str> = ours.iter().chain(driver).copied().collect();
                    known.sort_unstable();
                    return Err(MemoryError::url_parameter(
                        shown,
                        key,
                        format!("unknown parameter; known: {}", known.join(", ")),
                    ));
                }
            }
        }
        let (rest, taken) = crate::tls::take_params(url, ours);
        Ok(Self { rest, shown, taken })
    }

    /// The last value given for `key`, if any.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.taken
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `key` as a positive whole number, if given.
    pub(crate) fn positive(&self, key: &str) -> Result<Option<usize>> {
        self.get(key)
            .map(|v| match v.parse::<usize>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(self.bad(key, format!("`{v}` is not a whole number of at least 1"))),
            })
            .transpose()
    }

    /// `key` as a whole number (zero allowed), if given.
    #[cfg_attr(not(any(feature = "postgres", test)), allow(dead_code))]
    pub(crate) fn count(&self, key: &str) -> Result<Option<usize>> {
        self.get(key)
            .map(|v| {
                v.parse::<usize>()
                    .map_err(|_| self.bad(key, format!("`{v}` is not a whole number")))
            })
            .transpose()
    }

    /// `key` as a positive number of seconds (`5`, `0.5`), if given.
    #[cfg_attr(not(any(feature = "postgres", test)), allow(dead_code))]
    pub(crate) fn seconds(&self, key: &str) -> Result<Option<Duration>> {
        self.get(key)
            .map(|v| match v.parse::<f64>() {
                Ok(s) if s > 0.0 && s.is_finite() && s <= 86_400.0 => {
                    Ok(Duration::from_secs_f64(s))
                }
                _ => Err(self.bad(
                    key,
                    format!("`{v}` is not a number of seconds above 0 and at most 86400"),
                )),
            })
            .transpose()
    }

    /// A [`MemoryError::UrlParameter`] for `key`.
    pub(crate) fn bad(&self, key: &str, reason: impl Into<String>) -> MemoryError {
        MemoryError::url_parameter(self.shown.clone(), key, reason)
    }
}

/// The query of `url` (between `?` and `#`), if it has one.
fn query_of(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once('?')?;
    Some(rest.split_once('#').map_or(rest, |(q, _)| q))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ours_are_taken_the_drivers_kept_others_refused_by_name() {
        let p = UrlParams::take(
            "postgres://me:pw@db/app?schema=x&sslmode=disable&pool_size=4#frag",
            &["schema", "pool_size"],
            &["sslmode"],
        )
        .unwrap();
        assert_eq!(p.rest, "postgres://me:pw@db/app?sslmode=disable#frag");
        assert_eq!(p.get("schema"), Some("x"));
        assert_eq!(p.positive("pool_size").unwrap(), Some(4));
        assert_eq!(p.positive("absent").unwrap(), None);

        let err = UrlParams::take("postgres://me:pw@db/app?shcema=x", &["schema"], &[])
            .err()
            .expect("unknown");
        match err {
            MemoryError::UrlParameter {
                url,
                parameter,
                reason,
            } => {
                assert_eq!(parameter, "shcema");
                assert_eq!(url, "postgres://me:***@db/app?shcema=x");
                assert!(reason.contains("known: schema"), "{reason}");
            }
            e => panic!("{e}"),
        }
    }

    #[test]
    fn bad_values_name_their_parameter() {
        let p = UrlParams::take(
            "redis://h/0?pool_size=0&n=x&t=-1",
            &["pool_size", "n", "t"],
            &[],
        )
        .unwrap();
        for (key, result) in [
            ("pool_size", p.positive("pool_size").map(|_| ())),
            ("n", p.count("n").map(|_| ())),
            ("t", p.seconds("t").map(|_| ())),
        ] {
            match result {
                Err(MemoryError::UrlParameter { parameter, .. }) => assert_eq!(parameter, key),
                other => panic!("{key}: {other:?}"),
            }
        }
    }
}
