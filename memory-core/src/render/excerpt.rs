//! The part of an episode worth showing: the sentence(s) that matched the question, the
//! sentence before when they cannot stand alone, and "…" for what was cut.
//!
//! Sentences are split by the one splitter (`text::sentence`) and matched by the
//! one text analysis (`text::terms`: folding, stop words, stems), so a sentence
//! matches the question by the same words the search found the episode by. A short
//! message is shown whole; a message whose words do not match (found by its date, by
//! meaning, or by the message it answers) is shown from its start, its opening
//! courtesy ("Thanks for telling me.") skipped.

use std::borrow::Cow;
use std::collections::HashSet;

use crate::text::sentence::sentences;

use super::filler::{is_content_free, without_speaker_label};

/// A message of at most this many characters is shown whole: the cap a line had before
/// excerpts. Cutting at 140 characters lost 5–7 points of answer-hit on the hold-out set
/// (the answer often sits in a sentence that shares no word with the question), so only
/// messages the old cap would have cut anyway are excerpted, by what matched instead of
/// by position.
pub const WHOLE_CHARS: usize = 400;
/// The sentences chosen stop growing past this many characters (the best one is always
/// shown, up to the line's own cap).
pub const EXCERPT_CHARS: usize = 160;
/// A sentence of fewer words than this is shown with the one before it.
const MIN_WORDS_ALONE: usize = 4;
/// Marks what was cut.
pub const ELLIPSIS: &str = "…";

/// Opening words that refer back, so a sentence starting with one is shown with the
/// sentence before it: pronouns, demonstratives and connectors, folded.
pub const REFERS_BACK: &[&str] = &[
    "after",
    "again",
    "also",
    "and",
    "anyway",
    "because",
    "before",
    "but",
    "even",
    "he",
    "he's",
    "her",
    "hers",
    "him",
    "his",
    "it",
    "it's",
    "its",
    "later",
    "or",
    "otherwise",
    "she",
    "she's",
    "since",
    "so",
    "still",
    "that",
    "that's",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "they're",
    "this",
    "those",
    "though",
    "too",
    "which",
    "yet",
];

/// The query's terms (the text analysis of the search), to match sentences against.
#[derive(Debug, Clone, Default)]
pub struct QueryTerms(HashSet<String>);

impl QueryTerms {
    /// The terms of `query`.
    pub fn new(query: &str) -> Self {
        let mut terms = HashSet::new();
        crate::text::for_each_term(query, |t| {
            terms.insert(t.to_owned());
        });
        Self(terms)
    }

    /// How many distinct query terms `text` holds.
    fn shared(&self, text: &str) -> usize {
        if self.0.is_empty() {
            return 0;
        }
        let mut seen: HashSet<&str> = HashSet::new();
        crate::text::for_each_term(text, |t| {
            if let Some(q) = self.0.get(t) {
                seen.insert(q.as_str());
            }
        });
        seen.len()
    }
}

/// A sentence of the message: its byte range in the message (terminators included).
#[derive(Debug, Clone, Copy)]
struct Part {
    start: usize,
    end: usize,
}

/// What of `text` to show for `query`: the whole text when it is short (but for its
/// content-free sentences, see [`is_content_free`]), else the matching sentences (with
/// the sentence before those that refer back) and "…" where sentences were left out.
pub fn excerpt<'a>(text: &'a str, query: &QueryTerms) -> Cow<'a, str> {
    let text = text.trim();
    // A speaker label ("Sasha: ") stays in front of whatever is shown.
    let rest = without_speaker_label(text);
    if rest.len() < text.len() {
        return match excerpt_of(rest, query) {
            Cow::Borrowed(shown) if shown.len() == rest.len() => Cow::Borrowed(text),
            shown => Cow::Owned(format!("{}{shown}", &text[..text.len() - rest.len()])),
        };
    }
    excerpt_of(text, query)
}

/// [`excerpt`] of a text without a speaker label.
fn excerpt_of<'a>(text: &'a str, query: &QueryTerms) -> Cow<'a, str> {
    let short = text.chars().count() <= WHOLE_CHARS;
    if short && !text.contains(['.', '!', '?', ';', '\n', '…']) {
        return Cow::Borrowed(text);
    }
    let found = sentences(text);
    if found.len() <= 1 {
        return Cow::Borrowed(text);
    }
    let empty: Vec<bool> = found.iter().map(|s| is_content_free(s.full)).collect();
    if empty.iter().all(|&e| e) {
        return Cow::Borrowed(text);
    }
    let base = text.as_ptr() as usize;
    let parts: Vec<Part> = found
        .iter()
        .map(|s| {
            let start = s.full.as_ptr() as usize - base;
            Part {
                start,
                end: start + s.full.len(),
            }
        })
        .collect();
    let len = |i: usize| text[parts[i].start..parts[i].end].chars().count();
    let scores: Vec<usize> = found
        .iter()
        .zip(&empty)
        .map(|(s, &e)| if e { 0 } else { query.shared(s.full) })
        .collect();
    let mut chosen = vec![false; parts.len()];
    let best = scores.iter().copied().max().unwrap_or(0);
    if short {
        // Short: whole, but for its content-free sentences ("Of course.").
        for (pick, &e) in chosen.iter_mut().zip(&empty) {
            *pick = !e;
        }
    } else if best == 0 {
        // Nothing matched by words: the start, its opening courtesy skipped.
        let first = empty.iter().position(|&e| !e).unwrap_or(0);
        let mut used = 0;
        for (i, pick) in chosen.iter_mut().enumerate().skip(first) {
            if used > 0 && used + len(i) > EXCERPT_CHARS {
                break;
            }
            *pick = true;
            used += len(i);
        }
    } else {
        let mut order: Vec<usize> = (0..parts.len()).filter(|&i| scores[i] > 0).collect();
        // Best first; ties to the earlier sentence.
        order.sort_by(|&a, &b| scores[b].cmp(&scores[a]).then(a.cmp(&b)));
        let mut used = 0;
        for i in order {
            let mut add = vec![i];
            if i > 0 && !empty[i - 1] && refers_back(found[i].text) {
                add.push(i - 1);
            }
            let cost: usize = add.iter().filter(|&&j| !chosen[j]).map(|&j| len(j)).sum();
            if used > 0 && used + cost > EXCERPT_CHARS {
                break;
            }
            for j in add {
                chosen[j] = true;
            }
            used += cost;
        }
    }
    if chosen.iter().all(|&c| c) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < parts.len() {
        if !chosen[i] {
            i += 1;
            continue;
        }
        let mut j = i;
        while j + 1 < parts.len() && chosen[j + 1] {
            j += 1;
        }
        if i > 0 {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(ELLIPSIS);
            out.push(' ');
        }
        out.push_str(&text[parts[i].start..parts[j].end]);
        i = j + 1;
    }
    if !chosen[parts.len() - 1] {
        out.push(' ');
        out.push_str(ELLIPSIS);
    }
    Cow::Owned(out)
}

