//! The conformance suite every store backend runs (feature `testkit`).
//!
//! Each function takes a fresh store and asserts one part of its trait's contract,
//! panicking with a clear message on violation. A backend's test file calls them all:
//!
//! ```ignore
//! #[tokio::test]
//! async fn conformance() {
//!     memory_core::testkit::vector::run_all(|| async { MyStore::new() }).await;
//! }
//! ```

pub mod conversation;
pub mod facts;
pub mod kv;
pub mod vector;
