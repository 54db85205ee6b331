//! Conformance tests for the `vector` store trait.
//!
//! Every check uses fresh, randomly named namespaces, so a persistent backend can run
//! the suite repeatedly against the same database. Assertions are backend-neutral:
//! they look at ids, ordering and score ranges, never at exact scores.

use serde_json::json;

use crate::error::MemoryError;
use crate::vector::{Document, Filter, SearchHit, SearchQuery, VectorStore};

/// Runs every check of this module.
pub async fn run_all(store: &dyn VectorStore) {
    check_upsert_get_len(store).await;
    check_replace_updates_index(store).await;
    check_namespace_isolation(store).await;
    check_delete_and_clear(store).await;
    check_filters(store).await;
    check_ordering_and_k(store).await;
    check_batch(store).await;
    check_dense_search(store).await;
    check_hybrid_search(store).await;
    check_hybrid_finds_a_long_document_holding_the_query(store).await;
    check_ids_in_order(store).await;
    check_get_many(store).await;
    check_same_top3_as_in_memory(store).await;
}

/// A fresh namespace name containing `label`.
fn namespace(label: &str) -> String {
    format!("testkit-{label}-{}", ulid::Ulid::new())
}

fn ids(hits: &[SearchHit]) -> Vec<&str> {
    hits.iter().map(|h| h.id.as_str()).collect()
}

/// Upsert assigns ids, `get` returns what was stored, `len` counts.
pub async fn check_upsert_get_len(store: &dyn VectorStore) {
    let ns = namespace("upsert");
    assert_eq!(
        store.len(&ns).await.expect("len"),
        0,
        "a fresh namespace is empty"
    );
    let id = store
        .upsert(
            &ns,
            Document::new("the quick brown fox").with_metadata("lang", "en"),
        )
        .await
        .expect("upsert without id");
    assert!(!id.is_empty(), "upsert must assign an id");
    let given = store
        .upsert(&ns, Document::new("lazy dog").with_id("given-id"))
        .await
        .expect("upsert with id");
    assert_eq!(given, "given-id", "upsert must keep a given id");
    assert_eq!(store.len(&ns).await.expect("len"), 2);

    let doc = store
        .get(&ns, &id)
        .await
        .expect("get")
        .expect("stored document");
    assert_eq!(doc.id.as_deref(), Some(id.as_str()));
    assert_eq!(doc.content, "the quick brown fox");
    assert_eq!(doc.metadata.get("lang"), Some(&json!("en")));
    assert!(store.get(&ns, "no-such-id").await.expect("get").is_none());
}

/// Upserting an existing id replaces content, metadata and index entries.
pub async fn check_replace_updates_index(store: &dyn VectorStore) {
    let ns = namespace("replace");
    store
        .upsert(
            &ns,
            Document::new("alpha bravo")
                .with_id("x")
                .with_metadata("v", 1),
        )
        .await
        .expect("upsert");
    store
        .upsert(&ns, Document::new("unrelated filler text").with_id("y"))
        .await
        .expect("upsert");
    store
        .upsert(
            &ns,
            Document::new("charlie delta")
                .with_id("x")
                .with_metadata("v", 2),
        )
        .await
        .expect("replace");
    assert_eq!(
        store.len(&ns).await.expect("len"),
        2,
        "replace must not add"
    );
    let old = store
        .search(&ns, &SearchQuery::new("alpha bravo", 5))
        .await
        .expect("search");
    assert!(
        !ids(&old).contains(&"x"),
        "old content must no longer be found after a replace, got {old:?}"
    );
    let new = store
        .search(&ns, &SearchQuery::new("charlie", 5))
        .await
        .expect("search");
    assert_eq!(ids(&new).first(), Some(&"x"), "new content must be found");
    assert_eq!(new[0].metadata.get("v"), Some(&json!(2)));
    let doc = store.get(&ns, "x").await.expect("get").expect("stored");
    assert_eq!(doc.content, "charlie delta");
}

