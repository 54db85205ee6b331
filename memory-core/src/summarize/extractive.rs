//! [`ExtractiveSummarizer`]: an offline summary made of the conversation's most
//! informative sentences, kept word for word.

use std::borrow::Cow;

use async_trait::async_trait;

use crate::error::Result;
use crate::message::{Content, Message, Role};
use crate::summarize::Summarizer;
use crate::tokens::{HeuristicCounter, TokenCounter};

/// Keeps the sentences that carry names, numbers, dates, decisions and stated
/// preferences, within a token budget (pure chit-chat such as "thanks!" is never kept), in their original order, each line prefixed by
/// who said it ("User: ...", "Assistant: ...").
///
/// The previous summary is split the same way and its sentences compete on equal terms
/// with the new ones, so key facts survive repeated summarisation. Deterministic, needs
/// no model; tokens are counted with [`HeuristicCounter`] (four characters a token), and
/// the result never exceeds `max_tokens` by that count.
///
/// ```
/// use agentmemory_core::summarize::{ExtractiveSummarizer, Summarizer};
/// use agentmemory_core::Message;
///
/// # tokio_test_block(async {
/// let messages = [
///     Message::user("Hi there! I'm allergic to peanuts. How are you?"),
///     Message::assistant("Great, thanks. Noted: no peanuts."),
/// ];
/// let summary = ExtractiveSummarizer::new().summarize(None, &messages, 12).await.unwrap();
/// assert_eq!(summary, "User: I'm allergic to peanuts.");
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtractiveSummarizer {
    counter: HeuristicCounter,
}

impl ExtractiveSummarizer {
    /// An extractive summarizer.
    pub fn new() -> Self {
        Self::default()
    }

    /// The summary of `previous` and `messages` within `max_tokens` (see the type docs).
    pub fn summarize_text(
        &self,
        previous: Option<&str>,
        messages: &[Message],
        max_tokens: usize,
    ) -> String {
        let previous = previous.map(str::trim).filter(|p| !p.is_empty());
        let mut units = Vec::new();
        let mut group = 0;
        if let Some(previous) = previous {
            for line in previous.lines() {
                let (prefix, body) = split_prefix(line);
                push_units(&mut units, group, prefix, body, Role::Assistant);
                group += 1;
            }
        }
        let new_units = units.len();
        let texts: Vec<Cow<'_, str>> = messages.iter().map(message_text).collect();
        for (message, text) in messages.iter().zip(&texts) {
            let prefix = Some(role_label(message.role));
            push_units(&mut units, group, prefix, text, message.role);
            group += 1;
        }
        let no_new_content = units.len() == new_units;
        if no_new_content {
            if let Some(previous) = previous {
                if self.counter.count_text(previous) <= max_tokens {
                    return previous.to_owned();
                }
            }
        }
        self.select(&units, max_tokens)
    }

