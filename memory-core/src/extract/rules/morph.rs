//! English verb morphology for the rules: the base form (lemma) of a past tense, past
//! participle, third-person or `-ing` form, and the third-person and past forms of a base.
//!
//! Irregular verbs come from a table; regular ones follow the spelling rules (consonant
//! doubling, `-ies`/`-ied`, `-es`, the silent `e`), with small tables for the exceptions
//! the rules cannot see. No crate on the registry covers both directions for English
//! with a maintained table, and the rules need only this much, so it lives here.
//!
//! ```text
//! third_person("carry") = "carries"   past("stop") = "stopped"   lemma("held") = "hold"
//! lemma("studied") = "study"          lemma("hoping") = "hope"   is_past("went") = true
//! ```

use std::borrow::Cow;

/// Irregular verbs: base, past tense, past participle.
const IRREGULAR: &[(&str, &str, &str)] = &[
    ("be", "was", "been"),
    ("have", "had", "had"),
    ("do", "did", "done"),
    ("go", "went", "gone"),
    ("get", "got", "gotten"),
    ("make", "made", "made"),
    ("take", "took", "taken"),
    ("give", "gave", "given"),
    ("see", "saw", "seen"),
    ("come", "came", "come"),
    ("know", "knew", "known"),
    ("think", "thought", "thought"),
    ("say", "said", "said"),
    ("tell", "told", "told"),
    ("find", "found", "found"),
    ("buy", "bought", "bought"),
    ("bring", "brought", "brought"),
    ("catch", "caught", "caught"),
    ("teach", "taught", "taught"),
    ("fight", "fought", "fought"),
    ("seek", "sought", "sought"),
    ("hold", "held", "held"),
    ("meet", "met", "met"),
    ("run", "ran", "run"),
    ("begin", "began", "begun"),
    ("break", "broke", "broken"),
    ("sell", "sold", "sold"),
    ("lose", "lost", "lost"),
    ("leave", "left", "left"),
    ("quit", "quit", "quit"),
    ("feel", "felt", "felt"),
    ("keep", "kept", "kept"),
    ("sleep", "slept", "slept"),
    ("sweep", "swept", "swept"),
    ("weep", "wept", "wept"),
    ("spend", "spent", "spent"),
    ("send", "sent", "sent"),
    ("lend", "lent", "lent"),
    ("bend", "bent", "bent"),
    ("build", "built", "built"),
    ("rebuild", "rebuilt", "rebuilt"),
    ("win", "won", "won"),
    ("sit", "sat", "sat"),
    ("stand", "stood", "stood"),
    ("understand", "understood", "understood"),
    ("write", "wrote", "written"),
    ("ride", "rode", "ridden"),
    ("drive", "drove", "driven"),
    ("rise", "rose", "risen"),
    ("arise", "arose", "arisen"),
    ("eat", "ate", "eaten"),
    ("fall", "fell", "fallen"),
    ("fly", "flew", "flown"),
    ("draw", "drew", "drawn"),
    ("grow", "grew", "grown"),
    ("throw", "threw", "thrown"),
    ("blow", "blew", "blown"),
    ("wear", "wore", "worn"),
    ("tear", "tore", "torn"),
    ("swear", "swore", "sworn"),
    ("choose", "chose", "chosen"),
    ("freeze", "froze", "frozen"),
    ("speak", "spoke", "spoken"),
    ("steal", "stole", "stolen"),
    ("wake", "woke", "woken"),
    ("forget", "forgot", "forgotten"),
    ("forgive", "forgave", "forgiven"),
    ("hide", "hid", "hidden"),
    ("bite", "bit", "bitten"),
    ("shake", "shook", "shaken"),
    ("mistake", "mistook", "mistaken"),
    ("sing", "sang", "sung"),
    ("ring", "rang", "rung"),
    ("drink", "drank", "drunk"),
    ("swim", "swam", "swum"),
    ("sink", "sank", "sunk"),
    ("shrink", "shrank", "shrunk"),
    ("spring", "sprang", "sprung"),
    ("pay", "paid", "paid"),
    ("lay", "laid", "laid"),
    ("mean", "meant", "meant"),
    ("hear", "heard", "heard"),
    ("lead", "led", "led"),
    ("read", "read", "read"),
    ("feed", "fed", "fed"),
    ("bleed", "bled", "bled"),
    ("breed", "bred", "bred"),
    ("flee", "fled", "fled"),
    ("put", "put", "put"),
    ("cut", "cut", "cut"),
    ("hit", "hit", "hit"),
    ("hurt", "hurt", "hurt"),
    ("let", "let", "let"),
    ("set", "set", "set"),
    ("upset", "upset", "upset"),
    ("shut", "shut", "shut"),
    ("cost", "cost", "cost"),
    ("beat", "beat", "beaten"),
    ("bet", "bet", "bet"),
    ("split", "split", "split"),
    ("spread", "spread", "spread"),
    ("cast", "cast", "cast"),
    ("broadcast", "broadcast", "broadcast"),
    ("shoot", "shot", "shot"),
    ("light", "lit", "lit"),
    ("slide", "slid", "slid"),
    ("stick", "stuck", "stuck"),
    ("strike", "struck", "struck"),
    ("swing", "swung", "swung"),
    ("hang", "hung", "hung"),
    ("dig", "dug", "dug"),
    ("spin", "spun", "spun"),
    ("become", "became", "become"),
    ("overcome", "overcame", "overcome"),
    ("undergo", "underwent", "undergone"),
    ("withdraw", "withdrew", "withdrawn"),
    ("awake", "awoke", "awoken"),
    ("bind", "bound", "bound"),
    ("deal", "dealt", "dealt"),
    ("kneel", "knelt", "knelt"),
    ("forbid", "forbade", "forbidden"),
    ("undo", "undid", "undone"),
    ("redo", "redid", "redone"),
    ("oversleep", "overslept", "overslept"),
    ("shine", "shone", "shone"),
    ("weave", "wove", "woven"),
    ("sew", "sewed", "sewn"),
    ("show", "showed", "shown"),
    ("prove", "proved", "proven"),
    ("outgrow", "outgrew", "outgrown"),
    ("retake", "retook", "retaken"),
    ("rewrite", "rewrote", "rewritten"),
];

