//! Text analysis throughput: `cargo bench -p agentmemory-core --bench text`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

use agentmemory_core::store_support::for_each_term;

const QUERY: &str = "What should I wear on my commute when it rains?";
const DOCUMENT: &str =
    "The user rides a motorbike to work every day, lives in Lyon with two cats, \
    is lactose intolerant and loves hiking in the Alps; she visited Zürich's museums in 2024 \
    and says her favourite café serves crème brûlée. 她住在北京，喜欢喝咖啡 ☕ and 🍕.";

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("text");
    for (name, text) in [("query", QUERY), ("document", DOCUMENT)] {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut n = 0usize;
                for_each_term(black_box(text), |t| n += t.len());
                n
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
