//! The `kubernetes:` block of `.rascal/config.yaml`, for `launcher:
//! kubernetes`: where candidates' Jobs go (context, namespace), how their
//! pods are placed (service account, pull secrets, node selector,
//! tolerations), which uid they run as, and which IP ranges their
//! default-deny egress policy lets through. Checked strictly: a value the
//! cluster would refuse is refused here, with what to write instead.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Seconds a finished Job is kept before the cluster removes it (its pod
/// logs with it), unless the config says otherwise.
pub const DEFAULT_TTL_SECS: i32 = 3600;
/// Bytes of a candidate's tree rascal accepts back from a pod.
pub const DEFAULT_MAX_RESULT: u64 = 2 << 30;

/// `kubernetes:` in `.rascal/config.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KubernetesConfig {
    /// The namespace the Jobs, pods and network policies live in.
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// The kubeconfig context to use (default: the current context).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Names of `kubernetes.io/dockerconfigjson` secrets in the namespace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_pull_secrets: Vec<String>,
    /// The pod's service account; its token is never mounted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    /// The uid (and gid) the pod runs as; default: `runAsNonRoot` with the
    /// image's own non-root user. 0 is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_as_user: Option<i64>,
    /// Seconds a finished Job is kept (`ttlSecondsAfterFinished`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
    /// Exceptions to the default-deny egress policy: `CIDR` or `CIDR:port`
    /// (`203.0.113.0/24:443`). A NetworkPolicy knows addresses, not names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub egress: Vec<String>,
    /// Let the agent resolve names (UDP/TCP 53 to any address) when
    /// `egress` has exceptions (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<bool>,
    /// Bytes of a candidate's tree accepted back from the pod (`2g`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_result: Option<super::container::ByteSize>,
}

fn default_namespace() -> String {
    "default".into()
}

impl Default for KubernetesConfig {
    fn default() -> Self {
        KubernetesConfig {
            namespace: default_namespace(),
            context: None,
            image_pull_secrets: Vec::new(),
            service_account: None,
            node_selector: BTreeMap::new(),
            tolerations: Vec::new(),
            run_as_user: None,
            ttl_seconds_after_finished: None,
            egress: Vec::new(),
            dns: None,
            max_result: None,
        }
    }
}

/// A pod toleration, as Kubernetes spells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Toleration {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `Equal` (default) or `Exists`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

/// One exception to the default-deny egress policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressRule {
    pub cidr: String,
    pub port: Option<u16>,
}

/// Parse `10.0.0.0/8`, `203.0.113.7/32:443`, `2001:db8::/32` (an IPv6
/// range takes no port: write a rule per range). Host names are refused:
/// a NetworkPolicy matches addresses only.
pub fn parse_egress(s: &str) -> Result<EgressRule, crate::Error> {
    let t = s.trim();
    let (range, port) = match t.rsplit_once(':') {
        Some((r, p)) if r.contains('/') && !r.contains(':') => {
            let port: u16 = p.parse().ok().filter(|p| *p > 0).ok_or_else(|| {
                crate::Error::Invalid(format!(
                    "egress `{s}`: port `{p}` is not a number from 1 to 65535"
                ))
            })?;
            (r, Some(port))
        }
        _ => (t, None),
    };
    let Some((ip, bits)) = range.split_once('/') else {
        return Err(crate::Error::Invalid(format!(
            "egress `{s}` is not an address range: write CIDR or CIDR:port (`203.0.113.0/24:443`); a NetworkPolicy matches addresses, not host names"
        )));
    };
    let addr: std::net::IpAddr = ip.parse().map_err(|_| {
        crate::Error::Invalid(format!(
            "egress `{s}`: `{ip}` is not an IP address; a NetworkPolicy matches addresses, not host names (resolve the name, or use an egress proxy)"
        ))
    })?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let bits: u8 = bits.parse().ok().filter(|b| *b <= max).ok_or_else(|| {
        crate::Error::Invalid(format!(
            "egress `{s}`: prefix length `/{bits}` must be 0 to {max}"
        ))
    })?;
    Ok(EgressRule {
        cidr: format!("{addr}/{bits}"),
        port,
    })
}

