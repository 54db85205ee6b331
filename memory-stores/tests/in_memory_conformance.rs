//! The in-memory stores of memory-core held to the same conformance suites as the
//! persistent ones.

use std::sync::Arc;

use agentmemory_core::testkit;
use agentmemory_core::{InMemoryConversationStore, InMemoryKvStore};

#[tokio::test]
async fn in_memory_kv_conformance() {
    testkit::kv::run_all(&InMemoryKvStore::new()).await;
}

#[tokio::test]
async fn in_memory_conversation_conformance() {
    testkit::conversation::run_all(&InMemoryConversationStore::new()).await;
    testkit::conversation::check_clear(&InMemoryConversationStore::new()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn in_memory_conversation_spawned_writers() {
    testkit::conversation::check_concurrent_appenders_spawned(Arc::new(
        InMemoryConversationStore::new(),
    ))
    .await;
}

#[tokio::test]
async fn in_memory_episodes_conformance() {
    testkit::episodes::run_all(&agentmemory_core::episodes::InMemoryEpisodeStore::new()).await;
}
