//! Every sandbox hides host sockets (an allowlist, not a blocklist) and has limits on processes and memory.

#[allow(unused_imports)]
use super::*;

/// A shell line that walks the sandbox's whole filesystem from `/` (not
/// following links, skipping /proc and /sys) and prints `SOCKET:<path>`
/// for each socket, then `WALKED`; and `ABSTRACT:<name>` for each abstract
/// socket it can see whose name has `needle`. Each entry is `stat`ed:
/// `find -type s` trusts the directory entry's type, which for a socket
/// bound onto a mount point is the placeholder's (a file).
fn socket_walk(needle: &str) -> String {
    format!(
        "find / \\( -path /proc -o -path /sys \\) -prune -o -print0 2>/dev/null | xargs -0 stat -c '%F|%n' 2>/dev/null | sed -n 's/^socket|/SOCKET:/p'; \
         grep -o '@[^ ]*{needle}[^ ]*' /proc/net/unix | sed 's/^/ABSTRACT:/'; echo WALKED"
    )
}

/// Host sockets a sandbox must not see: one in the host's /tmp, one in
/// /var/tmp, one in /run, and an abstract one. Kept listening while alive.
struct HostSockets {
    paths: Vec<PathBuf>,
    _listeners: Vec<std::os::unix::net::UnixListener>,
    _abstract: std::os::unix::net::UnixListener,
}

impl HostSockets {
    fn new(m: &str) -> HostSockets {
        use std::os::linux::net::SocketAddrExt;
        let dir = PathBuf::from("/var/tmp").join(m);
        std::fs::create_dir_all(&dir).unwrap();
        let mut paths = vec![
            PathBuf::from("/tmp").join(format!("{m}.sock")),
            dir.join("s.sock"),
        ];
        if std::fs::metadata("/run").is_ok_and(|d| !d.permissions().readonly()) {
            paths.push(PathBuf::from("/run").join(format!("{m}.sock")));
        }
        let mut listeners = Vec::new();
        paths.retain(|p| match std::os::unix::net::UnixListener::bind(p) {
            Ok(l) => {
                listeners.push(l);
                true
            }
            Err(_) => false,
        });
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(m.as_bytes()).unwrap();
        let abs = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
        HostSockets {
            paths,
            _listeners: listeners,
            _abstract: abs,
        }
    }
}

