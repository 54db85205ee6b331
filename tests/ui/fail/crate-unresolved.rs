use agentmemory::remember;

#[remember(crate = "missing::agentmem")]
struct Agent;

fn main() {}
