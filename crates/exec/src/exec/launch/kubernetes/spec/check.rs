//! A verification command run as a Job of its own: its names, labels,
//! Job, Secret and NetworkPolicy, derived from the agent's.

use super::{
    job, label_value, labels, network_policy, secret, AGENT, ANNOTATION_CANDIDATE, CHECK,
    LABEL_CANDIDATE, LABEL_CHECK, LABEL_CHECK_OF, LABEL_RUN,
};
use crate::exec::launch::LaunchSpec;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use rascal_core::config::kubernetes::KubernetesConfig;
use std::collections::BTreeMap;

/// A verification command of candidate `of` (a guardrail or criterion
/// command), run as a Job of its own: the same pod as the agent's (built
/// by [`job`], so the same hardening), its main container named `check`,
/// labelled `rascal.check-of` / `rascal.check` instead of
/// `rascal.candidate`, so that no policy of the agent's selects its pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Check {
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
    pub(crate) fn number(&self) -> String {
        if self.attempt <= 1 {
            self.n.to_string()
        } else {
            format!("{}-{}", self.attempt, self.n)
        }
    }

    /// Its name in the launch spec and the Job's name (`claude-check-3`).
    pub(crate) fn id(&self) -> String {
        format!("{}-check-{}", self.of, self.number())
    }

    /// The labels that select its pod: its run, its candidate, its number.
    pub(crate) fn selector(&self, run: &str) -> BTreeMap<String, String> {
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
pub(crate) fn check_job(
    spec: &LaunchSpec,
    k: &KubernetesConfig,
    deadline_ms: u64,
    check: &Check,
) -> Job {
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
pub(crate) fn check_secret(
    spec: &LaunchSpec,
    k: &KubernetesConfig,
    check: &Check,
) -> Option<Secret> {
    let mut s = secret(spec, k)?;
    check.relabel(spec, &mut s.metadata);
    Some(s)
}

/// The check pod's own default-deny policy: nothing in; nothing out with
/// `network: none` on `spec.agent` (a check without `network: true`),
/// else only the `egress:` ranges an agent gets.
pub(crate) fn check_policy(
    spec: &LaunchSpec,
    k: &KubernetesConfig,
    check: &Check,
) -> NetworkPolicy {
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
