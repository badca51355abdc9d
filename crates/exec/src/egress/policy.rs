//! The egress decisions, as pure functions: may this agent open a tunnel
//! to `host:port` (judged on the name, before anything is resolved), and
//! may the addresses that name resolved to be connected to (public ones
//! only, unless the allowlist names the address itself or the resolver
//! pinned it).

use rascal_core::config::network::{normal_name, parse_entry, split_host_port, Entry};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Where a client asked to go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// Lowercase name without trailing dot, or the IP literal's text.
    pub host: String,
    pub port: u16,
    pub ip: Option<IpAddr>,
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.ip {
            Some(IpAddr::V6(_)) => write!(f, "[{}]:{}", self.host, self.port),
            _ => write!(f, "{}:{}", self.host, self.port),
        }
    }
}

/// Parse a CONNECT authority (`host:port`, `[v6]:port`) or, with
/// `default_port`, an absolute URI's authority. Anything that is not a
/// plain DNS name or an IP literal is an error (no user info, no
/// percent-escapes, no numeric shorthand like `2130706433` or `0x7f.1`).
pub(crate) fn parse_target(
    authority: &str,
    default_port: Option<u16>,
) -> crate::error::Result<Target> {
    let a = authority.trim();
    if a.is_empty() || a.contains('@') || a.contains('%') || a.contains('/') {
        return Err(crate::Error::Config(format!(
            "`{}` is not host:port",
            rascal_core::text::cut(a, 100)
        )));
    }
    let (host, port) = split_host_port(a)?;
    let port = port
        .or(default_port)
        .ok_or_else(|| crate::Error::Config(format!("`{a}` has no port")))?;
    if port == 0 {
        return Err(crate::Error::Config(format!("`{a}` has port 0")));
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(Target {
            host: ip.to_string(),
            port,
            ip: Some(ip),
        });
    }
    let name = normal_name(&host)
        .ok_or_else(|| crate::Error::Config(format!("`{host}` is not a host name")))?;
    // The system resolver reads all-numeric names (`2130706433`, `127.1`,
    // `0x7f.0.0.1`) as addresses; a DNS name's last label is never numeric.
    let last = name.rsplit('.').next().unwrap_or("");
    if last.bytes().all(|b| b.is_ascii_digit()) || last.starts_with("0x") {
        return Err(crate::Error::Config(format!(
            "`{host}` is an address written as a name; ask for the address itself"
        )));
    }
    Ok(Target {
        host: name,
        port,
        ip: None,
    })
}

/// An agent's allowlist, parsed once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlist {
    entries: Vec<Entry>,
    /// The entries as written, for reports.
    pub written: Vec<String>,
}

impl Allowlist {
    pub fn new(entries: &[String]) -> crate::error::Result<Allowlist> {
        Ok(Allowlist {
            entries: entries
                .iter()
                .map(|e| parse_entry(e))
                .collect::<Result<_, _>>()?,
            written: entries.to_vec(),
        })
    }

    /// The entry that allows `t`, judged on the name and port alone.
    fn matching(&self, t: &Target) -> Option<&Entry> {
        self.entries.iter().find(|e| {
            e.port == t.port
                && match (e.ip, t.ip) {
                    (Some(a), Some(b)) => a == b,
                    (None, None) if e.wildcard => {
                        t.host.len() > e.host.len() + 1
                            && t.host.ends_with(&e.host)
                            && t.host.as_bytes()[t.host.len() - e.host.len() - 1] == b'.'
                    }
                    (None, None) => e.host == t.host,
                    _ => false,
                }
        })
    }
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Not on the allowlist.
    NotAllowed,
    /// An IP literal that no entry names.
    AddressLiteral,
    /// The name resolved to a private, loopback, link-local or otherwise
    /// non-public address.
    PrivateAddress(IpAddr),
    /// The name did not resolve.
    Unresolved(String),
    /// The request was not a well-formed CONNECT or absolute URI.
    Malformed(String),
    /// The TLS hello inside the tunnel names another host (fronting).
    TlsName(String),
    /// The TLS hello inside a tunnel to a name names no host.
    TlsNoName,
    /// The TLS hello hides its real name (Encrypted Client Hello).
    TlsEncrypted,
    /// The client's first bytes look like TLS but are no readable hello.
    TlsMalformed(String),
    /// The client sent nothing to judge in a tunnel before the deadline
    /// (or closed it first): a tunnel never carries unjudged bytes.
    Silent(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotAllowed => f.write_str("not on the allowlist"),
            Refusal::AddressLiteral => {
                f.write_str("an IP address that the allowlist does not name")
            }
            Refusal::PrivateAddress(ip) => write!(
                f,
                "it resolves to {ip}, a non-public address (name the address in the allowlist to allow it)"
            ),
            Refusal::Unresolved(e) => write!(f, "it did not resolve: {e}"),
            Refusal::Malformed(e) => write!(f, "malformed request: {e}"),
            Refusal::TlsName(n) => write!(f, "the TLS name is {n}"),
            Refusal::TlsNoName => f.write_str(
                "the TLS hello names no host (a tunnel to a name must say it, or the server may serve another)",
            ),
            Refusal::TlsEncrypted => f.write_str(
                "the TLS hello hides its real name (Encrypted Client Hello), which could be another host",
            ),
            Refusal::TlsMalformed(e) => write!(f, "an unreadable TLS hello: {e}"),
            Refusal::Silent(e) => write!(
                f,
                "{e}: nothing to judge, so nothing is carried (a tunnel's first bytes must be a TLS hello naming its host, or another protocol's opening)"
            ),
        }
    }
}

