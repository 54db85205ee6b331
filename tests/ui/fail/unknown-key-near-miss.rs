use agentmem::remember;

#[remember(topk = 5)]
struct Agent;

fn main() {}
