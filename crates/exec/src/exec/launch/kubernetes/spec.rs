//! What rascal asks the cluster for, as pure functions of the launch spec
//! and the `kubernetes:` config: the candidate's Job (one pod: an init
//! container that receives the workspace, the agent, and a `collect`
//! container that hands the result back), the Secret holding the agent's
//! credentials, and the default-deny NetworkPolicy of its pod. The same
//! hardening as the docker launcher, spelled as pod security.

use super::super::LaunchSpec;
use crate::config::container::{DEFAULT_CPUS, DEFAULT_MEMORY};
use crate::config::kubernetes::{parse_egress, KubernetesConfig, DEFAULT_TTL_SECS};
use crate::config::{AgentConfig, RuntimeKind};
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, EmptyDirVolumeSource, EnvVar, EnvVarSource, LocalObjectReference,
    PodSecurityContext, PodSpec, PodTemplateSpec, ResourceRequirements, SeccompProfile, Secret,
    SecretKeySelector, SecurityContext, Toleration, Volume, VolumeMount,
};
use k8s_openapi::api::networking::v1::{
    IPBlock, NetworkPolicy, NetworkPolicyEgressRule, NetworkPolicyPeer, NetworkPolicyPort,
    NetworkPolicySpec,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::ByteString;
use std::collections::BTreeMap;

pub const LABEL_RUN: &str = "rascal.run";
pub const LABEL_CANDIDATE: &str = "rascal.candidate";
/// A digest of the repository's path (a label value cannot hold a path).
pub const LABEL_REPO: &str = "rascal.repo";
pub const LABEL_VERSION: &str = "rascal.version";
/// On a verification command's Job (instead of `rascal.candidate`, so no
/// policy of the agent's ever selects it): the candidate it checks, and
/// its number among that candidate's checks.
pub const LABEL_CHECK_OF: &str = "rascal.check-of";
pub const LABEL_CHECK: &str = "rascal.check";
/// The exact values, where a label had to be shortened or cleaned.
pub const ANNOTATION_REPO: &str = "rascal.dev/repo-path";
pub const ANNOTATION_RUN: &str = "rascal.dev/run";
pub const ANNOTATION_CANDIDATE: &str = "rascal.dev/candidate";
/// Unix milliseconds at which the agent times out (for a reattach).
pub const ANNOTATION_DEADLINE: &str = "rascal.dev/deadline";
/// The agent's timeout in milliseconds (for a reattach's messages).
pub const ANNOTATION_TIMEOUT: &str = "rascal.dev/timeout";

/// The containers of a candidate's pod.
pub const RECEIVE: &str = "receive";
pub const AGENT: &str = "agent";
pub const COLLECT: &str = "collect";
/// The main container of a verification command's pod.
pub const CHECK: &str = "check";

/// The `rascal` volume: the workspace and what the agent is handed.
pub const RASCAL_DIR: &str = "/rascal";
/// Where the candidate's tree is (a sub-path of the `rascal` volume).
pub const WORKSPACE: &str = "/workspace";
pub const INSTRUCTION: &str = "/rascal/instruction.md";
/// A planned run's approved criteria (`$RASCAL_CRITERIA_FILE`).
pub const CRITERIA: &str = "/rascal/criteria.json";
pub const STDIN: &str = "/rascal/stdin";
pub const ARTIFACTS: &str = "/rascal/artifacts";
/// Markers only rascal can set: each volume is mounted in one container
/// only, never in the agent's, so the agent cannot end either wait.
pub const HANDOFF_DIR: &str = "/rascal-handoff";
pub const READY: &str = "/rascal-handoff/ready";
pub const DONE_DIR: &str = "/rascal-done";
pub const DONE: &str = "/rascal-done/now";

/// Seconds the pod may live past the agent's timeout: time to hand the
/// workspace in and the result back. The agent's own timeout is enforced
/// by rascal; this deadline is the cluster's backstop when rascal is gone.
pub const TRANSFER_GRACE_SECS: i64 = 600;
/// How long `collect` waits for rascal before giving up (so a pod whose
/// rascal died does not run until the deadline).
pub const COLLECT_WAIT_SECS: i64 = 3600;
/// Limits of the receive and collect containers (they only run tar).
const HELPER_CPU: &str = "500m";
const HELPER_MEMORY: &str = "256Mi";
/// `/tmp` of the agent: memory-backed, bounded, like the docker tmpfs.
const TMP_SIZE: &str = "512Mi";

/// Host variables describe the host, not the pod (as for docker).
const HOST_ONLY_ENV: &[&str] = crate::exec::env::BASE_ENV;

/// A name the API accepts (DNS-1123 label, at most 63): `rascal-<run>-<cand>`,
/// lowercased, other characters as `-`; too long or changed names end in a
/// digest of the original so two candidates never share one.
pub fn job_name(run: &str, candidate: &str) -> String {
    let raw = format!("rascal-{run}-{candidate}");
    let mut clean: String = raw
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            }
        })
        .collect();
    // Jobs name their pods `<job>-<5 chars>`: keep room for that suffix.
    const MAX: usize = 52;
    if clean != raw || clean.len() > MAX {
        let digest = &crate::digest::digest(&raw)[..8];
        clean.truncate(MAX - 9);
        clean = format!("{}-{digest}", clean.trim_end_matches('-'));
    }
    clean
}

