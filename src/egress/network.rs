//! The docker side of egress: one internal network per run (`Internal:
//! true`, no traffic between containers, labelled with the run), created
//! when its first allowlisted candidate starts and removed when its last
//! one is released; one proxy per candidate on the network's gateway
//! address (the host end of its bridge), serving only that candidate's
//! container address; the container gets the proxy in `HTTPS_PROXY` & co.
//! and the gateway as its only DNS server (nothing answers there, so names
//! cannot leak through the engine's DNS forwarder either).

use super::policy::Allowlist;
use super::proxy::{Proxy, Resolve, Rules, Sink, SystemResolver};
use super::NetworkSummary;
use crate::config::network::OnRefused;
use bollard::models::{ContainerCreateBody, NetworkCreateRequest};
use bollard::query_parameters::ListNetworksOptionsBuilder;
use bollard::Docker;
use std::collections::{BTreeSet, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// The label every egress network carries (with the run's id as value,
/// beside `rascal.run`).
pub const LABEL_EGRESS: &str = "rascal.egress";

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

/// A rascal egress network on the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressNetwork {
    pub name: String,
    pub run: String,
    pub repo: String,
    /// Containers still attached.
    pub containers: usize,
}

/// Create the run's internal network, or find the one a previous rascal
/// (or attempt) of the run made; its gateway address.
pub async fn ensure(docker: &Docker, run: &str, repo: &str) -> Result<IpAddr, String> {
    let name = network_name(run);
    if let Some(gw) = gateway(docker, &name).await? {
        return Ok(gw);
    }
    let labels = HashMap::from([
        (LABEL_RUN.to_string(), run.to_string()),
        (LABEL_REPO.to_string(), repo.to_string()),
        (LABEL_EGRESS.to_string(), "1".to_string()),
    ]);
    let options = HashMap::from([(
        "com.docker.network.bridge.enable_icc".to_string(),
        "false".to_string(),
    )]);
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
            format!(
                "could not create the internal network {name}: {e}\n  hint: the engine may be out of address pools; `rascal gc` removes networks of finished runs"
            )
        })?;
    gateway(docker, &name)
        .await?
        .ok_or_else(|| format!("network {name} was created but has no gateway address"))
}

/// The network's gateway address, or None when there is no such network.
async fn gateway(docker: &Docker, name: &str) -> Result<Option<IpAddr>, String> {
    let info = match docker.inspect_network(name, None).await {
        Ok(i) => i,
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => return Ok(None),
        Err(e) => return Err(format!("inspecting network {name}: {e}")),
    };
    if info.internal != Some(true) {
        return Err(format!(
            "network {name} exists but is not internal: it was not made by rascal for this run\n  hint: remove it with `docker network rm {name}`"
        ));
    }
    info.ipam
        .and_then(|i| i.config)
        .unwrap_or_default()
        .into_iter()
        .find_map(|c| c.gateway.and_then(|g| g.parse::<IpAddr>().ok()))
        .map(Some)
        .ok_or_else(|| format!("network {name} has no IPv4 gateway address"))
}

/// Remove a network; one that is gone already is fine.
pub async fn remove(docker: &Docker, name: &str) -> Result<(), String> {
    match docker.remove_network(name).await {
        Ok(()) => Ok(()),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Ok(()),
        Err(e) => Err(format!("removing network {name}: {e}")),
    }
}

/// Rascal's egress networks on the engine.
pub async fn list(docker: &Docker) -> Result<Vec<EgressNetwork>, String> {
    let filters = HashMap::from([("label".to_string(), vec![LABEL_EGRESS.to_string()])]);
    let nets = docker
        .list_networks(Some(
            ListNetworksOptionsBuilder::default()
                .filters(&filters)
                .build(),
        ))
        .await
        .map_err(|e| format!("listing networks: {e}"))?;
    let mut out = Vec::new();
    for n in nets {
        let Some(name) = n.name else { continue };
        let labels = n.labels.unwrap_or_default();
        // The list does not say which containers are attached; inspect does.
        let containers = docker
            .inspect_network(&name, None)
            .await
            .ok()
            .and_then(|i| i.containers)
            .map(|c| c.len())
            .unwrap_or(0);
        out.push(EgressNetwork {
            run: labels.get(LABEL_RUN).cloned().unwrap_or_default(),
            repo: labels.get(LABEL_REPO).cloned().unwrap_or_default(),
            name,
            containers,
        });
    }
    Ok(out)
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
pub struct Candidate<'a> {
    pub run: &'a str,
    pub candidate: &'a str,
    pub repo: &'a str,
}

