//! An agent's `network:` setting: the string forms (`none`, `bridge`, a
//! named docker network, `host` for the process launcher), `default` (the
//! runtime's own list of model-API hosts) and the allowlist form
//! `{ allow: [host, host:port, *.suffix], on_refused: warn | fail,
//! on_host_open: warn | fail }`, which
//! lets the agent reach those hosts through rascal's egress proxy and
//! nothing else. Pure: parsing, checking and the per-runtime default lists.

use super::RuntimeKind;
use serde::{Deserialize, Serialize};

/// What an agent's `network:` says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(into = "serde_yaml::Value")]
pub enum NetworkSetting {
    /// `none`, `bridge`, `host` or a named docker network, as before.
    Mode(String),
    /// `default`: the runtime's default allowlist, refused connections warn.
    Default,
    /// `{ allow: [...], on_refused: warn | fail }`.
    Allow(Allowlist),
}

/// The allowlist form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allowlist {
    /// `host` (port 443), `host:port`, `*.suffix` (any subdomain, not the
    /// suffix itself), an IP literal `10.0.0.5:8080` (the only way a
    /// private address is allowed), or `default` (the runtime's list).
    pub allow: Vec<String>,
    #[serde(default)]
    pub on_refused: OnRefused,
    /// When rascal cannot close the host's own services to the agent
    /// (docker: no iptables, or not root): `warn` runs it with a warning
    /// on the agent layer, `fail` refuses to start it.
    #[serde(default)]
    pub on_host_open: OnRefused,
}

/// What a refused connection does to the agent's verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnRefused {
    /// A warning on the agent layer.
    #[default]
    Warn,
    /// A failure of the agent layer.
    Fail,
}

/// The hosts each model CLI needs (port 443), used for `network: default`
/// and for `default` inside an `allow:` list.
pub fn runtime_defaults(runtime: RuntimeKind) -> Option<&'static [&'static str]> {
    match runtime {
        RuntimeKind::Claude => Some(&["api.anthropic.com", "statsig.anthropic.com"]),
        RuntimeKind::Codex => Some(&["api.openai.com", "auth.openai.com", "chatgpt.com"]),
        RuntimeKind::Goose => Some(&[
            "api.anthropic.com",
            "api.openai.com",
            "generativelanguage.googleapis.com",
            "openrouter.ai",
        ]),
        RuntimeKind::Command | RuntimeKind::Scripted => None,
    }
}

const FORMS: &str = "use none, bridge, host (process launcher), a named network, default, or { allow: [api.example.com, \"host:port\", \"*.example.com\"], on_refused: warn | fail }";

impl NetworkSetting {
    /// The mode in words: `none`, `bridge`, `host`, a network's name, or
    /// `allowlist` for both allowlist forms.
    pub fn mode(&self) -> &str {
        match self {
            NetworkSetting::Mode(m) => m,
            NetworkSetting::Default | NetworkSetting::Allow(_) => "allowlist",
        }
    }

    /// The allowlist this setting means for `runtime` (None for the
    /// string modes), with `default` expanded; an error when the runtime
    /// has no default list.
    pub fn allowlist(
        &self,
        runtime: RuntimeKind,
    ) -> Result<Option<(Vec<String>, OnRefused)>, crate::Error> {
        let (entries, on_refused) = match self {
            NetworkSetting::Mode(_) => return Ok(None),
            NetworkSetting::Default => (vec!["default".to_string()], OnRefused::Warn),
            NetworkSetting::Allow(a) => (a.allow.clone(), a.on_refused),
        };
        let mut out = Vec::new();
        for e in entries {
            if e == "default" {
                let list = runtime_defaults(runtime).ok_or_else(|| {
                    crate::Error::Invalid(format!(
                        "`network: default` needs a runtime with a default list (claude, codex, goose), not `{}`; write `network: {{ allow: [api.example.com] }}`",
                        format!("{runtime:?}").to_lowercase()
                    ))
                })?;
                out.extend(list.iter().map(|h| h.to_string()));
            } else {
                out.push(e);
            }
        }
        out.dedup();
        Ok(Some((out, on_refused)))
    }

    /// What an open host does (see [`Allowlist::on_host_open`]).
    pub fn on_host_open(&self) -> OnRefused {
        match self {
            NetworkSetting::Allow(a) => a.on_host_open,
            _ => OnRefused::Warn,
        }
    }

    /// Whether this is one of the allowlist forms.
    pub fn is_allowlist(&self) -> bool {
        !matches!(self, NetworkSetting::Mode(_))
    }
}

/// The string forms read as before: `agent.network.as_deref() == Some("host")`.
impl std::ops::Deref for NetworkSetting {
    type Target = str;
    fn deref(&self) -> &str {
        self.mode()
    }
}

