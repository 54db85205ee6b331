//! Word lists the rules consult. Kept apart so the rules read as grammar, not data.

/// Openers with no content: dropped from the front of a clause.
pub(crate) const FILLERS: &[&str] = &[
    "hi", "hello", "hey", "heya", "well", "so", "oh", "ah", "um", "uh", "honestly", "btw",
    "also", "and", "but", "anyway", "anyways", "actually", "yeah", "yes", "yep", "ok", "okay",
    "fyi", "ps", "plus", "now", "basically", "sure", "right", "lol", "haha", "originally",
    "currently", "personally", "really", "recently", "nowadays",
];

/// Multi-word openers with no content.
pub(crate) const FILLER_PHRASES: &[&[&str]] = &[
    &["by", "the", "way"],
    &["to", "be", "honest"],
    &["fun", "fact"],
    &["just", "so", "you", "know"],
    &["for", "what", "it", "is", "worth"],
];

/// A sentence opening like this is a hypothetical or a question: nothing in it is a fact.
pub(crate) const NON_ASSERTIVE_OPENERS: &[&str] = &[
    "if", "imagine", "suppose", "supposing", "assuming", "hypothetically", "unless", "maybe",
    "perhaps", "do", "does", "did", "can", "could", "would", "will", "should", "shall", "is",
    "are", "am", "was", "were", "what", "where", "when", "who", "whom", "whose", "why", "how",
    "which", "wouldn't", "pretend", "say",
];

/// Adverbs dropped around the verb: "I really love", "I'm currently living in".
pub(crate) const ADVERBS: &[&str] = &[
    "really", "absolutely", "just", "currently", "also", "totally", "actually", "honestly",
    "truly", "genuinely", "still", "definitely", "originally", "always", "remotely", "mostly",
    "mainly", "seriously", "kinda", "quite", "pretty", "so", "now", "recently", "finally",
    "literally", "certainly", "sincerely", "deeply", "personally", "generally", "usually",
];

/// Words that may precede the verb: auxiliaries and negations.
pub(crate) const AUXILIARIES: &[&str] = &[
    "am", "do", "does", "did", "have", "has", "not", "never", "no", "longer", "can", "will",
    "would", "could", "should", "might", "may", "been", "was", "had", "must",
];

/// Modal or past openers: what follows is not a current fact about the user.
pub(crate) const NON_FACTUAL_HEADS: &[&str] = &[
    "would", "could", "should", "might", "may", "will", "must", "wish", "wonder", "wondered",
    "was", "were", "had", "used", "guess", "suppose", "imagine", "think", "thought", "feel",
    "mean", "meant", "need", "needed", "hope", "wanted", "asked", "said", "told", "heard",
    "saw", "forgot", "remember",
];

/// "I'm <Word>" is not a name when the word is one of these.
pub(crate) const NOT_NAMES: &[&str] = &[
    "tired", "happy", "sorry", "fine", "looking", "good", "great", "ok", "okay", "here",
    "back", "done", "ready", "sure", "glad", "new", "busy", "bored", "hungry", "sick",
    "excited", "confused", "lost", "stuck", "curious", "interested", "home", "in", "on",
    "not", "so", "very", "just", "going", "trying", "thinking", "wondering", "well", "alright",
    "afraid", "free", "late", "early", "awake", "sad", "angry", "stressed", "worried", "cold",
    "hot", "right", "wrong", "off", "out", "almost", "also", "still", "always", "never",
    "american", "british", "english", "french", "german", "spanish", "italian", "canadian",
    "australian", "irish", "scottish", "welsh", "dutch", "swedish", "chinese", "japanese",
    "korean", "indian", "mexican", "brazilian", "russian", "polish", "greek", "turkish",
    "vegan", "vegetarian", "allergic", "married", "single", "retired", "pregnant", "unemployed",
    "gay", "straight", "catholic", "jewish", "muslim", "hindu", "buddhist", "atheist", "human",
    "online", "sorry", "thankful", "grateful", "fed", "exhausted", "fine", "cool", "it",
];

