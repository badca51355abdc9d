//! Network egress: an agent with `network: { allow: [...] }` (or
//! `network: default`) reaches the hosts of its allowlist through rascal's
//! own proxy and nothing else. Under docker the candidates sit on an
//! internal network (no route out) whose only reachable address is the
//! proxy on the host side of its bridge; every decision lands in the
//! candidate's log as `rascal: network: …`, and the agent's report says
//! the mode, the allowed hosts and how many connections were refused.
//!
//! `policy` decides (pure), `tls` reads the name a tunnel's TLS hello asks
//! for (pure), `proxy` serves, `network` talks to the engine
//! and holds a run's network and its candidates' proxies, `firewall`
//! closes the host's own services to that network.

pub mod firewall;
pub mod network;
pub mod policy;
pub mod proxy;
pub mod tls;

use rascal_core::config::network::OnRefused;
use rascal_core::config::AgentConfig;
use rascal_core::model::verdict::{Issue, Report, Severity};

pub use rascal_core::model::network::NetworkSummary;

/// The rule id of the issue that says what the agent's network was.
pub(crate) const RULE_MODE: &str = "agent/network";
/// The rule id of the issue that counts refused connections.
pub(crate) const RULE_REFUSED: &str = "agent/network-refused";
/// The rule id of the warning that the host's own services stayed
/// reachable from the agent's network.
pub const RULE_HOST_OPEN: &str = "agent/network-host-open";

