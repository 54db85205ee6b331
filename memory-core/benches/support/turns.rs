//! The measurements of `episodes` benches, the same on every backend: one user with 1,000
//! facts and 10,000 episodes across 100 dated conversations (see `life.rs`), seeded
//! through the public APIs, then
//!
//! - `episodes_index`: keeping one message as an episode, as `prepare` does for every
//!   user message (`Episode::from_message` + `EpisodeStore::add`), and `add` alone;
//! - `turn_recall`: one whole `Session::send` turn with recall on (log, episode, facts and
//!   episodes searched, block rendered, offline model, reply logged and kept as an
//!   episode, facts extracted and reconciled), over the usual mix of messages and over
//!   questions that name a period (the slow path: what was said in that period is read
//!   as well);
//! - `recall_parts`: pieces of that turn alone (fact search, episode search, both with
//!   the block rendered, one log append, one fact reinforced, one message made an
//!   episode), to see where its time goes.
//!
//! The episodes measured turns add are deleted every [`CLEAN_EVERY`] turns (outside the
//! timing), so every turn sees the 10,000 seeded episodes plus at most 200 of its own, as a user does, not a store that grows with criterion's iteration count.

#![allow(dead_code)] // each bench uses part of it

use std::borrow::Cow;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentmemory_core::episodes::{Episode, EpisodeQuery, EpisodeStore, RecallReason};
use agentmemory_core::facts::{FactCandidate, MemoryFact, UserMemoryStore};
use agentmemory_core::model::OfflineModel;
use agentmemory_core::recall::{recall, RecallRequest};
use agentmemory_core::session::Agent;
use agentmemory_core::{
    ChatModel, Container, ConversationEvent, ConversationStore, HeuristicCounter, Message,
    Remember, RememberSpec, Session, VectorStore,
};
use chrono::{DateTime, Utc};
use criterion::Criterion;
use tokio::runtime::Runtime;

use super::life;

pub const USER: &str = "alice";
pub const FACTS: usize = 1_000;
pub const EPISODES: usize = 10_000;
pub const CONVERSATIONS: usize = 100;
/// Measured turns (or indexed messages) between two clean-ups of what they added: a turn
/// adds two episodes, so the last two weeks hold 0 to 200 of the benchmark's own besides
/// the seeded ones, about the seeded density (10,000 in two years is ~190 a fortnight).
/// A question naming a recent period reads the messages said since (up to 400), so more
/// recent messages make it slower.
pub const CLEAN_EVERY: u64 = 100;

/// An assistant that injects 5 facts and recalls 3 episodes (the defaults), with the
/// offline model registered as `"offline"`.
pub struct Assistant;

impl Remember for Assistant {
    const SPEC: Option<RememberSpec> =
        Some(RememberSpec::new().store("user_memory").top_k(5).recall(3));
}

impl Agent for Assistant {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are a personal assistant.".into()
    }
    fn model(&self) -> &str {
        "offline"
    }
}

pub fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"))
}

/// The stores of one user's memory, as a session of the container sees them.
pub struct World {
    pub container: Container,
    pub facts: Arc<dyn UserMemoryStore>,
    pub vectors: Arc<dyn VectorStore>,
    pub episodes: Arc<dyn EpisodeStore>,
    /// Everything seeded was said before this.
    pub seeded_until: DateTime<Utc>,
}

impl World {
    /// Seeds the stores registered in `container` (a user-memory store `"user_memory"`,
    /// a vector store, a log, the model `"offline"`) through the public APIs: `records`
    /// with `import_records`, [`EPISODES`] episodes with `EpisodeStore::add` in batches of
    /// 1,000, into the episode store the container's sessions use.
    pub fn seeded(rt: &Runtime, container: Container, records: Vec<MemoryFact>) -> Self {
        let facts = container
            .resolve::<dyn UserMemoryStore>(Some("user_memory"))
            .unwrap_or_else(|e| panic!("{e}"));
        let vectors = container
            .resolve::<dyn VectorStore>(None)
            .unwrap_or_else(|e| panic!("{e}"));
        let episodes =
            agentmemory_core::episodes::resolve(&container).unwrap_or_else(|e| panic!("{e}"));
        let start = Instant::now();
        let history = life::history(USER, EPISODES, CONVERSATIONS, Utc::now());
        let made = start.elapsed();
        let n = records.len();
        rt.block_on(async {
            let written = facts
                .import_records(USER, records)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(written, n);
            for batch in history.chunks(1_000) {
                episodes
                    .add(USER, batch.to_vec())
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
            }
            assert_eq!(episodes.len(USER).await.unwrap_or(0), EPISODES);
        });
        eprintln!(
            "seeded {n} facts and {EPISODES} episodes in {CONVERSATIONS} conversations in \
             {:.2?} (making the episodes, times resolved: {made:.2?})",
            start.elapsed()
        );
        Self {
            container,
            facts,
            vectors,
            episodes,
            seeded_until: Utc::now(),
        }
    }

