use agentmemory::{remember, Remember, RememberSpec};

#[remember]
struct Bare;

#[remember()]
struct EmptyParens;

fn main() {
    let _ = (Bare, EmptyParens);
    let spec = <Bare as Remember>::SPEC;
    assert_eq!(spec, Some(RememberSpec::new()));
    assert_eq!(<EmptyParens as Remember>::SPEC, spec);
    // The defaults: auto-resolved store, extract and inject on, top_k 5, recall 3, the agent's own
    // model.
    let Some(spec) = spec else { panic!("no spec") };
    assert_eq!(spec.store, None);
    assert!(spec.extract);
    assert!(spec.inject);
    assert_eq!(spec.top_k, 5);
    assert_eq!(spec.recall, 5);
    assert_eq!(spec.extraction_model, None);
}
