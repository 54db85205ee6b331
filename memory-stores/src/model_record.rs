//! The recorded embedding model ([`EmbeddingModel`]) as every backend stores it: one JSON
//! value with a format version, `{"v":1,"name":"all-minilm-l6-v2","dimension":384}`.

use agentmemory_core::reembed::EmbeddingModel;
use agentmemory_core::{MemoryError, Result};
use serde::{Deserialize, Serialize};

/// The format this build writes.
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Record {
    v: u32,
    #[serde(flatten)]
    model: EmbeddingModel,
}

/// `model` as stored.
pub(crate) fn encode(model: &EmbeddingModel) -> Result<String> {
    serde_json::to_string(&Record {
        v: VERSION,
        model: model.clone(),
    })
    .map_err(|e| MemoryError::invalid("embedding model", e.to_string()))
}

/// The model stored as `json` in `store`.
pub(crate) fn decode(json: &str, store: &str) -> Result<EmbeddingModel> {
    let record: Record = serde_json::from_str(json)
        .map_err(|e| MemoryError::corrupt(format!("the embedding model recorded in {store}"), e))?;
    if record.v > VERSION {
        return Err(MemoryError::UnsupportedVersion {
            what: "embedding model record",
            found: record.v,
            supported: VERSION,
        });
    }
    Ok(record.model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_a_newer_format() {
        let model = EmbeddingModel::new("all-minilm-l6-v2", 384);
        let json = encode(&model).unwrap();
        assert_eq!(json, r#"{"v":1,"name":"all-minilm-l6-v2","dimension":384}"#);
        assert_eq!(decode(&json, "test").unwrap(), model);
        assert!(matches!(
            decode(r#"{"v":2,"name":"x","dimension":3}"#, "test"),
            Err(MemoryError::UnsupportedVersion { found: 2, .. })
        ));
        assert!(matches!(
            decode("{", "test"),
            Err(MemoryError::Corrupt { .. })
        ));
    }
}
