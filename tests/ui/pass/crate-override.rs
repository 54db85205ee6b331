// A crate that reaches agentmem only through a re-export.
mod reexport {
    pub use agentmem;
}

mod agents {
    use crate::reexport::agentmem::remember;

    #[remember(store = "facts", crate = "crate::reexport::agentmem")]
    pub struct Absolute;

    #[remember(top_k = 2, crate = "super::reexport::agentmem")]
    pub struct Relative;
}

#[agentmem::remember(inject = false, crate = "reexport::agentmem")]
struct Local;

use reexport::agentmem::{Remember, RememberSpec};

fn main() {
    let _ = (agents::Absolute, agents::Relative, Local);
    assert_eq!(<agents::Absolute as Remember>::SPEC, Some(RememberSpec::new().store("facts")));
    assert_eq!(<agents::Relative as Remember>::SPEC, Some(RememberSpec::new().top_k(2)));
    assert_eq!(<Local as Remember>::SPEC, Some(RememberSpec::new().inject(false)));
}
