use agentmemory::remember;

#[remember(top_k = 3, store = "facts", top_k = 4)]
struct Agent;

fn main() {}
