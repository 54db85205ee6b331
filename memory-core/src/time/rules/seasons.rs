//! Seasons of the northern hemisphere, meteorological: spring is March–May, summer
//! June–August, autumn ("fall") September–November, winter December to February. "Winter
//! 2019" is the one that starts in December 2019.

use super::super::calendar::{self, season_index};
use super::super::span::midnight;
use super::super::tense::Tense;
use super::super::vocab;
use super::{At, Cx, Hit};

/// "last summer", "this winter", "next spring", "this past summer", "in (the) summer", "over
/// the summer", "early spring", "(the) summer of 2019", "summer 2019".
///
/// - "last summer": the most recent summer that is over (in July, the previous year's);
///   "next summer": the first one not yet begun.
/// - "this summer": the current one, else the nearer of the last and the next.
/// - Alone ("in the summer", "the summer"): the current one, else the last one, or the next
///   one in the future tense. A season alone needs a preposition, "the" or a modifier;
///   "fall" alone needs a preposition and "the", and is not "the fall of Rome".
pub(super) fn season(cx: &Cx<'_>, at: At) -> Option<Hit> {
    let words = cx.run(at.i, 6);
    let the = usize::from(words.first() == Some(&"the"));
    let (which, mut k) = match &words[the..] {
        ["last", ..] => (Dir::Last, the + 1),
        ["this", "past", ..] => (Dir::Last, the + 2),
        ["this", "coming", ..] => (Dir::Next, the + 2),
        ["coming" | "next", ..] => (Dir::Next, the + 1),
        ["this", ..] => (Dir::This, the + 1),
        _ => (Dir::Bare, the),
    };
    let modifier = vocab::modifier_len(words.get(k..)?);
    k += modifier;
    let (season, is_fall) = vocab::season(words.get(k)?)?;
    k += 1;
    let year = match words.get(k..)? {
        ["of", y, ..] => vocab::year4(y).map(|y| (y, 2)),
        [y, ..] => vocab::plausible_year(y).map(|y| (y, 1)),
        [] => None,
    };
    let index = if let Some((year, len)) = year {
        k += len;
        i64::from(year) * 4 + season
    } else {
        if matches!(which, Dir::Bare) {
            let led = at.cue.is_some() || the == 1 || modifier > 0;
            let fall_ok = at.cue.is_some() && the == 1 && words.get(k) != Some(&"of");
            if !led || (is_fall && !fall_ok) {
                return None;
            }
        }
        resolve(cx, at, &which, season)?
    };
    Some((at.i + k, calendar::season_at(index)?))
}

/// The index of the instance of `season` meant, relative to the current season.
fn resolve(cx: &Cx<'_>, at: At, which: &Dir, season: i64) -> Option<i64> {
    let current = season_index(cx.today);
    let last = current - (current - season).rem_euclid(4);
    let last = if last == current { last - 4 } else { last };
    let next = current + (season - current).rem_euclid(4);
    let next = if next == current { next + 4 } else { next };
    let now = current.rem_euclid(4) == season;
    Some(match which {
        Dir::Last => last,
        Dir::Next => next,
        _ if now => current,
        Dir::This => {
            let today = midnight(cx.today);
            let gap = |i: i64| calendar::season_at(i).map(|s| s.distance(today));
            if gap(next)? < gap(last)? {
                next
            } else {
                last
            }
        }
        Dir::Bare if cx.tense(at) == Tense::Future => next,
        Dir::Bare => last,
    })
}

/// Which instance the words asked for.
enum Dir {
    Last,
    This,
    Next,
    Bare,
}
