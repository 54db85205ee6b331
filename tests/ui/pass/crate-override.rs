// A crate that reaches agentmem only through a re-export.
mod reexport {
    pub use agentmemory;
}

mod agents {
    use crate::reexport::agentmemory::remember;

    #[remember(store = "facts", crate = "crate::reexport::agentmemory")]
    pub struct Absolute;

    #[remember(top_k = 2, crate = "super::reexport::agentmemory")]
    pub struct Relative;
}

#[agentmemory::remember(inject = false, crate = "reexport::agentmemory")]
struct Local;

use reexport::agentmemory::{Remember, RememberSpec};

fn main() {
    let _ = (agents::Absolute, agents::Relative, Local);
    assert_eq!(<agents::Absolute as Remember>::SPEC, Some(RememberSpec::new().store("facts")));
    assert_eq!(<agents::Relative as Remember>::SPEC, Some(RememberSpec::new().top_k(2)));
    assert_eq!(<Local as Remember>::SPEC, Some(RememberSpec::new().inject(false)));
}
