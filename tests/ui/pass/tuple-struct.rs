use agentmemory::{remember, Remember, RememberSpec};

#[remember(inject = false)]
struct Extractor(&'static str, u32);

fn main() {
    let agent = Extractor("extractor", 7);
    assert_eq!((agent.0, agent.1), ("extractor", 7));
    let spec = <Extractor as Remember>::SPEC;
    assert_eq!(spec, Some(RememberSpec::new().inject(false)));
    assert!(spec.is_some_and(|spec| spec.extract && !spec.inject && spec.top_k == 5));
}
