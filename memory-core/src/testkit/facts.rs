//! Conformance tests for the `facts` store trait.