impl From<&str> for NetworkSetting {
    fn from(s: &str) -> Self {
        if s == "default" {
            NetworkSetting::Default
        } else {
            NetworkSetting::Mode(s.to_string())
        }
    }
}

impl From<NetworkSetting> for serde_yaml::Value {
    fn from(n: NetworkSetting) -> Self {
        match n {
            NetworkSetting::Mode(m) => serde_yaml::Value::String(m),
            NetworkSetting::Default => serde_yaml::Value::String("default".into()),
            NetworkSetting::Allow(a) => serde_yaml::to_value(a).unwrap_or_default(),
        }
    }
}

/// Read where the value is, so an error points at the value (or, in an
/// allowlist, at the entry) and names what was found in the user's words.
impl<'de> Deserialize<'de> for NetworkSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<NetworkSetting, D::Error> {
        use serde::de::Error;
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = NetworkSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(FORMS)
            }
            fn visit_str<E: Error>(self, s: &str) -> Result<NetworkSetting, E> {
                let t = s.trim();
                if t.is_empty() {
                    return Err(E::custom(format!("`network:` is empty: {FORMS}")));
                }
                Ok(NetworkSetting::from(t))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<NetworkSetting, A::Error> {
                let a = Allowlist::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                for entry in &a.allow {
                    if entry != "default" {
                        check_entry(entry).map_err(A::Error::custom)?;
                    }
                }
                if a.allow.is_empty() {
                    return Err(A::Error::custom(format!(
                        "`network: {{ allow: [] }}` allows nothing: write `network: none` for no network, or list hosts ({FORMS})"
                    )));
                }
                Ok(NetworkSetting::Allow(a))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                _: A,
            ) -> Result<NetworkSetting, A::Error> {
                Err(A::Error::custom(format!("`network:` got a list: {FORMS}")))
            }
            fn visit_bool<E: Error>(self, b: bool) -> Result<NetworkSetting, E> {
                Err(E::custom(format!("`network:` got `{b}`: {FORMS}")))
            }
            fn visit_u64<E: Error>(self, n: u64) -> Result<NetworkSetting, E> {
                Err(E::custom(format!("`network:` got `{n}`: {FORMS}")))
            }
            fn visit_i64<E: Error>(self, n: i64) -> Result<NetworkSetting, E> {
                Err(E::custom(format!("`network:` got `{n}`: {FORMS}")))
            }
            fn visit_f64<E: Error>(self, n: f64) -> Result<NetworkSetting, E> {
                Err(E::custom(format!("`network:` got `{n}`: {FORMS}")))
            }
            fn visit_unit<E: Error>(self) -> Result<NetworkSetting, E> {
                Err(E::custom(format!(
                    "`network:` got nothing (an empty value): {FORMS}"
                )))
            }
        }
        d.deserialize_any(V)
    }
}

/// Is `entry` a well-formed allowlist entry? (`host`, `host:port`,
/// `*.suffix[:port]`, `[v6]:port`, `v4:port`.)
pub fn check_entry(entry: &str) -> Result<(), crate::Error> {
    parse_entry(entry).map(|_| ())
}

/// One allowlist entry, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Lowercase, no trailing dot; without the `*.` of a wildcard.
    pub host: String,
    /// `*.host`: any name below `host`, not `host` itself.
    pub wildcard: bool,
    pub port: u16,
    /// The host is an IP literal.
    pub ip: Option<std::net::IpAddr>,
}

/// Parse an allowlist entry; the error says what is wrong and what is allowed.
pub fn parse_entry(entry: &str) -> Result<Entry, crate::Error> {
    let bad = |why: &str| {
        crate::Error::Invalid(format!("allowlist entry `{entry}` {why}: write host, host:port, *.example.com or an IP literal with its port"))
    };
    let e = entry.trim();
    if e.is_empty() {
        return Err(bad("is empty"));
    }
    let (host, port) = split_host_port(e).map_err(|w| bad(&w.to_string()))?;
    let port = port.unwrap_or(443);
    if port == 0 {
        return Err(bad("has port 0"));
    }
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(Entry {
            host: ip.to_string(),
            wildcard: false,
            port,
            ip: Some(ip),
        });
    }
    let (wildcard, name) = match host.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, host.as_str()),
    };
    let name = normal_name(name).ok_or_else(|| bad("is not a host name"))?;
    if wildcard && !name.contains('.') {
        return Err(bad("is a wildcard over a whole top-level domain"));
    }
    Ok(Entry {
        host: name,
        wildcard,
        port,
        ip: None,
    })
}

