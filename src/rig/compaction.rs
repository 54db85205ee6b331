//! Compacting a rig conversation with agentmem's summariser, with no model call.
//!
//! rig-memory decides *where* a compaction cuts ([`CompactionPolicy::cut_summary`]) and
//! how the summary sits in the conversation ([`apply_summary`], undone by
//! [`undo_summary`]); rig's own summary is written by a model. [`SummaryCompactor`] writes
//! it with agentmem's [`ExtractiveSummarizer`] instead, the one a
//! [`Session`](agentmemory_core::session::Session) folds its old turns with: the messages
//! being replaced and the previous summary compete sentence by sentence, and the result
//! is rendered the way a session's summary is ("User: …" / "Assistant: …" lines, word
//! for word) within the session's summary budget
//! ([`SessionConfig::summary_tokens`], at most a quarter of the model's input limit).

use std::collections::BTreeSet;
use std::io;

use agentmemory_core::session::SessionConfig;
use agentmemory_core::summarize::ExtractiveSummarizer;
use agentmemory_core::tokens::{HeuristicCounter, TokenCounter};
use agentmemory_core::Message;
use rig_core::catalog::ModelSpec;
use rig_core::conversation::{Author, Conversation, Spliced};
use rig_memory::{
    apply_summary, summarized_prefix, summary_state, undo_summary, AsyncStore, CompactReason,
    CompactionPolicy, Files, MemoryStore, SessionError, Store, SummaryCut, SummaryState,
    Uncompacted, UndoError, BLOBS,
};

use super::convert::to_agentmem;

/// The summary put in when none of the replaced messages held anything worth keeping
/// (only chit-chat) and there was no summary before: rig puts no empty summary in.
pub const NOTHING_TO_KEEP: &str = "(The earlier messages held nothing to keep.)";

/// Compacts rig conversations with agentmem's extractive summariser, offline.
///
/// [`compact`](Self::compact) cuts where rig's [`CompactionPolicy`] says, summarises the
/// messages it replaces together with the previous summary
/// ([`summary_state`]`(conversation).summary`) within [`budget`](Self::budget) tokens,
/// and puts the summary in with rig's [`apply_summary`], so the compaction is recorded
/// as rig's own: a later compaction builds on it, and [`undo_summary`] (or
/// [`undo_compaction`] over an [`AsyncStore`] such as agentmem's
/// [`SessionStore`](super::SessionStore)) puts the replaced messages back once the
/// conversation was saved.
///
/// ```
/// use agentmemory::rig::SummaryCompactor;
/// use rig_core::catalog::ModelSpec;
/// use rig_core::conversation::Conversation;
/// use rig_core::message::Message;
/// use rig_core::providers::registry::ProviderId;
/// use rig_memory::{CompactReason, CompactionPolicy, summary_state};
///
/// let mut conversation = Conversation::new();
/// conversation.extend([
///     Message::user("Hi! My flight to Oslo leaves on 14 March at 07:40."),
///     Message::assistant("Noted: Oslo, 14 March, 07:40."),
///     Message::user("Thanks!"),
///     Message::assistant("You're welcome."),
/// ]);
/// // Keep nothing but the newest message as it is (rig's default keeps 20k tokens).
/// let policy = CompactionPolicy { keep_recent: 1, ..CompactionPolicy::default() };
/// let compactor = SummaryCompactor::new(policy).summary_tokens(200);
/// let spec = ModelSpec::new(ProviderId::catalog("openai").ok_or("vendor")?, "gpt-4o-mini")
///     .with_context_window(128_000);
///
/// let done = compactor
///     .compact(&mut conversation, &CompactReason::Threshold, &spec)
///     .ok_or("nothing to compact")?;
/// assert_eq!(done.summarized, 3);
/// let summary = summary_state(&conversation).summary;
/// assert!(summary.contains("14 March at 07:40"), "{summary}");
/// assert!(!summary.contains("Thanks!"), "{summary}");
/// assert_eq!(conversation.messages().len(), 2); // the summary and the newest reply
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct SummaryCompactor {
    policy: CompactionPolicy,
    summary_tokens: usize,
    summarizer: ExtractiveSummarizer,
}

/// What [`SummaryCompactor::compact`] did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Compaction {
    /// rig's splice: the summary's entry id (`changed[0]`) and the ids it replaced,
    /// earlier summaries included.
    pub spliced: Spliced,
    /// The state put in, which the next compaction builds on: the new summary and the
    /// policy's tracked tool arguments.
    pub state: SummaryState,
    /// How many messages were summarised for the first time (earlier summaries not
    /// counted).
    pub summarized: usize,
    /// The token budget the summary was written within.
    pub budget: usize,
    /// The summary's tokens, by agentmem's heuristic counter (four characters a token),
    /// the count the budget is kept by.
    pub tokens: usize,
}

impl SummaryCompactor {
    /// A compactor cutting by `policy`, with a session's summary budget
    /// ([`SessionConfig::summary_tokens`], 1,000 by default).
    pub fn new(policy: CompactionPolicy) -> Self {
        Self {
            policy,
            summary_tokens: SessionConfig::default().summary_tokens,
            summarizer: ExtractiveSummarizer::new(),
        }
    }

    /// Caps the summary at `tokens` (the session's `summary_tokens`).
    pub fn summary_tokens(mut self, tokens: usize) -> Self {
        self.summary_tokens = tokens;
        self
    }

    /// The policy that chooses the cut.
    pub fn policy(&self) -> &CompactionPolicy {
        &self.policy
    }

