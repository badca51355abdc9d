//! The docker side of egress: one internal network per run (`Internal:
//! true`, no traffic between containers, labelled with the run), created
//! when its first allowlisted candidate starts and removed when its last
//! one is released; one proxy per candidate on the network's gateway
//! address (the host end of its bridge), serving only that candidate's
//! container address; the container gets the proxy in `HTTPS_PROXY` & co.
//! and the gateway as its only DNS server (nothing answers there, so names
//! cannot leak through the engine's DNS forwarder either). The network's
//! bridge has a name derived from the run, and `firewall` closes the host
//! to it except for each candidate's proxy port.

use super::firewall::{bridge_name, chain_name, Firewall, BRIDGE_OPTION};
use super::policy::Allowlist;
use super::proxy::{Proxy, Resolve, Rules, Sink, SystemResolver};
use super::NetworkSummary;
use bollard::models::{ContainerCreateBody, NetworkCreateRequest};
use bollard::Docker;
use rascal_core::config::network::OnRefused;
use std::collections::{BTreeSet, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// The label every egress network carries (with the run's id as value,
/// beside `rascal.run`).
pub(crate) const LABEL_EGRESS: &str = "rascal.egress";

/// The labels the docker launcher puts on its containers (the same
/// values; `exec::launch::docker` sits above this module).
pub const LABEL_RUN: &str = "rascal.run";
pub const LABEL_REPO: &str = "rascal.repo";

/// `rascal-<run>-egress`, in the characters Docker accepts.
pub fn network_name(run: &str) -> String {
    format!("rascal-{run}-egress")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A run's internal network as rascal uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunNetwork {
    pub name: String,
    /// The host end of its bridge: where the proxies listen.
    pub gateway: IpAddr,
    /// The bridge interface on the host (what the host firewall names).
    pub bridge: String,
}

/// Create the run's internal network (on the bridge [`bridge_name`]
/// names), or find the one a previous rascal (or attempt) of the run made.
pub async fn ensure(docker: &Docker, run: &str, repo: &str) -> crate::error::Result<RunNetwork> {
    let name = network_name(run);
    if let Some(net) = inspect(docker, &name).await? {
        return Ok(net);
    }
    let labels = HashMap::from([
        (LABEL_RUN.to_string(), run.to_string()),
        (LABEL_REPO.to_string(), repo.to_string()),
        (LABEL_EGRESS.to_string(), "1".to_string()),
    ]);
    let options = HashMap::from([
        (
            "com.docker.network.bridge.enable_icc".to_string(),
            "false".to_string(),
        ),
        (BRIDGE_OPTION.to_string(), bridge_name(run)),
    ]);
    docker
        .create_network(NetworkCreateRequest {
            name: name.clone(),
            driver: Some("bridge".into()),
            internal: Some(true),
            labels: Some(labels),
            options: Some(options),
            ..Default::default()
        })
        .await
        .map_err(|e| {
            crate::Error::Network(format!(
                "could not create the internal network {name}: {e}\n  hint: the engine may be out of address pools; `rascal gc` removes networks of finished runs"
            ))
        })?;
    inspect(docker, &name)
        .await?
        .ok_or_else(|| crate::Error::Network(format!("network {name} was created but is gone")))
}

/// The bridge of a network on the engine: the one it was given, or the
/// driver's `br-<id>`.
fn bridge_of(info: &bollard::models::NetworkInspect) -> Option<String> {
    info.options
        .as_ref()
        .and_then(|o| o.get(BRIDGE_OPTION).cloned())
        .or_else(|| {
            info.id
                .as_deref()
                .filter(|id| id.len() >= 12)
                .map(|id| format!("br-{}", &id[..12]))
        })
}

/// The network `name` as rascal uses it, or None when there is no such
/// network.
async fn inspect(docker: &Docker, name: &str) -> crate::error::Result<Option<RunNetwork>> {
    let info = match docker.inspect_network(name, None).await {
        Ok(i) => i,
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => return Ok(None),
        Err(e) => {
            return Err(crate::Error::Network(format!(
                "inspecting network {name}: {e}"
            )))
        }
    };
    if info.internal != Some(true) {
        return Err(crate::Error::Network(format!(
            "network {name} exists but is not internal: it was not made by rascal for this run\n  hint: remove it with `docker network rm {name}`"
        )));
    }
    let bridge = bridge_of(&info).ok_or_else(|| {
        crate::Error::Network(format!("network {name} does not say its bridge interface"))
    })?;
    let gateway = info
        .ipam
        .and_then(|i| i.config)
        .unwrap_or_default()
        .into_iter()
        .find_map(|c| c.gateway.and_then(|g| g.parse::<IpAddr>().ok()))
        .ok_or_else(|| {
            crate::Error::Network(format!("network {name} has no IPv4 gateway address"))
        })?;
    Ok(Some(RunNetwork {
        name: name.to_string(),
        gateway,
        bridge,
    }))
}

/// Remove run `run`'s network and its host firewall; either gone already
/// is fine.
pub async fn remove_run(
    docker: &Docker,
    firewall: &Firewall,
    run: &str,
) -> crate::error::Result<()> {
    let name = network_name(run);
    let mut bridges = vec![bridge_name(run)];
    if let Ok(Some(net)) = inspect(docker, &name).await {
        if !bridges.contains(&net.bridge) {
            bridges.push(net.bridge);
        }
    }
    remove(docker, &name).await?;
    for b in bridges {
        match firewall.remove(&b).await {
            Err(e) if !super::firewall::unavailable(&e) => {
                return Err(crate::Error::Network(format!(
                    "removing the host firewall of network {name}: {e}"
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Remove every rascal firewall chain whose network is gone from the
/// engine (a rascal that died mid-run leaves them); the chains removed.
pub async fn sweep_firewalls(
    docker: &Docker,
    firewall: &Firewall,
) -> crate::error::Result<Vec<String>> {
    let chains = firewall.chains().await?;
    if chains.is_empty() {
        return Ok(Vec::new());
    }
    let nets = docker
        .list_networks(None::<bollard::query_parameters::ListNetworksOptions>)
        .await
        .map_err(|e| crate::Error::Network(format!("listing networks: {e}")))?;
    let mut in_use = BTreeSet::new();
    for n in nets {
        // The list may leave the options out; inspect says them.
        let Some(id) = n.id else { continue };
        if let Ok(info) = docker.inspect_network(&id, None).await {
            if let Some(b) = bridge_of(&info) {
                in_use.insert(chain_name(&b));
            }
        }
    }
    let mut removed = Vec::new();
    for c in chains {
        if !in_use.contains(&c) {
            firewall.remove_chain(&c).await?;
            removed.push(c);
        }
    }
    Ok(removed)
}

/// Remove a network; one that is gone already is fine.
pub(crate) async fn remove(docker: &Docker, name: &str) -> crate::error::Result<()> {
    match docker.remove_network(name).await {
        Ok(()) => Ok(()),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Ok(()),
        Err(e) => Err(crate::Error::Network(format!(
            "removing network {name}: {e}"
        ))),
    }
}

/// A container's address on `network`.
pub async fn container_ip(docker: &Docker, container: &str, network: &str) -> Option<IpAddr> {
    docker
        .inspect_container(container, None)
        .await
        .ok()?
        .network_settings?
        .networks?
        .get(network)?
        .ip_address
        .as_deref()?
        .parse()
        .ok()
}

/// Whose egress: the run, the candidate, the repository (for labels).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate<'a> {
    pub run: &'a str,
    pub candidate: &'a str,
    pub repo: &'a str,
}

/// One candidate's egress while its agent runs.
pub(crate) struct Attached {
    pub network: String,
    pub gateway: IpAddr,
    /// The bridge on the host.
    pub bridge: String,
    pub proxy: Proxy,
    /// The container's address, once it started.
    pub peer: Option<IpAddr>,
    /// Why the host firewall could not be installed (None: it was).
    pub host_open: Option<String>,
    allow: Vec<String>,
    on_refused: OnRefused,
}

/// The proxy variables a container is given (all point at its proxy).
const PROXY_VARS: [&str; 6] = [
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "https_proxy",
    "http_proxy",
    "all_proxy",
];

impl Attached {
    /// The proxy URL the container uses.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.proxy.addr)
    }

    /// Put the container on the internal network, point its proxy
    /// variables at the proxy, give it no working DNS server, and keep
    /// IPv6 off inside it (no link-local way around the host firewall;
    /// `/proc/sys` is read-only in the container, so it stays off).
    pub(crate) fn apply(&self, body: &mut ContainerCreateBody) {
        let url = self.url();
        let env = body.env.get_or_insert_with(Vec::new);
        env.retain(|e| {
            !PROXY_VARS
                .iter()
                .chain(&["NO_PROXY", "no_proxy"])
                .any(|n| e.starts_with(&format!("{n}=")))
        });
        for n in PROXY_VARS {
            env.push(format!("{n}={url}"));
        }
        env.push("NO_PROXY=localhost,127.0.0.1,::1".into());
        env.push("no_proxy=localhost,127.0.0.1,::1".into());
        let hc = body.host_config.get_or_insert_with(Default::default);
        hc.network_mode = Some(self.network.clone());
        hc.dns = Some(vec![self.gateway.to_string()]);
        let sysctls = hc.sysctls.get_or_insert_with(Default::default);
        for k in [
            "net.ipv6.conf.all.disable_ipv6",
            "net.ipv6.conf.default.disable_ipv6",
        ] {
            sysctls.insert(k.to_string(), "1".to_string());
        }
    }

    pub(crate) fn summary(&self) -> NetworkSummary {
        (self.proxy.counts()).summary(&self.allow, self.on_refused, self.host_open.clone())
    }
}

/// The docker launcher's egress state: each run's network and its users,
/// and what each candidate's proxy did.
pub struct DockerEgress {
    resolver: Arc<dyn Resolve>,
    firewall: Firewall,
    runs: tokio::sync::Mutex<HashMap<String, BTreeSet<String>>>,
    summaries: std::sync::Mutex<HashMap<(String, String), NetworkSummary>>,
}

impl Default for DockerEgress {
    fn default() -> Self {
        DockerEgress::with_resolver(Arc::new(SystemResolver))
    }
}

impl DockerEgress {
    /// With `resolver` instead of the system's (tests pin names to loopback).
    pub fn with_resolver(resolver: Arc<dyn Resolve>) -> Self {
        DockerEgress {
            resolver,
            firewall: Firewall::default(),
            runs: Default::default(),
            summaries: Default::default(),
        }
    }

    /// With `firewall` instead of the host's iptables (tests see what a
    /// host without one gets).
    pub fn with_firewall(mut self, firewall: Firewall) -> Self {
        self.firewall = firewall;
        self
    }

    /// For an agent with an allowlist: the run's network (made on first
    /// use) closed to the host by its firewall, and a proxy for this
    /// candidate on its gateway (`port` 0: any; a reattach asks for the
    /// port the container already knows), the one port the firewall lets
    /// through. None for the other network modes. When the firewall
    /// cannot be installed, the candidate's log says so and the agent
    /// runs (`on_host_open: warn`) or does not (`fail`).
    pub(crate) async fn attach(
        &self,
        docker: &Docker,
        who: Candidate<'_>,
        agent: &rascal_core::config::AgentConfig,
        port: u16,
        sink: Sink,
    ) -> crate::error::Result<Option<Attached>> {
        let Candidate {
            run,
            candidate,
            repo,
        } = who;
        let Some(setting) = &agent.network else {
            return Ok(None);
        };
        let Some((allow, on_refused)) = setting.allowlist(agent.runtime)? else {
            return Ok(None);
        };
        let list = Allowlist::new(&allow)?;
        let mut runs = self.runs.lock().await;
        let net = ensure(docker, run, repo).await?;
        let host_open = self
            .firewall
            .install(&net.bridge)
            .await
            .err()
            .map(|e| e.to_string());
        let unused = runs.get(run).is_none_or(|u| u.is_empty());
        if let Some(why) = &host_open {
            if setting.on_host_open() == OnRefused::Fail {
                if unused {
                    let _ = remove_run(docker, &self.firewall, run).await;
                }
                return Err(crate::Error::Network(format!(
                    "the agent of `{candidate}` was not started: rascal could not close the host's own services to its network {} (`on_host_open: fail`): {why}\n  hint: run rascal as root on a host with iptables (`rascal doctor` says whether it can), or set `on_host_open: warn`",
                    net.name
                )));
            }
            sink(format!(
                "{} the host's own services are NOT closed to this agent (anything listening on 0.0.0.0 or [::] of the host is reachable through {}): could not install the host firewall: {why}",
                super::proxy::LOG_PREFIX,
                net.gateway
            ));
        }
        let rules = Rules {
            allow: list,
            resolver: self.resolver.clone(),
            sink,
            judge_within: crate::egress::proxy::JUDGE_WITHIN,
        };
        let gateway = net.gateway;
        let proxy = match Proxy::bind(SocketAddr::new(gateway, port), rules, true).await {
            Ok(p) => p,
            Err(e) => {
                if unused {
                    let _ = remove_run(docker, &self.firewall, run).await;
                }
                return Err(crate::Error::Network(format!(
                    "could not start the egress proxy on {gateway}:{port} (the host end of network {}): {e}\n  hint: rascal must run on the engine's host, in its network namespace, for `network: {{ allow: … }}`",
                    net.name
                )));
            }
        };
        if host_open.is_none() {
            // Any address on the bridge until the container's is known
            // (the proxy itself serves only that one).
            self.firewall
                .allow(&net.bridge, gateway, None, proxy.addr.port())
                .await
                .map_err(|e| {
                    crate::Error::Network(format!(
                        "could not open the host firewall to the egress proxy: {e}"
                    ))
                })?;
        }
        runs.entry(run.to_string())
            .or_default()
            .insert(candidate.to_string());
        Ok(Some(Attached {
            network: net.name,
            gateway,
            bridge: net.bridge,
            proxy,
            peer: None,
            host_open,
            allow,
            on_refused,
        }))
    }

    /// The container started: serve its address only, and let only it
    /// through the host firewall to the proxy.
    pub(crate) async fn started(
        &self,
        docker: &Docker,
        att: &mut Attached,
        container: &str,
    ) -> crate::error::Result<()> {
        let ip = container_ip(docker, container, &att.network)
            .await
            .ok_or_else(|| {
                crate::Error::Network(format!(
                    "container {container} has no address on network {}",
                    att.network
                ))
            })?;
        att.proxy.set_peer(ip);
        att.peer = Some(ip);
        if att.host_open.is_none() {
            let port = att.proxy.addr.port();
            self.firewall
                .allow(&att.bridge, att.gateway, Some(ip), port)
                .await?;
            self.firewall
                .disallow(&att.bridge, att.gateway, None, port)
                .await;
        }
        Ok(())
    }

    /// The agent ended: stop its proxy and close its port, keep what it did.
    pub(crate) async fn finish(&self, run: &str, candidate: &str, att: Attached) {
        att.proxy.stop();
        if att.host_open.is_none() {
            let port = att.proxy.addr.port();
            for peer in [att.peer, None] {
                self.firewall
                    .disallow(&att.bridge, att.gateway, peer, port)
                    .await;
            }
        }
        if let Ok(mut s) = self.summaries.lock() {
            s.insert((run.to_string(), candidate.to_string()), att.summary());
        }
    }

    /// What the candidate's proxy did in its last attempt.
    pub(crate) fn summary(&self, run: &str, candidate: &str) -> Option<NetworkSummary> {
        self.summaries
            .lock()
            .ok()?
            .get(&(run.to_string(), candidate.to_string()))
            .cloned()
    }

    /// The candidate's agent is done: when it was the run's last user of
    /// the network, remove the network and its host firewall (Docker lets
    /// a stopped, kept container lose it; what a rascal that died left is
    /// `gc`'s).
    pub(crate) async fn release(&self, docker: &Docker, run: &str, candidate: &str) {
        let mut runs = self.runs.lock().await;
        let Some(users) = runs.get_mut(run) else {
            return;
        };
        users.remove(candidate);
        if users.is_empty() {
            runs.remove(run);
            let _ = remove_run(docker, &self.firewall, run).await;
        }
    }
}
