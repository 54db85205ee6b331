//! Changes of state said the way people type in chat (lowercase names, the "I" left out,
//! a home named by the place it is in, a duration after the place), end to end through
//! the `RuleExtractor` and an `InMemoryUserMemoryStore`: after the second statement the
//! new state is current and the old one is not. Each case failed before the chat-style
//! readings of 2026-12-07; the sentences are written for this test, not taken from an
//! evaluation set.

use agentmemory_core::extract::RuleExtractor;
use agentmemory_core::facts::{FactChange, InMemoryUserMemoryStore, UserMemoryStore};
use chrono::{Duration, TimeZone, Utc};

/// Ingests `said` in order (a day apart) and returns the user's current positive facts.
async fn current_after(said: &[&str]) -> Vec<String> {
    current_after_in(said, 0..said.len()).await
}

/// As [`current_after`], the statements applied in `order` (each keeps its own time, a
/// month after the one before it in `said`).
async fn current_after_in(said: &[&str], order: impl Iterator<Item = usize>) -> Vec<String> {
    let store = InMemoryUserMemoryStore::new();
    let start = Utc.with_ymd_and_hms(2025, 1, 5, 10, 0, 0).unwrap();
    for i in order {
        let text = said[i];
        for mut candidate in RuleExtractor::new().extract_text(text) {
            candidate.observed_at = Some(start + Duration::days(i as i64 * 30));
            let change = store.upsert("u", candidate).await.unwrap();
            assert!(!matches!(change, FactChange::Ignored { .. }) || i > 0);
        }
    }
    store
        .list("u")
        .await
        .unwrap()
        .into_iter()
        .filter(|f| f.is_current() && f.polarity == agentmemory_core::facts::Polarity::Positive)
        .map(|f| f.text.to_lowercase())
        .collect()
}

fn has(facts: &[String], word: &str) -> bool {
    facts.iter().any(|f| f.split(' ').any(|w| w == word))
}

#[track_caller]
fn assert_change(facts: &[String], new: &str, old: &str) {
    assert!(has(facts, new), "`{new}` not current in {facts:?}");
    assert!(!has(facts, old), "`{old}` still current in {facts:?}");
}

#[tokio::test]
async fn a_sentence_that_starts_with_its_verb_is_the_speakers() {
    let facts = current_after(&[
        "been living in dundee since uni, love it here",
        "relocated to perth over the summer, the commute is so much better",
    ])
    .await;
    assert_change(&facts, "perth", "dundee");

    let facts = current_after(&[
        "i work as a postman, early starts every day",
        "retrained as a plumber last year and never looked back",
    ])
    .await;
    assert_change(&facts, "plumber", "postman");
}

#[tokio::test]
async fn a_place_after_a_home_or_with_a_lasting_time_is_where_the_user_lives() {
    let facts = current_after(&[
        "we rent a tiny flat in stirling above a chippy",
        "we bought a cottage near kendal and move in next week",
    ])
    .await;
    assert_change(&facts, "kendal", "stirling");

    let facts = current_after(&[
        "i've been in galway for about two years",
        "we're in limerick now, closer to my mum",
    ])
    .await;
    assert_change(&facts, "limerick", "galway");

    // A place the user is in for an afternoon is no home.
    let facts = current_after(&[
        "i live in bath",
        "i'm in hospital today with a broken wrist",
    ])
    .await;
    assert!(has(&facts, "bath"), "{facts:?}");
}

#[tokio::test]
async fn a_duration_after_a_place_is_not_part_of_it() {
    let facts = current_after(&["been living in truro four months now"]).await;
    assert!(facts.iter().any(|f| f == "lives in truro"), "{facts:?}");
}

#[tokio::test]
async fn a_lowercase_name_after_a_pet_or_relation_is_a_name() {
    let facts = current_after(&[
        "my rabbit clover is getting on a bit now",
        "clover died in her sleep last night",
    ])
    .await;
    assert!(!has(&facts, "clover"), "{facts:?}");

    let facts = current_after(&["my boyfriend tariq and i are off to rome"]).await;
    assert!(facts.iter().any(|f| f.contains("tariq")), "{facts:?}");
}

