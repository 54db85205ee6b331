//! Compile-time behaviour of `#[remember]`: what expands (and the spec it carries) and what is
//! rejected, with the exact diagnostics.
//!
//! The `.stderr` files were generated with the toolchain pinned in `rust-toolchain.toml`;
//! regenerate with `TRYBUILD=overwrite cargo test --test ui` after a toolchain bump.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