/// One candidate's egress while its agent runs.
pub struct Attached {
    pub network: String,
    pub gateway: IpAddr,
    pub proxy: Proxy,
    allow: Vec<String>,
    on_refused: OnRefused,
}

impl Attached {
    /// The proxy URL the container uses.
    pub fn url(&self) -> String {
        format!("http://{}", self.proxy.addr)
    }

    /// Put the container on the internal network, point its proxy
    /// variables at the proxy, and give it no working DNS server.
    pub fn apply(&self, body: &mut ContainerCreateBody) {
        let url = self.url();
        let env = body.env.get_or_insert_with(Vec::new);
        let names = [
            "HTTPS_PROXY",
            "HTTP_PROXY",
            "ALL_PROXY",
            "https_proxy",
            "http_proxy",
            "all_proxy",
            "NO_PROXY",
            "no_proxy",
        ];
        env.retain(|e| !names.iter().any(|n| e.starts_with(&format!("{n}="))));
        for n in &names[..6] {
            env.push(format!("{n}={url}"));
        }
        env.push("NO_PROXY=localhost,127.0.0.1,::1".into());
        env.push("no_proxy=localhost,127.0.0.1,::1".into());
        let hc = body.host_config.get_or_insert_with(Default::default);
        hc.network_mode = Some(self.network.clone());
        hc.dns = Some(vec![self.gateway.to_string()]);
    }

    pub fn summary(&self) -> NetworkSummary {
        let c = self.proxy.counts();
        NetworkSummary {
            mode: "allowlist".into(),
            allow: self.allow.clone(),
            allowed: c.allowed,
            refused: c.refused,
            opened: c.sockets,
            on_refused: self.on_refused,
        }
    }
}

/// The docker launcher's egress state: each run's network and its users,
/// and what each candidate's proxy did.
pub struct DockerEgress {
    resolver: Arc<dyn Resolve>,
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
            runs: Default::default(),
            summaries: Default::default(),
        }
    }

    /// For an agent with an allowlist: the run's network (made on first
    /// use) and a proxy for this candidate on its gateway (`port` 0: any;
    /// a reattach asks for the port the container already knows). None for
    /// the other network modes.
    pub async fn attach(
        &self,
        docker: &Docker,
        who: Candidate<'_>,
        agent: &crate::config::AgentConfig,
        port: u16,
        sink: Sink,
    ) -> Result<Option<Attached>, String> {
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
        let gateway = ensure(docker, run, repo).await?;
        let rules = Rules {
            allow: list,
            resolver: self.resolver.clone(),
            sink,
        };
        let proxy = Proxy::bind(SocketAddr::new(gateway, port), rules, true)
            .await
            .map_err(|e| {
                format!(
                    "could not start the egress proxy on {gateway}:{port} (the host end of network {}): {e}\n  hint: rascal must run on the engine's host, in its network namespace, for `network: {{ allow: … }}`",
                    network_name(run)
                )
            })?;
        runs.entry(run.to_string())
            .or_default()
            .insert(candidate.to_string());
        Ok(Some(Attached {
            network: network_name(run),
            gateway,
            proxy,
            allow,
            on_refused,
        }))
    }

    /// The container started: serve its address only.
    pub async fn started(
        &self,
        docker: &Docker,
        att: &Attached,
        container: &str,
    ) -> Result<(), String> {
        let ip = container_ip(docker, container, &att.network)
            .await
            .ok_or_else(|| {
                format!(
                    "container {container} has no address on network {}",
                    att.network
                )
            })?;
        att.proxy.set_peer(ip);
        Ok(())
    }

    /// The agent ended: stop its proxy, keep what it did.
    pub fn finish(&self, run: &str, candidate: &str, att: Attached) {
        att.proxy.stop();
        if let Ok(mut s) = self.summaries.lock() {
            s.insert((run.to_string(), candidate.to_string()), att.summary());
        }
    }

    /// What the candidate's proxy did in its last attempt.
    pub fn summary(&self, run: &str, candidate: &str) -> Option<NetworkSummary> {
        self.summaries
            .lock()
            .ok()?
            .get(&(run.to_string(), candidate.to_string()))
            .cloned()
    }

    /// The candidate's agent is done: when it was the run's last user of
    /// the network, remove the network (Docker lets a stopped, kept
    /// container lose it; a network left by a rascal that died is `gc`'s).
    pub async fn release(&self, docker: &Docker, run: &str, candidate: &str) {
        let mut runs = self.runs.lock().await;
        let Some(users) = runs.get_mut(run) else {
            return;
        };
        users.remove(candidate);
        if users.is_empty() {
            runs.remove(run);
            let _ = remove(docker, &network_name(run)).await;
        }
    }
}