/// Whether a sentence cannot stand alone: it opens with a word that refers back, or it
/// is very short.
fn refers_back(sentence: &str) -> bool {
    let mut words = sentence.split_whitespace();
    let Some(first) = words.next() else {
        return false;
    };
    let first: String = first
        .trim_matches(|c: char| !c.is_alphanumeric())
        .chars()
        .map(|c| if c == '\u{2019}' { '\'' } else { c })
        .flat_map(char::to_lowercase)
        .collect();
    REFERS_BACK.binary_search(&first.as_str()).is_ok() || 1 + words.count() < MIN_WORDS_ALONE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str, query: &str) -> String {
        excerpt(text, &QueryTerms::new(query)).into_owned()
    }

    const LONG: &str = "Work has been hectic all week, with the quarterly reports due on Friday and two people off sick. \
        On the bright side, my sister Hannah finally picked a venue for her wedding, a barn near Ilkley. \
        We are going to look at dresses together next month if I can get the time off. \
        Also the cat knocked a plant off the windowsill again. \
        The boiler needs servicing before winter and the landlord has not answered my email about it yet. \
        I also have to renew my passport before the trip in the spring, which I keep forgetting to do.";

    #[test]
    fn sorted_for_binary_search() {
        assert!(REFERS_BACK.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_speaker_label_stays_in_front_of_what_is_shown() {
        assert_eq!(
            cut("Sasha: lol. we adopted a kitten called Figo", "kitten"),
            "Sasha: … we adopted a kitten called Figo"
        );
        let long = format!("Callum: {LONG}");
        let got = cut(&long, "where is Hannah's wedding?");
        assert!(got.starts_with("Callum: "), "{got}");
        assert!(got.contains("barn near Ilkley"), "{got}");
        assert_eq!(cut("Mari: Mole", "kitten"), "Mari: Mole");
    }

    #[test]
    fn a_short_message_is_shown_whole() {
        let text = "It was gorgeous. Hannah married Dev in a barn.";
        assert_eq!(cut(text, "who did my sister marry?"), text);
    }

    #[test]
    fn the_matching_sentence_is_shown_with_ellipses_for_the_rest() {
        let got = cut(LONG, "where is Hannah's wedding?");
        assert_eq!(
            got,
            "… On the bright side, my sister Hannah finally picked a venue for her wedding, a barn near Ilkley. …"
        );
        assert!(got.chars().count() < LONG.chars().count() / 2);
    }

    #[test]
    fn a_sentence_that_refers_back_brings_the_one_before() {
        let got = cut(LONG, "what did the cat knock over?");
        assert!(
            got.starts_with("… We are going to look at dresses")
                && got.contains("Also the cat knocked a plant off the windowsill again."),
            "{got}"
        );
    }

    #[test]
    fn the_first_sentence_needs_no_leading_ellipsis() {
        let got = cut(LONG, "are the quarterly reports done?");
        assert!(got.starts_with("Work has been hectic all week"), "{got}");
        assert!(got.ends_with(" …"), "{got}");
    }

    #[test]
    fn nothing_matched_shows_the_start_without_its_courtesy() {
        let text =
            "Thanks for telling me. That sounds like a really hard week, and it is normal to feel \
            drained after looking after someone for so long. Try to get some rest this weekend. \
            Would a short walk help? Some people find that writing things down before bed helps \
            them switch off, and others prefer a bath or a podcast. Whatever works for you is fine, \
            there is no right way to do this and nobody expects you to have it all figured out.";
        let got = cut(text, "zebra");
        assert!(
            got.starts_with("… That sounds like a really hard week"),
            "{got}"
        );
        assert!(got.ends_with(" …"), "{got}");
        assert!(!got.contains("Thanks"), "{got}");
    }

    #[test]
    fn words_match_by_their_stems() {
        let text =
            "I have been busy lately with lots of things going on at home and at work, honestly. \
            The big news is that I ran my first marathon in Leeds last Sunday in four hours. \
            Nothing else to report really, the weather has been grim all month. \
            The garden is a mess, the fence blew down in the storm and the neighbours want to split \
            the cost of a new one, which seems fair, but the quotes so far are eye-watering.";
        let got = cut(text, "how long did the marathons take me to run?");
        assert!(
            got.contains("first marathon in Leeds last Sunday in four hours"),
            "{got}"
        );
        assert!(!got.contains("weather"), "{got}");
    }
}
