//! Work behind a `PUT`: after a session is stored and answered, its new messages are
//! indexed as episodes (`message_index`) and go through its [`Strategy`] into long-term
//! memory.
//!
//! - **Which messages.** Those the client did not mark `discrete_memory_extracted: "t"`
//!   and the stored session does not hold marked: the server marks them when it hands
//!   them over, so a message is extracted once however often the session is sent again.
//!   Likewise for indexing, with `persisted_at`.
//! - **In order, per user.** Each user's jobs run one batch at a time, in the order the
//!   `PUT`s were stored, so that a later "I moved to Berlin" supersedes an earlier "I live
//!   in Paris" and not the reverse. Sessions without a `user_id` share one line.
//! - **Batched.** When a user's line runs, it takes every job of the user waiting then
//!   (at most [`MAX_BATCH`]): their episodes are one write per owner, and the facts found
//!   in all of them are reconciled and written as one
//!   [`upsert_many`](agentmemory_core::facts::UserMemoryStore::upsert_many) and one
//!   [`put_many`](agentmemory_core::kv::KvStore::put_many) of their index entries, instead
//!   of a write transaction per fact. The more work waits, the larger the batches: the
//!   cost of a write is shared by more `PUT`s exactly when the server is busiest.
//! - **Fair.** Different users' lines run side by side, at most
//!   [`Extractor::lines_at_once`] at once ([`DEFAULT_BACKGROUND_CONCURRENCY`]: the store
//!   writes, which mostly wait for the store, overlap), and at most
//!   [`Extractor::concurrency`] of them in a model call at once (`EXTRACTION_CONCURRENCY`,
//!   [`DEFAULT_EXTRACTION_CONCURRENCY`] by default; the offline rule extractor needs no
//!   slot): one user's slow model call or long backlog does not hold another user's
//!   extraction back. A line waiting for a slot holds none; the slots go in the order
//!   the lines asked (the semaphores are first come, first served).
//! - **Never costs the write.** A failing model or store is logged; with a model, a failed
//!   extraction falls back to the rule extractor and a failed summary to the extractive
//!   summariser. Episode writes, which are idempotent, are tried [`INDEX_ATTEMPTS`] times.
//!   [`Extractor::settle`] waits until every scheduled job is done (tests, graceful
//!   shutdown); [`Extractor::caught_up`] until one user's jobs scheduled so far are (the
//!   memory prompt and long-term search of a user read their own writes).
//! - **Bounded, and answers when full.** At most [`Extractor::queue_limit`] jobs are
//!   scheduled and not done. A `PUT` with work to schedule takes a place
//!   ([`Extractor::reserve`]) before its session is stored, waiting while every place is
//!   taken, at most [`Extractor::queue_wait`] (`EXTRACTION_QUEUE_WAIT_MS`): past it the
//!   `PUT` is refused with 503 and `Retry-After`, having stored nothing. A model slower than
//!   the traffic slows the writes down and then turns them away, instead of holding every
//!   waiting session in memory or holding requests forever. A request dropped while it
//!   waits has stored nothing either, so no message is marked extracted without being
//!   extracted.
//! - **What a crash loses.** The session a `PUT` acknowledged is stored before the answer.
//!   Its episodes and extracted facts are written after it: a process that dies in between
//!   loses that work (its messages are marked done in the stored session), as a failed
//!   model call does. Run the server with a graceful shutdown (it settles first).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};

use agentmemory_core::episodes::stable_ulid;
use agentmemory_core::extract::{FactExtractor, LlmExtractor, RuleExtractor, Turn};
use agentmemory_core::facts::FactCandidate;
use agentmemory_core::model::ChatRequest;
use agentmemory_core::summarize::{ExtractiveSummarizer, LlmSummarizer, Summarizer};
use agentmemory_core::{MemoryError, Message};

use super::error::ApiError;
use super::long_term::LongTermMemory;
use super::message_index::{IndexWork, MessageIndex};
use super::settings::{
    GenerationModel, DEFAULT_BACKGROUND_CONCURRENCY, DEFAULT_EXTRACTION_CONCURRENCY,
    DEFAULT_EXTRACTION_QUEUE, DEFAULT_EXTRACTION_QUEUE_WAIT,
};
use super::strategy::Strategy;
use super::window;
use super::wire::{MemoryType, WireMemory, WireMessage};

