//! `rascal doctor` under `launcher: kubernetes`: which context and API
//! server rascal would use, whether the namespace is there, whether the
//! account may do each thing a run needs (a `SelfSubjectAccessReview` per
//! permission, as `kubectl auth can-i` asks), and which rascal Jobs of
//! this repository belong to runs the store no longer has (deleted with
//! `--remove`) or to interrupted runs (resumable with `rascal attach`).

use super::Diagnosis;
use crate::config::kubernetes::KubernetesConfig;
use crate::exec::launch::kubernetes::{cluster, delete, spec};
use crate::store::Store;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams, PostParams};
use std::path::Path;

/// One permission a run needs: verb, API group, resource, subresource.
pub struct Permission {
    pub verb: &'static str,
    pub group: &'static str,
    pub resource: &'static str,
    pub subresource: &'static str,
    pub why: &'static str,
}

/// Everything the launcher and doctor do in the namespace. The Role in
/// docs/kubernetes.md grants exactly these.
pub const PERMISSIONS: &[Permission] = &[
    Permission {
        verb: "create",
        group: "batch",
        resource: "jobs",
        subresource: "",
        why: "start a candidate",
    },
    Permission {
        verb: "get",
        group: "batch",
        resource: "jobs",
        subresource: "",
        why: "reattach",
    },
    Permission {
        verb: "list",
        group: "batch",
        resource: "jobs",
        subresource: "",
        why: "find leftovers",
    },
    Permission {
        verb: "delete",
        group: "batch",
        resource: "jobs",
        subresource: "",
        why: "cancel and clean up",
    },
    Permission {
        verb: "list",
        group: "",
        resource: "pods",
        subresource: "",
        why: "find a candidate's pod",
    },
    Permission {
        verb: "get",
        group: "",
        resource: "pods",
        subresource: "log",
        why: "follow the agent's log",
    },
    Permission {
        verb: "create",
        group: "",
        resource: "pods",
        subresource: "exec",
        why: "hand the workspace in and the result back",
    },
    Permission {
        verb: "get",
        group: "",
        resource: "pods",
        subresource: "exec",
        why: "open the exec websocket",
    },
    Permission {
        verb: "create",
        group: "",
        resource: "secrets",
        subresource: "",
        why: "pass the agent's credentials",
    },
    Permission {
        verb: "patch",
        group: "",
        resource: "secrets",
        subresource: "",
        why: "make the Secret the Job's",
    },
    Permission {
        verb: "create",
        group: "networking.k8s.io",
        resource: "networkpolicies",
        subresource: "",
        why: "deny the agent's egress",
    },
    Permission {
        verb: "patch",
        group: "networking.k8s.io",
        resource: "networkpolicies",
        subresource: "",
        why: "make the policy the Job's",
    },
];

fn shown(p: &Permission) -> String {
    let res = if p.subresource.is_empty() {
        p.resource.to_string()
    } else {
        format!("{}/{}", p.resource, p.subresource)
    };
    format!("{} {res}", p.verb)
}