/// What the client's first bytes in a tunnel to `t` say: a TLS hello must
/// name `t`'s host (so an allowlisted front cannot carry a hello for
/// another host behind the same server: domain fronting), must name one
/// when `t` is a name, and must not hide its name (ECH). Bytes that are
/// not TLS pass (the allowlist is of host:port; what a client speaks to an
/// allowed port is its own), and so does a client that sent nothing.
pub(crate) fn judge_hello(t: &Target, hello: &crate::egress::tls::Hello) -> Result<(), Refusal> {
    use crate::egress::tls::Hello;
    match hello {
        Hello::NotTls | Hello::Incomplete => Ok(()),
        Hello::Malformed(e) => Err(Refusal::TlsMalformed(e.clone())),
        Hello::ClientHello {
            encrypted: true, ..
        } => Err(Refusal::TlsEncrypted),
        Hello::ClientHello { sni: Some(n), .. } if *n != t.host => Err(Refusal::TlsName(n.clone())),
        Hello::ClientHello { sni: None, .. } if t.ip.is_none() => Err(Refusal::TlsNoName),
        Hello::ClientHello { .. } => Ok(()),
    }
}

/// What the allowlist says about `t` before anything is resolved:
/// Ok(explicit) when allowed, where `explicit` means an entry names the
/// address itself (so it may be private).
pub(crate) fn judge_name(list: &Allowlist, t: &Target) -> Result<bool, Refusal> {
    match list.matching(t) {
        Some(e) => Ok(e.ip.is_some()),
        None if t.ip.is_some() => Err(Refusal::AddressLiteral),
        None => Err(Refusal::NotAllowed),
    }
}

/// The addresses a name resolved to that may be connected to: all of them
/// must be public unless `explicit` (a literal named by the allowlist, or
/// an address the resolver was told to pin); one non-public answer refuses
/// the name (a mixed answer is how rebinding attacks start).
pub(crate) fn judge_addresses(addrs: &[IpAddr], explicit: bool) -> Result<Vec<IpAddr>, Refusal> {
    if addrs.is_empty() {
        return Err(Refusal::Unresolved("no addresses".into()));
    }
    if !explicit {
        if let Some(bad) = addrs.iter().find(|a| !is_public(**a)) {
            return Err(Refusal::PrivateAddress(*bad));
        }
    }
    Ok(addrs.to_vec())
}

