use agentmemory::remember;

#[remember(top_k = 0)]
struct Agent;

fn main() {}
