use agentmemory::{remember, Remember};

#[remember(stor = "facts", top_k = 0, extract = "yes", inject = true, inject = false)]
struct Agent;

// Uses the struct as an agent: no second, spurious "does not implement Remember" error.
fn run<A: Remember>(_: A) {}

fn main() {
    run(Agent);
}
