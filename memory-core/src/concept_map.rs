//! What a message touches, and what the user said before that a good answer must keep in
//! mind although it shares no word with it: "Can you suggest a satay recipe?" and "I'm
//! allergic to peanuts", "Plan me a week in Lisbon" and "flying terrifies me".
//!
//! A small concept map (English, data). Each domain lists the words a request in it is
//! made with (its *cues*) and the words a disclosure that matters there is phrased with
//! (its *concerns*): allergies and diets for food, fears and conditions for travel,
//! injuries for exercise, and so on. When a message holds a cue of a domain, recall also
//! searches the user's facts and earlier messages for that domain's concerns
//! ([`Concerns`], read by [`recall`](crate::recall::recall)); a match must share a
//! concern word with the query, so nothing is recalled by the map alone. With an embedder the search by meaning
//! finds many of the same; the map is what works without one.
//!
//! Words are matched by the text analysis of search (folding, stems), so "recipes" is
//! the cue "recipe" and "allergies" the concern "allergy".

use std::collections::HashSet;
use std::sync::OnceLock;

/// One domain: its name, the words a request in it is made with, and the words a
/// disclosure that matters to it is phrased with.
#[derive(Debug, Clone, Copy)]
pub struct Domain {
    /// `"food"`, `"drink"`, `"travel"`, …
    pub name: &'static str,
    /// Words a message in this domain is made with.
    pub cues: &'static [&'static str],
    /// Words a disclosure that matters here is phrased with.
    pub concerns: &'static [&'static str],
}

/// Allergies, intolerances and diets: what food and drink requests must keep in mind.
const DIET: &[&str] = &[
    "allergic",
    "allergy",
    "anaphylactic",
    "epipen",
    "intolerant",
    "intolerance",
    "coeliac",
    "celiac",
    "gluten",
    "lactose",
    "dairy",
    "nut",
    "peanut",
    "shellfish",
    "vegan",
    "vegetarian",
    "pescatarian",
    "halal",
    "kosher",
    "diabetic",
    "diabetes",
    "keto",
    "diet",
    "ibs",
];