/// The topic of summary memories.
pub const SUMMARY_TOPIC: &str = "summary";

/// At most this many jobs of one user run as one batch.
pub const MAX_BATCH: usize = 64;

/// How many times a batch's episodes are written before the failure is logged.
pub const INDEX_ATTEMPTS: u32 = 3;

/// One `PUT`'s work: its messages to extract and its episodes to write.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub(crate) session_id: String,
    pub(crate) namespace: Option<String>,
    pub(crate) user_id: Option<String>,
    pub(crate) strategy: Strategy,
    /// The messages not extracted yet, oldest first (empty: nothing to extract).
    pub(crate) fresh: Vec<WireMessage>,
    /// The session's summary of folded messages, before this `PUT`.
    pub(crate) context: Option<String>,
    /// Every message of the session as sent (the summary strategy reads them all).
    pub(crate) all: Vec<WireMessage>,
    /// The episodes of the new messages, and where they go.
    pub(crate) index: Option<(MessageIndex, IndexWork)>,
}

/// The line of one user's jobs: the user's id (`None` for sessions without one).
type LineKey = Option<String>;

/// A job waiting in its line, with its place in the queue (given back as soon as the
/// job's own work is done, so a waiting `PUT` need not wait for the rest of the batch)
/// and its pending count (given back when the whole batch is written); both are given
/// back when it is dropped (done, failed or panicked).
struct Queued {
    number: u64,
    job: Job,
    place: Option<Place>,
    _pending: Pending,
}

/// One user's waiting jobs. A line is in the map while a task runs it; it leaves when it
/// has nothing left.
struct Line {
    queue: VecDeque<Queued>,
    /// The number of the last job scheduled in this line.
    last_scheduled: u64,
    /// The number of the last job of this line that is done.
    last_done: u64,
}

type Lines = Arc<Mutex<HashMap<LineKey, Line>>>;

/// Runs the work behind stored sessions in the background, in order per user.
#[derive(Clone)]
pub struct Extractor {
    long_term: LongTermMemory,
    model: Option<GenerationModel>,
    /// The users with a job not done, each with its waiting jobs.
    lines: Lines,
    /// Numbers the jobs, across lines, in the order they are scheduled.
    numbers: Arc<AtomicU64>,
    /// How many jobs are scheduled and not done; every change (and a line's end) wakes
    /// the waiters of [`settle`](Self::settle) and [`caught_up`](Self::caught_up).
    pending: Arc<watch::Sender<usize>>,
    /// One permit for each job that may be scheduled and not done.
    places: Arc<Semaphore>,
    limit: usize,
    /// How long a `PUT` waits for a place.
    wait: Duration,
    /// One permit for each job that may be in a model call at once.
    slots: Arc<Semaphore>,
    concurrency: usize,
    /// One permit for each line that may run at once.
    runners: Arc<Semaphore>,
    runners_limit: usize,
}

