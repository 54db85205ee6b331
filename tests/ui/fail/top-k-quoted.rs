use agentmem::remember;

#[remember(top_k = "5")]
struct Agent;

fn main() {}
