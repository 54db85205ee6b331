//! The `#[remember]` attribute of agentmem.