/// Family relations (the `family` attribute).
pub(crate) const RELATIONS: &[&str] = &[
    "wife", "husband", "partner", "spouse", "son", "daughter", "kid", "kids", "child",
    "children", "boy", "boys", "girl", "girls", "brother", "brothers", "sister", "sisters",
    "mother", "mom", "mum", "father", "dad", "grandmother", "grandma", "granny", "grandfather",
    "grandpa", "fiance", "fiancé", "fiancee", "fiancée", "girlfriend", "boyfriend", "twins",
    "baby", "babies", "niece", "nephew", "uncle", "aunt", "cousin", "sons", "daughters",
    "stepson", "stepdaughter", "grandson", "granddaughter", "grandchildren", "grandkids",
    "siblings", "parents",
];

/// Pet species (the `pet` attribute).
pub(crate) const PETS: &[&str] = &[
    "dog", "dogs", "cat", "cats", "puppy", "puppies", "kitten", "kittens", "hamster",
    "hamsters", "parrot", "parrots", "rabbit", "rabbits", "bunny", "horse", "horses", "fish",
    "goldfish", "turtle", "turtles", "snake", "lizard", "ferret", "bird", "birds", "budgie",
    "gecko", "tortoise", "pony", "chickens", "hedgehog", "rat", "rats", "mouse", "mice",
];

/// Counting words accepted before a relation or pet ("two kids", "3 cats").
pub(crate) const COUNTS: &[&str] = &[
    "a", "an", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "twin", "several", "some", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10",
];

/// Diets one *is* ("I'm vegan").
pub(crate) const DIETS: &[&str] = &[
    "vegetarian", "vegan", "pescatarian", "pescetarian", "plant-based", "keto", "kosher",
    "halal", "paleo", "flexitarian", "teetotal",
];

/// "I'm a/an X" is not a job when X starts with one of these.
pub(crate) const NOT_JOBS: &[&str] = &[
    "bit", "little", "lot", "fan", "big", "huge", "massive", "person", "morning", "night",
    "fan", "kind", "sort", "total", "bit", "fast", "slow", "quick", "good", "bad", "great",
    "terrible", "real", "proud", "happy", "new", "first", "beginner", "fool", "mess", "wreck",
    "few", "couple", "member", "part", "type", "native", "huge", "man", "woman", "guy", "girl",
    "boy", "human", "mom", "dad", "mother", "father", "parent", "vegetarian", "vegan",
];

/// "I want to X": these X are requests to the assistant, not goals.
pub(crate) const REQUEST_VERBS: &[&str] = &[
    "know", "ask", "see", "check", "find", "understand", "say", "tell", "talk", "chat", "book",
    "order", "cancel", "change", "discuss", "continue", "stop", "figure", "clarify", "confirm",
    "add", "remove", "delete", "show", "hear", "read", "watch", "try", "make", "go", "eat",
    "get", "have", "share", "thank", "mention", "note", "be", "do", "send", "write", "use",
    "look", "compare", "report", "complain",
];

/// Values that are pronouns or question words: no fact can hang on them.
pub(crate) const EMPTY_VALUES: &[&str] = &[
    "it", "that", "this", "them", "you", "him", "her", "those", "these", "what", "how", "when",
    "where", "why", "if", "whether", "something", "anything", "nothing", "everything",
    "everyone", "anyone", "one", "so", "there", "here", "me", "us", "my", "your", "his",
    "their", "our", "its", "which", "who", "all", "any", "none", "both", "stuff", "things",
];

/// Phrases trimmed from the end of a value, repeatedly: "jazz a lot" → "jazz".
pub(crate) const TRAILING_FILLERS: &[&str] = &[
    "every now and then",
    "now and then",
    "from time to time",
    "sometimes",
    "very much",
    "so much",
    "a lot",
    "a ton",
    "too",
    "as well",
    "also",
    "at all",
    "much",
    "anymore",
    "any more",
    "though",
    "lol",
    "haha",
    "now",
    "right now",
    "these days",
    "nowadays",
    "lately",
    "at the moment",
    "currently",
    "last year",
    "this year",
    "next year",
    "last month",
    "next month",
    "this month",
    "in general",
    "honestly",
    "really",
    "either",
    "actually",
    "tbh",
    "please",
    "for now",
    "for a while",
    "a bit",
    "a little",
    "fluently",
    "well",
    "for sure",
    "i guess",
    "i think",
    "of course",
    "recently",
    "anyway",
];
