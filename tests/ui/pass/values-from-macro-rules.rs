// Values passed through `macro_rules!` arrive wrapped in invisible groups.
use agentmemory::{remember, Remember, RememberSpec};

macro_rules! agent {
    ($name:ident, $store:expr, $k:expr) => {
        #[remember(store = $store, top_k = $k)]
        struct $name;
    };
}

agent!(Generated, "generated", 9);

fn main() {
    let _ = Generated;
    assert_eq!(
        <Generated as Remember>::SPEC,
        Some(RememberSpec::new().store("generated").top_k(9))
    );
}
