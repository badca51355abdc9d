//! Bubblewrap (`bwrap`) sandbox for the commands rascal runs on candidate code
//! (agent CLIs and verification commands): a [`SandboxPolicy`] goes in, a `bwrap`
//! argv comes out ([`SandboxPolicy::wrap`]), and the caller spawns that argv.
//! Modelled on Codex CLI's linux-sandbox; every property below is tested by
//! actually running bwrap (see the tests at the bottom of this file).
//!
//! # What a sandboxed command can do
//!
//! The sandbox is built up from nothing (an allowlist): its root is a fresh,
//! read-only tmpfs, and only [`SYSTEM_DIRS`], the [`SYSTEM_ETC`] entries of
//! `/etc` and the policy's own binds are shown in it. Nothing of the host that
//! is not listed (`/home`, `/root`, `/var`, `/srv`, `/mnt`, the host's `/run`
//! and `/tmp`…) exists inside, and so no host socket does either: the
//! container engines' (`/run/docker.sock`, `/run/docker/containerd/…`,
//! `/run/containerd`, `/run/podman`), systemd's and D-Bus's, the user's
//! ssh-agent, gpg-agent and `/tmp/.X11-unix`. A socket is shown only when a
//! bind names it (an agent's `mounts:`, the egress proxy's own socket).
//!
//! - **Writable:** the `workspace` (bound read-write at its own host path, and the
//!   working directory), each `writable` bind, and private, initially empty
//!   tmpfs mounts: `/tmp`, `/var/tmp`, `/run` (with `/var/run` a link to it),
//!   `/dev/shm` and `home` (the caller sets `HOME` to [`SandboxPolicy::home`]).
//!   Each of these tmpfs mounts holds at most [`SandboxPolicy::tmpfs_size`]
//!   bytes. Writes to the workspace and the `writable` binds reach the host;
//!   writes to the tmpfs mounts vanish when the sandbox exits.
//! - **Read-only:** [`SYSTEM_DIRS`] (`/usr`, `/bin`, `/lib*`, `/sbin`, `/opt`,
//!   `/nix`, `/sys`; a top-level symlink such as `/bin -> usr/bin` is recreated
//!   as the same symlink), [`SYSTEM_ETC`] (the pieces of `/etc` programs read:
//!   users, name resolution, certificates, the dynamic linker, locale, time
//!   zone…), and each `read_only` bind (e.g. a CLI's login file placed in the
//!   private home, a toolchain under the user's home). `/dev` is a fresh,
//!   read-only minimal tmpfs with only `null`, `zero`, `full`, `random`,
//!   `urandom`, `tty`, a private `pts` and `shm`, so no disks. `/proc` is a
//!   fresh procfs that shows only the sandbox's processes.
//! - **Hidden:** each `hide` path, where a bind would otherwise show it. A
//!   directory is covered by an empty read-only tmpfs, anything else (file,
//!   socket) by `/dev/null`. Missing paths are skipped. [`SandboxPolicy::new`]
//!   puts the private home at the user's real home path. A mount deeper than a
//!   hidden path stays visible, e.g. a workspace inside the hidden home. This
//!   works because mounts are applied shallowest first.
//! - **Network:** `network: false` gives a new network namespace that contains only
//!   its own loopback interface. Host services, even on 127.0.0.1, are unreachable,
//!   and so are DNS and abstract Unix sockets. `network: true` shares the host's
//!   network namespace, and so all of those (abstract sockets included).
//! - **Processes:** new pid, ipc, uts and (where the kernel allows) cgroup
//!   namespaces. All capabilities are dropped, and the command gets a new session,
//!   so it cannot push input into rascal's terminal with `TIOCSTI`. Every process in
//!   the sandbox, including `setsid`/double-forked daemons, is SIGKILLed when the
//!   command's main process exits or when the process that spawned bwrap dies. This
//!   needs both `--unshare-pid` and `--die-with-parent`. When the main process exits,
//!   bwrap's outer process exits with its status; bwrap's init (pid 1 of the
//!   namespace) would otherwise keep waiting for the daemons, but `--die-with-parent`
//!   kills it, and with it go all the namespace's processes. When rascal dies,
//!   `--die-with-parent` kills bwrap itself first, and the same chain follows.
//!   How many processes and how much memory the sandbox may use is set where it
//!   is spawned (see `exec::limits`).
//! - **Environment:** bwrap hands its own environment to the command unchanged, so
//!   the caller must spawn the argv with a scrubbed one (`Command::env_clear()`
//!   then `.envs(..)`, including `HOME`). bwrap 0.8 does have `--clearenv`/`--setenv`;
//!   they are deliberately not used, because `--setenv` would put values (API keys)
//!   into bwrap's argv, which every local user can read in `/proc/PID/cmdline`.
//!
//! # Caveats
//!
//! - A read-only mount does not stop `connect()` on a Unix socket. A socket a bind
//!   shows (a `mounts:` entry naming one, or one inside a listed directory) can be
//!   used, e.g. `/run/docker.sock` = root on the host.
//! - `/sys` is shown read-only (programs read CPU and cgroup facts there); it holds
//!   no sockets.
//! - Run rascal unprivileged. Under root the capabilities are dropped, but uid 0
//!   still owns every root-owned file the sandbox shows.
//! - `--die-with-parent` is `PR_SET_PDEATHSIG`, which fires when the **thread**
//!   that spawned bwrap exits. So spawn from a long-lived thread, not from a pooled
//!   worker that may be retired (e.g. tokio's `spawn_blocking`).
//! - bwrap cannot create mount points inside a read-only bind. A mount destination
//!   that does not exist on the host must therefore not lie inside a system
//!   directory or a read-only bind; otherwise [`SandboxPolicy::wrap`] refuses.
//!   Mount points created inside a writable bind appear as empty entries on the host.

