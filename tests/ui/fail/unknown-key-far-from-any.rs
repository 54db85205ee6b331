use agentmemory::remember;

#[remember(colour = "red")]
struct Agent;

fn main() {}
