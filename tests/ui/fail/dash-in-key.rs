use agentmem::remember;

#[remember(top-k = 5)]
struct Agent;

fn main() {}