#![allow(unsafe_code)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};

mod bwrap;
mod checks;

pub(crate) use bwrap::bwrap_path;
#[cfg(all(test, target_os = "linux"))]
use bwrap::probe;
#[cfg(test)]
use bwrap::INSTALL_HINT;
pub use bwrap::{available, knows_size};
use checks::{check_mount_points, clean, distinct_destinations};

/// The host's system directories shown read-only in every sandbox (those
/// that exist; a top-level symlink like `/lib64 -> usr/lib64` is recreated as
/// the same symlink). Everything else of the host is absent unless a bind
/// names it. Extend this list, not a hide list, when programs need more.
pub(crate) const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix", "/sys",
];

/// The entries of `/etc` shown read-only (those that exist; a symlink is
/// followed, so `/etc/resolv.conf -> /run/…` shows the file it names): users
/// and groups, name resolution, certificates, the dynamic linker, locale and
/// time zone, shells' profiles, `alternatives`, and the configuration
/// directories of common toolchains. Not shown: `shadow`, `sudoers`, `ssh`,
/// `docker`, package-manager credentials (`pip.conf`, `npmrc`) and the rest.
pub(crate) const SYSTEM_ETC: &[&str] = &[
    "passwd",
    "group",
    "hosts",
    "hostname",
    "host.conf",
    "resolv.conf",
    "nsswitch.conf",
    "gai.conf",
    "services",
    "protocols",
    "networks",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "locale.alias",
    "locale.conf",
    "default",
    "environment",
    "os-release",
    "lsb-release",
    "debian_version",
    "alpine-release",
    "redhat-release",
    "fedora-release",
    "system-release",
    "alternatives",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "pki",
    "crypto-policies",
    "mime.types",
    "magic",
    "profile",
    "profile.d",
    "bash.bashrc",
    "bashrc",
    "inputrc",
    "shells",
    "login.defs",
    "gitconfig",
    "terminfo",
    "perl",
    "python3",
    "java-11-openjdk",
    "java-17-openjdk",
    "java-21-openjdk",
    "gcc",
    "fonts",
    "xdg",
];

