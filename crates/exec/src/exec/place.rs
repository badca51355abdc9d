//! Where a verification command runs (guardrail commands, `test` and
//! `command` criteria). For a candidate: each command gets a fresh copy of
//! the change written from its tree (never the live workspace)
//! inside bubblewrap — or, for a docker candidate, in a fresh hardened
//! container from its image (in copy mode the copy is uploaded into it:
//! the engine may have no shared disk), and for a kubernetes candidate in
//! a Job of its own beside the agent's (see `launch::kubernetes::check`) —
//! with the network off unless the check says otherwise and only the
//! variables the check names. For `rascal check`: the user's own working
//! tree, as the user.

use crate::exec::confine::Confinement;
use crate::exec::env::{BASE_ENV, TOOLCHAIN_ENV};
use crate::exec::launch::{docker::DockerLauncher, LaunchSpec, Launcher};
use crate::exec::runner::{self, CommandSpec, Env, Outcome};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

mod contained;

/// Where the commands of one candidate (or of `rascal check`) run.
#[derive(Debug, Clone)]
pub enum Place {
    /// The user's own working tree with the user's environment.
    InPlace { origin: PathBuf },
    /// A candidate's change, confined.
    Sandboxed(Arc<Sandboxed>),
    /// A container candidate's change, in a fresh container (docker) or
    /// Job (kubernetes) from its image.
    Container(Arc<Contained>),
}

/// Where a container candidate's commands run: where its agent ran.
#[derive(Clone)]
pub enum Backend {
    /// A fresh container on the Docker engine (`DOCKER_HOST`).
    Docker,
    /// A Job of its own in the candidate's namespace.
    Kubernetes(Arc<crate::exec::launch::kubernetes::KubernetesLauncher>),
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Docker => "Docker",
            Backend::Kubernetes(_) => "Kubernetes",
        })
    }
}

/// A container candidate's commands: the copy (as for `Sandboxed`), then a
/// container (or pod) hardened like the agent's.
#[derive(Debug)]
pub struct Contained {
    /// The change and where copies are made (`confined`, `hide` and
    /// `cache` are not used: the container is the sandbox).
    pub copy: Sandboxed,
    pub run: String,
    pub candidate: String,
    pub image: String,
    /// The candidate agent's container settings (memory, cpus, pids).
    pub agent: rascal_core::config::AgentConfig,
    /// Numbers the check containers (shared with `with_holdout` copies).
    pub seq: Arc<std::sync::atomic::AtomicUsize>,
    /// The candidate's attempt (1, 2, …): a retry's check Jobs get names
    /// of their own.
    pub attempt: u32,
    pub backend: Backend,
}

/// A candidate's change and the sandbox its commands run in.
#[derive(Debug, Clone)]
pub struct Sandboxed {
    /// The user's repository.
    pub origin: PathBuf,
    /// The candidate's workspace (read only by rascal, never by a command).
    pub workspace: PathBuf,
    /// The change's git tree (hex): every copy is written from it. Only the
    /// id is kept, never the ChangeSet (a copy of it per place and per
    /// check would grow with the change).
    pub tree: String,
    /// The tree copies are written from, when it is not `tree`: the change
    /// with the files that decide how checks run laid from the base (see
    /// `Place::running_on`). Reading the change always reads `tree`.
    pub run_tree: Option<String>,
    /// Where the copies are made (hidden from the commands).
    pub scratch: PathBuf,
    /// A build cache shared by this candidate's commands of one attempt
    /// (`CARGO_TARGET_DIR`; emptied before each attempt: `exec::cache`).
    pub cache: Option<PathBuf>,
    /// Host paths hidden from the commands.
    pub hide: Vec<PathBuf>,
    /// Run the commands in bubblewrap. False only where bubblewrap is
    /// missing and the candidate is a scripted one (marked UNSANDBOXED):
    /// the commands still get a fresh copy and the scrubbed environment.
    pub confined: bool,
    /// The task's held-out tests: stripped from every copy, except the
    /// copies of `with_holdout` (where the outside ones are laid over).
    pub holdout: Arc<crate::git::holdout::Holdout>,
    pub with_holdout: bool,
    /// The candidate agent's processes and memory limits, for each command.
    pub limits: rascal_core::config::limits::Limits,
}

