//! An in-process fake Kubernetes API server on 127.0.0.1, plain HTTP/1.1,
//! enough of the API for the kubernetes launcher and doctor: it records
//! every request (method, path, query, JSON body, exec stdin) for the tests
//! to check, answers with objects shaped as the API's schema says, plays a
//! candidate's pod through its life (receive → agent → collect → done),
//! serves the agent's log with `follow=true`, and speaks the exec
//! websocket (`v5.channel.k8s.io`, stdin/stdout/stderr/status channels,
//! CLOSE of stdin). No cluster is reachable on the build machines; this is
//! the stand-in, and it says nothing about a real kubelet or CNI.
#![allow(dead_code)]

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::{self, protocol::Role, Message};

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Query pairs, decoded, in order (`command` repeats).
    pub query: Vec<(String, String)>,
    pub body: Option<Value>,
    /// For an exec: the websocket subprotocol agreed and the stdin bytes.
    pub protocol: Option<String>,
    pub stdin: Vec<u8>,
    pub stdin_closed: bool,
}

impl Recorded {
    pub fn q(&self, key: &str) -> Vec<String> {
        self.query
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .collect()
    }
}

/// Files of a tree: path → content (a `None` content is a directory).
pub type Files = BTreeMap<String, Option<Vec<u8>>>;

/// Where a candidate's pod is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Receiving,
    Running,
    Finished,
    Done,
    Deleted,
}

pub type Agent = Box<dyn Fn(&mut Files) + Send>;

pub struct State {
    pub namespace: String,
    pub requests: Vec<Recorded>,
    /// Jobs by name, as created (with uid).
    pub jobs: BTreeMap<String, Value>,
    pub phase: BTreeMap<String, Phase>,
    /// What each Job's pod received (`workspace/…`, `stdin`, …).
    pub received: BTreeMap<String, Files>,
    /// What each Job's agent leaves behind.
    pub results: BTreeMap<String, Files>,
    /// The agent: edits the received tree.
    pub agent: Agent,
    pub log_lines: Vec<String>,
    pub exit_code: i32,
    pub oom: bool,
    /// The agent never ends (for cancel and timeout).
    pub hang: bool,
    /// Bytes sent instead of the real result archive.
    pub hostile_result: Option<Vec<u8>>,
    /// The agent's container cannot start (waiting reason).
    pub stuck: Option<String>,
    /// `verb resource[/sub]` pairs a SelfSubjectAccessReview allows.
    pub allowed: BTreeSet<String>,
    /// Jobs listed besides the created ones (leftovers).
    pub leftovers: Vec<Value>,
    /// Namespaces that exist.
    pub namespaces: BTreeSet<String>,
    /// Break the log stream after this many lines, once (a reconnect).
    pub break_log_after: Option<usize>,
    /// How the Jobs of verification commands (labelled `rascal.check`)
    /// play: their command edits the received tree (leaves a results
    /// file), prints these lines and exits with this code.
    pub check: Agent,
    pub check_log_lines: Vec<String>,
    pub check_exit_code: i32,
    /// A check's `check` container cannot start (waiting reason).
    pub check_stuck: Option<String>,
    /// A check's pod is never scheduled (it stays Pending).
    pub check_unschedulable: bool,
    /// Creating a check's Job is refused with this code.
    pub refuse_check_jobs: Option<u16>,
}

impl State {
    fn new(namespace: &str) -> State {
        State {
            namespace: namespace.into(),
            requests: Vec::new(),
            jobs: BTreeMap::new(),
            phase: BTreeMap::new(),
            received: BTreeMap::new(),
            results: BTreeMap::new(),
            agent: Box::new(|_| {}),
            log_lines: Vec::new(),
            exit_code: 0,
            oom: false,
            hang: false,
            hostile_result: None,
            stuck: None,
            allowed: BTreeSet::new(),
            leftovers: Vec::new(),
            namespaces: BTreeSet::from([namespace.to_string()]),
            break_log_after: None,
            check: Box::new(|_| {}),
            check_log_lines: Vec::new(),
            check_exit_code: 0,
            check_stuck: None,
            check_unschedulable: false,
            refuse_check_jobs: None,
        }
    }
}

