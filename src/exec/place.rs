//! Where a verification command runs (guardrail commands, `test` and
//! `command` criteria). For a candidate: each command gets a fresh copy of
//! the change (the base tree plus the ChangeSet, never the live workspace)
//! inside bubblewrap, with the network off unless the check says otherwise
//! and only the base variables plus the ones the check names. For
//! `rascal check`: the user's own working tree, as the user.

use crate::exec::confine::{environment, Confinement};
use crate::exec::env::{BASE_ENV, TOOLCHAIN_ENV};
use crate::exec::runner::{CommandSpec, Env};
use crate::model::changeset::ChangeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the commands of one candidate (or of `rascal check`) run.
#[derive(Debug, Clone)]
pub enum Place {
    /// The user's own working tree with the user's environment.
    InPlace { origin: PathBuf },
    /// A candidate's change, confined.
    Sandboxed(Arc<Sandboxed>),
}

/// A candidate's change and the sandbox its commands run in.
#[derive(Debug, Clone)]
pub struct Sandboxed {
    /// The user's repository.
    pub origin: PathBuf,
    /// The candidate's workspace (read only by rascal, never by a command).
    pub workspace: PathBuf,
    pub base: git2::Oid,
    pub changes: ChangeSet,
    /// Where the copies are made (hidden from the commands).
    pub scratch: PathBuf,
    /// A build cache shared by this candidate's commands (`CARGO_TARGET_DIR`).
    pub cache: Option<PathBuf>,
    /// Host paths hidden from the commands.
    pub hide: Vec<PathBuf>,
    /// Run the commands in bubblewrap. False only where bubblewrap is
    /// missing and the candidate is a scripted one (marked UNSANDBOXED):
    /// the commands still get a fresh copy and the scrubbed environment.
    pub confined: bool,
}

/// A command ready to run; the copy it runs on lives as long as this.
pub struct Prepared {
    pub spec: CommandSpec,
    _copy: Option<tempfile::TempDir>,
}

impl Place {
    /// The user's repository.
    pub fn origin(&self) -> &Path {
        match self {
            Place::InPlace { origin } => origin,
            Place::Sandboxed(s) => &s.origin,
        }
    }

    /// The files of the change, for checks that only read them.
    pub fn files(&self) -> &Path {
        match self {
            Place::InPlace { origin } => origin,
            Place::Sandboxed(s) => &s.workspace,
        }
    }

    /// Ready `spec` (whose `cwd` is ignored) to run here. `env` names host
    /// variables the command may see besides the base set; `network` lets
    /// it use the host's network.
    pub fn prepare(
        &self,
        mut spec: CommandSpec,
        env: &[String],
        network: bool,
    ) -> Result<Prepared, String> {
        let s = match self {
            Place::InPlace { origin } => {
                spec.cwd = origin.clone();
                return Ok(Prepared { spec, _copy: None });
            }
            Place::Sandboxed(s) => s,
        };
        std::fs::create_dir_all(&s.scratch)
            .map_err(|e| format!("creating {}: {e}", s.scratch.display()))?;
        let copy = tempfile::Builder::new()
            .prefix("check-")
            .tempdir_in(&s.scratch)
            .map_err(|e| format!("creating a copy of the change: {e}"))?;
        crate::git::materialize::materialize(
            &s.origin,
            s.base,
            &s.changes,
            &s.workspace,
            copy.path(),
        )
        .map_err(|e| format!("writing a copy of the change: {e}"))?;
        let mut writable = Vec::new();
        let mut vars: Vec<(String, String)> = BASE_ENV
            .iter()
            .chain(TOOLCHAIN_ENV.iter())
            .chain(env.iter().map(String::as_str).collect::<Vec<_>>().iter())
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect();
        if let Some(cache) = &s.cache {
            std::fs::create_dir_all(cache)
                .map_err(|e| format!("creating {}: {e}", cache.display()))?;
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
        };
        spec.cwd = copy.path().to_path_buf();
        if !s.confined {
            spec.env = Env::Only(vars);
            return Ok(Prepared {
                spec,
                _copy: Some(copy),
            });
        }
        let path = vars
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone());
        let policy = confine.policy(&spec.argv, path.as_deref())?;
        spec.argv = policy.wrap(&spec.argv)?;
        spec.env = Env::Only(environment(vars, &policy));
        Ok(Prepared {
            spec,
            _copy: Some(copy),
        })
    }
}