/// Whether `s` is a DNS-1123 label (namespace, secret and account names).
pub fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Whether `s` is a DNS-1123 subdomain (secret and account names).
pub fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// What is wrong with the block, if anything (`key: problem`).
pub fn problem(k: &KubernetesConfig) -> Option<String> {
    if !is_dns_label(&k.namespace) {
        return Some(format!(
            "`namespace: {}` is not a Kubernetes namespace name (lowercase letters, digits and `-`, at most 63)",
            k.namespace
        ));
    }
    if let Some(c) = &k.context {
        if c.trim().is_empty() {
            return Some("`context:` is empty: name a context of your kubeconfig, or leave it out for the current one".into());
        }
    }
    for s in &k.image_pull_secrets {
        if !is_dns_subdomain(s) {
            return Some(format!("`image_pull_secrets`: `{s}` is not a secret name"));
        }
    }
    if let Some(a) = &k.service_account {
        if !is_dns_subdomain(a) {
            return Some(format!(
                "`service_account: {a}` is not a service account name"
            ));
        }
    }
    if let Some(u) = k.run_as_user {
        if u <= 0 {
            return Some(format!(
                "`run_as_user: {u}`: agents never run as root; use a uid above 0, or leave it out to require the image's non-root user"
            ));
        }
    }
    if let Some(t) = k.ttl_seconds_after_finished {
        if t < 0 {
            return Some(format!(
                "`ttl_seconds_after_finished: {t}` must be 0 or more"
            ));
        }
    }
    for t in &k.tolerations {
        if let Some(op) = &t.operator {
            if op != "Equal" && op != "Exists" {
                return Some(format!(
                    "toleration operator `{op}` must be `Equal` or `Exists`"
                ));
            }
        }
        if let Some(e) = &t.effect {
            if !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&e.as_str()) {
                return Some(format!(
                    "toleration effect `{e}` must be NoSchedule, PreferNoSchedule or NoExecute"
                ));
            }
        }
    }
    for e in &k.egress {
        if let Err(why) = parse_egress(e) {
            return Some(why.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn egress_rules_take_ranges_and_ports_and_refuse_names() {
        assert_eq!(
            parse_egress("203.0.113.0/24:443").unwrap(),
            EgressRule {
                cidr: "203.0.113.0/24".into(),
                port: Some(443)
            }
        );
        assert_eq!(parse_egress("2001:db8::/32").unwrap().port, None);
        assert_eq!(parse_egress("0.0.0.0/0").unwrap().cidr, "0.0.0.0/0");
        for bad in [
            "api.anthropic.com",
            "api.anthropic.com:443",
            "10.0.0.0/33",
            "10.0.0.0/8:0",
            "10.0.0.0/8:99999",
            "10.0.0.1",
            "",
        ] {
            assert!(parse_egress(bad).is_err(), "{bad} was accepted");
        }
        assert!(parse_egress("api.example.com/32")
            .unwrap_err()
            .to_string()
            .contains("host names"));
    }

    #[test]
    fn bad_values_are_refused_with_what_to_write() {
        let ok = KubernetesConfig::default();
        assert_eq!(problem(&ok), None);
        let cases: Vec<(KubernetesConfig, &str)> = vec![
            (
                KubernetesConfig {
                    namespace: "Agents".into(),
                    ..ok.clone()
                },
                "namespace",
            ),
            (
                KubernetesConfig {
                    run_as_user: Some(0),
                    ..ok.clone()
                },
                "never run as root",
            ),
            (
                KubernetesConfig {
                    egress: vec!["example.com".into()],
                    ..ok.clone()
                },
                "host names",
            ),
            (
                KubernetesConfig {
                    tolerations: vec![Toleration {
                        key: None,
                        operator: Some("Like".into()),
                        value: None,
                        effect: None,
                        toleration_seconds: None,
                    }],
                    ..ok.clone()
                },
                "Equal",
            ),
        ];
        for (cfg, says) in cases {
            let p = problem(&cfg).expect("refused");
            assert!(p.contains(says), "{p}");
        }
    }

    #[test]
    fn the_block_parses_strictly() {
        let k: KubernetesConfig = crate::config::parse(
            "t.yaml",
            "namespace: agents\ncontext: kind-rascal\nimage_pull_secrets: [regcred]\nnode_selector: {pool: agents}\ntolerations: [{key: dedicated, operator: Equal, value: agents, effect: NoSchedule}]\negress: ['203.0.113.0/24:443']\n",
        )
        .unwrap();
        assert_eq!(k.namespace, "agents");
        assert_eq!(k.tolerations[0].key.as_deref(), Some("dedicated"));
        let e = crate::config::parse::<KubernetesConfig>("t.yaml", "namespase: x\n").unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
    }
}
