use agentmemory::remember;

#[remember(topk = 5)]
struct Agent;

fn main() {}