/// Private, empty tmpfs mounts every sandbox has (writable, each at most
/// [`SandboxPolicy::tmpfs_size`]): scratch space, and where the host's
/// runtime sockets would be.
pub(crate) const FRESH_DIRS: &[&str] = &["/tmp", "/var/tmp", "/run"];

/// Sandbox mounts that exist regardless of policy (besides [`SYSTEM_DIRS`] and
/// [`FRESH_DIRS`]). No policy mount may land on one of these exact paths, nor
/// under `/dev` or `/proc`.
const SYSTEM_MOUNTS: &[&str] = &["/", "/dev", "/proc", "/etc", "/var", "/var/run"];

/// What a sandboxed command may see and touch. All paths are absolute. Paths
/// inside the sandbox equal host paths except where a bind says otherwise.
/// [`SandboxPolicy::new`] fills in safe defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// Directory the command may write (the candidate's workspace). It is mounted
    /// read-write at the same path, so cwd paths stay valid, and is the working
    /// directory. Give it canonical (symlink-free) so that it nests correctly with
    /// the hidden paths.
    pub workspace: PathBuf,
    /// Extra read-write binds `(host path, path inside)`, e.g. a per-run build cache.
    /// A missing host path is an error.
    pub writable: Vec<(PathBuf, PathBuf)>,
    /// Extra read-only binds `(host path, path inside)`, e.g. a CLI's login file
    /// listed under the agent's `mounts:`. A missing host path is an error, not
    /// silently skipped.
    pub read_only: Vec<(PathBuf, PathBuf)>,
    /// `false`: a new network namespace with only its own loopback (`--unshare-net`).
    /// `true`: the host's network is shared.
    pub network: bool,
    /// Private HOME inside the sandbox, an empty writable tmpfs. The caller sets
    /// `HOME` in the environment to [`SandboxPolicy::home`].
    pub home: PathBuf,
    /// Paths to hide where a bind would otherwise show them (the rascal store,
    /// the user's repository, held-out tests, credential files inside a bound
    /// toolchain…). Directories are covered by an empty read-only tmpfs, files by
    /// `/dev/null`. Symlinks are resolved; paths that do not exist, or that no
    /// bind shows, are skipped (they are absent from the sandbox anyway).
    pub hide: Vec<PathBuf>,
    /// The most bytes each private tmpfs (`/tmp`, `/var/tmp`, `/run`,
    /// `/dev/shm`, the home) may hold; None: the kernel's default (half the RAM).
    pub tmpfs_size: Option<u64>,
}

/// What one policy entry turns into, before ordering.
#[derive(Debug)]
enum Kind {
    /// The private home (`--tmpfs`, sized).
    Home,
    /// A private scratch directory of [`FRESH_DIRS`] (`--tmpfs`, sized).
    Fresh,
    /// A hidden directory (`--tmpfs`, then `--remount-ro` once everything is mounted).
    HideDir,
    /// A hidden file or socket (`--ro-bind /dev/null`).
    HideFile,
    /// A bind of a host path.
    Bind { src: PathBuf, writable: bool },
    /// A symlink recreated as on the host (`/bin -> usr/bin`).
    Symlink { target: PathBuf },
}

#[derive(Debug)]
struct Mount {
    dest: PathBuf,
    kind: Kind,
    /// Human description for error messages.
    what: &'static str,
}

impl Mount {
    /// Whether bwrap can create mount points below `dest` once this is mounted.
    fn allows_mkdir_below(&self) -> bool {
        match self.kind {
            Kind::Home | Kind::Fresh | Kind::HideDir => true,
            Kind::HideFile | Kind::Symlink { .. } => false,
            Kind::Bind { writable, .. } => writable,
        }
    }

    /// Whether this mount shows host files at `dest` (and so below it).
    fn shows_host(&self) -> bool {
        matches!(self.kind, Kind::Bind { .. })
    }
}

