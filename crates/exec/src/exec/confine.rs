//! What rascal confines candidate code to: the bubblewrap policy of an agent
//! or a verification command of one candidate. It hides the user's
//! repository (and with it the store and hooks), rascal's files of every run
//! (other candidates' workspaces included) and the user's home; binds the
//! one directory the command may write, the files it may read (its run
//! directory, its program, the agent's `mounts:`), and decides the network.

use crate::exec::sandbox::SandboxPolicy;
use std::path::{Path, PathBuf};

/// One confined command's view of the host.
#[derive(Debug, Clone)]
pub struct Confinement {
    /// The only directory written through to the host.
    pub workspace: PathBuf,
    /// Extra writable binds (e.g. a per-candidate build cache).
    pub writable: Vec<PathBuf>,
    /// Host paths hidden from the command (the user's repository, rascal's
    /// files, the store).
    pub hide: Vec<PathBuf>,
    /// Host paths the command may read although they are hidden otherwise
    /// (its run directory, the agent's `mounts:`).
    pub read_only: Vec<PathBuf>,
    /// Share the host's network.
    pub network: bool,
    /// Processes and memory (the private tmpfs mounts are each at most
    /// `limits.memory` too); the caller puts them on the command's spec.
    pub limits: rascal_core::config::limits::Limits,
}

impl Confinement {
    /// The bubblewrap policy, with `argv[0]` made visible when it lives in a
    /// hidden place (a stand-in in /tmp, a CLI under the home directory).
    pub fn policy(
        &self,
        argv: &[String],
        path_var: Option<&str>,
    ) -> crate::error::Result<SandboxPolicy> {
        let mut p = SandboxPolicy::new(&self.workspace);
        p.network = self.network;
        p.tmpfs_size = Some(self.limits.memory);
        p.hide.extend(self.hide.iter().cloned());
        for w in &self.writable {
            p.writable.push((w.clone(), w.clone()));
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let tools = toolchains(path_var, home.as_deref());
        p.hide.extend(toolchain_secrets(&tools));
        let mut read_only: Vec<PathBuf> = self.read_only.clone();
        read_only.extend(tools);
        if let Some(program) = argv.first().and_then(|a| program_path(a, path_var)) {
            if !program.starts_with(&self.workspace) {
                read_only.push(program);
            }
        }
        // The sandbox shows nothing of the host it is not given: everything
        // but what its system directories already show (and do not hide)
        // needs a bind.
        let hidden: Vec<PathBuf> = p.hide.clone();
        let mut binds: Vec<PathBuf> = read_only
            .into_iter()
            .map(|r| std::fs::canonicalize(&r).unwrap_or(r))
            .filter(|r| !r.starts_with(&self.workspace))
            .filter(|r| {
                !crate::exec::sandbox::system_shows(r) || hidden.iter().any(|h| r.starts_with(h))
            })
            .collect();
        binds.sort();
        binds.dedup();
        for r in binds {
            p.read_only.push((r.clone(), r));
        }
        Ok(p)
    }
}

/// What no candidate code may see: the user's repository at `repo` (its git
/// directory too, wherever it is: the store, hooks, config) and rascal's
/// files of every run at `files` (other candidates' workspaces included).
pub fn private_paths(repo: &Path, files: &Path) -> Vec<PathBuf> {
    let mut hide = vec![repo.to_path_buf(), files.to_path_buf()];
    if let Ok(r) = git2::Repository::discover(repo) {
        hide.push(r.commondir().to_path_buf());
    }
    hide
}

/// A command's argv and environment.
pub(crate) type Command = (Vec<String>, Vec<(String, String)>);

impl Confinement {
    /// A command as it runs confined: the bubblewrap argv around `argv`,
    /// and `env` with the sandbox's private HOME and TMPDIR.
    pub fn command(
        &self,
        argv: &[String],
        env: Vec<(String, String)>,
    ) -> crate::error::Result<Command> {
        let path = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone());
        let policy = self.policy(argv, path.as_deref())?;
        Ok((policy.wrap(argv)?, environment(env, &policy)))
    }
}

/// bubblewrap reports a command killed by signal N as exit status 128+N,
/// as shells do: read it back as the signal.
pub fn signal_from_status(exit: &mut crate::exec::runner::Exit) {
    if let (None, Some(code @ 129..=192)) = (exit.signal, exit.code) {
        exit.signal = Some(code - 128);
        exit.code = None;
    }
}

