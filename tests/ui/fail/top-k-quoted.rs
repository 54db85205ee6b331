use agentmemory::remember;

#[remember(top_k = "5")]
struct Agent;

fn main() {}