    /// The best units that fit `max_tokens`, rendered in their original order.
    ///
    /// Chosen greedily by maximal marginal relevance: each step takes the sentence with
    /// the best `λ·salience − (1 − λ)·redundancy` (redundancy = its highest word overlap
    /// with a sentence already kept), so twelve copies of one sentence cost the slot of
    /// one, and a sentence that repeats a kept one (word-set Jaccard ≥
    /// [`NEAR_DUPLICATE`]) is never kept.
    fn select(&self, units: &[Unit], max_tokens: usize) -> String {
        let max_chars = max_tokens.saturating_mul(4);
        // Pure chit-chat ("thanks!", "ok") scores below zero and is never kept.
        let mut alive: Vec<usize> = (0..units.len())
            .filter(|&i| units[i].score >= 0.0)
            .collect();
        let signatures: Vec<Vec<u64>> = units.iter().map(|u| signature(u.text)).collect();
        // Routine: a sentence said again and again ("meeting with Bob at 3pm again")
        // tells less each time, so each near-repeat elsewhere in the input lowers its
        // salience, while a fact stated once keeps all of it.
        let salience: Vec<f32> = (0..units.len())
            .map(|i| {
                let (a, n) = (&signatures[i], signatures[i].len());
                let repeats = (0..units.len())
                    .filter(|&j| {
                        let m = signatures[j].len();
                        // Jaccard ≥ 1/2 needs the smaller set at least half the larger.
                        j != i && 2 * n.min(m) >= n.max(m) && jaccard(a, &signatures[j]) >= REPEATED
                    })
                    .take(3)
                    .count();
                units[i].score - REPEAT_PENALTY * repeats as f32
            })
            .collect();
        let best_first = alive
            .iter()
            .copied()
            .max_by(|&a, &b| salience[a].total_cmp(&salience[b]).then(b.cmp(&a)));
        let top = best_first.map_or(1.0, |i| salience[i]).max(f32::EPSILON);
        let mut redundancy = vec![0.0f32; units.len()];

        let mut chosen = vec![false; units.len()];
        let mut group_used: Vec<bool> = Vec::new();
        let (mut chars, mut lines) = (0usize, 0usize);
        while !alive.is_empty() {
            let (k, _) = alive
                .iter()
                .enumerate()
                .map(|(k, &i)| {
                    let mmr = MMR_LAMBDA * salience[i] / top - (1.0 - MMR_LAMBDA) * redundancy[i];
                    (k, mmr)
                })
                .fold((0usize, f32::NEG_INFINITY), |best, cur| {
                    if cur.1 > best.1 {
                        cur
                    } else {
                        best
                    }
                });
            let i = alive.remove(k);
            let unit = &units[i];
            if group_used.len() <= unit.group {
                group_used.resize(unit.group + 1, false);
            }
            let cost = if group_used[unit.group] {
                unit.chars + 1
            } else {
                unit.prefix_chars() + unit.chars + usize::from(lines > 0)
            };
            if chars + cost > max_chars {
                continue;
            }
            chars += cost;
            chosen[i] = true;
            if !group_used[unit.group] {
                group_used[unit.group] = true;
                lines += 1;
            }
            alive.retain(|&j| {
                let sim = jaccard(&signatures[i], &signatures[j]);
                redundancy[j] = redundancy[j].max(sim);
                sim < NEAR_DUPLICATE
            });
        }
        let summary = render(units, &chosen);
        match best_first {
            // Nothing fits whole: the best sentence, cut to the budget.
            Some(best) if summary.is_empty() => truncated(&units[best], max_chars),
            _ => summary,
        }
    }
}

/// Weight of salience against novelty in the selection (maximal marginal relevance).
const MMR_LAMBDA: f32 = 0.7;

/// Word-set overlap (Jaccard) at which a sentence repeats one already kept.
pub const NEAR_DUPLICATE: f32 = 0.8;

/// Word-set overlap at which two sentences of the input say the same thing again.
const REPEATED: f32 = 0.5;

/// Salience lost per repeat of a sentence elsewhere in the input (at most three).
const REPEAT_PENALTY: f32 = 1.0;

/// The sentence's words (lowercased, punctuation trimmed) as sorted hashes.
///
/// The hash is FNV-1a over the lowercased characters: only equality within one summary
/// matters here, and SipHash per character cost more than the rest of the selection.
fn signature(text: &str) -> Vec<u64> {
    let mut out: Vec<u64> = text
        .split_whitespace()
        .map(bare_word)
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            let mut eat = |c: char| {
                h ^= u64::from(u32::from(c));
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            };
            for c in w.chars() {
                if c.is_ascii() {
                    eat(c.to_ascii_lowercase());
                } else {
                    c.to_lowercase().for_each(&mut eat);
                }
            }
            h
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// |a ∩ b| / |a ∪ b| of two sorted, deduplicated sets; 1.0 for two empty sets.
fn jaccard(a: &[u64], b: &[u64]) -> f32 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (mut i, mut j, mut both) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                both += 1;
                i += 1;
                j += 1;
            }
        }
    }
    both as f32 / (a.len() + b.len() - both) as f32
}

