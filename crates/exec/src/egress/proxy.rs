//! rascal's egress proxy: a small HTTP proxy (CONNECT tunnels, and plain
//! `GET http://host/…` forwarding) that lets one candidate reach the hosts
//! of its allowlist and nothing else. The name is judged before anything
//! is resolved; the proxy resolves it itself (through an injectable
//! resolver), refuses non-public answers, connects to exactly the address
//! it vetted (no second lookup to rebind), checks that the TLS hello in a
//! tunnel names the host the tunnel was opened to (no domain fronting),
//! and reports every decision as a `rascal: network: …` line for the
//! candidate's log. Every tunnel is judged: no byte goes upstream before
//! the client's first bytes were; a client that sends nothing before the
//! deadline ([`Rules::judge_within`]) is refused, never waved through.

use super::policy::{self, Allowlist, Refusal, Target};
use super::tls;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// A request head larger than this is refused.
const MAX_HEAD: usize = 16 * 1024;
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a tunnel waits for the client's first bytes (a TLS hello) by
/// default; a client silent that long is refused.
pub const JUDGE_WITHIN: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection waits for the candidate's address to be known
/// (the container is starting).
const PEER_TIMEOUT: Duration = Duration::from_secs(30);

/// Connections served at once per candidate; more wait for a free slot
/// (a flood of connections cannot exhaust the host's descriptors).
const MAX_CONNECTIONS: usize = 256;

/// The prefix of every line the proxy writes to a candidate's log.
pub const LOG_PREFIX: &str = "rascal: network:";

mod resolve;

pub(crate) use resolve::SystemResolver;
pub use resolve::{PinnedResolver, Resolve, Resolved};

/// Where decisions go: one `rascal: network: …` line each.
pub type Sink = Arc<dyn Fn(String) + Send + Sync>;

/// What the proxy did, counted.
#[derive(Debug, Default)]
pub struct Stats {
    pub allowed: AtomicU64,
    pub refused: AtomicU64,
    /// Outbound sockets opened (connection attempts to upstreams).
    pub sockets: AtomicU64,
    /// Names handed to the resolver.
    pub lookups: AtomicU64,
    /// Connections from an address other than the candidate's, dropped.
    pub foreign: AtomicU64,
}

/// A snapshot of [`Stats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub allowed: u64,
    pub refused: u64,
    pub sockets: u64,
    pub lookups: u64,
    pub foreign: u64,
}

impl Counts {
    /// An allowlisted agent's network, as its report says it.
    pub fn summary(
        &self,
        allow: &[String],
        on_refused: rascal_core::config::network::OnRefused,
        host_open: Option<String>,
    ) -> rascal_core::model::network::NetworkSummary {
        rascal_core::model::network::NetworkSummary {
            mode: "allowlist".into(),
            allow: allow.to_vec(),
            allowed: self.allowed,
            refused: self.refused,
            opened: self.sockets,
            on_refused,
            host_open,
        }
    }
}

impl Stats {
    pub(crate) fn counts(&self) -> Counts {
        Counts {
            allowed: self.allowed.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            sockets: self.sockets.load(Ordering::Relaxed),
            lookups: self.lookups.load(Ordering::Relaxed),
            foreign: self.foreign.load(Ordering::Relaxed),
        }
    }
}

/// One candidate's proxy: its rules and where its decisions go.
pub struct Rules {
    pub allow: Allowlist,
    pub resolver: Arc<dyn Resolve>,
    pub sink: Sink,
    /// How long a tunnel waits for the client's first bytes before it is
    /// refused ([`JUDGE_WITHIN`]; shorter in tests).
    pub judge_within: Duration,
}

enum Listener {
    Tcp(TcpListener),
    Unix(tokio::net::UnixListener),
}

enum Conn {
    Tcp(TcpStream),
    Unix(tokio::net::UnixStream),
}

impl Listener {
    /// The next connection and, over TCP, the client's address.
    async fn accept(&self) -> std::io::Result<(Conn, Option<IpAddr>)> {
        match self {
            Listener::Tcp(l) => l.accept().await.map(|(c, a)| (Conn::Tcp(c), Some(a.ip()))),
            Listener::Unix(l) => l.accept().await.map(|(c, _)| (Conn::Unix(c), None)),
        }
    }
}