    /// Deletes the episodes said since seeding (those the benchmark added).
    pub fn drop_added(&self, rt: &Runtime) {
        rt.block_on(async {
            let added = self
                .episodes
                .list(USER, Some(self.seeded_until), None, usize::MAX)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            let ids: Vec<String> = added.into_iter().map(|e| e.id).collect();
            // Episodes live in namespace `episodes/{user}` of the vector store.
            self.vectors
                .delete(&format!("episodes/{USER}"), &ids)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        });
    }

    pub fn session(&self, rt: &Runtime) -> Session<Assistant> {
        rt.block_on(
            Session::builder(Assistant, &self.container)
                .user(USER)
                .max_tokens(4_000)
                .build(),
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }
}

/// Runs `messages` through a new session once, outside the timing, as `send` does
/// (prepare, the offline model, commit), and prints what the turns recalled and how
/// long their halves took: the benchmark is only worth its figure if recall finds things.
pub fn check_recall(rt: &Runtime, world: &World, messages: &[String], label: &str) {
    let mut session = world.session(rt);
    let model = OfflineModel::new();
    let (mut facts, mut episodes, mut blocks, mut by_time) = (0, 0, 0, 0);
    let (mut preparing, mut committing) = (Duration::ZERO, Duration::ZERO);
    for m in messages {
        let start = Instant::now();
        let turn = rt
            .block_on(session.prepare(Message::user(m.as_str())))
            .unwrap_or_else(|e| panic!("{e}"));
        preparing += start.elapsed();
        let completion = rt
            .block_on(model.complete(turn.request().clone()))
            .unwrap_or_else(|e| panic!("{e}"));
        let start = Instant::now();
        let reply = rt
            .block_on(session.commit(turn, completion))
            .unwrap_or_else(|e| panic!("{e}"));
        committing += start.elapsed();
        facts += reply.report.injected.len();
        episodes += reply.report.recalled.len();
        blocks += usize::from(reply.report.memory_block.is_some());
        by_time += reply
            .report
            .recalled
            .iter()
            .filter(|e| e.reason != RecallReason::Match)
            .count();
    }
    let n = messages.len() as f64;
    let n32 = messages.len() as u32;
    eprintln!(
        "{label}: over {} turns, {:.2} facts and {:.2} episodes recalled per turn \
         ({by_time} episodes for their time), a memory block in {:.0} % of turns; \
         prepare {:.1?} and commit {:.1?} a turn on average (first pass, one sample each)",
        messages.len(),
        facts as f64 / n,
        episodes as f64 / n,
        100.0 * blocks as f64 / n,
        preparing / n32,
        committing / n32,
    );
    world.drop_added(rt);
}

/// Where the next message comes from, and how much was added since the last clean-up.
#[derive(Default)]
pub struct Cursor {
    next: usize,
    since_clean: u64,
}

impl Cursor {
    /// Cleans up when due (untimed), then returns the next of `messages`.
    fn advance<'a>(&mut self, rt: &Runtime, world: &World, messages: &'a [String]) -> &'a str {
        if self.since_clean >= CLEAN_EVERY {
            world.drop_added(rt);
            self.since_clean = 0;
        }
        self.since_clean += 1;
        self.next += 1;
        messages[self.next % messages.len()].as_str()
    }
}

/// Times `iters` turns of `session` over `messages`.
pub fn timed_turns(
    rt: &Runtime,
    world: &World,
    session: &mut Session<Assistant>,
    messages: &[String],
    cursor: &mut Cursor,
    iters: u64,
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let text = cursor.advance(rt, world, messages);
        let start = Instant::now();
        let reply = rt.block_on(session.send(text));
        total += start.elapsed();
        black_box(reply.unwrap_or_else(|e| panic!("{e}")));
    }
    total
}

