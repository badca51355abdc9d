//! `rascal doctor` under `launcher: kubernetes`: which context and API
//! server rascal would use, whether the namespace is there, whether the
//! account may do each thing a run needs (a `SelfSubjectAccessReview` per
//! permission, as `kubectl auth can-i` asks), and which rascal Jobs of
//! this repository belong to runs the store no longer has (deleted with
//! `--remove`) or to interrupted runs (resumable with `rascal attach`).

use super::Diagnosis;
use crate::store::Store;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams, PostParams};
use rascal_core::config::kubernetes::KubernetesConfig;
use rascal_exec::exec::launch::kubernetes::{cluster, delete, spec};
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
    if !namespace_present(&cluster, ns, &mut lines).await {
        exit_code = 1;
    }
    if !permitted(&cluster, ns, &mut lines).await {
        exit_code = 1;
    }
    lines.push(
        "kubernetes: each candidate's egress is denied by a NetworkPolicy, which only a network plugin that implements NetworkPolicy enforces (the API cannot tell; docs/kubernetes.md shows how to check)".into(),
    );
    let jobs = RepoJobs {
        store,
        repo_dir,
        jobs: Api::namespaced(cluster.client.clone(), ns),
        ns,
        remove,
    };
    if !jobs.examine(&mut lines).await {
        exit_code = 1;
    }
    Diagnosis { lines, exit_code }
}

/// Whether the namespace is there (or cannot be read, which is fine: the
/// permission checks say what the account may do in it).
async fn namespace_present(cluster: &cluster::Cluster, ns: &str, lines: &mut Vec<String>) -> bool {
    let namespaces: Api<Namespace> = Api::all(cluster.client.clone());
    match namespaces.get_opt(ns).await {
        Ok(Some(_)) => lines.push(format!("kubernetes: namespace {ns}: present")),
        Ok(None) => {
            lines.push(format!(
                "kubernetes: namespace {ns} does not exist\n  hint: `kubectl --context {} create namespace {ns}`, or set `namespace:` under `kubernetes:`",
                cluster.context
            ));
            return false;
        }
        Err(kube::Error::Api(s)) if s.code == 403 => lines.push(format!(
            "kubernetes: namespace {ns}: this account may not read namespaces (fine: the checks below say what it may do there)"
        )),
        Err(e) => {
            lines.push(format!("kubernetes: could not look up namespace {ns}: {e}"));
            return false;
        }
    }
    true
}

/// Whether the account may do everything a run needs in the namespace
/// (a `SelfSubjectAccessReview` per permission).
async fn permitted(cluster: &cluster::Cluster, ns: &str, lines: &mut Vec<String>) -> bool {
    let reviews: Api<SelfSubjectAccessReview> = Api::all(cluster.client.clone());
    let mut denied = Vec::new();
    for p in PERMISSIONS {
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    namespace: Some(ns.to_string()),
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
        return true;
    }
    for d in &denied {
        lines.push(format!("kubernetes: may NOT {d} in {ns}"));
    }
    lines.push(
        "  hint: apply the Role and RoleBinding of docs/kubernetes.md to this account".into(),
    );
    false
}

/// The rascal Jobs of this repository in the namespace, against its store.
struct RepoJobs<'a> {
    store: &'a Store,
    repo_dir: &'a Path,
    jobs: Api<Job>,
    ns: &'a str,
    /// Delete the Jobs of runs the store no longer has.
    remove: bool,
}

impl RepoJobs<'_> {
    /// Say which Jobs belong to which runs; orphans (runs gone from the
    /// store) are removed with `remove`. False when one is left or cannot
    /// be removed, or the Jobs cannot be listed.
    async fn examine(&self, lines: &mut Vec<String>) -> bool {
        let ns = self.ns;
        let selector = format!("{}={}", spec::LABEL_REPO, spec::repo_label(self.repo_dir));
        let list = match self
            .jobs
            .list(&ListParams::default().labels(&selector))
            .await
        {
            Ok(l) => l.items,
            Err(e) => {
                lines.push(format!("kubernetes: could not list Jobs in {ns}: {e}"));
                return false;
            }
        };
        let here = spec::repo_path(self.repo_dir);
        let mut ok = true;
        let mut orphans = 0;
        let mut mine = 0;
        for job in &list {
            let ann = job.metadata.annotations.clone().unwrap_or_default();
            // The label is a digest: the annotation tells the exact repository.
            if ann.get(spec::ANNOTATION_REPO) != Some(&here) {
                continue;
            }
            mine += 1;
            let run = ann.get(spec::ANNOTATION_RUN).cloned().unwrap_or_default();
            match self.store.run_status(&run).ok().flatten().as_deref() {
                None => {
                    orphans += 1;
                    ok &= self.orphan(job, &ann, lines).await;
                }
                status => lines.push(job_line(job, &ann, status)),
            }
        }
        if mine == 0 {
            lines.push(format!(
                "no rascal Jobs of this repository in namespace {ns}"
            ));
        } else if orphans > 0 && !self.remove {
            lines.push(format!(
                "{}\n  hint: `rascal doctor --remove` deletes them (and their pods)",
                rascal_core::text::plural(orphans as u64, "orphan Job")
            ));
        }
        ok
    }

    /// A Job whose run is not in the store: removed with `remove`, else
    /// reported. False when it is left or could not be removed.
    async fn orphan(
        &self,
        job: &Job,
        ann: &std::collections::BTreeMap<String, String>,
        lines: &mut Vec<String>,
    ) -> bool {
        let name = job.metadata.name.clone().unwrap_or_default();
        let run = ann.get(spec::ANNOTATION_RUN).cloned().unwrap_or_default();
        let candidate = ann
            .get(spec::ANNOTATION_CANDIDATE)
            .cloned()
            .unwrap_or_default();
        let state = job_state(job);
        if !self.remove {
            lines.push(format!(
                "orphan: Job {name} ({state}) of run {run} / {candidate}: the run is not in this repository's store"
            ));
            return false;
        }
        match delete(&self.jobs, &name).await {
            Ok(()) => {
                lines.push(format!(
                    "removed Job {name} ({state}) of run {run} / {candidate}: the run is not in this repository's store"
                ));
                true
            }
            Err(e) => {
                lines.push(format!("could not remove Job {name}: {e}"));
                false
            }
        }
    }
}

/// A Job of a run the store has: which run, and how it stands.
fn job_line(
    job: &Job,
    ann: &std::collections::BTreeMap<String, String>,
    status: Option<&str>,
) -> String {
    let name = job.metadata.name.clone().unwrap_or_default();
    let run = ann.get(spec::ANNOTATION_RUN).cloned().unwrap_or_default();
    let candidate = ann
        .get(spec::ANNOTATION_CANDIDATE)
        .cloned()
        .unwrap_or_default();
    let state = job_state(job);
    match status {
        Some("interrupted") => format!(
            "Job {name} ({state}) of interrupted run {run} / {candidate}\n  hint: `rascal attach {run}` records its result"
        ),
        Some(s) => format!("Job {name} ({state}) of {s} run {run} / {candidate}"),
        None => format!("Job {name} ({state}) of run {run} / {candidate}"),
    }
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
