//! Conformance tests for the `facts` store trait.
//!
//! Every check uses fresh, randomly named users, so a persistent backend can run the
//! suite repeatedly against the same database. Assertions look at kinds, ids, ordering
//! and ranges, never at exact scores.

use crate::facts::{FactCandidate, FactChange, FactQuery, MemoryFact, ScoredFact, UserMemoryStore};

/// Runs every check of this module.
pub async fn run_all(store: &dyn UserMemoryStore) {
    check_add_and_get(store).await;
    check_reinforce(store).await;
    check_supersede(store).await;
    check_unrelated_facts_are_added(store).await;
    check_ignored(store).await;
    check_user_isolation(store).await;
    check_foreign_ids_are_not_found(store).await;
    check_delete(store).await;
    check_forget_user(store).await;
    check_search_ranking(store).await;
    check_semantic_search(store).await;
    check_paraphrase_reinforces(store).await;
    check_cjk_and_emoji_search(store).await;
    check_pending_contradiction(store).await;
    check_pending_contradictions_are_capped(store).await;
    check_confirmation_answers_a_contradiction(store).await;
    check_restore(store).await;
    check_same_top3_as_in_memory(store).await;
    check_reapplying_a_message_changes_nothing(store).await;
    check_time_order_and_as_of(store).await;
    check_upsert_many_is_upsert_in_turn(store).await;
    check_facts_about_an_ended_thing_end_with_it(store).await;
}

/// A fresh user id containing `label`.
fn user(label: &str) -> String {
    format!("testkit-{label}-{}", ulid::Ulid::new())
}

fn location(city: &str) -> FactCandidate {
    FactCandidate::new(format!("lives in {city}"), 0.9).with_attribute("location", city)
}

async fn add(store: &dyn UserMemoryStore, user: &str, candidate: FactCandidate) -> MemoryFact {
    let change = store.upsert(user, candidate).await.expect("upsert");
    change
        .current()
        .cloned()
        .unwrap_or_else(|| panic!("expected a stored fact, got {change:?}"))
}

/// A new candidate is added, stamped with its user, and can be read back.
pub async fn check_add_and_get(store: &dyn UserMemoryStore) {
    let u = user("add");
    let change = store
        .upsert(&u, FactCandidate::new("likes green tea", 0.8))
        .await
        .expect("upsert");
    let FactChange::Added { fact } = change else {
        panic!("a first fact must be added, got {change:?}");
    };
    assert_eq!(fact.user_id, u);
    assert_eq!(fact.text, "likes green tea");
    assert!(fact.is_current());
    assert_eq!(fact.reinforcement_count, 0);
    let got = store.get(&u, &fact.id).await.expect("get").expect("stored");
    assert_eq!(got.id, fact.id);
    assert_eq!(got.text, fact.text);
    assert_eq!(store.list(&u).await.expect("list").len(), 1);
    assert!(store.get(&u, "no-such-fact").await.expect("get").is_none());
}

/// The same statement again reinforces the one fact.
pub async fn check_reinforce(store: &dyn UserMemoryStore) {
    let u = user("reinforce");
    let candidate =
        FactCandidate::new("likes Italian food", 0.6).with_attribute("likes", "Italian food");
    let first = add(store, &u, candidate.clone()).await;
    let change = store.upsert(&u, candidate).await.expect("upsert again");
    let FactChange::Reinforced { fact } = change else {
        panic!("a repeated fact must be reinforced, got {change:?}");
    };
    assert_eq!(fact.id, first.id, "reinforcement keeps the id");
    assert!(fact.confidence > first.confidence, "confidence must rise");
    assert_eq!(fact.reinforcement_count, 1);
    let list = store.list(&u).await.expect("list");
    assert_eq!(list.len(), 1, "reinforcement must not add a fact");
    assert_eq!(
        list[0].reinforcement_count, 1,
        "the stored fact is reinforced"
    );
    assert!(list[0].confidence > first.confidence);
}