#[async_trait]
impl Summarizer for ExtractiveSummarizer {
    async fn summarize(
        &self,
        previous: Option<&str>,
        messages: &[Message],
        max_tokens: usize,
    ) -> Result<String> {
        Ok(self.summarize_text(previous, messages, max_tokens))
    }
}

/// One sentence competing for a place in the summary (borrowed from the input).
#[derive(Debug, Clone)]
struct Unit<'a> {
    /// The line it renders on (a message, or a line of the previous summary).
    group: usize,
    /// "User", "Assistant", ... (`None` for an unprefixed previous-summary line).
    prefix: Option<&'static str>,
    text: &'a str,
    chars: usize,
    score: f32,
}

impl Unit<'_> {
    /// Characters of "User: " (0 without a prefix).
    fn prefix_chars(&self) -> usize {
        self.prefix.map_or(0, |p| p.len() + 2)
    }
}

fn push_units<'a>(
    units: &mut Vec<Unit<'a>>,
    group: usize,
    prefix: Option<&'static str>,
    body: &'a str,
    role: Role,
) {
    let role = match prefix {
        Some("User") => Role::User,
        _ => role,
    };
    for sentence in sentences(body) {
        units.push(Unit {
            group,
            prefix,
            chars: sentence.chars().count(),
            score: score(sentence, role),
            text: sentence,
        });
    }
}

fn render(units: &[Unit], chosen: &[bool]) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut last_group = None;
    for (unit, _) in units.iter().zip(chosen).filter(|(_, c)| **c) {
        match lines.last_mut() {
            Some(line) if last_group == Some(unit.group) => {
                line.push(' ');
                line.push_str(unit.text);
            }
            _ => {
                let line = match unit.prefix {
                    Some(p) => format!("{p}: {}", unit.text),
                    None => unit.text.to_owned(),
                };
                lines.push(line);
            }
        }
        last_group = Some(unit.group);
    }
    lines.join("\n")
}

fn truncated(unit: &Unit, max_chars: usize) -> String {
    let room = max_chars.saturating_sub(unit.prefix_chars());
    if room < 2 {
        return String::new();
    }
    let cut: String = unit.text.chars().take(room - 1).collect();
    match unit.prefix {
        Some(p) => format!("{p}: {}…", cut.trim_end()),
        None => format!("{}…", cut.trim_end()),
    }
}

fn role_label(role: Role) -> &'static str {
    match role {
        Role::System => "System",
        Role::User => "User",
        Role::Assistant => "Assistant",
        Role::Tool => "Tool",
    }
}

/// A message's text, borrowed when it is plain text.
fn message_text(message: &Message) -> Cow<'_, str> {
    match &message.content {
        Content::Text(text) => Cow::Borrowed(text),
        _ => Cow::Owned(message.text()),
    }
}

/// "User: text" → (Some("User"), "text"); lines of a summary this type wrote.
fn split_prefix(line: &str) -> (Option<&'static str>, &str) {
    for label in ["User", "Assistant", "System", "Tool"] {
        if let Some(rest) = line.strip_prefix(label).and_then(|r| r.strip_prefix(": ")) {
            return (Some(label), rest);
        }
    }
    (None, line)
}

/// Sentences of `text` as written, each with its terminators (the one splitter,
/// [`crate::text::sentence`]).
fn sentences(text: &str) -> Vec<&str> {
    crate::text::sentence::sentences(text)
        .into_iter()
        .map(|s| s.full)
        .collect()
}

/// Month and weekday names (and their abbreviations), and relative days.
fn is_month_or_day(lower: &str) -> bool {
    matches!(
        lower,
        "january"
            | "february"
            | "march"
            | "april"
            | "may"
            | "june"
            | "july"
            | "august"
            | "september"
            | "october"
            | "november"
            | "december"
            | "jan"
            | "feb"
            | "mar"
            | "apr"
            | "jun"
            | "jul"
            | "aug"
            | "sep"
            | "sept"
            | "oct"
            | "nov"
            | "dec"
            | "monday"
            | "tuesday"
            | "wednesday"
            | "thursday"
            | "friday"
            | "saturday"
            | "sunday"
            | "today"
            | "tomorrow"
            | "tonight"
            | "yesterday"
            | "weekend"
    )
}