/// A running proxy. Stops when [`Proxy::stop`] is called or it is dropped.
pub struct Proxy {
    pub addr: SocketAddr,
    pub stats: Arc<Stats>,
    peer: watch::Sender<Option<IpAddr>>,
    stop: CancellationToken,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Proxy {
    /// Listen on `bind` (port 0: any). With `expect_peer`, connections
    /// are served only once [`Proxy::set_peer`] named the candidate's
    /// address, and only from it.
    pub async fn bind(bind: SocketAddr, rules: Rules, expect_peer: bool) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind(bind).await?;
        let addr = listener.local_addr()?;
        Ok(Proxy::serve_on(
            Listener::Tcp(listener),
            addr,
            rules,
            expect_peer,
        ))
    }

    /// Listen on a unix socket at `path` (for a sandbox that reaches it
    /// through a bound socket: only that sandbox can connect).
    pub(crate) fn bind_unix(path: &std::path::Path, rules: Rules) -> std::io::Result<Proxy> {
        let listener = tokio::net::UnixListener::bind(path)?;
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        Ok(Proxy::serve_on(
            Listener::Unix(listener),
            addr,
            rules,
            false,
        ))
    }

    fn serve_on(listener: Listener, addr: SocketAddr, rules: Rules, expect_peer: bool) -> Proxy {
        let stats = Arc::new(Stats::default());
        let (peer_tx, peer_rx) = watch::channel(None);
        let stop = CancellationToken::new();
        let rules = Arc::new(rules);
        let (st, stop2) = (stats.clone(), stop.clone());
        let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        tokio::spawn(async move {
            loop {
                let slot = tokio::select! {
                    s = slots.clone().acquire_owned() => match s { Ok(s) => s, Err(_) => break },
                    _ = stop2.cancelled() => break,
                };
                let (conn, from) = tokio::select! {
                    a = listener.accept() => match a {
                        Ok(a) => a,
                        Err(_) => { tokio::time::sleep(Duration::from_millis(50)).await; continue }
                    },
                    _ = stop2.cancelled() => break,
                };
                let (rules, st, stop, mut peer) =
                    (rules.clone(), st.clone(), stop2.clone(), peer_rx.clone());
                tokio::spawn(async move {
                    let _slot = slot;
                    let work = async {
                        if expect_peer {
                            let known =
                                tokio::time::timeout(PEER_TIMEOUT, peer.wait_for(|p| p.is_some()))
                                    .await;
                            let expected = match &known {
                                Ok(Ok(p)) => **p,
                                _ => None,
                            };
                            if expected != from {
                                st.foreign.fetch_add(1, Ordering::Relaxed);
                                (rules.sink)(format!(
                                    "{LOG_PREFIX} dropped a connection from {}: not this candidate's address ({})",
                                    from.map_or("?".to_string(), |f| f.to_string()),
                                    expected.map_or("not known yet".to_string(), |e| e.to_string())
                                ));
                                return;
                            }
                        }
                        match conn {
                            Conn::Tcp(c) => serve(c, &rules, &st).await,
                            Conn::Unix(c) => serve(c, &rules, &st).await,
                        }
                    };
                    // Stopping cuts waits and tunnels alike, so nothing
                    // holds the candidate's log open after its agent ended.
                    tokio::select! {
                        _ = work => {}
                        _ = stop.cancelled() => {}
                    }
                });
            }
        });
        Proxy {
            addr,
            stats,
            peer: peer_tx,
            stop,
        }
    }

    /// The candidate's address: from now on only it is served.
    pub fn set_peer(&self, ip: IpAddr) {
        let _ = self.peer.send(Some(ip));
    }

    pub fn counts(&self) -> Counts {
        self.stats.counts()
    }

    /// Stop listening and cut every open tunnel.
    pub(crate) fn stop(&self) {
        self.stop.cancel();
    }
}

