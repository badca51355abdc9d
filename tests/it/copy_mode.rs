//! Copy mode against a real second Docker engine that this test starts on a
//! loopback TCP port (its own data root, exec root and pidfile, no bridge,
//! no iptables), so the engine shares no disk path with the workspace the
//! way a remote one would not: rascal runs with DOCKER_HOST=tcp://… and
//! must upload the workspace and bring the change back without a bind
//! mount. Needs root and `dockerd`; skips with the reason otherwise,
//! unless RASCAL_REQUIRE_DOCKER is set (then that is a failure).

use crate::common;
use common::{stderr, stdout, TestRepo};
use sha2::Digest;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const IMAGE: &str = "rascal-copy-busybox:1";
const APPLETS: &[&str] = &[
    "sh",
    "echo",
    "dd",
    "sha256sum",
    "printf",
    "chmod",
    "ln",
    "mkdir",
    "rm",
    "mkfifo",
    "test",
    "[",
    "grep",
    "pwd",
    "cat",
    "sleep",
    "true",
    "env",
    "ls",
    "id",
    "head",
    "wc",
];

/// A second `dockerd` on 127.0.0.1:PORT, stopped and cleaned up on drop
/// (also when the test panics).
struct SecondEngine {
    child: Child,
    dir: tempfile::TempDir,
    host: String,
    /// The engine's own bridge (never `--bridge=none`: a dockerd started
    /// so deletes the host's `docker0`, which the main engine needs).
    bridge: String,
}