/// The host's system as the sandbox shows it: [`SYSTEM_DIRS`], [`SYSTEM_ETC`]
/// and [`FRESH_DIRS`] (with `/var/run` a link to `/run`), those that exist.
fn system_mounts() -> Vec<Mount> {
    let mut out = Vec::new();
    for dir in SYSTEM_DIRS {
        let path = Path::new(dir);
        let Ok(meta) = path.symlink_metadata() else {
            continue;
        };
        let kind = if meta.file_type().is_symlink() {
            match std::fs::read_link(path) {
                Ok(target) => Kind::Symlink { target },
                Err(_) => continue,
            }
        } else if meta.is_dir() {
            Kind::Bind {
                src: path.to_path_buf(),
                writable: false,
            }
        } else {
            continue;
        };
        out.push(Mount {
            dest: path.to_path_buf(),
            kind,
            what: "system directory",
        });
    }
    for name in SYSTEM_ETC {
        let path = Path::new("/etc").join(name);
        // Followed: a link into the host's /run shows the file it names.
        if let Ok(real) = path.canonicalize() {
            out.push(Mount {
                dest: path,
                kind: Kind::Bind {
                    src: real,
                    writable: false,
                },
                what: "system file",
            });
        }
    }
    for dir in FRESH_DIRS {
        out.push(Mount {
            dest: PathBuf::from(dir),
            kind: Kind::Fresh,
            what: "private directory",
        });
    }
    out.push(Mount {
        dest: PathBuf::from("/var/run"),
        kind: Kind::Symlink {
            target: PathBuf::from("../run"),
        },
        what: "system link",
    });
    out
}

/// Whether the sandbox shows the host's `path` through its system mounts
/// (so a bind of it would be redundant). False for anything under `hide`.
pub(crate) fn system_shows(path: &Path) -> bool {
    let binds = system_mounts();
    binds.iter().any(|m| match &m.kind {
        Kind::Bind { src, .. } => m.dest == *src && path.starts_with(&m.dest),
        _ => false,
    })
}

impl SandboxPolicy {
    /// Default policy for `workspace`: no network, no extra binds. The private home
    /// is put at the user's real home path (`$HOME`, unless unset, relative, missing
    /// or `/`), which keeps programs that read the home from `/etc/passwd` instead
    /// of `$HOME` consistent; nothing of the real home shows unless bound.
    /// Without a usable `$HOME`, the private home is `/tmp/home`.
    pub(crate) fn new(workspace: impl Into<PathBuf>) -> Self {
        Self::with_real_home(workspace.into(), real_home())
    }

    fn with_real_home(workspace: PathBuf, real_home: Option<PathBuf>) -> Self {
        let workspace = workspace.canonicalize().unwrap_or(workspace);
        let hide: Vec<PathBuf> = real_home.iter().cloned().collect();
        SandboxPolicy {
            workspace,
            writable: Vec::new(),
            read_only: Vec::new(),
            network: false,
            home: real_home.unwrap_or_else(|| PathBuf::from("/tmp/home")),
            hide,
            tmpfs_size: None,
        }
    }

    /// The HOME path inside the sandbox; the caller puts it in the command's env.
    pub(crate) fn home(&self) -> &Path {
        &self.home
    }

    /// Whether the host's file at `path` (absolute, symlink-free) shows at the
    /// same path inside the sandbox. The deepest mount above it decides, as
    /// mounts are applied shallowest first: the workspace or a bind shows it;
    /// a hidden path, the private home or a private directory (`/tmp`,
    /// `/run`…) covers it; with none above it, the system mounts decide.
    pub fn shows(&self, path: &Path) -> bool {
        let mut deepest: Option<(usize, bool)> = None;
        let mut mount = |at: &Path, visible: bool| {
            if path.starts_with(at) {
                let depth = at.components().count();
                // At equal depth a cover wins: it is applied over the bind.
                if deepest.is_none_or(|(d, v)| depth > d || (depth == d && v && !visible)) {
                    deepest = Some((depth, visible));
                }
            }
        };
        mount(&self.workspace, true);
        for (_, dest) in self.writable.iter().chain(&self.read_only) {
            mount(dest, true);
        }
        for private in FRESH_DIRS {
            mount(Path::new(private), false);
        }
        mount(&self.home, false);
        for h in &self.hide {
            mount(h, false);
        }
        match deepest {
            Some((_, visible)) => visible,
            None => system_shows(path),
        }
    }

