use agentmem::remember;

#[remember(extract = "yes")]
struct Agent;

fn main() {}