/// Namespaces (and ids) with awkward characters never see each other's documents.
pub async fn check_namespace_isolation(store: &dyn VectorStore) {
    let suffix = ulid::Ulid::new();
    let a = format!("tenant*:%'\"; DROP TABLE x; --{suffix}");
    let b = format!("tenant*:%'\"{suffix}");
    let c = format!("tenant_{suffix}");
    let tricky_id = "id*:%'\"; DROP TABLE x; --";
    store
        .upsert(&a, Document::new("secret zebra plans").with_id(tricky_id))
        .await
        .expect("upsert a");
    store
        .upsert(&b, Document::new("public giraffe notes").with_id(tricky_id))
        .await
        .expect("upsert b");

    let from_b = store
        .search(&b, &SearchQuery::new("zebra plans", 10))
        .await
        .expect("search b");
    assert!(
        from_b.is_empty(),
        "namespace b sees a's document: {from_b:?}"
    );
    let from_c = store
        .search(&c, &SearchQuery::new("zebra giraffe", 10))
        .await
        .expect("search c");
    assert!(
        from_c.is_empty(),
        "namespace c sees other documents: {from_c:?}"
    );
    let doc_b = store.get(&b, tricky_id).await.expect("get").expect("in b");
    assert_eq!(doc_b.content, "public giraffe notes");
    assert!(store.get(&c, tricky_id).await.expect("get").is_none());

    assert_eq!(store.len(&c).await.expect("len"), 0);
    assert_eq!(
        store
            .delete(&c, &[tricky_id.to_owned()])
            .await
            .expect("delete"),
        0,
        "delete in another namespace must not remove anything"
    );
    store.clear(&c).await.expect("clear c");
    assert_eq!(store.len(&a).await.expect("len"), 1);
    assert_eq!(store.len(&b).await.expect("len"), 1);

    store.clear(&b).await.expect("clear b");
    let hits = store
        .search(&a, &SearchQuery::new("zebra", 10))
        .await
        .expect("search a");
    assert_eq!(ids(&hits), [tricky_id], "clearing b must leave a intact");
    store.clear(&a).await.expect("clear a");
}

/// `delete` counts what existed, `clear` empties the namespace.
pub async fn check_delete_and_clear(store: &dyn VectorStore) {
    let ns = namespace("delete");
    for (id, text) in [("1", "red apple"), ("2", "green apple"), ("3", "blue sky")] {
        store
            .upsert(&ns, Document::new(text).with_id(id))
            .await
            .expect("upsert");
    }
    let removed = store
        .delete(&ns, &["1".to_owned(), "missing".to_owned()])
        .await
        .expect("delete");
    assert_eq!(removed, 1, "delete returns how many existed");
    assert!(store.get(&ns, "1").await.expect("get").is_none());
    assert_eq!(store.len(&ns).await.expect("len"), 2);
    let hits = store
        .search(&ns, &SearchQuery::new("apple", 10))
        .await
        .expect("search");
    assert_eq!(ids(&hits), ["2"], "deleted documents must not be found");

    store.clear(&ns).await.expect("clear");
    assert_eq!(store.len(&ns).await.expect("len"), 0);
    assert!(store
        .search(&ns, &SearchQuery::new("apple sky", 10))
        .await
        .expect("search")
        .is_empty());
    // The namespace is usable again after a clear.
    store
        .upsert(&ns, Document::new("apple again").with_id("4"))
        .await
        .expect("upsert after clear");
    assert_eq!(store.len(&ns).await.expect("len"), 1);
}

/// `eq`, `in`, `not` and their combination restrict hits.
pub async fn check_filters(store: &dyn VectorStore) {
    let ns = namespace("filters");
    let docs = [
        ("en-a", "en", "a", false),
        ("en-b", "en", "b", true),
        ("fr-a", "fr", "a", false),
        ("de-c", "de", "c", false),
    ];
    for (id, lang, tag, draft) in docs {
        store
            .upsert(
                &ns,
                Document::new(format!("memory notes about agents {id}"))
                    .with_id(id)
                    .with_metadata("lang", lang)
                    .with_metadata("tag", tag)
                    .with_metadata("draft", draft),
            )
            .await
            .expect("upsert");
    }
    let search = |filter: Filter| {
        let ns = ns.clone();
        async move {
            let q = SearchQuery::new("memory agents", 10).with_filter(filter);
            let mut got: Vec<String> = store
                .search(&ns, &q)
                .await
                .expect("filtered search")
                .into_iter()
                .map(|h| h.id)
                .collect();
            got.sort();
            got
        }
    };
    assert_eq!(
        search(Filter::new()).await,
        ["de-c", "en-a", "en-b", "fr-a"]
    );
    assert_eq!(
        search(Filter::new().eq("lang", "en")).await,
        ["en-a", "en-b"]
    );
    assert_eq!(
        search(Filter::new().is_in("lang", [json!("fr"), json!("de")])).await,
        ["de-c", "fr-a"]
    );
    assert_eq!(
        search(Filter::new().not("draft", true)).await,
        ["de-c", "en-a", "fr-a"]
    );
    assert_eq!(
        search(Filter::new().eq("lang", "en").not("draft", true)).await,
        ["en-a"]
    );
    assert_eq!(
        search(Filter::new().is_in("tag", [json!("a")]).not("lang", "en")).await,
        ["fr-a"]
    );
    assert!(search(Filter::new().eq("lang", "es")).await.is_empty());
    assert_eq!(
        search(Filter::new().not("missing-key", 1)).await.len(),
        4,
        "`not` holds when the key is absent"
    );
}