    /// The full argv `[<bwrap>, ...flags..., "--", command...]`. `<bwrap>` is the absolute
    /// path from [`bwrap_path`] when found, so a scrubbed `PATH` does not matter.
    ///
    /// Mount order: `--dev /dev` (with a sized `/dev/shm`, then read-only), `--proc
    /// /proc`, then the system mounts, the private directories, home, hidden paths
    /// and binds sorted shallowest destination first, so a nested mount (workspace
    /// inside a hidden directory, or a hidden `.git` inside the workspace) is applied
    /// after its parent. Last come `--remount-ro` of the hidden directories and of
    /// the root. Errors: an empty command, a relative path or one with `..`, a
    /// non-UTF-8 path, a missing workspace or bind source, two mounts on one
    /// destination, a mount on one of the system's own mount points (or below
    /// `/dev`/`/proc`), or a destination whose mount point bwrap could not create
    /// (see the module caveats).
    pub(crate) fn wrap(&self, command: &[String]) -> Result<Vec<String>, crate::Error> {
        self.checked_argv(command)
    }

    /// [`SandboxPolicy::wrap`]'s work; Err is the refusal.
    fn checked_argv(&self, command: &[String]) -> Result<Vec<String>, crate::Error> {
        if command.is_empty() {
            return Err(crate::Error::Sandbox("sandbox: empty command".to_string()));
        }
        let workspace = clean(&self.workspace, "workspace")?;
        if !workspace.is_dir() {
            return Err(crate::Error::Sandbox(format!(
                "sandbox workspace {} is not a directory",
                workspace.display()
            )));
        }
        let home = clean(&self.home, "home")?;
        let system = system_mounts();
        let mounts = self.own_mounts(&home, &workspace)?;
        let dests = distinct_destinations(&mounts, &system)?;
        let hides = self.hides(&home, &system, &mounts, &dests)?;

        let mut mounts: Vec<Mount> = system.into_iter().chain(mounts).chain(hides).collect();
        // Parents before children. The sort is stable, and equal depths never nest.
        mounts.sort_by_key(|m| m.dest.components().count());
        check_mount_points(&mounts)?;
        Ok(self.bwrap_argv(&mounts, &workspace, command))
    }

    /// The policy's own mounts: the private home, the workspace and the
    /// extra binds (whose sources must exist).
    fn own_mounts(&self, home: &Path, workspace: &Path) -> Result<Vec<Mount>, crate::Error> {
        let mut mounts = vec![
            Mount {
                dest: home.to_path_buf(),
                kind: Kind::Home,
                what: "home",
            },
            Mount {
                dest: workspace.to_path_buf(),
                kind: Kind::Bind {
                    src: workspace.to_path_buf(),
                    writable: true,
                },
                what: "workspace",
            },
        ];
        for (binds, writable, what) in [
            (&self.writable, true, "writable mount"),
            (&self.read_only, false, "read-only mount"),
        ] {
            for (src, dest) in binds {
                let src = clean(src, what)?;
                if !src.exists() {
                    return Err(crate::Error::Sandbox(format!(
                        "sandbox {what} source {} does not exist",
                        src.display()
                    )));
                }
                mounts.push(Mount {
                    dest: clean(dest, what)?,
                    kind: Kind::Bind { src, writable },
                    what,
                });
            }
        }
        Ok(mounts)
    }

