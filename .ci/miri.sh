#!/usr/bin/env bash
# Miri over the code that is unsafe or that unsafe code serves, in memory-core:
#   - the forward pass: matmul's checked call into gemm (embed/kernels.rs) and attention on
#     a random tiny BERT (embed/bert.rs: 2 layers, hidden size 8, 2 heads, three sequences,
#     alone and on a 3-thread pool; Miri reports the old attention, whose tasks aliased
#     `&mut` rows, as a data race here);
#   - the dense-search kernels (vector/simd.rs: the portable loops and, in a build with
#     AVX2 enabled, the AVX2 kernels' pointer arithmetic), the quantised scans over them
#     (vector/quantized.rs) and the exact f32 dot products (vector/dense.rs).
# Tests are picked by name so a run takes minutes; the other tests of those modules loop
# over large inputs that say nothing more about memory safety.
#
# Installs the nightly toolchain with the miri component when missing (Miri exists only on
# nightly; the project's own toolchain, 1.99.1, stays pinned by rust-toolchain.toml and
# builds everything else). Builds go to their own target directory.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo +nightly miri --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal --component miri --allow-downgrade
fi
cargo +nightly miri --version

MIRI_TARGET_DIR="${MIRI_TARGET_DIR:-$HOME/.cache/agentmem-miri}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# Tree Borrows: rayon's crossbeam-epoch breaks the stricter, experimental Stacked Borrows
# rules (crossbeam-rs/crossbeam#545; crossbeam runs its own Miri tests this way), casts
# integers to pointers, and leaves its epoch garbage behind when a thread pool shuts down
# (reported as leaks at exit). Preemption is on by default; a fixed seed makes a failure
# reproducible.
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-tree-borrows -Zmiri-permissive-provenance -Zmiri-ignore-leaks -Zmiri-seed=1}"

embed_tests=(
    bert::
    kernels::tests::matmul
    kernels::tests::views
    kernels::tests::softmax
    kernels::tests::fused
    # The portable twins: of the multiversioned element-wise kernels, and of the AVX-512
    # few-rows product (its row-by-row split of the destination between threads included).
    kernels::tests::multiversioned
    few_rows::
)
# The int8 embedder's kernels and products (with the AVX2 kernel where it is listed).
int8_tests=(
    kernels_i8::
    int8::
)
vector_tests=(
    simd::
    quantized::
    dense::tests::dot_handles
    dense::tests::small_and_wide
    # The CPU-feature tokens every SIMD kernel is reached through.
    cpu::
)

cargo +nightly miri setup
# The nightly a machine has may be older than the workspace's `rust-version` (the stable
# toolchain it pins): Miri checks the same code, so the version gate is lifted for it only.

if [ "$(uname -m)" = x86_64 ]; then
    # Features enabled at compile time are what is_x86_feature_detected! reports under
    # Miri, so a build with AVX2 and FMA lists both the portable and the AVX2 kernel sets,
    # and the index tests run each of them (AVX-512 is not interpreted). The forward pass
    # runs on the baseline build, as users' builds do.
    echo "miri: baseline x86-64 (the forward pass)"
    CARGO_TARGET_DIR="$MIRI_TARGET_DIR/baseline" \
        cargo +nightly miri test --ignore-rust-version -p agentmemory-embed --lib -- "${embed_tests[@]}"
    echo "miri: with AVX2 and FMA (the portable and the AVX2 kernels)"
    CARGO_TARGET_DIR="$MIRI_TARGET_DIR/avx2" RUSTFLAGS="-C target-feature=+avx2,+fma" \
        cargo +nightly miri test --ignore-rust-version -p agentmemory-index -p agentmemory-embed --lib -- \
        "${vector_tests[@]}" "${int8_tests[@]}"
else
    echo "miri: the forward pass and the portable kernels"
    CARGO_TARGET_DIR="$MIRI_TARGET_DIR/baseline" \
        cargo +nightly miri test --ignore-rust-version -p agentmemory-index -p agentmemory-embed --lib -- \
        "${embed_tests[@]}" "${vector_tests[@]}" "${int8_tests[@]}"
fi
