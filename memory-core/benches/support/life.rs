//! One user's conversational life, generated for the episode and turn benchmarks: dated
//! conversations of everyday chat (what they did, with whom, where and when; plans;
//! questions; short acknowledgements) and the assistant's replies, the facts such a user
//! ends up with, and the messages a new turn brings.
//!
//! Sentences come from a small template grammar over a few hundred names, places, dishes,
//! objects and time expressions ("last Friday", "two weeks ago", "on 3 March"), drawn with
//! a seeded generator, so the data is varied English, not random tokens, and the same on
//! every run and every backend. Shared by `memory-core/benches/episodes.rs` and
//! `memory-stores/benches/episodes.rs`.

#![allow(dead_code)] // each bench uses part of it

use agentmemory_core::episodes::Episode;
use agentmemory_core::facts::{FactCandidate, MemoryFact};
use agentmemory_core::Message;
use chrono::{DateTime, Duration, Utc};

/// SplitMix64: a tiny, seeded, deterministic generator.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const NAMES: &[&str] = &[
    "Hannah", "Tom", "Priya", "Sam", "Lucía", "Kenji", "Amara", "Ben", "Chloe", "Diego", "Elif",
    "Farah", "Gus", "Inês", "Jonas", "Kai", "Leila", "Marco", "Nadia", "Omar", "Rosa", "Theo",
    "Yusuf", "Zoe", "Mateo", "Freya", "Ravi", "Olga", "Pierre", "Mei", "Aisha", "Connor", "Sofia",
    "Lars", "Noor", "Emeka", "Greta", "Hugo", "Ivy", "Jamal",
];
const RELATIONS: &[&str] = &[
    "sister",
    "brother",
    "mum",
    "dad",
    "partner",
    "friend",
    "colleague",
    "neighbour",
    "boss",
    "cousin",
    "daughter",
    "son",
    "flatmate",
    "aunt",
    "grandad",
    "best friend",
];
const PLACES: &[&str] = &[
    "Porto",
    "Leeds",
    "Lisbon",
    "Kyoto",
    "Oslo",
    "Berlin",
    "the Lake District",
    "Edinburgh",
    "Seville",
    "Bristol",
    "Cornwall",
    "Harrogate",
    "Copenhagen",
    "Valencia",
    "Glasgow",
    "Amsterdam",
    "Bruges",
    "Naples",
    "Krakow",
    "Dublin",
    "York",
    "Brighton",
    "Marseille",
    "Ljubljana",
    "Tallinn",
    "Bologna",
    "Galway",
    "Snowdonia",
    "the Peak District",
    "Bath",
    "Manchester",
    "Whitby",
    "Vienna",
    "Prague",
    "Budapest",
    "Athens",
    "Madeira",
    "Skye",
    "Cardiff",
    "Nice",
];
const VENUES: &[&str] = &[
    "the farmers' market",
    "the climbing gym",
    "the library",
    "the pottery studio",
    "the allotment",
    "the swimming pool",
    "the cinema",
    "the book club",
    "the jazz bar",
    "the museum",
    "the garden centre",
    "the vet",
    "the dentist",
    "the office",
    "the park",
    "the beach",
    "the football ground",
    "the community centre",
    "the ramen place",
    "the Thai restaurant",
];
const DISHES: &[&str] = &[
    "a mushroom risotto",
    "lasagne",
    "a Thai green curry",
    "shakshuka",
    "paella",
    "homemade pizza",
    "a lentil dal",
    "sourdough bread",
    "banana bread",
    "fish tacos",
    "a Sunday roast",
    "ramen",
    "pad thai",
    "a chickpea stew",
    "gnocchi",
    "a lemon drizzle cake",
    "dumplings",
    "a vegetable tagine",
    "carbonara",
    "a Greek salad",
    "pancakes",
    "a chilli",
    "bibimbap",
    "pierogi",
    "a fish pie",
    "falafel",
    "a Spanish omelette",
    "minestrone",
    "apple crumble",
    "sushi rolls",
];
const FOODS: &[&str] = &[
    "meat",
    "dairy",
    "gluten",
    "nuts",
    "shellfish",
    "mushrooms",
    "spicy food",
    "eggs",
    "coriander",
    "olives",
];
const OBJECTS: &[&str] = &[
    "bike",
    "washing machine",
    "laptop",
    "phone",
    "kettle",
    "car",
    "guitar",
    "camera",
    "sofa",
    "desk",
    "boiler",
    "dishwasher",
    "headphones",
    "tent",
    "sewing machine",
    "coffee grinder",
    "bookshelf",
    "e-reader",
    "lawnmower",
    "printer",
    "rucksack",
    "running shoes",
    "winter coat",
    "watch",
];
const PETS: &[&str] = &[
    "dog", "cat", "kitten", "puppy", "rabbit", "tortoise", "parrot",
];
const PET_NAMES: &[&str] = &[
    "Pickle",
    "Miso",
    "Biscuit",
    "Pepper",
    "Luna",
    "Figo",
    "Mochi",
    "Olive",
    "Bramble",
    "Noodle",
    "Ziggy",
    "Pumpkin",
    "Otis",
    "Maple",
    "Clementine",
    "Waffles",
];
const COMPANIES: &[&str] = &[
    "Brightside Studio",
    "Deloitte",
    "the council",
    "a small charity",
    "Octopus Energy",
    "the hospital",
    "a bakery",
    "a design agency",
    "the university",
    "an architecture firm",
    "a start-up in Shoreditch",
    "the BBC",
    "a law firm",
    "a primary school",
    "Ocado",
];
const CLASSES: &[&str] = &[
    "pottery",
    "salsa",
    "life drawing",
    "Spanish",
    "Japanese",
    "yoga",
    "bouldering",
    "woodworking",
    "photography",
    "ceramics",
    "improv",
    "sourdough",
    "watercolour",
    "choir",
    "first aid",
];
const SUBJECTS: &[&str] = &[
    "sunrise over the hills",
    "portrait of my gran",
    "bowl of lemons",
    "view from the balcony",
    "harbour at dusk",
    "fox in the snow",
    "street in the rain",
    "field of poppies",
];
const FILMS: &[&str] = &[
    "Spirited Away",
    "Past Lives",
    "Paddington 2",
    "Dune",
    "Aftersun",
    "The Holdovers",
    "Perfect Days",
    "Amélie",
    "Arrival",
    "Oppenheimer",
    "Barbie",
    "Hot Fuzz",
];
const BOOKS: &[&str] = &[
    "Tomorrow, and Tomorrow, and Tomorrow",
    "Klara and the Sun",
    "The Overstory",
    "Small Things Like These",
    "Piranesi",
    "Lessons in Chemistry",
    "A Little Life",
    "The Secret History",
    "Station Eleven",
    "Middlemarch",
    "Educated",
    "Normal People",
];
const PLANTS: &[&str] = &[
    "tomatoes",
    "sweet peas",
    "runner beans",
    "basil",
    "tulip bulbs",
    "strawberries",
    "courgettes",
    "lavender",
    "a fig tree",
    "sunflowers",
    "garlic",
    "chillies",
];
const SPORTS: &[&str] = &[
    "5-a-side",
    "netball",
    "tennis",
    "squash",
    "badminton",
    "hockey",
    "rugby",
    "padel",
];
const RACES: &[&str] = &[
    "10k",
    "half marathon",
    "parkrun",
    "triathlon",
    "trail race",
    "5k",
];
const EVENTS: &[&str] = &[
    "wedding",
    "support group",
    "gig",
    "birthday party",
    "book launch",
    "pub quiz",
    "christening",
    "leaving do",
    "charity bake sale",
    "school play",
    "art fair",
    "food festival",
];
const PAST: &[&str] = &[
    "yesterday",
    "last Friday",
    "last weekend",
    "two weeks ago",
    "on Saturday",
    "this morning",
    "last month",
    "a few days ago",
    "in May",
    "on 3 March",
    "last summer",
    "the other day",
    "last night",
    "three weeks ago",
    "on Sunday",
    "in January",
    "on 14 October",
    "last Tuesday",
    "in 2019",
    "a couple of weeks ago",
];
const FUTURE: &[&str] = &[
    "next week",
    "in June",
    "next month",
    "this weekend",
    "on Sunday",
    "in a few weeks",
    "next Saturday",
    "in September",
    "next year",
    "on 12 August",
];
const FEELINGS: &[&str] = &[
    "Honestly it was the best day I've had in ages.",
    "I'm still exhausted, to be fair.",
    "It went better than I expected!",
    "Not going to lie, I was really nervous.",
    "It was a bit of a disaster but we laughed a lot.",
    "Feeling pretty proud of myself tbh.",
    "Bit gutted about how it turned out.",
    "Such a lovely afternoon.",
    "I think I'd do it again.",
    "My legs are still aching lol.",
    "It rained the whole time, typical.",
    "Everyone seemed to enjoy it.",
];
const ACKS: &[&str] = &[
    "thanks, that helps",
    "haha yes exactly",
    "good idea, I'll try that",
    "ok will do",
    "hmm not sure about that",
    "that's really useful, thank you!",
    "yeah fair enough",
    "oh I hadn't thought of that",
    "perfect, cheers",
    "lol maybe",
];
const ADJECTIVES: &[&str] = &[
    "lovely",
    "brilliant",
    "exhausting",
    "like a lot of fun",
    "like a big step",
    "really special",
    "tough",
    "exciting",
    "like a great weekend",
];