/// A label value (at most 63 of `[A-Za-z0-9._-]`, alphanumeric at both
/// ends); values that do not fit are cleaned and end in a digest.
pub fn label_value(v: &str) -> String {
    let ok = |c: char| c.is_ascii_alphanumeric() || "._-".contains(c);
    let fits = v.len() <= 63
        && v.chars().all(ok)
        && v.chars().next().is_none_or(|c| c.is_ascii_alphanumeric())
        && v.chars().last().is_none_or(|c| c.is_ascii_alphanumeric());
    if fits {
        return v.to_string();
    }
    let clean: String = v
        .chars()
        .map(|c| if ok(c) { c } else { '-' })
        .take(50)
        .collect();
    let clean = clean.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    let digest = &crate::digest::digest(v)[..12];
    if clean.is_empty() {
        format!("x{digest}")
    } else {
        format!("{clean}-{digest}")
    }
}

/// The repository's path as recorded (no trailing `/`, however it was
/// spelled), so the launcher and doctor agree.
pub fn repo_path(repo: &std::path::Path) -> String {
    let p = repo.to_string_lossy();
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        "/".into()
    } else {
        t.to_string()
    }
}

/// The repository's label: a digest of its path.
pub fn repo_label(repo: &std::path::Path) -> String {
    crate::digest::digest(repo_path(repo).as_bytes())[..16].to_string()
}

/// The labels every object of a candidate carries.
pub fn labels(spec: &LaunchSpec) -> BTreeMap<String, String> {
    BTreeMap::from([
        (LABEL_RUN.to_string(), label_value(&spec.run)),
        (LABEL_CANDIDATE.to_string(), label_value(&spec.candidate)),
        (LABEL_REPO.to_string(), repo_label(&spec.repo)),
        (
            LABEL_VERSION.to_string(),
            label_value(env!("CARGO_PKG_VERSION")),
        ),
    ])
}

fn annotations(spec: &LaunchSpec, deadline_ms: u64) -> BTreeMap<String, String> {
    BTreeMap::from([
        (ANNOTATION_REPO.to_string(), repo_path(&spec.repo)),
        (ANNOTATION_RUN.to_string(), spec.run.clone()),
        (ANNOTATION_CANDIDATE.to_string(), spec.candidate.clone()),
        (ANNOTATION_DEADLINE.to_string(), deadline_ms.to_string()),
        (
            ANNOTATION_TIMEOUT.to_string(),
            spec.timeout.as_millis().to_string(),
        ),
    ])
}

fn meta(name: &str, namespace: &str, spec: &LaunchSpec, deadline_ms: u64) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: Some(namespace.to_string()),
        labels: Some(labels(spec)),
        annotations: Some(annotations(spec, deadline_ms)),
        ..Default::default()
    }
}

pub fn secret_name(job: &str) -> String {
    format!("{job}-env")
}

pub fn policy_name(job: &str) -> String {
    format!("{job}-egress")
}

fn agent_of(spec: &LaunchSpec) -> AgentConfig {
    spec.agent
        .clone()
        .unwrap_or_else(|| AgentConfig::new(RuntimeKind::Command))
}

