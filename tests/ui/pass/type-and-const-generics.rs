use std::fmt::Debug;
use std::marker::PhantomData;

use agentmemory::{remember, Remember, RememberSpec};

#[remember(top_k = 8, extraction_model = "small-model")]
struct Planner<M, T: Clone = u8, const N: usize = 4>
where
    M: Debug + Send,
{
    model: M,
    steps: [T; N],
    marker: PhantomData<fn() -> M>,
}

fn spec<A: Remember>() -> Option<RememberSpec> {
    A::SPEC
}

fn main() {
    let planner: Planner<&str> = Planner { model: "m", steps: [1; 4], marker: PhantomData };
    assert_eq!((planner.model, planner.steps.len()), ("m", 4));
    let expected = Some(RememberSpec::new().top_k(8).extraction_model("small-model"));
    assert_eq!(spec::<Planner<&str>>(), expected);
    assert_eq!(spec::<Planner<String, char, 0>>(), expected);
}
