//! Conformance tests for the `kv` store trait.