pub struct FakeKube {
    pub addr: SocketAddr,
    pub state: Arc<Mutex<State>>,
    pub kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeKube {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub const CONTEXT: &str = "fake-cluster";

impl FakeKube {
    /// Start the server on a free port of 127.0.0.1 and write a kubeconfig
    /// whose context `fake-cluster` points at it. Call inside a runtime.
    pub async fn start(namespace: &str) -> FakeKube {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State::new(namespace)));
        let s = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let s = s.clone();
                tokio::spawn(async move {
                    let _ = serve(sock, s).await;
                });
            }
        });
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(&kubeconfig, kubeconfig_text(addr)).unwrap();
        FakeKube {
            addr,
            state,
            kubeconfig,
            _dir: dir,
            task,
        }
    }

    pub fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.lock().unwrap())
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.with(|s| s.requests.clone())
    }

    /// Requests as `METHOD path` lines, exec commands spelled out.
    pub fn trace(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|r| {
                if r.path.ends_with("/exec") {
                    format!(
                        "EXEC {} {}",
                        r.q("container").join(""),
                        r.q("command").join(" ")
                    )
                } else {
                    format!("{} {}", r.method, r.path)
                }
            })
            .collect()
    }
}

pub fn kubeconfig_text(addr: SocketAddr) -> String {
    format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: {CONTEXT}\nclusters:\n- name: fake\n  cluster:\n    server: http://{addr}\ncontexts:\n- name: {CONTEXT}\n  context:\n    cluster: fake\n    user: tester\nusers:\n- name: tester\n  user:\n    token: fake-token\n"
    )
}

fn status(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code})
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let h = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("00");
                out.push(u8::from_str_radix(h, 16).unwrap_or(b'?'));
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

struct Head {
    method: String,
    path: String,
    query: Vec<(String, String)>,
    headers: BTreeMap<String, String>,
}

async fn read_head(sock: &mut TcpStream) -> Option<(Head, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let text = String::from_utf8_lossy(&buf[..end]).into_owned();
    let rest = buf[end + 4..].to_vec();
    let mut lines = text.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let target = first.next()?.to_string();
    let (path, q) = target.split_once('?').unwrap_or((&target, ""));
    let query = q
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some((
        Head {
            method,
            path: path.to_string(),
            query,
            headers,
        },
        rest,
    ))
}

async fn respond(sock: &mut TcpStream, code: u16, body: &Value) {
    let text = body.to_string();
    let head = format!(
        "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        text.len()
    );
    let _ = sock.write_all(head.as_bytes()).await;
    let _ = sock.write_all(text.as_bytes()).await;
    let _ = sock.shutdown().await;
}

