//! [`Precision`]: the number format the local embedder's dense layers compute in.

use std::fmt;
use std::str::FromStr;

use crate::error::{EmbedError, Result};

/// The environment variable that picks the local embedder's [`Precision`] for
/// [`LocalEmbedder::from_env`](super::LocalEmbedder::from_env): `f32` (the default) or
/// `int8`.
///
/// Defined with or without the `runtime` feature, like
/// [`AGENTMEM_EMBED_MODEL`](super::AGENTMEM_EMBED_MODEL).
pub const AGENTMEM_EMBED_PRECISION: &str = "AGENTMEM_EMBED_PRECISION";

/// The number format of the local embedder's dense layers (the attention projections and
/// the feed-forward layers, where nearly all the work is).
///
/// [`F32`](Precision::F32), the default, runs the model as it was trained.
/// [`Int8`](Precision::Int8) quantises those layers' weights to 8-bit integers (one scale
/// per output), quantises each token's activations on the fly (one scale and zero point
/// per token) and multiplies in integers: faster on CPUs with 8-bit dot-product
/// instructions (AVX-512 VNNI), at the cost of vectors a little different from the `f32`
/// ones (cosine similarity above 0.99 with them on real conversation sentences).
/// Everything else (embeddings, layer norms, attention, pooling) stays in `f32`.
///
/// ```
/// use agentmemory_embed::Precision;
///
/// assert_eq!(Precision::default(), Precision::F32);
/// assert_eq!("int8".parse::<Precision>().unwrap(), Precision::Int8);
/// assert_eq!(Precision::Int8.to_string(), "int8");
/// assert!("fp16".parse::<Precision>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Precision {
    /// 32-bit floating point throughout: the vectors of the model as trained.
    #[default]
    F32,
    /// 8-bit integer dense layers.
    Int8,
}

impl Precision {
    /// The name [`FromStr`] accepts and [`Display`](fmt::Display) writes: `"f32"` or
    /// `"int8"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Int8 => "int8",
        }
    }

    /// The precision [`AGENTMEM_EMBED_PRECISION`] names; [`Precision::F32`] when it is
    /// unset or empty.
    ///
    /// # Errors
    ///
    /// [`EmbedError::Environment`] when the variable holds anything but `f32` or `int8`
    /// (case and surrounding spaces ignored).
    pub fn from_env() -> Result<Self> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// [`from_env`](Self::from_env), reading the variable through `lookup`.
    pub(crate) fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self> {
        match lookup(AGENTMEM_EMBED_PRECISION) {
            Some(value) if !value.trim().is_empty() => {
                value
                    .parse()
                    .map_err(|e: UnknownPrecision| EmbedError::Environment {
                        variable: AGENTMEM_EMBED_PRECISION,
                        value,
                        reason: e.to_string(),
                    })
            }
            _ => Ok(Self::default()),
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name [`Precision`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown precision `{0}`: expected `f32` or `int8`")]
pub struct UnknownPrecision(String);

impl FromStr for Precision {
    type Err = UnknownPrecision;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "f32" => Ok(Precision::F32),
            "int8" => Ok(Precision::Int8),
            _ => Err(UnknownPrecision(s.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(value: Option<&str>) -> Result<Precision> {
        Precision::from_lookup(|name| {
            assert_eq!(name, AGENTMEM_EMBED_PRECISION);
            value.map(str::to_owned)
        })
    }

    #[test]
    fn the_variable_picks_the_precision_and_defaults_to_f32() {
        assert_eq!(with(None).unwrap(), Precision::F32);
        assert_eq!(with(Some("")).unwrap(), Precision::F32);
        assert_eq!(with(Some("  ")).unwrap(), Precision::F32);
        assert_eq!(with(Some("f32")).unwrap(), Precision::F32);
        assert_eq!(with(Some(" INT8 ")).unwrap(), Precision::Int8);
        match with(Some("int4")) {
            Err(EmbedError::Environment {
                variable, value, ..
            }) => {
                assert_eq!(variable, AGENTMEM_EMBED_PRECISION);
                assert_eq!(value, "int4");
            }
            other => panic!("int4 gave {other:?}"),
        }
    }

    #[test]
    fn names_round_trip() {
        for p in [Precision::F32, Precision::Int8] {
            assert_eq!(p.to_string().parse::<Precision>().unwrap(), p);
        }
    }
}