fn person(rng: &mut Rng) -> String {
    if rng.chance(50) {
        rng.pick(NAMES).to_owned()
    } else {
        format!("my {} {}", rng.pick(RELATIONS), rng.pick(NAMES))
    }
}

/// Something the user did, first person past ("went hiking in Porto").
fn event(rng: &mut Rng) -> String {
    match rng.below(24) {
        0 => format!("went hiking in {}", rng.pick(PLACES)),
        1 => format!("ran the {} {}", rng.pick(PLACES), rng.pick(RACES)),
        2 => format!("cooked {} for {}", rng.pick(DISHES), person(rng)),
        3 => format!(
            "adopted a {} called {}",
            rng.pick(PETS),
            rng.pick(PET_NAMES)
        ),
        4 => format!("started a {} class", rng.pick(CLASSES)),
        5 => format!("painted a {}", rng.pick(SUBJECTS)),
        6 => format!("finally fixed the {}", rng.pick(OBJECTS)),
        7 => format!("booked flights to {}", rng.pick(PLACES)),
        8 => format!("visited {} in {}", person(rng), rng.pick(PLACES)),
        9 => format!("watched {} with {}", rng.pick(FILMS), person(rng)),
        10 => format!("finished reading {}", rng.pick(BOOKS)),
        11 => format!("had a job interview at {}", rng.pick(COMPANIES)),
        12 => format!("bought a second-hand {}", rng.pick(OBJECTS)),
        13 => format!("lost my {} on the bus", rng.pick(OBJECTS)),
        14 => format!("planted {} in the garden", rng.pick(PLANTS)),
        15 => format!("went to a {} in {}", rng.pick(EVENTS), rng.pick(PLACES)),
        16 => format!(
            "tried {} at a little place in {}",
            rng.pick(DISHES),
            rng.pick(PLACES)
        ),
        17 => format!("took {} to the vet", rng.pick(PET_NAMES)),
        18 => format!("gave a presentation at {}", rng.pick(COMPANIES)),
        19 => format!(
            "signed up for a {} in {}",
            rng.pick(RACES),
            rng.pick(PLACES)
        ),
        20 => format!("spent the afternoon at {}", rng.pick(VENUES)),
        21 => format!("played {} with {}", rng.pick(SPORTS), person(rng)),
        22 => format!("sold my old {}", rng.pick(OBJECTS)),
        _ => format!("met {} for coffee near {}", person(rng), rng.pick(VENUES)),
    }
}