async fn serve(mut sock: TcpStream, state: Arc<Mutex<State>>) -> std::io::Result<()> {
    let Some((head, mut rest)) = read_head(&mut sock).await else {
        return Ok(());
    };
    let len: usize = head
        .headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while rest.len() < len {
        let mut chunk = vec![0u8; len - rest.len()];
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        rest.extend_from_slice(&chunk[..n]);
    }
    let body: Option<Value> =
        (len > 0).then(|| serde_json::from_slice(&rest).unwrap_or(Value::Null));
    let index = {
        let mut s = state.lock().unwrap();
        s.requests.push(Recorded {
            method: head.method.clone(),
            path: head.path.clone(),
            query: head.query.clone(),
            body: body.clone(),
            protocol: None,
            stdin: Vec::new(),
            stdin_closed: false,
        });
        s.requests.len() - 1
    };
    let parts: Vec<&str> = head.path.trim_matches('/').split('/').collect();
    let m = head.method.as_str();
    // /api/v1/namespaces/NS/pods/NAME/exec
    match (m, parts.as_slice()) {
        ("GET", ["version"]) => {
            respond(
                &mut sock,
                200,
                &json!({"major": "1", "minor": "33", "gitVersion": "v1.33.1-fake",
                "gitCommit": "", "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z",
                "goVersion": "go1.24", "compiler": "gc", "platform": "linux/amd64"}),
            )
            .await;
        }
        ("GET", ["api", "v1", "namespaces", ns]) => {
            let exists = state.lock().unwrap().namespaces.contains(*ns);
            if exists {
                respond(
                    &mut sock,
                    200,
                    &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
                )
                .await;
            } else {
                respond(
                    &mut sock,
                    404,
                    &status(404, "NotFound", &format!("namespaces \"{ns}\" not found")),
                )
                .await;
            }
        }
        ("POST", ["apis", "authorization.k8s.io", "v1", "selfsubjectaccessreviews"]) => {
            let mut review = body.unwrap_or(Value::Null);
            let a = &review["spec"]["resourceAttributes"];
            let res = match a["subresource"].as_str() {
                Some(sub) if !sub.is_empty() => {
                    format!("{}/{sub}", a["resource"].as_str().unwrap_or(""))
                }
                _ => a["resource"].as_str().unwrap_or("").to_string(),
            };
            let key = format!("{} {res}", a["verb"].as_str().unwrap_or(""));
            let allowed = state.lock().unwrap().allowed.contains(&key);
            review["status"] = json!({"allowed": allowed, "reason": if allowed { "" } else { "no RBAC policy matched" }});
            respond(&mut sock, 201, &review).await;
        }
        ("POST", ["apis", "networking.k8s.io", "v1", "namespaces", _, "networkpolicies"])
        | ("POST", ["api", "v1", "namespaces", _, "secrets"]) => {
            let mut obj = body.unwrap_or(Value::Null);
            obj["metadata"]["uid"] = json!(format!("uid-{index}"));
            respond(&mut sock, 201, &obj).await;
        }
        (
            "PATCH",
            ["apis", "networking.k8s.io", "v1", "namespaces", ns, "networkpolicies", name],
        ) => {
            respond(
                &mut sock,
                200,
                &json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": {"name": name, "namespace": ns}, "spec": {"podSelector": {}}}),
            )
            .await;
        }
        ("DELETE", ["apis", "networking.k8s.io", "v1", "namespaces", _, "networkpolicies", _])
        | ("DELETE", ["api", "v1", "namespaces", _, "secrets", _]) => {
            respond(
                &mut sock,
                200,
                &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}),
            )
            .await;
        }
        ("PATCH", ["api", "v1", "namespaces", ns, "secrets", name]) => {
            respond(&mut sock, 200, &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns}})).await;
        }
        ("POST", ["apis", "batch", "v1", "namespaces", _, "jobs"]) => {
            let mut job = body.unwrap_or(Value::Null);
            let name = job["metadata"]["name"].as_str().unwrap_or("").to_string();
            let exists = state.lock().unwrap().jobs.contains_key(&name);
            let refused = state.lock().unwrap().refuse_check_jobs;
            if let (Some(code), true) = (refused, is_check(&job)) {
                respond(
                    &mut sock,
                    code,
                    &status(code, "Forbidden", "fake: jobs.batch is forbidden"),
                )
                .await;
            } else if exists {
                respond(
                    &mut sock,
                    409,
                    &status(
                        409,
                        "AlreadyExists",
                        &format!("jobs.batch \"{name}\" already exists"),
                    ),
                )
                .await;
            } else {
                job["metadata"]["uid"] = json!(format!("job-uid-{name}"));
                {
                    let mut s = state.lock().unwrap();
                    s.jobs.insert(name.clone(), job.clone());
                    s.phase.insert(name, Phase::Receiving);
                }
                respond(&mut sock, 201, &job).await;
            }
        }
        ("GET", ["apis", "batch", "v1", "namespaces", _, "jobs", name]) => {
            let job = state.lock().unwrap().jobs.get(*name).cloned();
            match job {
                Some(j) => respond(&mut sock, 200, &j).await,
                None => {
                    respond(
                        &mut sock,
                        404,
                        &status(404, "NotFound", &format!("jobs.batch \"{name}\" not found")),
                    )
                    .await
                }
            }
        }
        ("GET", ["apis", "batch", "v1", "namespaces", _, "jobs"]) => {
            let selector = head
                .query
                .iter()
                .find(|(k, _)| k == "labelSelector")
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            let items: Vec<Value> = {
                let s = state.lock().unwrap();
                s.jobs
                    .values()
                    .filter(|j| {
                        s.phase.get(j["metadata"]["name"].as_str().unwrap_or(""))
                            != Some(&Phase::Deleted)
                    })
                    .chain(s.leftovers.iter())
                    .filter(|j| matches(&j["metadata"]["labels"], &selector))
                    .cloned()
                    .collect()
            };
            respond(&mut sock, 200, &json!({"apiVersion": "batch/v1", "kind": "JobList", "metadata": {}, "items": items})).await;
        }
        ("DELETE", ["apis", "batch", "v1", "namespaces", _, "jobs", name]) => {
            let known = {
                let mut s = state.lock().unwrap();
                let known = s.jobs.contains_key(*name)
                    || s.leftovers.iter().any(|j| j["metadata"]["name"] == *name);
                s.phase.insert(name.to_string(), Phase::Deleted);
                s.leftovers.retain(|j| j["metadata"]["name"] != *name);
                known
            };
            if known {
                respond(&mut sock, 200, &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"})).await;
            } else {
                respond(&mut sock, 404, &status(404, "NotFound", "not found")).await;
            }
        }
        ("GET", ["api", "v1", "namespaces", ns, "pods"]) => {
            let selector = head
                .query
                .iter()
                .find(|(k, _)| k == "labelSelector")
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            let items: Vec<Value> = {
                let s = state.lock().unwrap();
                s.jobs
                    .iter()
                    .filter(|(n, _)| s.phase.get(*n) != Some(&Phase::Deleted))
                    .filter(|(_, j)| {
                        matches(&j["spec"]["template"]["metadata"]["labels"], &selector)
                    })
                    .map(|(n, j)| pod(&s, n, j, ns))
                    .collect()
            };
            respond(
                &mut sock,
                200,
                &json!({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": items}),
            )
            .await;
        }
        ("GET", ["api", "v1", "namespaces", _, "pods", pod_name, "log"]) => {
            let job = pod_name
                .rsplit_once('-')
                .map(|(j, _)| j.to_string())
                .unwrap_or_default();
            serve_log(sock, state, job).await?;
        }
        ("GET", ["api", "v1", "namespaces", _, "pods", pod_name, "exec"]) => {
            let job = pod_name
                .rsplit_once('-')
                .map(|(j, _)| j.to_string())
                .unwrap_or_default();
            serve_exec(sock, state, head, index, job).await?;
        }
        _ => {
            respond(
                &mut sock,
                404,
                &status(
                    404,
                    "NotFound",
                    &format!("the fake API server has no {m} {}", head.path),
                ),
            )
            .await;
        }
    }
    Ok(())
}

/// Whether a Job is a verification command's.
pub fn is_check(job: &Value) -> bool {
    job["metadata"]["labels"]["rascal.check"].is_string()
}

/// Whether `labels` satisfy a `k=v,k2=v2` selector.
fn matches(labels: &Value, selector: &str) -> bool {
    selector
        .split(',')
        .filter(|p| !p.is_empty())
        .all(|p| match p.split_once('=') {
            Some((k, v)) => labels[k].as_str() == Some(v),
            None => labels.get(p).is_some(),
        })
}

fn running() -> Value {
    json!({"running": {"startedAt": "2026-11-30T00:00:00Z"}})
}

fn terminated(code: i32, reason: &str) -> Value {
    json!({"terminated": {"exitCode": code, "reason": reason}})
}

fn waiting(reason: &str) -> Value {
    json!({"waiting": {"reason": reason, "message": format!("fake: {reason}")}})
}

/// The pod of Job `name`, its status from the phase.
fn pod(s: &State, name: &str, job: &Value, ns: &str) -> Value {
    let phase = s.phase.get(name).copied().unwrap_or(Phase::Receiving);
    let check = is_check(job);
    let (exit_code, stuck) = if check {
        (s.check_exit_code, &s.check_stuck)
    } else {
        (s.exit_code, &s.stuck)
    };
    let agent_end = || {
        if s.oom && !check {
            terminated(137, "OOMKilled")
        } else {
            terminated(
                exit_code,
                if exit_code == 0 { "Completed" } else { "Error" },
            )
        }
    };
    let spec = &job["spec"]["template"]["spec"];
    let main_name = spec["containers"][0]["name"].as_str().unwrap_or("agent");
    let unscheduled = check && s.check_unschedulable;
    let (pod_phase, init, agent, collect) = match phase {
        _ if unscheduled => (
            "Pending",
            waiting("PodInitializing"),
            waiting("PodInitializing"),
            waiting("PodInitializing"),
        ),
        Phase::Receiving => (
            "Pending",
            running(),
            waiting("PodInitializing"),
            waiting("PodInitializing"),
        ),
        Phase::Running => match stuck {
            Some(r) => ("Pending", terminated(0, "Completed"), waiting(r), running()),
            None => ("Running", terminated(0, "Completed"), running(), running()),
        },
        Phase::Finished => (
            "Running",
            terminated(0, "Completed"),
            agent_end(),
            running(),
        ),
        Phase::Done | Phase::Deleted => (
            "Succeeded",
            terminated(0, "Completed"),
            agent_end(),
            terminated(0, "Completed"),
        ),
    };
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("{name}-x7k2p"), "namespace": ns,
            "labels": job["spec"]["template"]["metadata"]["labels"],
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": name,
                "uid": job["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": job["spec"]["template"]["spec"],
        "status": {
            "phase": pod_phase,
            "conditions": if unscheduled {
                json!([{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                        "message": "0/3 nodes are available: 3 Insufficient cpu."}])
            } else {
                json!([])
            },
            "initContainerStatuses": [{"name": "receive", "image": "x", "imageID": "", "ready": false, "restartCount": 0, "state": init}],
            "containerStatuses": [
                {"name": main_name, "image": "x", "imageID": "", "ready": true, "restartCount": 0, "state": agent},
                {"name": "collect", "image": "x", "imageID": "", "ready": true, "restartCount": 0, "state": collect}
            ]
        }
    })
}

