//! Cursor pagination as the `anthropic` SDK's `SyncPageCursor` reads it: a page is
//! `{"data": [...], "next_page": "<cursor>" | null}`, and the next request sends the
//! cursor back as `?page=`. Cursors are the hex of the sort key of a page's last item,
//! so they are opaque to clients and survive writes between pages.

use serde::Serialize;
use serde_json::{json, Value};

use super::error::ApiError;

/// Default page size.
pub const DEFAULT_LIMIT: usize = 20;
/// Largest page.
pub const MAX_LIMIT: usize = 100;
/// Largest page with `view=full`.
pub const MAX_FULL_LIMIT: usize = 20;

/// The page size asked for: 1 to 100 (20 by default), at most 20 when contents are sent.
pub fn limit(asked: Option<usize>, full: bool) -> Result<usize, ApiError> {
    let limit = asked.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::invalid("limit must be between 1 and 100"));
    }
    Ok(if full {
        limit.min(MAX_FULL_LIMIT)
    } else {
        limit
    })
}

/// The cursor of sort key `key`.
pub fn cursor(key: &str) -> String {
    key.bytes().map(|b| format!("{b:02x}")).collect()
}

/// The sort key a cursor names.
pub fn key_of(cursor: &str) -> Result<String, ApiError> {
    let bad = || ApiError::invalid("invalid page cursor");
    if !cursor.len().is_multiple_of(2) {
        return Err(bad());
    }
    let bytes = (0..cursor.len())
        .step_by(2)
        .map(|i| {
            cursor
                .get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(bad)?;
    String::from_utf8(bytes).map_err(|_| bad())
}

/// One page of `items` (each with its sort key, in order) after the cursor `page`:
/// ascending keys (`descending` false) continue with keys above the cursor's, descending
/// ones below it.
pub fn page<T: Serialize>(
    items: Vec<(String, T)>,
    page: Option<&str>,
    limit: usize,
    descending: bool,
) -> Result<Value, ApiError> {
    let after = page.filter(|p| !p.is_empty()).map(key_of).transpose()?;
    let mut rest = items.into_iter().filter(|(key, _)| match &after {
        None => true,
        Some(after) if descending => key < after,
        Some(after) => key > after,
    });
    let mut data = Vec::with_capacity(limit);
    let mut last = None;
    for (key, item) in rest.by_ref().take(limit) {
        data.push(serde_json::to_value(item).map_err(|e| ApiError::invalid(e.to_string()))?);
        last = Some(key);
    }
    let next = if rest.next().is_some() {
        last.map(|k| cursor(&k))
    } else {
        None
    };
    Ok(json!({"data": data, "next_page": next}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_chain_until_the_end() {
        let items = || (1..=5).map(|i| (format!("k{i}"), i)).collect::<Vec<_>>();
        let first = page(items(), None, 2, false).unwrap();
        assert_eq!(first["data"], json!([1, 2]));
        let next = first["next_page"].as_str().unwrap().to_owned();
        let second = page(items(), Some(&next), 2, false).unwrap();
        assert_eq!(second["data"], json!([3, 4]));
        let last = page(
            items(),
            Some(second["next_page"].as_str().unwrap()),
            2,
            false,
        )
        .unwrap();
        assert_eq!(last["data"], json!([5]));
        assert!(last["next_page"].is_null());
        assert!(key_of("zz").is_err());
        assert_eq!(key_of(&cursor("/a/é")).unwrap(), "/a/é");
    }
}
