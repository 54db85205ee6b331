use agentmem::remember;

#[remember(crate = "agentmem::")]
struct Agent;

fn main() {}