/// Common regular verbs, for telling an auxiliary "do" ("I do like jazz") from a main
/// one ("I do yoga", "I did well").
const COMMON_REGULAR: &[&str] = &[
    "like",
    "love",
    "want",
    "hate",
    "enjoy",
    "need",
    "live",
    "work",
    "play",
    "try",
    "hope",
    "agree",
    "care",
    "mind",
    "miss",
    "remember",
    "believe",
    "prefer",
    "use",
    "study",
    "cook",
    "travel",
    "watch",
    "listen",
    "call",
    "help",
    "ask",
    "walk",
    "move",
    "start",
    "stop",
    "finish",
    "change",
    "plan",
    "visit",
    "wish",
    "look",
    "seem",
    "happen",
    "appreciate",
    "understand",
    "mean",
    "plan",
    "own",
    "learn",
    "stay",
    "join",
    "decide",
    "manage",
    "wonder",
];

/// Whether `word` is the base form of a verb the tables know ("go", "like"): after "do",
/// such a word is the main verb and "do" its auxiliary.
pub(crate) fn is_known_base(word: &str) -> bool {
    IRREGULAR.iter().any(|(b, _, _)| *b == word) || COMMON_REGULAR.contains(&word)
}

/// Other past forms of a base: British spellings and plural `were`.
const OTHER_PASTS: &[(&str, &str)] = &[
    ("were", "be"),
    ("learnt", "learn"),
    ("burnt", "burn"),
    ("dreamt", "dream"),
    ("spelt", "spell"),
    ("spilt", "spill"),
    ("smelt", "smell"),
    ("leapt", "leap"),
    ("got", "get"),
];

/// Irregular present forms: third person and other persons of `be`.
const IRREGULAR_PRESENT: &[(&str, &str)] = &[
    ("is", "be"),
    ("am", "be"),
    ("are", "be"),
    ("has", "have"),
    ("does", "do"),
    ("goes", "go"),
];

#[cfg_attr(not(test), allow(dead_code))]
/// Bases whose past and `-ing` forms double the final consonant though they have more
/// than one syllable (the stress is on the last one).
const DOUBLING: &[&str] = &[
    "prefer", "refer", "confer", "defer", "admit", "commit", "submit", "permit", "omit", "emit",
    "occur", "recur", "incur", "regret", "control", "patrol", "compel", "propel", "expel", "excel",
    "rebel", "equip", "transfer", "upset", "begin", "forget",
];

