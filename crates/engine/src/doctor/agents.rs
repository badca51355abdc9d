//! `rascal doctor`, the agents part: for each configured agent, where its
//! program is and whether it is executable (process launcher) or whether its
//! image is on the engine (docker), whether the paths its command names are
//! ones its sandbox shows, and whether its credential variables are set —
//! never their values (the checks `run` makes first: `pipeline::preflight`).
//! Doctor never runs a `command` agent (its program is the user's own
//! script: it may ignore `--version` and edit files or call a paid API); only the known CLIs (claude, codex, goose) are
//! asked `--version`, inside bubblewrap, in an empty temporary directory,
//! without network or credentials — and not at all without bubblewrap.

use crate::pipeline::preflight::{
    credential_problems, locate, program_of, program_problems, unseen_paths,
};
use rascal_core::config::{Config, LauncherKind, RuntimeKind, SandboxKind};
use rascal_exec::exec::confine::{expand_home, Confinement};
use rascal_exec::exec::runner::{self, CommandSpec, Env, Stream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a CLI may take to print its version.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AgentCheck {
    pub agent: String,
    pub runtime: String,
    /// The program run under the process launcher, as configured.
    pub program: Option<String>,
    /// Where it resolves (None: not found). A path relative to the
    /// repository is looked up in the base commit, which every candidate's
    /// workspace starts from.
    pub found: Option<PathBuf>,
    /// `found` is a path in the base commit, not on the host.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub in_base_commit: bool,
    /// Whether `found` has an executable bit.
    pub executable: Option<bool>,
    /// What `PROGRAM --version` printed in the sandbox (first line).
    pub version: Option<String>,
    /// Why there is no version (never run, no sandbox, it failed).
    pub version_note: Option<String>,
    /// Credential variable name → set in this environment?
    pub credentials: Vec<(String, bool)>,
    pub image: Option<String>,
    /// Docker launcher: whether the engine has the image (None: not asked).
    pub image_present: Option<bool>,
    /// Problems, each a sentence with what to do.
    pub problems: Vec<String>,
    #[serde(skip)]
    runtime_kind: Option<RuntimeKind>,
    /// The agent's `mounts:`, which its sandbox may read.
    #[serde(skip)]
    mounts: Vec<PathBuf>,
}

/// What can be told about each agent without running anything: its
/// program (resolved against PATH, or the base commit `base` of `repo`),
/// its credentials, its image's name. Under the docker launcher the
/// program is in the image, so host paths are not looked at.
pub fn agent_checks(config: &Config, repo: &git2::Repository, base: git2::Oid) -> Vec<AgentCheck> {
    let docker = config.main.launcher != LauncherKind::Process;
    let sandbox = rascal_exec::exec::sandbox::available();
    let files = rascal_exec::git::workspace::files_dir(repo);
    let hide = rascal_exec::exec::confine::private_paths(
        &rascal_exec::git::workspace::workdir(repo),
        &files,
    );
    let scratch = files.join("preflight");
    config
        .main
        .agents
        .iter()
        .map(|(name, a)| {
            let mut c = AgentCheck {
                agent: name.clone(),
                runtime: format!("{:?}", a.runtime).to_lowercase(),
                program: program_of(a),
                found: None,
                in_base_commit: false,
                executable: None,
                version: None,
                version_note: None,
                credentials: Vec::new(),
                image: a.image.clone(),
                image_present: None,
                problems: Vec::new(),
                runtime_kind: Some(a.runtime),
                mounts: a.mounts.iter().map(|m| expand_home(m)).collect(),
            };
            if docker {
                // The program is inside the image; the host's files do not
                // matter.
                if a.image.is_none() && a.runtime != RuntimeKind::Scripted {
                    c.problems.push(
                        "no `image:` for the docker launcher: build one from docker/ and name it"
                            .into(),
                    );
                }
            } else if let Some(p) = c.program.clone() {
                let found = locate(&p, Some((repo, base)));
                c.problems.extend(program_problems(&p, found.as_ref()));
                if let Some(l) = found {
                    c.found = Some(l.path);
                    c.in_base_commit = l.in_base_commit;
                    c.executable = Some(l.executable);
                }
                if a.runtime == RuntimeKind::Command && a.sandbox != Some(SandboxKind::None) {
                    c.problems
                        .extend(unseen_paths(a, (repo, base), &hide, &scratch));
                }
                // Without bubblewrap a run refuses this agent (as `run`'s
                // preparation does), unless it says `sandbox: none`.
                if a.sandbox != Some(SandboxKind::None) {
                    if let Err(why) = &sandbox {
                        c.problems
                            .push(format!("runs of this agent refuse to start: {why}"));
                    }
                }
            }
            c.credentials = a
                .env
                .iter()
                .map(|v| {
                    (
                        v.clone(),
                        std::env::var_os(v).is_some_and(|x| !x.is_empty()),
                    )
                })
                .collect();
            c.problems.extend(credential_problems(a));
            c
        })
        .collect()
}

/// Ask each known CLI (claude, codex, goose) found on the host for its
/// version, inside bubblewrap in an empty temporary directory, with
/// `hide` (the user's repository, rascal's files) hidden, no network and
/// no credentials. A `command` agent is never run.
pub async fn versions(checks: &mut [AgentCheck], hide: &[PathBuf]) {
    for c in checks.iter_mut() {
        let Some(path) = c.found.clone() else {
            continue;
        };
        match c.runtime_kind {
            Some(RuntimeKind::Claude | RuntimeKind::Codex | RuntimeKind::Goose) => {}
            Some(RuntimeKind::Command) => {
                c.version_note = Some("not run: doctor never runs a command agent".into());
                continue;
            }
            _ => continue,
        }
        if c.in_base_commit {
            c.version_note =
                Some("not run: a script of the repository, not an installed CLI".into());
            continue;
        }
        if c.executable != Some(true) {
            continue;
        }
        match rascal_exec::exec::sandbox::available() {
            Ok(_) => match sandboxed_version(&path, hide, &c.mounts).await {
                Ok(v) => c.version = Some(v),
                Err(why) => c.version_note = Some(format!("--version in the sandbox: {why}")),
            },
            Err(_) => c.version_note = Some(
                "not run: bubblewrap is not available, and doctor runs an agent CLI only inside it"
                    .into(),
            ),
        }
    }
}

/// `PROGRAM --version` confined; its first non-empty stdout line.
async fn sandboxed_version(
    program: &Path,
    hide: &[PathBuf],
    mounts: &[PathBuf],
) -> Result<String, crate::Error> {
    sandboxed_version_with(&program.to_string_lossy(), hide, mounts, &[]).await
}

/// `PROGRAM --version` confined, seeing the host's basic variables and
/// `extra_env` (names) besides: its first non-empty stdout line, or why
/// not (with the last thing it printed on stderr): `ToolMissing` when it
/// ran and did not answer, else what kept it from running.
pub(crate) async fn sandboxed_version_with(
    program: &str,
    hide: &[PathBuf],
    mounts: &[PathBuf],
    extra_env: &[String],
) -> Result<String, crate::Error> {
    let scratch = tempfile::Builder::new()
        .prefix("rascal-doctor-")
        .tempdir()
        .map_err(|e| {
            crate::Error::Workspace(rascal_exec::git::workspace::WorkspaceError::Io {
                what: "could not create a scratch directory".into(),
                source: e,
            })
        })?;
    let confine = Confinement {
        workspace: scratch.path().to_path_buf(),
        writable: Vec::new(),
        hide: hide.to_vec(),
        read_only: mounts.iter().filter(|m| m.exists()).cloned().collect(),
        network: false,
        limits: Default::default(),
    };
    let argv = vec![program.to_string(), "--version".to_string()];
    // The host's basics (PATH, locale, terminal); never a credential.
    let env: Vec<(String, String)> = rascal_exec::exec::env::BASE_ENV
        .iter()
        .map(|k| k.to_string())
        .chain(extra_env.iter().cloned())
        .filter_map(|k| std::env::var(&k).ok().map(|v| (k, v)))
        .collect();
    let (argv, env) = confine.command(&argv, env)?;
    let mut spec = CommandSpec::new(argv, scratch.path().to_path_buf(), VERSION_TIMEOUT);
    spec.env = Env::Only(env);
    spec.limits = Some(confine.limits);
    let (tx, mut rx) = rascal_exec::exec::runner::log_channel();
    let lines = tokio::spawn(async move {
        let (mut first, mut err) = (None, None);
        while let Some(batch) = rx.recv().await {
            for l in batch {
                let text = l.text.trim();
                if text.is_empty() {
                    continue;
                }
                if first.is_none() && l.stream == Stream::Stdout {
                    first = Some(rascal_core::text::sanitize(text));
                }
                if l.stream == Stream::Stderr {
                    err = Some(rascal_core::text::ellipsis(
                        &rascal_core::text::sanitize(text),
                        200,
                    ));
                }
            }
        }
        (first, err)
    });
    let cancel = tokio_util::sync::CancellationToken::new();
    let outcome = runner::run(&spec, Some(tx), &cancel).await;
    let (first, err) = lines.await.unwrap_or_default();
    let outcome = outcome.map_err(rascal_exec::Error::from)?;
    let mut exit = outcome.exit;
    rascal_exec::exec::confine::signal_from_status(&mut exit);
    let said = err.map(|e| format!(" ({e})")).unwrap_or_default();
    let missing = crate::Error::ToolMissing;
    if let Some(p) = exit.problem(VERSION_TIMEOUT) {
        return Err(missing(format!("{p}{said}")));
    }
    if !exit.success() {
        return Err(missing(format!(
            "exited with code {}{said}",
            exit.code.map(|c| c.to_string()).unwrap_or("?".into())
        )));
    }
    first.ok_or_else(|| missing("printed nothing".into()))
}

/// Docker launcher: whether the engine has each agent's image. An engine
/// that does not answer is reported once, by the engine check.
pub async fn images(checks: &mut [AgentCheck], pull: impl Fn(&str) -> bool) {
    if checks.iter().all(|c| c.image.is_none()) {
        return;
    }
    let engine = rascal_exec::exec::launch::docker::connect().await;
    for c in checks.iter_mut() {
        let Some(image) = c.image.clone() else {
            continue;
        };
        let engine = match &engine {
            Ok(e) => e,
            Err(_) => {
                c.problems.push(format!(
                    "image `{image}` not checked: no Docker engine answered (see `docker:` below)"
                ));
                continue;
            }
        };
        match rascal_exec::exec::launch::docker::has_image(engine, &image).await {
            Ok(true) => c.image_present = Some(true),
            Ok(false) => {
                c.image_present = Some(false);
                if !pull(&c.agent) {
                    c.problems.push(format!(
                        "image `{image}` is not on the Docker engine at {}: {}, or set `pull: true` on the agent to pull it from its registry",
                        rascal_exec::exec::launch::docker::engine_address(),
                        rascal_exec::exec::launch::docker::build_hint(c.runtime_kind, &image)
                    ));
                }
            }
            Err(e) => c.problems.push(e.to_string()),
        }
    }
}

/// The agents section as lines.
pub fn agent_lines(checks: &[AgentCheck]) -> Vec<String> {
    let mut out = vec!["agents:".to_string()];
    if checks.is_empty() {
        out.push("  none configured (.rascal/config.yaml `agents:`)".into());
    }
    for c in checks {
        let mark = if c.problems.is_empty() { "✓" } else { "✗" };
        let mut line = format!("  {mark} {} ({})", c.agent, c.runtime);
        match (&c.program, &c.found) {
            (Some(_), Some(path)) => {
                line.push_str(&format!(" · {}", path.display()));
                if c.in_base_commit {
                    line.push_str(" in the base commit");
                }
                line.push_str(match c.executable {
                    Some(true) => " · executable",
                    _ => " · NOT executable",
                });
                if let Some(v) = &c.version {
                    line.push_str(&format!(" · {v}"));
                } else if let Some(n) = &c.version_note {
                    line.push_str(&format!(" · {n}"));
                }
            }
            (Some(p), None) if c.image.is_none() => line.push_str(&format!(" · `{p}` not found")),
            _ => {}
        }
        if let Some(i) = &c.image {
            line.push_str(&format!(" · image {i}"));
            match c.image_present {
                Some(true) => line.push_str(" on the engine"),
                Some(false) => line.push_str(" NOT on the engine"),
                None => {}
            }
        }
        for (v, set) in &c.credentials {
            line.push_str(&format!(" · ${v} {}", if *set { "set" } else { "NOT SET" }));
        }
        out.push(line);
        for p in &c.problems {
            out.push(format!("      {p}"));
        }
    }
    out
}
