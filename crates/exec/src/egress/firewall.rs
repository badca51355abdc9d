//! The host firewall of a run's egress network. Docker's `Internal: true`
//! stops forwarding off the bridge, not traffic *to* the host: through the
//! gateway (the host end of the bridge) a container reaches every host
//! service listening on 0.0.0.0 or [::] — a dev database, a DNS resolver
//! (an exfiltration channel), the engine's TCP API. So each run's bridge
//! gets a chain of rascal's own, `RASCAL-<hash>`, in iptables and ip6tables,
//! jumped to from `INPUT` for packets coming in on that bridge: it accepts
//! TCP to each candidate's proxy port on the gateway (from the candidate's
//! address once it is known) and rejects everything else with a TCP reset
//! or port-unreachable, so a probe fails at once. Chains whose name does
//! not start with `RASCAL-` are never touched.
//!
//! The rules are built by pure functions; [`Firewall`] runs them through
//! the `iptables`/`ip6tables` programs (`-w`: wait for the xtables lock).

use std::net::IpAddr;

/// Every chain rascal makes starts with this.
pub(crate) const CHAIN_PREFIX: &str = "RASCAL-";
/// The bridges of the networks rascal makes start with this.
pub(crate) const BRIDGE_PREFIX: &str = "rsc-";
/// The bridge name option of Docker's bridge driver.
pub(crate) const BRIDGE_OPTION: &str = "com.docker.network.bridge.name";

/// The bridge of run `run`'s network: `rsc-` and 11 hex digits of the
/// run id's digest (Linux allows 15 characters).
pub fn bridge_name(run: &str) -> String {
    format!("{BRIDGE_PREFIX}{}", &rascal_core::digest::digest(run)[..11])
}

/// The chain for `bridge`: `RASCAL-<hash>` for rascal's bridges,
/// `RASCAL-br-<id>` for a network made before bridges had names.
pub fn chain_name(bridge: &str) -> String {
    format!(
        "{CHAIN_PREFIX}{}",
        bridge.strip_prefix(BRIDGE_PREFIX).unwrap_or(bridge)
    )
}

/// Is `name` an interface name rascal may hand to iptables?
pub(crate) fn valid_bridge(name: &str) -> bool {
    name.len() <= 15
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// Whether a [`Firewall`] error says only that this host has no iptables,
/// or that rascal may not use it: then no rascal of this user can have
/// installed a chain there either.
pub fn unavailable(err: &(impl std::fmt::Display + ?Sized)) -> bool {
    let err = err.to_string();
    err.contains("is not installed")
        || err.contains("Permission denied")
        || err.contains("you must be root")
}

/// IPv4 (iptables) or IPv6 (ip6tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    V4,
    V6,
}

impl Family {
    fn reject_other(self) -> &'static str {
        match self {
            Family::V4 => "icmp-port-unreachable",
            Family::V6 => "icmp6-port-unreachable",
        }
    }
}