/// Reads the files of a change (see `Place::files_reader`).
pub enum FilesReader {
    /// The user's working tree (`rascal check`).
    Dir(PathBuf),
    /// A candidate's change tree.
    Tree(crate::git::tree::TreeFiles),
    /// A change without a readable tree: nothing can be read.
    Nothing,
}

impl FilesReader {
    /// The content of `path`; None when absent or not a regular file.
    pub fn read(&self, path: &str) -> Option<Vec<u8>> {
        match self {
            FilesReader::Dir(dir) => crate::git::beneath::Beneath::open(dir)
                .and_then(|b| b.read(Path::new(path)))
                .ok(),
            FilesReader::Tree(t) => t.read(path).ok().flatten(),
            FilesReader::Nothing => None,
        }
    }
}

/// A command ready to run; the copy it runs on lives as long as this.
pub struct Prepared {
    pub spec: CommandSpec,
    _copy: Option<tempfile::TempDir>,
    /// Held until the copy is gone (fields drop in order).
    _claim: Option<crate::exec::steady::Claim>,
}

impl Place {
    /// The user's repository.
    pub fn origin(&self) -> &Path {
        match self {
            Place::InPlace { origin } => origin,
            Place::Sandboxed(s) => &s.origin,
            Place::Container(c) => &c.copy.origin,
        }
    }

    /// The files of the change, for checks that only read them.
    pub fn files(&self) -> &Path {
        match self {
            Place::InPlace { origin } => origin,
            Place::Sandboxed(s) => &s.workspace,
            Place::Container(c) => &c.copy.workspace,
        }
    }

    /// Where a `where: local` command runs: a container candidate's change
    /// (docker or kubernetes) in bubblewrap on this machine instead of a
    /// container or Job; elsewhere the same place. Without bubblewrap it is an error, never unconfined.
    pub fn local(&self) -> crate::error::Result<Place> {
        match self {
            Place::Container(c) => {
                crate::exec::sandbox::available().map_err(|e| {
                    crate::Error::Sandbox(format!("`where: local` runs the command in bubblewrap on this machine, which is not available: {e}"))
                })?;
                let mut s = c.copy.clone();
                s.confined = true;
                Ok(Place::Sandboxed(Arc::new(s)))
            }
            other => Ok(other.clone()),
        }
    }

    /// This place with the held-out tests in its copies (for `type:
    /// holdout` criteria). In place (`rascal check`) nothing changes.
    pub fn with_holdout(&self) -> Place {
        match self {
            Place::InPlace { .. } => self.clone(),
            Place::Sandboxed(s) => Place::Sandboxed(Arc::new(s.holding_out())),
            Place::Container(c) => Place::Container(Arc::new(c.with_copy(c.copy.holding_out()))),
        }
    }

    /// The held-out tests of this place's change (none in place).
    pub fn holdout(&self) -> Option<&crate::git::holdout::Holdout> {
        match self {
            Place::InPlace { .. } => None,
            Place::Sandboxed(s) => Some(&s.holdout),
            Place::Container(c) => Some(&c.copy.holdout),
        }
    }

    /// How many held-out test files this place's copies have.
    pub fn holdout_files(&self) -> usize {
        match self {
            Place::InPlace { .. } => 0,
            Place::Sandboxed(s) => s.holdout.len(),
            Place::Container(c) => c.copy.holdout.len(),
        }
    }

    /// The content of `path` after the change: from the change's tree for
    /// a candidate (never the live workspace), from the working tree for
    /// `rascal check`. None when absent or not a regular file.
    pub fn read(&self, path: &str) -> Option<Vec<u8>> {
        self.files_reader().read(path)
    }

    /// A reader of the change's files, for reading many: what it needs is
    /// opened once.
    pub fn files_reader(&self) -> FilesReader {
        let s = match self {
            Place::InPlace { origin } => return FilesReader::Dir(origin.clone()),
            Place::Sandboxed(s) => s.as_ref(),
            Place::Container(c) => &c.copy,
        };
        git2::Oid::from_str(&s.tree)
            .ok()
            .and_then(|t| crate::git::tree::TreeFiles::open(&s.origin, &s.workspace, t).ok())
            .map_or(FilesReader::Nothing, FilesReader::Tree)
    }