/// The domains, in a fixed order.
pub const DOMAINS: &[Domain] = &[
    Domain {
        name: "food",
        cues: &[
            "eat",
            "ate",
            "food",
            "dinner",
            "lunch",
            "breakfast",
            "brunch",
            "supper",
            "meal",
            "snack",
            "restaurant",
            "takeaway",
            "menu",
            "dish",
            "recipe",
            "cook",
            "bake",
            "pizza",
            "pasta",
            "curry",
            "sushi",
            "burger",
            "sandwich",
            "salad",
            "soup",
            "cake",
            "dessert",
            "pudding",
            "bread",
            "cheese",
            "chocolate",
            "biscuit",
            "cookie",
            "barbecue",
            "bbq",
            "picnic",
            "buffet",
            "feast",
            "satay",
            "stir-fry",
            "roast",
            "steak",
            "chicken",
            "fish",
            "seafood",
            "prawn",
            "omelette",
            "pancake",
            "noodle",
            "taco",
            "party",
            "catering",
            "grocery",
            "groceries",
            "cafe",
            "bakery",
            "hungry",
        ],
        concerns: DIET,
    },
    Domain {
        name: "drink",
        cues: &[
            "drink",
            "pub",
            "bar",
            "wine",
            "beer",
            "pint",
            "cocktail",
            "prosecco",
            "champagne",
            "whisky",
            "gin",
            "vodka",
            "coffee",
            "espresso",
            "latte",
            "cappuccino",
            "tea",
            "smoothie",
            "milkshake",
            "juice",
            "brewery",
            "toast",
            "round",
        ],
        concerns: &[
            "alcohol",
            "sober",
            "teetotal",
            "recovery",
            "caffeine",
            "decaf",
            "pregnant",
            "lactose",
            "dairy",
            "allergic",
            "intolerant",
            "diabetic",
            "medication",
        ],
    },
    Domain {
        name: "travel",
        cues: &[
            "trip",
            "travel",
            "holiday",
            "vacation",
            "getaway",
            "flight",
            "fly",
            "plane",
            "airport",
            "airline",
            "abroad",
            "journey",
            "cruise",
            "ferry",
            "boat",
            "train",
            "road",
            "drive",
            "hotel",
            "hostel",
            "itinerary",
            "visit",
            "tour",
            "sightseeing",
            "backpacking",
            "honeymoon",
            "weekend",
            "destination",
            "passport",
            "beach",
            "mountain",
            "ski",
            "camping",
        ],
        concerns: &[
            "afraid",
            "scared",
            "terrified",
            "fear",
            "phobia",
            "panic",
            "anxiety",
            "anxious",
            "claustrophobic",
            "seasick",
            "motion",
            "heights",
            "wheelchair",
            "mobility",
            "crutches",
            "pregnant",
            "epilepsy",
            "insulin",
            "diabetic",
            "medication",
            "allergic",
        ],
    },
    Domain {
        name: "exercise",
        cues: &[
            "run", "jog", "gym", "workout", "exercise", "marathon", "swim", "cycle", "bike",
            "hike", "walk", "yoga", "pilates", "training", "sport", "football", "tennis", "climb",
            "race", "fitness", "weights", "lift", "squat", "stretch", "dance", "match", "class",
        ],
        concerns: &[
            "injury",
            "injured",
            "knee",
            "ankle",
            "back",
            "shoulder",
            "hip",
            "sprained",
            "torn",
            "broke",
            "fracture",
            "surgery",
            "physio",
            "asthma",
            "asthmatic",
            "heart",
            "arthritis",
            "pregnant",
            "pain",
        ],
    },
    Domain {
        name: "medicine",
        cues: &[
            "medicine",
            "painkiller",
            "ibuprofen",
            "paracetamol",
            "aspirin",
            "antibiotic",
            "pill",
            "tablet",
            "prescription",
            "pharmacy",
            "doctor",
            "gp",
            "headache",
            "cold",
            "flu",
            "fever",
            "cough",
            "vaccine",
            "jab",
            "supplement",
            "vitamin",
            "remedy",
            "dose",
        ],
        concerns: &[
            "allergic",
            "allergy",
            "penicillin",
            "medication",
            "warfarin",
            "insulin",
            "pregnant",
            "breastfeeding",
            "kidney",
            "liver",
            "asthma",
            "epilepsy",
            "diabetic",
            "condition",
            "diagnosed",
        ],
    },
    Domain {
        name: "sleep",
        cues: &[
            "sleep", "bed", "bedtime", "nap", "tired", "night", "awake", "rest", "mattress",
        ],
        concerns: &[
            "insomnia",
            "apnoea",
            "apnea",
            "nightmares",
            "shifts",
            "anxiety",
            "baby",
            "newborn",
            "snore",
            "pain",
        ],
    },
    Domain {
        name: "money",
        cues: &[
            "buy",
            "afford",
            "price",
            "budget",
            "gift",
            "present",
            "expensive",
            "cheap",
            "spend",
            "cost",
            "shopping",
            "save",
            "splurge",
            "upgrade",
            "subscription",
        ],
        concerns: &[
            "debt",
            "unemployed",
            "redundant",
            "laid",
            "broke",
            "skint",
            "loan",
            "mortgage",
            "savings",
            "overdraft",
            "tight",
        ],
    },
    Domain {
        name: "social",
        cues: &[
            "party",
            "wedding",
            "date",
            "meet",
            "friends",
            "crowd",
            "concert",
            "gig",
            "festival",
            "event",
            "invite",
            "presentation",
            "speech",
            "interview",
        ],
        concerns: &[
            "anxiety",
            "anxious",
            "shy",
            "introvert",
            "panic",
            "autistic",
            "adhd",
            "deaf",
            "hearing",
            "sober",
            "grieving",
        ],
    },
];

/// Each domain's cues and concerns as analysed terms.
struct Analysed {
    cues: Vec<HashSet<String>>,
    concerns: Vec<Vec<String>>,
}

fn analysed() -> &'static Analysed {
    static ANALYSED: OnceLock<Analysed> = OnceLock::new();
    ANALYSED.get_or_init(|| Analysed {
        cues: DOMAINS
            .iter()
            .map(|d| d.cues.iter().flat_map(|w| crate::text::terms(w)).collect())
            .collect(),
        concerns: DOMAINS
            .iter()
            .map(|d| {
                let mut seen = HashSet::new();
                d.concerns
                    .iter()
                    .flat_map(|w| crate::text::terms(w))
                    .filter(|t| seen.insert(t.clone()))
                    .collect()
            })
            .collect(),
    })
}

/// The domains `text` touches, by name, in [`DOMAINS`] order.
///
/// ```
/// use agentmemory_core::concept_map::domains;
///
/// assert_eq!(domains("Any good satay recipes for Saturday?"), ["food"]);
/// assert_eq!(domains("Book me a flight to Rome"), ["travel"]);
/// assert!(domains("What's the capital of Peru?").is_empty());
/// ```
pub fn domains(text: &str) -> Vec<&'static str> {
    touched(text).map(|i| DOMAINS[i].name).collect()
}

