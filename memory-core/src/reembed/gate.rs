//! [`DenseGate`]: whether the embedding stores may use vectors yet.

use tokio::sync::watch;

/// What the gate knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GateState {
    /// The store's recorded model is being read.
    Checking,
    /// The store holds another model's vectors: search by words, embed nothing.
    Stale,
    /// Vectors are the opening model's (or missing): search is hybrid.
    Open,
}

/// Tells the embedding stores whether the store's vectors are the embedder's own.
///
/// Shared by the [`Backfill`](super::Backfill) that finds out (it reads the recorded model,
/// and drops another model's vectors) and the embedding stores that ask before each
/// search and write ([`EmbeddingUserMemoryStore::with_gate`](crate::facts::EmbeddingUserMemoryStore::with_gate),
/// [`EmbeddingVectorStore::with_gate`](crate::vector::EmbeddingVectorStore::with_gate)): while
/// another model's vectors are still stored, searches are by words only and writes store
/// no vector (the backfill embeds them afterwards), so two models' vectors are never
/// compared. A question asked before the recorded model is read waits for it (one small
/// read).
#[derive(Debug, Clone)]
pub struct DenseGate {
    state: watch::Receiver<GateState>,
}

/// The side of a [`DenseGate`] that sets it.
#[derive(Debug)]
pub(crate) struct GateSetter(watch::Sender<GateState>);

impl GateSetter {
    pub(crate) fn set(&self, state: GateState) {
        self.0.send_replace(state);
    }
}

impl DenseGate {
    /// A gate that is open: vectors are always used.
    pub fn open() -> Self {
        let (tx, rx) = watch::channel(GateState::Open);
        drop(tx);
        Self { state: rx }
    }

    /// A gate still checking, and its setter.
    pub(crate) fn checking() -> (Self, GateSetter) {
        let (tx, rx) = watch::channel(GateState::Checking);
        (Self { state: rx }, GateSetter(tx))
    }

    /// Whether vectors may be used now: waits while the recorded model is being read;
    /// `true` if whoever sets the gate went away before deciding.
    pub async fn allows_vectors(&self) -> bool {
        let mut rx = self.state.clone();
        let decided = rx
            .wait_for(|s| *s != GateState::Checking)
            .await
            .map(|state| *state);
        match decided {
            Ok(state) => state == GateState::Open,
            Err(_) => *rx.borrow() != GateState::Stale,
        }
    }

    /// Whether the gate has decided to use vectors, without waiting.
    pub fn is_open(&self) -> bool {
        *self.state.borrow() == GateState::Open
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waits_for_the_check_and_follows_the_setter() {
        let (gate, setter) = DenseGate::checking();
        assert!(!gate.is_open());
        let waiting = tokio::spawn({
            let gate = gate.clone();
            async move { gate.allows_vectors().await }
        });
        tokio::task::yield_now().await;
        setter.set(GateState::Stale);
        assert!(!waiting.await.unwrap());
        setter.set(GateState::Open);
        assert!(gate.allows_vectors().await);
        assert!(DenseGate::open().allows_vectors().await);
    }

    #[tokio::test]
    async fn a_setter_gone_while_checking_opens_it() {
        let (gate, setter) = DenseGate::checking();
        drop(setter);
        assert!(gate.allows_vectors().await);
        let (gate, setter) = DenseGate::checking();
        setter.set(GateState::Stale);
        drop(setter);
        assert!(!gate.allows_vectors().await);
    }
}
