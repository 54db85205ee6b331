//! # agentmem
//!
//! Declarative memory for AI agents.

pub use memory_core::*;
pub use memory_macros::*;
