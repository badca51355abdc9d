//! The agent's image: whether the engine has it, pulling it when the agent
//! allows, and how to build it.

use super::engine_address;
use crate::exec::launch::{err, LaunchError, LaunchSpec};
use bollard::query_parameters::CreateImageOptionsBuilder;
use bollard::Docker;
use futures::StreamExt;
use std::time::Duration;

const PULL_TIMEOUT: Duration = Duration::from_secs(600);

/// Whether `image` is on the engine (`rascal doctor` asks this too).
pub async fn has_image(docker: &Docker, image: &str) -> crate::error::Result<bool> {
    match docker.inspect_image(image).await {
        Ok(_) => Ok(true),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Ok(false),
        Err(e) => Err(crate::Error::Engine(format!(
            "could not inspect image `{image}` on {}: {e}",
            engine_address()
        ))),
    }
}

/// How to get `image` onto the engine, for an agent of `runtime`.
pub fn build_hint(runtime: Option<rascal_core::config::RuntimeKind>, image: &str) -> String {
    use rascal_core::config::RuntimeKind;
    let image = rascal_core::text::inert::shell_word(image);
    match runtime {
        Some(r @ (RuntimeKind::Claude | RuntimeKind::Codex | RuntimeKind::Goose)) => {
            let dir = format!("{r:?}").to_lowercase();
            format!("build it on this engine first: `docker build -t {image} docker/{dir}` in rascal's source tree")
        }
        _ => format!(
            "build it on this engine first: `docker build -t {image} DIR` with your Dockerfile in DIR (rascal's docker/ directory has examples)"
        ),
    }
}

/// Make sure the image is on the engine (pulling only when the agent says
/// `pull: true`).
pub(super) async fn ensure_image(
    docker: &Docker,
    spec: &LaunchSpec,
    image: &str,
) -> Result<(), LaunchError> {
    if has_image(docker, image).await.map_err(err)? {
        return Ok(());
    }
    let build_hint = build_hint(spec.agent.as_ref().map(|a| a.runtime), image);
    let pull = spec.agent.as_ref().map(|a| a.pull).unwrap_or(false);
    if !pull {
        return Err(err(format!(
            "image `{image}` is not on the Docker engine at {}\n  hint: {build_hint}, or set `pull: true` on agent `{}` to pull it from its registry",
            engine_address(),
            spec.agent_name()
        )));
    }
    let opts = CreateImageOptionsBuilder::default()
        .from_image(image)
        .build();
    let pulled = tokio::time::timeout(PULL_TIMEOUT, async {
        let mut s = docker.create_image(Some(opts), None, None);
        while let Some(item) = s.next().await {
            item.map_err(|e| e.to_string())?;
        }
        Ok::<(), String>(())
    })
    .await
    .unwrap_or_else(|_| Err("no answer from the registry within 10m".into()));
    pulled.map_err(|e| {
        err(format!(
            "image `{image}` is not on the Docker engine at {} and pulling it failed: {e}\n  hint: check the registry and your `docker login`, or {build_hint}",
            engine_address()
        ))
    })
}

/// The agent's image, or why the docker launcher cannot run it.
pub(super) fn image_of(spec: &LaunchSpec) -> Result<String, LaunchError> {
    spec.image.clone().ok_or_else(|| {
        err(format!(
            "agent `{}` has no `image:`, which the docker launcher needs\n  hint: add `image: NAME` to the agent in .rascal/config.yaml, or run with `--launcher process`",
            spec.agent_name()
        ))
    })
}
