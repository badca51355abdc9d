//! Unit tests of `spec`.

use super::*;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use rascal_core::config::kubernetes::Toleration as TolerationConfig;
use std::path::PathBuf;
use std::time::Duration;

fn spec() -> LaunchSpec {
    let mut agent = AgentConfig::new(RuntimeKind::Command);
    agent.env = vec!["ANTHROPIC_API_KEY".into()];
    agent.cpus = Some(1.5);
    agent.memory = Some(rascal_core::config::container::ByteSize(1 << 30));
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
