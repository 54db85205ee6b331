use agentmemory::{remember, Remember, RememberSpec};

#[remember(store = "borrowed")]
struct Borrowing<'a, 'b: 'a> {
    persona: &'a str,
    tools: &'b [&'b str],
}

fn spec_of<T: Remember>(_: &T) -> Option<RememberSpec> {
    T::SPEC
}

fn main() {
    let tools = ["search"];
    let agent = Borrowing { persona: "helpful", tools: &tools };
    assert_eq!((agent.persona, agent.tools.len()), ("helpful", 1));
    assert_eq!(spec_of(&agent), Some(RememberSpec::new().store("borrowed")));
    assert_eq!(<Borrowing<'static, 'static> as Remember>::SPEC, spec_of(&agent));
}
