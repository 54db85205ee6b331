//! Conformance tests for the `vector` store trait.
