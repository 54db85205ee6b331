// A `#[cfg]` below `#[remember]` switches off the impl together with the struct.
use agentmemory::{remember, Remember, RememberSpec};

#[remember(store = "gone")]
#[cfg(any())]
struct Gone;

#[remember(store = "kept")]
#[cfg(all())]
struct Kept;

fn main() {
    let _ = Kept;
    assert_eq!(<Kept as Remember>::SPEC, Some(RememberSpec::new().store("kept")));
}