    /// Run `spec` (a command; its `cwd` is ignored) here, to the end.
    pub async fn run(
        &self,
        spec: CommandSpec,
        env: &[String],
        network: bool,
        lines: Option<runner::LogTx>,
        cancel: &CancellationToken,
    ) -> crate::error::Result<Outcome> {
        self.run_reading(spec, env, network, lines, cancel, &[])
            .await
            .map(|(o, _)| o)
    }

    /// Run `spec` here, then read back `files` (paths relative to where it
    /// ran: a test runner's results file) before its copy is gone. A file
    /// that is missing, not a regular file or over 64 MiB reads as None.
    pub async fn run_reading(
        &self,
        spec: CommandSpec,
        env: &[String],
        network: bool,
        lines: Option<runner::LogTx>,
        cancel: &CancellationToken,
        files: &[String],
    ) -> crate::error::Result<(Outcome, Vec<Option<Vec<u8>>>)> {
        if let Place::Container(c) = self {
            return c.run(spec, env, network, lines, cancel, files).await;
        }
        let claim = match self {
            Place::Sandboxed(s) => s.claim().await?,
            _ => None,
        };
        let prepared = self.prepare_in(spec, env, network, claim)?;
        let watch = crate::exec::results_watch::Watch::start(&prepared.spec.cwd, files);
        let mut outcome = runner::run(&prepared.spec, lines, cancel).await?;
        outcome.rewritten = watch.map(|w| w.rewritten()).unwrap_or_default();
        if matches!(self, Place::Sandboxed(s) if s.confined) {
            crate::exec::confine::signal_from_status(&mut outcome.exit);
        }
        let read = read_back(&prepared.spec.cwd, files);
        Ok((outcome, read))
    }

    /// This place at the base commit instead of the change (for listing
    /// the tests the base has), with its own build cache `cache`: only
    /// base code ever writes there. None in place (`rascal check`).
    pub fn at_base(&self, base_tree: &str, cache: PathBuf) -> Option<Place> {
        let swap = |s: &Sandboxed| {
            let mut s = s.clone();
            s.tree = base_tree.to_string();
            s.run_tree = None;
            s.cache = Some(cache.clone());
            s.with_holdout = false;
            s
        };
        match self {
            Place::InPlace { .. } => None,
            Place::Sandboxed(s) => Some(Place::Sandboxed(Arc::new(swap(s)))),
            Place::Container(c) => Some(Place::Container(Arc::new(c.with_copy(swap(&c.copy))))),
        }
    }

    /// This place with the build cache `cache` (a cross-test's own, see
    /// `pipeline::cross_test`). In place, unchanged.
    pub fn with_cache(&self, cache: PathBuf) -> Place {
        let swap = |s: &Sandboxed| {
            let mut s = s.clone();
            s.cache = Some(cache.clone());
            s
        };
        match self {
            Place::InPlace { .. } => self.clone(),
            Place::Sandboxed(s) => Place::Sandboxed(Arc::new(swap(s))),
            Place::Container(c) => Place::Container(Arc::new(c.with_copy(swap(&c.copy)))),
        }
    }

    /// This place's build cache (None in place or without one).
    pub fn cache(&self) -> Option<&Path> {
        match self {
            Place::InPlace { .. } => None,
            Place::Sandboxed(s) => s.cache.as_deref(),
            Place::Container(c) => c.copy.cache.as_deref(),
        }
    }

    /// This place with its copies written from `tree` (an overlay of the
    /// change: `git::overlay`) while the change read is still the change;
    /// same build cache and held-out tests. In place, unchanged.
    pub fn running_on(&self, tree: &str) -> Place {
        let swap = |s: &Sandboxed| {
            let mut s = s.clone();
            s.run_tree = (tree != s.tree).then(|| tree.to_string());
            s
        };
        match self {
            Place::InPlace { .. } => self.clone(),
            Place::Sandboxed(s) => Place::Sandboxed(Arc::new(swap(s))),
            Place::Container(c) => Place::Container(Arc::new(c.with_copy(swap(&c.copy)))),
        }
    }

    /// The tree this place's copies are written from (None in place).
    pub fn run_tree(&self) -> Option<&str> {
        let s = match self {
            Place::InPlace { .. } => return None,
            Place::Sandboxed(s) => s.as_ref(),
            Place::Container(c) => &c.copy,
        };
        Some(s.run_tree.as_deref().unwrap_or(&s.tree))
    }