fn host_value<'a>(spec: &'a LaunchSpec, key: &str) -> Option<&'a str> {
    spec.env
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// The variables the agent names in `env:` (credentials): they go into
/// the candidate's Secret, never into the pod spec, where anyone who may
/// read pods would see them.
pub fn secret_env(spec: &LaunchSpec) -> BTreeMap<String, String> {
    let agent = agent_of(spec);
    spec.env
        .iter()
        .filter(|(k, _)| agent.env.contains(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The agent's environment: credentials by reference to the Secret, the
/// rest by value, host paths replaced by the pod's.
pub fn env(spec: &LaunchSpec, job: &str) -> Vec<EnvVar> {
    let agent = agent_of(spec);
    let mut out = Vec::new();
    for (k, v) in &spec.env {
        if agent.env.contains(k) {
            out.push(EnvVar {
                name: k.clone(),
                value_from: Some(EnvVarSource {
                    secret_key_ref: Some(SecretKeySelector {
                        name: secret_name(job),
                        key: k.clone(),
                        optional: Some(false),
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            });
            continue;
        }
        if HOST_ONLY_ENV.contains(&k.as_str()) {
            continue;
        }
        let value = if k == "RASCAL_INSTRUCTION_FILE" {
            INSTRUCTION.to_string()
        } else if k == crate::exec::env::CRITERIA_ENV {
            // Handed in with the instruction (see `transfer::pack`).
            CRITERIA.to_string()
        } else if k == crate::exec::env::ARTIFACTS_ENV {
            ARTIFACTS.to_string()
        } else {
            v.clone()
        };
        out.push(EnvVar {
            name: k.clone(),
            value: Some(value),
            ..Default::default()
        });
    }
    if !out.iter().any(|e| e.name == "HOME") {
        out.push(EnvVar {
            name: "HOME".into(),
            value: Some("/tmp".into()),
            ..Default::default()
        });
    }
    out
}

/// The agent's command: its argv with the instruction's host path
/// replaced, reading its standard input from the handed-in file.
pub fn agent_command(spec: &LaunchSpec) -> Vec<String> {
    let host_instruction = host_value(spec, "RASCAL_INSTRUCTION_FILE");
    let mut cmd = vec![
        "sh".to_string(),
        "-c".to_string(),
        format!("exec \"$@\" < {STDIN}"),
        "rascal-agent".to_string(),
    ];
    cmd.extend(spec.argv.iter().map(|a| match host_instruction {
        Some(h) if a == h => INSTRUCTION.to_string(),
        _ => a.clone(),
    }));
    cmd
}

/// CPU as Kubernetes writes it: `2`, `1500m`.
pub fn cpu_quantity(cpus: f64) -> Quantity {
    let milli = (cpus * 1000.0).round() as i64;
    if milli % 1000 == 0 {
        Quantity((milli / 1000).to_string())
    } else {
        Quantity(format!("{milli}m"))
    }
}

fn limits(cpu: Quantity, memory: Quantity) -> ResourceRequirements {
    let map = BTreeMap::from([("cpu".to_string(), cpu), ("memory".to_string(), memory)]);
    // Requests equal to limits: the pod is scheduled where its limits fit.
    ResourceRequirements {
        limits: Some(map.clone()),
        requests: Some(map),
        ..Default::default()
    }
}

/// Each container's security context: no privilege, no capability, no
/// way to gain either, seccomp on, root filesystem read-only.
pub fn container_security(read_only: bool, uid: Option<i64>) -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        privileged: Some(false),
        read_only_root_filesystem: Some(read_only),
        run_as_non_root: Some(true),
        run_as_user: uid,
        run_as_group: uid,
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".into()]),
            add: None,
        }),
        seccomp_profile: Some(SeccompProfile {
            type_: "RuntimeDefault".into(),
            localhost_profile: None,
        }),
        ..Default::default()
    }
}

fn mount(name: &str, path: &str, sub_path: Option<&str>, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.into(),
        mount_path: path.into(),
        sub_path: sub_path.map(str::to_string),
        read_only: read_only.then_some(true),
        ..Default::default()
    }
}

fn empty_dir(name: &str, memory: bool, size: Option<&str>) -> Volume {
    Volume {
        name: name.into(),
        empty_dir: Some(EmptyDirVolumeSource {
            medium: memory.then(|| "Memory".to_string()),
            size_limit: size.map(|s| Quantity(s.into())),
        }),
        ..Default::default()
    }
}

/// A shell loop that waits for `marker`, at most `secs` seconds.
fn wait_for(marker: &str, secs: i64) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        format!(
            "i=0; until [ -e {marker} ]; do [ $i -ge {secs} ] && exit 1; i=$((i+1)); sleep 1; done"
        ),
    ]
}