/// A new value of a single-valued attribute supersedes the old one, which stays in history.
pub async fn check_supersede(store: &dyn UserMemoryStore) {
    let u = user("supersede");
    let paris = add(store, &u, location("Paris")).await;
    let change = store.upsert(&u, location("Berlin")).await.expect("upsert");
    let FactChange::Superseded { old, new } = change else {
        panic!("Berlin must supersede Paris, got {change:?}");
    };
    assert_eq!(old.id, paris.id);
    assert_eq!(old.superseded_by.as_deref(), Some(new.id.as_str()));
    assert!(new.is_current());
    assert_eq!(new.text, "lives in Berlin");

    let list = store.list(&u).await.expect("list");
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].id, new.id, "only Berlin is current");
    let hits = store.search(&u, "Paris", 10).await.expect("search");
    assert!(
        hits.iter().all(|h| h.fact.id != paris.id),
        "a superseded fact must not be searchable: {hits:?}"
    );
    let stored_old = store
        .get(&u, &paris.id)
        .await
        .expect("get")
        .expect("kept as history");
    assert_eq!(stored_old.superseded_by.as_deref(), Some(new.id.as_str()));

    let history = store.history(&u, &new.id).await.expect("history");
    let chain: Vec<&str> = history.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(chain, [paris.id.as_str(), new.id.as_str()], "oldest first");
    let from_old = store.history(&u, &paris.id).await.expect("history");
    assert_eq!(
        from_old.len(),
        2,
        "history from any version is the whole chain"
    );
}

/// Facts about different things coexist.
pub async fn check_unrelated_facts_are_added(store: &dyn UserMemoryStore) {
    let u = user("unrelated");
    let a = add(store, &u, location("Lisbon")).await;
    let b = add(store, &u, FactCandidate::new("plays the cello", 0.7)).await;
    let c = add(
        store,
        &u,
        FactCandidate::new("likes hiking", 0.7).with_attribute("likes", "hiking"),
    )
    .await;
    let d = add(
        store,
        &u,
        FactCandidate::new("likes chess", 0.7).with_attribute("likes", "chess"),
    )
    .await;
    let list: Vec<String> = store
        .list(&u)
        .await
        .expect("list")
        .into_iter()
        .map(|f| f.id)
        .collect();
    assert_eq!(list, [a.id, b.id, c.id, d.id], "all current, oldest first");
}

/// Unusable candidates store nothing.
pub async fn check_ignored(store: &dyn UserMemoryStore) {
    let u = user("ignored");
    for candidate in [
        FactCandidate::new("   ", 0.9),
        FactCandidate::new("likes tea", 1.5),
        FactCandidate::new("likes tea", f32::NAN),
    ] {
        let change = store.upsert(&u, candidate).await.expect("upsert");
        assert_eq!(change.kind(), "ignored", "{change:?}");
    }
    assert!(store.list(&u).await.expect("list").is_empty());
}

/// Users with awkward ids never see or change each other's facts.
pub async fn check_user_isolation(store: &dyn UserMemoryStore) {
    let suffix = ulid::Ulid::new();
    let a = format!("user*:%'\"; DROP TABLE x; --{suffix}");
    let b = format!("user*:%'\"{suffix}");
    let fact_a = add(store, &a, FactCandidate::new("allergic to peanuts", 0.9)).await;
    add(store, &b, FactCandidate::new("collects stamps", 0.9)).await;

    let hits = store
        .search(&b, "peanuts allergy", 10)
        .await
        .expect("search");
    assert!(
        hits.iter().all(|h| h.fact.user_id == b),
        "user b sees another user's facts: {hits:?}"
    );
    assert!(store.get(&b, &fact_a.id).await.expect("get").is_none());
    assert!(store
        .history(&b, &fact_a.id)
        .await
        .expect("history")
        .is_empty());
    assert!(!store.delete(&b, &fact_a.id).await.expect("delete"));
    assert!(store.get(&a, &fact_a.id).await.expect("get").is_some());
    assert_eq!(store.list(&b).await.expect("list").len(), 1);
    // The same statement for another user is a new fact there, not a reinforcement.
    let change = store
        .upsert(&b, FactCandidate::new("allergic to peanuts", 0.9))
        .await
        .expect("upsert");
    assert_eq!(change.kind(), "added");
    assert_eq!(store.forget_user(&b).await.expect("forget"), 2);
    assert_eq!(
        store.list(&a).await.expect("list").len(),
        1,
        "forgetting b spares a"
    );
    store.forget_user(&a).await.expect("forget");
}

