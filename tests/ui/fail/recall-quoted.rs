use agentmemory::remember;

#[remember(recall = "3")]
struct Agent;

fn main() {}