/// A place in the queue, taken by [`Extractor::reserve`] and held by the job it is given
/// to until that job is done.
#[derive(Debug)]
pub(crate) struct Place(#[allow(dead_code)] Option<OwnedSemaphorePermit>);

/// Counts a job as pending until it is dropped (done, failed or panicked).
struct Pending(Arc<watch::Sender<usize>>);

impl Pending {
    fn new(pending: &Arc<watch::Sender<usize>>) -> Self {
        pending.send_modify(|n| *n += 1);
        Self(Arc::clone(pending))
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Extractor {
    /// Background work into `long_term`, extracting with `model` when one is configured
    /// (see [`WorkingMemoryStore::extract_with`](super::working::WorkingMemoryStore::extract_with);
    /// [`MemoryService::with_settings`](super::MemoryService::with_settings) builds one).
    pub fn new(long_term: LongTermMemory, model: Option<GenerationModel>) -> Self {
        Self {
            long_term,
            model,
            lines: Arc::new(Mutex::new(HashMap::new())),
            numbers: Arc::new(AtomicU64::new(1)),
            pending: Arc::new(watch::channel(0).0),
            places: Arc::new(Semaphore::new(DEFAULT_EXTRACTION_QUEUE)),
            limit: DEFAULT_EXTRACTION_QUEUE,
            wait: DEFAULT_EXTRACTION_QUEUE_WAIT,
            slots: Arc::new(Semaphore::new(DEFAULT_EXTRACTION_CONCURRENCY)),
            concurrency: DEFAULT_EXTRACTION_CONCURRENCY,
            runners: Arc::new(Semaphore::new(DEFAULT_BACKGROUND_CONCURRENCY)),
            runners_limit: DEFAULT_BACKGROUND_CONCURRENCY,
        }
    }

    /// This extractor running at most `lines` users' lines at once (at least 1;
    /// [`DEFAULT_BACKGROUND_CONCURRENCY`] otherwise): how many batches write to the
    /// store side by side.
    pub fn lines_at_once(mut self, lines: usize) -> Self {
        let lines = lines.max(1);
        self.runners = Arc::new(Semaphore::new(lines));
        self.runners_limit = lines;
        self
    }

    /// How many lines may run at once.
    pub fn lines_limit(&self) -> usize {
        self.runners_limit
    }

    /// This extractor running at most `concurrency` jobs' model calls at once (at least
    /// 1; [`DEFAULT_EXTRACTION_CONCURRENCY`] otherwise).
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        let concurrency = concurrency.max(1);
        self.slots = Arc::new(Semaphore::new(concurrency));
        self.concurrency = concurrency;
        self
    }

    /// How many jobs may be in a model call at once.
    pub fn running_limit(&self) -> usize {
        self.concurrency
    }

    /// This extractor with room for at most `limit` jobs scheduled and not done (at
    /// least 1; [`DEFAULT_EXTRACTION_QUEUE`] otherwise).
    pub fn queue_limit(mut self, limit: usize) -> Self {
        let limit = limit.max(1);
        self.places = Arc::new(Semaphore::new(limit));
        self.limit = limit;
        self
    }

    /// How many jobs may be scheduled and not done.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// This extractor letting a `PUT` wait at most `wait` for a place in a full queue
    /// before it is refused (503); [`DEFAULT_EXTRACTION_QUEUE_WAIT`] otherwise.
    pub fn queue_wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// How long a `PUT` waits for a place in a full queue.
    pub fn wait(&self) -> Duration {
        self.wait
    }

    /// Takes a place for one job, waiting while every place is taken, at most
    /// [`wait`](Self::wait): then [`ApiError::Unavailable`].
    pub(crate) async fn reserve(&self) -> Result<Place, ApiError> {
        if let Ok(place) = Arc::clone(&self.places).try_acquire_owned() {
            return Ok(Place(Some(place)));
        }
        tracing::debug!(
            limit = self.limit,
            "the background queue is full; the write waits for a place"
        );
        match tokio::time::timeout(self.wait, Arc::clone(&self.places).acquire_owned()).await {
            // the semaphore is never closed; were it, the job would run unbounded
            Ok(place) => Ok(Place(place.ok())),
            Err(_) => {
                tracing::warn!(
                    limit = self.limit,
                    waited_ms = self.wait.as_millis() as u64,
                    "the background queue stayed full; a write is refused (503)"
                );
                Err(ApiError::Unavailable {
                    reason: format!(
                        "the server's background queue is full ({} sessions' work waiting); retry later",
                        self.limit
                    ),
                    retry_after_seconds: self.wait.as_secs().clamp(1, 60),
                })
            }
        }
    }

    /// Whether a generation model is configured.
    pub fn has_model(&self) -> bool {
        self.model.is_some()
    }

    /// Runs `job` in the background, after the jobs of its user scheduled before it and
    /// once a run slot is free; `place` is given back when it is done.
    pub(crate) fn schedule(&self, place: Place, job: Job) {
        // counted before the lines' lock is taken: waiters read the lines while the
        // count's lock is held, so the two are never taken in the other order
        let pending = Pending::new(&self.pending);
        let number = self.numbers.fetch_add(1, Ordering::Relaxed);
        let key = job.user_id.clone();
        let queued = Queued {
            number,
            job,
            place: Some(place),
            _pending: pending,
        };
        let start = {
            let mut lines = self.lines.lock();
            match lines.get_mut(&key) {
                Some(line) => {
                    line.queue.push_back(queued);
                    line.last_scheduled = number;
                    false
                }
                None => {
                    lines.insert(
                        key.clone(),
                        Line {
                            queue: VecDeque::from([queued]),
                            last_scheduled: number,
                            // every earlier job of the user is done: it had no line
                            last_done: number - 1,
                        },
                    );
                    true
                }
            }
        };
        if start {
            let this = self.clone();
            tokio::spawn(async move { this.run_line(key).await });
        }
    }

    /// Runs the line of `key` until it has nothing left: each turn takes a run slot and
    /// every job waiting (at most [`MAX_BATCH`]), and runs them as one batch.
    async fn run_line(self, key: LineKey) {
        loop {
            // the semaphore is never closed; were it, the line would run unbounded
            let slot = Arc::clone(&self.runners).acquire_owned().await.ok();
            let batch: Vec<Queued> = {
                let mut lines = self.lines.lock();
                let Some(line) = lines.get_mut(&key) else {
                    return;
                };
                if line.queue.is_empty() {
                    lines.remove(&key);
                    None
                } else {
                    let n = line.queue.len().min(MAX_BATCH);
                    Some(line.queue.drain(..n).collect())
                }
            }
            .unwrap_or_default();
            if batch.is_empty() {
                // the line ended: wake whoever waits for it (outside the lines' lock)
                self.pending.send_modify(|_| {});
                return;
            }
            let last = batch.last().map_or(0, |q| q.number);
            let this = self.clone();
            // its own task: a panic in one batch is logged by the runtime and the line
            // goes on; the batch's places and pending counts are given back either way
            let ran = tokio::spawn(async move {
                let _slot = slot;
                let mut batch = batch;
                this.run_batch(&mut batch).await;
                drop(batch);
            })
            .await;
            if let Err(error) = ran {
                tracing::error!(%error, "a background batch panicked; its work is lost");
            }
            if let Some(line) = self.lines.lock().get_mut(&key) {
                line.last_done = last;
            }
            self.pending.send_modify(|_| {});
        }
    }

    /// How many users have jobs scheduled and not done.
    #[cfg(test)]
    pub(crate) fn lines(&self) -> usize {
        self.lines.lock().len()
    }

    /// Completes when no job is scheduled or running.
    pub async fn settle(&self) {
        let mut rx = self.pending.subscribe();
        let _ = rx
            .wait_for(|n| *n == 0 && self.lines.lock().is_empty())
            .await;
    }

    /// Completes when every job of `user_id` scheduled before the call is done, or after
    /// `at_most`: whether they are done. Later jobs of the user are not waited for.
    pub async fn caught_up(&self, user_id: Option<&str>, at_most: Duration) -> bool {
        let key: LineKey = user_id.map(str::to_owned);
        let target = match self.lines.lock().get(&key) {
            Some(line) => line.last_scheduled,
            None => return true,
        };
        let mut rx = self.pending.subscribe();
        let done = tokio::time::timeout(
            at_most,
            rx.wait_for(|_| {
                self.lines
                    .lock()
                    .get(&key)
                    .is_none_or(|line| line.last_done >= target)
            }),
        )
        .await
        .map(|r| r.is_ok());
        matches!(done, Ok(true))
    }

    /// One batch of a user's jobs, in order: their episodes, then their memories.
    async fn run_batch(&self, batch: &mut [Queued]) {
        {
            let jobs: Vec<&Job> = batch.iter().map(|q| &q.job).collect();
            self.index(&jobs).await;
        }
        let mut facts: Vec<(WireMemory, FactCandidate)> = Vec::new();
        for queued in batch.iter_mut() {
            let job = &queued.job;
            if !job.fresh.is_empty() {
                // a model call takes one of the model's slots; the rule extractor none
                // (the semaphore is never closed; were it, the calls would run unbounded)
                let _slot = match &self.model {
                    Some(_) => Arc::clone(&self.slots).acquire_owned().await.ok(),
                    None => None,
                };
                let done = match &job.strategy {
                    Strategy::Discrete => self.facts(job, false, &mut facts).await,
                    Strategy::Preferences => self.facts(job, true, &mut facts).await,
                    Strategy::Summary { max_words } => self.summary(job, *max_words).await,
                    Strategy::Custom { prompt } => self.custom(job, prompt).await,
                };
                if let Err(error) = done {
                    tracing::warn!(%error, session = %job.session_id, "background extraction failed");
                }
            }
            // this job's model calls are done: its place goes to a waiting PUT (its
            // facts, at most a batch's, are written below)
            queued.place = None;
        }
        if !facts.is_empty() {
            let n = facts.len();
            if let Err(error) = self.long_term.create_extracted_many(facts).await {
                tracing::warn!(%error, facts = n, jobs = batch.len(), "storing the facts extracted in the background failed");
            }
        }
    }

    /// Writes the episodes of `jobs`: per episode store, one batch, tried
    /// [`INDEX_ATTEMPTS`] times (the writes are idempotent).
    async fn index(&self, jobs: &[&Job]) {
        let mut groups: Vec<(&MessageIndex, Vec<IndexWork>)> = Vec::new();
        for (index, work) in jobs.iter().filter_map(|j| j.index.as_ref()) {
            match groups.iter_mut().find(|(i, _)| i.same_as(index)) {
                Some((_, works)) => works.push(work.clone()),
                None => groups.push((index, vec![work.clone()])),
            }
        }
        for (index, works) in groups {
            let mut attempt = 1;
            loop {
                match index.write(&works).await {
                    Ok(()) => break,
                    Err(error) if attempt < INDEX_ATTEMPTS => {
                        tracing::debug!(%error, attempt, "writing episodes failed; trying again");
                        tokio::time::sleep(Duration::from_millis(100 << (2 * attempt))).await;
                        attempt += 1;
                    }
                    Err(error) => {
                        let sessions: Vec<&str> = works.iter().map(|w| w.session_id()).collect();
                        tracing::error!(%error, ?sessions, "indexing the sessions' messages as episodes failed; they are not recalled as episodes");
                        break;
                    }
                }
            }
        }
    }

    /// Facts of the user's fresh messages (each with the assistant's reply that follows
    /// it, as context), added to `out` with their records, to be reconciled with the
    /// batch's other facts in one write.
    async fn facts(
        &self,
        job: &Job,
        preferences_only: bool,
        out: &mut Vec<(WireMemory, FactCandidate)>,
    ) -> Result<(), ApiError> {
        let rules = RuleExtractor::new();
        let llm = self
            .model
            .as_ref()
            .map(|m| LlmExtractor::new(Arc::clone(&m.model)).with_model_name(m.name.clone()));
        for (i, message) in job.fresh.iter().enumerate() {
            if message.role != "user" {
                continue;
            }
            let user = core_message(message);
            let reply = job
                .fresh
                .get(i + 1)
                .filter(|m| m.role == "assistant")
                .map(core_message);
            let turn = Turn {
                user: &user,
                assistant: reply.as_ref(),
            };
            let candidates = match &llm {
                Some(llm) => match llm.extract(turn).await {
                    Ok(found) => found,
                    Err(error) => {
                        tracing::warn!(%error, session = %job.session_id, "the model's extraction failed; the rule extractor reads the message instead");
                        rules.extract(turn).await?
                    }
                },
                None => rules.extract(turn).await?,
            };
            for mut candidate in candidates {
                if preferences_only && !is_preference(&candidate) {
                    continue;
                }
                candidate.observed_at = Some(message.created_at);
                let mut record = self.record(job, statement(&candidate), MemoryType::Semantic);
                record.topics = (!candidate.topics.is_empty()).then(|| candidate.topics.clone());
                record.entities =
                    (!candidate.entities.is_empty()).then(|| candidate.entities.clone());
                record.extracted_from = Some(vec![message.id.clone()]);
                out.push((record, candidate));
            }
        }
        Ok(())
    }

    /// One summary memory of the session, rewritten: its id is derived from the session.
    async fn summary(&self, job: &Job, max_words: usize) -> Result<(), ApiError> {
        let messages: Vec<Message> = job.all.iter().map(core_message).collect();
        // about four tokens for three words
        let budget = (max_words.saturating_mul(4) / 3).max(16);
        let summary = match &self.model {
            Some(m) => {
                LlmSummarizer::new(Arc::clone(&m.model))
                    .with_model_name(m.name.clone())
                    .summarize(job.context.as_deref(), &messages, budget)
                    .await?
            }
            None => {
                ExtractiveSummarizer::new()
                    .summarize(job.context.as_deref(), &messages, budget)
                    .await?
            }
        };
        if summary.trim().is_empty() {
            return Ok(());
        }
        let mut record = self.record(job, summary, MemoryType::Episodic);
        record.id = summary_id(
            job.namespace.as_deref(),
            job.user_id.as_deref(),
            &job.session_id,
        );
        record.topics = Some(vec![SUMMARY_TOPIC.to_owned()]);
        record.extracted_from = Some(job.all.iter().map(|m| m.id.clone()).collect());
        self.long_term.create(vec![record]).await?;
        Ok(())
    }

    /// The memories the model finds with the client's prompt.
    async fn custom(&self, job: &Job, prompt: &str) -> Result<(), ApiError> {
        let Some(model) = &self.model else {
            // refused when the session was stored; a model cannot go away since
            return Ok(());
        };
        let transcript = job
            .fresh
            .iter()
            .map(|m| format!("{}: {}", m.role, m.content))
            .collect::<Vec<_>>()
            .join("\n");
        let prompt = prompt
            .replace("{message}", &transcript)
            .replace("{current_datetime}", &Utc::now().to_rfc3339());
        let request = ChatRequest::new(
            model.name.clone(),
            "",
            vec![Arc::new(Message::user(prompt))],
        )
        .with_temperature(0.0);
        let completion = model.model.complete(request).await?;
        let found = parse_memories(&completion.message.text())?;
        let mut records = Vec::with_capacity(found.len());
        for memory in found {
            let kind = match memory.kind.as_deref() {
                Some("episodic") => MemoryType::Episodic,
                _ => MemoryType::Semantic,
            };
            let mut record = self.record(job, memory.text, kind);
            record.topics = memory.topics.filter(|t| !t.is_empty());
            record.entities = memory.entities.filter(|e| !e.is_empty());
            record.event_date = memory
                .event_date
                .as_deref()
                .and_then(|d| chrono::DateTime::parse_from_rfc3339(d).ok())
                .map(|d| d.with_timezone(&Utc));
            record.extracted_from = Some(job.fresh.iter().map(|m| m.id.clone()).collect());
            records.push(record);
        }
        if !records.is_empty() {
            self.long_term.create(records).await?;
        }
        Ok(())
    }

    fn record(&self, job: &Job, text: String, kind: MemoryType) -> WireMemory {
        let now = Utc::now();
        WireMemory {
            id: ulid::Ulid::new().to_string(),
            text,
            session_id: Some(job.session_id.clone()),
            user_id: job.user_id.clone(),
            namespace: job.namespace.clone(),
            last_accessed: now,
            created_at: now,
            updated_at: now,
            topics: None,
            entities: None,
            memory_hash: None,
            discrete_memory_extracted: "t".to_owned(),
            memory_type: kind,
            persisted_at: None,
            extracted_from: None,
            event_date: None,
        }
    }
}

/// The id of the summary memory of a session: the same for every `PUT` of it.
pub fn summary_id(namespace: Option<&str>, user_id: Option<&str>, session_id: &str) -> String {
    stable_ulid(
        chrono::DateTime::<Utc>::UNIX_EPOCH,
        &[
            b"summary\x1f",
            namespace.unwrap_or("").as_bytes(),
            b"\x1f",
            user_id.unwrap_or("").as_bytes(),
            b"\x1f",
            session_id.as_bytes(),
        ],
    )
    .to_string()
}

fn core_message(message: &WireMessage) -> Message {
    Message::new(window::role(&message.role), message.content.as_str()).at(message.created_at)
}

/// Whether a fact states a preference: a like or dislike, a favourite, a diet.
fn is_preference(candidate: &FactCandidate) -> bool {
    candidate.subject.is_none()
        && candidate
            .attribute
            .as_deref()
            .is_some_and(|a| a == "likes" || a == "diet" || a.starts_with("favourite "))
}

/// The fact as the reference server words it: "User likes jazz", "User's favourite food
/// is sushi".
fn statement(candidate: &FactCandidate) -> String {
    let text = candidate.text.trim();
    match &candidate.subject {
        Some(subject) => format!("User's {subject}: {text}"),
        None if text.starts_with("favourite ") => format!("User's {text}"),
        None => format!("User {text}"),
    }
}

#[derive(Debug, Deserialize)]
struct Found {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    text: String,
    #[serde(default)]
    topics: Option<Vec<String>>,
    #[serde(default)]
    entities: Option<Vec<String>>,
    #[serde(default)]
    event_date: Option<String>,
}

#[derive(Debug, Deserialize)]
struct FoundList {
    memories: Vec<Value>,
}

/// The memories of a model's `{"memories": [...]}` answer (in a ```` ```json ```` fence or
/// not); entries without text are skipped.
fn parse_memories(answer: &str) -> Result<Vec<Found>, MemoryError> {
    let trimmed = answer.trim();
    let json = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.trim_end().strip_suffix("```"))
        .unwrap_or(trimmed)
        .trim();
    let list: FoundList = serde_json::from_str(json).map_err(|e| {
        MemoryError::Extraction(format!(
            "the model's answer to the custom prompt is not JSON of the form {{\"memories\": [...]}}: {e}"
        ))
    })?;
    Ok(list
        .memories
        .into_iter()
        .filter_map(|m| serde_json::from_value::<Found>(m).ok())
        .filter(|m| !m.text.trim().is_empty())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(text: &str, attribute: &str) -> FactCandidate {
        let mut c = FactCandidate::new(text, 0.9);
        c.attribute = Some(attribute.to_owned());
        c
    }

    #[test]
    fn facts_read_as_statements_about_the_user() {
        assert_eq!(
            statement(&candidate("lives in Berlin", "location")),
            "User lives in Berlin"
        );
        assert_eq!(
            statement(&candidate("favourite food is sushi", "favourite food")),
            "User's favourite food is sushi"
        );
        assert!(is_preference(&candidate("likes jazz", "likes")));
        assert!(is_preference(&candidate(
            "favourite food is sushi",
            "favourite food"
        )));
        assert!(!is_preference(&candidate("lives in Berlin", "location")));
        assert!(!is_preference(&candidate("works at Acme", "employer")));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_users_line_ends_with_its_last_job() {
        let container = crate::stores::StoreUrl::Memory
            .open_with_embedder(None)
            .await
            .unwrap();
        let service = crate::server::MemoryService::from_container(&container).unwrap();
        let extractor = Extractor::new(service.long_term.clone(), None).concurrency(2);
        for (i, user) in ["ada", "bob", "ada", "cy", "ada"].iter().enumerate() {
            let place = extractor.reserve().await.unwrap();
            let message: WireMessage = serde_json::from_value(serde_json::json!({
                "id": format!("m{i}"),
                "role": "user",
                "content": format!("I live in town {i}"),
                "created_at": "2026-01-01T00:00:00Z",
            }))
            .unwrap();
            extractor.schedule(
                place,
                Job {
                    session_id: format!("s{i}"),
                    namespace: None,
                    user_id: Some((*user).to_owned()),
                    strategy: Strategy::Discrete,
                    fresh: vec![message.clone()],
                    context: None,
                    all: vec![message],
                    index: None,
                },
            );
        }
        extractor.settle().await;
        assert_eq!(extractor.lines(), 0, "no line is left behind");
    }

    #[test]
    fn summary_ids_are_per_session_and_stable() {
        let a = summary_id(Some("ns"), Some("alice"), "s1");
        assert_eq!(a, summary_id(Some("ns"), Some("alice"), "s1"));
        assert_ne!(a, summary_id(Some("ns"), Some("bob"), "s1"));
        assert_ne!(a, summary_id(None, Some("alice"), "s1"));
        assert!(ulid::Ulid::from_string(&a).is_ok());
    }

    #[test]
    fn custom_answers_parse_fenced_or_not() {
        let found = parse_memories(
            "```json\n{\"memories\": [{\"type\": \"episodic\", \"text\": \"User flew to Oslo\", \"event_date\": \"2026-01-02T00:00:00Z\"}, {\"text\": \" \"}, 7]}\n```",
        )
        .unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind.as_deref(), Some("episodic"));
        assert!(parse_memories("no JSON here").is_err());
    }
}
