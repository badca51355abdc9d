//! Container settings of an agent for the docker launcher: memory size
//! (`512m`, `2g`), cpus, pids, network, read-only root filesystem, image
//! pulling and keeping containers. Defaults are hardened; loosening is
//! explicit config.

use serde::{Deserialize, Serialize};

/// A size in bytes written as `64m`, `512MiB`, `2g`, `1048576`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(into = "String")]
pub struct ByteSize(pub u64);

/// Read where the value is, so an error points at the value's own line
/// and column and names what was found in the user's words.
impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ByteSize, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ByteSize;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(ALLOWED)
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<ByteSize, E> {
                parse_size(s).map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<ByteSize, E> {
                Ok(ByteSize(n))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<ByteSize, E> {
                Err(E::custom(format!("size `{n}`: {ALLOWED}")))
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<ByteSize, E> {
                Err(E::custom(format!("size `{n}`: {ALLOWED}")))
            }
            refuse_other_shapes!(ByteSize, got);
        }
        d.deserialize_any(V)
    }
}

fn got(what: &str) -> String {
    format!("a size must be text like 512m or a number, got {what}: {ALLOWED}")
}

const ALLOWED: &str = "expected a size like 512m, 2g, 64MiB or a number of bytes";

impl ByteSize {
    pub fn get(self) -> u64 {
        self.0
    }

    /// `64.0 MiB`, `2.0 GiB`: for messages.
    pub fn human(self) -> String {
        bytesize::ByteSize::b(self.0).display().iec().to_string()
    }
}

impl From<ByteSize> for String {
    fn from(b: ByteSize) -> String {
        b.0.to_string()
    }
}

/// Parse `512m`, `2g`, `64MiB`, `100k`, `1048576`. As for Docker, `k`, `m`
/// and `g` (and `kb`, `mb`, `gb`) are binary units; `bytesize` would read
/// them as powers of ten, so only its unit sizes are used here.
pub fn parse_size(s: &str) -> Result<ByteSize, crate::Error> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits == 0 {
        return Err(crate::Error::Invalid(format!("size `{s}`: {ALLOWED}")));
    }
    let n: u64 = t[..digits]
        .parse()
        .map_err(|_| crate::Error::Invalid(format!("size `{s}` is too large")))?;
    let unit = t[digits..].trim().to_ascii_lowercase();
    let mult: u64 = match unit.as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => bytesize::KIB,
        "m" | "mb" | "mib" => bytesize::MIB,
        "g" | "gb" | "gib" => bytesize::GIB,
        _ => {
            return Err(crate::Error::Invalid(format!(
                "size `{s}` has an unknown unit `{unit}`: {ALLOWED}"
            )))
        }
    };
    n.checked_mul(mult)
        .map(ByteSize)
        .ok_or_else(|| crate::Error::Invalid(format!("size `{s}` is too large")))
}

/// Where a container's network goes.
pub const DEFAULT_NETWORK: &str = "bridge";
pub const DEFAULT_MEMORY: ByteSize = ByteSize(2 << 30);
pub const DEFAULT_CPUS: f64 = 2.0;
pub const DEFAULT_PIDS: i64 = 512;
/// Docker refuses memory limits below 6 MiB.
pub const MIN_MEMORY: u64 = 6 << 20;

/// What is wrong with an agent's container settings, if anything.
pub fn problem(a: &super::AgentConfig) -> Option<String> {
    if let Some(m) = a.memory {
        if m.get() < MIN_MEMORY {
            return Some(format!(
                "`memory: {}` is below Docker's minimum of 6m",
                m.human()
            ));
        }
    }
    if let Some(c) = a.cpus {
        if !(c > 0.0 && c <= 1024.0) {
            return Some(format!(
                "`cpus: {c}` must be a positive number like 0.5 or 2"
            ));
        }
    }
    if let Some(p) = a.pids {
        if p < 1 {
            return Some(format!("`pids: {p}` must be at least 1"));
        }
    }
    if let Some(n) = &a.network {
        if n.trim().is_empty() {
            return Some(format!(
                "`network: {}` is not allowed: use none, host (process launcher), bridge or a named network",
                &**n
            ));
        }
        if let Err(e) = n.allowlist(a.runtime) {
            return Some(e.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units_and_bad_ones_say_what_is_allowed() {
        for (s, want) in [
            ("512m", 512u64 << 20),
            ("2g", 2 << 30),
            ("64MiB", 64 << 20),
            ("100k", 100 << 10),
            ("4096", 4096),
        ] {
            assert_eq!(parse_size(s).unwrap().get(), want, "{s}");
        }
        for bad in ["", "m", "12 parsecs", "-1m", "99999999999999999999g"] {
            let e = parse_size(bad).unwrap_err().to_string();
            assert!(e.contains("size"), "{bad}: {e}");
        }
        assert_eq!(parse_size(" 2 GiB ").unwrap().get(), 2 << 30);
        assert_eq!(
            parse_size("1kb").unwrap().get(),
            1024,
            "k is binary, as for Docker"
        );
        assert!(parse_size("1.5g").is_err(), "whole numbers only");
        assert!(parse_size("1t")
            .unwrap_err()
            .to_string()
            .contains("unknown unit `t`"));
        assert_eq!(ByteSize(64 << 20).human(), "64.0 MiB");
        assert_eq!(ByteSize(2 << 30).human(), "2.0 GiB");
        assert_eq!(ByteSize(1536).human(), "1.5 KiB");
        assert_eq!(ByteSize(512).human(), "512 B");
        assert_eq!(ByteSize(1 << 20).human(), "1.0 MiB");
    }
}