impl SecondEngine {
    fn start() -> Option<SecondEngine> {
        let skip = |why: &str| -> Option<SecondEngine> {
            common::skip("RASCAL_REQUIRE_DOCKER", why);
            None
        };
        // SAFETY: geteuid cannot fail.
        if rascal_exec::exec::os::euid() != 0 {
            return skip("starting a second dockerd needs root");
        }
        let Some(dockerd) = which("dockerd") else {
            return skip("no `dockerd` on PATH (install docker.io)");
        };
        if which("docker").is_none() {
            return skip("no `docker` CLI on PATH");
        }
        let dir = tempfile::Builder::new()
            .prefix("rascal-engine2-")
            .tempdir()
            .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let host = format!("tcp://127.0.0.1:{port}");
        let bridge = format!("rsc{}", std::process::id() % 100_000);
        let subnet = format!("10.251.{}.1/24", std::process::id() % 250);
        let ip = |args: &[&str]| {
            Command::new("ip")
                .args(args)
                .status()
                .is_ok_and(|s| s.success())
        };
        if !(ip(&["link", "add", "name", &bridge, "type", "bridge"])
            && ip(&["addr", "add", &subnet, "dev", &bridge])
            && ip(&["link", "set", &bridge, "up"]))
        {
            ip(&["link", "del", &bridge]);
            return skip("could not make a bridge for the second engine (`ip` from iproute2)");
        }
        // An empty config file: the machine's /etc/docker/daemon.json may
        // set a data root, which the flag would then conflict with.
        std::fs::write(dir.path().join("daemon.json"), "{}").unwrap();
        let log = std::fs::File::create(dir.path().join("dockerd.log")).unwrap();
        let child = Command::new(dockerd)
            .arg("--config-file")
            .arg(dir.path().join("daemon.json"))
            .args(["--host", &host])
            .arg("--data-root")
            .arg(dir.path().join("data"))
            .arg("--exec-root")
            .arg(dir.path().join("exec"))
            .arg("--pidfile")
            .arg(dir.path().join("dockerd.pid"))
            .arg(format!("--bridge={bridge}"))
            .args(["--iptables=false", "--ip-masq=false"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let engine = SecondEngine {
            child,
            dir,
            host,
            bridge,
        };
        // Readiness, not a timed assertion: give up after a minute.
        let until = Instant::now() + Duration::from_secs(60);
        while engine
            .docker(&["version", "--format", "{{.Server.Version}}"])
            .is_err()
        {
            if Instant::now() > until {
                panic!(
                    "the second dockerd did not answer at {} within 60s:\n{}",
                    engine.host,
                    std::fs::read_to_string(engine.dir.path().join("dockerd.log"))
                        .unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        engine.build_image();
        Some(engine)
    }

    /// `docker -H <this engine> args…`: stdout, or the error.
    fn docker(&self, args: &[&str]) -> Result<String, String> {
        let o = Command::new("docker")
            .args(["-H", &self.host])
            .args(args)
            .env("DOCKER_BUILDKIT", "0")
            .output()
            .map_err(|e| e.to_string())?;
        if o.status.success() {
            Ok(String::from_utf8_lossy(&o.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&o.stderr).into_owned())
        }
    }

    /// FROM scratch + the static busybox, built on this engine (never pulled).
    fn build_image(&self) {
        let ctx = self.dir.path().join("image");
        std::fs::create_dir_all(ctx.join("bin")).unwrap();
        std::fs::copy("/bin/busybox", ctx.join("bin/busybox"))
            .expect("/bin/busybox (apt-get install busybox-static)");
        for a in APPLETS {
            std::os::unix::fs::symlink("busybox", ctx.join("bin").join(a)).unwrap();
        }
        std::fs::write(ctx.join("Dockerfile"), "FROM scratch\nCOPY bin /bin\n").unwrap();
        self.docker(&["build", "-q", "-t", IMAGE, ctx.to_str().unwrap()])
            .unwrap_or_else(|e| panic!("building {IMAGE} on {}: {e}", self.host));
    }
}

impl Drop for SecondEngine {
    fn drop(&mut self) {
        // Containers first (their volumes too), then the engine, politely.
        if let Ok(ids) = self.docker(&["ps", "-aq"]) {
            for id in ids.split_whitespace() {
                let _ = self.docker(&["rm", "-fv", id]);
            }
        }
        // SAFETY: signalling our own child.
        rascal_exec::exec::os::signal(self.child.id() as i32, libc::SIGTERM);
        let until = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = Command::new("ip")
            .args(["link", "del", &self.bridge])
            .status();
    }
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()? {
        let e = e.ok()?;
        let t = e.file_type().ok()?;
        if t.is_file() && e.file_name() == name {
            return Some(e.path());
        }
        if t.is_dir() && !t.is_symlink() {
            if let Some(f) = find_file(&e.path(), name) {
                return Some(f);
            }
        }
    }
    None
}

const AGENT: &str = r#"set -e
echo "pwd $(pwd)"
grep -qx 'gitdir: /rascal/git' .git && test -f /rascal/git/HEAD && echo "the base snapshot's git came along, beside the workspace"
echo changed >> README.md
rm gone.txt
dd if=/dev/urandom of=big.bin bs=1048576 count=50 2>/dev/null
echo "sum $(sha256sum big.bin)"
printf '#!/bin/sh\necho tool\n' > tool.sh
chmod 755 tool.sh
ln -s README.md link
mkdir -p deep/er
echo deep > deep/er/file.txt
printf '%s\n' 1111111111111111111111111111111111111111 > /rascal/git/HEAD
mkdir -p /rascal/git/hooks
printf '#!/bin/sh\necho pwned > /tmp/pwned\n' > /rascal/git/hooks/post-checkout
rm .git
mkdir -p .git/hooks
printf '#!/bin/sh\necho pwned > /tmp/pwned\n' > .git/hooks/post-checkout
chmod 755 .git/hooks/post-checkout
printf '[core]\n\tfsmonitor = echo pwned\n' >> .git/config
mkdir -p sub
printf 'gitdir: /tmp/evil\n' > sub/.git
mkfifo pipe
printf 'feat: made far away\n' > "$RASCAL_ARTIFACTS_DIR/commit_message.txt"
"#;

#[test]
fn copy_mode_on_a_second_engine_brings_the_change_back_byte_exact_without_a_bind_mount() {
    let Some(engine) = SecondEngine::start() else {
        return;
    };
    let config = format!(
        "launcher: docker\nagents:\n  far: {{ runtime: command, image: \"{IMAGE}\", command: [\"sh\", \"-c\", {}], network: none, keep_containers: true }}\n",
        serde_json::to_string(AGENT).unwrap()
    );
    // The check runs in a container of its own on the uploaded change: it
    // passes only if the tree it got is the agent's.
    // A `where: local` one runs in bubblewrap here instead, on a copy.
    let guard = "guardrails:\n  - { name: sees-the-change, command: \"test -f /.dockerenv && test $(pwd) = /rascal/workspace && test -x tool.sh && test -L link && grep -q changed README.md && test ! -e gone.txt && test -f deep/er/file.txt && echo checked-in-a-container\" }\n  - { name: here, where: local, command: \"test $(pwd) != /rascal/workspace && test -x tool.sh && grep -q changed README.md && echo checked-on-this-machine\" }\n";
    let t = TestRepo::new(&[
        (".rascal/config.yaml", &config),
        (".rascal/guardrails.yaml", guard),
        ("README.md", "hello\n"),
        ("gone.txt", "bye\n"),
    ]);
    let o = Command::new(common::bin())
        .args(["run", "x", "--agent", "far", "--json"])
        .current_dir(t.path())
        .env("NO_COLOR", "1")
        .env("DOCKER_HOST", &engine.host)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
    let c = &doc["candidates"][0];
    let run = doc["run"].as_str().unwrap();
    let log_file = find_file(&t.files(), "agent.log").expect("the agent's log");
    let log = std::fs::read_to_string(&log_file).unwrap();
    for l in log.lines().filter(|l| l.starts_with("rascal: copy mode")) {
        eprintln!("{l}");
    }
    // The executable bit came back (the container's guardrail checks
    // `test -x tool.sh`); without a permissions.yaml it is not judged.
    let local_ok = common::bwrap();
    assert_eq!(
        c["verdict"],
        if local_ok { "pass" } else { "fail" },
        "{c}\n{log}"
    );
    assert!(
        c["reports"].to_string().contains("checked-in-a-container"),
        "{c}"
    );

    // It ran on the second engine, in the copy's working directory.
    assert!(log.contains("pwd /rascal/workspace"), "{log}");
    assert!(
        log.contains("the base snapshot's git came along, beside the workspace"),
        "{log}"
    );
    assert!(log.contains("rascal: copy mode: uploaded "), "{log}");
    assert!(log.contains("rascal: copy mode: downloaded "), "{log}");
    let kept = engine
        .docker(&["ps", "-aq", "--filter", &format!("label=rascal.run={run}")])
        .unwrap();
    let id = kept.split_whitespace().next().expect("the kept container");

    // No bind mount: the engine's own view of the container.
    let binds = engine
        .docker(&["inspect", "--format", "{{json .HostConfig.Binds}}", id])
        .unwrap();
    assert_eq!(binds.trim(), "null", "binds: {binds}");
    let mounts: serde_json::Value = serde_json::from_str(
        &engine
            .docker(&["inspect", "--format", "{{json .Mounts}}", id])
            .unwrap(),
    )
    .unwrap();
    let mounts = mounts.as_array().unwrap();
    assert!(!mounts.is_empty());
    for m in mounts {
        assert_eq!(m["Type"], "volume", "{m}");
        assert_eq!(m["Destination"], "/rascal", "{m}");
    }

    // The change came back byte-exact.
    let ws = PathBuf::from(c["worktree"].as_str().unwrap());
    let big = std::fs::read(ws.join("big.bin")).unwrap();
    assert_eq!(big.len(), 50 << 20);
    let sum = hex::encode(sha2::Sha256::digest(&big));
    assert!(
        log.contains(&format!("sum {sum}  big.bin")),
        "{sum} not in\n{log}"
    );
    let tool = std::fs::metadata(ws.join("tool.sh")).unwrap();
    assert_eq!(tool.permissions().mode() & 0o111, 0o111);
    assert_eq!(
        std::fs::read(ws.join("tool.sh")).unwrap(),
        b"#!/bin/sh\necho tool\n"
    );
    assert_eq!(
        std::fs::read_link(ws.join("link")).unwrap(),
        Path::new("README.md")
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("README.md")).unwrap(),
        "hello\nchanged\n"
    );
    assert!(!ws.join("gone.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("deep/er/file.txt")).unwrap(),
        "deep\n"
    );
    // The change as rascal computed it: created, modified, deleted.
    assert_eq!(c["files_changed"], 6, "{c}");

    // What a hostile container left is refused, said, and not written.
    assert!(!ws.join("pipe").exists());
    assert!(log.contains("refused"), "{log}");
    // The .git directory it made again, and a .git file pointing
    // elsewhere, are refused and listed; its git directory (where its
    // hooks and its own HEAD are) never crossed the wire.
    for refused in [".git/hooks/post-checkout", ".git/config", "sub/.git"] {
        assert!(
            log.contains(&format!(
                "{refused}: a .git entry the container made or changed"
            )),
            "{refused}: {log}"
        );
    }
    assert!(
        log.contains("(/rascal/git) was not downloaded: the host keeps its own .git (the workspace's .git pointer was gone or changed)"),
        "{log}"
    );
    assert!(!log.contains("refused workspace/.git/HEAD"), "{log}");
    assert!(!log.contains("/rascal/git/hooks"), "{log}");
    assert!(
        log.contains("the agent's HEAD in the container is 1111111111111111111111111111111111111111, not the base"),
        "{log}"
    );
    assert!(log.contains("FIFO"), "{log}");
    assert!(ws.join(".git").is_dir(), "the host's .git is kept");
    assert!(!ws.join(".git/hooks/post-checkout").exists());
    assert!(!ws.join("sub/.git").exists());
    let git_config = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    assert!(!git_config.contains("fsmonitor"), "{git_config}");
    // The host's HEAD is still the base: the change is computed against it.
    let host = git2::Repository::open(&ws).unwrap();
    assert_eq!(
        host.head().unwrap().target().unwrap(),
        t.head(),
        "the host's HEAD moved"
    );

    // The artifacts came back too, outside the workspace.
    let msg = find_file(&t.files(), "commit_message.txt").expect("the artifact came back");
    assert!(!msg.starts_with(&ws));
    assert_eq!(
        std::fs::read_to_string(msg).unwrap(),
        "feat: made far away\n"
    );

    // Nothing of this run is on the local engine.
    let local = Command::new("docker")
        .args(["ps", "-aq", "--filter", &format!("label=rascal.run={run}")])
        .env_remove("DOCKER_HOST")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&local.stdout).trim(), "");
}