#[tokio::test]
async fn an_ending_that_names_part_of_a_fact_closes_it() {
    let facts = current_after(&[
        "i drive a 2016 vauxhall corsa",
        "sold the corsa and bought an old land rover",
    ])
    .await;
    assert!(!has(&facts, "corsa"), "{facts:?}");
    assert!(has(&facts, "rover"), "{facts:?}");

    let first = "our guinea pig pepper squeaks every time the fridge opens";
    let facts = current_after(&[first]).await;
    assert!(
        facts.iter().any(|f| f.contains("named pepper")),
        "{facts:?}"
    );
    let facts = current_after(&[first, "we had to have pepper put down on friday"]).await;
    assert!(
        !facts.iter().any(|f| f.contains("named pepper")),
        "{facts:?}"
    );
}

#[tokio::test]
async fn diets_said_in_passing_or_as_a_turn() {
    let facts = current_after(&[
        "as a pescatarian i never know what to order",
        "gone fully plant-based since the documentary",
    ])
    .await;
    assert_change(&facts, "plant-based", "pescatarian");

    let facts = current_after(&[
        "i'm doing paleo at the moment",
        "gave up on paleo, too expensive",
    ])
    .await;
    assert!(!has(&facts, "paleo"), "{facts:?}");
}

#[tokio::test]
async fn studies_begin_and_end() {
    let facts = current_after(&[
        "i'm doing a phd in soil science at aberystwyth",
        "i dropped out of the phd in the end",
    ])
    .await;
    assert!(
        !facts.iter().any(|f| f.contains("doing a phd")),
        "{facts:?}"
    );
    assert!(facts.iter().any(|f| f.contains("dropped out")), "{facts:?}");

    let facts = current_after(&[
        "i'm in my second year of physiotherapy at keele",
        "i graduated in july!",
    ])
    .await;
    assert!(!has(&facts, "physiotherapy"), "{facts:?}");

    let facts = current_after(&["i stopped going to salsa, my knees hated it"]).await;
    assert!(
        !facts.iter().any(|f| f.contains("stopped going")),
        "{facts:?}"
    );
}

#[tokio::test]
async fn relationship_statuses_with_more_after_them() {
    let facts = current_after(&[
        "i'm single and not looking, thanks",
        "i've started seeing someone from work",
    ])
    .await;
    assert!(has(&facts, "seeing"), "{facts:?}");
    assert!(!has(&facts, "single"), "{facts:?}");
}

#[tokio::test]
async fn chat_that_only_looks_like_a_change_closes_nothing() {
    for junk in [
        "moved the dentist to friday, can you remind me",
        "left my charger at the office again",
        "sold out in minutes, typical",
        "stopped at the garage for milk on the way home",
    ] {
        let facts = current_after(&["i live in whitby", junk]).await;
        assert!(has(&facts, "whitby"), "`{junk}` closed the home: {facts:?}");
    }
    // A joke marker takes its own clause, not the statement before it.
    let facts = current_after(&["we moved to hull in march, the removal van got lost lol"]).await;
    assert!(has(&facts, "hull"), "{facts:?}");
}

/// The user's current facts after `said` (text, day) is ingested in the order given.
async fn current_in_order(said: &[(&str, i64)]) -> Vec<String> {
    let store = InMemoryUserMemoryStore::new();
    let start = Utc.with_ymd_and_hms(2024, 2, 1, 9, 0, 0).unwrap();
    for (i, (text, day)) in said.iter().enumerate() {
        for mut candidate in RuleExtractor::new().extract_text(text) {
            candidate.observed_at = Some(start + Duration::days(*day));
            candidate.source.message_id = Some(format!("m{i}"));
            store.upsert("u", candidate).await.unwrap();
        }
    }
    let mut facts: Vec<String> = store
        .list("u")
        .await
        .unwrap()
        .into_iter()
        .filter(|f| f.is_current())
        .map(|f| f.text.to_lowercase())
        .collect();
    facts.sort();
    facts
}

#[tokio::test]
async fn a_switch_takes_the_place_of_what_it_names_in_either_import_order() {
    let before = ("I'm in my second year of a chemistry degree at Bath.", 0);
    let after = (
        "I switched from chemistry to pharmacology over the summer.",
        200,
    );
    let in_order = current_in_order(&[before, after]).await;
    let reversed = current_in_order(&[after, before]).await;
    assert!(
        !in_order.iter().any(|f| f.contains("chemistry degree")),
        "{in_order:?}"
    );
    assert_eq!(in_order, reversed);
}

