use agentmemory::remember;

#[remember(extract = "yes")]
struct Agent;

fn main() {}
