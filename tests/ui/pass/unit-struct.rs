use agentmemory::{remember, Remember, RememberSpec};

#[remember(extract = false)]
struct Echo;

fn main() {
    let _ = Echo;
    assert_eq!(<Echo as Remember>::SPEC, Some(RememberSpec::new().extract(false)));
}