/// Hits are best first, at most `k`, sparse scores within `0..=1`; unknown words find nothing.
pub async fn check_ordering_and_k(store: &dyn VectorStore) {
    let ns = namespace("ordering");
    let texts = [
        ("exact", "solar panel battery storage"),
        ("two", "solar panel installation guide"),
        ("one", "battery recycling program"),
        ("none1", "medieval castle architecture"),
        ("none2", "baking sourdough bread"),
    ];
    for (id, text) in texts {
        store
            .upsert(&ns, Document::new(text).with_id(id))
            .await
            .expect("upsert");
    }
    let hits = store
        .search(&ns, &SearchQuery::new("solar panel battery storage", 10))
        .await
        .expect("search");
    assert_eq!(
        ids(&hits).first(),
        Some(&"exact"),
        "the exact match ranks first: {hits:?}"
    );
    assert!(
        !ids(&hits).contains(&"none1") && !ids(&hits).contains(&"none2"),
        "documents sharing no term must not be returned: {hits:?}"
    );
    assert!(
        hits.windows(2).all(|w| w[0].score >= w[1].score),
        "best first"
    );
    assert!(
        hits.iter().all(|h| (0.0..=1.0001).contains(&h.score)),
        "sparse scores lie in 0..=1: {hits:?}"
    );
    let top2 = store
        .search(&ns, &SearchQuery::new("solar panel battery storage", 2))
        .await
        .expect("search");
    assert_eq!(top2.len(), 2, "k bounds the hits");
    assert_eq!(ids(&top2), ids(&hits)[..2].to_vec(), "top-2 is a prefix");
    assert!(store
        .search(&ns, &SearchQuery::new("solar", 0))
        .await
        .expect("k = 0")
        .is_empty());
    assert!(store
        .search(&ns, &SearchQuery::new("xylophone quokka", 10))
        .await
        .expect("search")
        .is_empty());
}

/// `upsert_batch` stores everything and returns ids in order.
pub async fn check_batch(store: &dyn VectorStore) {
    let ns = namespace("batch");
    let docs = vec![
        Document::new("first batch document").with_id("b1"),
        Document::new("second batch document"),
        Document::new("third batch document").with_id("b3"),
    ];
    let got = store.upsert_batch(&ns, docs).await.expect("upsert_batch");
    assert_eq!(got.len(), 3);
    assert_eq!(got[0], "b1");
    assert_eq!(got[2], "b3");
    assert_eq!(store.len(&ns).await.expect("len"), 3);
    let doc = store.get(&ns, &got[1]).await.expect("get").expect("stored");
    assert_eq!(doc.content, "second batch document");
}

