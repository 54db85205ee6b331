use agentmem::remember;

#[remember(crate = "missing::agentmem")]
struct Agent;

fn main() {}