impl Drop for HostSockets {
    fn drop(&mut self) {
        for p in &self.paths {
            let _ = std::fs::remove_file(p);
        }
        if let Some(dir) = self.paths.get(1).and_then(|p| p.parent()) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The walk found nothing: it ran to the end and printed no socket.
fn assert_no_socket(what: &str, text: &str) {
    assert!(
        text.contains("WALKED"),
        "the {what}'s walk did not run: {text}"
    );
    assert!(
        !text.contains("SOCKET:") && !text.contains("ABSTRACT:"),
        "the {what} saw host sockets: {text}"
    );
}

#[test]
fn no_host_socket_is_visible_to_an_agent_its_checks_or_its_reviewer() {
    if !bwrap() {
        return;
    }
    let m = marker("sock");
    let host = HostSockets::new(&m);
    // Control: the host has these sockets (and this machine's engines'),
    // and the walk finds them outside a sandbox.
    let outside = Command::new("sh")
        .args(["-c", &socket_walk(&m)])
        .output()
        .unwrap();
    let outside = stdout(&outside);
    for p in &host.paths {
        assert!(
            outside.contains(&format!("SOCKET:{}", p.display())),
            "{outside}"
        );
    }
    assert!(outside.contains(&format!("ABSTRACT:@{m}")), "{outside}");
    let walk = socket_walk(&m);
    // The agent keeps what it found in its change; the guardrail prints it;
    // the reviewer says it in its one issue.
    let agent = format!("({walk}) > found.txt; echo 'pub fn two() {{}}' >> src/lib.rs");
    let reviewer = format!(
        "found=$( ({walk}) | tr '\\n' ' '); printf '{{\"nonce\": \"%s\", \"verdict\": \"approve\", \"issues\": [{{\"severity\": \"minor\", \"location\": \"src/lib.rs:1\", \"description\": \"walk: %s\"}}]}}\\n' \"$RASCAL_REVIEW_NONCE\" \"$found\""
    );
    let t = repo(
        |_| common::command_agents(&[("walker", &agent), ("rev", &reviewer)]),
        &format!(
            "guardrails:\n  - {{ name: walk, command: {}, timeout: 60s }}\n",
            serde_json::to_string(&walk).unwrap()
        ),
    );
    t.write(".rascal/verification.yaml", "review:\n  reviewers: [rev]\n");
    t.commit_all("review");
    let o = run(&t, "walker", &[]);
    let doc = json(&o);
    let c = &doc["candidates"][0];
    let ws = PathBuf::from(c["worktree"].as_str().unwrap());
    let found = std::fs::read_to_string(ws.join("found.txt")).unwrap_or_default();
    assert_no_socket("agent", &found);
    let reports = c["reports"].to_string();
    let guardrail = c["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"].as_str().is_some_and(|s| s.contains("walk")))
        .unwrap_or_else(|| panic!("no guardrail report: {reports}"))
        .to_string();
    assert_no_socket("guardrail", &guardrail);
    assert!(reports.contains("walk: "), "the reviewer ran: {reports}");
    let review = &reports[reports.find("walk: ").unwrap()..];
    assert_no_socket("reviewer", review);
}

/// Whether this machine gives sandboxes cgroups (else the limit tests are
/// skipped, unless RASCAL_REQUIRE_CGROUPS is set).
fn cgroups() -> bool {
    let m = rascal_exec::exec::limits::mechanism();
    if m.is_cgroup() {
        return true;
    }
    common::skip("RASCAL_REQUIRE_CGROUPS", &m.describe());
    false
}

/// One agent with `limits`, its script, and a 120 s timeout; the run's
/// JSON and how long it took.
fn limited(script: &str, limits: &str) -> (serde_json::Value, Duration) {
    limited_with(script, limits, &[])
}

fn limited_with(script: &str, limits: &str, env: &[(&str, &str)]) -> (serde_json::Value, Duration) {
    let t = repo(
        |_| {
            format!(
                "agents:\n  hog: {{ runtime: command, command: [\"sh\", \"-c\", {}], timeout: 120s, limits: {limits} }}\n",
                serde_json::to_string(script).unwrap()
            )
        },
        "guardrails: []\n",
    );
    let started = Instant::now();
    let o = run(&t, "hog", env);
    let took = started.elapsed();
    (json(&o), took)
}

#[test]
fn a_fork_loop_stops_at_the_process_limit_and_says_so() {
    if !bwrap() || !cgroups() {
        return;
    }
    // 1,000 sleeping processes at once, unless something stops it.
    let script = "echo 'pub fn two() {}' >> src/lib.rs; i=0; while [ $i -lt 1000 ]; do sleep 30 & i=$((i+1)); done; wait";
    let (doc, took) = limited(script, "{ pids: 64 }");
    let reports = doc["candidates"][0]["reports"].to_string();
    assert!(
        reports.contains("agent/limit: 64 processes"),
        "no limit in the report: {reports}"
    );
    assert!(took < Duration::from_secs(100), "the run took {took:?}");
}

/// The limits and the reaper believe the cgroup: could the agent's own
/// code leave it, or plant a cgroup named like a rascal's for a sweep to
/// act on? It tries both (every `cgroup.procs` it can see, a `mkdir` in
/// every hierarchy), then forks past the limit: the limit still holds, and
/// nothing it named exists on the host.
#[test]
fn an_agent_can_neither_leave_its_cgroup_nor_plant_one() {
    if !bwrap() || !cgroups() {
        return;
    }
    let planted = format!("rascal-1-1-1-{}", std::process::id());
    let script = format!(
        "echo 'pub fn two() {{}}' >> src/lib.rs; \
         for f in $(find /sys/fs/cgroup -name cgroup.procs 2>/dev/null); do echo $$ > $f 2>/dev/null; done; \
         for d in /sys/fs/cgroup /sys/fs/cgroup/*; do mkdir $d/{planted} 2>/dev/null; done; \
         i=0; while [ $i -lt 1000 ]; do sleep 30 & i=$((i+1)); done; wait"
    );
    let (doc, took) = limited(&script, "{ pids: 64 }");
    let reports = doc["candidates"][0]["reports"].to_string();
    assert!(
        reports.contains("agent/limit: 64 processes"),
        "the agent left its cgroup: {reports}"
    );
    assert!(took < Duration::from_secs(100), "the run took {took:?}");
    let found: Vec<String> = std::fs::read_dir("/sys/fs/cgroup")
        .unwrap()
        .flatten()
        .map(|h| h.path().join(&planted))
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    assert!(found.is_empty(), "the agent planted cgroups: {found:?}");
}

#[test]
fn a_memory_hog_stops_at_the_memory_limit_and_says_so() {
    if !bwrap() || !cgroups() {
        return;
    }
    // `tail` keeps the last lines whole: 300 MiB without a newline.
    let script = "echo 'pub fn two() {}' >> src/lib.rs; head -c 314572800 /dev/zero | tail | wc -c";
    let (doc, took) = limited(script, "{ memory: 64m }");
    let reports = doc["candidates"][0]["reports"].to_string();
    assert!(
        reports.contains("agent/limit: memory 64 MiB"),
        "no limit in the report: {reports}"
    );
    assert!(took < Duration::from_secs(100), "the run took {took:?}");
}

#[test]
fn the_private_tmp_holds_no_more_than_the_memory_limit() {
    if !bwrap() {
        return;
    }
    tmp_is_bounded(&[]);
}

/// Without cgroups (forced here) the private /tmp is still bounded: it is
/// a tmpfs of the memory limit's size.
#[test]
fn the_private_tmp_is_bounded_under_the_rlimit_fallback_too() {
    if !bwrap() {
        return;
    }
    if !rascal_exec::exec::sandbox::knows_size() {
        common::skip(
            "RASCAL_REQUIRE_SANDBOX_TOOLS",
            "this bwrap has no --size (bubblewrap 0.8 or later has it)",
        );
        return;
    }
    tmp_is_bounded(&[("RASCAL_LIMITS", "rlimit")]);
}

fn tmp_is_bounded(env: &[(&str, &str)]) {
    // 200 MiB into /tmp; what landed is kept in the change.
    let script = "head -c 209715200 /dev/zero > /tmp/fill 2>/dev/null; wc -c < /tmp/fill > tmp-size.txt; echo 'pub fn two() {}' >> src/lib.rs";
    let (doc, took) = limited_with(script, "{ memory: 64m }", env);
    let c = &doc["candidates"][0];
    let reports = c["reports"].to_string();
    // Stopped for memory, or the tmpfs was full at 64 MiB.
    if !reports.contains("agent/limit: memory 64 MiB") {
        let ws = PathBuf::from(c["worktree"].as_str().unwrap());
        let size: u64 = std::fs::read_to_string(ws.join("tmp-size.txt"))
            .unwrap_or_else(|e| panic!("{e}: {reports}"))
            .trim()
            .parse()
            .unwrap();
        assert!(size <= 64 << 20, "/tmp held {size} bytes");
    }
    assert!(took < Duration::from_secs(100), "the run took {took:?}");
}

#[test]
fn a_guardrail_over_its_process_limit_fails_with_the_reason() {
    if !bwrap() || !cgroups() {
        return;
    }
    let t = repo(
        |_| {
            "agents:\n  ok: { runtime: command, command: [\"sh\", \"-c\", \"echo 'pub fn two() {}' >> src/lib.rs\"], limits: { pids: 32 } }\n".to_string()
        },
        "guardrails:\n  - { name: forks, command: \"i=0; while [ $i -lt 500 ]; do sleep 30 & i=$((i+1)); done; wait\", timeout: 120s }\n",
    );
    let started = Instant::now();
    let o = run(&t, "ok", &[]);
    let doc = json(&o);
    let reports = doc["candidates"][0]["reports"].to_string();
    assert!(
        reports.contains("32 processes"),
        "no limit in the guardrail's report: {reports}"
    );
    assert!(started.elapsed() < Duration::from_secs(100));
}