/// Query embeddings select dense search; dimensions are enforced.
pub async fn check_dense_search(store: &dyn VectorStore) {
    let ns = namespace("dense");
    let vectors: [(&str, [f32; 3], &str); 4] = [
        ("x", [1.0, 0.0, 0.0], "a"),
        ("xy", [1.0, 1.0, 0.0], "a"),
        ("y", [0.0, 2.0, 0.0], "b"),
        ("z", [0.0, 0.0, 5.0], "b"),
    ];
    for (id, v, group) in vectors {
        store
            .upsert(
                &ns,
                Document::new(format!("vector {id}"))
                    .with_id(id)
                    .with_metadata("group", group)
                    .with_embedding(v.to_vec()),
            )
            .await
            .expect("upsert with embedding");
    }
    let q = SearchQuery::new("", 3).with_embedding(vec![0.9, 0.1, 0.0]);
    let hits = store.search(&ns, &q).await.expect("dense search");
    assert_eq!(ids(&hits), ["x", "xy", "y"], "nearest first: {hits:?}");
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(hits.iter().all(|h| (-1.0001..=1.0001).contains(&h.score)));

    let filtered = store
        .search(&ns, &q.clone().with_filter(Filter::new().eq("group", "b")))
        .await
        .expect("filtered dense search");
    assert_eq!(ids(&filtered), ["y", "z"]);

    let stored = store.get(&ns, "y").await.expect("get").expect("stored");
    let v = stored.embedding.expect("embedding is kept");
    let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!(
        (norm - 1.0).abs() < 1e-3,
        "embeddings are stored L2-normalised"
    );

    let wrong = store
        .upsert(&ns, Document::new("bad").with_embedding(vec![1.0, 0.0]))
        .await;
    assert!(
        matches!(
            wrong,
            Err(MemoryError::DimensionMismatch {
                expected: 3,
                found: 2
            })
        ),
        "a different dimension must be refused, got {wrong:?}"
    );
    assert_eq!(
        store.len(&ns).await.expect("len"),
        4,
        "refused upsert stores nothing"
    );
    let wrong_query = store
        .search(&ns, &SearchQuery::new("", 3).with_embedding(vec![1.0; 4]))
        .await;
    assert!(
        matches!(wrong_query, Err(MemoryError::DimensionMismatch { .. })),
        "a query of another dimension must be refused, got {wrong_query:?}"
    );
    let zero = store
        .upsert(
            &ns,
            Document::new("zero").with_embedding(vec![0.0, 0.0, 0.0]),
        )
        .await;
    assert!(
        matches!(zero, Err(MemoryError::InvalidArgument { .. })),
        "a zero vector must be refused, got {zero:?}"
    );
}

/// A query with text and an embedding fuses the sparse and dense rankings: a document both
/// sides rank well beats the best of either side alone; filters apply to both sides; a
/// namespace without embeddings degrades to sparse.
pub async fn check_hybrid_search(store: &dyn VectorStore) {
    let ns = namespace("hybrid");
    let docs: [(&str, &str, Option<[f32; 3]>, &str); 5] = [
        (
            "words",
            "quarterly revenue report",
            Some([1.0, 0.0, 0.0]),
            "a",
        ),
        (
            "meaning",
            "holiday photos from the seaside",
            Some([0.0, 1.0, 0.0]),
            "b",
        ),
        (
            "both",
            "quarterly revenue of the beach kiosk",
            Some([0.6, 0.8, 0.0]),
            "a",
        ),
        ("near", "sunset over the sea", Some([0.1, 0.95, 0.3]), "b"),
        ("plain", "quarterly notes", None, "a"),
    ];
    for (id, text, v, group) in docs {
        let mut d = Document::new(text)
            .with_id(id)
            .with_metadata("group", group);
        if let Some(v) = v {
            d = d.with_embedding(v.to_vec());
        }
        store.upsert(&ns, d).await.expect("upsert");
    }
    let text = "quarterly revenue";
    let meaning = vec![0.2, 1.0, 0.0];
    let sparse = store
        .search(&ns, &SearchQuery::new(text, 5))
        .await
        .expect("sparse search");
    let dense = store
        .search(
            &ns,
            &SearchQuery::new("", 5).with_embedding(meaning.clone()),
        )
        .await
        .expect("dense search");
    let sparse_score = |id: &str| sparse.iter().find(|h| h.id == id).map_or(0.0, |h| h.score);
    assert!(
        sparse_score("words") >= sparse_score("both") && sparse_score("both") > 0.0,
        "words alone rank `words` at least as high as `both`: {sparse:?}"
    );
    assert_eq!(
        dense.first().map(|h| h.id.as_str()),
        Some("meaning"),
        "{dense:?}"
    );

    let q = SearchQuery::new(text, 5).with_embedding(meaning.clone());
    let hybrid = store.search(&ns, &q).await.expect("hybrid search");
    assert_eq!(
        hybrid.first().map(|h| h.id.as_str()),
        Some("both"),
        "the document both rankings like comes first: {hybrid:?}"
    );
    let got = ids(&hybrid);
    for id in ["words", "meaning", "plain"] {
        assert!(
            got.contains(&id),
            "{id} is a candidate of one side: {hybrid:?}"
        );
    }
    assert!(hybrid.windows(2).all(|w| w[0].score >= w[1].score));

    let filtered = store
        .search(&ns, &q.clone().with_filter(Filter::new().eq("group", "b")))
        .await
        .expect("filtered hybrid search");
    assert_eq!(
        ids(&filtered).first().copied(),
        Some("meaning"),
        "the filter applies to both sides: {filtered:?}"
    );
    assert!(
        ids(&filtered)
            .iter()
            .all(|id| ["meaning", "near"].contains(id)),
        "{filtered:?}"
    );
    let two = store
        .search(
            &ns,
            &SearchQuery::new(text, 2).with_embedding(meaning.clone()),
        )
        .await
        .expect("hybrid top 2");
    assert_eq!(ids(&two), got[..2].to_vec(), "k cuts the fused ranking");

    // A namespace without embeddings: the same hits as a sparse search.
    let plain = namespace("hybrid-plain");
    for (id, text, _, _) in docs {
        store
            .upsert(&plain, Document::new(text).with_id(id))
            .await
            .expect("upsert");
    }
    let sparse_only = store
        .search(&plain, &SearchQuery::new(text, 5))
        .await
        .expect("sparse");
    let degraded = store
        .search(&plain, &SearchQuery::new(text, 5).with_embedding(meaning))
        .await
        .expect("hybrid without embeddings");
    assert_eq!(ids(&degraded), ids(&sparse_only), "degrades to sparse");
    assert!(!degraded.is_empty());
}

