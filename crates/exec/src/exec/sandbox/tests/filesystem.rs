//! What a sandboxed command sees of the host and may write, each checked by
//! running bwrap.

use super::*;

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

/// `find` over the sandbox's whole filesystem (not following links,
/// skipping /proc and /sys), printing every socket. Each entry is
/// `stat`ed: `find -type s` trusts the directory entry's type, which
/// for a socket bound onto a mount point is the placeholder's (a file).
const SOCKET_WALK: &str = "find / \\( -path /proc -o -path /sys \\) -prune -o -print0 2>/dev/null \
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
