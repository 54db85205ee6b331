//! Reading timestamps back fast.
//!
//! Every stored message, event and fact carries a `DateTime<Utc>`, written by chrono as
//! RFC 3339 in UTC (`2026-11-23T10:04:05.123456789Z`). chrono's general parser accepts
//! many forms and costs about as much as the rest of a message's decoding; this module
//! reads the exact form chrono writes directly and hands anything else to chrono, so
//! every form chrono accepts is still accepted.

use chrono::{DateTime, NaiveDate, Utc};
use serde::de::{self, Deserializer, Visitor};

/// Parses `s` as a UTC timestamp: the `YYYY-MM-DDTHH:MM:SS[.fraction]Z` form directly,
/// anything else through chrono.
pub(crate) fn parse(s: &str) -> Result<DateTime<Utc>, chrono::ParseError> {
    match parse_utc_z(s.as_bytes()) {
        Some(at) => Ok(at),
        None => s.parse(),
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` with 1–9 fraction digits; `None` for any other form.
fn parse_utc_z(b: &[u8]) -> Option<DateTime<Utc>> {
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    if b[13] != b':' || b[16] != b':' || *b.last()? != b'Z' {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<u32> {
        b[range].iter().try_fold(0u32, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    let year = i32::try_from(num(0..4)?).ok()?;
    let (month, day) = (num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let nanos = match &b[19..b.len() - 1] {
        [] => 0,
        [b'.', digits @ ..] if (1..=9).contains(&digits.len()) => {
            let n = num(20..20 + digits.len())?;
            n * 10u32.pow(9 - digits.len() as u32)
        }
        _ => return None,
    };
    let naive =
        NaiveDate::from_ymd_opt(year, month, day)?.and_hms_nano_opt(hour, minute, second, nanos)?;
    // A leap second (`:60`) is left to chrono, which knows its rules.
    (second < 60).then(|| naive.and_utc())
}

/// `#[serde(deserialize_with = "crate::rfc3339::deserialize")]` for `DateTime<Utc>`.
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
    d.deserialize_str(UtcVisitor)
}

/// The same for `Option<DateTime<Utc>>`.
pub(crate) fn deserialize_option<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<DateTime<Utc>>, D::Error> {
    d.deserialize_option(OptionVisitor)
}

struct UtcVisitor;

impl Visitor<'_> for UtcVisitor {
    type Value = DateTime<Utc>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an RFC 3339 timestamp")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        parse(s).map_err(E::custom)
    }
}

struct OptionVisitor;

impl<'de> Visitor<'de> for OptionVisitor {
    type Value = Option<DateTime<Utc>>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an RFC 3339 timestamp or null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        deserialize(d).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_what_chrono_writes_and_what_it_accepts() {
        for s in [
            "2026-11-23T10:04:05Z",
            "2026-11-23T10:04:05.1Z",
            "2026-11-23T10:04:05.123456Z",
            "2026-11-23T10:04:05.123456789Z",
            "2026-11-23T12:04:05.5+02:00",
            "2026-11-23 10:04:05Z",
            "2016-12-31T23:59:60Z",
            "2026-11-23T10:04:05.1234567890Z",
        ] {
            assert_eq!(parse(s).ok(), s.parse::<DateTime<Utc>>().ok(), "{s}");
            assert!(parse(s).is_ok(), "{s}");
        }
        for bad in [
            "",
            "2026-13-01T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-11-23T24:00:00Z",
            "2026-11-23T10:04:05.Z",
            "2026-11-23T1x:04:05Z",
            "yesterday",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn round_trips_any_instant(secs in 0i64..=253_402_300_799, nanos in 0u32..1_000_000_000) {
            let at = DateTime::from_timestamp(secs, nanos).unwrap();
            let written = serde_json::to_string(&at).unwrap();
            let s: String = serde_json::from_str(&written).unwrap();
            prop_assert_eq!(parse(&s).unwrap(), at);
        }
    }
}
