//! Character classes the analyser treats specially: CJK scripts and emoji.

/// Whether `c` belongs to a script written without spaces between words (Han, Hiragana,
/// Katakana) or whose words carry attached particles (Hangul); such runs are indexed as
/// overlapping character bigrams.
pub(super) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xF900..=0xFAFF    // CJK Compatibility Ideographs
        | 0x31F0..=0x31FF    // Katakana Phonetic Extensions
        | 0xFF66..=0xFF9F    // Halfwidth Katakana
        | 0x1100..=0x11FF    // Hangul Jamo
        | 0x3130..=0x318F    // Hangul Compatibility Jamo
        | 0xAC00..=0xD7AF    // Hangul Syllables
        | 0x20000..=0x2FA1F  // CJK Extensions B–F, Compatibility Supplement
    )
}

/// Whether `c` is a pictographic character (emoji, symbols and pictographs, dingbats,
/// regional indicators of flags).
pub(super) fn is_pictographic(c: char) -> bool {
    matches!(c as u32,
        0x1F000..=0x1FAFF    // Mahjong … Symbols and Pictographs Extended-A (incl. flags)
        | 0x2600..=0x27BF    // Miscellaneous Symbols, Dingbats
        | 0x2300..=0x23FF    // Miscellaneous Technical (⌚, ⏰)
        | 0x2B00..=0x2BFF    // Arrows and shapes (⭐, ⬛)
        | 0x2190..=0x21FF    // Arrows
        | 0x3030 | 0x303D | 0x3297 | 0x3299
        | 0x00A9 | 0x00AE | 0x203C | 0x2049 | 0x2122 | 0x2139
    )
}

/// Whether `c` only modifies the emoji before it (variation selectors, skin tones), so
/// 👍🏽 and 👍 index as the same term.
pub(super) fn is_emoji_modifier(c: char) -> bool {
    matches!(c as u32, 0xFE00..=0xFE0F | 0x1F3FB..=0x1F3FF)
}