/// Stems (a regular form without `-ed`/`-ing`) that take back a silent `e` where the
/// spelling rules alone would not restore it.
const STEMS_WITH_E: &[&str] = &[
    "creat", "recreat", "invit", "unit", "excit", "recit", "ignit", "incit", "expedit", "guid",
    "quot", "promot", "devot", "compil", "complet", "delet", "compet", "absolv", "achiev",
    "believ", "receiv", "deceiv", "perceiv", "reliev", "griev", "retriev",
];

/// Stems that keep no `e` where the spelling rules would add one.
const STEMS_WITHOUT_E: &[&str] = &[
    "color",
    "colour",
    "honor",
    "honour",
    "labor",
    "labour",
    "favor",
    "favour",
    "anchor",
    "harbor",
    "harbour",
    "flavor",
    "flavour",
    "mentor",
    "tutor",
    "doctor",
    "author",
    "monitor",
    "censor",
    "sponsor",
    "motor",
    "humor",
    "humour",
    "rumor",
    "armor",
    "endeavor",
    "endeavour",
    "focus",
    "bias",
    "pilot",
    "pivot",
    "visit",
    "edit",
    "limit",
    "credit",
    "exhibit",
    "inherit",
    "orbit",
    "profit",
    "audit",
    "benefit",
    "vomit",
    "deposit",
    "solicit",
    "merit",
    "interpret",
    "develop",
    "gallop",
    "envelop",
    "gossip",
    "worship",
    "kidnap",
    "bang",
    "hang",
    "belong",
    "long",
    "wrong",
    "sing",
    "ring",
    "bring",
    "swing",
    "cook",
    "look",
    "book",
    "hook",
    "open",
    "happen",
    "listen",
    "threaten",
    "fasten",
    "travel",
    "cancel",
];

/// Bases that end in a doubled consonant of their own ("add" → "added").
const DOUBLE_FINAL: &[&str] = &[
    "add",
    "odd",
    "egg",
    "err",
    "purr",
    "buzz",
    "fizz",
    "install",
    "uninstall",
    "recall",
    "distill",
    "instill",
    "enroll",
    "fulfill",
    "stall",
    "spell",
    "spill",
    "fill",
    "kill",
    "call",
    "pull",
    "roll",
    "smell",
    "yell",
    "sell",
    "tell",
    "fall",
    "dwell",
    "drill",
    "thrill",
    "chill",
    "grill",
    "spill",
    "swell",
    "poll",
    "troll",
    "stroll",
    "shell",
    "bless",
    "press",
    "dress",
    "miss",
    "pass",
    "kiss",
    "guess",
    "cross",
    "toss",
    "boss",
    "stuff",
    "sniff",
    "staff",
    "bluff",
    "puff",
];

fn is_vowel(c: u8) -> bool {
    matches!(c, b'a' | b'e' | b'i' | b'o' | b'u')
}

/// Vowel groups: an estimate of syllables ("visit" 2, "hope" 1 with its silent `e`).
fn syllables(word: &str) -> usize {
    let b = word.as_bytes();
    let mut groups = 0;
    let mut in_vowel = false;
    for (i, &c) in b.iter().enumerate() {
        let vowel = is_vowel(c) || (c == b'y' && i > 0);
        if vowel && !in_vowel {
            groups += 1;
        }
        in_vowel = vowel;
    }
    if groups > 1 && word.ends_with('e') && !word.ends_with("le") {
        groups -= 1;
    }
    groups.max(1)
}

/// Whether a base ends consonant-vowel-consonant (the consonant not w, x or y), so a
/// suffix starting with a vowel may double it.
fn ends_cvc(word: &str) -> bool {
    let b = word.as_bytes();
    let n = b.len();
    if n < 3 {
        return false;
    }
    let (pp, p, c) = (b[n - 3], b[n - 2], b[n - 1]);
    // "qu" and "gu" sound as consonants: "quit", "guide".
    let pp_consonant = !is_vowel(pp) || (pp == b'u' && n >= 4 && matches!(b[n - 4], b'q' | b'g'));
    pp_consonant && is_vowel(p) && !is_vowel(c) && !matches!(c, b'w' | b'x' | b'y')
}