/// Words that mark a decision or a plan.
fn is_decision_word(lower: &str) -> bool {
    matches!(
        lower,
        "decided"
            | "decide"
            | "decision"
            | "will"
            | "agreed"
            | "agree"
            | "let's"
            | "plan"
            | "planned"
            | "plans"
            | "going"
            | "deadline"
            | "scheduled"
            | "booked"
            | "confirmed"
            | "must"
            | "need"
            | "should"
            | "chose"
            | "chosen"
            | "settled"
            | "committed"
            | "promise"
            | "remind"
    )
}

/// Whether the word `w`, preceded by `p1` and `p2`, completes a stated preference or a
/// personal fact ("i like…", "i'm vegan", "my name", "can't stand", "allergic"…).
/// Verbs match by prefix ("i liked", "i lives"), other words exactly; ASCII case ignored.
fn states_preference(p2: &str, p1: &str, w: &str) -> bool {
    let is = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
    let starts = |word: &str, stem: &str| {
        word.len() >= stem.len()
            && word.is_char_boundary(stem.len())
            && word[..stem.len()].eq_ignore_ascii_case(stem)
    };
    const STEMS: [&str; 4] = ["allergic", "favourite", "favorite", "intolerant"];
    const VERBS: [&str; 8] = [
        "like", "love", "prefer", "hate", "enjoy", "dislike", "live", "work",
    ];
    const STATES: [&str; 3] = ["vegetarian", "vegan", "from"];
    STEMS.iter().any(|s| starts(w, s))
        || (is(p1, "i") && VERBS.iter().any(|v| starts(w, v)))
        || (is(p1, "i'm") && STATES.iter().any(|x| is(w, x)))
        || (is(p2, "i") && is(p1, "am") && STATES.iter().any(|x| is(w, x)))
        || (is(p1, "my") && is(w, "name"))
        || (is(p1, "can't") && is(w, "stand"))
        || (is(p2, "i") && is(p1, "don't") && (starts(w, "like") || is(w, "eat")))
        || (is(p2, "i") && (is(p1, "can't") || is(p1, "cannot")) && is(w, "eat"))
        || (is(p2, "do") && is(p1, "not") && starts(w, "like"))
}

/// Whether a clause of the sentence opens by describing the user: "I'm …", "I am …",
/// "My … ", "I have …", "I've …", "I live/work/was born …", "I can't/don't eat …".
/// Clauses start at the sentence start, after `,` `;` `:` `—` and after "and", "but",
/// "so"; openers with no content ("also", "btw", "hey", "honestly"…) are skipped, so
/// "Also I can't eat peanuts, I'm seriously allergic" describes the user.
fn describes_self(sentence: &str) -> bool {
    let mut at_clause_start = true;
    let mut words = sentence.split_whitespace().peekable();
    while let Some(raw) = words.next() {
        let ends_clause = raw.ends_with([',', ';', ':']) || matches!(raw, "-" | "–" | "—");
        if at_clause_start {
            let w = trim_word(raw);
            let next = words.peek().map_or("", |n| trim_word(n));
            if opens_self_description(w, next) {
                return true;
            }
            // An opener with no content leaves the clause open: "also I …", "btw my …".
            at_clause_start = w.is_empty() || is_opener(w);
        }
        if ends_clause || is_clause_joiner(raw) {
            at_clause_start = true;
        }
    }
    false
}

/// `word` without surrounding punctuation, apostrophes kept ("I'm", "I’ve").
fn trim_word(word: &str) -> &str {
    word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '\u{2019}')
}