fn touched(text: &str) -> impl Iterator<Item = usize> {
    let map = analysed();
    let terms: HashSet<String> = crate::text::terms(text).into_iter().collect();
    (0..DOMAINS.len()).filter(move |&i| map.cues[i].iter().any(|c| terms.contains(c)))
}

/// How a request for advice, a plan or permission is made: "should I", "any ideas",
/// "suggest".
const ADVICE: &[&str] = &[
    "should i",
    "should we",
    "can i",
    "could i",
    "is it ok",
    "is it okay",
    "is it safe",
    "is it worth",
    "any ideas",
    "any tips",
    "any reason",
    "any advice",
    "ideas for",
    "suggest",
    "recommend",
    "what would you",
    "what should",
    "how should i",
    "how do i prepare",
    "help me pick",
    "help me choose",
];

/// Words that ask for advice only in a question: "which one?", "worth it?", "fancy a
/// pint?".
const ADVICE_IN_A_QUESTION: &[&str] = &[
    "which",
    "what to",
    "worth it",
    "planning",
    "thinking of",
    "fancy",
    "good idea",
    "bad idea",
    "doable",
    "too many",
    "too much",
    "best",
    "good",
    "decent",
    "worth",
    "fun",
    "smart",
    "realistic",
    "tips",
    "ideas",
    "packing",
    "pack",
    "recipe",
    "mention",
    "bring",
    "menu",
    "what can i",
    "where's good",
    "anything i",
];

/// Whether `text` asks for advice, a plan or permission: a request whose good answer
/// keeps the user's health in mind whatever its topic.
///
/// ```
/// use agentmemory_core::concept_map::asks_advice;
///
/// assert!(asks_advice("My mates got tickets to a rave, should I go?"));
/// assert!(asks_advice("Oktoberfest next week, how many steins is too many?"));
/// assert!(!asks_advice("What's the capital of Peru?"));
/// assert!(!asks_advice("We went to the cafe which was lovely."));
/// ```
pub fn asks_advice(text: &str) -> bool {
    let lower = text.to_lowercase();
    let said = |cue: &&str| {
        lower.match_indices(*cue).any(|(i, _)| {
            let before = lower[..i].chars().next_back();
            let after = lower[i + cue.len()..].chars().next();
            before.is_none_or(|c| !c.is_alphanumeric())
                && after.is_none_or(|c| !c.is_alphanumeric())
        })
    };
    ADVICE.iter().any(said) || (lower.contains('?') && ADVICE_IN_A_QUESTION.iter().any(said))
}

/// What a request must keep in mind: the concern words of every domain it touches,
/// read once per request ([`of`](Self::of)) and asked of each fact or message found.
///
/// ```
/// use agentmemory_core::concept_map::Concerns;
///
/// let trip = Concerns::of("Plan me a trip to Lisbon").unwrap();
/// assert!(trip.query().contains("panic"));
/// assert!(trip.held_by("I get panic attacks on planes"));
/// assert!(!trip.held_by("I love Portuguese tiles"));
/// assert!(Concerns::of("What's the capital of Peru?").is_none());
/// ```
#[derive(Debug, Clone)]
pub struct Concerns {
    /// The concern terms, each once, in domain order.
    terms: Vec<&'static str>,
}

impl Concerns {
    /// The concerns of the domains `text` touches; `None` when it touches none.
    pub fn of(text: &str) -> Option<Self> {
        let map = analysed();
        let mut seen = HashSet::new();
        let terms: Vec<&'static str> = touched(text)
            .flat_map(|i| map.concerns[i].iter())
            .map(String::as_str)
            .filter(|t| seen.insert(*t))
            .collect();
        (!terms.is_empty()).then_some(Self { terms })
    }

    /// The concern words as one query: what to search the user's facts and messages
    /// for.
    pub fn query(&self) -> String {
        self.terms.join(" ")
    }

    /// Whether `text` holds one of the concern words: a fact or message the map may
    /// recall for the request.
    pub fn held_by(&self, text: &str) -> bool {
        crate::text::terms(text)
            .iter()
            .any(|t| self.terms.contains(&t.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cue_and_concern_survives_the_analysis() {
        for d in DOMAINS {
            for w in d.cues.iter().chain(d.concerns) {
                assert!(
                    !crate::text::terms(w).is_empty(),
                    "{}: {w} is a stop word",
                    d.name
                );
            }
        }
    }

    #[test]
    fn plurals_and_inflections_are_cues() {
        assert_eq!(domains("any recipes?"), ["food"]);
        assert_eq!(domains("we're flying out on Monday"), ["travel"]);
        assert!(Concerns::of("dinner ideas")
            .unwrap()
            .held_by("I have allergies to nuts"));
    }
}
