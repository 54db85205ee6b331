//! Episodes and recall on the turn over SQLite: `SqliteStore` in a file (a temporary
//! directory), opened and registered as `StoreUrl` does, with one user's 1,000 facts and
//! 10,000 episodes across 100 dated conversations. The data and the groups are those of
//! `memory-core/benches/episodes.rs` (shared from `memory-core/benches/support/`), so the
//! figures compare with the in-memory ones.
//!
//! `cargo bench -p agentmemory-stores --bench episodes [-- --quick]`

#[path = "../../memory-core/benches/support/life.rs"]
mod life;
#[path = "../../memory-core/benches/support/turns.rs"]
mod turns;

use std::sync::Arc;

use agentmemory_core::model::OfflineModel;
use agentmemory_stores::StoreUrl;
use chrono::Utc;
use criterion::{criterion_group, criterion_main, Criterion};

use turns::{runtime, World, FACTS, USER};

fn sqlite(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let url: StoreUrl = format!("sqlite://{}", dir.path().join("memory.db").display())
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
    // Sparse: no embedder, whatever the environment says.
    let container = rt
        .block_on(url.open_with_embedder(None))
        .unwrap_or_else(|e| panic!("{e}"));
    container.register_model("offline", Arc::new(OfflineModel::new()));
    let world = World::seeded(&rt, container, life::facts(USER, FACTS, Utc::now()));
    turns::index(c, &rt, &world, "sqlite");
    turns::turns(c, &rt, &world, "sqlite");
    turns::parts(c, &rt, &world, "sqlite");
}

criterion_group!(benches, sqlite);
criterion_main!(benches);
