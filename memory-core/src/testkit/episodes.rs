//! Conformance tests for the `episodes` store trait.
//!
//! Every check uses fresh, randomly named users, so a persistent backend can run the
//! suite repeatedly against the same database. Assertions look at ids, order and
//! membership, never at exact scores.

use chrono::{DateTime, Duration, TimeZone, Utc};

use crate::episodes::{Episode, EpisodeQuery, EpisodeStore, RecallReason, Retention};
use crate::message::Message;

/// Runs every check of this module.
pub async fn run_all(store: &dyn EpisodeStore) {
    check_add_list_len(store).await;
    check_user_isolation(store).await;
    check_time_order(store).await;
    check_search_by_words(store).await;
    check_exclusion_and_conversation(store).await;
    check_search_by_time(store).await;
    check_context(store).await;
    check_retention(store).await;
    check_forget(store).await;
}

/// A fresh user id containing `label`.
fn user(label: &str) -> String {
    format!("testkit-ep-{label}-{}", ulid::Ulid::new())
}

fn day(y: i32, m: u32, d: u32, h: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, h, 0, 0)
        .single()
        .expect("a valid test date")
}

fn said(user_id: &str, conversation: &str, text: &str, at: DateTime<Utc>) -> Episode {
    Episode::from_message(user_id, conversation, &Message::user(text).at(at))
}

fn replied(user_id: &str, conversation: &str, text: &str, at: DateTime<Utc>) -> Episode {
    Episode::from_message(user_id, conversation, &Message::assistant(text).at(at))
}

/// What is added comes back whole; adding it again is a no-op; `len` counts.
pub async fn check_add_list_len(store: &dyn EpisodeStore) {
    let u = user("add");
    assert_eq!(store.len(&u).await.expect("len"), 0, "a new user has none");
    let a = said(
        &u,
        "c1",
        "I adopted a rescue greyhound",
        day(2025, 3, 2, 10),
    );
    let b = replied(
        &u,
        "c1",
        "Congratulations on the new dog!",
        day(2025, 3, 2, 11),
    );
    store
        .add(&u, vec![a.clone(), b.clone()])
        .await
        .expect("add two");
    store.add(&u, vec![a.clone()]).await.expect("add again");
    assert_eq!(store.len(&u).await.expect("len"), 2, "re-adding is a no-op");
    let all = store.list(&u, None, None, 10).await.expect("list");
    assert_eq!(all, vec![a, b], "listed whole, oldest first, roles kept");
    assert!(
        store.add("", vec![]).await.is_err(),
        "an empty user id is refused"
    );
}

/// One user never sees another's episodes.
pub async fn check_user_isolation(store: &dyn EpisodeStore) {
    let (u1, u2) = (user("iso1"), user("iso2"));
    let t = day(2025, 4, 1, 9);
    store
        .add(
            &u1,
            vec![said(&u1, "c", "my sister lives in Valparaiso", t)],
        )
        .await
        .expect("add u1");
    store
        .add(&u2, vec![said(&u2, "c", "I collect vinyl records", t)])
        .await
        .expect("add u2");
    let found = store
        .search(&u2, &EpisodeQuery::new("Valparaiso sister", 5).at(t))
        .await
        .expect("search");
    assert!(found.is_empty(), "u2 must not find u1's episode: {found:?}");
    assert_eq!(
        store.list(&u2, None, None, 10).await.expect("list").len(),
        1
    );
    assert_eq!(store.forget(&u2).await.expect("forget"), 1);
    assert_eq!(
        store.len(&u1).await.expect("len"),
        1,
        "forgetting u2 keeps u1"
    );
}