/// Something a person around the user did ("moved to Oslo").
fn their_event(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => format!("moved to {}", rng.pick(PLACES)),
        1 => "got engaged".to_owned(),
        2 => "started school".to_owned(),
        3 => format!("adopted a {}", rng.pick(PETS)),
        4 => format!("got a job at {}", rng.pick(COMPANIES)),
        5 => "passed the driving test".to_owned(),
        6 => format!("broke a wrist playing {}", rng.pick(SPORTS)),
        7 => format!("came over and made {}", rng.pick(DISHES)),
        8 => format!("ran the {} {}", rng.pick(PLACES), rng.pick(RACES)),
        9 => format!(
            "went back to {} for a {}",
            rng.pick(PLACES),
            rng.pick(EVENTS)
        ),
        10 => format!("recommended {}", rng.pick(BOOKS)),
        _ => format!("retired from {}", rng.pick(COMPANIES)),
    }
}

fn plan(rng: &mut Rng) -> String {
    match rng.below(8) {
        0 => format!("a weekend in {}", rng.pick(PLACES)),
        1 => format!(
            "a training schedule for the {} {}",
            rng.pick(PLACES),
            rng.pick(RACES)
        ),
        2 => format!("a dinner party for {}", person(rng)),
        3 => format!("{}'s birthday", rng.pick(NAMES)),
        4 => format!("a budget for a new {}", rng.pick(OBJECTS)),
        5 => format!("the veg patch with {}", rng.pick(PLANTS)),
        6 => format!(
            "a road trip from {} to {}",
            rng.pick(PLACES),
            rng.pick(PLACES)
        ),
        _ => format!("my {} practice", rng.pick(CLASSES)),
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// One message of the user.
pub fn user_message(rng: &mut Rng) -> String {
    match rng.below(14) {
        0 | 1 => format!(
            "{} I {}. {}",
            capitalised(rng.pick(PAST)),
            event(rng),
            rng.pick(FEELINGS)
        ),
        2 | 3 => format!("I {} {}, {}", event(rng), rng.pick(PAST), {
            let f = rng.pick(FEELINGS);
            f[..1].to_lowercase() + &f[1..]
        }),
        4 => format!(
            "My {} {} {} {}",
            rng.pick(RELATIONS),
            rng.pick(NAMES),
            their_event(rng),
            rng.pick(PAST)
        ),
        5 => format!(
            "Can you help me plan {}? {} is coming too and doesn't eat {}.",
            plan(rng),
            rng.pick(NAMES),
            rng.pick(FOODS)
        ),
        6 => format!(
            "I'm thinking of {} {}, any tips?",
            match rng.below(3) {
                0 => format!("going to {}", rng.pick(PLACES)),
                1 => format!("trying a {} class", rng.pick(CLASSES)),
                _ => format!("selling my {}", rng.pick(OBJECTS)),
            },
            rng.pick(FUTURE)
        ),
        7 => format!(
            "What should I cook for {} {}? They don't eat {}.",
            person(rng),
            rng.pick(FUTURE),
            rng.pick(FOODS)
        ),
        8 => format!(
            "ok so update on {}: {} {} and honestly {} is doing much better now",
            rng.pick(PET_NAMES),
            person(rng),
            their_event(rng),
            rng.pick(PET_NAMES)
        ),
        9 => format!(
            "Do you remember the {} I mentioned? I {} {} and it reminded me of {}.",
            rng.pick(OBJECTS),
            event(rng),
            rng.pick(PAST),
            rng.pick(PLACES)
        ),
        10 => format!(
            "I've been reading {} on the train, {} recommended it",
            rng.pick(BOOKS),
            person(rng)
        ),
        11 => format!(
            "We {} {}. {}",
            event(rng).replace("my ", "our "),
            rng.pick(PAST),
            rng.pick(FEELINGS)
        ),
        _ => rng.pick(ACKS).to_owned(),
    }
}

/// One reply of the assistant.
pub fn assistant_message(rng: &mut Rng) -> String {
    match rng.below(8) {
        0 => format!(
            "That sounds {}! How did {} like it? If you go back to {}, {} is worth a visit.",
            rng.pick(ADJECTIVES),
            rng.pick(NAMES),
            rng.pick(PLACES),
            rng.pick(VENUES)
        ),
        1 => format!(
            "Sure. Here's a simple plan: start with {}, keep {} for the weekend, and leave a \
             free evening before {}.",
            rng.pick(DISHES),
            plan(rng),
            rng.pick(FUTURE)
        ),
        2 => format!(
            "Sorry to hear about the {}. It might be worth asking {} whether they still have \
             the receipt.",
            rng.pick(OBJECTS),
            rng.pick(NAMES)
        ),
        3 => format!(
            "Good luck with the {} class! Let me know how it goes {}.",
            rng.pick(CLASSES),
            rng.pick(FUTURE)
        ),
        4 => format!(
            "{} is a great choice; you could also try {} if {} wants something without {}.",
            capitalised(rng.pick(DISHES)),
            rng.pick(DISHES),
            rng.pick(NAMES),
            rng.pick(FOODS)
        ),
        5 => format!(
            "How is {} settling in? The first few weeks with a new {} can be a lot.",
            rng.pick(PET_NAMES),
            rng.pick(PETS)
        ),
        6 => format!(
            "For {} I'd book early: trains from {} fill up quickly {}.",
            rng.pick(PLACES),
            rng.pick(PLACES),
            rng.pick(FUTURE)
        ),
        _ => format!(
            "Well done! Finishing {} is no small thing. What did {} think of it?",
            rng.pick(BOOKS),
            person(rng)
        ),
    }
}

/// `n` episodes of `user` in `conversations` dated conversations spread over the two
/// years before `end` (of varied length, about `n / conversations` messages each, a
/// minute or two apart), user and assistant taking turns.
pub fn history(user: &str, n: usize, conversations: usize, end: DateTime<Utc>) -> Vec<Episode> {
    let mut rng = Rng::new(0x11FE);
    let start = end - Duration::days(730);
    let step = Duration::days(730) / conversations.max(1) as i32;
    // Varied lengths around the mean, adding up to n.
    let mean = n / conversations.max(1);
    let mut lengths: Vec<usize> = (0..conversations)
        .map(|i| (mean / 2 + (i * 37) % (mean + 1)).max(1))
        .collect();
    let total: usize = lengths.iter().sum();
    if let Some(last) = lengths.last_mut() {
        *last = (*last + n).saturating_sub(total).max(1);
    }
    let mut out = Vec::with_capacity(n);
    for (c, len) in lengths.into_iter().enumerate() {
        let conversation = format!("conversation-{c:03}");
        let mut at = start + step * c as i32 + Duration::minutes(rng.below(600) as i64);
        for i in 0..len {
            if out.len() == n {
                break;
            }
            let message = if i % 2 == 0 {
                Message::user(user_message(&mut rng))
            } else {
                Message::assistant(assistant_message(&mut rng))
            }
            .at(at);
            out.push(Episode::from_message(user, &conversation, &message));
            at += Duration::seconds(40 + rng.below(140) as i64);
        }
    }
    out
}

/// `n` distinct current facts of `user`, of the kinds the extractor learns (likes,
/// events, people around them, plans, belongings), stated over the past year.
pub fn facts(user: &str, n: usize, now: DateTime<Utc>) -> Vec<MemoryFact> {
    let mut rng = Rng::new(0xFAC7);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let (text, attribute, value, subject) = match rng.below(8) {
            0 => {
                let v = rng.pick(DISHES).trim_start_matches("a ").to_owned();
                (format!("likes {v}"), "likes", v, None)
            }
            1 => {
                let e = event(&mut rng);
                (e.clone(), "event", e, None)
            }
            2 => {
                let (r, name) = (rng.pick(RELATIONS), rng.pick(NAMES));
                let e = their_event(&mut rng);
                (
                    format!("{r} {name} {e}"),
                    "event",
                    e,
                    Some(format!("{r} {name}")),
                )
            }
            3 => {
                let v = plan(&mut rng);
                (format!("is planning {v}"), "plan", v, None)
            }
            4 => {
                let v = format!("{} {}", rng.pick(PETS), rng.pick(PET_NAMES));
                (format!("has a {v}"), "pet", v, None)
            }
            5 => {
                let v = rng.pick(OBJECTS).to_owned();
                (format!("owns a {v}"), "possession", v, None)
            }
            6 => {
                let v = format!("{} in {}", rng.pick(CLASSES), rng.pick(PLACES));
                (format!("is learning {v}"), "learning", v, None)
            }
            _ => {
                let v = rng.pick(PLACES).to_owned();
                (format!("has been to {v}"), "visited", v, None)
            }
        };
        if !seen.insert(text.clone()) {
            continue;
        }
        let said = now - Duration::minutes(rng.below(525_600) as i64);
        let mut candidate = FactCandidate::new(text, 0.6 + rng.below(40) as f32 / 100.0)
            .with_attribute(attribute, value)
            .said_at(said);
        if let Some(s) = subject {
            candidate = candidate.with_subject(s);
        }
        out.push(MemoryFact::from_candidate(user, candidate, said));
    }
    out
}

/// Messages a new turn brings: the same mix of statements, plans, questions about the
/// past and acknowledgements as the history (about one in three names a time).
pub fn incoming(n: usize) -> Vec<String> {
    let mut rng = Rng::new(0x7E57);
    (0..n)
        .map(|_| match rng.below(6) {
            0 => question(&mut rng),
            _ => user_message(&mut rng),
        })
        .collect()
}

/// A question about the user's past, naming a period about half of the time.
pub fn question(rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => format!(
            "what did I cook for {} {}?",
            rng.pick(NAMES),
            rng.pick(PAST)
        ),
        1 => format!("when did I go to {}?", rng.pick(PLACES)),
        2 => format!("how is {} doing after the vet?", rng.pick(PET_NAMES)),
        3 => "what did I do last weekend?".to_owned(),
        4 => format!(
            "remind me what {} said about {}",
            rng.pick(NAMES),
            rng.pick(PLACES)
        ),
        5 => format!("which book did I finish {}?", rng.pick(PAST)),
        6 => format!(
            "what happened with my {} {}?",
            rng.pick(OBJECTS),
            rng.pick(PAST)
        ),
        7 => format!("who did I watch {} with?", rng.pick(FILMS)),
        8 => format!("what did my {} do {}?", rng.pick(RELATIONS), rng.pick(PAST)),
        _ => format!("did I ever try the {} class?", rng.pick(CLASSES)),
    }
}

/// `n` questions that each name a period ("last weekend", "two weeks ago"): the slow
/// path of episode search, which also reads what was said in that period.
pub fn time_questions(n: usize) -> Vec<String> {
    let mut rng = Rng::new(0x71DE);
    (0..n)
        .map(|_| match rng.below(4) {
            0 => "what did I do last weekend?".to_owned(),
            1 => format!("what did I cook {}?", rng.pick(PAST)),
            2 => format!("who did I see {}?", rng.pick(PAST)),
            _ => format!("what did my {} do {}?", rng.pick(RELATIONS), rng.pick(PAST)),
        })
        .collect()
}
