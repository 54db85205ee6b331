//! A small, realistic corpus that every backend must rank alike, documents and facts:
//! inflected words (stemming), upper case, accents, CJK and emoji.

/// `(id, text)` of each document; as facts, the same texts.
pub(crate) const TEXTS: &[(&str, &str)] = &[
    ("d01", "Ana lives in Lisbon and loves living by the sea"),
    ("d02", "She lived in PARIS for three years before moving"),
    ("d03", "Her brother is moving to Zürich next spring"),
    ("d04", "Crème brûlée is her favourite dessert at the café"),
    ("d05", "She drinks coffee every morning, never tea"),
    ("d06", "The cafe near the office serves great espresso"),
    ("d07", "我住在北京，每天骑自行车上班"),
    ("d08", "北京烤鸭很好吃"),
    ("d09", "She is learning Japanese to visit 東京 next year"),
    ("d10", "Running marathons is her weekend hobby 🏃"),
    ("d11", "She ran the Lisbon marathon in 2023"),
    ("d12", "Her daughter Zoe plays the piano and the violin"),
    ("d13", "Zoe's piano teacher lives in Porto"),
    ("d14", "She is allergic to peanuts and shellfish"),
    ("d15", "Peanut butter cookies are banned at home"),
    ("d16", "The team moved the weekly meeting to Thursday"),
];

/// Queries whose top 3 every backend must agree on, with the text (by id) each must
/// rank first: what the shared analysis promises whatever the backend.
pub(crate) const QUERIES: &[(&str, &str)] = &[
    ("where does she live?", "d01"),
    ("Paris", "d02"),
    ("zurich", "d03"),
    ("creme brulee", "d04"),
    ("Café ESPRESSO", "d06"),
    ("北京", "d08"),
    ("东京 東京", "d09"),
    ("marathon running", "d10"),
    ("does Zoe play the violin?", "d12"),
    ("peanut allergy", "d14"),
    ("🏃", "d10"),
    ("moving plans", "d03"),
];