    /// Hidden paths, as mounts: only where a bind would show them (and not
    /// where the private home or another mount already covers them).
    fn hides(
        &self,
        home: &Path,
        system: &[Mount],
        mounts: &[Mount],
        dests: &HashSet<PathBuf>,
    ) -> Result<Vec<Mount>, crate::Error> {
        let mut hidden = HashSet::new();
        let mut hides = Vec::new();
        for path in &self.hide {
            let path = clean(path, "hidden path")?;
            // Nothing to hide if it does not exist; resolve symlinks so we cover the target.
            let Ok(real) = path.canonicalize() else {
                continue;
            };
            let real = clean(&real, "hidden path")?;
            let shown = system
                .iter()
                .chain(mounts.iter())
                .any(|m| m.shows_host() && real.starts_with(&m.dest) && real != m.dest);
            // The private home already covers it; or no bind shows it.
            if real == home || !shown || dests.contains(&real) || !hidden.insert(real.clone()) {
                continue;
            }
            let kind = if real.is_dir() {
                Kind::HideDir
            } else {
                Kind::HideFile
            };
            hides.push(Mount {
                dest: real,
                kind,
                what: "hidden path",
            });
        }
        Ok(hides)
    }

    /// bwrap's argv for these mounts (sorted parents first), ending with
    /// `--` and the command.
    fn bwrap_argv(&self, mounts: &[Mount], workspace: &Path, command: &[String]) -> Vec<String> {
        let bwrap = bwrap_path().map_or_else(|| "bwrap".to_string(), |p| s(&p));
        let size = self
            .tmpfs_size
            .filter(|_| knows_size())
            .map(|n| n.to_string());
        let mut argv: Vec<String> = vec![bwrap];
        let mut push = |args: &[&str]| argv.extend(args.iter().map(|a| a.to_string()));
        let sized = |push: &mut dyn FnMut(&[&str]), dest: &str| {
            if let Some(n) = &size {
                push(&["--size", n]);
            }
            push(&["--tmpfs", dest]);
        };
        push(&["--dev", "/dev"]);
        sized(&mut push, "/dev/shm");
        push(&["--remount-ro", "/dev"]);
        push(&["--proc", "/proc"]);
        for m in mounts {
            let dest = s(&m.dest);
            match &m.kind {
                Kind::Home | Kind::Fresh => sized(&mut push, &dest),
                Kind::HideDir => push(&["--tmpfs", &dest]),
                Kind::HideFile => push(&["--ro-bind", "/dev/null", &dest]),
                Kind::Bind { src, writable } => {
                    let flag = if *writable { "--bind" } else { "--ro-bind" };
                    push(&[flag, &s(src), &dest]);
                }
                Kind::Symlink { target } => push(&["--symlink", &s(target), &dest]),
            }
        }
        // After all binds, so bwrap could still create nested mount points in them;
        // non-recursive, so a workspace mounted inside stays writable.
        for m in mounts.iter().filter(|m| matches!(m.kind, Kind::HideDir)) {
            push(&["--remount-ro", &s(&m.dest)]);
        }
        push(&["--remount-ro", "/"]);
        push(&[
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ]);
        if !self.network {
            push(&["--unshare-net"]);
        }
        push(&["--die-with-parent", "--new-session", "--cap-drop", "ALL"]);
        push(&["--chdir", &s(workspace), "--"]);
        argv.extend(command.iter().cloned());
        argv
    }
}

/// Lossless for paths that passed [`clean`].
fn s(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// `$HOME` canonicalized, unless it is unset, relative, missing or `/`.
fn real_home() -> Option<PathBuf> {
    let home = PathBuf::from(std::env::var_os("HOME")?);
    if !home.is_absolute() {
        return None;
    }
    let home = home.canonicalize().ok()?;
    (home != Path::new("/") && home.is_dir()).then_some(home)
}

#[cfg(all(test, target_os = "linux"))]
mod tests;