/// The third-person singular present of `base`: "go" → "goes", "carry" → "carries",
/// "watch" → "watches", "have" → "has".
pub(crate) fn third_person(base: &str) -> String {
    if let Some((form, _)) = IRREGULAR_PRESENT
        .iter()
        .find(|(form, b)| *b == base && *form != "am" && *form != "are")
    {
        return (*form).to_owned();
    }
    let b = base.as_bytes();
    let n = b.len();
    if n > 1 && b[n - 1] == b'y' && !is_vowel(b[n - 2]) {
        return format!("{}ies", &base[..n - 1]);
    }
    if ["s", "sh", "ch", "x", "z", "o"]
        .iter()
        .any(|e| base.ends_with(e))
    {
        return format!("{base}es");
    }
    format!("{base}s")
}

// Generation of past forms is what checks the lemma rules in both directions (see the
// round-trip test); the rules themselves only read past forms so far.
#[cfg_attr(not(test), allow(dead_code))]
/// The past tense of `base`: "hold" → "held", "stop" → "stopped", "try" → "tried",
/// "bake" → "baked", "prefer" → "preferred".
pub(crate) fn past(base: &str) -> String {
    if let Some((_, p, _)) = IRREGULAR.iter().find(|(b, _, _)| *b == base) {
        return (*p).to_owned();
    }
    let b = base.as_bytes();
    let n = b.len();
    if base.ends_with('e') {
        return format!("{base}d");
    }
    if n > 1 && b[n - 1] == b'y' && !is_vowel(b[n - 2]) {
        return format!("{}ied", &base[..n - 1]);
    }
    if ends_cvc(base) && (syllables(base) == 1 || DOUBLING.contains(&base)) {
        return format!("{base}{}ed", b[n - 1] as char);
    }
    format!("{base}ed")
}

/// Whether `stem` (a regular form less its `-ed` or `-ing`, undoubled) takes back a silent
/// `e`: "hop" → "hope", "danc" → "dance", "continu" → "continue", but "visit", "open".
fn restores_e(stem: &str) -> bool {
    if STEMS_WITH_E.contains(&stem) {
        return true;
    }
    if STEMS_WITHOUT_E.contains(&stem) {
        return false;
    }
    let b = stem.as_bytes();
    let n = b.len();
    if n < 2 {
        return false;
    }
    let (p, c) = (b[n - 2], b[n - 1]);
    match c {
        b'u' => return true,
        b'v' => return true,
        b'c' => return p != b'c',
        b'z' => return p != b'z',
        b's' => return p != b's',
        b'g' => {
            return match p {
                b'd' | b'r' | b'l' => true,
                b'n' => n >= 3 && matches!(b[n - 3], b'a' | b'e' | b'u'),
                _ => false,
            }
        }
        b'h' if p == b't' => return true,
        b'l' if !is_vowel(p) && !matches!(p, b'l' | b'r' | b'w') => return true,
        _ => {}
    }
    if stem.ends_with("iat") || stem.ends_with("uat") {
        return true;
    }
    if !ends_cvc(stem) {
        return false;
    }
    if syllables(stem) == 1 {
        return true;
    }
    const WITH_E_ENDINGS: &[&str] = &[
        "ib", "id", "ad", "od", "ud", "ut", "ur", "ir", "ar", "or", "ap", "um", "in", "ok", "ot",
        "at", "ol", "ul", "iz", "ys",
    ];
    WITH_E_ENDINGS.iter().any(|e| stem.ends_with(e))
}

/// The base of a regular form whose suffix (`-ed`, `-ing`) left `stem`: undoubles a
/// doubled final consonant ("stopp" → "stop"), restores a silent `e` ("hop" → "hope").
fn regular_base(stem: &str) -> String {
    let b = stem.as_bytes();
    let n = b.len();
    if n >= 3 && b[n - 1] == b[n - 2] && !is_vowel(b[n - 1]) {
        if DOUBLE_FINAL.contains(&stem) || matches!(b[n - 1], b's' | b'f' | b'z') {
            return stem.to_owned();
        }
        // "called" keeps its "ll"; "travelled" does not.
        if b[n - 1] == b'l' && syllables(stem) < 2 {
            return stem.to_owned();
        }
        return stem[..n - 1].to_owned();
    }
    if restores_e(stem) {
        format!("{stem}e")
    } else {
        stem.to_owned()
    }
}

