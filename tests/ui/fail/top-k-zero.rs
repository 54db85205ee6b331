use agentmem::remember;

#[remember(top_k = 0)]
struct Agent;

fn main() {}
