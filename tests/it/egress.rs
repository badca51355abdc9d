//! Network egress on this machine: rascal's proxy with two test servers on
//! 127.0.0.1 (one allowlisted by name through a pinned test resolver, one
//! not), and a busybox container agent on the run's internal network that
//! (a) reaches the allowed server through the proxy, (b) is refused the
//! other, (c) cannot connect directly to a server container the test
//! started on another network, and (d) is refused a literal private
//! address before the proxy opens any socket. All test traffic stays on
//! loopback or on networks and containers this test created.

use crate::common;
use rascal_core::config::network::NetworkSetting;
use rascal_core::config::{AgentConfig, RuntimeKind};
use rascal_exec::egress::policy::Allowlist;
use rascal_exec::egress::proxy::{PinnedResolver, Proxy, Resolve, Resolved, Rules, Sink};
use rascal_exec::exec::launch::docker::DockerLauncher;
use rascal_exec::exec::launch::{LaunchSpec, Launcher};
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A tiny HTTP server on 127.0.0.1 that answers every request with `body`
/// and counts the connections it got.
struct TestServer {
    port: u16,
    hits: Arc<AtomicU64>,
}

/// The shell function `say REQUEST` of the probe scripts: REQUEST sent to
/// `target` with busybox (`bb`) nc, and whatever came back. nc's input is
/// held open until the reply's connection closes (every server and refusal
/// here closes it), not for a fixed time: a slow reply is never cut short.
/// After 30 s it gives up, saying so.
fn say_fn(bb: &str, target: &str) -> String {
    format!(
        r#"say() {{ d=$({bb} mktemp -d); {bb} mkfifo $d/in; {bb} nc -w 5 {target} < $d/in > $d/out 2>&1 & n=$!; (printf "$1"; i=0; while kill -0 $n 2>/dev/null; do i=$((i+1)); [ $i -gt 300 ] && {{ echo "say: no reply closed within 30 s" >&2; break; }}; {bb} sleep 0.1; done) > $d/in; wait $n; {bb} cat $d/out; {bb} rm -rf $d; echo; }}"#
    )
}

fn test_server(body: &'static str) -> TestServer {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let hits = Arc::new(AtomicU64::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut c) = conn else { continue };
            h.fetch_add(1, Ordering::SeqCst);
            let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
            let mut buf = Vec::new();
            let mut b = [0u8; 1024];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                match c.read(&mut b) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&b[..n]),
                }
            }
            let _ = write!(
                c,
                "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
        }
    });
    TestServer { port, hits }
}

fn pinned(names: &[&str]) -> Arc<PinnedResolver> {
    Arc::new(PinnedResolver(
        names
            .iter()
            .map(|n| (n.to_string(), vec!["127.0.0.1".parse::<IpAddr>().unwrap()]))
            .collect(),
    ))
}

/// A resolver that answers like real DNS would for a name pointing at
/// loopback (not pinned): the proxy must refuse it.
struct RebindingDns;
impl Resolve for RebindingDns {
    fn resolve<'a>(
        &'a self,
        _host: &'a str,
        _port: u16,
    ) -> futures::future::BoxFuture<'a, Result<Resolved, rascal_exec::Error>> {
        Box::pin(async {
            Ok(Resolved {
                addrs: vec!["127.0.0.1".parse().unwrap()],
                pinned: false,
            })
        })
    }
}

fn collecting_sink() -> (Sink, Arc<Mutex<Vec<String>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let l = lines.clone();
    (Arc::new(move |t: String| l.lock().unwrap().push(t)), lines)
}