/// Where `program` is on the host: as given when it has a `/`, else the
/// first match on `path_var`.
pub fn program_path(program: &str, path_var: Option<&str>) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return p.is_absolute().then_some(p).filter(|p| p.exists());
    }
    path_var?
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(program))
        .find(|p| p.is_file())
}

/// Toolchain directories a confined command needs although they lie in a
/// hidden place (the home directory): every `PATH` entry, the whole
/// installation a `PATH` entry belongs to (`~/.cargo` with `~/.rustup`,
/// `~/.pyenv`, `~/.nvm`, `~/go`…), and the directories the toolchain
/// variables name. They are bound read-only; credential files inside them
/// are hidden (see `toolchain_secrets`).
pub(crate) fn toolchains(path_var: Option<&str>, home: Option<&Path>) -> Vec<PathBuf> {
    const ROOTS: &[(&str, &[&str])] = &[
        (".cargo", &[".cargo", ".rustup"]),
        (".rustup", &[".cargo", ".rustup"]),
        (".pyenv", &[".pyenv"]),
        (".nvm", &[".nvm"]),
        (".rbenv", &[".rbenv"]),
        (".deno", &[".deno"]),
        (".bun", &[".bun"]),
        ("go", &["go"]),
    ];
    let mut out = Vec::new();
    for dir in path_var
        .unwrap_or("")
        .split(':')
        .filter(|d| d.starts_with('/'))
    {
        let dir = PathBuf::from(dir);
        if !dir.is_dir() {
            continue;
        }
        if let Some(top) = home
            .and_then(|h| dir.strip_prefix(h).ok())
            .and_then(|rel| rel.components().next())
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
        {
            if let Some((_, roots)) = ROOTS.iter().find(|(r, _)| *r == top) {
                for r in *roots {
                    out.push(home.unwrap().join(r));
                }
                continue;
            }
        }
        out.push(dir);
    }
    for var in crate::exec::env::TOOLCHAIN_ENV {
        if let Some(v) = std::env::var_os(var).map(PathBuf::from) {
            if v.is_absolute() {
                out.push(v);
            }
        }
    }
    out.retain(|p| p.exists());
    out.sort();
    out.dedup();
    out
}

/// Credential files inside toolchain directories, hidden even when the
/// directory is bound (a registry token is not a toolchain).
pub(crate) fn toolchain_secrets(toolchains: &[PathBuf]) -> Vec<PathBuf> {
    const NAMES: &[&str] = &["credentials", "credentials.toml", ".npmrc", ".pypirc"];
    toolchains
        .iter()
        .flat_map(|t| NAMES.iter().map(move |n| t.join(n)))
        .filter(|p| p.exists())
        .collect()
}

/// A `mounts:` entry: `~/x` is under the user's home.
pub fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The environment of a confined command: `vars` with HOME set to the
/// sandbox's private home and TMPDIR to its private /tmp.
pub(crate) fn environment(
    vars: Vec<(String, String)>,
    policy: &SandboxPolicy,
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vars
        .into_iter()
        .filter(|(k, _)| k != "HOME" && k != "TMPDIR")
        .collect();
    out.push(("HOME".into(), policy.home().to_string_lossy().into_owned()));
    out.push(("TMPDIR".into(), "/tmp".into()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_on_path_or_taken_as_given() {
        assert_eq!(
            program_path("sh", Some("/nonexistent:/bin:/usr/bin")),
            Some(PathBuf::from("/bin/sh"))
        );
        assert_eq!(program_path("no-such-program-x", Some("/bin")), None);
        assert_eq!(program_path("./relative", Some("/bin")), None);
        assert_eq!(
            program_path("/bin/sh", None),
            Some(PathBuf::from("/bin/sh"))
        );
    }

    #[test]
    fn home_and_tmp_are_the_sandboxes_own() {
        let dir = tempfile::tempdir().unwrap();
        let c = Confinement {
            workspace: dir.path().to_path_buf(),
            writable: Vec::new(),
            hide: Vec::new(),
            read_only: Vec::new(),
            network: false,
            limits: Default::default(),
        };
        let p = c.policy(&["sh".into()], Some("/bin")).unwrap();
        let env = environment(
            vec![
                ("HOME".into(), "/root".into()),
                ("TMPDIR".into(), "/var/x".into()),
                ("PATH".into(), "/bin".into()),
            ],
            &p,
        );
        assert!(env.contains(&("TMPDIR".into(), "/tmp".into())));
        assert!(env.contains(&("PATH".into(), "/bin".into())));
        let home = env.iter().find(|(k, _)| k == "HOME").unwrap();
        assert_eq!(Path::new(&home.1), p.home());
        assert!(!p.network);
    }
}