/// The candidate's Job. `deadline_ms` is when the agent times out (Unix
/// milliseconds), recorded for a reattach.
pub fn job(spec: &LaunchSpec, k: &KubernetesConfig, deadline_ms: u64) -> Job {
    let agent = agent_of(spec);
    let name = job_name(&spec.run, &spec.candidate);
    let uid = k.run_as_user;
    let read_only = agent.read_only.unwrap_or(true);
    let helper_limits = || limits(Quantity(HELPER_CPU.into()), Quantity(HELPER_MEMORY.into()));
    let timeout_secs = spec.timeout.as_secs().max(1) as i64;
    let receive = Container {
        name: RECEIVE.into(),
        image: spec.image.clone(),
        command: Some(wait_for(READY, TRANSFER_GRACE_SECS)),
        volume_mounts: Some(vec![
            mount("rascal", RASCAL_DIR, None, false),
            mount("handoff", HANDOFF_DIR, None, false),
        ]),
        security_context: Some(container_security(true, uid)),
        resources: Some(helper_limits()),
        ..Default::default()
    };
    let main = Container {
        name: AGENT.into(),
        image: spec.image.clone(),
        command: Some(agent_command(spec)),
        working_dir: Some(WORKSPACE.into()),
        env: Some(env(spec, &name)),
        volume_mounts: Some(vec![
            mount("rascal", RASCAL_DIR, None, false),
            mount("rascal", WORKSPACE, Some("workspace"), false),
            mount("tmp", "/tmp", None, false),
        ]),
        security_context: Some(container_security(read_only, uid)),
        resources: Some(limits(
            cpu_quantity(agent.cpus.unwrap_or(DEFAULT_CPUS)),
            Quantity(agent.memory.unwrap_or(DEFAULT_MEMORY).get().to_string()),
        )),
        ..Default::default()
    };
    let collect = Container {
        name: COLLECT.into(),
        image: spec.image.clone(),
        command: Some(wait_for(DONE, COLLECT_WAIT_SECS + timeout_secs)),
        volume_mounts: Some(vec![
            mount("rascal", RASCAL_DIR, None, true),
            mount("done", DONE_DIR, None, false),
        ]),
        security_context: Some(container_security(true, uid)),
        resources: Some(helper_limits()),
        ..Default::default()
    };
    let pod = pod_spec(k, receive, main, collect);
    Job {
        metadata: meta(&name, &k.namespace, spec, deadline_ms),
        spec: Some(JobSpec {
            backoff_limit: Some(0),
            completions: Some(1),
            parallelism: Some(1),
            active_deadline_seconds: Some(timeout_secs + TRANSFER_GRACE_SECS),
            ttl_seconds_after_finished: Some(
                k.ttl_seconds_after_finished.unwrap_or(DEFAULT_TTL_SECS),
            ),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(spec)),
                    annotations: Some(annotations(spec, deadline_ms)),
                    ..Default::default()
                }),
                spec: Some(pod),
            },
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The Job's pod: the receiving init container, the agent and the
/// collector; no API credentials, service links or host namespaces, the
/// cluster's scheduling settings, and its scratch volumes.
fn pod_spec(
    k: &KubernetesConfig,
    receive: Container,
    main: Container,
    collect: Container,
) -> PodSpec {
    let uid = k.run_as_user;
    PodSpec {
        init_containers: Some(vec![receive]),
        containers: vec![main, collect],
        restart_policy: Some("Never".into()),
        // The pod gets no API credentials and no service addresses.
        automount_service_account_token: Some(false),
        enable_service_links: Some(false),
        host_network: Some(false),
        host_pid: Some(false),
        host_ipc: Some(false),
        share_process_namespace: Some(false),
        service_account_name: k.service_account.clone(),
        image_pull_secrets: (!k.image_pull_secrets.is_empty()).then(|| {
            k.image_pull_secrets
                .iter()
                .map(|s| LocalObjectReference { name: s.clone() })
                .collect()
        }),
        node_selector: (!k.node_selector.is_empty()).then(|| k.node_selector.clone()),
        tolerations: (!k.tolerations.is_empty()).then(|| {
            k.tolerations
                .iter()
                .map(|t| Toleration {
                    key: t.key.clone(),
                    operator: t.operator.clone(),
                    value: t.value.clone(),
                    effect: t.effect.clone(),
                    toleration_seconds: t.toleration_seconds,
                })
                .collect()
        }),
        security_context: Some(PodSecurityContext {
            run_as_non_root: Some(true),
            run_as_user: uid,
            run_as_group: uid,
            fs_group: uid,
            seccomp_profile: Some(SeccompProfile {
                type_: "RuntimeDefault".into(),
                localhost_profile: None,
            }),
            ..Default::default()
        }),
        volumes: Some(vec![
            empty_dir("rascal", false, None),
            empty_dir("tmp", true, Some(TMP_SIZE)),
            empty_dir("handoff", true, Some("1Mi")),
            empty_dir("done", true, Some("1Mi")),
        ]),
        ..Default::default()
    }
}

/// The Secret with the agent's credentials (None when it names none).
pub fn secret(spec: &LaunchSpec, k: &KubernetesConfig) -> Option<Secret> {
    let values = secret_env(spec);
    if values.is_empty() {
        return None;
    }
    let job = job_name(&spec.run, &spec.candidate);
    Some(Secret {
        metadata: meta(&secret_name(&job), &k.namespace, spec, 0),
        type_: Some("Opaque".into()),
        data: Some(
            values
                .into_iter()
                .map(|(k, v)| (k, ByteString(v.into_bytes())))
                .collect(),
        ),
        ..Default::default()
    })
}

