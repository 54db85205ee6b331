//! `MemoryManager::from_env()` and `MemoryManager::open_url()` through the facade: the
//! store URL and every budget variable read from the real environment.
//!
//! Only the first test sets process environment variables; the other reads none of them,
//! so they may run at the same time.

use agentmemory::manager::{
    MemoryConfig, MEMORY_BLOCK_TOKENS_ENV, SUMMARIZE_THRESHOLD_ENV, SUMMARIZE_TO_ENV,
    SUMMARY_TOKENS_ENV, WINDOW_TOKENS_ENV, WORKING_MEMORY_TOKENS_ENV, WORKING_SCOPE_ENV,
};
use agentmemory::prelude::*;
use agentmemory::stores::STORE_URL_ENV;

#[tokio::test]
async fn from_env_reads_the_store_url_and_every_budget() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("memory.db");
    let url = format!("sqlite://{}", db.display());
    let vars = [
        (STORE_URL_ENV, url.as_str()),
        (WINDOW_TOKENS_ENV, "2000"),
        (SUMMARIZE_THRESHOLD_ENV, "300"),
        (SUMMARIZE_TO_ENV, "50"),
        (SUMMARY_TOKENS_ENV, "60"),
        (MEMORY_BLOCK_TOKENS_ENV, "200"),
        (WORKING_MEMORY_TOKENS_ENV, "100"),
        (WORKING_SCOPE_ENV, "pipeline-7"),
    ];
    for (name, value) in vars {
        std::env::set_var(name, value);
    }

    let memory = MemoryManager::from_env().await.expect("from_env");
    let config = memory.config();
    assert_eq!(config.window_tokens, 2_000);
    assert_eq!(config.summarize_threshold, Some(300));
    assert_eq!(config.summarize_to, 50);
    assert_eq!(config.summary_tokens, 60);
    assert_eq!(config.memory_block_tokens, 200);
    assert_eq!(config.working_memory_tokens, 100);
    assert_eq!(memory.working().scope_id(), "pipeline-7");

    // AGENTMEM_STORE_URL: the SQLite file named holds what was written, for the next
    // process (here, a second manager from the same environment).
    let id = memory.new_conversation();
    for i in 0..12 {
        memory
            .add_turn(
                &id,
                format!("turn {i}: what should we pack for the hike on Saturday?"),
                format!("reply {i}: boots, water, a map and a rain jacket"),
            )
            .await
            .expect("add");
    }
    memory.set("trail", "Sintra").await.expect("set");
    assert!(
        db.exists(),
        "the database is the file AGENTMEM_STORE_URL names"
    );
    let again = MemoryManager::from_env().await.expect("from_env again");
    assert_eq!(
        again.get("trail").await.expect("get"),
        Some("Sintra".into())
    );
    // AGENTMEM_SUMMARIZE_THRESHOLD applied: a summary, and a history under it.
    assert!(again.summary(&id).await.expect("summary").is_some());
    assert_eq!(
        again.history(&id).await.expect("history"),
        memory.history(&id).await.expect("history")
    );

    // A bad value names its variable.
    std::env::set_var(WINDOW_TOKENS_ENV, "lots");
    match MemoryManager::from_env().await {
        Err(MemoryError::Environment { variable, .. }) => assert_eq!(variable, WINDOW_TOKENS_ENV),
        other => panic!("{other:?}"),
    }
    // A store URL with an unknown parameter names the parameter (no server needed: the
    // URL is checked before connecting).
    std::env::set_var(WINDOW_TOKENS_ENV, "2000");
    std::env::set_var(STORE_URL_ENV, "postgres://nobody@127.0.0.1:1/none?pool=3");
    match MemoryManager::from_env().await {
        Err(MemoryError::UrlParameter { parameter, .. }) => assert_eq!(parameter, "pool"),
        Err(MemoryError::Unsupported { .. }) => {} // a build without the postgres feature
        other => panic!("{other:?}"),
    }

    for (name, _) in vars {
        std::env::remove_var(name);
    }
    // Unset: in memory, default budgets.
    let plain = MemoryManager::from_env().await.expect("defaults");
    assert_eq!(plain.config(), &MemoryConfig::default());
    assert_eq!(plain.get("trail").await.expect("get"), None);
}

#[tokio::test]
async fn open_url_opens_that_store_with_the_config() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("m.db").display());
    let config = MemoryConfig::default().with_working_scope("a");
    let memory = MemoryManager::open_url(&url, config.clone())
        .await
        .expect("open");
    memory.set("k", 1).await.expect("set");
    let again = MemoryManager::open_url(&url, config).await.expect("reopen");
    assert_eq!(again.get("k").await.expect("get"), Some(1.into()));
    assert!(MemoryManager::open_url("ftp://x", MemoryConfig::default())
        .await
        .is_err());
}

#[test]
fn the_managers_default_limit_is_one_mebibyte_and_reaches_its_sessions() {
    assert_eq!(MemoryConfig::default().max_message_bytes, 1024 * 1024);
    assert_eq!(
        MemoryConfig::default()
            .with_max_message_bytes(10)
            .session_config()
            .max_message_bytes,
        10
    );
}

#[tokio::test]
async fn add_messages_refuses_a_message_over_the_managers_limit() {
    let text_of = |bytes: usize| "I live in Lisbon. ".repeat(bytes / 18 + 1)[..bytes].to_owned();
    let manager =
        MemoryManager::in_memory(MemoryConfig::default().with_max_message_bytes(1_000)).unwrap();
    let err = manager
        .add_turn("c", text_of(1_001), "ok")
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            MemoryError::PayloadTooLarge {
                what: "message",
                size: 1_001,
                limit: 1_000
            }
        ),
        "{err:?}"
    );
    assert!(manager.history("c").await.unwrap().is_empty());
    manager.add_turn("c", text_of(1_000), "ok").await.unwrap();
    assert_eq!(manager.history("c").await.unwrap().len(), 2);
    // A limit of 0 is refused when the manager is built.
    assert!(MemoryManager::in_memory(MemoryConfig::default().with_max_message_bytes(0)).is_err());
}