async fn ask(proxy: SocketAddr, request: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(proxy).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn the_proxy_tunnels_allowed_names_and_refuses_everything_else_before_connecting() {
    let allowed = test_server("allowed-server");
    let secret = test_server("secret-server");
    let rt = rt();
    rt.block_on(async {
        let (sink, lines) = collecting_sink();
        let rules = Rules {
            allow: Allowlist::new(&[format!("allowed.test:{}", allowed.port)]).unwrap(),
            resolver: pinned(&["allowed.test", "secret.test"]),
            sink,
            judge_within: rascal_exec::egress::proxy::JUDGE_WITHIN,
        };
        let proxy = Proxy::bind("127.0.0.1:0".parse().unwrap(), rules, false)
            .await
            .unwrap();
        // (a) CONNECT, then HTTP inside the tunnel; and plain-HTTP forwarding.
        let a = ask(
            proxy.addr,
            &format!(
                "CONNECT allowed.test:{} HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n",
                allowed.port
            ),
        )
        .await;
        assert!(a.starts_with("HTTP/1.1 200"), "{a}");
        assert!(a.ends_with("allowed-server"), "{a}");
        let a = ask(
            proxy.addr,
            &format!(
                "GET http://allowed.test:{}/x HTTP/1.0\r\nProxy-Authorization: Basic eA==\r\n\r\n",
                allowed.port
            ),
        )
        .await;
        assert!(a.ends_with("allowed-server"), "{a}");
        let before = proxy.counts();
        assert_eq!((before.allowed, before.sockets), (2, 2));
        // (b) the other server, by name, on the wrong port, by plain HTTP.
        for req in [
            format!("CONNECT secret.test:{} HTTP/1.1\r\n\r\n", secret.port),
            format!("CONNECT allowed.test:{} HTTP/1.1\r\n\r\n", secret.port),
            format!("GET http://secret.test:{}/ HTTP/1.1\r\n\r\n", secret.port),
        ] {
            let r = ask(proxy.addr, &req).await;
            assert!(r.starts_with("HTTP/1.1 403"), "{req}: {r}");
        }
        // (d) literal private and loopback addresses, and disguised ones.
        for req in [
            "CONNECT 10.1.2.3:443 HTTP/1.1\r\n\r\n".to_string(),
            format!("CONNECT 127.0.0.1:{} HTTP/1.1\r\n\r\n", secret.port),
            format!(
                "CONNECT [::ffff:127.0.0.1]:{} HTTP/1.1\r\n\r\n",
                secret.port
            ),
            format!("CONNECT 2130706433:{} HTTP/1.1\r\n\r\n", secret.port),
            "CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n".to_string(),
        ] {
            let r = ask(proxy.addr, &req).await;
            assert!(
                r.starts_with("HTTP/1.1 403") || r.starts_with("HTTP/1.1 400"),
                "{req}: {r}"
            );
        }
        let after = proxy.counts();
        assert_eq!(
            after.sockets, before.sockets,
            "a refused request opened no socket"
        );
        assert_eq!(
            after.lookups, before.lookups,
            "a refused name was not even resolved"
        );
        assert_eq!(after.refused, 8);
        assert_eq!(secret.hits.load(Ordering::SeqCst), 0);
        let log = lines.lock().unwrap().join("\n");
        println!("{log}");
        assert!(log.contains(&format!(
            "rascal: network: refused secret.test:{}: not on the allowlist",
            secret.port
        )));
        assert!(log.contains(
            "rascal: network: refused 10.1.2.3:443: an IP address that the allowlist does not name"
        ));
        assert!(log.contains(&format!(
            "rascal: network: allowed allowed.test:{} (127.0.0.1:",
            allowed.port
        )));
    });
}

#[test]
fn a_name_that_real_dns_points_at_a_private_address_is_refused() {
    let allowed = test_server("allowed-server");
    let rt = rt();
    rt.block_on(async {
        let (sink, lines) = collecting_sink();
        let rules = Rules {
            allow: Allowlist::new(&[format!("rebind.test:{}", allowed.port)]).unwrap(),
            resolver: Arc::new(RebindingDns),
            sink,
            judge_within: rascal_exec::egress::proxy::JUDGE_WITHIN,
        };
        let proxy = Proxy::bind("127.0.0.1:0".parse().unwrap(), rules, false)
            .await
            .unwrap();
        let r = ask(
            proxy.addr,
            &format!("CONNECT rebind.test:{} HTTP/1.1\r\n\r\n", allowed.port),
        )
        .await;
        assert!(r.starts_with("HTTP/1.1 403"), "{r}");
        assert_eq!(proxy.counts().sockets, 0);
        assert_eq!(allowed.hits.load(Ordering::SeqCst), 0);
        assert!(lines.lock().unwrap()[0].contains("resolves to 127.0.0.1, a non-public address"));
    });
}

#[test]
fn only_the_candidates_own_address_is_served() {
    let allowed = test_server("allowed-server");
    let rt = rt();
    rt.block_on(async {
        let (sink, _) = collecting_sink();
        let rules = Rules {
            allow: Allowlist::new(&[format!("allowed.test:{}", allowed.port)]).unwrap(),
            resolver: pinned(&["allowed.test"]),
            sink,
            judge_within: rascal_exec::egress::proxy::JUDGE_WITHIN,
        };
        let proxy = Proxy::bind("127.0.0.1:0".parse().unwrap(), rules, true)
            .await
            .unwrap();
        // Another candidate's address: this one (127.0.0.1) is dropped.
        proxy.set_peer("127.0.0.2".parse().unwrap());
        let r = ask(
            proxy.addr,
            &format!("CONNECT allowed.test:{} HTTP/1.1\r\n\r\n", allowed.port),
        )
        .await;
        assert_eq!(r, "");
        let c = proxy.counts();
        assert_eq!((c.foreign, c.sockets, c.allowed), (1, 0, 0));
    });
}

/// The docker case: a busybox agent on the run's internal network.
#[test]
fn a_container_agent_reaches_only_its_allowlist() {
    let Some(e) = common::docker::engine() else {
        return;
    };
    let allowed = test_server("allowed-server");
    let secret = test_server("secret-server");
    let tag = format!("{}-{}", std::process::id(), allowed.port);
    let run = format!("r-egress-{tag}");
    // (c)'s target: a server container on a network of the test's own.
    let other_net = format!("rascal-egress-test-{tag}");
    let docker = e.docker.clone();
    e.rt.block_on(async {
        docker
            .create_network(bollard::models::NetworkCreateRequest {
                name: other_net.clone(),
                internal: Some(true),
                ..Default::default()
            })
            .await
            .unwrap();
    });
    let server_name = format!("rascal-egress-test-server-{tag}");
    let server_ip = e.rt.block_on(async {
        let body = bollard::models::ContainerCreateBody {
            image: Some(common::docker::IMAGE.into()),
            entrypoint: Some(vec!["/bin/busybox".into()]),
            cmd: Some(vec![
                "nc".into(),
                "-ll".into(),
                "-p".into(),
                "8080".into(),
                "-e".into(),
                "/bin/echo".into(),
                "server-container".into(),
            ]),
            host_config: Some(bollard::models::HostConfig {
                network_mode: Some(other_net.clone()),
                ..Default::default()
            }),
            ..Default::default()
        };
        docker
            .create_container(
                Some(
                    bollard::query_parameters::CreateContainerOptionsBuilder::default()
                        .name(&server_name)
                        .build(),
                ),
                body,
            )
            .await
            .unwrap();
        docker.start_container(&server_name, None).await.unwrap();
        rascal_exec::egress::network::container_ip(&docker, &server_name, &other_net)
            .await
            .expect("the server container has an address")
    });

    let script = format!(
        r#"
p=${{HTTPS_PROXY#http://}}; h=${{p%:*}}; port=${{p##*:}}
echo "proxy=$HTTPS_PROXY"
{say}
echo "A-http: $(say 'GET http://allowed.test:{pa}/ HTTP/1.0\r\n\r\n' | tail -1)"
echo "A-connect: $(say 'CONNECT allowed.test:{pa} HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n' | tail -1)"
echo "B: $(say 'CONNECT secret.test:{pb} HTTP/1.1\r\n\r\n' | head -1)"
busybox nc -w 3 {server} 8080 </dev/null; echo "C: direct-rc=$?"
echo "D: $(say 'CONNECT 10.1.2.3:443 HTTP/1.1\r\n\r\n' | head -1)"
"#,
        say = say_fn("busybox", "$h $port"),
        pa = allowed.port,
        pb = secret.port,
        server = server_ip,
    );
    let (_work, agent, spec) = busybox_spec(
        &run,
        &format!(
            "{{ allow: [\"allowed.test:{}\"], on_refused: warn }}",
            allowed.port
        ),
        vec!["/bin/busybox".into(), "sh".into(), "-c".into(), script],
        90,
    );
    let launcher = DockerLauncher::with_resolver(pinned(&["allowed.test", "secret.test"]));
    let (exit, log) = e.rt.block_on(run_collecting(&launcher, spec));
    let exit = exit.unwrap();
    let log = log.join("\n");
    println!("{log}");
    let summary = launcher
        .network(&run, "agent-1")
        .expect("a network summary");
    let net_name = rascal_exec::egress::network::network_name(&run);
    let internal =
        e.rt.block_on(docker.inspect_network(&net_name, None))
            .unwrap();
    let hc =
        e.rt.block_on(docker.inspect_container(
            &rascal_exec::exec::launch::docker::container_name(&run, "agent-1"),
            None,
        ))
        .unwrap()
        .host_config
        .unwrap();
    e.rt.block_on(launcher.release(&run, "agent-1", &agent));
    let gone =
        e.rt.block_on(docker.inspect_network(&net_name, None))
            .is_err();
    // Positive control for (c): from a container on the server's own
    // network, the same `nc` line reaches the server (so a failing `nc` in
    // the agent means no way there, not a broken probe).
    let control = e.rt.block_on(probe_container(
        &docker,
        &format!("rascal-egress-test-control-{tag}"),
        &other_net,
        &[],
        &format!("busybox nc -w 3 {server_ip} 8080 </dev/null; echo \"C-control: rc=$?\""),
    ));
    e.rt.block_on(async {
        let _ = rascal_exec::exec::launch::docker::remove(&docker, &server_name).await;
        let _ = docker.remove_network(&other_net).await;
    });
    assert!(
        control.contains("server-container") && control.contains("C-control: rc=0"),
        "the control reaches the server: {control}"
    );
    assert!(
        !log.contains("server-container"),
        "(c) the agent reached the server container\n{log}"
    );

    assert_eq!(exit.code, Some(0), "{log}");
    assert_eq!(internal.internal, Some(true));
    assert_eq!(hc.network_mode.as_deref(), Some(net_name.as_str()));
    let gateway = internal.ipam.clone().unwrap().config.unwrap()[0]
        .gateway
        .clone()
        .unwrap();
    assert_eq!(
        hc.dns,
        Some(vec![gateway.clone()]),
        "no DNS server that answers"
    );
    assert!(log.contains(&format!("proxy=http://{gateway}:")), "{log}");
    assert_eq!(
        rascal_exec::egress::network::LABEL_RUN,
        rascal_exec::exec::launch::docker::LABEL_RUN
    );
    assert_eq!(
        rascal_exec::egress::network::LABEL_REPO,
        rascal_exec::exec::launch::docker::LABEL_REPO
    );
    assert_eq!(
        internal
            .options
            .unwrap_or_default()
            .get("com.docker.network.bridge.enable_icc")
            .map(String::as_str),
        Some("false")
    );
    assert_table(&log, &secret);
    assert!(log.contains(&format!(
        "rascal: network: refused secret.test:{}: not on the allowlist",
        secret.port
    )));
    assert!(log.contains(
        "rascal: network: refused 10.1.2.3:443: an IP address that the allowlist does not name"
    ));
    assert_eq!(summary.mode, "allowlist");
    assert_eq!(
        summary.allow,
        vec![format!("allowed.test:{}", allowed.port)]
    );
    assert_eq!(summary.refused, 2, "{summary:?}");
    assert_eq!(summary.allowed, 2, "{summary:?}");
    assert_eq!(
        summary.opened, summary.allowed,
        "(d) no socket for a refused request"
    );
    assert!(gone, "the run's network is removed with its last candidate");
}

/// The bubblewrap case: the agent's sandbox has only its own loopback;
/// rascal's forwarder inside it relays 127.0.0.1:3128 to the proxy's unix
/// socket. (c) here: a direct connection to the test's server on the
/// host's loopback fails (the sandbox's loopback is its own).
#[test]
fn a_sandboxed_agent_reaches_only_its_allowlist() {
    if !common::bwrap() {
        return;
    }
    let allowed = test_server("allowed-server");
    let secret = test_server("secret-server");
    let busybox = "/bin/busybox";
    let script = format!(
        r#"
echo "proxy=$HTTPS_PROXY"
{say}
echo "A-http: $(say 'GET http://allowed.test:{pa}/ HTTP/1.0\r\n\r\n' | {bb} tail -1)"
echo "A-connect: $(say 'CONNECT allowed.test:{pa} HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n' | {bb} tail -1)"
echo "B: $(say 'CONNECT secret.test:{pb} HTTP/1.1\r\n\r\n' | {bb} head -1)"
{bb} nc -w 3 127.0.0.1 {pb} </dev/null; echo "C: direct-rc=$?"
echo "D: $(say 'CONNECT 10.1.2.3:443 HTTP/1.1\r\n\r\n' | {bb} head -1)"
"#,
        say = say_fn(busybox, "127.0.0.1 3128"),
        bb = busybox,
        pa = allowed.port,
        pb = secret.port,
    );
    let mut agent = AgentConfig::new(RuntimeKind::Command);
    agent.command = vec![busybox.into()];
    agent.network = Some(
        serde_yaml::from_str::<NetworkSetting>(&format!(
            "{{ allow: [\"allowed.test:{}\"], on_refused: fail }}",
            allowed.port
        ))
        .unwrap(),
    );
    let work = tempfile::tempdir().unwrap();
    let confine = rascal_exec::exec::confine::Confinement {
        workspace: work.path().to_path_buf(),
        writable: vec![],
        hide: vec![],
        read_only: vec![],
        network: false,
        limits: Default::default(),
    };
    let spec = LaunchSpec {
        run: "r-egress".into(),
        candidate: "agent-1".into(),
        workdir: work.path().to_path_buf(),
        argv: vec![busybox.into(), "sh".into(), "-c".into(), script],
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        stdin: None,
        timeout: Duration::from_secs(60),
        image: None,
        agent: Some(agent),
        repo: work.path().to_path_buf(),
        resume: None,
        confine: Some(confine),
        upload: None,
    };
    let launcher = rascal_exec::exec::launch::process::ProcessLauncher::with_egress(
        rascal_exec::exec::launch::egress::ProcessEgress::new(
            pinned(&["allowed.test", "secret.test"]),
            env!("CARGO_BIN_EXE_rascal").into(),
        ),
    );
    let (exit, log) = rt().block_on(run_collecting(&launcher, spec));
    let exit = exit.unwrap();
    let log = log.join("\n");
    println!("{log}");
    let summary = launcher
        .network("r-egress", "agent-1")
        .expect("a network summary");
    assert_eq!(exit.code, Some(0), "{log}");
    assert!(log.contains("proxy=http://127.0.0.1:3128"), "{log}");
    assert_table(&log, &secret);
    assert!(log.contains(
        "rascal: network: refused 10.1.2.3:443: an IP address that the allowlist does not name"
    ));
    assert_eq!((summary.allowed, summary.refused), (2, 2), "{summary:?}");
    assert_eq!(
        summary.opened, summary.allowed,
        "(d) no socket for a refused request"
    );
    assert_eq!(
        summary.on_refused,
        rascal_core::config::network::OnRefused::Fail
    );
}

#[test]
fn an_unsandboxed_agent_with_an_allowlist_does_not_start() {
    let mut agent = AgentConfig::new(RuntimeKind::Command);
    agent.command = vec!["true".into()];
    agent.network = Some(serde_yaml::from_str::<NetworkSetting>("{ allow: [a.example] }").unwrap());
    let work = tempfile::tempdir().unwrap();
    let spec = LaunchSpec {
        run: "r".into(),
        candidate: "c".into(),
        workdir: work.path().to_path_buf(),
        argv: vec!["true".into()],
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        stdin: None,
        timeout: Duration::from_secs(10),
        image: None,
        agent: Some(agent),
        repo: work.path().to_path_buf(),
        resume: None,
        confine: None,
        upload: None,
    };
    let (tx, _rx) = rascal_exec::exec::runner::log_channel();
    let e = rt()
        .block_on(
            rascal_exec::exec::launch::process::ProcessLauncher::default().run(
                spec,
                tx,
                tokio_util::sync::CancellationToken::new(),
            ),
        )
        .unwrap_err();
    assert!(e.to_string().contains("runs unsandboxed"), "{e}");
}

/// Run the launcher to its end, reading its log lines as they come (the
/// queue is bounded: a reader that waits for the end would stall it).
async fn run_collecting(
    launcher: &dyn rascal_exec::exec::launch::Launcher,
    spec: rascal_exec::exec::launch::LaunchSpec,
) -> (
    Result<rascal_exec::exec::runner::Exit, rascal_exec::exec::launch::LaunchError>,
    Vec<String>,
) {
    let (tx, mut rx) = rascal_exec::exec::runner::log_channel();
    let collect = tokio::spawn(async move {
        let mut log = Vec::new();
        while let Some(batch) = rx.recv().await {
            log.extend(batch.into_iter().map(|l| l.text));
        }
        log
    });
    let exit = launcher
        .run(spec, tx, tokio_util::sync::CancellationToken::new())
        .await;
    (exit, collect.await.unwrap_or_default())
}

/// The table a–d in an agent's log: (a) the allowed server reached through
/// the proxy, by plain HTTP and by CONNECT; (b) the other one refused, and
/// it saw nothing; (c) a direct connection fails; (d) a literal private
/// address refused by the proxy.
fn assert_table(log: &str, secret: &TestServer) {
    assert!(
        log.contains("A-http: allowed-server"),
        "(a) plain HTTP through the proxy\n{log}"
    );
    assert!(
        log.contains("A-connect: allowed-server"),
        "(a) CONNECT tunnel\n{log}"
    );
    assert!(log.contains("B: HTTP/1.1 403"), "(b)\n{log}");
    assert_eq!(
        secret.hits.load(Ordering::SeqCst),
        0,
        "(b, c) the refused server saw nothing"
    );
    assert!(
        log.lines()
            .any(|l| l.starts_with("C: direct-rc=") && !l.ends_with("=0")),
        "(c) a direct connection fails\n{log}"
    );
    assert!(log.contains("D: HTTP/1.1 403"), "(d)\n{log}");
}

// ---------------------------------------------------------------------
// The host firewall: the run's internal network reaches nothing on the
// host but the candidate's proxy.

/// A listener on the host that counts what reaches it (TCP connections or
/// UDP datagrams), on every address (`0.0.0.0` or `[::]`).
struct HostListener {
    port: u16,
    hits: Arc<AtomicU64>,
}

fn host_tcp(bind: &str) -> HostListener {
    let l = TcpListener::bind(bind).unwrap();
    let port = l.local_addr().unwrap().port();
    let hits = Arc::new(AtomicU64::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            h.fetch_add(1, Ordering::SeqCst);
            drop(c);
        }
    });
    HostListener { port, hits }
}

fn host_udp() -> HostListener {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
    let port = s.local_addr().unwrap().port();
    let hits = Arc::new(AtomicU64::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        let mut b = [0u8; 2048];
        while s.recv_from(&mut b).is_ok() {
            h.fetch_add(1, Ordering::SeqCst);
        }
    });
    HostListener { port, hits }
}