/// Split `host[:port]` / `[v6][:port]`; the port parsed when present.
pub fn split_host_port(s: &str) -> Result<(String, Option<u16>), crate::Error> {
    if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest
            .split_once(']')
            .ok_or_else(|| crate::Error::Invalid("has `[` without `]`".into()))?;
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .and_then(|p| p.parse::<u16>().ok())
                    .ok_or_else(|| crate::Error::Invalid("has a bad port".into()))?,
            ),
        };
        return Ok((h.to_string(), port));
    }
    match s.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => {
            let port = p
                .parse::<u16>()
                .map_err(|_| crate::Error::Invalid(format!("has a bad port `{p}`")))?;
            Ok((h.to_string(), Some(port)))
        }
        // A bare IPv6 literal.
        Some(_) => Ok((s.to_string(), None)),
        None => Ok((s.to_string(), None)),
    }
}

/// A host name in its one comparable form (lowercase, no trailing dot),
/// or None when it is not a plain DNS name (labels of letters, digits and
/// hyphens; no empty label; at most 253 bytes).
pub fn normal_name(name: &str) -> Option<String> {
    let n = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    if n.is_empty() || n.len() > 253 {
        return None;
    }
    let ok = n.split('.').all(|l| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    });
    ok.then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(y: &str) -> Result<NetworkSetting, String> {
        serde_yaml::from_str::<NetworkSetting>(y).map_err(|e| e.to_string())
    }

    #[test]
    fn string_forms_still_read_and_deref_to_their_mode() {
        for m in ["none", "bridge", "host", "my-net"] {
            let n = parse(m).unwrap();
            assert_eq!(&*n, m);
            assert!(!n.is_allowlist());
            assert_eq!(n.allowlist(RuntimeKind::Claude).unwrap(), None);
        }
        assert!(parse("\"\"").unwrap_err().contains("empty"));
    }

    #[test]
    fn default_expands_to_the_runtime_list_and_says_when_there_is_none() {
        let n = parse("default").unwrap();
        assert_eq!(n, NetworkSetting::Default);
        assert_eq!(&*n, "allowlist");
        let (list, on) = n.allowlist(RuntimeKind::Claude).unwrap().unwrap();
        assert!(list.contains(&"api.anthropic.com".to_string()));
        assert_eq!(on, OnRefused::Warn);
        let e = n.allowlist(RuntimeKind::Command).unwrap_err().to_string();
        assert!(e.contains("network: { allow"), "{e}");
        for r in [RuntimeKind::Claude, RuntimeKind::Codex, RuntimeKind::Goose] {
            for h in runtime_defaults(r).unwrap() {
                parse_entry(h).unwrap();
            }
        }
    }

    #[test]
    fn the_mapping_form_is_strict_and_checks_every_entry() {
        let n = parse("{ allow: [default, \"*.githubusercontent.com\", \"api.openai.com:443\"], on_refused: fail }").unwrap();
        let (list, on) = n.allowlist(RuntimeKind::Codex).unwrap().unwrap();
        assert_eq!(on, OnRefused::Fail);
        assert_eq!(n.on_host_open(), OnRefused::Warn);
        let strict = parse("{ allow: [a.example], on_host_open: fail }").unwrap();
        assert_eq!(strict.on_host_open(), OnRefused::Fail);
        assert!(parse("{ allow: [a.example], on_host_open: never }").is_err());
        assert_eq!(NetworkSetting::Default.on_host_open(), OnRefused::Warn);
        assert!(list.contains(&"api.openai.com".to_string()));
        assert!(list.contains(&"*.githubusercontent.com".to_string()));
        assert!(parse("{ allow: [a.example], on_refused: maybe }").is_err());
        assert!(parse("{ allow: [a.example], extra: 1 }")
            .unwrap_err()
            .contains("extra"));
        assert!(parse("{ allow: [] }")
            .unwrap_err()
            .contains("allows nothing"));
        for bad in [
            "\"a b\"",
            "\"*.com\"",
            "\"x:99999\"",
            "\"x:0\"",
            "\"evil.example/path\"",
            "\"[::1\"",
        ] {
            let e = parse(&format!("{{ allow: [{bad}] }}")).unwrap_err();
            assert!(e.contains("allowlist entry"), "{bad}: {e}");
        }
        // Round trip.
        let back: NetworkSetting =
            serde_yaml::from_str(&serde_yaml::to_string(&n).unwrap()).unwrap();
        assert_eq!(back, n);
    }

    #[test]
    fn entries_parse_to_one_comparable_form() {
        let e = parse_entry("API.Example.COM.").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.wildcard),
            ("api.example.com", 443, false)
        );
        let e = parse_entry("*.example.com:8443").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.wildcard),
            ("example.com", 8443, true)
        );
        let e = parse_entry("10.1.2.3:8080").unwrap();
        assert_eq!(e.ip, Some("10.1.2.3".parse().unwrap()));
        let e = parse_entry("[::1]:8080").unwrap();
        assert_eq!(e.ip, Some("::1".parse().unwrap()));
        assert_eq!(e.port, 8080);
    }
}