/// Whether `ip` is a globally routable unicast address (not loopback,
/// private, link-local, carrier-grade NAT, multicast, documentation,
/// benchmarking, reserved, unspecified, or an IPv6 form of one of these).
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let o = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_documentation()
        || o[0] == 0
        || (o[0] == 100 && (o[1] & 0xc0) == 64) // 100.64/10 CGNAT
        || (o[0] == 192 && o[1] == 0 && o[2] == 0) // 192.0.0/24 protocol assignments
        || (o[0] == 198 && (o[1] & 0xfe) == 18) // 198.18/15 benchmarking
        || o[0] >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) embed an IPv4 address.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        return is_public_v4(Ipv4Addr::new(
            (s[6] >> 8) as u8,
            s[6] as u8,
            (s[7] >> 8) as u8,
            s[7] as u8,
        ));
    }
    if s[0] == 0x2002 {
        return is_public_v4(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00 // unique local
        || (s[0] & 0xffc0) == 0xfe80 // link-local
        || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || s[..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible, deprecated
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(e: &[&str]) -> Allowlist {
        Allowlist::new(&e.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    fn t(s: &str) -> Target {
        parse_target(s, None).unwrap()
    }

    #[test]
    fn names_match_exactly_or_below_a_wildcard_on_the_listed_port() {
        let l = list(&[
            "api.anthropic.com",
            "api.openai.com:8443",
            "*.githubusercontent.com",
        ]);
        let cases = [
            ("api.anthropic.com:443", true),
            ("API.Anthropic.com.:443", true),
            ("api.anthropic.com:80", false),
            ("api.anthropic.com.evil.example:443", false),
            ("evilapi.anthropic.com:443", false),
            ("api.openai.com:8443", true),
            ("api.openai.com:443", false),
            ("raw.githubusercontent.com:443", true),
            ("a.b.githubusercontent.com:443", true),
            ("githubusercontent.com:443", false),
            ("evilgithubusercontent.com:443", false),
            ("evil.example:443", false),
        ];
        for (target, want) in cases {
            assert_eq!(judge_name(&l, &t(target)).is_ok(), want, "{target}");
        }
        assert_eq!(
            judge_name(&l, &t("evil.example:443")),
            Err(Refusal::NotAllowed)
        );
    }

    #[test]
    fn address_literals_are_refused_unless_named_and_then_may_be_private() {
        let l = list(&["api.anthropic.com", "10.1.2.3:8080", "[fd00::1]:443"]);
        for lit in [
            "10.1.2.3:443",
            "127.0.0.1:443",
            "[::1]:443",
            "169.254.169.254:80",
            "1.1.1.1:443",
        ] {
            assert_eq!(
                judge_name(&l, &t(lit)),
                Err(Refusal::AddressLiteral),
                "{lit}"
            );
        }
        assert_eq!(judge_name(&l, &t("10.1.2.3:8080")), Ok(true));
        assert_eq!(judge_name(&l, &t("[fd00::1]:443")), Ok(true));
        assert_eq!(judge_name(&l, &t("api.anthropic.com:443")), Ok(false));
    }

    #[test]
    fn malformed_and_disguised_targets_are_errors() {
        for bad in [
            "",
            "api.anthropic.com",
            "user@api.anthropic.com:443",
            "api%2eanthropic.com:443",
            "a b:443",
            "x:0",
            "x:65536",
            "2130706433:443",
            "127.1:443",
            "0x7f.1:443",
            "api.anthropic.com/x:443",
            "[::1:443",
        ] {
            assert!(parse_target(bad, None).is_err(), "{bad:?}");
        }
        assert_eq!(parse_target("example.com", Some(80)).unwrap().port, 80);
    }

    #[test]
    fn only_public_addresses_pass_unless_explicit() {
        let private = [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "0.1.2.3",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "198.18.0.1",
            "192.0.0.8",
            "192.0.2.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "fc00::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2002:a00:1::",
            "2001:db8::1",
            "::127.0.0.1",
        ];
        for a in private {
            let ip: IpAddr = a.parse().unwrap();
            assert!(!is_public(ip), "{a}");
            assert!(matches!(
                judge_addresses(&[ip], false),
                Err(Refusal::PrivateAddress(_))
            ));
            assert_eq!(judge_addresses(&[ip], true), Ok(vec![ip]));
        }
        for a in [
            "1.1.1.1",
            "8.8.8.8",
            "2606:4700::1111",
            "::ffff:1.1.1.1",
            "64:ff9b::101:101",
        ] {
            assert!(is_public(a.parse().unwrap()), "{a}");
        }
        let mixed: Vec<IpAddr> = vec!["1.1.1.1".parse().unwrap(), "127.0.0.1".parse().unwrap()];
        assert!(
            judge_addresses(&mixed, false).is_err(),
            "one private answer refuses the name"
        );
        assert!(judge_addresses(&[], true).is_err());
    }

    #[test]
    fn a_tunnels_tls_hello_must_name_its_connect_host() {
        use crate::egress::tls::{client_hello, sample_hello};
        let api = t("api.example.com:443");
        let hello = |n: Option<&str>| client_hello(&sample_hello(n, &[]));
        assert_eq!(judge_hello(&api, &hello(Some("api.example.com"))), Ok(()));
        assert_eq!(judge_hello(&api, &hello(Some("API.example.com."))), Ok(()));
        let r = judge_hello(&api, &hello(Some("evil.example"))).unwrap_err();
        assert_eq!(r.to_string(), "the TLS name is evil.example");
        // A name below a wildcard is still not the CONNECT host.
        let r = judge_hello(&api, &hello(Some("x.api.example.com"))).unwrap_err();
        assert_eq!(r, Refusal::TlsName("x.api.example.com".into()));
        assert_eq!(judge_hello(&api, &hello(None)), Err(Refusal::TlsNoName));
        let ech = client_hello(&sample_hello(Some("api.example.com"), &[(0xfe0d, vec![0])]));
        assert_eq!(judge_hello(&api, &ech), Err(Refusal::TlsEncrypted));
        assert!(matches!(
            judge_hello(&api, &client_hello(&[0x16, 0x03, 0x01, 0, 0])),
            Err(Refusal::TlsMalformed(_))
        ));
        // Not TLS, or nothing: the port's own business.
        assert_eq!(
            judge_hello(&api, &client_hello(b"GET / HTTP/1.0\r\n")),
            Ok(())
        );
        assert_eq!(judge_hello(&api, &client_hello(b"")), Ok(()));
        // An IP literal: no name is fine, a name is not.
        let ip = t("10.1.2.3:443");
        assert_eq!(judge_hello(&ip, &hello(None)), Ok(()));
        assert!(judge_hello(&ip, &hello(Some("evil.example"))).is_err());
    }
}
