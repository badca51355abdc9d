//! `rascal doctor`, the host firewall part: can rascal close the host's own
//! services to the internal network of a docker agent with an allowlist
//! (iptables and ip6tables present and usable by this user)? Asks the
//! programs their version and lists `INPUT`; changes nothing.

use rascal_exec::egress::firewall::Firewall;

/// One line saying whether the host firewall can be installed, and what
/// it means when not.
pub async fn firewall_line(firewall: &Firewall) -> String {
    match firewall.probe().await {
        Ok(versions) => format!(
            "host firewall: can be installed ({versions}): the internal network of an agent with `network: {{ allow: … }}` reaches nothing on this host but its proxy"
        ),
        Err(why) => format!(
            "host firewall: CANNOT be installed: {why}\n  agents with `network: {{ allow: … }}` can reach the host's own services (anything listening on 0.0.0.0 or [::]); they run with the warning `agent/network-host-open`, or not at all with `on_host_open: fail`\n  hint: run rascal as root (or with CAP_NET_ADMIN) on a host with iptables and ip6tables (the nft shim `iptables-nft` is fine)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_without_iptables_is_said_with_what_it_means() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let line = rt.block_on(firewall_line(&Firewall::new(
            "/nonexistent/iptables",
            "/nonexistent/ip6tables",
        )));
        assert!(line.contains("CANNOT be installed"), "{line}");
        assert!(
            line.contains("`/nonexistent/iptables` is not installed"),
            "{line}"
        );
        assert!(line.contains("on_host_open: fail"), "{line}");
    }
}
