//! Health disclosures no reading can name: kept as said.
//!
//! "the nurse wrote chlorhexidine on my wristband after I reacted to the surgical wash"
//! names no allergen the tables know and no shape the readings parse, yet a good answer
//! about a tattoo must keep it in mind. A sentence of the user's that holds a medical cue
//! ([`MEDICAL_CUES`]: a diagnosis, a prescription, a reaction, a flare, a seizure …) and
//! from which no health fact was read is kept whole as a health note: the fact's text is
//! the sentence itself, so recall shows what was said, and the health searches find it by
//! its cue.

use super::health::{health, users_at};
use crate::facts::{FactCandidate, Polarity};

/// Words that make a sentence of the user's a health disclosure.
pub(crate) const MEDICAL_CUES: &[&str] = &[
    "diagnosed",
    "diagnosis",
    "prescribed",
    "prescription",
    "allergic",
    "allergy",
    "allergies",
    "reacted",
    "reaction",
    "intolerant",
    "intolerance",
    "flare",
    "flares",
    "flared",
    "flare-up",
    "flare-ups",
    "chronic",
    "syndrome",
    "disorder",
    "deficiency",
    "seizure",
    "seizures",
    "symptoms",
    "medication",
    "meds",
    "tablets",
    "inhaler",
    "injections",
    "relapse",
    "remission",
    "epipen",
    "transplant",
    "stent",
];

/// The longest note kept, in words; a longer sentence is cut with an ellipsis.
const NOTE_WORDS: usize = 40;

/// `sentence` (with `lower`, its lowercase) kept as a health note, when it holds a
/// medical cue the user's own and not denied.
pub(super) fn health_note(sentence: &str, lower: &str) -> Option<FactCandidate> {
    MEDICAL_CUES.iter().find_map(|cue| {
        super::health::find_word(lower, cue)
            .filter(|at| users_at(lower, *at) && !super::health::denied(lower, *at))
    })?;
    let words: Vec<&str> = sentence.split_whitespace().collect();
    let mut text = words[..words.len().min(NOTE_WORDS)].join(" ");
    if words.len() > NOTE_WORDS {
        text.push('…');
    }
    let text = text.trim_end_matches(['.', '!', ';', ',']).to_owned();
    let mut note = health(&text, "health", &text, Polarity::Positive);
    note.confidence = 0.6;
    Some(note)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(sentence: &str) -> Option<String> {
        health_note(sentence, &sentence.to_lowercase()).map(|c| c.text)
    }

    #[test]
    fn a_medical_sentence_of_the_users_is_kept_as_said() {
        assert_eq!(
            note("The dentist noted I reacted to the numbing gel last time.").as_deref(),
            Some("The dentist noted I reacted to the numbing gel last time")
        );
        assert_eq!(note("my son reacted to the numbing gel"), None);
        assert_eq!(note("I had a great time at the gig"), None);
        assert_eq!(note("i've never had a seizure"), None);
    }
}