/// Another user's fact ids, current or superseded, are "not found": `get` gives `None`,
/// `history` nothing, `delete` `false`. Neither that, nor an import for the other user
/// carrying the owner's ids, nor the other user's own changes to such a copy, touches
/// the owner's facts.
pub async fn check_foreign_ids_are_not_found(store: &dyn UserMemoryStore) {
    let owner = user("owner");
    let other = user("other");
    let paris = add(store, &owner, location("Paris")).await;
    let berlin = add(store, &owner, location("Berlin")).await;
    let tea = add(
        store,
        &owner,
        FactCandidate::new("likes green tea", 0.6).with_attribute("likes", "green tea"),
    )
    .await;
    add(store, &other, location("Rome")).await;
    for id in [&paris.id, &berlin.id, &tea.id] {
        assert!(
            store.get(&other, id).await.expect("get").is_none(),
            "another user's fact `{id}` must not be found"
        );
        assert!(
            store.history(&other, id).await.expect("history").is_empty(),
            "another user's history of `{id}` must be empty"
        );
        assert!(
            !store.delete(&other, id).await.expect("delete"),
            "another user's fact `{id}` must not be deletable"
        );
    }

    // An import for `other` carrying the owner's record (id and owner's user id): a store
    // may keep it as `other`'s own copy, or refuse the id; never write the owner's row.
    let written = store
        .import_records(&other, vec![tea.clone()])
        .await
        .expect("import");
    assert!(written <= 1);
    if let Some(copy) = store.get(&other, &tea.id).await.expect("get") {
        assert_eq!(
            copy.user_id, other,
            "an imported record belongs to its importer"
        );
    }
    // `other` reinforcing the same statement changes only `other`'s facts.
    let change = store
        .upsert(
            &other,
            FactCandidate::new("likes green tea", 0.6).with_attribute("likes", "green tea"),
        )
        .await
        .expect("upsert");
    if let Some(fact) = change.current() {
        assert_eq!(fact.user_id, other);
    }
    store.delete(&other, &tea.id).await.expect("delete");

    let kept = store
        .get(&owner, &tea.id)
        .await
        .expect("get")
        .expect("the owner's fact is still there");
    assert_eq!(kept.user_id, owner);
    assert_eq!(kept.text, tea.text);
    assert_eq!(kept.reinforcement_count, tea.reinforcement_count);
    assert!(kept.is_current());
    let chain: Vec<String> = store
        .history(&owner, &berlin.id)
        .await
        .expect("history")
        .into_iter()
        .map(|f| f.id)
        .collect();
    assert_eq!(chain, [paris.id.clone(), berlin.id.clone()]);
    let current: Vec<String> = store
        .list(&owner)
        .await
        .expect("list")
        .into_iter()
        .map(|f| f.id)
        .collect();
    assert_eq!(current, [berlin.id, tea.id]);
    store.forget_user(&owner).await.expect("forget");
    store.forget_user(&other).await.expect("forget");
}

/// Deleting a fact removes it and its history.
pub async fn check_delete(store: &dyn UserMemoryStore) {
    let u = user("delete");
    let paris = add(store, &u, location("Paris")).await;
    let berlin = add(store, &u, location("Berlin")).await;
    let other = add(store, &u, FactCandidate::new("speaks Finnish", 0.8)).await;
    assert!(store.delete(&u, &berlin.id).await.expect("delete"));
    assert!(!store.delete(&u, &berlin.id).await.expect("delete twice"));
    assert!(store.get(&u, &berlin.id).await.expect("get").is_none());
    assert!(
        store.get(&u, &paris.id).await.expect("get").is_none(),
        "the history chain goes with the fact"
    );
    assert!(store
        .history(&u, &berlin.id)
        .await
        .expect("history")
        .is_empty());
    let list = store.list(&u).await.expect("list");
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].id, other.id);
    assert!(store
        .search(&u, "Berlin", 5)
        .await
        .expect("search")
        .iter()
        .all(|h| h.fact.id == other.id));
}

/// `forget_user` erases every record, history included.
pub async fn check_forget_user(store: &dyn UserMemoryStore) {
    let u = user("forget");
    let paris = add(store, &u, location("Paris")).await;
    let berlin = add(store, &u, location("Berlin")).await;
    add(store, &u, FactCandidate::new("owns a cat", 0.9)).await;
    assert_eq!(
        store.forget_user(&u).await.expect("forget"),
        3,
        "two current facts and one superseded version"
    );
    assert!(store.list(&u).await.expect("list").is_empty());
    assert!(store
        .search(&u, "cat Berlin Paris", 10)
        .await
        .expect("search")
        .is_empty());
    for id in [&paris.id, &berlin.id] {
        assert!(store.get(&u, id).await.expect("get").is_none());
        assert!(store.history(&u, id).await.expect("history").is_empty());
    }
    assert_eq!(store.forget_user(&u).await.expect("forget again"), 0);
    let unknown = user("never-seen");
    assert_eq!(
        store.forget_user(&unknown).await.expect("forget unknown"),
        0
    );
}

