use agentmemory::remember;

#[remember]
pub enum Agent {
    Support,
    Sales,
}

fn main() {}
