use agentmem::remember;

#[remember(store)]
struct Agent;

fn main() {}
