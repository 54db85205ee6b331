use agentmemory::{remember, Remember, RememberSpec};

#[remember(store = "user_memory", top_k = 3)]
pub struct Support {
    pub name: String,
    pub temperature: f32,
}

fn main() {
    let agent = Support { name: "support".to_owned(), temperature: 0.2 };
    assert_eq!(agent.name, "support");
    assert_eq!(agent.temperature, 0.2);
    assert_eq!(
        <Support as Remember>::SPEC,
        Some(RememberSpec::new().store("user_memory").top_k(3))
    );
}
