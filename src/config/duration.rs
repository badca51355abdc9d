//! Durations in config files: `500ms`, `90s`, `5m`, `1h`, `1h30m`. Anything
//! else ("5 minutes", "-1s", "") is an error saying what is allowed.

use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "serde_yaml::Value", into = "String")]
pub struct Dur(pub Duration);

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

const ALLOWED: &str = "expected a duration like 500ms, 90s, 5m, 1h or 1h30m";

impl TryFrom<serde_yaml::Value> for Dur {
    type Error = String;
    fn try_from(v: serde_yaml::Value) -> Result<Self, String> {
        match v {
            serde_yaml::Value::String(s) => parse_duration(&s),
            serde_yaml::Value::Number(n) => Err(format!(
                "duration `{n}` has no unit: {ALLOWED} (write {n}s for seconds)"
            )),
            other => Err(format!(
                "duration must be a string, got {other:?}: {ALLOWED}"
            )),
        }
    }
}

/// Parse `1h30m`, `90s`, `500ms`…
pub fn parse_duration(s: &str) -> Result<Dur, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err(format!("empty duration: {ALLOWED}"));
    }
    let bytes = t.as_bytes();
    let mut i = 0;
    let mut total = Duration::ZERO;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if start == i {
            return Err(format!("invalid duration `{s}`: {ALLOWED}"));
        }
        let n: u64 = t[start..i]
            .parse()
            .map_err(|_| format!("invalid duration `{s}`: number too large"))?;
        let ustart = i;
        while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
            i += 1;
        }
        let unit = match &t[ustart..i] {
            "ms" => Duration::from_millis(n),
            "s" => Duration::from_secs(n),
            "m" => Duration::from_secs(n.saturating_mul(60)),
            "h" => Duration::from_secs(n.saturating_mul(3600)),
            _ => return Err(format!("invalid duration `{s}`: {ALLOWED}")),
        };
        total += unit;
    }
    if total.is_zero() {
        return Err(format!("duration `{s}` is zero: {ALLOWED}"));
    }
    Ok(Dur(total))
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
        for bad in ["5 minutes", "", "-1s", "10", "1d", "s", "0s"] {
            assert!(parse_duration(bad).is_err(), "{bad} should be refused");
        }
    }
}
