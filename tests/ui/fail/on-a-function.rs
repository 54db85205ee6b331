use agentmemory::remember;

#[remember(store = "facts")]
fn agent() {}

fn main() {
    agent();
}