#[tokio::test]
async fn a_habit_has_one_state_at_a_time_whatever_words_say_it() {
    let facts = current_after(&[
        "i vape pretty much all day tbh",
        "not had a single vape in five weeks, proud of myself",
    ])
    .await;
    assert!(
        facts.iter().any(|f| f.starts_with("does not smoke")),
        "{facts:?}"
    );
    assert!(!facts.iter().any(|f| f.starts_with("smokes")), "{facts:?}");

    let facts = current_after(&[
        "I haven't touched alcohol since 2019.",
        "started having a cold cider after work on fridays",
    ])
    .await;
    assert!(
        facts.iter().any(|f| f.starts_with("drinks alcohol")),
        "{facts:?}"
    );
    assert!(
        !facts.iter().any(|f| f.starts_with("does not drink")),
        "{facts:?}"
    );

    // Someone else's habit is not the user's.
    let facts = current_after(&["i drink two cappuccinos a day", "my wife gave up coffee"]).await;
    assert!(
        facts.iter().any(|f| f.starts_with("drinks coffee")),
        "{facts:?}"
    );
}

#[tokio::test]
async fn an_age_said_in_passing_replaces_the_last_one() {
    let facts = current_after(&[
        "as a 38 year old i should know better than to stay up this late",
        "39 today!! the kids made me breakfast in bed",
    ])
    .await;
    assert!(facts.iter().any(|f| f == "is 39 years old"), "{facts:?}");
    assert!(!facts.iter().any(|f| f == "is 38 years old"), "{facts:?}");
    // A number before "today" that is not the speaker's age stays out.
    let facts = current_after(&[
        "as a 52-year-old I'm new to running",
        "200 today, a new record",
    ])
    .await;
    assert!(facts.iter().any(|f| f == "is 52 years old"), "{facts:?}");
}

#[tokio::test]
async fn a_pet_put_to_sleep_is_no_longer_had() {
    for first in [
        "our cat Juniper turned 15 this spring",
        "my dog Pepper hates the postman",
    ] {
        let facts = current_after(&[first]).await;
        assert!(facts.iter().any(|f| f.starts_with("has a")), "{facts:?}");
    }
    let facts = current_after(&[
        "our cat Juniper turned 15 this spring",
        "we decided to put Juniper to sleep on monday, it was time",
    ])
    .await;
    assert!(
        !facts.iter().any(|f| f.starts_with("has a cat")),
        "{facts:?}"
    );
    let facts = current_after(&[
        "my dog Pepper hates the postman",
        "we had to put Pepper down after the stroke",
    ])
    .await;
    assert!(
        !facts.iter().any(|f| f.starts_with("has a dog")),
        "{facts:?}"
    );
    // An obligation, not an ending.
    let facts = current_after(&[
        "I have a dog named Pepper",
        "I have to put Pepper down for his nap now",
    ])
    .await;
    assert!(
        facts.iter().any(|f| f.starts_with("has a dog")),
        "{facts:?}"
    );
}

/// A change of state closes every fact its object holds: once the pet died, or the
/// relationship ended, the facts *about* the pet or the partner are not current either,
/// whichever statement is applied first. Written for this test (2026-12-07).
#[tokio::test]
async fn facts_about_what_ended_end_with_it_in_either_order() {
    for (said, gone, kept) in [
        (
            [
                "our cat pudding is 14 now and sleeps about 20 hours a day",
                "pudding passed away in her sleep on tuesday, I keep expecting her at the door",
            ],
            "pudding",
            None,
        ),
        (
            [
                "my boyfriend idris is obsessed with bouldering and drags me along",
                "idris and i broke up last month, honestly it's a relief",
            ],
            "idris",
            None,
        ),
        (
            // Junk: a phone dying ends nothing of the dog's.
            [
                "my dog Bramble is 6 and still acts like a puppy",
                "ugh my phone died halfway through the call",
            ],
            "",
            Some("bramble"),
        ),
    ] {
        // What the ending says of the thing itself ("pudding passed away") stays.
        let ending = current_after(&said[1..]).await;
        for order in [vec![0, 1], vec![1, 0]] {
            let facts = current_after_in(&said, order.clone().into_iter()).await;
            if !gone.is_empty() {
                assert!(
                    !facts
                        .iter()
                        .any(|f| f.contains(gone) && !ending.contains(f)),
                    "{order:?}: a fact about `{gone}` still current in {facts:?}"
                );
            }
            if let Some(kept) = kept {
                assert!(
                    facts.iter().any(|f| f.contains(kept)),
                    "{order:?}: `{kept}` lost in {facts:?}"
                );
            }
        }
    }
}