/// `iptables -S` (or `ip6tables -S`): the whole filter table.
fn rules(program: &str) -> String {
    let o = std::process::Command::new(program)
        .args(["-w", "-S"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{program} -S: {:?}", o);
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Whether this machine can run the firewall tests (root with iptables):
/// otherwise they skip, saying why, unless RASCAL_REQUIRE_DOCKER is set.
fn firewall_here() -> bool {
    match rascal_exec::exec::runtime()
        .unwrap()
        .block_on(rascal_exec::egress::firewall::Firewall::default().probe())
    {
        Ok(_) => true,
        Err(e) => {
            common::skip(
                "RASCAL_REQUIRE_DOCKER",
                &format!("the host firewall cannot be installed: {e}"),
            );
            false
        }
    }
}

/// Run a container of the test's own (busybox `sh -c script`) on
/// `network` with `sysctls`; its output once it ended.
async fn probe_container(
    docker: &bollard::Docker,
    name: &str,
    network: &str,
    sysctls: &[(&str, &str)],
    script: &str,
) -> String {
    use futures::StreamExt;
    let body = bollard::models::ContainerCreateBody {
        image: Some(common::docker::IMAGE.into()),
        entrypoint: Some(vec!["/bin/busybox".into()]),
        cmd: Some(vec!["sh".into(), "-c".into(), script.into()]),
        host_config: Some(bollard::models::HostConfig {
            network_mode: Some(network.into()),
            sysctls: Some(
                sysctls
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..Default::default()
        }),
        ..Default::default()
    };
    docker
        .create_container(
            Some(
                bollard::query_parameters::CreateContainerOptionsBuilder::default()
                    .name(name)
                    .build(),
            ),
            body,
        )
        .await
        .unwrap();
    docker.start_container(name, None).await.unwrap();
    let _ = docker.wait_container(name, None).next().await;
    let mut out = String::new();
    let mut logs = docker.logs(
        name,
        Some(
            bollard::query_parameters::LogsOptionsBuilder::default()
                .stdout(true)
                .stderr(true)
                .build(),
        ),
    );
    while let Some(Ok(l)) = logs.next().await {
        out.push_str(&l.to_string());
    }
    let _ = rascal_exec::exec::launch::docker::remove(docker, name).await;
    out
}

/// The link-local IPv6 address of a host interface.
fn link_local(dev: &str) -> Option<String> {
    let o = std::process::Command::new("ip")
        .args(["-6", "-o", "addr", "show", "dev", dev, "scope", "link"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    text.split_whitespace()
        .skip_while(|w| *w != "inet6")
        .nth(1)
        .map(|a| a.split('/').next().unwrap_or("").to_string())
}

/// Shell waiting, at most 30 s, until the container's eth0 has a link-local
/// IPv6 address past duplicate address detection (scope 20, flags without
/// 0x40 tentative, in /proc/net/if_inet6): until then a probe from it to
/// a link-local address cannot leave, whatever the firewall does.
const V6_READY: &str = "i=0; until grep -qE ' 20 [0-389ab][0-9a-f] +eth0$' /proc/net/if_inet6; do i=$((i+1)); [ $i -gt 300 ] && { echo 'eth0 has no usable link-local address after 30 s' >&2; break; }; sleep 0.1; done";

/// The probes a container makes at its gateway: TCP to a listener on
/// 0.0.0.0 and one on [::], UDP (the DNS-exfiltration shape) to one on
/// 0.0.0.0 (no answer comes back, so only the listener's count says
/// whether it arrived); each line `X: rc=N` (N 0: it got through).
fn host_probes(gateway: &str, tcp4: u16, tcp6: u16, udp: u16) -> String {
    format!(
        r#"
busybox nc -w 3 {gateway} {tcp4} </dev/null >/dev/null 2>&1; echo "H-tcp4: rc=$?"
busybox nc -w 3 {gateway} {tcp6} </dev/null >/dev/null 2>&1; echo "H-tcp6: rc=$?"
busybox timeout 5 busybox tftp -g -r probe -l /dev/null {gateway} {udp} >/dev/null 2>&1; echo "H-udp: rc=$?"
"#
    )
}

fn refused_all(log: &str, what: &str) {
    for p in ["H-tcp4", "H-tcp6", "H-udp"] {
        let line = log
            .lines()
            .find(|l| l.starts_with(&format!("{p}: ")))
            .unwrap_or_else(|| panic!("{what}: no {p} line\n{log}"));
        assert!(!line.ends_with("rc=0"), "{what}: {line}\n{log}");
    }
}

/// Docker's internal network stops forwarding, not traffic to the host: a
/// candidate could reach any host service on 0.0.0.0 or [::] through its
/// gateway. With the run's firewall it reaches only its proxy; the same
/// probes from a network of the test's own (no firewall) get through, so
/// the probes are real. The chain goes with the run's network.
#[test]
fn the_hosts_own_services_are_closed_to_the_run_network() {
    let Some(e) = common::docker::engine() else {
        return;
    };
    if !firewall_here() {
        return;
    }
    let allowed = test_server("allowed-server");
    let tcp4 = host_tcp("0.0.0.0:0");
    let tcp6 = host_tcp("[::]:0");
    let udp = host_udp();
    let tag = format!("{}-{}", std::process::id(), allowed.port);
    let run = format!("r-hostfw-{tag}");
    let script = format!(
        r#"
p=${{HTTPS_PROXY#http://}}; h=${{p%:*}}; port=${{p##*:}}
{say}
echo "A-connect: $(say 'CONNECT allowed.test:{pa} HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n' | tail -1)"
{probes}
echo "V6-off: $(cat /proc/sys/net/ipv6/conf/all/disable_ipv6)"
"#,
        say = say_fn("busybox", "$h $port"),
        pa = allowed.port,
        probes = host_probes("$h", tcp4.port, tcp6.port, udp.port),
    );
    let (_work, agent, spec) = busybox_spec(
        &run,
        &format!("{{ allow: [\"allowed.test:{}\"] }}", allowed.port),
        vec!["/bin/busybox".into(), "sh".into(), "-c".into(), script],
        90,
    );
    let launcher = DockerLauncher::with_resolver(pinned(&["allowed.test"]));
    let (exit, log) = e.rt.block_on(run_collecting(&launcher, spec));
    let exit = exit.unwrap();
    let log = log.join("\n");
    println!("{log}");
    let docker = e.docker.clone();
    let bridge = rascal_exec::egress::firewall::bridge_name(&run);
    let chain = rascal_exec::egress::firewall::chain_name(&bridge);
    let net_name = rascal_exec::egress::network::network_name(&run);

    // While the network is there, so is its firewall: the jump, the
    // rejects, and no accept left once the proxy stopped.
    let v4 = rules("iptables");
    let v6 = rules("ip6tables");
    let hc =
        e.rt.block_on(docker.inspect_container(
            &rascal_exec::exec::launch::docker::container_name(&run, "agent-1"),
            None,
        ))
        .unwrap()
        .host_config
        .unwrap();

    // A container of the test's own on the run's network, with IPv6
    // switched back on: neither the gateway nor the bridge's link-local
    // address answers.
    let ll = link_local(&bridge).expect("the bridge has a link-local address");
    let v6_script = format!(
        "{V6_READY}\n{}\nbusybox nc -w 3 {ll}%eth0 {} </dev/null >/dev/null 2>&1; echo \"H-ll6: rc=$?\"",
        host_probes(
            &e.rt
                .block_on(docker.inspect_network(&net_name, None))
                .unwrap()
                .ipam
                .unwrap()
                .config
                .unwrap()[0]
                .gateway
                .clone()
                .unwrap(),
            tcp4.port,
            tcp6.port,
            udp.port
        ),
        tcp6.port
    );
    let on_v6 = e.rt.block_on(probe_container(
        &docker,
        &format!("rascal-hostfw-v6-{tag}"),
        &net_name,
        &[("net.ipv6.conf.all.disable_ipv6", "0")],
        &v6_script,
    ));
    println!("v6 prober on the run's network:\n{on_v6}");
    let hits_before_control = (
        tcp4.hits.load(Ordering::SeqCst),
        tcp6.hits.load(Ordering::SeqCst),
        udp.hits.load(Ordering::SeqCst),
    );

    e.rt.block_on(launcher.release(&run, "agent-1", &agent));
    let v4_after = rules("iptables");
    let v6_after = rules("ip6tables");

    // The control: the same probes from a network without rascal's
    // firewall reach the host's listeners.
    let own_bridge = format!("rsct{}", allowed.port);
    let own_net = format!("rascal-hostfw-control-{tag}");
    e.rt.block_on(
        docker.create_network(bollard::models::NetworkCreateRequest {
            name: own_net.clone(),
            internal: Some(true),
            options: Some(std::collections::HashMap::from([(
                "com.docker.network.bridge.name".to_string(),
                own_bridge.clone(),
            )])),
            ..Default::default()
        }),
    )
    .unwrap();
    let own_gw =
        e.rt.block_on(docker.inspect_network(&own_net, None))
            .unwrap()
            .ipam
            .unwrap()
            .config
            .unwrap()[0]
            .gateway
            .clone()
            .unwrap();
    // Docker brings a bridge up (and the kernel gives it its link-local
    // address) when a first container joins it.
    let holder = format!("rascal-hostfw-holder-{tag}");
    e.rt.block_on(async {
        docker
            .create_container(
                Some(
                    bollard::query_parameters::CreateContainerOptionsBuilder::default()
                        .name(&holder)
                        .build(),
                ),
                bollard::models::ContainerCreateBody {
                    image: Some(common::docker::IMAGE.into()),
                    entrypoint: Some(vec!["/bin/busybox".into()]),
                    cmd: Some(vec!["sleep".into(), "120".into()]),
                    host_config: Some(bollard::models::HostConfig {
                        network_mode: Some(own_net.clone()),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        docker.start_container(&holder, None).await.unwrap();
    });
    let mut own_ll = None;
    for _ in 0..100 {
        own_ll = link_local(&own_bridge);
        if own_ll.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let own_ll = own_ll.expect("the control bridge has a link-local address");
    let control = e.rt.block_on(probe_container(
        &docker,
        &format!("rascal-hostfw-control-{tag}"),
        &own_net,
        &[("net.ipv6.conf.all.disable_ipv6", "0")],
        &format!(
            "{V6_READY}\n{}\nbusybox nc -w 3 {own_ll}%eth0 {} </dev/null >/dev/null 2>&1; echo \"H-ll6: rc=$?\"",
            host_probes(&own_gw, tcp4.port, tcp6.port, udp.port),
            tcp6.port
        ),
    ));
    let _ =
        e.rt.block_on(rascal_exec::exec::launch::docker::remove(&docker, &holder));
    let _ = e.rt.block_on(docker.remove_network(&own_net));
    println!("control (no firewall):\n{control}");

    assert_eq!(exit.code, Some(0), "{log}");
    assert!(
        log.contains("A-connect: allowed-server"),
        "(a) still works\n{log}"
    );
    refused_all(&log, "the candidate");
    assert!(log.contains("V6-off: 1"), "{log}");
    let sysctls = hc.sysctls.unwrap_or_default();
    assert_eq!(
        sysctls
            .get("net.ipv6.conf.all.disable_ipv6")
            .map(String::as_str),
        Some("1")
    );
    for (name, table) in [("iptables", &v4), ("ip6tables", &v6)] {
        assert!(
            table.contains(&format!("-A INPUT -i {bridge} -j {chain}")),
            "{name}: the jump\n{table}"
        );
        assert!(
            table.contains(&format!(
                "-A {chain} -p tcp -j REJECT --reject-with tcp-reset"
            )),
            "{name}\n{table}"
        );
        assert!(
            !table
                .lines()
                .any(|l| l.starts_with(&format!("-A {chain} ")) && l.ends_with("-j ACCEPT")),
            "{name}: the proxy's port was closed when it stopped\n{table}"
        );
    }
    refused_all(&on_v6, "a prober with IPv6 on");
    assert!(on_v6.contains("H-ll6: rc="), "{on_v6}");
    assert!(!on_v6.contains("H-ll6: rc=0"), "{on_v6}");
    assert_eq!(
        hits_before_control,
        (0, 0, 0),
        "no host listener saw anything from the run's network"
    );
    for (name, table) in [("iptables", &v4_after), ("ip6tables", &v6_after)] {
        assert!(
            !table.contains(&chain),
            "{name}: the chain went with the network\n{table}"
        );
    }
    assert!(
        control.contains("H-tcp4: rc=0") && control.contains("H-tcp6: rc=0"),
        "the probes are real: without the firewall they get through\n{control}"
    );
    assert!(control.contains("H-ll6: rc=0"), "{control}");
    assert!(tcp4.hits.load(Ordering::SeqCst) >= 1);
    assert!(
        udp.hits.load(Ordering::SeqCst) >= 1,
        "the UDP probe is real"
    );
}

/// An allowlisted busybox agent on the docker launcher, whose egress has
/// `firewall` and `on_host_open`.
fn no_firewall_case(
    e: &common::docker::Engine,
    on_host_open: &str,
) -> (
    Result<rascal_exec::exec::runner::Exit, rascal_exec::exec::launch::LaunchError>,
    String,
    Option<rascal_exec::egress::NetworkSummary>,
    String,
) {
    let run = format!("r-nofw-{on_host_open}-{}", std::process::id());
    let (_work, agent, spec) = busybox_spec(
        &run,
        &format!("{{ allow: [allowed.test], on_host_open: {on_host_open} }}"),
        vec!["/bin/busybox".into(), "true".into()],
        60,
    );
    let launcher = DockerLauncher::with_egress(
        rascal_exec::egress::network::DockerEgress::with_resolver(pinned(&["allowed.test"]))
            .with_firewall(rascal_exec::egress::firewall::Firewall::new(
                "/nonexistent/iptables",
                "/nonexistent/ip6tables",
            )),
    );
    let (exit, log) = e.rt.block_on(run_collecting(&launcher, spec));
    let summary = launcher.network(&run, "agent-1");
    e.rt.block_on(launcher.release(&run, "agent-1", &agent));
    let _ = e.rt.block_on(rascal_exec::exec::launch::docker::remove(
        &e.docker,
        &rascal_exec::exec::launch::docker::container_name(&run, "agent-1"),
    ));
    (exit, log.join("\n"), summary, run)
}

/// Where the firewall cannot be installed the agent is not silently left
/// open: its log and its report say so (`agent/network-host-open`), and
/// `on_host_open: fail` keeps it from starting at all.
#[test]
fn a_host_without_a_firewall_warns_or_refuses_to_start_the_agent() {
    let Some(e) = common::docker::engine() else {
        return;
    };
    let (exit, log, summary, _) = no_firewall_case(&e, "warn");
    assert_eq!(exit.unwrap().code, Some(0), "{log}");
    assert!(
        log.contains("rascal: network: the host's own services are NOT closed to this agent")
            && log.contains("`/nonexistent/iptables` is not installed"),
        "{log}"
    );
    let summary = summary.expect("a network summary");
    assert!(summary.host_open.is_some(), "{summary:?}");
    let mut agent = AgentConfig::new(RuntimeKind::Command);
    agent.network = Some(serde_yaml::from_str("{ allow: [allowed.test] }").unwrap());
    let report = rascal_exec::egress::annotate(
        rascal_core::model::verdict::Report::new(
            rascal_core::model::verdict::Layer::Agent,
            "agent",
        ),
        &agent,
        "docker",
        Some(&summary),
    )
    .finish();
    assert_eq!(report.status, rascal_core::model::verdict::Status::Warn);
    assert!(report
        .issues
        .iter()
        .any(|i| i.rule == rascal_exec::egress::RULE_HOST_OPEN
            && i.message.contains("is not installed")));

    let (exit, log, _, run) = no_firewall_case(&e, "fail");
    let err = exit.unwrap_err().to_string();
    assert!(
        err.contains("was not started") && err.contains("on_host_open: fail"),
        "{err}\n{log}"
    );
    let name = rascal_exec::exec::launch::docker::container_name(&run, "agent-1");
    assert!(
        e.rt.block_on(e.docker.inspect_container(&name, None))
            .is_err(),
        "no container was made"
    );
    let net = rascal_exec::egress::network::network_name(&run);
    assert!(
        e.rt.block_on(e.docker.inspect_network(&net, None)).is_err(),
        "nor a network left behind"
    );
}

/// `rascal gc` removes the firewall a killed run left with its network,
/// and sweeps chains whose network is gone; other chains stay.
#[test]
fn gc_removes_the_host_firewall_a_killed_run_left() {
    let Some(e) = common::docker::engine() else {
        return;
    };
    if !firewall_here() {
        return;
    }
    use common::{code, stderr, stdout, TestRepo};
    let agent = format!(
        "launcher: docker\nagents:\n  boxed: {{ runtime: command, image: \"{}\", command: [\"sh\", \"-c\", \"echo hi > hi.txt\"], network: {{ allow: [api.example.com] }} }}\n",
        common::docker::IMAGE
    );
    let t = TestRepo::new(&[(".rascal/config.yaml", &agent), ("README.md", "hello\n")]);
    let o = t.rascal(&["run", "x", "--agent", "boxed", "--headless"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let run = stdout(&o)
        .lines()
        .find_map(|l| l.strip_prefix("rascal run "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_string();
    let chain = rascal_exec::egress::firewall::chain_name(
        &rascal_exec::egress::firewall::bridge_name(&run),
    );
    assert!(
        !rules("iptables").contains(&chain),
        "the run's end removed it"
    );
    // As a rascal killed mid-run leaves it: the network, its firewall, a
    // proxy's port still open.
    let fw = rascal_exec::egress::firewall::Firewall::default();
    let net =
        e.rt.block_on(rascal_exec::egress::network::ensure(
            &e.docker,
            &run,
            &t.path().to_string_lossy(),
        ))
        .unwrap();
    e.rt.block_on(fw.install(&net.bridge)).unwrap();
    e.rt.block_on(fw.allow(&net.bridge, net.gateway, None, 40123))
        .unwrap();
    // A chain of a network that is gone (its run forgotten), and a chain
    // that is not rascal's.
    let orphan_bridge = rascal_exec::egress::firewall::bridge_name(&format!("{run}-gone"));
    let orphan = rascal_exec::egress::firewall::chain_name(&orphan_bridge);
    e.rt.block_on(fw.install(&orphan_bridge)).unwrap();
    let foreign = format!("EGRESSTEST{}", std::process::id());
    let ipt = |args: &[&str]| {
        std::process::Command::new("iptables")
            .arg("-w")
            .args(args)
            .status()
            .unwrap()
    };
    assert!(ipt(&["-N", &foreign]).success());
    let before = rules("iptables");
    assert!(
        before.contains(&chain) && before.contains(&orphan),
        "{before}"
    );

    let o = t.rascal(&["gc", "--run", &run]);
    let after = rules("iptables");
    let after6 = rules("ip6tables");
    ipt(&["-X", &foreign]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    for (name, table) in [("iptables", &after), ("ip6tables", &after6)] {
        assert!(!table.contains(&chain), "{name}: the run's chain\n{table}");
        assert!(
            !table.contains(&orphan),
            "{name}: the orphan chain\n{table}"
        );
        assert!(
            !table.contains(&format!("-j {chain}")) && !table.contains(&format!("-j {orphan}")),
            "{name}: the jumps\n{table}"
        );
    }
    assert!(
        after.contains(&format!("-N {foreign}")),
        "not rascal's: kept"
    );
    assert!(
        e.rt.block_on(e.docker.inspect_network(&net.name, None))
            .is_err(),
        "the network went too"
    );
}

// ---------------------------------------------------------------------
// The TLS name in a tunnel must be the tunnel's host (no domain fronting).

/// A server on 127.0.0.1 that records every byte it receives.
fn recording_server() -> (u16, Arc<Mutex<Vec<u8>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut c) = conn else { continue };
            let g = g.clone();
            std::thread::spawn(move || {
                let _ = c.set_read_timeout(Some(Duration::from_secs(10)));
                let mut b = [0u8; 4096];
                while let Ok(n) = c.read(&mut b) {
                    if n == 0 {
                        break;
                    }
                    g.lock().unwrap().extend_from_slice(&b[..n]);
                }
            });
        }
    });
    (port, got)
}

#[test]
fn a_tls_hello_for_another_host_is_refused_inside_an_allowed_tunnel() {
    use rascal_exec::egress::tls::sample_hello;
    let (port, got) = recording_server();
    let rt = rt();
    rt.block_on(async {
        let (sink, lines) = collecting_sink();
        let rules = Rules {
            allow: Allowlist::new(&[format!("front.test:{port}")]).unwrap(),
            resolver: pinned(&["front.test"]),
            sink,
            judge_within: rascal_exec::egress::proxy::JUDGE_WITHIN,
        };
        let proxy = Proxy::bind("127.0.0.1:0".parse().unwrap(), rules, false)
            .await
            .unwrap();
        // Send the CONNECT, read the 200, send `hello`; what came back.
        let addr = proxy.addr;
        let tunnel = |hello: Vec<u8>| async move {
            let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
            s.write_all(format!("CONNECT front.test:{port} HTTP/1.1\r\n\r\n").as_bytes())
                .await
                .unwrap();
            let mut head = [0u8; 39];
            s.read_exact(&mut head).await.unwrap();
            assert!(head.starts_with(b"HTTP/1.1 200"));
            s.write_all(&hello).await.unwrap();
            let mut rest = Vec::new();
            let _ = tokio::time::timeout(Duration::from_secs(3), s.read_to_end(&mut rest)).await;
            rest
        };
        // Fronting: the tunnel is to front.test, the hello names another.
        let evil = sample_hello(Some("hidden.example"), &[]);
        tunnel(evil.clone()).await;
        // No name at all, and a hidden (ECH) one.
        tunnel(sample_hello(None, &[])).await;
        tunnel(sample_hello(Some("front.test"), &[(0xfe0d, vec![0; 8])])).await;
        assert!(
            got.lock().unwrap().is_empty(),
            "not one byte of a refused hello reached the server"
        );
        // The right name passes, byte for byte (and split in two writes).
        let good = sample_hello(Some("Front.Test"), &[]);
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(format!("CONNECT front.test:{port} HTTP/1.1\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut head = [0u8; 39];
        s.read_exact(&mut head).await.unwrap();
        s.write_all(&good[..7]).await.unwrap();
        s.flush().await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        s.write_all(&good[7..]).await.unwrap();
        for _ in 0..100 {
            if got.lock().unwrap().len() >= good.len() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        drop(s);
        assert_eq!(*got.lock().unwrap(), good);
        let c = proxy.counts();
        assert_eq!((c.allowed, c.refused), (1, 3), "{c:?}");
        let log = lines.lock().unwrap().join("\n");
        println!("{log}");
        assert!(
            log.contains(&format!(
                "rascal: network: refused front.test:{port}: the TLS name is hidden.example"
            )),
            "{log}"
        );
        assert!(log.contains("the TLS hello names no host"), "{log}");
        assert!(log.contains("Encrypted Client Hello"), "{log}");
    });
}

// ---------------------------------------------------------------------
// Reattach: a proxied docker candidate outlives its rascal.

/// rascal is killed (SIGKILL) while an allowlisted docker candidate runs;
/// its proxy dies with it, and with it the tunnel the candidate holds open
/// (to a server that never closes), so the candidate knows. It waits for a
/// proxy again: `rascal attach` re-creates it on the port the container
/// knows, the allowed server is reached through it, the other one is still
/// refused, and the report counts what the new proxy did.
#[test]
fn attach_recreates_the_proxy_of_a_docker_candidate_whose_rascal_was_killed() {
    let Some(e) = common::docker::engine() else {
        return;
    };
    use common::{code, stderr, stdout, TestRepo};
    let allowed = test_server("allowed-server");
    let secret = test_server("secret-server");
    let (hold, _) = recording_server();
    // Real DNS is not asked: the servers are named by their address (the
    // one way an allowlist admits a loopback address).
    let script = format!(
        r#"p=${{HTTPS_PROXY#http://}}; h=${{p%:*}}; port=${{p##*:}}
up() {{ printf '' | busybox nc -w 2 $h $port >/dev/null 2>&1; }}
{say}
echo waiting-for-the-proxy-to-go
(printf 'CONNECT 127.0.0.1:{ph} HTTP/1.1\r\n\r\n'; while sleep 1; do echo; done) | busybox nc $h $port >/dev/null 2>&1
echo proxy-gone
i=0; until up; do i=$((i+1)); [ $i -gt 300 ] && {{ echo "the proxy did not come back within 60 s"; exit 1; }}; sleep 0.2; done
echo proxy-back
echo "A-connect: $(say 'CONNECT 127.0.0.1:{pa} HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n' | tail -1)"
echo "B: $(say 'CONNECT 127.0.0.1:{pb} HTTP/1.1\r\n\r\n' | head -1)"
echo done > result.txt
"#,
        say = say_fn("busybox", "$h $port"),
        pa = allowed.port,
        pb = secret.port,
        ph = hold,
    );
    let config = format!(
        // A bound on the whole run, so a broken reattach fails, not hangs.
        "launcher: docker\ntimeout: 150s\nagents:\n  boxed: {{ runtime: command, image: \"{}\", command: [\"sh\", \"-c\", {}], network: {{ allow: [\"127.0.0.1:{}\", \"127.0.0.1:{}\"] }} }}\n",
        common::docker::IMAGE,
        serde_json::to_string(&script).unwrap(),
        allowed.port,
        hold
    );
    let t = TestRepo::new(&[(".rascal/config.yaml", &config), ("README.md", "hello\n")]);
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("rascal.log");
    let mut child = common::spawn_rascal_logged(
        t.path(),
        &["run", "x", "--agent", "boxed", "--headless"],
        &log,
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(240);
    // What the background run said, for a failure message.
    let said = |child: &mut std::process::Child| {
        format!(
            "rascal run {:?}, said:\n{}",
            child.try_wait().ok().flatten(),
            std::fs::read_to_string(&log).unwrap_or_default()
        )
    };
    let run = loop {
        let list = stdout(&t.rascal(&["list"]));
        if let Some(id) = list
            .lines()
            .nth(1)
            .and_then(|l| l.split_whitespace().next())
        {
            if stdout(&t.rascal(&["show", id])).contains("waiting-for-the-proxy-to-go") {
                break id.to_string();
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the candidate never reached its proxy: {list}\n{}",
            said(&mut child)
        );
        if let Ok(Some(_)) = child.try_wait() {
            panic!(
                "the run ended before its candidate reached the proxy: {list}\n{}",
                said(&mut child)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    child.kill().unwrap(); // SIGKILL: the proxy dies, nothing is cleaned up
    child.wait().unwrap();
    let chain = rascal_exec::egress::firewall::chain_name(
        &rascal_exec::egress::firewall::bridge_name(&run),
    );
    let firewall = firewall_here();
    if firewall {
        assert!(
            rules("iptables").contains(&chain),
            "left by the killed rascal"
        );
    }

    let o = t.rascal(&["attach", &run]);
    let out = stdout(&o);
    println!("{out}{}", stderr(&o));
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    assert!(out.contains("reattached"), "{out}");
    let shown = stdout(&t.rascal(&["show", &run]));
    assert!(
        shown.contains("proxy-gone") && shown.contains("proxy-back"),
        "{shown}"
    );
    assert!(
        shown.contains("A-connect: allowed-server"),
        "(a) through the new proxy\n{shown}"
    );
    assert!(
        shown.contains("B: HTTP/1.1 403"),
        "(b) still refused\n{shown}"
    );
    assert!(
        shown.contains(&format!(
            "rascal: network: refused 127.0.0.1:{}: an IP address that the allowlist does not name",
            secret.port
        )),
        "{shown}"
    );
    assert_eq!(secret.hits.load(Ordering::SeqCst), 0);
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&t.rascal(&["show", &run, "--json"]))).unwrap();
    let text = doc.to_string();
    let net = find_key(&doc, "network").unwrap_or_else(|| panic!("no network field: {text}"));
    assert_eq!(net["mode"], "allowlist", "{net}");
    assert_eq!(net["allowed"], 1, "{net}");
    assert_eq!(net["refused"], 1, "{net}");
    assert_eq!(net["opened"], 1, "{net}");
    if firewall {
        assert!(
            !rules("iptables").contains(&chain),
            "the attach that recorded the result removed the run's firewall"
        );
    }
    assert!(
        e.rt.block_on(
            e.docker
                .inspect_network(&rascal_exec::egress::network::network_name(&run), None)
        )
        .is_err(),
        "and its network"
    );
}

/// The first object under `key` anywhere in `v`.
fn find_key<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a serde_json::Value> {
    match v {
        serde_json::Value::Object(m) => m
            .get(key)
            .filter(|x| x.is_object())
            .or_else(|| m.values().find_map(|x| find_key(x, key))),
        serde_json::Value::Array(a) => a.iter().find_map(|x| find_key(x, key)),
        _ => None,
    }
}

/// `rascal doctor` says whether the host firewall can be installed here.
#[test]
fn doctor_says_whether_the_host_firewall_can_be_installed() {
    let Some(_e) = common::docker::engine() else {
        return;
    };
    let t = common::TestRepo::new(&[
        (
            ".rascal/config.yaml",
            "launcher: docker\nagents:\n  a: { runtime: command, command: [\"true\"] }\n",
        ),
        ("README.md", "hello\n"),
    ]);
    let out = common::stdout(&t.rascal(&["doctor"]));
    let line = out
        .lines()
        .find(|l| l.starts_with("host firewall: "))
        .unwrap_or_else(|| panic!("{out}"));
    let expect = rascal_exec::exec::runtime()
        .unwrap()
        .block_on(rascal_exec::egress::firewall::Firewall::default().probe());
    match expect {
        Ok(v) => assert!(
            line.contains("can be installed") && line.contains(&v),
            "{line}"
        ),
        Err(_) => assert!(line.contains("CANNOT be installed"), "{line}"),
    }
}

/// A busybox agent from the test image with the network setting `network`
/// (YAML), running `argv` as candidate `agent-1` of `run` in a fresh work
/// directory (kept while the returned guard lives); the agent, for `release`.
fn busybox_spec(
    run: &str,
    network: &str,
    argv: Vec<String>,
    timeout_secs: u64,
) -> (tempfile::TempDir, AgentConfig, LaunchSpec) {
    let mut agent = AgentConfig::new(RuntimeKind::Command);
    agent.command = vec!["/bin/busybox".into()];
    agent.network = Some(serde_yaml::from_str::<NetworkSetting>(network).unwrap());
    let work = tempfile::tempdir().unwrap();
    let spec = LaunchSpec {
        run: run.to_string(),
        candidate: "agent-1".into(),
        workdir: work.path().to_path_buf(),
        argv,
        env: vec![("PATH".into(), "/bin".into())],
        stdin: None,
        timeout: Duration::from_secs(timeout_secs),
        image: Some(common::docker::IMAGE.into()),
        agent: Some(agent.clone()),
        repo: work.path().to_path_buf(),
        resume: None,
        confine: None,
        upload: None,
    };
    (work, agent, spec)
}
