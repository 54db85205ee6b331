//! [`LocalEmbedder`] as the kernel's [`Embedder`].

use async_trait::async_trait;

use super::LocalEmbedder;
use crate::error::Result;
use crate::vector::Embedder;

#[async_trait]
impl Embedder for LocalEmbedder {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        Ok(LocalEmbedder::embed(self, texts).await?)
    }

    fn dimensions(&self) -> Option<usize> {
        Some(self.dimension())
    }

    /// The name of the model's directory (`all-minilm-l6-v2` for the one `agentmem model
    /// fetch` puts in the cache).
    fn model_name(&self) -> Option<String> {
        LocalEmbedder::model_name(self)
    }
}