    /// The summary's token budget for a model of `spec`: the summary cap, and never more
    /// than a quarter of the model's input limit when it is known (a session's summary
    /// never takes more than a quarter of its room either).
    pub fn budget(&self, spec: &ModelSpec) -> usize {
        let quarter = spec.input_limit().map_or(usize::MAX, |limit| {
            usize::try_from(limit / 4).unwrap_or(usize::MAX)
        });
        self.summary_tokens.min(quarter)
    }

    /// The compaction of `conversation` for `reason` that [`compact`](Self::compact)
    /// would make, without changing the conversation: rig's cut (the first message kept,
    /// by id; `None` when it summarises every message) with the state holding the new
    /// summary. `None` when rig's policy would summarise nothing new.
    pub fn plan(
        &self,
        conversation: &Conversation,
        reason: &CompactReason,
        spec: &ModelSpec,
    ) -> Option<SummaryCut> {
        let previous = summary_state(conversation);
        let mut cut = self
            .policy
            .cut_summary(conversation, &previous, reason, spec)?;
        let messages = conversation.messages();
        let from = summarized_prefix(conversation);
        let upto = match cut.keep_from {
            Some(id) => conversation.index_of(id)?,
            None => messages.len(),
        };
        let replaced: Vec<Message> = messages
            .get(from.min(upto)..upto)
            .unwrap_or_default()
            .iter()
            .map(|message| to_agentmem(message))
            .collect();
        let earlier = Some(previous.summary.as_str()).filter(|s| s.trim() != NOTHING_TO_KEEP);
        let summary = self
            .summarizer
            .summarize_text(earlier, &replaced, self.budget(spec));
        cut.state.summary = if summary.trim().is_empty() {
            NOTHING_TO_KEEP.to_owned()
        } else {
            summary
        };
        Some(cut)
    }

    /// Compacts `conversation` for `reason`, for a model of `spec`: the older messages
    /// rig's policy cuts (earlier summaries included) become one summary entry, written
    /// by agentmem's summariser within [`budget`](Self::budget). `None`, changing
    /// nothing, when there is nothing new to summarise.
    ///
    /// Save the conversation afterwards (`rig_memory::save_async` to the
    /// [`SessionStore`](super::SessionStore)); an undo reads what was replaced from the
    /// saved log.
    pub fn compact(
        &self,
        conversation: &mut Conversation,
        reason: &CompactReason,
        spec: &ModelSpec,
    ) -> Option<Compaction> {
        let earlier_summaries = summarized_prefix(conversation);
        let cut = self.plan(conversation, reason, spec)?;
        let spliced = apply_summary(conversation, cut.keep_from, &cut.state)?;
        Some(Compaction {
            summarized: spliced.removed.len().saturating_sub(earlier_summaries),
            spliced,
            tokens: HeuristicCounter::default().count_text(&cut.state.summary),
            state: cut.state,
            budget: self.budget(spec),
        })
    }
}

/// rig's [`undo_summary`] for a conversation saved in an [`AsyncStore`], such as
/// agentmem's [`SessionStore`](super::SessionStore): the log `log` (and the image blobs
/// it names) is read once, and rig's undo runs on that copy, putting the messages the
/// newest compaction replaced back in its summary's place with their ids. Save the
/// conversation afterwards, as after any change.
///
/// # Errors
///
/// As [`undo_summary`]; a failed read as [`UndoError::Load`].
pub async fn undo_compaction<S: AsyncStore + ?Sized>(
    conversation: &mut Conversation,
    store: &S,
    log: &str,
    by: Author,
) -> Result<Uncompacted, UndoError> {
    let copy = MemoryStore::default();
    match store.read_log_async(log).await {
        Ok(bytes) => {
            for name in blob_names(&bytes) {
                let file = format!("{BLOBS}{name}");
                match store.read_file_async(&file).await {
                    Ok(blob) => copy.write_file(&file, &blob).map_err(load_error)?,
                    Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                    Err(error) => return Err(load_error(error)),
                }
            }
            copy.append_log(log, 0, &bytes)
                .map_err(|error| load_error(error.into()))?;
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(load_error(error)),
    }
    undo_summary(conversation, &copy as &dyn Store, log, by)
}

fn load_error(error: io::Error) -> UndoError {
    UndoError::Load(SessionError::from(error))
}

/// The blobs a session log names (`blob:<name>`, as rig saves an image).
fn blob_names(bytes: &[u8]) -> BTreeSet<String> {
    const BLOB: &[u8] = b"blob:";
    let name_byte = |byte: &u8| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-');
    let mut names = BTreeSet::new();
    let mut at = 0;
    while let Some(found) = bytes
        .get(at..)
        .and_then(|rest| rest.windows(BLOB.len()).position(|w| w == BLOB))
    {
        let start = at + found + BLOB.len();
        let rest = bytes.get(start..).unwrap_or_default();
        let len = rest.iter().take_while(|byte| name_byte(byte)).count();
        if let Some(name) = rest.get(..len).and_then(|n| std::str::from_utf8(n).ok()) {
            if !name.is_empty() {
                names.insert(name.to_owned());
            }
        }
        at = start + len;
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_names_are_read_from_the_log() {
        let log = br#"{"image":"blob:abc123.png"} x blob: {"b":"blob:d-e_f.jpg"}"#;
        let names: Vec<String> = blob_names(log).into_iter().collect();
        assert_eq!(names, ["abc123.png", "d-e_f.jpg"]);
    }
}
