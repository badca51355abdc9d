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
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Error returned by [`available`] when bwrap cannot be found.
pub const INSTALL_HINT: &str = "bubblewrap (bwrap) is not installed: apt-get install bubblewrap \
     (or set `sandbox: none` on the agent to run it unsandboxed)";

/// The host's system directories shown read-only in every sandbox (those
/// that exist; a top-level symlink like `/lib64 -> usr/lib64` is recreated as
/// the same symlink). Everything else of the host is absent unless a bind
/// names it. Extend this list, not a hide list, when programs need more.
pub const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix", "/sys",
];

/// The entries of `/etc` shown read-only (those that exist; a symlink is
/// followed, so `/etc/resolv.conf -> /run/…` shows the file it names): users
/// and groups, name resolution, certificates, the dynamic linker, locale and
/// time zone, shells' profiles, `alternatives`, and the configuration
/// directories of common toolchains. Not shown: `shadow`, `sudoers`, `ssh`,
/// `docker`, package-manager credentials (`pip.conf`, `npmrc`) and the rest.
pub const SYSTEM_ETC: &[&str] = &[
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
pub const FRESH_DIRS: &[&str] = &["/tmp", "/var/tmp", "/run"];

/// Where common distributions install bwrap, tried after `$PATH`.
const FALLBACK_LOCATIONS: &[&str] = &[
    "/usr/bin/bwrap",
    "/usr/local/bin/bwrap",
    "/bin/bwrap",
    "/run/current-system/sw/bin/bwrap",
];

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
pub fn system_shows(path: &Path) -> bool {
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
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
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
    pub fn home(&self) -> &Path {
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
    pub fn wrap(&self, command: &[String]) -> Result<Vec<String>, String> {
        if command.is_empty() {
            return Err("sandbox: empty command".to_string());
        }
        let workspace = clean(&self.workspace, "workspace")?;
        if !workspace.is_dir() {
            return Err(format!(
                "sandbox workspace {} is not a directory",
                workspace.display()
            ));
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
    fn own_mounts(&self, home: &Path, workspace: &Path) -> Result<Vec<Mount>, String> {
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
                    return Err(format!(
                        "sandbox {what} source {} does not exist",
                        src.display()
                    ));
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
    ) -> Result<Vec<Mount>, String> {
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

/// The destinations of the policy's own mounts: none on one of the
/// sandbox's own mount points, no two on one destination.
fn distinct_destinations(mounts: &[Mount], system: &[Mount]) -> Result<HashSet<PathBuf>, String> {
    let mut dests = HashSet::new();
    for m in mounts {
        let reserved = SYSTEM_MOUNTS.iter().any(|s| m.dest == Path::new(s))
            || system.iter().any(|s| s.dest == m.dest)
            || m.dest.starts_with("/dev")
            || m.dest.starts_with("/proc");
        if reserved {
            return Err(format!(
                "sandbox {} {} collides with one of the sandbox's own mounts (/, /dev, \
                 /proc, /etc, /tmp, /run, /var and the system directories)",
                m.what,
                m.dest.display()
            ));
        }
        if !dests.insert(m.dest.clone()) {
            return Err(format!(
                "sandbox: two mounts on {} (the {} is one of them)",
                m.dest.display(),
                m.what
            ));
        }
    }
    Ok(dests)
}

/// Every mount point bwrap must create can be: none missing inside a
/// read-only mount (`mounts` sorted parents first).
fn check_mount_points(mounts: &[Mount]) -> Result<(), String> {
    for (i, m) in mounts.iter().enumerate() {
        // The deepest mount applied before that encloses it; none: the root tmpfs.
        let parent = mounts[..i]
            .iter()
            .rev()
            .find(|p| m.dest.starts_with(&p.dest));
        let creatable = parent.is_none_or(Mount::allows_mkdir_below);
        if !creatable && !m.dest.exists() {
            return Err(format!(
                "sandbox {} {} does not exist on the host and lies inside {} (a read-only \
                 mount), so bwrap cannot create its mount point",
                m.what,
                m.dest.display(),
                parent.map_or("/".into(), |p| s(&p.dest)),
            ));
        }
    }
    Ok(())
}

/// Absolute, `..`-free, UTF-8, with `.` and duplicate slashes removed.
fn clean(path: &Path, what: &str) -> Result<PathBuf, String> {
    if !path.is_absolute() || path.to_str().is_none() {
        return Err(format!(
            "sandbox {what} {} must be an absolute UTF-8 path",
            path.display()
        ));
    }
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::RootDir | Component::CurDir => {}
            Component::Normal(part) => out.push(part),
            Component::ParentDir | Component::Prefix(_) => {
                return Err(format!(
                    "sandbox {what} {} must not contain `..`",
                    path.display()
                ));
            }
        }
    }
    Ok(out)
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

fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Finds bwrap on `$PATH`, then in common install locations. Cached.
pub fn bwrap_path() -> Option<PathBuf> {
    static PATH: OnceLock<Option<PathBuf>> = OnceLock::new();
    PATH.get_or_init(|| {
        // `RASCAL_BWRAP=PATH` names the program (an empty value or a path
        // that is not executable: as if bubblewrap were not installed).
        if let Some(given) = std::env::var_os("RASCAL_BWRAP") {
            let p = PathBuf::from(given);
            return is_executable(&p).then_some(p);
        }
        let on_path = std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join("bwrap"));
        on_path
            .chain(FALLBACK_LOCATIONS.iter().map(PathBuf::from))
            .find(|p| is_executable(p))
    })
    .clone()
}

/// Whether this bwrap knows `--size` (bubblewrap 0.6 and later). Older ones
/// get unsized tmpfs mounts (a cgroup's memory limit still counts their
/// pages; the rlimit fallback then leaves them bounded only by the kernel's
/// default, half the RAM).
pub fn knows_size() -> bool {
    static KNOWS: OnceLock<bool> = OnceLock::new();
    *KNOWS.get_or_init(|| {
        bwrap_path()
            .and_then(|b| {
                Command::new(b)
                    .arg("--help")
                    .stdin(Stdio::null())
                    .output()
                    .ok()
            })
            .is_some_and(|o| {
                String::from_utf8_lossy(&o.stdout).contains("--size")
                    || String::from_utf8_lossy(&o.stderr).contains("--size")
            })
    })
}

/// Ok(path of bwrap) when bwrap is installed **and** can build a sandbox with the
/// namespaces [`SandboxPolicy::wrap`] uses. It probes once per process with
/// `bwrap --ro-bind / / … true`, because some kernels or AppArmor setups forbid
/// unprivileged user namespaces. Err is one line to show the user.
pub fn available() -> Result<PathBuf, String> {
    static AVAILABLE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    AVAILABLE.get_or_init(|| probe(bwrap_path())).clone()
}

fn probe(bwrap: Option<PathBuf>) -> Result<PathBuf, String> {
    let bwrap = bwrap.ok_or_else(|| INSTALL_HINT.to_string())?;
    let fail = |why: String| {
        format!(
            "bubblewrap ({}) is installed but cannot create a sandbox here ({why}); the kernel \
             may forbid unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, \
             or kernel.apparmor_restrict_unprivileged_userns=0) (or set `sandbox: none` on the \
             agent to run it unsandboxed)",
            bwrap.display()
        )
    };
    // The probe builds its root the way the sandbox does (a tmpfs and the
    // system directories), not by binding the whole of `/`: a recursive
    // bind of `/` also remounts whatever else is mounted at that moment (a
    // container's overlay coming or going), and fails with it.
    let mut child = Command::new(&bwrap)
        .args([
            "--tmpfs",
            "/",
            "--ro-bind-try",
            "/usr",
            "/usr",
            "--ro-bind-try",
            "/bin",
            "/bin",
            "--ro-bind-try",
            "/lib",
            "/lib",
            "--ro-bind-try",
            "/lib64",
            "/lib64",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-net",
            "--unshare-cgroup-try",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--",
            "true",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot run it: {e}")))?;
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(fail("the probe `bwrap ... true` hung for 10 s".to_string()));
            }
            Err(e) => return Err(fail(format!("waiting for it failed: {e}"))),
        }
    };
    if status.success() {
        return Ok(bwrap);
    }
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr);
    }
    let first = stderr.lines().next().unwrap_or("").trim();
    Err(fail(if first.is_empty() {
        format!("`bwrap ... true` exited with {status}")
    } else {
        first.to_string()
    }))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::fs;
    use std::net::{TcpListener, TcpStream};
    use std::os::unix::fs::chown;
    use std::process::Output;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::mpsc;

    /// False (with a note) when bwrap is unusable here; set RASCAL_REQUIRE_BWRAP=1
    /// to turn that into a failure (e.g. in CI).
    fn have_bwrap() -> bool {
        match available() {
            Ok(_) => true,
            Err(e) => {
                skip("RASCAL_REQUIRE_BWRAP", &e);
                false
            }
        }
    }

    /// A test that cannot run here: a failure when `require` is set (CI
    /// sets every `RASCAL_REQUIRE_*`), else said on stderr and appended to
    /// the file `RASCAL_SKIP_LOG` names, which CI sums up.
    fn skip(require: &str, why: &str) {
        if std::env::var_os(require).is_some_and(|v| !v.is_empty()) {
            panic!("{require} is set but {why}");
        }
        eprintln!("skipped: {why} (set {require}=1 to make this a failure)");
        if let Some(log) = std::env::var_os("RASCAL_SKIP_LOG") {
            let test = std::thread::current().name().unwrap_or("?").to_string();
            let why = why.replace(['\n', '\t'], " ");
            let line = format!("{require}\t{test}\t{why}\n");
            let open = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log);
            let _ = open.and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
        }
    }

    /// A scratch directory outside /tmp (the sandbox's /tmp is private, so host
    /// files under /tmp would simply be invisible, which would prove nothing).
    fn scratch() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::Builder::new()
            .prefix("rascal-sandbox-test-")
            .tempdir_in("/var/tmp")
            .expect("create scratch dir in /var/tmp");
        let path = dir.path().canonicalize().unwrap();
        (dir, path)
    }

    fn mkdir(path: &Path) -> PathBuf {
        fs::create_dir_all(path).unwrap();
        path.to_path_buf()
    }

    /// A bare policy: nothing hidden, home in the private /tmp.
    fn policy(workspace: &Path) -> SandboxPolicy {
        SandboxPolicy {
            workspace: workspace.to_path_buf(),
            writable: vec![],
            read_only: vec![],
            network: false,
            home: PathBuf::from("/tmp/rascal-home"),
            hide: vec![],
            tmpfs_size: None,
        }
    }

    #[test]
    fn shows_says_which_host_paths_the_sandbox_sees() {
        let mut p = policy(Path::new("/tmp/ws"));
        p.home = PathBuf::from("/home/me");
        p.hide = vec![PathBuf::from("/home/me"), PathBuf::from("/srv/repo")];
        p.read_only = vec![(
            PathBuf::from("/home/me/tools"),
            PathBuf::from("/home/me/tools"),
        )];
        assert!(p.shows(Path::new("/tmp/ws/agents/fix.sh")), "the workspace");
        assert!(
            p.shows(Path::new("/home/me/tools/fix.sh")),
            "a bind in the home"
        );
        assert!(p.shows(Path::new("/usr/bin/env")), "a system directory");
        assert!(!p.shows(Path::new("/home/me/agents/fix.sh")), "the home");
        assert!(!p.shows(Path::new("/srv/repo/fix.sh")), "the repository");
        assert!(!p.shows(Path::new("/tmp/other/fix.sh")), "the private /tmp");
        assert!(!p.shows(Path::new("/mnt/x")), "anything not given");
    }

    /// Unique per call, and made of digits so it can be a `sleep` duration.
    fn marker() -> String {
        static N: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        format!(
            "{}{:09}{}",
            std::process::id(),
            nanos,
            N.fetch_add(1, Ordering::Relaxed)
        )
    }

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    /// Runs `prefix + argv` with HOME set, killing it after 60 s.
    fn spawn_output(prefix: &[&str], argv: &[String], home: &Path) -> Output {
        spawn_output_within(Duration::from_secs(60), prefix, argv, home)
    }

    /// Like `spawn_output`, but gives up after `timeout`. Output is read to EOF, so
    /// a leaked process that still holds stdout also counts as a timeout.
    fn spawn_output_within(
        timeout: Duration,
        prefix: &[&str],
        argv: &[String],
        home: &Path,
    ) -> Output {
        let all: Vec<String> = prefix
            .iter()
            .map(|a| a.to_string())
            .chain(argv.iter().cloned())
            .collect();
        let child = Command::new(&all[0])
            .args(&all[1..])
            .env("HOME", home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let pid = child.id() as libc::pid_t;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || tx.send(child.wait_with_output()));
        match rx.recv_timeout(timeout) {
            Ok(out) => out.unwrap(),
            Err(_) => {
                unsafe { libc::kill(pid, libc::SIGKILL) };
                panic!("sandboxed command timed out: {all:?}");
            }
        }
    }

    fn run_in(p: &SandboxPolicy, script: &str) -> (String, Output) {
        let out = spawn_output(&[], &p.wrap(&sh(script)).unwrap(), p.home());
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        eprintln!(
            "--- stdout:\n{stdout}--- stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (stdout, out)
    }

    fn lines(stdout: &str) -> Vec<&str> {
        stdout.lines().collect()
    }

    /// Pids whose /proc/PID/cmdline contains `needle`.
    fn procs_with(needle: &[u8]) -> Vec<u32> {
        let mut found = Vec::new();
        for entry in fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            if pid == std::process::id() {
                continue;
            }
            let Ok(cmdline) = fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            if cmdline.windows(needle.len()).any(|w| w == needle) {
                found.push(pid);
            }
        }
        found
    }

    /// Kills, on drop (also when a test panics), every process whose command line
    /// contains this test's unique marker, so a failing test leaks nothing.
    struct Reap(String);

    impl Drop for Reap {
        fn drop(&mut self) {
            for pid in procs_with(self.0.as_bytes()) {
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            }
        }
    }

    fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
        let deadline = Instant::now() + timeout;
        while !cond() {
            assert!(Instant::now() < deadline, "timed out waiting until {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn is_root() -> bool {
        unsafe { libc::geteuid() == 0 }
    }

    // ---- argv construction (runs no sandbox) ----

    #[test]
    fn argv_has_flags_and_mounts_in_nesting_order() {
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("ws"));
        let hidden = mkdir(&ws.join("hidden"));
        let git = mkdir(&hidden.join(".git"));
        let mut p = policy(&ws);
        p.tmpfs_size = Some(1 << 20);
        if !knows_size() {
            eprintln!("this bwrap has no --size: checked without it");
            p.tmpfs_size = None;
        }
        // Deliberately listed deepest first: wrap must still mount parents first.
        p.hide = vec![git.clone(), hidden.clone(), base.join("not-shown")];
        let argv = p.wrap(&sh("true")).unwrap();
        let at = |seq: &[&str]| {
            argv.windows(seq.len())
                .position(|w| w.iter().zip(seq).all(|(a, b)| a == b))
                .unwrap_or_else(|| panic!("{seq:?} not in {argv:?}"))
        };
        let (hid, w, g) = (s(&hidden), s(&ws), s(&git));
        assert!(argv[0].ends_with("bwrap"));
        // Built up from an empty root: never the host's `/`.
        assert!(!argv.windows(3).any(|w| w == ["--ro-bind", "/", "/"]));
        assert_eq!(&argv[1..3], ["--dev", "/dev"]);
        let tmpfs = |d: &str| match p.tmpfs_size {
            Some(_) => at(&["--size", "1048576", "--tmpfs", d]),
            None => at(&["--tmpfs", d]),
        };
        tmpfs("/dev/shm");
        at(&["--remount-ro", "/dev"]);
        at(&["--ro-bind", "/usr", "/usr"]);
        tmpfs("/tmp");
        tmpfs("/run");
        tmpfs("/tmp/rascal-home");
        at(&["--symlink", "../run", "/var/run"]);
        assert!(at(&["--tmpfs", "/tmp"]) < at(&["--bind", &w, &w]));
        assert!(at(&["--bind", &w, &w]) < at(&["--tmpfs", &hid]));
        assert!(at(&["--tmpfs", &hid]) < at(&["--tmpfs", &g]));
        assert!(at(&["--tmpfs", &g]) < at(&["--remount-ro", &hid]));
        assert!(at(&["--remount-ro", &hid]) < at(&["--remount-ro", "/"]));
        // Hidden where nothing shows it: nothing to hide.
        assert!(!argv.iter().any(|a| a.contains("not-shown")));
        for flag in [
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--unshare-net",
            "--die-with-parent",
            "--new-session",
        ] {
            at(&[flag]);
        }
        at(&["--cap-drop", "ALL"]);
        at(&["--chdir", &w]);
        assert_eq!(&argv[argv.len() - 4..], &["--", "sh", "-c", "true"]);

        p.network = true;
        assert!(!p
            .wrap(&sh("true"))
            .unwrap()
            .contains(&"--unshare-net".into()));
    }

    #[test]
    fn wrap_rejects_bad_policies() {
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("ws"));
        let err = |p: &SandboxPolicy| p.wrap(&sh("true")).unwrap_err();

        assert!(policy(&ws).wrap(&[]).is_err());
        assert!(err(&policy(Path::new("relative/ws"))).contains("absolute"));
        assert!(err(&policy(&base.join("ws/../ws"))).contains(".."));
        assert!(err(&policy(&base.join("missing"))).contains("not a directory"));

        let mut p = policy(&ws);
        p.read_only = vec![(base.join("no-such-login.json"), "/tmp/login.json".into())];
        let e = err(&p);
        assert!(e.contains("read-only mount source") && e.contains("does not exist"));

        let mut p = policy(&ws);
        p.writable = vec![(base.join("no-such-cache"), "/tmp/cache".into())];
        assert!(err(&p).contains("writable mount source"));

        let mut p = policy(&ws);
        p.writable = vec![(base.clone(), ws.clone())];
        assert!(err(&p).contains("two mounts"));

        let mut p = policy(&ws);
        p.read_only = vec![(base.clone(), "/proc/x".into())];
        assert!(err(&p).contains("collides"));

        // /usr/<unique> does not exist, and /usr is a read-only system bind.
        let mut p = policy(&ws);
        p.home = PathBuf::from(format!("/usr/rascal-test-{}", marker()));
        assert!(err(&p).contains("mount point"));
        // Anywhere outside the system directories the empty root makes room.
        p.home = PathBuf::from(format!("/home/rascal-test-{}", marker()));
        assert!(p.wrap(&sh("true")).is_ok());
        // The system's own mount points are not the policy's.
        let mut p = policy(&ws);
        p.read_only = vec![(base.clone(), "/usr".into())];
        assert!(err(&p).contains("collides"));

        // Missing hidden paths are simply skipped.
        let mut p = policy(&ws);
        p.hide = vec![base.join("not-there")];
        assert!(!p
            .wrap(&sh("true"))
            .unwrap()
            .contains(&s(&base.join("not-there"))));
    }

    #[test]
    fn new_hides_real_home_and_sensitive_sockets() {
        let (_t, base) = scratch();
        let home = mkdir(&base.join("home"));
        let ws = mkdir(&home.join("proj/ws"));
        let p = SandboxPolicy::with_real_home(ws.clone(), Some(home.clone()));
        assert_eq!(p.home(), home);
        assert_eq!(p.workspace, ws);
        assert!(!p.network);
        assert!(p.hide.contains(&home));
        let p = SandboxPolicy::with_real_home(ws, None);
        assert_eq!(p.home(), Path::new("/tmp/home"));
    }

    #[test]
    fn probe_reports_missing_or_broken_bwrap() {
        assert_eq!(probe(None).unwrap_err(), INSTALL_HINT);
        let e = probe(Some("/bin/false".into())).unwrap_err();
        assert!(e.contains("cannot create a sandbox") && e.contains("user namespaces"));
        assert!(!e.contains('\n'));
    }

    // ---- properties, each checked by running bwrap ----

    #[test]
    fn available_finds_working_bwrap() {
        if !have_bwrap() {
            return;
        }
        let bwrap = available().unwrap();
        assert!(bwrap.is_absolute());
        // It works: a sandbox of the namespaces `wrap` uses runs a command.
        let ran = Command::new(&bwrap)
            .args([
                "--ro-bind",
                "/",
                "/",
                "--unshare-pid",
                "--unshare-net",
                "--",
            ])
            .args(["sh", "-c", "exit 3"])
            .status()
            .unwrap();
        assert_eq!(ran.code(), Some(3));
        // The answer kept for the process is what a fresh probe finds.
        assert_eq!(available(), probe(bwrap_path()));
    }

    /// The system is read-only: writes outside the workspace fail and leave host
    /// files untouched, while writes to the workspace land on the host.
    #[test]
    fn writes_outside_workspace_fail() {
        if !have_bwrap() {
            return;
        }
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("ws"));
        let outside = mkdir(&base.join("outside"));
        fs::write(outside.join("file"), "original").unwrap();
        let script = format!(
            "echo changed > '{o}/file' && echo WROTE-EXISTING
             echo new > '{o}/new' && echo WROTE-NEW
             rm -f '{o}/file' && echo REMOVED
             touch /usr/rascal-sandbox-probe && echo WROTE-USR
             echo ok > in-ws && echo WROTE-WS
             pwd",
            o = s(&outside)
        );
        // The scratch directory shown read-only, so `outside` is there to attack.
        let mut p = policy(&ws);
        p.read_only = vec![(base.clone(), base.clone())];
        let (out, output) = run_in(&p, &script);
        assert!(output.status.success());
        assert_eq!(lines(&out), ["WROTE-WS", &s(&ws)]);
        assert_eq!(
            fs::read_to_string(outside.join("file")).unwrap(),
            "original"
        );
        assert!(!outside.join("new").exists());
        assert!(!Path::new("/usr/rascal-sandbox-probe").exists());
        assert_eq!(fs::read_to_string(ws.join("in-ws")).unwrap(), "ok\n");
    }

    /// /tmp and HOME are private, empty tmpfs mounts: writable inside, never
    /// reaching the host, and hiding what the host has at those paths. /dev and
    /// /proc are fresh.
    #[test]
    fn tmp_and_home_are_private() {
        if !have_bwrap() {
            return;
        }
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("ws"));
        // A host directory at the home path, with content that must not show.
        let home = mkdir(&base.join("home"));
        fs::write(home.join("host-secret"), "secret").unwrap();
        let tmp_probe = format!("/tmp/rascal-sandbox-probe-{}", marker());
        let mut p = policy(&ws);
        p.home = home.clone();
        let script = format!(
            "test \"$HOME\" = '{h}' && echo HOME-IS-SET
             echo \"home entries: $(ls -A \"$HOME\" | wc -l)\"
             echo x > \"$HOME/written\" && echo WROTE-HOME
             echo \"tmp entries: $(ls -A /tmp | wc -l)\"
             echo y > '{tmp_probe}' && echo WROTE-TMP
             test -c /dev/null && test -c /dev/urandom && echo DEV-OK
             test ! -e /dev/sda && test ! -e /dev/vda && echo NO-DISKS
             test -r /proc/self/status && echo PROC-OK",
            h = s(&home)
        );
        let (out, _) = run_in(&p, &script);
        assert_eq!(
            lines(&out),
            [
                "HOME-IS-SET",
                "home entries: 0",
                "WROTE-HOME",
                "tmp entries: 0",
                "WROTE-TMP",
                "DEV-OK",
                "NO-DISKS",
                "PROC-OK"
            ]
        );
        assert!(!home.join("written").exists());
        assert_eq!(
            fs::read_to_string(home.join("host-secret")).unwrap(),
            "secret"
        );
        assert!(!Path::new(&tmp_probe).exists());
    }

    /// A hidden directory's contents are unreadable and it cannot be written, while
    /// a workspace nested inside it is bound after the tmpfs and stays writable.
    #[test]
    fn hidden_dir_hides_but_nested_workspace_stays_writable() {
        if !have_bwrap() {
            return;
        }
        let (_t, base) = scratch();
        let hidden = mkdir(&base.join("hidden"));
        fs::write(hidden.join("secret.txt"), "secret").unwrap();
        let ws = mkdir(&hidden.join("ws"));
        fs::write(ws.join("src.txt"), "code").unwrap();
        let mut p = policy(&ws);
        // Shown read-only, so hiding `hidden` in it is what keeps it from view.
        p.read_only = vec![(base.clone(), base.clone())];
        p.hide = vec![hidden.clone()];
        let script = format!(
            "cat '{h}/secret.txt' && echo READ-SECRET
             ls -A '{h}'
             echo x > '{h}/new' && echo WROTE-HIDDEN
             cat src.txt; echo
             echo ok > '{w}/out.txt' && echo WROTE-WS",
            h = s(&hidden),
            w = s(&ws)
        );
        let (out, _) = run_in(&p, &script);
        assert_eq!(lines(&out), ["ws", "code", "WROTE-WS"]);
        assert!(!hidden.join("new").exists());
        assert_eq!(fs::read_to_string(ws.join("out.txt")).unwrap(), "ok\n");
    }

    /// The default policy's hidden real home: the private home sits at the real
    /// home's path, so its files vanish, while a workspace under it still works.
    #[test]
    fn real_home_is_hidden_around_workspace() {
        if !have_bwrap() {
            return;
        }
        let (_t, base) = scratch();
        let home = mkdir(&base.join("home"));
        fs::write(home.join(".credentials"), "token").unwrap();
        let ws = mkdir(&home.join("src/proj"));
        let p = SandboxPolicy::with_real_home(ws.clone(), Some(home.clone()));
        let script = format!(
            "cat '{h}/.credentials' && echo READ-CREDENTIALS
             ls -A \"$HOME\"
             echo scratch > \"$HOME/.cache-file\" && echo WROTE-HOME
             echo ok > built && echo WROTE-WS",
            h = s(&home)
        );
        let (out, _) = run_in(&p, &script);
        assert_eq!(lines(&out), ["src", "WROTE-HOME", "WROTE-WS"]);
        assert!(!home.join(".cache-file").exists());
        assert!(ws.join("built").exists());
    }

    /// A hidden file reads as empty (it is /dev/null) and cannot be replaced.
    #[test]
    fn hidden_file_reads_empty() {
        if !have_bwrap() {
            return;
        }
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("ws"));
        let secret = ws.join("token.json");
        fs::write(&secret, "secret").unwrap();
        let mut p = policy(&ws);
        p.hide = vec![secret.clone()];
        let script = format!(
            "echo \"[$(cat '{f}')]\"
             echo x > '{f}'; cat '{f}'",
            f = s(&secret)
        );
        let (out, _) = run_in(&p, &script);
        assert_eq!(lines(&out), ["[]"]);
        assert_eq!(fs::read_to_string(&secret).unwrap(), "secret");
    }

    /// Another candidate's workspace next to ours is neither writable nor
    /// readable: nothing of the host shows that is not bound.
    #[test]
    fn sibling_workspace_is_not_writable() {
        if !have_bwrap() {
            return;
        }
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("cand-1"));
        let other = mkdir(&base.join("cand-2"));
        fs::write(other.join("lib.rs"), "theirs").unwrap();
        let script = format!(
            "cat '{o}/lib.rs'; echo
             echo mine > '{o}/lib.rs' && echo WROTE-FILE
             touch '{o}/new' && echo CREATED
             mkdir '{o}/dir' && echo MKDIR
             rm '{o}/lib.rs' && echo REMOVED
             mv '{o}' '{b}/moved' && echo MOVED
             true",
            o = s(&other),
            b = s(&base)
        );
        let (out, _) = run_in(&policy(&ws), &script);
        assert_eq!(lines(&out), [""]);
        assert_eq!(fs::read_to_string(other.join("lib.rs")).unwrap(), "theirs");
        assert_eq!(fs::read_dir(&other).unwrap().count(), 1);
    }

    /// read_only binds are visible but not writable (e.g. a login file placed in the
    /// private home); writable binds land on the host.
    #[test]
    fn read_only_and_writable_binds() {
        if !have_bwrap() {
            return;
        }
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("ws"));
        let login = base.join("login.json");
        fs::write(&login, "token").unwrap();
        let cache = mkdir(&base.join("cache"));
        let mut p = policy(&ws);
        p.read_only = vec![(login.clone(), p.home.join(".tool/login.json"))];
        p.writable = vec![(cache.clone(), PathBuf::from("/tmp/build-cache"))];
        let script = "cat \"$HOME/.tool/login.json\"; echo
             echo x >> \"$HOME/.tool/login.json\" && echo WROTE-LOGIN
             echo c > /tmp/build-cache/obj && echo WROTE-CACHE";
        let (out, _) = run_in(&p, script);
        assert_eq!(lines(&out), ["token", "WROTE-CACHE"]);
        assert_eq!(fs::read_to_string(&login).unwrap(), "token");
        assert_eq!(fs::read_to_string(cache.join("obj")).unwrap(), "c\n");
    }

    /// When the main process exits, every descendant dies too, even one that
    /// escaped into its own session. The exit status is passed through.
    #[test]
    fn descendants_die_with_main_process() {
        if !have_bwrap() {
            return;
        }
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("ws"));
        let m = marker();
        // `[.]` so the waiting grep does not match its own command line.
        let script = format!(
            "setsid sh -c 'sleep 1000.{m}; :' >/dev/null 2>&1 &
             i=0
             until grep -qs '1000[.]{m}' /proc/[0-9]*/cmdline; do
               i=$((i+1)); [ $i -gt 200 ] && exit 99; sleep 0.01
             done
             echo STARTED; exit 7"
        );
        let _reap = Reap(format!("1000.{m}"));
        let p = policy(&ws);
        let argv = p.wrap(&sh(&script)).unwrap();
        // Without the pid namespace + --die-with-parent, bwrap's init would stay
        // alive with our stdout, and this would time out.
        let output = spawn_output_within(Duration::from_secs(10), &[], &argv, p.home());
        let out = String::from_utf8_lossy(&output.stdout);
        assert_eq!(lines(&out), ["STARTED"]);
        assert_eq!(output.status.code(), Some(7));
        let needle = format!("1000.{m}");
        wait_until(
            "the sandbox's sleep is gone",
            Duration::from_secs(30),
            || procs_with(needle.as_bytes()).is_empty(),
        );
    }

    /// SIGKILL of the process that spawned bwrap takes down the whole sandbox
    /// (--die-with-parent kills bwrap, and the pid namespace takes the rest).
    #[test]
    fn killing_parent_kills_sandbox() {
        if !have_bwrap() {
            return;
        }
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("ws"));
        let m = marker();
        let _reap = Reap(format!("1000.{m}"));
        let argv = policy(&ws)
            .wrap(&sh(&format!("sleep 1000.{m}; :")))
            .unwrap();
        // The intermediate must not exec bwrap (hence `; exit`), so it stays its parent.
        let mut parent = Command::new("sh")
            .arg("-c")
            .arg("\"$@\"; exit $?")
            .arg("sh")
            .args(&argv)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The real sleep: its argv is exactly "sleep", "1000.<m>".
        let sleep_argv = format!("sleep\x001000.{m}");
        wait_until("the sandboxed sleep runs", Duration::from_secs(10), || {
            !procs_with(sleep_argv.as_bytes()).is_empty()
        });
        parent.kill().unwrap();
        parent.wait().unwrap();
        let needle = format!("1000.{m}");
        wait_until(
            "bwrap and the sandbox are gone",
            Duration::from_secs(30),
            || procs_with(needle.as_bytes()).is_empty(),
        );
    }

    /// network=false: only a private loopback, and a listener on the host's
    /// 127.0.0.1 is unreachable; network=true (control) reaches it.
    #[test]
    fn network_is_unshared() {
        if !have_bwrap() {
            return;
        }
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("ws"));
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        TcpStream::connect(("127.0.0.1", port)).expect("reachable outside the sandbox");
        let has_bash = Path::new("/bin/bash").exists() || Path::new("/usr/bin/bash").exists();
        let script = format!(
            "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' '; echo
             if [ {has_bash} = true ]; then
               if bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null
               then echo CONNECTED; else echo REFUSED; fi
             fi"
        );
        let mut p = policy(&ws);
        let (out, _) = run_in(&p, &script);
        let out = lines(&out);
        assert_eq!(out[0].trim(), "lo");
        if has_bash {
            assert_eq!(out[1], "REFUSED");
            p.network = true;
            let (out, _) = run_in(&p, &script);
            assert_eq!(lines(&out)[1], "CONNECTED");
        }
    }

    /// New pid/net/ipc/uts/cgroup namespaces, no capabilities, a new session, and
    /// the workspace as cwd.
    #[test]
    fn namespaces_capabilities_session_and_cwd() {
        if !have_bwrap() {
            return;
        }
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("ws"));
        let script =
            "for n in pid net ipc uts cgroup; do echo \"$n $(readlink /proc/self/ns/$n)\"; done
             grep -E '^(Cap(Inh|Prm|Eff|Amb)|NoNewPrivs):' /proc/self/status | tr -d '\\t'
             echo \"session $(cut -d' ' -f6 /proc/$$/stat) pid $$\"
             pwd";
        let (out, _) = run_in(&policy(&ws), script);
        let out = lines(&out);
        for (i, ns) in ["pid", "net", "ipc", "uts", "cgroup"].iter().enumerate() {
            let host = fs::read_link(format!("/proc/self/ns/{ns}")).unwrap();
            let (name, inside) = out[i].split_once(' ').unwrap();
            assert_eq!(name, *ns);
            assert_ne!(inside, s(&host), "{ns} namespace is shared with the host");
        }
        // This `grep` was exec'd by the shell: no_new_privs keeps even a root-owned
        // process from regaining capabilities on exec. (As root, bwrap 0.8 leaves
        // the bounding set alone; unprivileged, it is empty too.)
        assert_eq!(
            &out[5..10],
            [
                "CapInh:0000000000000000",
                "CapPrm:0000000000000000",
                "CapEff:0000000000000000",
                "CapAmb:0000000000000000",
                "NoNewPrivs:1"
            ]
        );
        // Session 1 is led by bwrap's init inside the sandbox; without
        // --new-session it would be the host's session leader (shown as 0).
        assert_eq!(out[10], "session 1 pid 2");
        assert_eq!(out[11], s(&ws));
    }

    /// --new-session: even when rascal has a controlling terminal (faked here with
    /// `script`), the sandboxed command has none, so it cannot TIOCSTI into it.
    #[test]
    fn new_session_has_no_controlling_terminal() {
        if !have_bwrap() {
            return;
        }
        let Some(script) = ["/usr/bin/script", "/bin/script"]
            .into_iter()
            .find(|p| Path::new(p).exists())
        else {
            skip(
                "RASCAL_REQUIRE_SANDBOX_TOOLS",
                "`script` not found (apt-get install bsdutils)",
            );
            return;
        };
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("ws"));
        let probe = "echo \"tty_nr $(cut -d' ' -f7 /proc/$$/stat)\"";
        let quote = |a: &String| format!("'{}'", a.replace('\'', "'\\''"));
        let quoted = |argv: &[String]| argv.iter().map(quote).collect::<Vec<_>>().join(" ");
        let outer = |cmd: String| {
            let out = spawn_output(&[script, "-qec", &cmd, "/dev/null"], &[], Path::new("/"));
            String::from_utf8_lossy(&out.stdout).replace('\r', "")
        };
        // Control: outside the sandbox, the same probe under `script` has a terminal.
        assert_ne!(outer(quoted(&sh(probe))).trim(), "tty_nr 0");
        let argv = policy(&ws).wrap(&sh(probe)).unwrap();
        assert_eq!(outer(quoted(&argv)).trim(), "tty_nr 0");
    }

    /// The same sandbox works for an unprivileged user (bwrap then builds it in a
    /// user namespace). Run as root, this test drops to `nobody` with setpriv; run
    /// unprivileged, every other test already covers this.
    #[test]
    fn works_unprivileged() {
        if !have_bwrap() {
            return;
        }
        if !is_root() {
            eprintln!("not root: the other tests already ran bwrap unprivileged");
            return;
        }
        let Some(setpriv) = ["/usr/bin/setpriv", "/bin/setpriv"]
            .into_iter()
            .find(|p| Path::new(p).exists())
        else {
            skip(
                "RASCAL_REQUIRE_SANDBOX_TOOLS",
                "`setpriv` not found (apt-get install util-linux)",
            );
            return;
        };
        let (_t, base) = scratch();
        fs::set_permissions(&base, fs::Permissions::from_mode(0o755)).unwrap();
        let ws = mkdir(&base.join("ws"));
        chown(&ws, Some(65534), Some(65534)).unwrap();
        let outside = base.join("outside");
        fs::write(&outside, "original").unwrap();
        fs::set_permissions(&outside, fs::Permissions::from_mode(0o666)).unwrap();
        let hidden = mkdir(&base.join("hidden"));
        fs::write(hidden.join("secret"), "secret").unwrap();
        fs::set_permissions(hidden.join("secret"), fs::Permissions::from_mode(0o644)).unwrap();
        let mut p = policy(&ws);
        // Shown read-only, so hiding `hidden` in it is what keeps it from view.
        p.read_only = vec![(base.clone(), base.clone())];
        p.hide = vec![hidden.clone()];
        let script = format!(
            "id -u
             echo ok > out && echo WROTE-WS
             echo changed > '{o}' && echo WROTE-OUTSIDE
             cat '{h}/secret' && echo READ-SECRET
             echo \"home entries: $(ls -A \"$HOME\" | wc -l)\"
             echo x > \"$HOME/f\" && echo WROTE-HOME
             tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '
             grep '^CapEff:' /proc/self/status | tr -d '\\t'",
            o = s(&outside),
            h = s(&hidden)
        );
        let argv = p.wrap(&sh(&script)).unwrap();
        let out = spawn_output(
            &[
                setpriv,
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--",
            ],
            &argv,
            p.home(),
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        eprintln!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(
            lines(&stdout),
            [
                "65534",
                "WROTE-WS",
                "home entries: 0",
                "WROTE-HOME",
                "lo",
                "CapEff:0000000000000000"
            ]
        );
        assert_eq!(fs::read_to_string(&outside).unwrap(), "original");
        assert!(ws.join("out").exists());
    }

    /// `find` over the sandbox's whole filesystem (not following links,
    /// skipping /proc and /sys), printing every socket. Each entry is
    /// `stat`ed: `find -type s` trusts the directory entry's type, which
    /// for a socket bound onto a mount point is the placeholder's (a file).
    const SOCKET_WALK: &str =
        "find / \\( -path /proc -o -path /sys \\) -prune -o -print0 2>/dev/null \
         | xargs -0 stat -c '%F|%n' 2>/dev/null | sed -n 's/^socket|//p'; echo WALKED";

    /// No host socket is in the sandbox (the engines', systemd's, D-Bus's, the
    /// user's agents'): the root is built up from an allowlist. A socket a bind
    /// names (as `mounts:` does) is the one exception.
    #[test]
    fn no_host_socket_shows_unless_bound() {
        if !have_bwrap() {
            return;
        }
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("ws"));
        let sock = base.join("agent.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let (out, _) = run_in(
            &SandboxPolicy::with_real_home(ws.clone(), real_home()),
            SOCKET_WALK,
        );
        assert_eq!(lines(&out), ["WALKED"], "sockets in the sandbox");
        let mut p = policy(&ws);
        p.read_only = vec![(sock.clone(), sock.clone())];
        let (out, _) = run_in(&p, SOCKET_WALK);
        assert_eq!(lines(&out), [s(&sock).as_str(), "WALKED"]);
    }

    /// Only the allowlisted system shows: no /home, /root, /var/lib or /srv of
    /// the host, an /etc without shadow, and the root is read-only.
    #[test]
    fn only_the_system_allowlist_shows() {
        if !have_bwrap() {
            return;
        }
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("ws"));
        let script = "ls -A /var; test -e /var/lib && echo VAR-LIB
             test -e /etc/shadow && echo SHADOW
             test -e /etc/passwd && echo PASSWD
             test -x /bin/sh && echo BIN-SH
             ls /root 2>/dev/null | head -1
             touch /new-top-level 2>/dev/null && echo WROTE-ROOT
             touch /etc/new 2>/dev/null && echo WROTE-ETC
             touch /dev/new 2>/dev/null && echo WROTE-DEV
             echo x > /run/x && echo x > /var/tmp/x && echo x > /dev/shm/x && echo PRIVATE-OK";
        let (out, _) = run_in(&policy(&ws), script);
        assert_eq!(
            lines(&out),
            ["run", "tmp", "PASSWD", "BIN-SH", "PRIVATE-OK"]
        );
    }

    /// Each private tmpfs holds at most `tmpfs_size` bytes.
    #[test]
    fn private_tmpfs_mounts_are_bounded() {
        if !have_bwrap() {
            return;
        }
        if !knows_size() {
            skip(
                "RASCAL_REQUIRE_SANDBOX_TOOLS",
                "this bwrap has no --size (bubblewrap 0.8 or later has it)",
            );
            return;
        }
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("ws"));
        let mut p = policy(&ws);
        p.tmpfs_size = Some(4 << 20);
        let script = "for d in /tmp /var/tmp /run /dev/shm \"$HOME\"; do
               head -c 8388608 /dev/zero > \"$d/fill\" 2>/dev/null && echo \"$d UNBOUNDED\"
               echo \"$d $(($(wc -c < \"$d/fill\") / 1048576))\"
             done";
        let (out, _) = run_in(&p, script);
        assert_eq!(
            lines(&out),
            [
                "/tmp 4",
                "/var/tmp 4",
                "/run 4",
                "/dev/shm 4",
                "/tmp/rascal-home 4"
            ]
        );
    }

    /// Overhead of the sandbox: `cargo test --release -- --ignored --nocapture overhead`.
    #[test]
    #[ignore = "benchmark; run explicitly"]
    fn overhead() {
        if !have_bwrap() {
            return;
        }
        let (_t, base) = scratch();
        let ws = mkdir(&base.join("ws"));
        let median_ms = |argv: &[String]| {
            let mut times: Vec<f64> = (0..20)
                .map(|_| {
                    let start = Instant::now();
                    let status = Command::new(&argv[0])
                        .args(&argv[1..])
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .status()
                        .unwrap();
                    assert!(status.success());
                    start.elapsed().as_secs_f64() * 1000.0
                })
                .collect();
            times.sort_by(f64::total_cmp);
            (times[9] + times[10]) / 2.0
        };
        let bare = median_ms(&["true".to_string()]);
        let mut p = SandboxPolicy::new(&ws);
        let sandboxed = median_ms(&p.wrap(&["true".to_string()]).unwrap());
        p.network = true;
        let shared_net = median_ms(&p.wrap(&["true".to_string()]).unwrap());
        println!(
            "`true` x20, median: bare {bare:.2} ms, bwrap {sandboxed:.2} ms, \
             bwrap with host network {shared_net:.2} ms"
        );
    }
}
