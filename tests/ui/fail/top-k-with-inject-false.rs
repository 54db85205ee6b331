use agentmemory::remember;

#[remember(inject = false, top_k = 5)]
struct Agent;

fn main() {}