/// Hybrid search under the default fusion finds a long message that holds every word of
/// the query, however far down words alone (its cosine shrinks with its length: 60 one-word
/// documents holding the query's common word rank above it) and meaning (a tie with everything,
/// broken against it by id) put it: a backend must give every document sharing a query
/// term its query coverage, not only its best few by cosine.
pub async fn check_hybrid_finds_a_long_document_holding_the_query(store: &dyn VectorStore) {
    let ns = namespace("coverage");
    let mut docs: Vec<Document> = (0..60)
        .map(|i| {
            Document::new("studio")
                .with_id(format!("a{i:02}"))
                .with_embedding(vec![1.0, 0.0, 0.0])
        })
        .collect();
    let long: Vec<String> = (0..300).map(filler).collect();
    let long = format!(
        "{} and then on monday I started at brightside studio {}",
        long[..150].join(" "),
        long[150..].join(" ")
    );
    docs.push(
        Document::new(long)
            .with_id("z-long")
            .with_embedding(vec![0.0, 1.0, 0.0]),
    );
    // Documents without "studio", so that it is common but not ubiquitous (held by
    // under 30 % of the namespace, see `tfidf::ubiquitous`): it still weighs.
    docs.extend((0..150).map(|i| {
        Document::new(format!("{} {}", filler(1_000 + i), filler(2_000 + i)))
            .with_id(format!("b{i:03}"))
            .with_embedding(vec![0.0, 0.0, 1.0])
    }));
    store.upsert_batch(&ns, docs).await.expect("upsert batch");
    let text = "brightside studio";
    let words = store
        .search(&ns, &SearchQuery::new(text, 61))
        .await
        .expect("sparse search");
    let at = words.iter().position(|h| h.id == "z-long");
    assert!(
        at.is_some_and(|at| at >= 50),
        "words alone rank the long document below 50 short ones: {at:?}"
    );
    let q = SearchQuery::new(text, 3).with_embedding(vec![1.0, 1.0, 0.0]);
    let hybrid = store.search(&ns, &q).await.expect("hybrid search");
    assert_eq!(
        ids(&hybrid).first().copied(),
        Some("z-long"),
        "the document holding every query word comes first: {hybrid:?}"
    );
    store.clear(&ns).await.expect("clear");
}

/// A word of its own for each `i` (letters only, so the analysis keeps it whole).
fn filler(i: usize) -> String {
    let letters = b"bcdfghjklmnpqrstvwxz";
    let mut word = String::from("q");
    let mut n = i;
    loop {
        word.push(letters[n % letters.len()] as char);
        word.push('o');
        n /= letters.len();
        if n == 0 {
            break;
        }
    }
    word
}

