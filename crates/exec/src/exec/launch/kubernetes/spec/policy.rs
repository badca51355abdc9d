//! The candidate pod's default-deny NetworkPolicy.

use super::{agent_of, job_name, label_value, meta, policy_name, LABEL_CANDIDATE, LABEL_RUN};
use crate::exec::launch::LaunchSpec;
use k8s_openapi::api::networking::v1::{
    IPBlock, NetworkPolicy, NetworkPolicyEgressRule, NetworkPolicyPeer, NetworkPolicyPort,
    NetworkPolicySpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use rascal_core::config::kubernetes::{parse_egress, KubernetesConfig};
use std::collections::BTreeMap;

/// The candidate pod's NetworkPolicy: nothing comes in, and nothing goes
/// out except the configured ranges (and DNS, when there are any). With
/// `network: none` on the agent, nothing goes out at all. A policy is only
/// enforced by a network plugin that implements NetworkPolicy.
pub(crate) fn network_policy(spec: &LaunchSpec, k: &KubernetesConfig) -> NetworkPolicy {
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
