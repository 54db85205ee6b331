//! [`embed_stores_backfilled`]: semantic recall turned on for stores that may hold records
//! without a vector.

use std::sync::Arc;

use super::{Backfill, BackfillOptions, Reembed};
use crate::di::Container;
use crate::error::Result;
use crate::vector::Embedder;

/// The token under which [`embed_stores_backfilled`] registers its [`Backfill`] handle.
pub const BACKFILL_TOKEN: &str = "embedding_backfill";

/// [`embed_stores`](crate::vector::embed_stores), plus a background [`Backfill`] over
/// every [`Reembed`] store registered in `container` (each store once): what was stored
/// without a vector, or with another model's, is embedded by `embedder` in batches, and a
/// model change is detected. The embedding stores ask the backfill's [`DenseGate`](super::DenseGate),
/// so another model's vectors are never compared with this one's.
///
/// The handle is returned and registered in `container` under [`BACKFILL_TOKEN`]
/// (`container.resolve::<Backfill>(Some(BACKFILL_TOKEN))`). The backfill stops by itself
/// when the stores are dropped. Outside a tokio runtime, no backfill runs (the handle
/// says [`Phase::Stopped`](super::Phase::Stopped)) and the stores use vectors as
/// [`embed_stores`](crate::vector::embed_stores) does.
pub fn embed_stores_backfilled(
    container: &Container,
    embedder: Arc<dyn Embedder>,
) -> Result<Backfill> {
    let targets = targets(container)?;
    let (backfill, gate) =
        Backfill::spawn(targets, Arc::clone(&embedder), BackfillOptions::default());
    crate::vector::wrap_stores(container, embedder, &gate)?;
    container.register::<Backfill>(BACKFILL_TOKEN, Arc::new(backfill.clone()));
    Ok(backfill)
}

/// Every [`Reembed`] store registered in `container`, each once (a store registered under
/// several tokens is one store).
pub fn targets(container: &Container) -> Result<Vec<Arc<dyn Reembed>>> {
    let mut targets: Vec<Arc<dyn Reembed>> = Vec::new();
    for token in container.tokens::<dyn Reembed>() {
        let store = container.resolve::<dyn Reembed>(Some(&token))?;
        let seen = targets
            .iter()
            .any(|t| std::ptr::addr_eq(Arc::as_ptr(t), Arc::as_ptr(&store)));
        if !seen {
            targets.push(store);
        }
    }
    Ok(targets)
}
