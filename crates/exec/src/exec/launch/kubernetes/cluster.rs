//! Which cluster rascal talks to: the kubeconfig (`$KUBECONFIG`, else
//! `~/.kube/config`, or a file given explicitly), the context of the
//! `kubernetes:` config (else the current one), and a kube-rs client for it.

use crate::Error::Engine;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::Client;
use rascal_core::config::kubernetes::KubernetesConfig;
use std::path::Path;

/// A connected cluster, with what messages say about it.
#[derive(Clone)]
pub struct Cluster {
    pub client: Client,
    /// The kubeconfig context's name.
    pub context: String,
    /// The API server's address.
    pub url: String,
}

/// Read the kubeconfig and make a client for the configured context. No
/// request is sent yet.
pub async fn connect(
    k: &KubernetesConfig,
    kubeconfig: Option<&Path>,
) -> crate::error::Result<Cluster> {
    let source =
        kubeconfig
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| match std::env::var("KUBECONFIG") {
                Ok(v) if !v.is_empty() => format!("$KUBECONFIG ({v})"),
                _ => "~/.kube/config".into(),
            });
    let read = match kubeconfig {
        Some(p) => Kubeconfig::read_from(p),
        None => Kubeconfig::read(),
    };
    let kc = read.map_err(|e| {
        Engine(format!(
            "could not read the kubeconfig {source}: {e}\n  hint: point KUBECONFIG at your cluster's kubeconfig (`kind get kubeconfig --name NAME > FILE` for kind), or run with `--launcher docker`"
        ))
    })?;
    let context = k
        .context
        .clone()
        .or_else(|| kc.current_context.clone())
        .ok_or_else(|| {
            Engine(format!(
                "the kubeconfig {source} names no current context and `kubernetes: {{ context: … }}` is not set\n  hint: `kubectl config use-context NAME`, or set `context:` under `kubernetes:` in .rascal/config.yaml"
            ))
        })?;
    if !kc.contexts.iter().any(|c| c.name == context) {
        let known: Vec<&str> = kc.contexts.iter().map(|c| c.name.as_str()).collect();
        return Err(Engine(format!(
            "context `{context}` is not in the kubeconfig {source}\n  hint: contexts there: {}",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )));
    }
    let options = KubeConfigOptions {
        context: Some(context.clone()),
        ..Default::default()
    };
    let mut config = kube::Config::from_custom_kubeconfig(kc, &options)
        .await
        .map_err(|e| {
            Engine(format!(
                "context `{context}` of the kubeconfig {source}: {e}"
            ))
        })?;
    config.default_namespace = k.namespace.clone();
    let url = config.cluster_url.to_string();
    let client = Client::try_from(config).map_err(|e| {
        Engine(format!(
            "could not make a client for context `{context}` ({url}): {e}"
        ))
    })?;
    Ok(Cluster {
        client,
        context,
        url,
    })
}

/// Connect and ask the API server its version: whether it answers at all.
pub async fn reachable(k: &KubernetesConfig) -> crate::error::Result<()> {
    let cluster = connect(k, None).await?;
    version(&cluster).await.map(|_| ())
}

/// The API server's version (`v1.33.1`).
pub async fn version(cluster: &Cluster) -> crate::error::Result<String> {
    match tokio::time::timeout(
        std::time::Duration::from_secs(10),
        cluster.client.apiserver_version(),
    )
    .await
    {
        Ok(Ok(v)) => Ok(v.git_version),
        Ok(Err(e)) => Err(Engine(format!(
            "the API server of context `{}` at {} did not answer: {e}\n  hint: check the cluster is up (`kubectl --context {} version`)",
            cluster.context, cluster.url, cluster.context
        ))),
        Err(_) => Err(Engine(format!(
            "the API server of context `{}` at {} gave no answer within 10s",
            cluster.context, cluster.url
        ))),
    }
}
