use agentmemory::remember;

#[remember(extract = false, extraction_model = "small-model")]
struct Agent;

fn main() {}
