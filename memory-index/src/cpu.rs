//! The CPU features the SIMD kernels are compiled for, as tokens that prove the CPU running
//! this process has them.
//!
//! Every kernel with `#[target_feature]` code (`embed::kernels`, `embed::kernels_i8`,
//! `embed::few_rows`, `vector::simd`) asks this module, and only this module, what the CPU
//! has: a token is a zero-sized value that only its `detect()` makes (the field is private
//! to this module), and only after `is_x86_feature_detected!` said yes. A kernel's
//! `#[target_feature]` function takes the token as an argument, or is reachable only
//! through a function that does, so each `unsafe` call into one has the proof in hand and
//! says so.
//!
//! `is_x86_feature_detected!` caches what the CPU said, so `detect()` is a load and a bit
//! test. Under Miri it reports the features the build enables (`-C target-feature`), which
//! is how `.ci/miri.sh` runs the AVX2 kernels.
//!
//! No unsafe code here: the tokens are plain values; what makes them sound is that nothing
//! outside this module can make one.

/// Proof that the CPU has AVX2 (the int8 embedder's `vpmaddwd` kernel).
#[derive(Clone, Copy, Debug)]
pub struct Avx2 {
    _detected: (),
}

impl Avx2 {
    /// The token, if this CPU has AVX2.
    #[inline]
    pub fn detect() -> Option<Self> {
        std::is_x86_feature_detected!("avx2").then_some(Self { _detected: () })
    }
}

/// Proof that the CPU has AVX2 and FMA (dense search's kernels, the forward pass's
/// element-wise loops compiled for AVX2).
#[derive(Clone, Copy, Debug)]
pub struct Avx2Fma {
    _detected: (),
}

impl Avx2Fma {
    /// The token, if this CPU has AVX2 and FMA.
    #[inline]
    pub fn detect() -> Option<Self> {
        let yes = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
        yes.then_some(Self { _detected: () })
    }
}

/// Proof that the CPU has AVX-512 F (the few-rows product, the forward pass's element-wise
/// loops compiled for AVX-512).
#[derive(Clone, Copy, Debug)]
pub struct Avx512F {
    _detected: (),
}

impl Avx512F {
    /// The token, if this CPU has AVX-512 F.
    #[inline]
    pub fn detect() -> Option<Self> {
        std::is_x86_feature_detected!("avx512f").then_some(Self { _detected: () })
    }
}

/// Proof that the CPU has AVX-512 F, BW and VNNI (`vpdpbusd`: the int8 embedder's product
/// and dense search's batch kernel).
#[derive(Clone, Copy, Debug)]
pub struct Avx512Vnni {
    _detected: (),
}

impl Avx512Vnni {
    /// The token, if this CPU has AVX-512 F, BW and VNNI.
    #[inline]
    pub fn detect() -> Option<Self> {
        let yes = std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vnni");
        yes.then_some(Self { _detected: () })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_agree_with_the_cpu() {
        assert_eq!(
            Avx2::detect().is_some(),
            std::is_x86_feature_detected!("avx2")
        );
        // A level implies the features of the ones below it, on every CPU.
        if Avx2Fma::detect().is_some() {
            assert!(Avx2::detect().is_some());
        }
        if Avx512Vnni::detect().is_some() {
            assert!(Avx512F::detect().is_some());
        }
        assert_eq!(
            Avx512F::detect().is_some(),
            std::is_x86_feature_detected!("avx512f")
        );
        if cfg!(target_feature = "avx2") {
            assert!(Avx2::detect().is_some());
        }
    }
}