/// `-ed` words that are not past tenses.
const NOT_PAST_ED: &[&str] = &[
    "need",
    "feed",
    "seed",
    "bleed",
    "breed",
    "speed",
    "proceed",
    "succeed",
    "exceed",
    "embed",
    "shed",
    "bed",
    "red",
    "wed",
    "sled",
    "naked",
    "wicked",
    "sacred",
    "hundred",
    "kindred",
    "rugged",
    "beloved",
    "ragged",
    "bred",
    "led",
    "fed",
    "fled",
    "sped",
    "weed",
    "deed",
    "heed",
    "reed",
    "steed",
    "greed",
    "tweed",
    "indeed",
    "bored",
    "tired",
    "scared",
    "interested",
    "excited",
    "worried",
    "married",
    "used",
    "supposed",
    "based",
    "stressed",
    "confused",
    "obsessed",
    "relaxed",
    "annoyed",
    "pleased",
    "surprised",
    "amazed",
    "shocked",
    "disappointed",
    "exhausted",
    "engaged",
    "retired",
    "divorced",
    "separated",
    "widowed",
    "related",
    "qualified",
    "skilled",
    "experienced",
];

/// `-eed` words that are past tenses of `-ee` verbs.
const PAST_EED: &[&str] = &[
    "agreed",
    "disagreed",
    "freed",
    "guaranteed",
    "decreed",
    "refereed",
];

/// Whether `word` is a past tense (irregular from the table, or regular `-ed`): "went",
/// "held", "painted", "adopted"; not "need", "tired" or "married", which read as
/// adjectives or bases.
pub(crate) fn is_past(word: &str) -> bool {
    if IRREGULAR.iter().any(|(_, p, _)| *p == word) || OTHER_PASTS.iter().any(|(p, _)| *p == word) {
        return true;
    }
    word.len() > 3
        && word.ends_with("ed")
        && word.bytes().all(|c| c.is_ascii_lowercase())
        && !NOT_PAST_ED.contains(&word)
        && (!word.ends_with("eed") || PAST_EED.contains(&word))
}

/// Whether `word` is an irregular past participle that is no past tense: "gone",
/// "taken", "given" ("I've gone vegan" said as "gone vegan").
pub(crate) fn is_participle_only(word: &str) -> bool {
    IRREGULAR
        .iter()
        .any(|(b, p, pp)| *pp == word && *p != word && *b != word)
}

/// The base form of a verb form: "held" → "hold", "studied" → "study", "stopped" →
/// "stop", "hoping" → "hope", "lives" → "live", "watches" → "watch", "has" → "have".
/// A word that is no inflected form it recognises comes back unchanged.
pub(crate) fn lemma(word: &str) -> Cow<'_, str> {
    if let Some((b, _, _)) = IRREGULAR
        .iter()
        .find(|(_, p, pp)| *p == word || *pp == word)
    {
        return Cow::Borrowed(b);
    }
    if let Some((_, b)) = OTHER_PASTS
        .iter()
        .chain(IRREGULAR_PRESENT)
        .find(|(p, _)| *p == word)
    {
        return Cow::Borrowed(b);
    }
    let n = word.len();
    if n > 4 && word.ends_with("ied") {
        return Cow::Owned(format!("{}y", &word[..n - 3]));
    }
    if n <= 4 && word.ends_with("ied") {
        // "died", "lied", "tied".
        return Cow::Borrowed(&word[..n - 1]);
    }
    if PAST_EED.contains(&word) {
        return Cow::Borrowed(&word[..n - 1]);
    }
    if n > 3 && word.ends_with("ed") && !word.ends_with("eed") {
        return Cow::Owned(regular_base(&word[..n - 2]));
    }
    if n > 4 && word.ends_with("ing") {
        let stem = &word[..n - 3];
        if stem.ends_with('y') && stem.len() == 2 {
            // "dying", "lying", "tying".
            return Cow::Owned(format!("{}ie", &stem[..1]));
        }
        return Cow::Owned(regular_base(stem));
    }
    if n > 3 && word.ends_with("ies") {
        return Cow::Owned(format!("{}y", &word[..n - 3]));
    }
    if n > 3
        && ["shes", "ches", "xes", "zes", "sses"]
            .iter()
            .any(|e| word.ends_with(e))
    {
        return Cow::Borrowed(&word[..n - 2]);
    }
    if n > 3 && word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        return Cow::Borrowed(&word[..n - 1]);
    }
    Cow::Borrowed(word)
}

