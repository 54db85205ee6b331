//! The one prompt renderer: every text agentmem puts into a prompt is rendered here.
//!
//! The session's memory block (facts and recalled episodes, [`memory_block`]), its
//! running summary ([`summary_block`]), [`WorkingMemory`](crate::WorkingMemory)'s context
//! ([`working_memory`]), the server's `memory_prompt` and the MCP prompt tool
//! ([`reference_summary`], [`reference_memories`], [`reference_episodes`], under the
//! headings of the reference memory server) and the rig hook all go through this module. Each text is
//! delimited, escaped by one set of rules ([`push_escaped`]) and capped, so no stored
//! text can close its block, pose as a section or a speaker, or hide what it says.

mod escape;
pub mod excerpt;
mod filler;
#[cfg(any(test, feature = "testkit"))]
pub mod hostile;
mod memory;
mod reference;
mod summary;
mod working;

pub use escape::{escape_line, escape_text, push_escaped, Lines};
pub use filler::{is_content_free, without_speaker_label, FILLER_WORDS};
pub use memory::{compact_block, memory_block, render as facts_block, MemoryBlock};
pub use memory::{MEMORY_BLOCK_CLOSE, MEMORY_BLOCK_OPEN};
pub use reference::{
    reference_episodes, reference_memories, reference_summary, EPISODES_HEADING, MEMORIES_HEADING,
    SUMMARY_HEADING,
};
pub(crate) use summary::RenderedSummary;
pub use summary::{render as summary_block, SUMMARY_BLOCK_CLOSE, SUMMARY_BLOCK_OPEN};
pub use working::{working_memory, working_memory_within, WORKING_BLOCK_CLOSE, WORKING_BLOCK_OPEN};