/// Search ranks the relevant fact first, best first, within `top_k`.
pub async fn check_search_ranking(store: &dyn UserMemoryStore) {
    let u = user("search");
    let food = add(
        store,
        &u,
        FactCandidate::new("likes Italian food", 0.8).with_attribute("likes", "Italian food"),
    )
    .await;
    for text in [
        "works as a nurse",
        "has a dog named Rex",
        "plays the violin",
    ] {
        add(store, &u, FactCandidate::new(text, 0.8)).await;
    }
    let hits = store
        .search(&u, "what food does the user like?", 10)
        .await
        .expect("search");
    assert!(!hits.is_empty());
    assert_eq!(
        hits[0].fact.id, food.id,
        "the relevant fact ranks first: {hits:?}"
    );
    assert!(hits[0].relevance > 0.0);
    assert!(
        hits.windows(2).all(|w| w[0].score >= w[1].score),
        "best first"
    );
    for h in &hits {
        assert!((0.0..=1.0001).contains(&h.relevance), "{h:?}");
        assert!((0.0..=1.0001).contains(&h.effective_confidence), "{h:?}");
        assert!(
            h.score > 0.0 && h.score <= h.effective_confidence + 1e-4,
            "{h:?}"
        );
    }
    let top2 = store.search(&u, "dog", 2).await.expect("search");
    assert_eq!(top2.len(), 2, "top_k bounds the hits");
    assert_eq!(top2[0].fact.text, "has a dog named Rex");
    assert!(store.search(&u, "dog", 0).await.expect("search").is_empty());
}

fn texts(hits: &[ScoredFact]) -> Vec<&str> {
    hits.iter().map(|h| h.fact.text.as_str()).collect()
}

fn embedded(text: &str, v: [f32; 4]) -> FactCandidate {
    let mut c = FactCandidate::new(text, 0.9);
    c.embedding = Some(v.to_vec());
    c
}

/// A query with an embedding ranks by meaning as well as words: the fact whose embedding
/// matches comes first although it shares no word with the query; embeddings are kept
/// with the facts (normalised); a query without an embedding still ranks by words.
pub async fn check_semantic_search(store: &dyn UserMemoryStore) {
    let u = user("semantic");
    add(
        store,
        &u,
        embedded("is lactose intolerant", [1.0, 0.0, 0.0, 0.0]),
    )
    .await;
    add(store, &u, embedded("lives in Lyon", [0.0, 1.0, 0.0, 0.0])).await;
    let siemens = add(
        store,
        &u,
        embedded("works for Siemens", [0.0, 0.0, 3.0, 0.0]),
    )
    .await;
    let stored = store
        .get(&u, &siemens.id)
        .await
        .expect("get")
        .expect("stored");
    let v = stored
        .embedding
        .expect("the embedding is stored with the fact");
    assert!((v[2] - 1.0).abs() < 1e-4, "stored normalised: {v:?}");

    let q = FactQuery::new("Should I order the cheese platter?", 3)
        .with_embedding(vec![0.9, 0.1, 0.1, 0.0]);
    let hits = store
        .search_query(&u, &q)
        .await
        .expect("hybrid fact search");
    assert_eq!(texts(&hits)[0], "is lactose intolerant", "{hits:?}");
    assert!(hits[0].relevance > hits[1].relevance);
    assert!(hits.iter().all(|h| (0.0..=1.0).contains(&h.relevance)));
    let words = store
        .search(&u, "Where do you work, Siemens?", 1)
        .await
        .expect("search");
    assert_eq!(texts(&words), ["works for Siemens"]);
}

/// A paraphrase of a current fact (same attribute and polarity, embeddings close)
/// reinforces it; a different value with a distant embedding is added.
pub async fn check_paraphrase_reinforces(store: &dyn UserMemoryStore) {
    let u = user("paraphrase");
    let hiking = embedded("loves hiking", [1.0, 0.1, 0.0, 0.0]).with_attribute("likes", "hiking");
    let first = add(store, &u, hiking).await;
    let again = embedded("really enjoys going hiking", [0.95, 0.15, 0.05, 0.0])
        .with_attribute("likes", "going hiking");
    let change = store.upsert(&u, again).await.expect("upsert");
    let FactChange::Reinforced { fact } = change else {
        panic!("a paraphrase must reinforce, got {change:?}");
    };
    assert_eq!(fact.id, first.id);
    assert_eq!(fact.reinforcement_count, 1);
    let chess = embedded("likes chess", [0.0, 0.0, 1.0, 0.2]).with_attribute("likes", "chess");
    assert_eq!(
        store.upsert(&u, chess).await.expect("upsert").kind(),
        "added"
    );
    assert_eq!(store.list(&u).await.expect("list").len(), 2);
}