/// The base of a third-person present form only ("lives" → "live", "is" → "be"); any
/// other word comes back unchanged. For reading "my sister lives in Bath" as "live in".
pub(crate) fn present_base(word: &str) -> Option<Cow<'_, str>> {
    if let Some((_, b)) = IRREGULAR_PRESENT.iter().find(|(p, _)| *p == word) {
        return Some(Cow::Borrowed(b));
    }
    let plausible = word.len() > 2
        && word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("'s")
        && word.bytes().all(|c| c.is_ascii_lowercase());
    plausible.then(|| lemma(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn third_person_spelling() {
        for (base, form) in [
            ("carry", "carries"),
            ("play", "plays"),
            ("watch", "watches"),
            ("fix", "fixes"),
            ("go", "goes"),
            ("do", "does"),
            ("have", "has"),
            ("be", "is"),
            ("hold", "holds"),
            ("support", "supports"),
            ("use", "uses"),
            ("push", "pushes"),
        ] {
            assert_eq!(third_person(base), form, "{base}");
        }
    }

    #[test]
    fn past_spelling() {
        for (base, form) in [
            ("hold", "held"),
            ("stop", "stopped"),
            ("plan", "planned"),
            ("try", "tried"),
            ("play", "played"),
            ("bake", "baked"),
            ("prefer", "preferred"),
            ("visit", "visited"),
            ("open", "opened"),
            ("fix", "fixed"),
            ("go", "went"),
            ("buy", "bought"),
            ("adopt", "adopted"),
        ] {
            assert_eq!(past(base), form, "{base}");
        }
    }

    #[test]
    fn lemmas_of_irregular_and_regular_forms() {
        for (form, base) in [
            ("went", "go"),
            ("gone", "go"),
            ("bought", "buy"),
            ("held", "hold"),
            ("gave", "give"),
            ("given", "give"),
            ("took", "take"),
            ("made", "make"),
            ("saw", "see"),
            ("met", "meet"),
            ("ran", "run"),
            ("began", "begin"),
            ("broke", "break"),
            ("sold", "sell"),
            ("lost", "lose"),
            ("left", "leave"),
            ("quit", "quit"),
            ("got", "get"),
            ("found", "find"),
            ("studied", "study"),
            ("stopped", "stop"),
            ("planned", "plan"),
            ("hoped", "hope"),
            ("liked", "like"),
            ("danced", "dance"),
            ("continued", "continue"),
            ("moved", "move"),
            ("changed", "change"),
            ("belonged", "belong"),
            ("judged", "judge"),
            ("used", "use"),
            ("raised", "raise"),
            ("handled", "handle"),
            ("called", "call"),
            ("travelled", "travel"),
            ("added", "add"),
            ("passed", "pass"),
            ("visited", "visit"),
            ("opened", "open"),
            ("created", "create"),
            ("graduated", "graduate"),
            ("celebrated", "celebrate"),
            ("treated", "treat"),
            ("decided", "decide"),
            ("adopted", "adopt"),
            ("painted", "paint"),
            ("retired", "retire"),
            ("explored", "explore"),
            ("colored", "color"),
            ("examined", "examine"),
            ("promoted", "promote"),
            ("invited", "invite"),
            ("walked", "walk"),
            ("cooked", "cook"),
            ("agreed", "agree"),
            ("died", "die"),
            ("playing", "play"),
            ("running", "run"),
            ("making", "make"),
            ("hoping", "hope"),
            ("writing", "write"),
            ("visiting", "visit"),
            ("eating", "eat"),
            ("lying", "lie"),
            ("using", "use"),
            ("lives", "live"),
            ("watches", "watch"),
            ("studies", "study"),
            ("goes", "go"),
            ("has", "have"),
            ("is", "be"),
            ("loves", "love"),
        ] {
            assert_eq!(lemma(form), base, "{form}");
        }
    }

    #[test]
    fn past_forms_and_words_that_only_look_like_them() {
        for w in [
            "went", "held", "painted", "adopted", "bought", "agreed", "tried",
        ] {
            assert!(is_past(w), "{w}");
        }
        for w in [
            "need", "tired", "married", "red", "indeed", "feed", "go", "even", "well",
        ] {
            assert!(!is_past(w), "{w}");
        }
    }

    #[test]
    fn round_trips_never_grow_an_s_or_lose_a_letter() {
        for base in [
            "hold", "give", "stop", "try", "bake", "visit", "open", "create", "dance", "judge",
            "continue", "move", "plan", "study", "paint", "adopt", "call", "travel", "pass",
        ] {
            assert_eq!(lemma(&past(base)), base, "past of {base}");
            assert_eq!(lemma(&third_person(base)), base, "third person of {base}");
        }
    }
}
