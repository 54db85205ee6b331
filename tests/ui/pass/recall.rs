use agentmemory::{remember, Remember, RememberSpec};

#[remember(recall = 8)]
struct Deep;

#[remember(recall = 0)]
struct NoRecall;

#[remember(top_k = 2)]
struct DefaultRecall;

fn main() {
    let _ = (Deep, NoRecall, DefaultRecall);
    let deep = <Deep as Remember>::SPEC;
    assert_eq!(deep, Some(RememberSpec::new().recall(8)));
    assert_eq!(deep.map(|spec| spec.recall), Some(8));
    // `recall = 0` turns recall off without touching anything else.
    let off = <NoRecall as Remember>::SPEC;
    assert_eq!(off.map(|spec| spec.recall), Some(0));
    assert_eq!(off.map(|spec| (spec.inject, spec.top_k)), Some((true, 5)));
    // Left out, recall keeps the spec's default.
    assert_eq!(<DefaultRecall as Remember>::SPEC.map(|spec| spec.recall), Some(5));
}