/// The candidate pod's NetworkPolicy: nothing comes in, and nothing goes
/// out except the configured ranges (and DNS, when there are any). With
/// `network: none` on the agent, nothing goes out at all. A policy is only
/// enforced by a network plugin that implements NetworkPolicy.
pub fn network_policy(spec: &LaunchSpec, k: &KubernetesConfig) -> NetworkPolicy {
    let agent = agent_of(spec);
    let job = job_name(&spec.run, &spec.candidate);
    let sealed = agent.network.as_deref() == Some("none");
    let mut egress: Vec<NetworkPolicyEgressRule> = Vec::new();
    if !sealed {
        for rule in k.egress.iter().filter_map(|e| parse_egress(e).ok()) {
            egress.push(NetworkPolicyEgressRule {
                to: Some(vec![NetworkPolicyPeer {
                    ip_block: Some(IPBlock {
                        cidr: rule.cidr,
                        except: None,
                    }),
                    ..Default::default()
                }]),
                ports: rule.port.map(|p| {
                    vec![NetworkPolicyPort {
                        port: Some(IntOrString::Int(p as i32)),
                        protocol: Some("TCP".into()),
                        end_port: None,
                    }]
                }),
            });
        }
        if !egress.is_empty() && k.dns.unwrap_or(true) {
            egress.push(NetworkPolicyEgressRule {
                to: None,
                ports: Some(
                    ["UDP", "TCP"]
                        .iter()
                        .map(|p| NetworkPolicyPort {
                            port: Some(IntOrString::Int(53)),
                            protocol: Some(p.to_string()),
                            end_port: None,
                        })
                        .collect(),
                ),
            });
        }
    }
    let selector = BTreeMap::from([
        (LABEL_RUN.to_string(), label_value(&spec.run)),
        (LABEL_CANDIDATE.to_string(), label_value(&spec.candidate)),
    ]);
    NetworkPolicy {
        metadata: meta(&policy_name(&job), &k.namespace, spec, 0),
        spec: Some(NetworkPolicySpec {
            pod_selector: Some(LabelSelector {
                match_labels: Some(selector),
                match_expressions: None,
            }),
            policy_types: Some(vec!["Ingress".into(), "Egress".into()]),
            ingress: Some(Vec::new()),
            egress: Some(egress),
        }),
    }
}

/// A verification command of candidate `of` (a guardrail or criterion
/// command), run as a Job of its own: the same pod as the agent's (built
/// by [`job`], so the same hardening), its main container named `check`,
/// labelled `rascal.check-of` / `rascal.check` instead of
/// `rascal.candidate`, so that no policy of the agent's selects its pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// The candidate it checks.
    pub of: String,
    /// Its number among that candidate's checks.
    pub n: usize,
    /// The candidate's attempt: a retry's checks get names of their own
    /// (a deleted Job's name stays taken until its pod is gone).
    pub attempt: u32,
}

impl Check {
    /// Its number as labelled: `3`, or `2-3` for a retry's (attempt 2).
    pub fn number(&self) -> String {
        if self.attempt <= 1 {
            self.n.to_string()
        } else {
            format!("{}-{}", self.attempt, self.n)
        }
    }

    /// Its name in the launch spec and the Job's name (`claude-check-3`).
    pub fn id(&self) -> String {
        format!("{}-check-{}", self.of, self.number())
    }

    /// The labels that select its pod: its run, its candidate, its number.
    pub fn selector(&self, run: &str) -> BTreeMap<String, String> {
        BTreeMap::from([
            (LABEL_RUN.to_string(), label_value(run)),
            (LABEL_CHECK_OF.to_string(), label_value(&self.of)),
            (LABEL_CHECK.to_string(), self.number()),
        ])
    }

    /// Every label of its objects: the selector's and the repository's
    /// and version's (so `rascal doctor` finds a leftover one).
    fn labels(&self, spec: &LaunchSpec) -> BTreeMap<String, String> {
        let mut l = labels(spec);
        l.remove(LABEL_CANDIDATE);
        l.extend(self.selector(&spec.run));
        l
    }

    fn relabel(&self, spec: &LaunchSpec, meta: &mut ObjectMeta) {
        meta.labels = Some(self.labels(spec));
        if let Some(a) = meta.annotations.as_mut() {
            a.insert(
                ANNOTATION_CANDIDATE.to_string(),
                format!("{} (check {})", self.of, self.number()),
            );
        }
    }
}

/// The Job of a verification command. `spec.candidate` is `check.id()`,
/// `spec.agent.env` the names of the variables the check may see (they go
/// into the check's own Secret, never the agent's).
pub fn check_job(spec: &LaunchSpec, k: &KubernetesConfig, deadline_ms: u64, check: &Check) -> Job {
    let mut job = job(spec, k, deadline_ms);
    check.relabel(spec, &mut job.metadata);
    if let Some(js) = job.spec.as_mut() {
        if let Some(m) = js.template.metadata.as_mut() {
            check.relabel(spec, m);
        }
        if let Some(p) = js.template.spec.as_mut() {
            if let Some(main) = p.containers.iter_mut().find(|c| c.name == AGENT) {
                main.name = CHECK.into();
            }
        }
    }
    job
}

/// The check's Secret: only the variables the check names.
pub fn check_secret(spec: &LaunchSpec, k: &KubernetesConfig, check: &Check) -> Option<Secret> {
    let mut s = secret(spec, k)?;
    check.relabel(spec, &mut s.metadata);
    Some(s)
}

