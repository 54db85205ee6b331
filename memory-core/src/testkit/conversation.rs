//! Conformance tests for the `conversation` store trait.
