//! Running a check's command in a container: the candidate agent's
//! container settings on a fresh copy, or a Job of its own on Kubernetes.

use super::*;

impl Contained {
    /// The same container settings on another copy.
    pub(super) fn with_copy(&self, copy: Sandboxed) -> Contained {
        Contained {
            copy,
            run: self.run.clone(),
            candidate: self.candidate.clone(),
            image: self.image.clone(),
            agent: self.agent.clone(),
            seq: self.seq.clone(),
            attempt: self.attempt,
            backend: self.backend.clone(),
        }
    }

    pub(super) async fn run(
        &self,
        spec: CommandSpec,
        env: &[String],
        network: bool,
        lines: Option<runner::LogTx>,
        cancel: &CancellationToken,
        files: &[String],
    ) -> crate::error::Result<(Outcome, Vec<Option<Vec<u8>>>)> {
        if let Backend::Kubernetes(k) = &self.backend {
            return self
                .run_in_job(k, spec, env, network, lines, cancel, files)
                .await;
        }
        let copy = self.copy.fresh_copy(None)?;
        let n = self.seq.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let name = format!("{}.check-{n}", self.candidate);
        let network = Some(if network { "bridge" } else { "none" }.into());
        let (agent, launch) = self.check_launch(name.clone(), copy.path(), spec, env, network);
        let (tx, collect) = tail_of(lines);
        // Copy mode (no shared disk): the copy is uploaded into the check's
        // container and only the files asked for come back.
        let copy_mode = crate::exec::launch::copy::wanted(Some(&agent));
        let launcher = DockerLauncher::for_checks();
        let result = launcher.run(launch, tx, cancel.clone()).await;
        let read = match (copy_mode, &result) {
            (true, Ok(_)) if !files.is_empty() => {
                match crate::exec::launch::docker::connect().await {
                    Ok(docker) => {
                        let id = crate::exec::launch::docker::container_name(&self.run, &name);
                        crate::exec::launch::copy::read_files(&docker, &id, files).await
                    }
                    Err(_) => vec![None; files.len()],
                }
            }
            (true, _) => vec![None; files.len()],
            (false, _) => Vec::new(),
        };
        launcher.release(&self.run, &name, &agent).await;
        launcher.settle().await;
        let tail = collect.await.unwrap_or_default();
        let exit = result?;
        let read = if copy_mode {
            read
        } else {
            read_back(copy.path(), files)
        };
        Ok((
            Outcome {
                exit,
                tail,
                rewritten: Vec::new(),
            },
            read,
        ))
    }
}

impl Contained {
    /// A check's command as a launch (and the agent settings it runs
    /// with): the candidate agent's container
    /// settings with the check's network, never kept, and only the
    /// variables the check names (the image has its own PATH and HOME).
    pub(super) fn check_launch(
        &self,
        candidate: String,
        workdir: &Path,
        spec: CommandSpec,
        env: &[String],
        network: Option<rascal_core::config::network::NetworkSetting>,
    ) -> (rascal_core::config::AgentConfig, LaunchSpec) {
        let mut agent = self.agent.clone();
        agent.network = network;
        agent.env = env.to_vec();
        agent.keep_containers = false;
        let vars: Vec<(String, String)> = env
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.clone(), v)))
            .collect();
        let launch = LaunchSpec {
            run: self.run.clone(),
            candidate,
            workdir: workdir.to_path_buf(),
            argv: spec.argv,
            env: vars,
            stdin: None,
            timeout: spec.timeout,
            image: Some(self.image.clone()),
            agent: Some(agent.clone()),
            repo: self.copy.origin.clone(),
            resume: None,
            confine: None,
            upload: None,
        };
        (agent, launch)
    }

    /// A kubernetes candidate's command as a Job of its own: a fresh copy
    /// of the change sent into its pod, the variables it names in its own
    /// Secret, the network per its own policy.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn run_in_job(
        &self,
        kube: &crate::exec::launch::kubernetes::KubernetesLauncher,
        spec: CommandSpec,
        env: &[String],
        network: bool,
        lines: Option<runner::LogTx>,
        cancel: &CancellationToken,
        files: &[String],
    ) -> crate::error::Result<(Outcome, Vec<Option<Vec<u8>>>)> {
        use crate::exec::launch::kubernetes::{check, spec::Check};
        let copy = self.copy.fresh_copy(None)?;
        let n = self.seq.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let check = Check {
            of: self.candidate.clone(),
            n,
            attempt: self.attempt,
        };
        // Off, unless the check asked: then what an agent gets (the
        // `egress:` ranges of the config).
        let network = (!network).then(|| "none".into());
        let (_, launch) = self.check_launch(check.id(), copy.path(), spec, env, network);
        let (tx, collect) = tail_of(lines);
        let result = check::run(kube, launch, &check, files, tx, cancel.clone()).await;
        let tail = collect.await.unwrap_or_default();
        let (exit, read) = result?;
        Ok((
            Outcome {
                exit,
                tail,
                rewritten: Vec::new(),
            },
            read,
        ))
    }
}