    /// The candidate's workspace (None in place): where its change tree's
    /// objects are stored.
    pub fn workspace(&self) -> Option<&Path> {
        match self {
            Place::InPlace { .. } => None,
            Place::Sandboxed(s) => Some(&s.workspace),
            Place::Container(c) => Some(&c.copy.workspace),
        }
    }

    /// Ready `spec` (whose `cwd` is ignored) to run here. `env` names host
    /// variables the command may see besides the base set; `network` lets
    /// it use the host's network.
    pub fn prepare(
        &self,
        spec: CommandSpec,
        env: &[String],
        network: bool,
    ) -> crate::error::Result<Prepared> {
        self.prepare_in(spec, env, network, None)
    }

    /// `prepare`, the copy laid as `claim` says when there is one (see
    /// `exec::steady`).
    fn prepare_in(
        &self,
        mut spec: CommandSpec,
        env: &[String],
        network: bool,
        mut claim: Option<crate::exec::steady::Claim>,
    ) -> crate::error::Result<Prepared> {
        let s = match self {
            Place::InPlace { origin } => {
                spec.cwd = origin.clone();
                return Ok(Prepared {
                    spec,
                    _copy: None,
                    _claim: None,
                });
            }
            Place::Sandboxed(s) => s,
            Place::Container(_) => {
                return Err(crate::Error::Sandbox(
                    "a container command is run with `Place::run`".into(),
                ))
            }
        };
        let copy = s.fresh_copy(claim.as_mut())?;
        let mut writable = Vec::new();
        let mut vars: Vec<(String, String)> = BASE_ENV
            .iter()
            .chain(TOOLCHAIN_ENV.iter())
            .chain(env.iter().map(String::as_str).collect::<Vec<_>>().iter())
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect();
        if let Some(cache) = &s.cache {
            std::fs::create_dir_all(cache).map_err(|e| creating(cache, e))?;
            writable.push(cache.clone());
            vars.push((
                "CARGO_TARGET_DIR".into(),
                cache.to_string_lossy().into_owned(),
            ));
        }
        let confine = Confinement {
            workspace: copy.path().to_path_buf(),
            writable,
            hide: s.hide.clone(),
            read_only: Vec::new(),
            network,
            limits: s.limits,
        };
        spec.cwd = copy.path().to_path_buf();
        spec.limits = Some(s.limits);
        if !s.confined {
            spec.env = Env::Only(vars);
            return Ok(Prepared {
                spec,
                _copy: Some(copy),
                _claim: claim,
            });
        }
        let (argv, env) = confine.command(&spec.argv, vars)?;
        spec.argv = argv;
        spec.env = Env::Only(env);
        Ok(Prepared {
            spec,
            _copy: Some(copy),
            _claim: claim,
        })
    }
}

/// Files under `dir`, read back after a command (beneath it, never
/// through a symlink anywhere on the way).
fn read_back(dir: &Path, files: &[String]) -> Vec<Option<Vec<u8>>> {
    let Ok(b) = crate::git::beneath::Beneath::open(dir) else {
        return files.iter().map(|_| None).collect();
    };
    files
        .iter()
        .map(|f| {
            let mut file = b.open_file(Path::new(f)).ok()?;
            let len = file.metadata().ok()?.len();
            if len > 64 << 20 {
                return None;
            }
            let mut out = Vec::with_capacity(len as usize);
            std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, len), &mut out).ok()?;
            Some(out)
        })
        .collect()
}

impl Sandboxed {
    /// These copies with the held-out tests, and a build cache of their
    /// own: code that ran beside the held-out tests could leave them in a
    /// shared cache for a later check to print, and so reach the agent.
    fn holding_out(&self) -> Sandboxed {
        let mut s = self.clone();
        s.with_holdout = true;
        s.cache = s.cache.as_deref().map(crate::exec::cache::holdout_beside);
        s
    }

