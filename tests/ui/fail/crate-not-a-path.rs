use agentmemory::remember;

#[remember(crate = "agentmemory::")]
struct Agent;

fn main() {}