/// Whether a clause opening with `first` then `second` describes the user.
fn opens_self_description(first: &str, second: &str) -> bool {
    let is = |w: &str, want: &str| {
        w.eq_ignore_ascii_case(want)
            || (w.contains('\u{2019}') && w.replace('\u{2019}', "'").eq_ignore_ascii_case(want))
    };
    if ["i'm", "im", "i've", "my"]
        .iter()
        .any(|want| is(first, want))
    {
        return true;
    }
    is(first, "i")
        && [
            "am", "have", "live", "work", "was", "speak", "own", "grew", "can't", "cannot",
            "don't", "never",
        ]
        .iter()
        .any(|want| is(second, want))
}

/// Clause openers that carry nothing: a clause stays open after them.
fn is_opener(word: &str) -> bool {
    let mut buf = [0u8; 16];
    ascii_lower(word, &mut buf).is_some_and(|w| {
        matches!(
            w,
            "also"
                | "and"
                | "but"
                | "so"
                | "btw"
                | "hey"
                | "hi"
                | "oh"
                | "well"
                | "honestly"
                | "actually"
                | "anyway"
                | "plus"
                | "ps"
                | "fyi"
                | "ok"
                | "okay"
                | "yeah"
        )
    })
}

/// Words after which a new clause starts.
fn is_clause_joiner(word: &str) -> bool {
    matches!(word, "and" | "but" | "so" | "And" | "But" | "So")
}

/// Words that small talk is made of.
fn is_chit_chat_word(lower: &str) -> bool {
    matches!(
        lower,
        "hi" | "hello"
            | "hey"
            | "thanks"
            | "thank"
            | "you"
            | "ok"
            | "okay"
            | "sure"
            | "great"
            | "cool"
            | "nice"
            | "good"
            | "morning"
            | "evening"
            | "bye"
            | "goodbye"
            | "welcome"
            | "yes"
            | "no"
            | "yeah"
            | "lol"
            | "haha"
            | "sounds"
            | "awesome"
            | "perfect"
            | "fine"
            | "how"
            | "are"
            | "doing"
            | "np"
            | "so"
            | "much"
            | "alright"
            | "right"
            | "got"
            | "it"
            | "see"
            | "ya"
            | "cheers"
            | "there"
            | "all"
    )
}

/// `word` without leading and trailing punctuation.
fn bare_word(word: &str) -> &str {
    word.trim_matches(|c: char| !c.is_alphanumeric())
}

/// `word` lowercased into `buf` when it is ASCII and short enough to be in a word list
/// (every listed word is lowercase ASCII of at most 16 bytes); `None` otherwise.
fn ascii_lower<'b>(word: &str, buf: &'b mut [u8; 16]) -> Option<&'b str> {
    let bytes = word.as_bytes();
    if bytes.len() > buf.len() || !word.is_ascii() {
        return None;
    }
    let out = &mut buf[..bytes.len()];
    out.copy_from_slice(bytes);
    out.make_ascii_lowercase();
    std::str::from_utf8(out).ok()
}