/// Chinese text is found inside a longer run, and emoji are searchable terms.
pub async fn check_cjk_and_emoji_search(store: &dyn UserMemoryStore) {
    let u = user("cjk");
    add(store, &u, FactCandidate::new("我住在北京", 0.9)).await;
    add(store, &u, FactCandidate::new("喜欢喝咖啡", 0.9)).await;
    add(store, &u, FactCandidate::new("loves 🍕 and 🎸", 0.9)).await;
    let hits = store.search(&u, "北京", 3).await.expect("search");
    assert_eq!(texts(&hits)[0], "我住在北京", "{hits:?}");
    assert!(hits[0].relevance > 0.0 && hits[1].relevance == 0.0);
    let hits = store.search(&u, "🍕?", 3).await.expect("search");
    assert_eq!(texts(&hits)[0], "loves 🍕 and 🎸", "{hits:?}");
    assert!(hits[0].relevance > 0.0);
}

/// A deterministic [`Embedder`](crate::vector::Embedder) for tests that need no model:
/// the folded terms of a text ([`terms`](crate::store_support::terms)), each hashed into one of 64 dimensions,
/// plus a constant dimension so no text embeds to zero.
#[derive(Debug, Default, Clone, Copy)]
pub struct HashEmbedder;

#[async_trait::async_trait]
impl crate::vector::Embedder for HashEmbedder {
    async fn embed(&self, texts: &[String]) -> crate::Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0f32; 65];
                v[64] = 0.5;
                crate::text::for_each_term(t, |term| {
                    // FNV-1a: stable across runs and platforms.
                    let h = term.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                    });
                    v[(h % 64) as usize] += 1.0;
                });
                v
            })
            .collect())
    }

    fn dimensions(&self) -> Option<usize> {
        Some(65)
    }

    fn model_name(&self) -> Option<String> {
        Some("hash-65".to_owned())
    }
}

fn name(value: &str, confidence: f32) -> FactCandidate {
    FactCandidate::new(format!("name is {value}"), confidence).with_attribute("name", value)
}

/// A weak contradiction of a well-established fact is recorded on it (and persisted),
/// not applied; said a second time it supersedes, with both statements' confidence.
pub async fn check_pending_contradiction(store: &dyn UserMemoryStore) {
    let u = user("contest");
    let maria = add(store, &u, name("Maria", 0.95)).await;
    let change = store.upsert(&u, name("Danish", 0.4)).await.expect("upsert");
    let FactChange::Contested { fact, .. } = &change else {
        panic!("a weak contradiction must be contested, got {change:?}");
    };
    assert_eq!(fact.id, maria.id);
    let stored = store.get(&u, &maria.id).await.expect("get").expect("kept");
    assert!(stored.is_current(), "the contested fact stays current");
    assert_eq!(
        stored.pending_contradictions.len(),
        1,
        "recorded: {stored:?}"
    );
    assert_eq!(
        stored.pending_contradictions[0].value.as_deref(),
        Some("Danish")
    );
    let hits = store
        .search(&u, "what is my name", 5)
        .await
        .expect("search");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].fact.id, maria.id);

    let change = store.upsert(&u, name("Danish", 0.4)).await.expect("upsert");
    let FactChange::Superseded { old, new } = change else {
        panic!("the same contradiction twice must supersede, got {change:?}");
    };
    assert_eq!(old.id, maria.id);
    assert_eq!(new.value.as_deref(), Some("Danish"));
    assert!(
        (new.confidence - 0.64).abs() < 1e-3,
        "1 - 0.6 * 0.6, got {}",
        new.confidence
    );
    let list = store.list(&u).await.expect("list");
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].id, new.id);
}

/// A fact keeps at most [`MAX_PENDING`](crate::facts::MAX_PENDING) pending
/// contradictions, the newest, and stays current through all of them.
pub async fn check_pending_contradictions_are_capped(store: &dyn UserMemoryStore) {
    let u = user("contest-cap");
    let ana = add(store, &u, name("Ana", 0.95)).await;
    let said = crate::facts::MAX_PENDING + 3;
    for i in 0..said {
        let change = store
            .upsert(&u, name(&format!("Guess{i}"), 0.4))
            .await
            .expect("upsert");
        assert_eq!(change.kind(), "contested", "{change:?}");
    }
    let stored = store.get(&u, &ana.id).await.expect("get").expect("kept");
    assert!(stored.is_current());
    let values: Vec<_> = stored
        .pending_contradictions
        .iter()
        .map(|p| p.value.clone().unwrap_or_default())
        .collect();
    let newest: Vec<_> = (said - crate::facts::MAX_PENDING..said)
        .map(|i| format!("Guess{i}"))
        .collect();
    assert_eq!(values, newest, "the newest are kept, oldest first");
    let list = store.list(&u).await.expect("list");
    assert_eq!(list.len(), 1, "no contradiction was stored as a fact");
}