/// Add what the agent's network was to its report: an info issue with the
/// mode and allowed hosts, and, when the proxy refused connections, a
/// warning (or an error with `on_refused: fail`). An allowlist that no
/// proxy enforced is said too. Agents that left `network:` unset under
/// the process launcher (no network at all) get nothing.
pub fn annotate(
    mut report: Report,
    agent: &AgentConfig,
    launcher: &str,
    summary: Option<&NetworkSummary>,
) -> Report {
    let setting = agent.network.as_ref();
    if setting.is_none() && launcher != "docker" {
        return report;
    }
    let mode = setting
        .map(|n| n.mode().to_string())
        .unwrap_or_else(|| rascal_core::config::container::DEFAULT_NETWORK.to_string());
    match summary {
        Some(s) => {
            report = report.input("network", serde_json::to_string(s).unwrap_or_default());
            if s.refused > 0 {
                let severity = match s.on_refused {
                    OnRefused::Warn => Severity::Warning,
                    OnRefused::Fail => Severity::Error,
                };
                report.issues.push(Issue::new(
                    RULE_REFUSED,
                    severity,
                    format!(
                        "the egress proxy refused {} connection{} (see `rascal: network: refused …` in the agent's log){}",
                        s.refused,
                        if s.refused == 1 { "" } else { "s" },
                        if s.on_refused == OnRefused::Fail { "; `on_refused: fail`" } else { "" }
                    ),
                ));
            }
            if let Some(why) = &s.host_open {
                report.issues.push(Issue::new(
                    RULE_HOST_OPEN,
                    Severity::Warning,
                    format!(
                        "the host's own services (anything listening on 0.0.0.0 or [::], a local DNS resolver included) were reachable from the agent's network: rascal could not install its host firewall: {why}\n  hint: run rascal as root on a host with iptables (the nft shim is fine; `rascal doctor` says whether it can), or set `on_host_open: fail` to refuse to run agents then"
                    ),
                ));
            }
            report.issues.push(Issue::new(
                RULE_MODE,
                Severity::Info,
                format!(
                    "network: {} ({}); {} connection{} allowed, {} refused",
                    s.mode,
                    s.allow.join(", "),
                    s.allowed,
                    if s.allowed == 1 { "" } else { "s" },
                    s.refused
                ),
            ));
            report.network = Some(Box::new(s.clone()));
        }
        None if setting.is_some_and(|n| n.is_allowlist()) => {
            report.issues.push(Issue::new(
                RULE_MODE,
                Severity::Warning,
                format!(
                    "network: allowlist is not enforced by the {launcher} launcher: the agent ran with no network at all"
                ),
            ));
        }
        None => {
            let open = match mode.as_str() {
                "bridge" => " (open: any address is reachable)",
                "host" => " (the host's network: any address is reachable)",
                "none" => " (no network)",
                _ => "",
            };
            report.issues.push(Issue::new(
                RULE_MODE,
                Severity::Info,
                format!("network: {mode}{open}"),
            ));
        }
    }
    if report.network.is_none() {
        report.network = Some(Box::new(NetworkSummary {
            mode,
            allow: Vec::new(),
            allowed: 0,
            refused: 0,
            opened: 0,
            on_refused: OnRefused::Warn,
            host_open: None,
        }));
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use rascal_core::config::network::{Allowlist, NetworkSetting};
    use rascal_core::config::RuntimeKind;
    use rascal_core::model::verdict::{Layer, Status};

    fn agent(net: Option<&str>) -> AgentConfig {
        let mut a = AgentConfig::new(RuntimeKind::Claude);
        a.network = net.map(|n| match n.strip_prefix("allow:") {
            Some(host) => NetworkSetting::Allow(Allowlist {
                allow: vec![host.to_string()],
                on_refused: OnRefused::Warn,
                on_host_open: OnRefused::Warn,
            }),
            None => NetworkSetting::from(n),
        });
        a
    }

    fn summary(refused: u64, on_refused: OnRefused) -> NetworkSummary {
        NetworkSummary {
            mode: "allowlist".into(),
            allow: vec!["api.anthropic.com".into()],
            allowed: 2,
            refused,
            opened: 2,
            on_refused,
            host_open: None,
        }
    }

    #[test]
    fn refused_connections_warn_or_fail_as_configured() {
        let base = || Report::new(Layer::Agent, "agent");
        let a = agent(Some("default"));
        let r = annotate(base(), &a, "docker", Some(&summary(0, OnRefused::Warn))).finish();
        assert_eq!(r.status, Status::Pass);
        assert!(r.issues[0].message.contains("api.anthropic.com"));
        assert!(r.issues[0].message.contains("0 refused"));
        assert_eq!(r.network.as_ref().unwrap().refused, 0);
        let r = annotate(base(), &a, "docker", Some(&summary(3, OnRefused::Warn))).finish();
        assert_eq!(r.status, Status::Warn);
        assert!(r.issues[0].message.contains("refused 3 connections"));
        let r = annotate(base(), &a, "docker", Some(&summary(1, OnRefused::Fail))).finish();
        assert_eq!(r.status, Status::Fail);
        let mut open = summary(0, OnRefused::Warn);
        open.host_open = Some("`iptables` is not installed".into());
        let r = annotate(base(), &a, "docker", Some(&open)).finish();
        assert_eq!(r.status, Status::Warn);
        let i = r.issues.iter().find(|i| i.rule == RULE_HOST_OPEN).unwrap();
        assert!(
            i.message.contains("`iptables` is not installed"),
            "{}",
            i.message
        );
        assert!(i.message.contains("on_host_open: fail"), "{}", i.message);
    }

    #[test]
    fn the_mode_is_said_and_an_unenforced_allowlist_warns() {
        let base = || Report::new(Layer::Agent, "agent");
        let r = annotate(base(), &agent(None), "process", None).finish();
        assert!(r.issues.is_empty());
        let r = annotate(base(), &agent(None), "docker", None).finish();
        assert!(r.issues[0].message.contains("bridge (open"));
        let r = annotate(base(), &agent(Some("none")), "process", None).finish();
        assert!(r.issues[0].message.contains("no network"));
        let r = annotate(base(), &agent(Some("allow:a.example")), "kubernetes", None).finish();
        assert_eq!(r.status, Status::Warn);
        assert!(r.issues[0].message.contains("not enforced"));
    }
}