/// Serve one client connection: read the request head, decide, then
/// tunnel or forward.
pub(crate) async fn serve<S>(mut client: S, rules: &Rules, stats: &Stats)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let head = match tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await {
        Ok(Ok(h)) => h,
        _ => return,
    };
    let refuse = |what: &str, why: &Refusal| {
        stats.refused.fetch_add(1, Ordering::Relaxed);
        (rules.sink)(format!("{LOG_PREFIX} refused {what}: {why}"));
    };
    let req = match Request::parse(&head.bytes[..head.end]) {
        Ok(r) => r,
        Err(e) => {
            let why = Refusal::Malformed(e.to_string());
            refuse("a request", &why);
            let _ = respond(&mut client, 400, &why.to_string()).await;
            return;
        }
    };
    let target = &req.target;
    let explicit = match policy::judge_name(&rules.allow, target) {
        Ok(x) => x,
        Err(why) => {
            refuse(&target.to_string(), &why);
            let _ = respond(&mut client, 403, &format!("refused {target}: {why}")).await;
            return;
        }
    };
    let resolved = match target.ip {
        Some(ip) => Ok(Resolved {
            addrs: vec![ip],
            pinned: false,
        }),
        None => {
            stats.lookups.fetch_add(1, Ordering::Relaxed);
            rules.resolver.resolve(&target.host, target.port).await
        }
    };
    let addrs = match resolved
        .map_err(|e| Refusal::Unresolved(e.to_string()))
        .and_then(|r| policy::judge_addresses(&r.addrs, explicit || r.pinned))
    {
        Ok(a) => a,
        Err(why) => {
            refuse(&target.to_string(), &why);
            let _ = respond(&mut client, 403, &format!("refused {target}: {why}")).await;
            return;
        }
    };
    let (mut up, sa) = match connect_first(&addrs, target.port, stats).await {
        Ok(u) => u,
        Err(last_err) => {
            (rules.sink)(format!(
                "{LOG_PREFIX} allowed {target} but could not connect: {last_err}"
            ));
            let _ = respond(&mut client, 502, &format!("could not connect to {target}")).await;
            return;
        }
    };
    let rest = head.bytes[head.end..].to_vec();
    let first = match &req.forward {
        Some(first) => {
            let mut f = first.clone();
            f.extend_from_slice(&rest);
            f
        }
        None => {
            if client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await
                .is_err()
            {
                return;
            }
            // Nothing reaches the upstream before the client's first
            // bytes are judged: a TLS hello must name the CONNECT host.
            let (first, ended) = first_bytes(&mut client, &up, rest, rules.judge_within).await;
            if let Err(why) = judge_tunnel_start(target, &first, ended, rules.judge_within) {
                refuse(&target.to_string(), &why);
                return;
            }
            first
        }
    };
    stats.allowed.fetch_add(1, Ordering::Relaxed);
    (rules.sink)(format!("{LOG_PREFIX} allowed {target} ({sa})"));
    if up.write_all(&first).await.is_err() {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut up).await;
}

/// Connect to the first of `addrs` that answers (within
/// `CONNECT_TIMEOUT` each): the stream and its address, else the last
/// failure (`Network`).
async fn connect_first(
    addrs: &[IpAddr],
    port: u16,
    stats: &Stats,
) -> Result<(TcpStream, SocketAddr), crate::Error> {
    let mut last_err = String::new();
    for &ip in addrs {
        stats.sockets.fetch_add(1, Ordering::Relaxed);
        let sa = SocketAddr::new(ip, port);
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(sa)).await {
            Ok(Ok(s)) => return Ok((s, sa)),
            Ok(Err(e)) => last_err = format!("{sa}: {e}"),
            Err(_) => last_err = format!("{sa}: no answer within 10s"),
        }
    }
    Err(crate::Error::Network(last_err))
}

/// A CONNECT tunnel's first client bytes, judged before anything reaches
/// the upstream: a client that sent nothing (unless the server speaks
/// first) is refused, and a TLS hello must name the CONNECT host.
fn judge_tunnel_start(
    target: &Target,
    first: &[u8],
    ended: Ended,
    judge_within: Duration,
) -> Result<(), Refusal> {
    if first.is_empty() && ended != Ended::ServerFirst {
        return Err(Refusal::Silent(match ended {
            Ended::Deadline => format!(
                "the client sent nothing within {}s of the tunnel opening",
                judge_within.as_secs_f64()
            ),
            _ => "the client closed the tunnel before sending anything".into(),
        }));
    }
    let hello = match tls::client_hello(first) {
        tls::Hello::Incomplete if !first.is_empty() => {
            tls::Hello::Malformed("it stopped before its end".into())
        }
        h => h,
    };
    policy::judge_hello(target, &hello)
}

/// Why [`first_bytes`] stopped reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// The bytes are a whole TLS hello, plainly not one, or too many.
    Judgeable,
    /// The upstream spoke before the client sent anything (a protocol
    /// where the server talks first: nothing of the client's to judge).
    ServerFirst,
    /// The client closed (or its read failed).
    Closed,
    /// The deadline passed.
    Deadline,
}

