//! Background extraction: after a `PUT` is stored and answered, the session's new
//! messages go through its [`Strategy`] into long-term memory.
//!
//! - **Which messages.** Those the client did not mark `discrete_memory_extracted: "t"`
//!   and the stored session does not hold marked: the server marks them when it hands
//!   them over, so a message is extracted once however often the session is sent again.
//! - **In order, per user.** Each user's jobs run one at a time, in the order the `PUT`s
//!   were stored, so that a later "I moved to Berlin" supersedes an earlier "I live in
//!   Paris" and not the reverse. Sessions without a `user_id` share one line.
//! - **Fair.** Different users' jobs run side by side, at most
//!   [`Extractor::concurrency`] at once across the server (`EXTRACTION_CONCURRENCY`,
//!   [`DEFAULT_EXTRACTION_CONCURRENCY`] by default): one user's slow model call or long
//!   backlog does not hold another user's extraction back. A job waiting behind its
//!   user's earlier jobs holds no run slot; the slots go to the users' next jobs in the
//!   order they became ready (the semaphore is first come, first served).
//! - **Never costs the write.** A failing model or store is logged; with a model, a failed
//!   extraction falls back to the rule extractor and a failed summary to the extractive
//!   summariser. [`Extractor::settle`] waits until every scheduled job is done (tests,
//!   graceful shutdown).
//! - **Bounded.** At most [`Extractor::queue_limit`] jobs are scheduled and not done. A
//!   `PUT` with messages to extract takes a place ([`Extractor::reserve`]) before its
//!   session is stored, waiting when every place is taken: a model slower than the traffic
//!   slows the writes down instead of holding every waiting session in memory. A request
//!   dropped while it waits has stored nothing, so no message is marked extracted
//!   without being extracted.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use chrono::Utc;
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

use agentmemory_core::episodes::stable_ulid;
use agentmemory_core::extract::{FactExtractor, LlmExtractor, RuleExtractor, Turn};
use agentmemory_core::facts::FactCandidate;
use agentmemory_core::model::ChatRequest;
use agentmemory_core::summarize::{ExtractiveSummarizer, LlmSummarizer, Summarizer};
use agentmemory_core::{MemoryError, Message};

use super::error::ApiError;
use super::long_term::LongTermMemory;
use super::settings::{GenerationModel, DEFAULT_EXTRACTION_CONCURRENCY, DEFAULT_EXTRACTION_QUEUE};
use super::strategy::Strategy;
use super::window;
use super::wire::{MemoryType, WireMemory, WireMessage};

/// The topic of summary memories.
pub const SUMMARY_TOPIC: &str = "summary";

/// One session's messages to extract.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub(crate) session_id: String,
    pub(crate) namespace: Option<String>,
    pub(crate) user_id: Option<String>,
    pub(crate) strategy: Strategy,
    /// The messages not extracted yet, oldest first.
    pub(crate) fresh: Vec<WireMessage>,
    /// The session's summary of folded messages, before this `PUT`.
    pub(crate) context: Option<String>,
    /// Every message of the session as sent (the summary strategy reads them all).
    pub(crate) all: Vec<WireMessage>,
}

/// The line of one user's jobs: the user's id (`None` for sessions without one).
type LineKey = Option<String>;

/// The last job of each user's line, with its number.
type Lines = Arc<Mutex<HashMap<LineKey, (u64, JoinHandle<()>)>>>;

/// Runs the extraction of stored sessions in the background, in order per user.
#[derive(Clone)]
pub struct Extractor {
    long_term: LongTermMemory,
    model: Option<GenerationModel>,
    /// The last job scheduled for each user with a job not done, and its number: the
    /// user's next job waits for it. A line leaves the map when its last job is done.
    lines: Lines,
    /// Numbers the jobs, so a finished job knows whether it is still its line's last.
    numbers: Arc<AtomicU64>,
    pending: Arc<watch::Sender<usize>>,
    /// One permit for each job that may be scheduled and not done.
    places: Arc<Semaphore>,
    limit: usize,
    /// One permit for each job that may run at once, across users.
    slots: Arc<Semaphore>,
    concurrency: usize,
}

/// Ends a job's line when the job is done (or panicked), unless a later job joined it.
struct LineEnd {
    lines: Lines,
    key: LineKey,
    number: u64,
}

impl Drop for LineEnd {
    fn drop(&mut self) {
        let mut lines = self.lines.lock();
        if lines
            .get(&self.key)
            .is_some_and(|(last, _)| *last == self.number)
        {
            lines.remove(&self.key);
        }
    }
}