    /// This place's turn on its build cache, when its copies are steady
    /// ones (`exec::steady`): a Rust project (cargo is what reads the
    /// times) with a build cache. Err: the turn could not be taken.
    async fn claim(&self) -> crate::error::Result<Option<crate::exec::steady::Claim>> {
        let Some(cache) = self.cache.as_deref() else {
            return Ok(None);
        };
        if !self.origin.join("Cargo.toml").is_file() {
            return Ok(None);
        }
        crate::exec::steady::claim(cache)
            .await
            .map(Some)
            .map_err(|e| {
                crate::Error::Copy(format!(
                    "taking the turn on the build cache {}: {e}",
                    cache.display()
                ))
            })
    }

    /// A fresh copy of the change in a new directory under `scratch` (at
    /// the claim's path, its files' times as it gives them, when there is
    /// one). Err: `Copy` when it cannot be written, `Holdout` when the
    /// held-out tests cannot be laid over or stripped from it.
    fn fresh_copy(
        &self,
        claim: Option<&mut crate::exec::steady::Claim>,
    ) -> crate::error::Result<tempfile::TempDir> {
        std::fs::create_dir_all(&self.scratch).map_err(|e| creating(&self.scratch, e))?;
        // A steady path that cannot be used: a copy elsewhere, all of it
        // new to the claim.
        let steady = claim.as_ref().and_then(|c| steady_dir(&c.path).ok());
        let copy = match steady {
            Some(dir) => dir,
            None => tempfile::Builder::new()
                .prefix("check-")
                .tempdir_in(&self.scratch)
                .map_err(|e| crate::Error::Copy(format!("creating a copy of the change: {e}")))?,
        };
        // Written from the change's tree, never from the workspace's files.
        let id = self.run_tree.as_deref().unwrap_or(&self.tree);
        // A run tree that could not be written says why in place of an id.
        let tree = git2::Oid::from_str(id).map_err(|_| {
            crate::Error::Copy(match id.strip_prefix('(') {
                Some(why) => why.trim_end_matches(')').to_string(),
                None => "the change has no tree to check".to_string(),
            })
        })?;
        crate::git::workspace::open(&self.origin)
            .and_then(|user| {
                crate::git::tree::checkout_tree(&user, &self.workspace, tree, copy.path())
            })
            .map_err(|e| crate::Error::Copy(format!("writing a copy of the change: {e}")))?;
        if self.with_holdout {
            self.holdout.lay_over(copy.path())
        } else {
            self.holdout.strip(copy.path())
        }
        .map_err(|e| {
            crate::Error::Holdout(format!("preparing the held-out tests of the copy: {e}"))
        })?;
        if let Some(c) = claim {
            c.stamp(copy.path()).map_err(|e| {
                crate::Error::Copy(format!("setting the times of the copy's files: {e}"))
            })?;
        }
        Ok(copy)
    }
}

/// The directory `path`, made empty (what the last copy there left, if
/// its removal failed, removed first), removed when dropped.
fn steady_dir(path: &Path) -> std::io::Result<tempfile::TempDir> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path)?,
        Ok(_) => std::fs::remove_file(path)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::Error::other("no directory to lay the copy in"));
    };
    tempfile::Builder::new()
        .prefix(name)
        .rand_bytes(0)
        .tempdir_in(parent)
}

/// A directory rascal keeps its copies or build cache in could not be
/// made (`creating DIR: why`).
fn creating(dir: &Path, e: std::io::Error) -> crate::Error {
    crate::Error::Workspace(crate::git::repo::WorkspaceError::Io {
        what: format!("creating {}", dir.display()),
        source: e,
    })
}

/// A log channel whose lines are passed on to `lines` and whose last
/// lines (cut) the returned task hands back once the channel closes.
fn tail_of(lines: Option<runner::LogTx>) -> (runner::LogTx, tokio::task::JoinHandle<String>) {
    let (tx, mut rx) = runner::log_channel();
    let collect = tokio::spawn(async move {
        let mut tail: std::collections::VecDeque<String> = Default::default();
        while let Some(batch) = rx.recv().await {
            for l in &batch {
                if tail.len() == runner::TAIL_LINES {
                    tail.pop_front();
                }
                tail.push_back(rascal_core::text::cut(&l.text, runner::TAIL_LINE_BYTES));
            }
            if let Some(out) = &lines {
                let _ = out.send(batch).await;
            }
        }
        tail.into_iter().collect::<Vec<_>>().join("\n")
    });
    (tx, collect)
}

#[cfg(test)]
mod tests;
