//! Durations in config files and flags: `500ms`, `90s`, `5m`, `1h`, `1h30m`,
//! `7d`. Anything else ("5 minutes", "-1s", "") is an error saying what is
//! allowed.

use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(into = "String")]
pub struct Dur(pub Duration);

/// Read where the value is, so an error points at the value's own line
/// and column (not the mapping around it) and names what was found in
/// the user's words.
impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Dur, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(ALLOWED)
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Dur, E> {
                parse_duration(s).map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Dur, E> {
                Err(E::custom(no_unit(n)))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Dur, E> {
                Err(E::custom(no_unit(n)))
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Dur, E> {
                Err(E::custom(no_unit(n)))
            }
            refuse_other_shapes!(Dur, got);
        }
        d.deserialize_any(V)
    }
}

fn no_unit(n: impl std::fmt::Display) -> String {
    format!("duration `{n}` has no unit: {ALLOWED} (write {n}s for seconds)")
}

fn got(what: &str) -> String {
    format!("a duration must be text like 90s, got {what}: {ALLOWED}")
}

impl Dur {
    pub const fn from_secs(s: u64) -> Dur {
        Dur(Duration::from_secs(s))
    }
    pub fn get(self) -> Duration {
        self.0
    }
}

impl From<Dur> for String {
    fn from(d: Dur) -> String {
        let ms = d.0.as_millis();
        if !ms.is_multiple_of(1000) {
            format!("{ms}ms")
        } else {
            format!("{}s", ms / 1000)
        }
    }
}

const ALLOWED: &str = "expected a duration like 500ms, 90s, 5m, 1h, 1h30m or 7d";

/// The units a config may use, largest first.
const UNITS: [&str; 5] = ["d", "h", "m", "s", "ms"];

/// Parse `1h30m`, `90s`, `500ms`, `7d`…: numbers each followed by one of
/// the units `d`, `h`, `m`, `s`, `ms`, no spaces, each unit at most once
/// and from the largest to the smallest. `humantime` does the arithmetic;
/// the stricter shape is checked here so that `5 minutes` or `1h30m30m`
/// are refused. Zero is refused: a timeout of nothing is a mistake.
pub fn parse_duration(s: &str) -> Result<Dur, crate::Error> {
    let total = parse_span(s)?;
    if total.is_zero() {
        return Err(crate::Error::Invalid(format!(
            "duration `{s}` is zero: {ALLOWED}"
        )));
    }
    Ok(Dur(total))
}

/// An age, as `rascal gc --older-than` takes it: a duration of the same
/// shape as [`parse_duration`]'s, where zero (`0s`) is allowed and means
/// "any age".
pub fn parse_age(s: &str) -> Result<Duration, crate::Error> {
    parse_span(s)
}

fn parse_span(s: &str) -> Result<Duration, crate::Error> {
    let t = s.trim();
    if t.is_empty() {
        return Err(crate::Error::Invalid(format!("empty duration: {ALLOWED}")));
    }
    let mut last: Option<usize> = None;
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return Err(crate::Error::Invalid(format!(
                "invalid duration `{s}`: {ALLOWED}"
            )));
        }
        rest = &rest[digits..];
        let letters = rest.len()
            - rest
                .trim_start_matches(|c: char| c.is_ascii_alphabetic())
                .len();
        let unit = &rest[..letters];
        rest = &rest[letters..];
        let Some(rank) = UNITS.iter().position(|u| *u == unit) else {
            return Err(crate::Error::Invalid(format!(
                "invalid duration `{s}`: {ALLOWED}"
            )));
        };
        match last {
            Some(prev) if prev == rank => {
                return Err(crate::Error::Invalid(format!(
                    "invalid duration `{s}`: the unit `{unit}` appears twice; {ALLOWED}"
                )))
            }
            Some(prev) if prev > rank => {
                return Err(crate::Error::Invalid(format!(
                    "invalid duration `{s}`: `{unit}` comes after `{}`; write units from \
                     the largest to the smallest, like 1h30m",
                    UNITS[prev]
                )))
            }
            _ => last = Some(rank),
        }
    }
    let total = humantime::parse_duration(t).map_err(|e| {
        crate::Error::Invalid(match e {
            humantime::DurationError::NumberOverflow => {
                format!("invalid duration `{s}`: number too large")
            }
            e => format!("invalid duration `{s}`: {e}; {ALLOWED}"),
        })
    })?;
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_allowed_forms_and_refuses_the_rest() {
        assert_eq!(
            parse_duration("90s").unwrap().get(),
            Duration::from_secs(90)
        );
        assert_eq!(
            parse_duration("1h30m").unwrap().get(),
            Duration::from_secs(5400)
        );
        assert_eq!(
            parse_duration("250ms").unwrap().get(),
            Duration::from_millis(250)
        );
        assert_eq!(
            parse_duration("2h").unwrap().get(),
            Duration::from_secs(7200)
        );
        assert_eq!(
            parse_duration("5m").unwrap().get(),
            Duration::from_secs(300)
        );
        assert_eq!(
            parse_duration("120s").unwrap().get(),
            Duration::from_secs(120)
        );
        assert_eq!(
            parse_duration(" 1h1m1s1ms ").unwrap().get(),
            Duration::from_millis(3_661_001)
        );
        for bad in [
            "5 minutes",
            "",
            "-1s",
            "10",
            "1w",
            "s",
            "0s",
            "1.5s",
            "5min",
            "1h 30m",
            "1h30",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn days_are_a_unit_and_an_age_may_be_zero() {
        assert_eq!(
            parse_duration("7d").unwrap().get(),
            Duration::from_secs(7 * 86_400)
        );
        assert_eq!(
            parse_duration("1d12h").unwrap().get(),
            Duration::from_secs(36 * 3_600)
        );
        assert!(parse_duration("12h1d")
            .unwrap_err()
            .to_string()
            .contains("`d` comes after `h`"));
        assert_eq!(parse_age("0s").unwrap(), Duration::ZERO);
        assert_eq!(parse_age("30d").unwrap(), Duration::from_secs(30 * 86_400));
        for bad in ["", "0", "-1d", "7 days", "1w"] {
            let e = parse_age(bad).unwrap_err().to_string();
            assert!(e.contains("7d"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_unit_appears_once_and_units_go_from_large_to_small() {
        let e = parse_duration("1h30m30m").unwrap_err().to_string();
        assert!(e.contains("`m` appears twice"), "{e}");
        assert!(e.contains("1h30m30m"), "{e}");
        let e = parse_duration("30m1h").unwrap_err().to_string();
        assert!(e.contains("`h` comes after `m`"), "{e}");
        assert!(e.contains("largest to the smallest"), "{e}");
        assert!(parse_duration("5s5s").is_err());
        assert!(parse_duration("500ms1s").is_err());
        assert_eq!(
            parse_duration("1m90s").unwrap().get(),
            Duration::from_secs(150)
        );
    }

    #[test]
    fn errors_say_what_is_allowed() {
        for bad in ["5 minutes", "", "1w", "0s"] {
            let e = parse_duration(bad).unwrap_err().to_string();
            assert!(e.contains("90s") && e.contains("1h30m"), "{bad}: {e}");
        }
        let e = parse_duration("99999999999999999999h")
            .unwrap_err()
            .to_string();
        assert!(e.contains("too large"), "{e}");
    }

    #[test]
    fn written_back_in_seconds_or_milliseconds() {
        assert_eq!(String::from(parse_duration("1h30m").unwrap()), "5400s");
        assert_eq!(String::from(parse_duration("1s500ms").unwrap()), "1500ms");
    }
}