/// The client's first bytes in a tunnel: `rest` (what came with the
/// request head) and more until they are a whole TLS hello or plainly
/// not one, the client stops, the upstream speaks first, or `within`
/// passes; and which of these ended it.
async fn first_bytes<S>(
    client: &mut S,
    up: &TcpStream,
    rest: Vec<u8>,
    within: Duration,
) -> (Vec<u8>, Ended)
where
    S: AsyncRead + Unpin,
{
    let mut buf = rest;
    let mut chunk = [0u8; 4096];
    let deadline = tokio::time::sleep(within);
    tokio::pin!(deadline);
    while tls::client_hello(&buf) == tls::Hello::Incomplete && buf.len() <= tls::MAX_HELLO {
        tokio::select! {
            n = client.read(&mut chunk) => match n {
                Ok(n) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                _ => return (buf, Ended::Closed),
            },
            _ = up.readable(), if buf.is_empty() => return (buf, Ended::ServerFirst),
            _ = &mut deadline => return (buf, Ended::Deadline),
        }
    }
    (buf, Ended::Judgeable)
}

struct Head {
    bytes: Vec<u8>,
    /// Where the head ends (after the blank line).
    end: usize,
}

async fn read_head<S: AsyncRead + Unpin>(s: &mut S) -> std::io::Result<Head> {
    let mut bytes = Vec::with_capacity(1024);
    let mut buf = [0u8; 2048];
    loop {
        let n = s.read(&mut buf).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let from = bytes.len().saturating_sub(3);
        bytes.extend_from_slice(&buf[..n]);
        if let Some(i) = bytes[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok(Head {
                end: from + i + 4,
                bytes,
            });
        }
        if bytes.len() > MAX_HEAD {
            return Err(std::io::ErrorKind::InvalidData.into());
        }
    }
}

/// A parsed proxy request.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    target: Target,
    /// For plain HTTP: the head to send upstream (origin-form request
    /// line, the client's headers without `Proxy-*`).
    forward: Option<Vec<u8>>,
}

impl Request {
    /// Err (`Config`): the request is not one this proxy forwards.
    fn parse(head: &[u8]) -> Result<Request, crate::Error> {
        let text = std::str::from_utf8(head)
            .map_err(|_| crate::Error::Config("the request head is not UTF-8".into()))?;
        let mut lines = text.split("\r\n");
        let first = lines.next().unwrap_or("");
        let mut parts = first.split(' ');
        let (method, uri, version) = match (parts.next(), parts.next(), parts.next(), parts.next())
        {
            (Some(m), Some(u), Some(v), None) if v.starts_with("HTTP/1.") => (m, u, v),
            _ => {
                return Err(crate::Error::Config(format!(
                    "`{}` is not an HTTP/1 request line",
                    rascal_core::text::cut(&first.escape_debug().to_string(), 120)
                )))
            }
        };
        if method.eq_ignore_ascii_case("CONNECT") {
            return Ok(Request {
                target: policy::parse_target(uri, None)?,
                forward: None,
            });
        }
        let Some(rest) = uri.strip_prefix("http://") else {
            return Err(crate::Error::Config(format!(
                "`{method} {}`: only CONNECT and http:// absolute URIs go through this proxy",
                rascal_core::text::cut(&uri.escape_debug().to_string(), 120)
            )));
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], &rest[i..]),
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let path = if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_string()
        };
        let target = policy::parse_target(authority, Some(80))?;
        let mut out = format!("{method} {path} {version}\r\n");
        for l in lines.filter(|l| !l.is_empty()) {
            let name = l.split(':').next().unwrap_or("").trim();
            if name.len() >= 6 && name[..6].eq_ignore_ascii_case("proxy-") {
                continue;
            }
            out.push_str(l);
            out.push_str("\r\n");
        }
        out.push_str("\r\n");
        Ok(Request {
            target,
            forward: Some(out.into_bytes()),
        })
    }
}

async fn respond<S: AsyncWrite + Unpin>(s: &mut S, code: u16, text: &str) -> std::io::Result<()> {
    let reason = match code {
        400 => "Bad Request",
        403 => "Forbidden",
        _ => "Bad Gateway",
    };
    let body = format!("rascal egress proxy: {text}\n");
    s.write_all(
        format!(
            "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await?;
    s.shutdown().await
}

#[cfg(test)]
mod tests;
