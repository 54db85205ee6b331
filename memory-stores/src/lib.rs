//! Persistent stores for agentmem.
