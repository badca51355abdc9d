//! Network egress on this machine: rascal's proxy with two test servers on
//! 127.0.0.1 (one allowlisted by name through a pinned test resolver, one
//! not), and a busybox container agent on the run's internal network that
//! (a) reaches the allowed server through the proxy, (b) is refused the
//! other, (c) cannot connect directly to a server container the test
//! started on another network, and (d) is refused a literal private
//! address before the proxy opens any socket. All test traffic stays on
//! loopback or on networks and containers this test created.

mod common;
use rascal::config::network::NetworkSetting;
use rascal::config::{AgentConfig, RuntimeKind};
use rascal::egress::policy::Allowlist;
use rascal::egress::proxy::{PinnedResolver, Proxy, Resolve, Resolved, Rules, Sink};
use rascal::exec::launch::docker::DockerLauncher;
use rascal::exec::launch::{LaunchSpec, Launcher};
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
    ) -> futures::future::BoxFuture<'a, Result<Resolved, String>> {
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
        rascal::egress::network::container_ip(&docker, &server_name, &other_net)
            .await
            .expect("the server container has an address")
    });

    let script = format!(
        r#"
p=${{HTTPS_PROXY#http://}}; h=${{p%:*}}; port=${{p##*:}}
echo "proxy=$HTTPS_PROXY"
say() {{ (printf "$1"; sleep 2) | busybox nc -w 5 $h $port; echo; }}
echo "A-http: $(say 'GET http://allowed.test:{pa}/ HTTP/1.0\r\n\r\n' | tail -1)"
echo "A-connect: $(say 'CONNECT allowed.test:{pa} HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n' | tail -1)"
echo "B: $(say 'CONNECT secret.test:{pb} HTTP/1.1\r\n\r\n' | head -1)"
busybox nc -w 3 {server} 8080 </dev/null; echo "C: direct-rc=$?"
echo "D: $(say 'CONNECT 10.1.2.3:443 HTTP/1.1\r\n\r\n' | head -1)"
"#,
        pa = allowed.port,
        pb = secret.port,
        server = server_ip,
    );
    let mut agent = AgentConfig::new(RuntimeKind::Command);
    agent.command = vec!["/bin/busybox".into()];
    agent.network = Some(
        serde_yaml::from_str::<NetworkSetting>(&format!(
            "{{ allow: [\"allowed.test:{}\"], on_refused: warn }}",
            allowed.port
        ))
        .unwrap(),
    );
    let work = tempfile::tempdir().unwrap();
    let spec = LaunchSpec {
        run: run.clone(),
        candidate: "agent-1".into(),
        workdir: work.path().to_path_buf(),
        argv: vec!["/bin/busybox".into(), "sh".into(), "-c".into(), script],
        env: vec![("PATH".into(), "/bin".into())],
        stdin: None,
        timeout: Duration::from_secs(90),
        image: Some(common::docker::IMAGE.into()),
        agent: Some(agent.clone()),
        repo: work.path().to_path_buf(),
        resume: None,
        confine: None,
    };
    let launcher = DockerLauncher::with_resolver(pinned(&["allowed.test", "secret.test"]));
    let (exit, log) = e.rt.block_on(run_collecting(&launcher, spec));
    let exit = exit.unwrap();
    let log = log.join("\n");
    println!("{log}");
    let summary = launcher
        .network(&run, "agent-1")
        .expect("a network summary");
    let net_name = rascal::egress::network::network_name(&run);
    let internal =
        e.rt.block_on(docker.inspect_network(&net_name, None))
            .unwrap();
    let hc =
        e.rt.block_on(docker.inspect_container(
            &rascal::exec::launch::docker::container_name(&run, "agent-1"),
            None,
        ))
        .unwrap()
        .host_config
        .unwrap();
    e.rt.block_on(launcher.release(&run, "agent-1", &agent));
    let gone =
        e.rt.block_on(docker.inspect_network(&net_name, None))
            .is_err();
    e.rt.block_on(async {
        let _ = rascal::exec::launch::docker::remove(&docker, &server_name).await;
        let _ = docker.remove_network(&other_net).await;
    });

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
        rascal::egress::network::LABEL_RUN,
        rascal::exec::launch::docker::LABEL_RUN
    );
    assert_eq!(
        rascal::egress::network::LABEL_REPO,
        rascal::exec::launch::docker::LABEL_REPO
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
say() {{ (printf "$1"; sleep 2) | {bb} nc -w 5 127.0.0.1 3128; echo; }}
echo "A-http: $(say 'GET http://allowed.test:{pa}/ HTTP/1.0\r\n\r\n' | {bb} tail -1)"
echo "A-connect: $(say 'CONNECT allowed.test:{pa} HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n' | {bb} tail -1)"
echo "B: $(say 'CONNECT secret.test:{pb} HTTP/1.1\r\n\r\n' | {bb} head -1)"
{bb} nc -w 3 127.0.0.1 {pb} </dev/null; echo "C: direct-rc=$?"
echo "D: $(say 'CONNECT 10.1.2.3:443 HTTP/1.1\r\n\r\n' | {bb} head -1)"
"#,
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
    let confine = rascal::exec::confine::Confinement {
        workspace: work.path().to_path_buf(),
        writable: vec![],
        hide: vec![],
        read_only: vec![],
        network: false,
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
    };
    let launcher = rascal::exec::launch::process::ProcessLauncher::with_egress(
        rascal::exec::launch::egress::ProcessEgress::new(
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
    assert_eq!(summary.on_refused, rascal::config::network::OnRefused::Fail);
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
    };
    let (tx, _rx) = rascal::exec::runner::log_channel();
    let e = rt()
        .block_on(
            rascal::exec::launch::process::ProcessLauncher::default().run(
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
    launcher: &dyn rascal::exec::launch::Launcher,
    spec: rascal::exec::launch::LaunchSpec,
) -> (
    Result<rascal::exec::runner::Exit, rascal::exec::launch::LaunchError>,
    Vec<String>,
) {
    let (tx, mut rx) = rascal::exec::runner::log_channel();
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