/// The check pod's own default-deny policy: nothing in; nothing out with
/// `network: none` on `spec.agent` (a check without `network: true`),
/// else only the `egress:` ranges an agent gets.
pub fn check_policy(spec: &LaunchSpec, k: &KubernetesConfig, check: &Check) -> NetworkPolicy {
    let mut p = network_policy(spec, k);
    check.relabel(spec, &mut p.metadata);
    if let Some(ps) = p.spec.as_mut() {
        ps.pod_selector = Some(LabelSelector {
            match_labels: Some(check.selector(&spec.run)),
            match_expressions: None,
        });
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::kubernetes::Toleration as TolerationConfig;
    use std::path::PathBuf;
    use std::time::Duration;

    fn spec() -> LaunchSpec {
        let mut agent = AgentConfig::new(RuntimeKind::Command);
        agent.env = vec!["ANTHROPIC_API_KEY".into()];
        agent.cpus = Some(1.5);
        agent.memory = Some(crate::config::container::ByteSize(1 << 30));
        LaunchSpec {
            run: "r-20261130-1a2b".into(),
            candidate: "claude".into(),
            workdir: PathBuf::from("/state/ws/claude"),
            argv: vec!["my-agent".into(), "/host/instruction.md".into()],
            env: vec![
                ("ANTHROPIC_API_KEY".into(), "sk-secret".into()),
                ("PATH".into(), "/usr/bin".into()),
                (
                    "RASCAL_INSTRUCTION_FILE".into(),
                    "/host/instruction.md".into(),
                ),
                (crate::exec::env::ARTIFACTS_ENV.into(), "/host/art".into()),
                (
                    crate::exec::env::CRITERIA_ENV.into(),
                    "/host/criteria.json".into(),
                ),
                ("RASCAL_AGENT".into(), "claude".into()),
            ],
            stdin: Some(b"do it".to_vec()),
            timeout: Duration::from_secs(1800),
            image: Some("runner:1".into()),
            agent: Some(agent),
            repo: PathBuf::from("/home/me/project"),
            resume: None,
            confine: None,
            upload: None,
        }
    }

    fn pod(job: &Job) -> &PodSpec {
        job.spec.as_ref().unwrap().template.spec.as_ref().unwrap()
    }

    #[test]
    fn every_container_is_hardened() {
        let job = job(&spec(), &KubernetesConfig::default(), 1);
        let p = pod(&job);
        let all: Vec<&Container> = p
            .init_containers
            .iter()
            .flatten()
            .chain(p.containers.iter())
            .collect();
        assert_eq!(all.len(), 3);
        for c in all {
            let s = c.security_context.as_ref().unwrap();
            assert_eq!(s.allow_privilege_escalation, Some(false), "{}", c.name);
            assert_eq!(s.privileged, Some(false));
            assert_eq!(s.read_only_root_filesystem, Some(true));
            assert_eq!(s.run_as_non_root, Some(true));
            assert_eq!(
                s.capabilities.as_ref().unwrap().drop,
                Some(vec!["ALL".to_string()])
            );
            assert_eq!(s.capabilities.as_ref().unwrap().add, None);
            assert_eq!(s.seccomp_profile.as_ref().unwrap().type_, "RuntimeDefault");
            let limits = c.resources.as_ref().unwrap().limits.as_ref().unwrap();
            assert!(limits.contains_key("cpu") && limits.contains_key("memory"));
        }
        let ps = p.security_context.as_ref().unwrap();
        assert_eq!(ps.run_as_non_root, Some(true));
        assert_eq!(ps.run_as_user, None);
        assert_eq!(ps.seccomp_profile.as_ref().unwrap().type_, "RuntimeDefault");
        assert_eq!(p.automount_service_account_token, Some(false));
        assert_eq!(p.enable_service_links, Some(false));
        assert_eq!(p.host_network, Some(false));
        assert_eq!(p.host_pid, Some(false));
        assert_eq!(p.restart_policy.as_deref(), Some("Never"));
    }

    #[test]
    fn job_limits_deadline_and_labels_come_from_the_agent_and_the_run() {
        let job = job(&spec(), &KubernetesConfig::default(), 42);
        let js = job.spec.as_ref().unwrap();
        assert_eq!(js.backoff_limit, Some(0));
        assert_eq!(js.active_deadline_seconds, Some(1800 + TRANSFER_GRACE_SECS));
        assert_eq!(js.ttl_seconds_after_finished, Some(DEFAULT_TTL_SECS));
        let agent = &pod(&job).containers[0];
        assert_eq!(agent.name, AGENT);
        let lim = agent.resources.as_ref().unwrap().limits.as_ref().unwrap();
        assert_eq!(lim["cpu"], Quantity("1500m".into()));
        assert_eq!(lim["memory"], Quantity((1u64 << 30).to_string()));
        let labels = job.metadata.labels.as_ref().unwrap();
        assert_eq!(labels[LABEL_RUN], "r-20261130-1a2b");
        assert_eq!(labels[LABEL_CANDIDATE], "claude");
        assert_eq!(labels[LABEL_REPO].len(), 16);
        assert_eq!(labels[LABEL_VERSION], env!("CARGO_PKG_VERSION"));
        let ann = job.metadata.annotations.as_ref().unwrap();
        assert_eq!(ann[ANNOTATION_REPO], "/home/me/project");
        assert_eq!(ann[ANNOTATION_DEADLINE], "42");
        // The pod carries the labels its NetworkPolicy selects.
        let tl = js
            .template
            .metadata
            .as_ref()
            .unwrap()
            .labels
            .as_ref()
            .unwrap();
        assert_eq!(tl, labels);
        assert_eq!(
            job.metadata.name.as_deref(),
            Some("rascal-r-20261130-1a2b-claude")
        );
    }

    #[test]
    fn credentials_go_to_the_secret_never_into_the_pod_spec() {
        let s = spec();
        let job = job(&s, &KubernetesConfig::default(), 1);
        let text = serde_json::to_string(&job).unwrap();
        assert!(!text.contains("sk-secret"), "credential in the pod spec");
        assert!(!text.contains("/usr/bin"), "host PATH leaked");
        let env = pod(&job).containers[0].env.clone().unwrap();
        let key = env.iter().find(|e| e.name == "ANTHROPIC_API_KEY").unwrap();
        let sel = key
            .value_from
            .as_ref()
            .unwrap()
            .secret_key_ref
            .as_ref()
            .unwrap();
        assert_eq!(sel.name, "rascal-r-20261130-1a2b-claude-env");
        let get = |n: &str| {
            env.iter()
                .find(|e| e.name == n)
                .and_then(|e| e.value.clone())
        };
        assert_eq!(get("RASCAL_INSTRUCTION_FILE").as_deref(), Some(INSTRUCTION));
        assert_eq!(
            get(crate::exec::env::ARTIFACTS_ENV).as_deref(),
            Some(ARTIFACTS)
        );
        assert_eq!(
            get(crate::exec::env::CRITERIA_ENV).as_deref(),
            Some(CRITERIA)
        );
        assert_eq!(get("HOME").as_deref(), Some("/tmp"));
        let secret = secret(&s, &KubernetesConfig::default()).unwrap();
        assert_eq!(
            secret.data.unwrap()["ANTHROPIC_API_KEY"],
            ByteString(b"sk-secret".to_vec())
        );
        let cmd = pod(&job).containers[0].command.clone().unwrap();
        assert_eq!(cmd.last().unwrap(), INSTRUCTION);
        assert_eq!(cmd[2], format!("exec \"$@\" < {STDIN}"));
    }

    #[test]
    fn placement_and_uid_come_from_the_config() {
        let k = KubernetesConfig {
            namespace: "agents".into(),
            image_pull_secrets: vec!["regcred".into()],
            service_account: Some("rascal-agent".into()),
            node_selector: BTreeMap::from([("pool".into(), "agents".into())]),
            tolerations: vec![TolerationConfig {
                key: Some("dedicated".into()),
                operator: Some("Equal".into()),
                value: Some("agents".into()),
                effect: Some("NoSchedule".into()),
                toleration_seconds: None,
            }],
            run_as_user: Some(1000),
            ttl_seconds_after_finished: Some(60),
            ..Default::default()
        };
        let job = job(&spec(), &k, 1);
        assert_eq!(job.metadata.namespace.as_deref(), Some("agents"));
        let p = pod(&job);
        assert_eq!(p.service_account_name.as_deref(), Some("rascal-agent"));
        assert_eq!(p.image_pull_secrets.as_ref().unwrap()[0].name, "regcred");
        assert_eq!(p.node_selector.as_ref().unwrap()["pool"], "agents");
        assert_eq!(
            p.tolerations.as_ref().unwrap()[0].effect.as_deref(),
            Some("NoSchedule")
        );
        let ps = p.security_context.as_ref().unwrap();
        assert_eq!(
            (ps.run_as_user, ps.run_as_group, ps.fs_group),
            (Some(1000), Some(1000), Some(1000))
        );
        assert_eq!(
            p.containers[0]
                .security_context
                .as_ref()
                .unwrap()
                .run_as_user,
            Some(1000)
        );
        assert_eq!(job.spec.unwrap().ttl_seconds_after_finished, Some(60));
    }

    #[test]
    fn markers_live_in_volumes_the_agent_does_not_mount() {
        let job = job(&spec(), &KubernetesConfig::default(), 1);
        let p = pod(&job);
        let agent_mounts: Vec<String> = p.containers[0]
            .volume_mounts
            .iter()
            .flatten()
            .map(|m| m.name.clone())
            .collect();
        assert!(!agent_mounts.contains(&"handoff".to_string()));
        assert!(!agent_mounts.contains(&"done".to_string()));
        let collect = &p.containers[1];
        assert_eq!(collect.name, COLLECT);
        let rascal = collect
            .volume_mounts
            .iter()
            .flatten()
            .find(|m| m.name == "rascal")
            .unwrap();
        assert_eq!(rascal.read_only, Some(true));
    }

    #[test]
    fn egress_is_denied_by_default_and_opened_only_as_configured() {
        let s = spec();
        let closed = network_policy(&s, &KubernetesConfig::default());
        let ns = closed.spec.as_ref().unwrap();
        assert_eq!(
            ns.policy_types,
            Some(vec!["Ingress".into(), "Egress".into()])
        );
        assert_eq!(ns.egress, Some(vec![]));
        assert_eq!(ns.ingress, Some(vec![]));
        let sel = ns
            .pod_selector
            .as_ref()
            .unwrap()
            .match_labels
            .as_ref()
            .unwrap();
        assert_eq!(sel[LABEL_CANDIDATE], "claude");
        let k = KubernetesConfig {
            egress: vec!["203.0.113.0/24:443".into()],
            ..Default::default()
        };
        let open = network_policy(&s, &k);
        let rules = open.spec.unwrap().egress.unwrap();
        assert_eq!(rules.len(), 2, "the range and DNS");
        let peer = &rules[0].to.as_ref().unwrap()[0];
        assert_eq!(peer.ip_block.as_ref().unwrap().cidr, "203.0.113.0/24");
        assert_eq!(
            rules[0].ports.as_ref().unwrap()[0].port,
            Some(IntOrString::Int(443))
        );
        // network: none wins over the ranges.
        let mut sealed = s.clone();
        sealed.agent.as_mut().unwrap().network = Some("none".into());
        assert_eq!(
            network_policy(&sealed, &k).spec.unwrap().egress,
            Some(vec![])
        );
    }

    #[test]
    fn names_and_labels_are_what_the_api_accepts() {
        assert_eq!(job_name("r-1", "claude"), "rascal-r-1-claude");
        let odd = job_name("r-1", "Claude/2 x");
        assert!(
            odd.len() <= 52 && odd.starts_with("rascal-r-1-claude-2-x-"),
            "{odd}"
        );
        assert_ne!(job_name("r-1", "a_b"), job_name("r-1", "a.b"));
        let long = job_name("r-20261130-1a2b", &"x".repeat(80));
        assert!(long.len() <= 52, "{long}");
        for v in ["claude", "a/b", "-x-", &"y".repeat(90), "", "ü"] {
            let l = label_value(v);
            assert!(l.len() <= 63, "{l}");
            assert!(
                l.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)),
                "{l}"
            );
        }
        assert_ne!(label_value("a/b"), label_value("a-b"));
    }

    #[test]
    fn a_check_job_is_hardened_like_the_agents_and_selected_by_nothing_of_the_agents() {
        let check = Check {
            of: "claude".into(),
            n: 2,
            attempt: 1,
        };
        let retry = Check {
            attempt: 3,
            ..check.clone()
        };
        assert_eq!(retry.id(), "claude-check-3-2");
        assert_ne!(retry.selector("r"), check.selector("r"));
        let mut s = spec();
        s.candidate = check.id();
        s.env = vec![("CHECK_TOKEN".into(), "t0k3n".into())];
        let a = s.agent.as_mut().unwrap();
        a.env = vec!["CHECK_TOKEN".into()];
        a.network = Some("none".into());
        let k = KubernetesConfig {
            egress: vec!["203.0.113.0/24:443".into()],
            ..Default::default()
        };
        let job = check_job(&s, &k, 1, &check);
        let p = pod(&job);
        assert_eq!(p.containers[0].name, CHECK);
        for c in p
            .init_containers
            .iter()
            .flatten()
            .chain(p.containers.iter())
        {
            let sc = c.security_context.as_ref().unwrap();
            assert_eq!(sc.allow_privilege_escalation, Some(false));
            assert_eq!(sc.read_only_root_filesystem, Some(true));
            assert_eq!(
                sc.capabilities.as_ref().unwrap().drop,
                Some(vec!["ALL".into()])
            );
        }
        for labels in [
            job.metadata.labels.as_ref().unwrap(),
            job.spec
                .as_ref()
                .unwrap()
                .template
                .metadata
                .as_ref()
                .unwrap()
                .labels
                .as_ref()
                .unwrap(),
        ] {
            assert!(!labels.contains_key(LABEL_CANDIDATE), "{labels:?}");
            assert_eq!(labels[LABEL_CHECK_OF], "claude");
            assert_eq!(labels[LABEL_CHECK], "2");
            assert_eq!(labels[LABEL_REPO].len(), 16);
        }
        // Its variable by reference to its own Secret, never the agent's.
        let text = serde_json::to_string(&job).unwrap();
        assert!(!text.contains("t0k3n"));
        assert!(
            text.contains("rascal-r-20261130-1a2b-claude-check-2-env"),
            "{text}"
        );
        assert!(
            !text.contains("\"rascal-r-20261130-1a2b-claude-env\""),
            "{text}"
        );
        let secret = check_secret(&s, &k, &check).unwrap();
        assert_eq!(secret.data.unwrap().len(), 1);
        // Its own policy: its pod only, nothing out despite the ranges.
        let policy = check_policy(&s, &k, &check);
        let ps = policy.spec.unwrap();
        assert_eq!(ps.egress, Some(vec![]));
        assert_eq!(
            ps.pod_selector.unwrap().match_labels,
            Some(check.selector(&s.run))
        );
        // With the network, what an agent gets: the ranges and DNS.
        s.agent.as_mut().unwrap().network = None;
        let open = check_policy(&s, &k, &check).spec.unwrap().egress.unwrap();
        assert_eq!(open.len(), 2);
    }
}