fn strings(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

/// The rules at the end of a chain: everything not accepted above them is
/// rejected (TCP with a reset, the rest with port-unreachable).
pub(crate) fn reject_rules(family: Family) -> Vec<Vec<String>> {
    vec![
        strings(&["-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"]),
        strings(&["-j", "REJECT", "--reject-with", family.reject_other()]),
    ]
}

/// The jump from `INPUT` into the chain, for packets in on `bridge`.
pub(crate) fn jump_rule(bridge: &str) -> Vec<String> {
    strings(&["-i", bridge, "-j", &chain_name(bridge)])
}

/// The rule that lets a candidate reach its proxy: TCP to `gateway:port`,
/// from `peer` only once its address is known.
pub(crate) fn accept_rule(gateway: IpAddr, peer: Option<IpAddr>, port: u16) -> Vec<String> {
    let host = |ip: IpAddr| match ip {
        IpAddr::V4(_) => format!("{ip}/32"),
        IpAddr::V6(_) => format!("{ip}/128"),
    };
    let mut r = strings(&["-p", "tcp"]);
    if let Some(p) = peer {
        r.extend(["-s".to_string(), host(p)]);
    }
    r.extend([
        "-d".to_string(),
        host(gateway),
        "--dport".to_string(),
        port.to_string(),
        "-j".to_string(),
        "ACCEPT".to_string(),
    ]);
    r
}

/// rascal's chains in the output of `iptables -S`.
pub(crate) fn rascal_chains(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter_map(|l| l.strip_prefix("-N "))
        .map(str::trim)
        .filter(|c| c.starts_with(CHAIN_PREFIX))
        .map(String::from)
        .collect()
}

/// The rules of `INPUT` (from `iptables -S INPUT`) that jump to `chain`,
/// as the arguments that delete them (`-D INPUT …`).
pub(crate) fn jumps_to(listing: &str, chain: &str) -> Vec<Vec<String>> {
    listing
        .lines()
        .filter_map(|l| l.strip_prefix("-A INPUT "))
        .filter(|rest| {
            let words: Vec<&str> = rest.split_whitespace().collect();
            words.windows(2).any(|w| w == ["-j", chain])
        })
        .map(|rest| {
            let mut args = strings(&["-D", "INPUT"]);
            args.extend(rest.split_whitespace().map(String::from));
            args
        })
        .collect()
}

/// Runs the rules through `iptables` and `ip6tables`.
#[derive(Debug, Clone)]
pub struct Firewall {
    iptables: String,
    ip6tables: String,
}

impl Default for Firewall {
    fn default() -> Self {
        Firewall::new("iptables", "ip6tables")
    }
}

/// Whether this kernel speaks IPv6 at all (without it there is nothing
/// for ip6tables to close, and it cannot run).
fn kernel_has_ipv6() -> bool {
    std::path::Path::new("/proc/net/if_inet6").exists()
}

impl Firewall {
    /// With these programs (tests point one at a missing path to see
    /// what a host without a firewall gets).
    pub fn new(iptables: impl Into<String>, ip6tables: impl Into<String>) -> Self {
        Firewall {
            iptables: iptables.into(),
            ip6tables: ip6tables.into(),
        }
    }

    fn program(&self, family: Family) -> &str {
        match family {
            Family::V4 => &self.iptables,
            Family::V6 => &self.ip6tables,
        }
    }

    /// The families to close: IPv4 always, IPv6 when the kernel has it.
    fn families() -> Vec<Family> {
        if kernel_has_ipv6() {
            vec![Family::V4, Family::V6]
        } else {
            vec![Family::V4]
        }
    }

    /// Run one command; its stdout, or what went wrong in words.
    async fn run(&self, family: Family, args: &[String]) -> crate::error::Result<String> {
        let program = self.program(family);
        let out = tokio::process::Command::new(program)
            .arg("-w")
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .map_err(|e| {
                crate::Error::Network(match e.kind() {
                    std::io::ErrorKind::NotFound => format!("`{program}` is not installed"),
                    _ => format!("could not run `{program}`: {e}"),
                })
            })?;
        if out.status.success() {
            return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
        }
        let err = String::from_utf8_lossy(&out.stderr);
        let err = err
            .lines()
            .filter(|l| !l.starts_with("# Warning"))
            .collect::<Vec<_>>()
            .join(" ");
        Err(crate::Error::Network(format!(
            "`{program} -w {}` failed ({}): {}",
            args.join(" "),
            out.status,
            err.trim()
        )))
    }

    /// Can rascal install a firewall here? The programs' versions, or why
    /// not (for `rascal doctor` and the agent's warning).
    pub async fn probe(&self) -> crate::error::Result<String> {
        let mut said = Vec::new();
        for family in Firewall::families() {
            let version = self.run(family, &strings(&["--version"])).await;
            let version = version.map(|v| v.trim().to_string()).map_err(|e| {
                crate::Error::Network(e.to_string().replace(" -w --version", " --version"))
            })?;
            // Listing needs the same privilege as changing (CAP_NET_ADMIN).
            self.run(family, &strings(&["-S", "INPUT"])).await?;
            said.push(version);
        }
        Ok(said.join("; "))
    }

    /// Close the host to `bridge` except what [`Firewall::allow`] opens:
    /// make the chain (or keep the one there), its reject rules, and the
    /// jump from `INPUT`. Idempotent.
    pub async fn install(&self, bridge: &str) -> crate::error::Result<()> {
        if !valid_bridge(bridge) {
            return Err(crate::Error::Network(format!(
                "`{bridge}` is not a bridge name rascal uses"
            )));
        }
        let chain = chain_name(bridge);
        for family in Firewall::families() {
            if self.run(family, &strings(&["-S", &chain])).await.is_err() {
                if let Err(e) = self.run(family, &strings(&["-N", &chain])).await {
                    // Another candidate of the run may have made it just now.
                    if self.run(family, &strings(&["-S", &chain])).await.is_err() {
                        return Err(e);
                    }
                }
            }
            for rule in reject_rules(family) {
                self.ensure_rule(family, &chain, &rule, false).await?;
            }
            self.ensure_rule(family, "INPUT", &jump_rule(bridge), true)
                .await?;
        }
        Ok(())
    }

    /// Add `rule` to `chain` unless it is there (at the top with `first`).
    async fn ensure_rule(
        &self,
        family: Family,
        chain: &str,
        rule: &[String],
        first: bool,
    ) -> crate::error::Result<()> {
        let mut check = strings(&["-C", chain]);
        check.extend(rule.iter().cloned());
        if self.run(family, &check).await.is_ok() {
            return Ok(());
        }
        let mut add = if first {
            strings(&["-I", chain, "1"])
        } else {
            strings(&["-A", chain])
        };
        add.extend(rule.iter().cloned());
        self.run(family, &add).await.map(|_| ())
    }

    /// Let TCP reach the proxy at `gateway:port` through `bridge`'s chain
    /// (from `peer` only, when given).
    pub async fn allow(
        &self,
        bridge: &str,
        gateway: IpAddr,
        peer: Option<IpAddr>,
        port: u16,
    ) -> crate::error::Result<()> {
        let family = family_of(gateway);
        let rule = accept_rule(gateway, peer, port);
        self.ensure_rule(family, &chain_name(bridge), &rule, true)
            .await
    }

    /// Take back what [`Firewall::allow`] opened; gone already is fine.
    pub(crate) async fn disallow(
        &self,
        bridge: &str,
        gateway: IpAddr,
        peer: Option<IpAddr>,
        port: u16,
    ) {
        let family = family_of(gateway);
        let mut del = strings(&["-D", &chain_name(bridge)]);
        del.extend(accept_rule(gateway, peer, port));
        while self.run(family, &del).await.is_ok() {}
    }

    /// Remove `chain` (a rascal chain) and every jump to it. A chain that
    /// is gone already is fine.
    pub(crate) async fn remove_chain(&self, chain: &str) -> crate::error::Result<()> {
        if !chain.starts_with(CHAIN_PREFIX) {
            return Err(crate::Error::Network(format!(
                "`{chain}` is not a rascal chain; left alone"
            )));
        }
        let mut first_err = None;
        for family in Firewall::families() {
            let listing = match self.run(family, &strings(&["-S", "INPUT"])).await {
                Ok(l) => l,
                Err(e) => {
                    first_err.get_or_insert(e);
                    continue;
                }
            };
            for del in jumps_to(&listing, chain) {
                if let Err(e) = self.run(family, &del).await {
                    first_err.get_or_insert(e);
                }
            }
            if self.run(family, &strings(&["-S", chain])).await.is_err() {
                continue;
            }
            for step in [["-F", chain], ["-X", chain]] {
                if let Err(e) = self.run(family, &strings(&step)).await {
                    // Removed meanwhile (the run's own teardown, another
                    // rascal's gc): gone is what was asked for.
                    if self.run(family, &strings(&["-S", chain])).await.is_ok() {
                        first_err.get_or_insert(e);
                    }
                    break;
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Remove the firewall of `bridge`.
    pub(crate) async fn remove(&self, bridge: &str) -> crate::error::Result<()> {
        self.remove_chain(&chain_name(bridge)).await
    }

    /// rascal's chains on this host (IPv4 and IPv6 together).
    pub(crate) async fn chains(&self) -> crate::error::Result<Vec<String>> {
        let mut out = Vec::new();
        for family in Firewall::families() {
            let listing = self.run(family, &strings(&["-S"])).await?;
            for c in rascal_chains(&listing) {
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        Ok(out)
    }
}

fn family_of(ip: IpAddr) -> Family {
    match ip {
        IpAddr::V4(_) => Family::V4,
        IpAddr::V6(_) => Family::V6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_short_stable_and_rascals_own() {
        let b = bridge_name("r-20261129-1a2b");
        assert_eq!(b, bridge_name("r-20261129-1a2b"));
        assert_ne!(b, bridge_name("r-20261129-1a2c"));
        assert!(b.starts_with("rsc-") && b.len() == 15, "{b}");
        assert!(valid_bridge(&b));
        let c = chain_name(&b);
        assert_eq!(c, format!("RASCAL-{}", &b[4..]));
        assert!(c.len() <= 28);
        assert_eq!(chain_name("br-0123456789ab"), "RASCAL-br-0123456789ab");
        for bad in ["", "a b", "x;rm", "sixteen-chars-xx", "-j", "*"] {
            assert!(!valid_bridge(bad), "{bad}");
        }
    }

    #[test]
    fn the_rules_accept_the_proxy_port_and_reject_the_rest() {
        let gw: IpAddr = "172.18.0.1".parse().unwrap();
        assert_eq!(
            accept_rule(gw, None, 40001).join(" "),
            "-p tcp -d 172.18.0.1/32 --dport 40001 -j ACCEPT"
        );
        assert_eq!(
            accept_rule(gw, Some("172.18.0.2".parse().unwrap()), 40001).join(" "),
            "-p tcp -s 172.18.0.2/32 -d 172.18.0.1/32 --dport 40001 -j ACCEPT"
        );
        let r = reject_rules(Family::V6);
        assert_eq!(r[0].join(" "), "-p tcp -j REJECT --reject-with tcp-reset");
        assert_eq!(
            r[1].join(" "),
            "-j REJECT --reject-with icmp6-port-unreachable"
        );
        assert_eq!(
            jump_rule("rsc-0123456789a").join(" "),
            "-i rsc-0123456789a -j RASCAL-0123456789a"
        );
    }

    #[test]
    fn listings_are_read_for_rascals_chains_and_their_jumps_only() {
        let listing =
            "-P INPUT ACCEPT\n-N DOCKER\n-N RASCAL-0123456789a\n-N RASCALX\n-N RASCAL-br-00aa\n\
-A INPUT -i rsc-0123456789a -j RASCAL-0123456789a\n-A INPUT -i eth0 -j ACCEPT\n\
-A INPUT -i rsc-0123456789a -j RASCAL-0123456789a\n-A INPUT -i x -j RASCAL-0123456789ab\n";
        assert_eq!(
            rascal_chains(listing),
            vec!["RASCAL-0123456789a", "RASCAL-br-00aa"]
        );
        let j = jumps_to(listing, "RASCAL-0123456789a");
        assert_eq!(j.len(), 2);
        assert_eq!(
            j[0].join(" "),
            "-D INPUT -i rsc-0123456789a -j RASCAL-0123456789a"
        );
        assert!(jumps_to(listing, "DOCKER").is_empty());
    }
}
