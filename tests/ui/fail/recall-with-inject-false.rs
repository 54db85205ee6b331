use agentmemory::remember;

#[remember(inject = false, recall = 2)]
struct Agent;

fn main() {}
