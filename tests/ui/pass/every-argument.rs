use agentmemory::{remember, Remember, RememberSpec};

mod reexport {
    pub use agentmemory;
}

#[remember(
    store = "user_memory",
    extract = true,
    inject = true,
    top_k = 12,
    recall = 4,
    extraction_model = "small-model",
    crate = "reexport::agentmemory",
)]
struct Everything;

fn main() {
    let _ = Everything;
    let expected = RememberSpec::new()
        .store("user_memory")
        .extract(true)
        .inject(true)
        .top_k(12)
        .recall(4)
        .extraction_model("small-model");
    assert_eq!(<Everything as Remember>::SPEC, Some(expected));
    let Some(spec) = <Everything as Remember>::SPEC else { panic!("no spec") };
    assert_eq!(spec.store, Some("user_memory"));
    assert!(spec.extract && spec.inject);
    assert_eq!(spec.top_k, 12);
    assert_eq!(spec.recall, 4);
    assert_eq!(spec.extraction_model, Some("small-model"));
}