/// Listing is in the order things were said, whatever the order they were added in, and
/// bounds and limits apply.
pub async fn check_time_order(store: &dyn EpisodeStore) {
    let u = user("order");
    let late = said(
        &u,
        "c2",
        "we finally painted the hallway",
        day(2025, 6, 9, 8),
    );
    let early = said(
        &u,
        "c1",
        "thinking about painting the hallway",
        day(2025, 1, 5, 8),
    );
    let mid = said(&u, "c1", "bought paint samples", day(2025, 3, 1, 8));
    store
        .add(&u, vec![late.clone(), early.clone()])
        .await
        .expect("add");
    store.add(&u, vec![mid.clone()]).await.expect("add");
    let all = store.list(&u, None, None, 10).await.expect("list");
    assert_eq!(all, vec![early.clone(), mid.clone(), late.clone()]);
    let spring = store
        .list(&u, Some(day(2025, 2, 1, 0)), Some(day(2025, 6, 9, 8)), 10)
        .await
        .expect("list range");
    assert_eq!(spring, vec![mid], "from is inclusive, to exclusive");
    let first = store.list(&u, None, None, 1).await.expect("list limit");
    assert_eq!(first, vec![early]);
}

/// Search finds episodes by their words across conversations, best first, and returns
/// nothing for a query that matches nothing.
pub async fn check_search_by_words(store: &dyn EpisodeStore) {
    let u = user("words");
    let t = day(2025, 5, 10, 12);
    store
        .add(
            &u,
            vec![
                said(&u, "c1", "I started volunteering at the animal shelter", t),
                said(
                    &u,
                    "c2",
                    "my knee hurts after the marathon",
                    t + Duration::days(3),
                ),
                said(
                    &u,
                    "c3",
                    "the weather was grey all week",
                    t + Duration::days(9),
                ),
            ],
        )
        .await
        .expect("add");
    let at = t + Duration::days(30);
    let found = store
        .search(
            &u,
            &EpisodeQuery::new("animal shelter volunteering", 2).at(at),
        )
        .await
        .expect("search");
    assert!(!found.is_empty(), "a matching episode is found");
    assert!(found[0].episode.text.contains("shelter"), "{found:?}");
    assert_eq!(found[0].episode.conversation_id, "c1");
    assert!(found[0].relevance > 0.0);
    assert!(found.len() <= 2, "k is respected");
    assert!(
        found.windows(2).all(|w| w[0].score >= w[1].score),
        "best first"
    );
    let none = store
        .search(&u, &EpisodeQuery::new("xylophone quantum", 3).at(at))
        .await
        .expect("search nothing");
    assert!(none.is_empty(), "nothing of relevance zero: {none:?}");
    let zero = store
        .search(&u, &EpisodeQuery::new("marathon", 0).at(at))
        .await
        .expect("k = 0");
    assert!(zero.is_empty());
}

/// Excluded messages never come back; a conversation filter keeps to it.
pub async fn check_exclusion_and_conversation(store: &dyn EpisodeStore) {
    let u = user("exclude");
    let t = day(2025, 7, 1, 12);
    let a = said(&u, "c1", "my daughter plays the cello", t);
    let b = said(
        &u,
        "c2",
        "the cello recital went well",
        t + Duration::days(2),
    );
    store
        .add(&u, vec![a.clone(), b.clone()])
        .await
        .expect("add");
    let found = store
        .search(
            &u,
            &EpisodeQuery::new("cello", 5)
                .at(t + Duration::days(5))
                .excluding([b.message_id.clone()]),
        )
        .await
        .expect("search");
    assert_eq!(
        found.iter().map(|f| &f.episode.id).collect::<Vec<_>>(),
        vec![&a.id]
    );
    let found = store
        .search(
            &u,
            &EpisodeQuery::new("cello", 5)
                .at(t + Duration::days(5))
                .in_conversation("c2"),
        )
        .await
        .expect("search in c2");
    assert_eq!(
        found.iter().map(|f| &f.episode.id).collect::<Vec<_>>(),
        vec![&b.id]
    );
}