/// Stating the fact again answers a pending contradiction: it is cleared, and the next
/// weak contradiction is pending again rather than superseding.
pub async fn check_confirmation_answers_a_contradiction(store: &dyn UserMemoryStore) {
    let u = user("confirm");
    let maria = add(store, &u, name("Maria", 0.95)).await;
    let change = store.upsert(&u, name("Danish", 0.4)).await.expect("upsert");
    assert_eq!(change.kind(), "contested");
    let change = store.upsert(&u, name("Maria", 0.95)).await.expect("upsert");
    assert_eq!(change.kind(), "reinforced", "{change:?}");
    let stored = store.get(&u, &maria.id).await.expect("get").expect("kept");
    assert!(stored.pending_contradictions.is_empty(), "{stored:?}");
    let change = store.upsert(&u, name("Danish", 0.4)).await.expect("upsert");
    assert_eq!(change.kind(), "contested", "{change:?}");
    let current = store.list(&u).await.expect("list");
    assert_eq!(current.len(), 1);
    assert_eq!(current[0].id, maria.id);
}

/// A restored export keeps ids, history and links, is searchable at once (a search made
/// before the restore does not hide it), and restoring it again writes nothing.
pub async fn check_restore(store: &dyn UserMemoryStore) {
    use crate::facts::{export_facts, restore_facts, InMemoryUserMemoryStore};

    let source = InMemoryUserMemoryStore::new();
    for city in ["Paris", "Berlin", "Oslo"] {
        source
            .upsert("origin", location(city))
            .await
            .expect("upsert");
    }
    source
        .upsert("origin", FactCandidate::new("likes sailing", 0.8))
        .await
        .expect("upsert");
    let export = export_facts(&source, "origin").await.expect("export");
    let u = user("restore");
    assert!(store
        .search(&u, "sailing", 5)
        .await
        .expect("search")
        .is_empty());
    assert_eq!(
        restore_facts(store, &export, Some(&u))
            .await
            .expect("restore"),
        4
    );
    assert_eq!(
        restore_facts(store, &export, Some(&u))
            .await
            .expect("again"),
        0
    );
    let current = store.list(&u).await.expect("list");
    assert_eq!(current.len(), 2, "{current:?}");
    let oslo = current
        .iter()
        .find(|f| f.text == "lives in Oslo")
        .expect("Oslo is current");
    assert_eq!(oslo.user_id, u);
    let history = store.history(&u, &oslo.id).await.expect("history");
    let texts: Vec<&str> = history.iter().map(|f| f.text.as_str()).collect();
    assert_eq!(
        texts,
        ["lives in Paris", "lives in Berlin", "lives in Oslo"]
    );
    let hits = store.search(&u, "sailing", 5).await.expect("search");
    assert_eq!(hits[0].fact.text, "likes sailing");
}

/// The top 3 facts of every query over a realistic corpus (inflections, case, accents,
/// CJK, emoji) are the in-memory store's, in the same order with the same scores: every
/// backend reconciles and ranks facts through the same engine.
pub async fn check_same_top3_as_in_memory(store: &dyn UserMemoryStore) {
    use super::corpus::{QUERIES, TEXTS};
    let u = user("top3");
    let reference = crate::facts::InMemoryUserMemoryStore::new();
    // Distinct confidences, so no two facts tie (ties go by id, and ids differ).
    for (i, (_, text)) in TEXTS.iter().enumerate() {
        let candidate = FactCandidate::new(*text, 0.95 - i as f32 * 0.02);
        store.upsert(&u, candidate.clone()).await.expect("upsert");
        reference
            .upsert(&u, candidate)
            .await
            .expect("reference upsert");
    }
    let text_of = |id: &str| TEXTS.iter().find(|(i, _)| *i == id).map(|(_, t)| *t);
    for (query, first) in QUERIES {
        let got = store.search(&u, query, 3).await.expect("search");
        let want = reference
            .search(&u, query, 3)
            .await
            .expect("reference search");
        let texts =
            |hits: &[ScoredFact]| hits.iter().map(|h| h.fact.text.clone()).collect::<Vec<_>>();
        assert_eq!(
            texts(&want).first().map(String::as_str),
            text_of(first),
            "the shared analysis ranks {first} first for {query:?}"
        );
        assert_eq!(
            texts(&got),
            texts(&want),
            "top 3 facts for {query:?} differ from the in-memory store's"
        );
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g.relevance - w.relevance).abs() < 1e-5,
                "relevance of {:?} for {query:?}: {} vs {}",
                g.fact.text,
                g.relevance,
                w.relevance
            );
        }
    }
    store.forget_user(&u).await.expect("forget");
}