async fn serve_log(
    mut sock: TcpStream,
    state: Arc<Mutex<State>>,
    job: String,
) -> std::io::Result<()> {
    let (lines, hang, cut) = {
        let mut s = state.lock().unwrap();
        let check = s.jobs.get(&job).is_some_and(is_check);
        if check {
            (s.check_log_lines.clone(), false, None)
        } else {
            let cut = s.break_log_after.take();
            (s.log_lines.clone(), s.hang, cut)
        }
    };
    sock.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        .await?;
    for (i, l) in lines.iter().enumerate() {
        if cut == Some(i) {
            // The stream breaks mid-run: the client must reopen it.
            sock.write_all(b"0\r\n\r\n").await?;
            return sock.shutdown().await;
        }
        let text = format!("{l}\n");
        sock.write_all(format!("{:x}\r\n{text}\r\n", text.len()).as_bytes())
            .await?;
    }
    if hang {
        // The agent runs on; the client goes away when it gives up.
        crate::common::wait::until_async(
            "the client deletes the hung Job",
            std::time::Duration::from_secs(120),
            || state.lock().unwrap().phase.get(&job) == Some(&Phase::Deleted),
        )
        .await;
    } else {
        let mut s = state.lock().unwrap();
        if s.phase.get(&job) == Some(&Phase::Running) {
            s.phase.insert(job.clone(), Phase::Finished);
        }
    }
    sock.write_all(b"0\r\n\r\n").await?;
    sock.shutdown().await
}

