use agentmemory::remember;

#[remember(top-k = 5)]
struct Agent;

fn main() {}