/// A candidate from message `message` of conversation `c`, said at `at`.
fn said(
    candidate: FactCandidate,
    message: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> FactCandidate {
    let mut c = candidate;
    let text = c.text.clone();
    crate::facts::stamp(&mut c, "testkit", message, at, &text);
    c
}

/// Applying the same message again is a no-op: the fact it stated is neither
/// reinforced nor duplicated.
pub async fn check_reapplying_a_message_changes_nothing(store: &dyn UserMemoryStore) {
    let u = user("reapply");
    let at = chrono::Utc::now() - chrono::Duration::days(3);
    let first = store
        .upsert(
            &u,
            said(location("Ghent"), "01JTESTK1T00000000000000AA", at),
        )
        .await
        .expect("upsert");
    assert_eq!(first.kind(), "added");
    let again = store
        .upsert(
            &u,
            said(location("Ghent"), "01JTESTK1T00000000000000AA", at),
        )
        .await
        .expect("upsert");
    assert_eq!(again.kind(), "ignored", "{again:?}");
    let facts = store.list(&u).await.expect("list");
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0].reinforcement_count, 0);
    // Another message saying the same reinforces.
    let other = store
        .upsert(
            &u,
            said(
                location("Ghent"),
                "01JTESTK1T00000000000000AB",
                at + chrono::Duration::hours(1),
            ),
        )
        .await
        .expect("upsert");
    assert_eq!(other.kind(), "reinforced");
}

/// Statements arriving out of time order give the same current fact as in order, the
/// older one kept as a closed version; `facts_as_of` answers what held at a moment.
pub async fn check_time_order_and_as_of(store: &dyn UserMemoryStore) {
    use chrono::TimeZone;
    let u = user("as-of");
    let jan = chrono::Utc.with_ymd_and_hms(2024, 1, 10, 9, 0, 0).unwrap();
    let jun = chrono::Utc.with_ymd_and_hms(2024, 6, 10, 9, 0, 0).unwrap();
    store
        .upsert(
            &u,
            said(location("Aarhus"), "01JTESTK1T00000000000000B2", jun),
        )
        .await
        .expect("upsert");
    let late = store
        .upsert(
            &u,
            said(location("Odense"), "01JTESTK1T00000000000000B1", jan),
        )
        .await
        .expect("upsert");
    assert!(
        late.current().is_none(),
        "an older statement is history: {late:?}"
    );
    let current = store.list(&u).await.expect("list");
    assert_eq!(current.len(), 1);
    assert_eq!(current[0].text, "lives in Aarhus");
    let march = chrono::Utc.with_ymd_and_hms(2024, 3, 1, 0, 0, 0).unwrap();
    let then = store.facts_as_of(&u, march).await.expect("as of");
    assert_eq!(then.len(), 1, "{then:?}");
    assert_eq!(then[0].text, "lives in Odense");
    assert_eq!(then[0].valid_to, Some(jun));
    let later = store
        .facts_as_of(&u, jun + chrono::Duration::days(1))
        .await
        .expect("as of");
    assert_eq!(later.len(), 1);
    assert_eq!(later[0].text, "lives in Aarhus");
    assert_eq!(later[0].valid_to, None);
    let before = jan - chrono::Duration::days(1);
    assert!(store
        .facts_as_of(&u, before)
        .await
        .expect("as of")
        .is_empty());
    // Every version is there, the older one closed and pointing at the current one.
    let versions = store.versions(&u).await.expect("versions");
    assert_eq!(versions.len(), 2);
    let history = store.history(&u, &current[0].id).await.expect("history");
    let texts: Vec<&str> = history.iter().map(|f| f.text.as_str()).collect();
    assert_eq!(texts, ["lives in Odense", "lives in Aarhus"]);
}

