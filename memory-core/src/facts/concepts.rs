//! Words that name one thing for a change of state: "quit caffeine" ends "drinks three
//! espressos a day", "left the band" ends "plays drums", "got divorced" ends "has a wife
//! named …". The vocabulary is data (English, small and general): each row is one
//! concept and the words that name it or what it is made of. [`closes`](super::transition::closes)
//! reads it when the object of an ending shares no word with the fact it ends.

/// One concept per row: every word of a row names the others for an ending.
pub const CONCEPTS: &[&[&str]] = &[
    // Caffeine and what carries it.
    &[
        "caffeine",
        "coffee",
        "coffees",
        "espresso",
        "espressos",
        "latte",
        "lattes",
        "cappuccino",
        "cappuccinos",
        "americano",
        "flat white",
        "tea",
        "teas",
        "energy drink",
        "energy drinks",
        "red bull",
    ],
    // Alcohol.
    &[
        "alcohol",
        "drinking",
        "booze",
        "beer",
        "beers",
        "pint",
        "pints",
        "wine",
        "spirits",
        "whisky",
        "whiskey",
        "vodka",
        "gin",
        "cocktails",
        "lager",
    ],
    // Smoking and vaping.
    &[
        "smoking",
        "smoke",
        "smokes",
        "smoker",
        "cigarette",
        "cigarettes",
        "cigs",
        "fags",
        "tobacco",
        "vape",
        "vaping",
        "vaper",
        "nicotine",
    ],
    // A band or choir and playing in it.
    &[
        "band",
        "choir",
        "orchestra",
        "drums",
        "drummer",
        "guitar",
        "guitarist",
        "bass",
        "bassist",
        "keyboards",
        "gigs",
        "gig",
        "sing",
        "singer",
    ],
    // A partner and the relationship with them.
    &[
        "partner",
        "wife",
        "husband",
        "spouse",
        "boyfriend",
        "girlfriend",
        "fiance",
        "fiancee",
        "fiancé",
        "fiancée",
        "married",
        "marriage",
        "divorced",
        "divorce",
        "separated",
        "relationship",
        "engagement",
        "engaged",
        "wedding",
        "single",
        "split",
        "broke",
    ],
    // Work.
    &[
        "job", "work", "employer", "office", "position", "role", "career", "company",
    ],
    // Study.
    &[
        "course",
        "degree",
        "university",
        "uni",
        "college",
        "studies",
        "studying",
        "phd",
        "masters",
        "apprenticeship",
        "school",
        "classes",
    ],
    // Meat and fish, for a diet.
    &["meat", "beef", "pork", "chicken", "lamb", "bacon", "steak"],
    &["fish", "seafood", "salmon", "tuna", "prawns", "shellfish"],
    // A gym and working out.
    &[
        "gym",
        "workouts",
        "weights",
        "lifting",
        "crossfit",
        "membership",
    ],
    // Driving.
    &[
        "car", "driving", "drive", "drives", "licence", "license", "motor",
    ],
];

/// The rows of [`CONCEPTS`] a text's words fall in (each at most once).
pub(crate) fn concepts_of(text: &str) -> Vec<usize> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == 'é'))
        .filter(|w| !w.is_empty())
        .collect();
    let has = |name: &str| {
        if name.contains(' ') {
            lower.contains(name)
        } else {
            words.contains(&name)
        }
    };
    CONCEPTS
        .iter()
        .enumerate()
        .filter(|(_, row)| row.iter().any(|w| has(w)))
        .map(|(i, _)| i)
        .collect()
}

/// Whether `object` and `fact_text` name a concept in common.
pub(crate) fn share_a_concept(object: &str, fact_text: &str) -> bool {
    let said = concepts_of(object);
    !said.is_empty() && concepts_of(fact_text).iter().any(|c| said.contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endings_name_what_they_end_through_a_concept() {
        assert!(share_a_concept(
            "caffeine",
            "drinks about three espressos a day"
        ));
        assert!(share_a_concept("the band", "plays drums"));
        assert!(share_a_concept("divorced", "has a wife named Priya"));
        assert!(!share_a_concept("the band", "lives in Leeds"));
        assert!(!share_a_concept("my allotment", "drinks tea"));
    }
}