/// Examine the cluster for the repository at `repo_dir` whose store is
/// `store`; delete Jobs of gone runs when `remove` is set.
pub async fn diagnose(
    store: &Store,
    repo_dir: &Path,
    k: &KubernetesConfig,
    kubeconfig: Option<&Path>,
    remove: bool,
) -> Diagnosis {
    let mut lines = Vec::new();
    let fail = |mut lines: Vec<String>, l: String| {
        lines.push(l);
        Diagnosis {
            lines,
            exit_code: 1,
        }
    };
    let cluster = match cluster::connect(k, kubeconfig).await {
        Ok(c) => c,
        Err(e) => return fail(lines, format!("kubernetes: {e}")),
    };
    match cluster::version(&cluster).await {
        Ok(v) => lines.push(format!(
            "kubernetes: context {} at {} (API server {v})",
            cluster.context, cluster.url
        )),
        Err(e) => return fail(lines, format!("kubernetes: {e}")),
    }
    let ns = &k.namespace;
    let mut exit_code = 0;
    let namespaces: Api<Namespace> = Api::all(cluster.client.clone());
    match namespaces.get_opt(ns).await {
        Ok(Some(_)) => lines.push(format!("kubernetes: namespace {ns}: present")),
        Ok(None) => {
            exit_code = 1;
            lines.push(format!(
                "kubernetes: namespace {ns} does not exist\n  hint: `kubectl --context {} create namespace {ns}`, or set `namespace:` under `kubernetes:`",
                cluster.context
            ));
        }
        Err(kube::Error::Api(s)) if s.code == 403 => lines.push(format!(
            "kubernetes: namespace {ns}: this account may not read namespaces (fine: the checks below say what it may do there)"
        )),
        Err(e) => {
            exit_code = 1;
            lines.push(format!("kubernetes: could not look up namespace {ns}: {e}"));
        }
    }
    let reviews: Api<SelfSubjectAccessReview> = Api::all(cluster.client.clone());
    let mut denied = Vec::new();
    for p in PERMISSIONS {
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    namespace: Some(ns.clone()),
                    verb: Some(p.verb.into()),
                    group: Some(p.group.into()),
                    resource: Some(p.resource.into()),
                    subresource: (!p.subresource.is_empty()).then(|| p.subresource.into()),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        match reviews.create(&PostParams::default(), &review).await {
            Ok(r) if r.status.as_ref().is_some_and(|s| s.allowed) => {}
            Ok(r) => denied.push(format!(
                "{} ({}){}",
                shown(p),
                p.why,
                r.status
                    .and_then(|s| s.reason)
                    .filter(|r| !r.is_empty())
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            )),
            Err(e) => denied.push(format!("{} (could not ask: {e})", shown(p))),
        }
    }
    if denied.is_empty() {
        lines.push(format!(
            "kubernetes: may {} in {ns}",
            PERMISSIONS.iter().map(shown).collect::<Vec<_>>().join(", ")
        ));
    } else {
        exit_code = 1;
        for d in &denied {
            lines.push(format!("kubernetes: may NOT {d} in {ns}"));
        }
        lines.push(
            "  hint: apply the Role and RoleBinding of docs/kubernetes.md to this account".into(),
        );
    }
    lines.push(
        "kubernetes: each candidate's egress is denied by a NetworkPolicy, which only a network plugin that implements NetworkPolicy enforces (the API cannot tell; docs/kubernetes.md shows how to check)".into(),
    );

    let jobs: Api<Job> = Api::namespaced(cluster.client.clone(), ns);
    let selector = format!("{}={}", spec::LABEL_REPO, spec::repo_label(repo_dir));
    let list = match jobs.list(&ListParams::default().labels(&selector)).await {
        Ok(l) => l.items,
        Err(e) => {
            lines.push(format!("kubernetes: could not list Jobs in {ns}: {e}"));
            return Diagnosis {
                lines,
                exit_code: 1,
            };
        }
    };
    let here = spec::repo_path(repo_dir);
    let mut orphans = 0;
    let mut mine = 0;
    for job in &list {
        let ann = job.metadata.annotations.clone().unwrap_or_default();
        // The label is a digest: the annotation tells the exact repository.
        if ann.get(spec::ANNOTATION_REPO) != Some(&here) {
            continue;
        }
        mine += 1;
        let name = job.metadata.name.clone().unwrap_or_default();
        let run = ann.get(spec::ANNOTATION_RUN).cloned().unwrap_or_default();
        let candidate = ann
            .get(spec::ANNOTATION_CANDIDATE)
            .cloned()
            .unwrap_or_default();
        let state = job_state(job);
        match store.run_status(&run).ok().flatten().as_deref() {
            None => {
                orphans += 1;
                if remove {
                    match delete(&jobs, &name).await {
                        Ok(()) => lines.push(format!(
                            "removed Job {name} ({state}) of run {run} / {candidate}: the run is not in this repository's store"
                        )),
                        Err(e) => {
                            exit_code = 1;
                            lines.push(format!("could not remove Job {name}: {e}"));
                        }
                    }
                } else {
                    exit_code = 1;
                    lines.push(format!(
                        "orphan: Job {name} ({state}) of run {run} / {candidate}: the run is not in this repository's store"
                    ));
                }
            }
            Some("interrupted") => lines.push(format!(
                "Job {name} ({state}) of interrupted run {run} / {candidate}\n  hint: `rascal attach {run}` records its result"
            )),
            Some(s) => lines.push(format!("Job {name} ({state}) of {s} run {run} / {candidate}")),
        }
    }
    if mine == 0 {
        lines.push(format!(
            "no rascal Jobs of this repository in namespace {ns}"
        ));
    } else if orphans > 0 && !remove {
        lines.push(format!(
            "{}\n  hint: `rascal doctor --remove` deletes them (and their pods)",
            crate::text::plural(orphans as u64, "orphan Job")
        ));
    }
    Diagnosis { lines, exit_code }
}

fn job_state(job: &Job) -> &'static str {
    let Some(s) = job.status.as_ref() else {
        return "pending";
    };
    if s.succeeded.unwrap_or(0) > 0 {
        "succeeded"
    } else if s.failed.unwrap_or(0) > 0 {
        "failed"
    } else if s.active.unwrap_or(0) > 0 {
        "active"
    } else {
        "pending"
    }
}