/// A question that names a period ranks what happened then first, also when its words
/// match nothing ("what did I do last weekend?").
pub async fn check_search_by_time(store: &dyn EpisodeStore) {
    let u = user("time");
    // Sunday 2025-03-16: "yesterday" is Saturday the 15th.
    let weekend = said(
        &u,
        "c1",
        "Yesterday I went kayaking with Priya",
        day(2025, 3, 16, 20),
    );
    let before = said(&u, "c0", "I went kayaking in the bay", day(2025, 2, 2, 9));
    let after = said(&u, "c2", "work was busy", day(2025, 3, 19, 9));
    store
        .add(&u, vec![before.clone(), weekend.clone(), after])
        .await
        .expect("add");
    // Asked on Wednesday 2025-03-19: last weekend = 15–16 March.
    let at = day(2025, 3, 19, 18);
    let found = store
        .search(
            &u,
            &EpisodeQuery::new("what did I do last weekend?", 3).at(at),
        )
        .await
        .expect("search by time");
    assert!(!found.is_empty(), "the weekend's episode is found by time");
    assert_eq!(found[0].episode.id, weekend.id, "{found:?}");
    assert!(matches!(
        found[0].reason,
        RecallReason::Time | RecallReason::MatchAndTime
    ));
    let found = store
        .search(&u, &EpisodeQuery::new("kayaking last weekend", 3).at(at))
        .await
        .expect("search by words and time");
    assert_eq!(
        found[0].episode.id, weekend.id,
        "the period breaks the tie of words: {found:?}"
    );
    assert_eq!(found[0].reason, RecallReason::MatchAndTime);
    assert!(found.iter().any(|f| f.episode.id == before.id));
}

/// Retention drops the oldest first, by count and by age.
pub async fn check_retention(store: &dyn EpisodeStore) {
    let u = user("retain");
    let base = day(2025, 1, 1, 0);
    let all: Vec<Episode> = (0..6)
        .map(|i| {
            said(
                &u,
                "c",
                &format!("note number {i}"),
                base + Duration::days(i * 10),
            )
        })
        .collect();
    store.add(&u, all.clone()).await.expect("add");
    let now = base + Duration::days(60);
    assert_eq!(
        store
            .retain(&u, Retention::all(), now)
            .await
            .expect("keep all"),
        0
    );
    assert_eq!(
        store
            .retain(&u, Retention::last(4), now)
            .await
            .expect("keep 4"),
        2
    );
    let left = store.list(&u, None, None, 10).await.expect("list");
    assert_eq!(left, all[2..].to_vec(), "the oldest went first");
    let dropped = store
        .retain(
            &u,
            Retention::all().max_age(std::time::Duration::from_secs(25 * 86_400)),
            now,
        )
        .await
        .expect("max age");
    assert_eq!(dropped, 2, "said 40 and 30 days before now");
    let left = store.list(&u, None, None, 10).await.expect("list");
    assert_eq!(left, all[4..].to_vec());
}

/// Forgetting a user deletes every episode of theirs.
pub async fn check_forget(store: &dyn EpisodeStore) {
    let u = user("forget");
    let t = day(2025, 8, 8, 8);
    store
        .add(
            &u,
            vec![
                said(&u, "c1", "my bike was stolen", t),
                said(&u, "c2", "got a new bike", t + Duration::days(1)),
            ],
        )
        .await
        .expect("add");
    assert_eq!(store.forget(&u).await.expect("forget"), 2);
    assert_eq!(store.len(&u).await.expect("len"), 0);
    let found = store
        .search(&u, &EpisodeQuery::new("bike", 5).at(t + Duration::days(3)))
        .await
        .expect("search after forget");
    assert!(found.is_empty());
    assert_eq!(store.forget(&u).await.expect("forget twice"), 0);
}

/// An episode is found by the words of the message it answers, and comes back with its
/// own text and that context apart.
pub async fn check_context(store: &dyn EpisodeStore) {
    let u = user("context");
    let t = day(2025, 9, 2, 18);
    let answer = said(&u, "c1", "A huge rainbow trout!", t).answering("What did your son catch?");
    store.add(&u, vec![answer.clone()]).await.expect("add");
    let found = store
        .search(
            &u,
            &EpisodeQuery::new("what did my son catch", 3).at(t + Duration::days(9)),
        )
        .await
        .expect("search");
    assert_eq!(found.len(), 1, "found by its context: {found:?}");
    assert_eq!(found[0].episode, answer, "text and context read back apart");
    assert_eq!(found[0].episode.text, "A huge rainbow trout!");
}
