//! What rascal asks the cluster for, as pure functions of the launch spec
//! and the `kubernetes:` config: the candidate's Job (one pod: an init
//! container that receives the workspace, the agent, and a `collect`
//! container that hands the result back), the Secret holding the agent's
//! credentials, and the default-deny NetworkPolicy of its pod. The same
//! hardening as the docker launcher, spelled as pod security.

use super::super::LaunchSpec;
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, EmptyDirVolumeSource, EnvVar, EnvVarSource, LocalObjectReference,
    PodSecurityContext, PodSpec, PodTemplateSpec, ResourceRequirements, SeccompProfile, Secret,
    SecretKeySelector, SecurityContext, Toleration, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::ByteString;
use rascal_core::config::container::{DEFAULT_CPUS, DEFAULT_MEMORY};
use rascal_core::config::kubernetes::{KubernetesConfig, DEFAULT_TTL_SECS};
use rascal_core::config::{AgentConfig, RuntimeKind};
use std::collections::BTreeMap;

mod check;
mod policy;

pub(crate) use check::{check_job, check_policy, check_secret, Check};
pub(crate) use policy::network_policy;

pub(crate) const LABEL_RUN: &str = "rascal.run";
pub(crate) const LABEL_CANDIDATE: &str = "rascal.candidate";
/// A digest of the repository's path (a label value cannot hold a path).
pub const LABEL_REPO: &str = "rascal.repo";
pub(crate) const LABEL_VERSION: &str = "rascal.version";
/// On a verification command's Job (instead of `rascal.candidate`, so no
/// policy of the agent's ever selects it): the candidate it checks, and
/// its number among that candidate's checks.
pub(crate) const LABEL_CHECK_OF: &str = "rascal.check-of";
pub(crate) const LABEL_CHECK: &str = "rascal.check";
/// The exact values, where a label had to be shortened or cleaned.
pub const ANNOTATION_REPO: &str = "rascal.dev/repo-path";
pub const ANNOTATION_RUN: &str = "rascal.dev/run";
pub const ANNOTATION_CANDIDATE: &str = "rascal.dev/candidate";
/// Unix milliseconds at which the agent times out (for a reattach).
pub(crate) const ANNOTATION_DEADLINE: &str = "rascal.dev/deadline";
/// The agent's timeout in milliseconds (for a reattach's messages).
pub(crate) const ANNOTATION_TIMEOUT: &str = "rascal.dev/timeout";

/// The containers of a candidate's pod.
pub(crate) const RECEIVE: &str = "receive";
pub(crate) const AGENT: &str = "agent";
pub(crate) const COLLECT: &str = "collect";
/// The main container of a verification command's pod.
pub(crate) const CHECK: &str = "check";

/// The `rascal` volume: the workspace and what the agent is handed.
pub(crate) const RASCAL_DIR: &str = "/rascal";
/// Where the candidate's tree is (a sub-path of the `rascal` volume).
pub(crate) const WORKSPACE: &str = "/workspace";
pub(crate) const INSTRUCTION: &str = "/rascal/instruction.md";
/// A planned run's approved criteria (`$RASCAL_CRITERIA_FILE`).
pub(crate) const CRITERIA: &str = "/rascal/criteria.json";
pub(crate) const STDIN: &str = "/rascal/stdin";
pub(crate) const ARTIFACTS: &str = "/rascal/artifacts";
/// Markers only rascal can set: each volume is mounted in one container
/// only, never in the agent's, so the agent cannot end either wait.
pub(crate) const HANDOFF_DIR: &str = "/rascal-handoff";
pub(crate) const READY: &str = "/rascal-handoff/ready";
pub(crate) const DONE_DIR: &str = "/rascal-done";
pub(crate) const DONE: &str = "/rascal-done/now";

/// Seconds the pod may live past the agent's timeout: time to hand the
/// workspace in and the result back. The agent's own timeout is enforced
/// by rascal; this deadline is the cluster's backstop when rascal is gone.
pub(crate) const TRANSFER_GRACE_SECS: i64 = 600;
/// How long `collect` waits for rascal before giving up (so a pod whose
/// rascal died does not run until the deadline).
pub(crate) const COLLECT_WAIT_SECS: i64 = 3600;
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
pub(crate) fn job_name(run: &str, candidate: &str) -> String {
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
        let digest = &rascal_core::digest::digest(&raw)[..8];
        clean.truncate(MAX - 9);
        clean = format!("{}-{digest}", clean.trim_end_matches('-'));
    }
    clean
}

/// A label value (at most 63 of `[A-Za-z0-9._-]`, alphanumeric at both
/// ends); values that do not fit are cleaned and end in a digest.
pub(crate) fn label_value(v: &str) -> String {
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
    let digest = &rascal_core::digest::digest(v)[..12];
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
    rascal_core::digest::digest(repo_path(repo).as_bytes())[..16].to_string()
}

/// The labels every object of a candidate carries.
pub(crate) fn labels(spec: &LaunchSpec) -> BTreeMap<String, String> {
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

pub(crate) fn secret_name(job: &str) -> String {
    format!("{job}-env")
}

pub(crate) fn policy_name(job: &str) -> String {
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
pub(crate) fn secret_env(spec: &LaunchSpec) -> BTreeMap<String, String> {
    let agent = agent_of(spec);
    spec.env
        .iter()
        .filter(|(k, _)| agent.env.contains(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The agent's environment: credentials by reference to the Secret, the
/// rest by value, host paths replaced by the pod's.
pub(crate) fn env(spec: &LaunchSpec, job: &str) -> Vec<EnvVar> {
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
pub(crate) fn agent_command(spec: &LaunchSpec) -> Vec<String> {
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
pub(crate) fn cpu_quantity(cpus: f64) -> Quantity {
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
pub(crate) fn container_security(read_only: bool, uid: Option<i64>) -> SecurityContext {
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
pub(crate) fn job(spec: &LaunchSpec, k: &KubernetesConfig, deadline_ms: u64) -> Job {
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
pub(crate) fn secret(spec: &LaunchSpec, k: &KubernetesConfig) -> Option<Secret> {
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

#[cfg(test)]
mod tests;