/// `upsert_many` reconciles each candidate against what the earlier ones changed, as
/// `upsert` one after another would: Paris added, Berlin supersedes it, jazz added, jazz
/// again reinforced; the store then holds what the one-by-one user holds.
pub async fn check_upsert_many_is_upsert_in_turn(store: &dyn UserMemoryStore) {
    let jazz = || FactCandidate::new("likes jazz", 0.7).with_attribute("likes", "jazz");
    let batch = vec![location("Paris"), location("Berlin"), jazz(), jazz()];
    let many = user("many");
    let changes = store
        .upsert_many(&many, batch.clone())
        .await
        .expect("upsert_many");
    let kinds: Vec<&str> = changes.iter().map(|c| c.kind()).collect();
    assert_eq!(
        kinds,
        ["added", "superseded", "added", "reinforced"],
        "{changes:?}"
    );
    let one = user("one-by-one");
    for candidate in batch {
        store.upsert(&one, candidate).await.expect("upsert");
    }
    let texts = |facts: Vec<MemoryFact>| {
        let mut t: Vec<(String, u32)> = facts
            .into_iter()
            .map(|f| (f.text, f.reinforcement_count))
            .collect();
        t.sort();
        t
    };
    let held = texts(store.list(&many).await.expect("list"));
    assert_eq!(held, texts(store.list(&one).await.expect("list")));
    assert_eq!(
        held,
        [
            ("likes jazz".to_owned(), 1),
            ("lives in Berlin".to_owned(), 0)
        ]
    );
    assert_eq!(
        store.versions(&many).await.expect("versions").len(),
        3,
        "Paris kept as history"
    );
    assert!(store
        .upsert_many(&many, Vec::new())
        .await
        .expect("nothing")
        .is_empty());
}

/// A change of state closes every fact its object holds: once "we had to rehome Pepper"
/// closes the dog, "dog Pepper is 4 years old" is no longer current either (a fact of
/// another subject, the dog's). The same whichever statement arrives first, and the
/// ending applied again changes nothing.
pub async fn check_facts_about_an_ended_thing_end_with_it(store: &dyn UserMemoryStore) {
    use crate::facts::Transition;
    use chrono::TimeZone;
    let march = chrono::Utc.with_ymd_and_hms(2024, 3, 2, 9, 0, 0).unwrap();
    let october = chrono::Utc.with_ymd_and_hms(2024, 10, 5, 9, 0, 0).unwrap();
    let dog =
        || FactCandidate::new("has a dog named Pepper", 0.7).with_attribute("pet", "dog Pepper");
    let age = || {
        let mut age =
            FactCandidate::new("dog Pepper is 4 years old", 0.75).with_attribute("age", "4");
        age.subject = Some("dog Pepper".into());
        age
    };
    let own_age = || FactCandidate::new("is 34 years old", 0.8).with_attribute("age", "34");
    let rehomed = || {
        FactCandidate::new("had to rehome Pepper", 0.8)
            .with_attribute("event", "had to rehome Pepper")
            .with_transition(Transition::Ends {
                object: "Pepper".into(),
            })
    };
    let first = [
        said(dog(), "01JTESTK1T00000000000000C1", march),
        said(age(), "01JTESTK1T00000000000000C1", march),
        said(own_age(), "01JTESTK1T00000000000000C1", march),
    ];
    let ending = said(rehomed(), "01JTESTK1T00000000000000C2", october);
    let current_texts = |facts: Vec<MemoryFact>| {
        let mut texts: Vec<String> = facts
            .into_iter()
            .filter(|f| {
                f.polarity == crate::facts::Polarity::Positive
                    && f.attribute.as_deref() != Some("event")
            })
            .map(|f| f.text)
            .collect();
        texts.sort();
        texts
    };
    for order in ["in order", "reversed", "in one batch"] {
        let u = user("ended-thing");
        match order {
            "in order" => {
                for c in first.iter().cloned().chain([ending.clone()]) {
                    store.upsert(&u, c).await.expect("upsert");
                }
            }
            "reversed" => {
                for c in std::iter::once(ending.clone()).chain(first.iter().cloned()) {
                    store.upsert(&u, c).await.expect("upsert");
                }
            }
            _ => {
                let batch = first.iter().cloned().chain([ending.clone()]).collect();
                store.upsert_many(&u, batch).await.expect("upsert_many");
            }
        }
        let held = current_texts(store.list(&u).await.expect("list"));
        assert_eq!(
            held,
            ["is 34 years old"],
            "{order}: the dog's facts end with it"
        );
        let stored = store.versions(&u).await.expect("versions").len();
        let again = store.upsert(&u, ending.clone()).await.expect("again");
        assert_eq!(again.kind(), "ignored", "{order}: {again:?}");
        assert_eq!(store.versions(&u).await.expect("versions").len(), stored);
        assert_eq!(
            current_texts(store.list(&u).await.expect("list")),
            held,
            "{order}: the ending applied again"
        );
        // Before the ending, the dog and its age held.
        let summer = chrono::Utc.with_ymd_and_hms(2024, 7, 1, 0, 0, 0).unwrap();
        let then = current_texts(store.facts_as_of(&u, summer).await.expect("as of"));
        assert_eq!(
            then,
            [
                "dog Pepper is 4 years old",
                "has a dog named Pepper",
                "is 34 years old"
            ],
            "{order}: as of July"
        );
    }
}
