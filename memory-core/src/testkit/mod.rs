//! The conformance suite every store backend runs (feature `testkit`).
//!
//! Each check takes a store as a trait object (`&dyn VectorStore`, `&dyn UserMemoryStore`,
//! `&dyn ConversationStore`, `&dyn KvStore`), works in fresh, randomly named namespaces,
//! users and conversations (so one long-lived server can run the suite again and again),
//! and panics with a clear message when the contract is broken. `run_all` runs every
//! check of a module. A backend's test file:
//!
//! ```ignore
//! #[tokio::test]
//! async fn vector_conformance() {
//!     let store = MyStore::open(...).await.unwrap();
//!     agentmemory_core::testkit::vector::run_all(&store).await;
//! }
//! ```

pub mod conversation;
mod corpus;
pub mod episodes;
pub mod facts;
pub mod kv;
pub mod reembed;
pub mod vector;
