use agentmemory::remember;

#[remember(top_k = -3)]
struct Agent;

fn main() {}
