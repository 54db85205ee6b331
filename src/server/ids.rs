//! Checking the identifiers a client sends (session, user, namespace, memory ids) and
//! building the store keys from them.
//!
//! Ids are opaque to the stores, but some backends map keys to files and every one of them
//! ends up in logs, so the server refuses what no honest client sends: empty ids, ids over
//! 256 bytes, control characters, path separators and `.`/`..`.

use super::error::ApiError;

/// Longest id accepted, in bytes.
pub const MAX_ID_BYTES: usize = 256;

/// The separator inside composite keys; refused in ids, so keys never collide.
const SEP: char = '\u{1f}';

/// Checks one id; `what` names it in the error (`session_id`, `user_id`, ...).
pub fn check(what: &str, id: &str) -> Result<(), ApiError> {
    let reason = if id.is_empty() {
        Some("is empty")
    } else if id.len() > MAX_ID_BYTES {
        Some("is longer than 256 bytes")
    } else if id.chars().any(char::is_control) {
        Some("contains control characters")
    } else if id.contains('/') || id.contains('\\') {
        Some("contains a path separator")
    } else if id == "." || id == ".." {
        Some("is a relative path")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(ApiError::BadRequest(format!("Invalid {what}: {reason}"))),
        None => Ok(()),
    }
}

/// Checks an optional id.
pub fn check_opt(what: &str, id: Option<&str>) -> Result<(), ApiError> {
    id.map_or(Ok(()), |id| check(what, id))
}

/// The key/value namespace holding the sessions of `namespace`.
pub fn sessions_namespace(namespace: Option<&str>) -> String {
    format!("agentmem.server.wm{SEP}{}", namespace.unwrap_or(""))
}

/// The key of one session inside its namespace: user, separator, session.
pub fn session_key(user_id: Option<&str>, session_id: &str) -> String {
    format!("{}{SEP}{session_id}", user_id.unwrap_or(""))
}

/// Splits a [`session_key`] into user (empty = none) and session.
pub fn split_session_key(key: &str) -> Option<(&str, &str)> {
    key.split_once(SEP)
}

/// The owner under which the facts of (`namespace`, `user_id`) are kept in the
/// user-memory store: the plain user id in the default namespace (so `agentmem facts
/// list --user alice` shows them), `namespace␟user` otherwise.
///
/// Memories of no user go to `namespace␟` (`␟` alone in the default namespace): no user
/// id can take that name, since ids never contain `␟`.
pub fn fact_owner(namespace: Option<&str>, user_id: Option<&str>) -> String {
    match (namespace.filter(|ns| !ns.is_empty()), user_id) {
        (None, Some(user)) => user.to_owned(),
        (ns, user) => format!("{}{SEP}{}", ns.unwrap_or(""), user.unwrap_or("")),
    }
}

/// The vector-store namespace holding the documents (episodic and message memories)
/// of `namespace`.
pub fn documents_namespace(namespace: Option<&str>) -> String {
    format!("agentmem.server.ltm{SEP}{}", namespace.unwrap_or(""))
}

/// The key/value namespace listing the long-term memories of one owner (a
/// [`fact_owner`], for documents as for facts): what a search without text reads for a
/// user instead of every memory of the server.
pub fn listing_namespace(owner: &str) -> String {
    format!("agentmem.server.ltm-list{SEP}{owner}")
}

/// The key/value registry of the owners ([`fact_owner`]s) that have long-term memories in
/// `namespace`.
pub fn owners_registry(namespace: Option<&str>) -> String {
    format!("agentmem.server.ltm-users{SEP}{}", namespace.unwrap_or(""))
}

/// The vector-store namespace in which every current fact of `namespace` is mirrored
/// (id = fact id, metadata = its owner), so that a search over many users finds the
/// owners with a matching fact in one search.
pub fn facts_index_namespace(namespace: Option<&str>) -> String {
    format!("agentmem.server.ltm-facts{SEP}{}", namespace.unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_ids_are_refused() {
        for bad in [
            "",
            "..",
            ".",
            "../etc/passwd",
            "a/b",
            "a\\b",
            "a\u{0}b",
            "a\nb",
        ] {
            assert!(check("session_id", bad).is_err(), "{bad:?}");
        }
        assert!(check("session_id", &"x".repeat(257)).is_err());
        for good in [
            "chat_123",
            "01HZX",
            "日本語",
            "a b",
            "a..b",
            "user@example.com",
        ] {
            assert!(check("session_id", good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn keys_do_not_collide() {
        assert_ne!(session_key(Some("a"), "b"), session_key(None, "a\u{1f}b"));
        assert_eq!(
            split_session_key(&session_key(Some("u"), "s")),
            Some(("u", "s"))
        );
        assert_eq!(fact_owner(None, Some("alice")), "alice");
        assert_ne!(fact_owner(Some("ns"), Some("alice")), "alice");
    }
}