/// After an ending, a clause of the same sentence that says what holds now ("it's X now",
/// "X is my thing now", "doing X instead") is the new state, and takes the place of what
/// ended in either import order. Written for this test (2026-12-07).
#[tokio::test]
async fn what_took_the_place_of_an_ending_is_the_new_state() {
    for (said, new, old) in [
        (
            [
                "i play badminton at the leisure centre twice a week",
                "packed in badminton when my shoulder went, it's mostly bouldering now",
            ],
            "bouldering",
            "badminton",
        ),
        (
            [
                "i do salsa classes on wednesdays, my feet hate me",
                "stopped the salsa classes in the spring, crochet is my thing now",
            ],
            "crochet",
            "salsa",
        ),
        (
            [
                "i'm doing a diploma in graphic design at the local college",
                "dropped out of the design diploma, doing an apprenticeship at a print shop instead",
            ],
            "apprenticeship",
            "graphic",
        ),
        (
            [
                "i'm on lisinopril for my blood pressure, one a day",
                "the gp switched me over to losartan because of the cough",
            ],
            "losartan",
            "lisinopril",
        ),
    ] {
        // What the ending says itself ("packed in badminton") stays.
        let ending = current_after(&said[1..]).await;
        for order in [vec![0, 1], vec![1, 0]] {
            let facts = current_after_in(&said, order.clone().into_iter()).await;
            assert!(has(&facts, new), "{order:?}: `{new}` not current in {facts:?}");
            assert!(
                !facts.iter().any(|f| f.contains(old) && !ending.contains(f)),
                "{order:?}: `{old}` still current in {facts:?}"
            );
        }
    }
}

#[tokio::test]
async fn a_thing_whose_own_ending_follows_it_is_no_longer_held() {
    // Each first statement is read as a fact; the second says the thing itself ended.
    for (first, second, old) in [
        (
            "i play the clarinet in a wind band on mondays",
            "the clarinet era is over, sold it to a teacher",
            "clarinet",
        ),
        (
            "i have tennis elbow from all the painting",
            "the tennis elbow has finally cleared up",
            "elbow",
        ),
        (
            "i play in a brass band",
            "the brass band lot played their last gig in june",
            "brass",
        ),
        (
            "i've had psoriasis on my elbows for years",
            "my psoriasis's cleared up since the new cream",
            "psoriasis",
        ),
    ] {
        let facts = current_after(&[first, second]).await;
        assert!(
            !has(&facts, old),
            "`{old}` still current after {second:?}: {facts:?}"
        );
    }
    // A thing of nobody's, or a person, ends nothing the user holds.
    for (first, second, kept) in [
        (
            "i play the clarinet in a wind band on mondays",
            "the meeting is over so i'm heading home",
            "clarinet",
        ),
        (
            "i have a brother named callum",
            "my brother went away for the weekend",
            "callum",
        ),
        // Someone else's thing ended, not the user's.
        (
            "i play in a brass band",
            "my cousin's brass band split up over the summer",
            "brass",
        ),
        (
            "i have psoriasis on my knees",
            "my dad's psoriasis has cleared up at last",
            "psoriasis",
        ),
        (
            "i play the banjo badly but happily",
            "my brother's banjo went to a collector",
            "banjo",
        ),
    ] {
        let facts = current_after(&[first, second]).await;
        assert!(
            has(&facts, kept),
            "`{kept}` closed by {second:?}: {facts:?}"
        );
    }
}

#[tokio::test]
async fn a_lowercase_name_before_a_past_tense_is_a_name() {
    let facts = current_after(&[
        "single for ages and loving it",
        "my boyfriend teodor dragged me to a pottery class on sunday",
    ])
    .await;
    assert_change(&facts, "teodor", "single");
}