/// A place in the extraction queue, taken by [`Extractor::reserve`] and held by the job
/// it is given to until that job is done.
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
    /// Extraction into `long_term`, with `model` when one is configured (see
    /// [`WorkingMemoryStore::extract_with`](super::working::WorkingMemoryStore::extract_with);
    /// [`MemoryService::with_settings`](super::MemoryService::with_settings) builds one).
    pub fn new(long_term: LongTermMemory, model: Option<GenerationModel>) -> Self {
        Self {
            long_term,
            model,
            lines: Arc::new(Mutex::new(HashMap::new())),
            numbers: Arc::new(AtomicU64::new(0)),
            pending: Arc::new(watch::channel(0).0),
            places: Arc::new(Semaphore::new(DEFAULT_EXTRACTION_QUEUE)),
            limit: DEFAULT_EXTRACTION_QUEUE,
            slots: Arc::new(Semaphore::new(DEFAULT_EXTRACTION_CONCURRENCY)),
            concurrency: DEFAULT_EXTRACTION_CONCURRENCY,
        }
    }

    /// This extractor running at most `concurrency` jobs at once across users (at least
    /// 1; [`DEFAULT_EXTRACTION_CONCURRENCY`] otherwise).
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        let concurrency = concurrency.max(1);
        self.slots = Arc::new(Semaphore::new(concurrency));
        self.concurrency = concurrency;
        self
    }

    /// How many jobs may run at once.
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

    /// Takes a place for one job, waiting while every place is taken.
    pub(crate) async fn reserve(&self) -> Place {
        if let Ok(place) = Arc::clone(&self.places).try_acquire_owned() {
            return Place(Some(place));
        }
        tracing::debug!(
            limit = self.limit,
            "the extraction queue is full; the write waits for a place"
        );
        // the semaphore is never closed; were it, the job would run unbounded
        Place(Arc::clone(&self.places).acquire_owned().await.ok())
    }

    /// Whether a generation model is configured.
    pub fn has_model(&self) -> bool {
        self.model.is_some()
    }

    /// Runs `job` in the background, after the jobs of its user scheduled before it and
    /// once a run slot is free; `place` is given back when it is done.
    pub(crate) fn schedule(&self, place: Place, job: Job) {
        let pending = Pending::new(&self.pending);
        let this = self.clone();
        let key = job.user_id.clone();
        let number = self.numbers.fetch_add(1, Ordering::Relaxed);
        let end = LineEnd {
            lines: Arc::clone(&self.lines),
            key: key.clone(),
            number,
        };
        // each job waits for the one of its user scheduled before it: the order of the
        // PUTs; the lock is held until the new job is the line's last, so a job that ends
        // meanwhile cannot remove the line under it
        let mut lines = self.lines.lock();
        let previous = lines.remove(&key).map(|(_, handle)| handle);
        let handle = tokio::spawn(async move {
            // dropped in reverse: the line ends, then the place and the pending count go
            let _pending = pending;
            let _place = place;
            let _end = end;
            if let Some(previous) = previous {
                // a job that panicked has been logged by the runtime; the line goes on
                let _ = previous.await;
            }
            // the semaphore is never closed; were it, the job would run unbounded
            let _slot = this.slots.acquire().await.ok();
            if let Err(error) = this.run(&job).await {
                tracing::warn!(%error, session = %job.session_id, "background extraction failed");
            }
        });
        lines.insert(key, (number, handle));
    }

    /// How many users have extraction jobs scheduled and not done.
    #[cfg(test)]
    pub(crate) fn lines(&self) -> usize {
        self.lines.lock().len()
    }

    /// Completes when no job is scheduled or running.
    pub async fn settle(&self) {
        let mut rx = self.pending.subscribe();
        let _ = rx.wait_for(|n| *n == 0).await;
    }

    async fn run(&self, job: &Job) -> Result<(), ApiError> {
        match &job.strategy {
            Strategy::Discrete => self.facts(job, false).await,
            Strategy::Preferences => self.facts(job, true).await,
            Strategy::Summary { max_words } => self.summary(job, *max_words).await,
            Strategy::Custom { prompt } => self.custom(job, prompt).await,
        }
    }

    /// Facts of the user's fresh messages (each with the assistant's reply that follows
    /// it, as context), reconciled in the user's fact store.
    async fn facts(&self, job: &Job, preferences_only: bool) -> Result<(), ApiError> {
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
                self.long_term.create_extracted(record, candidate).await?;
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
            let place = extractor.reserve().await;
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