/// `ids` lists every id in byte order; `ids_in_range` the part of it in `[from, to)`,
/// without deleted ids or other namespaces' ids.
pub async fn check_ids_in_order(store: &dyn VectorStore) {
    let ns = namespace("ids");
    let other = namespace("ids-other");
    let written = ["01C", "01A", "02B", "01B", "03A", "02A"];
    let docs = written
        .iter()
        .map(|id| Document::new(format!("note {id}")).with_id(*id))
        .collect();
    store.upsert_batch(&ns, docs).await.expect("upsert batch");
    store
        .upsert(&other, Document::new("elsewhere").with_id("01AB"))
        .await
        .expect("upsert elsewhere");
    store
        .delete(&ns, &["02B".to_owned()])
        .await
        .expect("delete");
    assert_eq!(
        store.ids(&ns).await.expect("ids"),
        ["01A", "01B", "01C", "02A", "03A"],
        "ids in byte order, the deleted one gone"
    );
    let range = |from: &'static str, to: &'static str| {
        let ns = ns.clone();
        async move {
            store
                .ids_in_range(&ns, from, to)
                .await
                .expect("ids in range")
        }
    };
    assert_eq!(
        range("01B", "02A").await,
        ["01B", "01C"],
        "from inclusive, to exclusive"
    );
    assert_eq!(range("01", "02").await, ["01A", "01B", "01C"]);
    assert_eq!(range("02", "\u{7f}").await, ["02A", "03A"]);
    assert_eq!(range("", "01B").await, ["01A"]);
    assert!(range("02", "02").await.is_empty(), "an empty range");
    assert!(range("03", "01").await.is_empty(), "a reversed range");
    assert!(store
        .ids_in_range(&namespace("ids-none"), "0", "9")
        .await
        .expect("unknown namespace")
        .is_empty());
}

/// `get_many` returns the stored documents of the ids given, in their order, without the
/// missing ones or other namespaces' documents.
pub async fn check_get_many(store: &dyn VectorStore) {
    let ns = namespace("get-many");
    let other = namespace("get-many-other");
    for (id, text) in [("a", "alpha"), ("b", "bravo"), ("c", "charlie")] {
        store
            .upsert(&ns, Document::new(text).with_id(id).with_metadata("k", id))
            .await
            .expect("upsert");
    }
    store
        .upsert(&other, Document::new("delta").with_id("d"))
        .await
        .expect("upsert elsewhere");
    let wanted: Vec<String> = ["c", "missing", "a", "d"].map(String::from).to_vec();
    let docs = store.get_many(&ns, &wanted).await.expect("get many");
    let got: Vec<(Option<&str>, &str)> = docs
        .iter()
        .map(|d| (d.id.as_deref(), d.content.as_str()))
        .collect();
    assert_eq!(got, [(Some("c"), "charlie"), (Some("a"), "alpha")]);
    assert_eq!(docs[0].metadata.get("k"), Some(&json!("c")));
    assert!(store.get_many(&ns, &[]).await.expect("none").is_empty());
}

/// The top 3 of every query over a realistic corpus (inflections, case, accents, CJK,
/// emoji) is the in-memory store's, in the same order with the same scores: every
/// backend analyses and ranks documents through the same text analysis and scorer.
pub async fn check_same_top3_as_in_memory(store: &dyn VectorStore) {
    use super::corpus::{QUERIES, TEXTS};
    let ns = namespace("top3");
    let reference = crate::vector::InMemoryVectorStore::new();
    let docs: Vec<Document> = TEXTS
        .iter()
        .map(|(id, text)| Document::new(*text).with_id(*id))
        .collect();
    store
        .upsert_batch(&ns, docs.clone())
        .await
        .expect("upsert batch");
    reference
        .upsert_batch(&ns, docs)
        .await
        .expect("reference upsert");
    for (query, first) in QUERIES {
        let q = SearchQuery::new(*query, 3);
        let got = store.search(&ns, &q).await.expect("search");
        let want = reference.search(&ns, &q).await.expect("reference search");
        assert_eq!(
            ids(&want).first(),
            Some(first),
            "the shared analysis ranks {first} first for {query:?}: {want:?}"
        );
        assert_eq!(
            ids(&got),
            ids(&want),
            "top 3 for {query:?} differs from the in-memory store's: {got:?} vs {want:?}"
        );
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g.score - w.score).abs() < 1e-5,
                "score of {} for {query:?}: {} vs {}",
                g.id,
                g.score,
                w.score
            );
        }
    }
    store.clear(&ns).await.expect("clear");
}