/// How much a sentence is worth keeping.
///
/// Runs on every sentence of every summarisation, so it borrows words and allocates
/// nothing.
fn score(sentence: &str, role: Role) -> f32 {
    let mut word_count = 0usize;
    let mut names = 0usize;
    let mut numbers = 0usize;
    let mut dated = false;
    let mut decided = false;
    let mut transient = false;
    let mut all_chit_chat = true;
    let mut any_word = false;
    let mut preference = false;
    let (mut p2, mut p1) = ("", "");
    for (i, word) in sentence.split_whitespace().enumerate() {
        word_count += 1;
        let b = bare_word(word);
        preference = preference || states_preference(p2, p1, b);
        (p2, p1) = (p1, b);
        if i > 0
            && b.chars().next().is_some_and(char::is_uppercase)
            && !matches!(b, "I" | "I'm" | "I've" | "I'd" | "I'll")
        {
            names += 1;
        }
        if word.chars().any(|c| c.is_ascii_digit()) {
            numbers += 1;
        }
        let mut buf = [0u8; 16];
        let lower_word = ascii_lower(b, &mut buf);
        dated = dated || lower_word.is_some_and(is_month_or_day) || is_iso_date(b);
        decided = decided || lower_word.is_some_and(is_decision_word);
        transient = transient
            || lower_word.is_some_and(|w| matches!(w, "today" | "yesterday" | "tonight" | "again"))
            || (p2.eq_ignore_ascii_case("this") || p2.eq_ignore_ascii_case("last"))
                && lower_word.is_some_and(|w| {
                    matches!(w, "morning" | "afternoon" | "evening" | "night" | "week")
                });
        any_word = true;
        if !b.is_empty() && !lower_word.is_some_and(is_chit_chat_word) {
            all_chit_chat = false;
        }
    }
    let chit_chat = any_word && all_chit_chat;

    let mut score = 1.5 * names.min(3) as f32 + 1.5 * numbers.min(2) as f32;
    // Who the user is ("I'm allergic to penicillin", "My sister lives in Porto") outlasts
    // what happened today.
    if describes_self(sentence) {
        score += 2.0;
    }
    if transient {
        score -= 1.5;
    }
    score += if dated { 2.0 } else { 0.0 };
    score += if decided { 2.5 } else { 0.0 };
    score += if preference { 3.0 } else { 0.0 };
    score += 0.5 * (word_count.min(20) as f32 / 20.0);
    if chit_chat {
        score -= 3.0;
    }
    if role == Role::User {
        score += 0.25;
    }
    score
}

/// `2024-05-17`-shaped.
fn is_iso_date(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() >= 10
        && b[..10].iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preferences_match_whole_words() {
        let stated = |s: &str| {
            let words: Vec<&str> = s.split_whitespace().map(bare_word).collect();
            (0..words.len()).any(|i| {
                let p1 = if i >= 1 { words[i - 1] } else { "" };
                let p2 = if i >= 2 { words[i - 2] } else { "" };
                states_preference(p2, p1, words[i])
            })
        };
        for yes in [
            "I like jazz",
            "I'm vegan.",
            "I am from Oslo",
            "My name is Bo",
            "I can't stand it",
            "I don't eat meat",
            "I do not like rain",
            "Peanuts? I'm allergic!",
            "I liked it",
            "my favourite",
        ] {
            assert!(stated(yes), "{yes}");
        }
        for no in [
            "The wifi like always drops",
            "Hi likes",
            "I am tired",
            "you like jazz",
            "name my dog",
        ] {
            assert!(!stated(no), "{no}");
        }
    }

    #[test]
    fn sentences_split_after_terminators() {
        assert_eq!(
            sentences("Hi! I live in Oslo. Version 3.5 is out\nok"),
            vec!["Hi!", "I live in Oslo.", "Version 3.5 is out", "ok"]
        );
    }

    #[test]
    fn scores_rank_content_over_chit_chat() {
        assert!(
            score("I'm allergic to peanuts.", Role::User) > score("Thanks so much!", Role::User)
        );
        assert!(
            score("We agreed to meet on Friday at 10.", Role::Assistant)
                > score("Sounds good.", Role::User)
        );
        assert!(
            score("The release is 2024-05-17.", Role::Assistant)
                > score("That is nice.", Role::Assistant)
        );
    }

    #[test]
    fn self_descriptions_open_any_clause() {
        for yes in [
            "I'm vegan.",
            "Also I can't eat peanuts, I'm seriously allergic.",
            "hey, so my son Mateo was born on 12 August 2019.",
            "Work is busy but I live in Porto now.",
            "btw I don't drink coffee",
        ] {
            assert!(describes_self(yes), "{yes}");
        }
        for no in [
            "Traffic on the A1 was terrible this morning, 40 minutes late.",
            "Lunch with Sarah at 1pm again, the usual salad.",
            "Nice to know!",
            "Did I mention it?",
        ] {
            assert!(!describes_self(no), "{no}");
        }
    }

    #[test]
    fn prefixes_round_trip() {
        assert_eq!(split_prefix("User: hello"), (Some("User"), "hello"));
        assert_eq!(split_prefix("plain"), (None, "plain"));
    }
}
