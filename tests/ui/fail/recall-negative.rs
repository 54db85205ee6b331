use agentmemory::remember;

#[remember(recall = -1)]
struct Agent;

fn main() {}
