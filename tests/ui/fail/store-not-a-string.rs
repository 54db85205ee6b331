use agentmemory::remember;

#[remember(store = 5)]
struct Agent;

fn main() {}
