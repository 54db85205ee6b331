use agentmemory::remember;

#[remember(store = "")]
struct Agent;

fn main() {}