fn untar(bytes: &[u8]) -> Files {
    let mut files = Files::new();
    let mut a = tar::Archive::new(bytes);
    for e in a.entries().unwrap() {
        let mut e = e.unwrap();
        let path = e
            .path()
            .unwrap()
            .to_string_lossy()
            .trim_end_matches('/')
            .to_string();
        if e.header().entry_type().is_dir() {
            files.insert(path, None);
        } else {
            let mut data = Vec::new();
            e.read_to_end(&mut data).unwrap();
            files.insert(path, Some(data));
        }
    }
    files
}

fn tar_of(files: &Files) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (p, data) in files {
        let mut h = tar::Header::new_gnu();
        match data {
            None => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_mode(0o755);
                h.set_size(0);
                b.append_data(&mut h, format!("{p}/"), std::io::empty())
                    .unwrap();
            }
            Some(d) => {
                h.set_mode(0o644);
                h.set_size(d.len() as u64);
                b.append_data(&mut h, p, d.as_slice()).unwrap();
            }
        }
    }
    b.into_inner().unwrap()
}

const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const STATUS: u8 = 3;
const CLOSE: u8 = 255;

async fn serve_exec(
    mut sock: TcpStream,
    state: Arc<Mutex<State>>,
    head: Head,
    index: usize,
    job: String,
) -> std::io::Result<()> {
    let key = head
        .headers
        .get("sec-websocket-key")
        .cloned()
        .unwrap_or_default();
    let offered = head
        .headers
        .get("sec-websocket-protocol")
        .cloned()
        .unwrap_or_default();
    let protocol = if offered.contains("v5.channel.k8s.io") {
        "v5.channel.k8s.io"
    } else {
        "v4.channel.k8s.io"
    };
    let accept = tungstenite::handshake::derive_accept_key(key.as_bytes());
    sock.write_all(
        format!("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: {protocol}\r\n\r\n")
            .as_bytes(),
    )
    .await?;
    let mut ws =
        tokio_tungstenite::WebSocketStream::from_raw_socket(sock, Role::Server, None).await;
    let container = head
        .query
        .iter()
        .find(|(k, _)| k == "container")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let command: Vec<String> = head
        .query
        .iter()
        .filter(|(k, _)| k == "command")
        .map(|(_, v)| v.clone())
        .collect();
    let wants_stdin = head.query.iter().any(|(k, v)| k == "stdin" && v == "true");
    let mut stdin = Vec::new();
    let mut closed = false;
    if wants_stdin {
        while let Some(Ok(msg)) = ws.next().await {
            match msg {
                Message::Binary(b) if b.first() == Some(&STDIN) => stdin.extend_from_slice(&b[1..]),
                Message::Binary(b) if b.len() == 2 && b[0] == CLOSE && b[1] == STDIN => {
                    closed = true;
                    break;
                }
                Message::Close(_) => break,
                _ => {}
            }
        }
    }
    {
        let mut s = state.lock().unwrap();
        let r = &mut s.requests[index];
        r.protocol = Some(protocol.into());
        r.stdin = stdin.clone();
        r.stdin_closed = closed;
    }
    let cmd: Vec<&str> = command.iter().map(String::as_str).collect();
    let mut out: Vec<u8> = Vec::new();
    let ok = match (container.as_str(), cmd.as_slice()) {
        ("receive", ["tar", "-x", "-f", "-", "-C", "/rascal"]) => {
            let files = untar(&stdin);
            let mut s = state.lock().unwrap();
            let s = &mut *s;
            let mut result: Files = files
                .iter()
                .filter(|(p, _)| p.starts_with("workspace") || p.starts_with("artifacts"))
                .map(|(p, d)| (p.clone(), d.clone()))
                .collect();
            if s.jobs.get(&job).is_some_and(is_check) {
                (s.check)(&mut result);
            } else {
                (s.agent)(&mut result);
            }
            s.results.insert(job.clone(), result);
            s.received.insert(job.clone(), files);
            true
        }
        ("receive", ["touch", "/rascal-handoff/ready"]) => {
            state
                .lock()
                .unwrap()
                .phase
                .insert(job.clone(), Phase::Running);
            true
        }
        ("collect", ["tar", "-c", "-f", "-", "-C", "/rascal", "workspace", "artifacts"]) => {
            out = {
                let s = state.lock().unwrap();
                match &s.hostile_result {
                    Some(h) => h.clone(),
                    None => tar_of(s.results.get(&job).unwrap_or(&Files::new())),
                }
            };
            true
        }
        ("collect", ["tar", "-c", "-f", "-", "-C", "/rascal/workspace", file]) => {
            // One file of the check's tree, as `tar -c ./FILE` writes it.
            let s = state.lock().unwrap();
            let rel = file.trim_start_matches("./");
            match s
                .results
                .get(&job)
                .and_then(|r| r.get(&format!("workspace/{rel}")))
            {
                Some(Some(data)) => {
                    let mut b = tar::Builder::new(Vec::new());
                    let mut h = tar::Header::new_gnu();
                    h.set_mode(0o644);
                    h.set_size(data.len() as u64);
                    b.append_data(&mut h, file, data.as_slice()).unwrap();
                    out = b.into_inner().unwrap();
                    true
                }
                _ => false,
            }
        }
        ("collect", ["touch", "/rascal-done/now"]) => {
            state.lock().unwrap().phase.insert(job.clone(), Phase::Done);
            true
        }
        _ => false,
    };
    for chunk in out.chunks(32 * 1024) {
        let mut frame = vec![STDOUT];
        frame.extend_from_slice(chunk);
        if ws.send(Message::binary(frame)).await.is_err() {
            return Ok(());
        }
    }
    let status = if ok {
        json!({"metadata": {}, "status": "Success"})
    } else {
        let mut e = vec![STDERR];
        e.extend_from_slice(format!("fake: unknown command {cmd:?} in {container}\n").as_bytes());
        let _ = ws.send(Message::binary(e)).await;
        json!({"metadata": {}, "status": "Failure", "message": "command terminated with non-zero exit code",
               "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": "2"}]}})
    };
    let mut frame = vec![STATUS];
    frame.extend_from_slice(status.to_string().as_bytes());
    let _ = ws.send(Message::binary(frame)).await;
    let _ = ws.close(None).await;
    Ok(())
}
