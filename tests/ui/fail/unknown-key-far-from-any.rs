use agentmem::remember;

#[remember(colour = "red")]
struct Agent;

fn main() {}