/// `episodes_index`: one message kept as an episode among the seeded 10,000.
pub fn index(c: &mut Criterion, rt: &Runtime, world: &World, backend: &str) {
    let mut rng = life::Rng::new(0x1DE7);
    let texts: Vec<String> = (0..512)
        .map(|i| {
            if i % 2 == 0 {
                life::user_message(&mut rng)
            } else {
                life::assistant_message(&mut rng)
            }
        })
        .collect();
    let mut group = c.benchmark_group(format!("episodes_index_{EPISODES}_held"));
    let mut cursor = Cursor::default();
    group.bench_function(format!("{backend}_message_to_episode_and_add"), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let message = Message::user(cursor.advance(rt, world, &texts));
                let start = Instant::now();
                let episode = Episode::from_message(USER, "conversation-new", &message);
                let added = rt.block_on(world.episodes.add(USER, vec![episode]));
                total += start.elapsed();
                added.unwrap_or_else(|e| panic!("{e}"));
            }
            total
        })
    });
    group.bench_function(format!("{backend}_add_one_episode"), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let message = Message::user(cursor.advance(rt, world, &texts));
                let episode = Episode::from_message(USER, "conversation-new", &message);
                let start = Instant::now();
                let added = rt.block_on(world.episodes.add(USER, vec![episode]));
                total += start.elapsed();
                added.unwrap_or_else(|e| panic!("{e}"));
            }
            total
        })
    });
    group.finish();
    world.drop_added(rt);
}

/// `turn_recall`: whole turns over the mixed messages and over questions naming a period.
pub fn turns(c: &mut Criterion, rt: &Runtime, world: &World, backend: &str) {
    let mixed = life::incoming(64);
    let timed = life::time_questions(32);
    check_recall(rt, world, &mixed, &format!("{backend}, mixed messages"));
    check_recall(
        rt,
        world,
        &timed,
        &format!("{backend}, questions naming a period"),
    );

    let mut group = c.benchmark_group(format!("turn_recall_{FACTS}_facts_{EPISODES}_episodes"));
    for (name, messages) in [("mixed", &mixed), ("time_questions", &timed)] {
        let mut session = world.session(rt);
        let mut cursor = Cursor::default();
        group.bench_function(format!("{backend}_{name}"), |b| {
            b.iter_custom(|iters| {
                timed_turns(rt, world, &mut session, messages, &mut cursor, iters)
            })
        });
        world.drop_added(rt);
    }
    group.finish();
}

/// `recall_parts`: the searches of a turn alone, over the same messages.
pub fn parts(c: &mut Criterion, rt: &Runtime, world: &World, backend: &str) {
    let all: Vec<String> = life::incoming(64)
        .into_iter()
        .chain(life::time_questions(32))
        .collect();
    let counter = HeuristicCounter::default();
    let mut group = c.benchmark_group(format!("recall_parts_{FACTS}_facts_{EPISODES}_episodes"));
    let mut n = 0usize;
    let mut next = || {
        n += 1;
        all[n % all.len()].as_str()
    };
    group.bench_function(format!("{backend}_facts_search_k5"), |b| {
        b.iter(|| {
            rt.block_on(world.facts.search(USER, next(), 5))
                .unwrap_or_else(|e| panic!("{e}"))
        })
    });
    group.bench_function(format!("{backend}_episodes_search_k3"), |b| {
        b.iter(|| {
            let query = EpisodeQuery::new(next(), 3).at(Utc::now());
            rt.block_on(world.episodes.search(USER, &query))
                .unwrap_or_else(|e| panic!("{e}"))
        })
    });
    group.bench_function(format!("{backend}_recall_facts_and_episodes"), |b| {
        b.iter(|| {
            let request = RecallRequest::new(USER, next()).at(Utc::now());
            rt.block_on(recall(
                world.facts.as_ref(),
                world.episodes.as_ref(),
                &request,
                &counter,
            ))
        })
    });
    let log = world
        .container
        .resolve::<dyn ConversationStore>(None)
        .unwrap_or_else(|e| panic!("{e}"));
    group.bench_function(format!("{backend}_log_append_one_message"), |b| {
        b.iter(|| {
            let event = ConversationEvent::Message {
                message: Message::user(next()),
            };
            rt.block_on(log.append("parts-log", vec![event]))
                .unwrap_or_else(|e| panic!("{e}"))
        })
    });
    let stated = [
        "likes hiking",
        "owns a bike",
        "has been to Porto",
        "is learning Spanish",
    ];
    let mut i = 0usize;
    group.bench_function(format!("{backend}_fact_upsert_reinforce"), |b| {
        b.iter(|| {
            i += 1;
            let candidate = FactCandidate::new(stated[i % stated.len()], 0.8);
            rt.block_on(world.facts.upsert(USER, candidate))
                .unwrap_or_else(|e| panic!("{e}"))
        })
    });
    group.bench_function("episode_from_message", |b| {
        b.iter(|| Episode::from_message(USER, "conversation-new", &Message::user(next())))
    });
    group.finish();
}
