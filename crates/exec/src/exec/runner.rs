//! Runs one command as a child process: its own process group, a chosen
//! environment, stdin fed, stdout/stderr read line by line (long lines cut,
//! never buffered without bound), timeout → SIGTERM then SIGKILL of the whole
//! group, and cancellation. Used by the process launcher and by guardrails.

#![allow(unsafe_code)]

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use rascal_core::model::log::{LogLine, Stream};

/// Output lines in batches (one per read), on a bounded queue: when rascal
/// is behind, the reader waits and the child's pipe fills — backpressure,
/// never a growing queue, never a dropped line.
pub type LogTx = mpsc::Sender<Vec<LogLine>>;
pub type LogRx = mpsc::Receiver<Vec<LogLine>>;

/// Batches queued between a reader and its consumer at most.
pub(crate) const LOG_BATCHES: usize = 16;

pub fn log_channel() -> (LogTx, LogRx) {
    mpsc::channel(LOG_BATCHES)
}

/// Which environment the child sees.
#[derive(Debug, Clone)]
pub enum Env {
    /// The host environment plus these.
    Inherit(Vec<(String, String)>),
    /// Only these (a scrubbed environment).
    Only(Vec<(String, String)>),
}

#[derive(Debug, Clone)]
pub struct CommandSpec {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub env: Env,
    pub stdin: Option<Vec<u8>>,
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// Lines longer than this are cut.
    pub max_line: usize,
    /// Process and memory limits of the command and all it starts (see
    /// `exec::limits`); None: unlimited (rascal's own commands, in place).
    pub limits: Option<rascal_core::config::limits::Limits>,
}

impl CommandSpec {
    pub fn new(argv: Vec<String>, cwd: PathBuf, timeout: Duration) -> Self {
        CommandSpec {
            argv,
            cwd,
            env: Env::Inherit(Vec::new()),
            stdin: None,
            timeout,
            grace: Duration::from_secs(3),
            max_line: 64 * 1024,
            limits: None,
        }
    }

    /// `sh -c COMMAND`.
    pub fn shell(command: &str, cwd: PathBuf, timeout: Duration) -> Self {
        Self::new(vec!["sh".into(), "-c".into(), command.into()], cwd, timeout)
    }
}

/// How a child ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub duration_ms: u64,
    /// Set by a launcher that can say why the agent died (e.g. OOM-killed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The limit the command ran into and was stopped at (`512 processes`,
    /// `memory 2 GiB`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
}

impl Exit {
    pub fn success(&self) -> bool {
        self.code == Some(0) && !self.timed_out && !self.cancelled
    }

    /// Why this exit is not a clean answer, if it is not.
    pub fn problem(&self, timeout: Duration) -> Option<String> {
        if let Some(l) = &self.limit {
            Some(format!("stopped at its limit (limit: {l})"))
        } else if let Some(f) = &self.failure {
            Some(f.clone())
        } else if self.timed_out {
            Some(format!("timed out after {}", human(timeout)))
        } else if self.cancelled {
            Some("cancelled".into())
        } else if let Some(sig) = self.signal {
            Some(format!("killed by signal {sig}"))
        } else if self.code == Some(127) {
            Some("command not found (exit 127)".into())
        } else if self.code == Some(126) {
            Some("command not executable (exit 126)".into())
        } else {
            None
        }
    }
}

pub fn human(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{}m{:02}s", d.as_secs() / 60, d.as_secs() % 60)
    }
}

/// The child ran (whatever its exit); `tail` holds its last output lines.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub exit: Exit,
    pub tail: String,
    /// Results files written again after the runner first wrote them
    /// (`results_watch`); empty when none was asked for or watched.
    pub rewritten: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("`{program}` could not be started: {source}\n  hint: {hint}")]
    Spawn {
        program: String,
        source: std::io::Error,
        hint: String,
    },
    #[error("empty command")]
    Empty,
    #[error("could not set the command's limits: {0}")]
    Limits(String),
}

type Tail = Arc<Mutex<VecDeque<String>>>;

/// Lines of output kept for a report, each cut to `TAIL_LINE_BYTES`.
pub const TAIL_LINES: usize = 40;
pub const TAIL_LINE_BYTES: usize = 400;

fn spawn_error(spec: &CommandSpec, program: &str, e: std::io::Error) -> RunError {
    RunError::Spawn {
        program: program.to_string(),
        hint: if e.kind() == std::io::ErrorKind::NotFound {
            format!("install `{program}` or fix the command in .rascal/config.yaml (it must be on PATH or an existing path)")
        } else if spec.cwd.exists() {
            "check that the program is executable".into()
        } else {
            format!("working directory {} does not exist", spec.cwd.display())
        },
        source: e,
    }
}

/// Run the command to completion, timeout or cancellation. Lines are sent
/// to `lines` as they arrive (when given).
pub async fn run(
    spec: &CommandSpec,
    lines: Option<LogTx>,
    cancel: &CancellationToken,
) -> Result<Outcome, RunError> {
    let program = spec.argv.first().ok_or(RunError::Empty)?;
    let mut cmd = command(spec, program);
    let cgroup = match spec.limits {
        Some(l) if crate::exec::limits::mechanism().is_cgroup() => Some(
            crate::exec::limits::Cgroup::create(crate::exec::limits::mechanism(), l)
                .map_err(|e| RunError::Limits(e.to_string()))?,
        ),
        _ => None,
    };
    if let Some(l) = spec.limits {
        let procs = cgroup.as_ref().map(|c| c.procs_files()).unwrap_or_default();
        let rlimits = cgroup.is_none().then_some(l);
        // SAFETY: the hook only makes async-signal-safe calls (see before_exec).
        unsafe {
            cmd.pre_exec(crate::exec::limits::before_exec(procs, rlimits));
        }
    }
    let started = Instant::now();
    let spawned = cmd.spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            if let Some(c) = cgroup {
                c.remove().await;
            }
            return Err(spawn_error(spec, program, e));
        }
    };
    let pgid = child.id().map(|p| p as i32);

    if let (Some(input), Some(mut stdin)) = (spec.stdin.clone(), child.stdin.take()) {
        // A child that never reads stdin must not block us: write in the background.
        tokio::spawn(async move {
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        });
    }

    let ring: Tail = Arc::new(Mutex::new(VecDeque::with_capacity(TAIL_LINES)));
    let readers = read_output(&mut child, spec.max_line, &lines, &ring);

    let mut exit = Exit::default();
    let mut watched = Watched {
        child: &mut child,
        pgid,
        cgroup: cgroup.as_ref(),
    };
    let (status, mut hit) = watched.wait(spec, cancel, &mut exit).await;
    // Leftover background processes of the child's group go too.
    signal_group(pgid, libc::SIGKILL);
    if let Some(c) = cgroup {
        // A process killed for memory while the command went on counts too.
        hit = hit.or_else(|| c.hit());
        c.remove().await;
    }
    if let (Some(h), Some(l)) = (hit, &spec.limits) {
        exit.limit = Some(h.reason(l));
    }
    if let Some(s) = status {
        use std::os::unix::process::ExitStatusExt;
        exit.code = s.code();
        exit.signal = s.signal();
    }
    for r in readers {
        let _ = tokio::time::timeout(Duration::from_secs(2), r).await;
    }
    exit.duration_ms = started.elapsed().as_millis() as u64;

    let tail = ring
        .lock()
        .map(|r| r.iter().cloned().collect::<Vec<_>>().join("\n"))
        .unwrap_or_default();
    Ok(Outcome {
        exit,
        tail,
        rewritten: Vec::new(),
    })
}

/// The command as the spec says: its arguments, directory, environment
/// and piped output, in a process group of its own.
fn command(spec: &CommandSpec, program: &str) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(&spec.argv[1..])
        .current_dir(&spec.cwd)
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    match &spec.env {
        Env::Inherit(extra) => {
            cmd.envs(extra.iter().map(|(k, v)| (k, v)));
        }
        Env::Only(vars) => {
            cmd.env_clear();
            cmd.envs(vars.iter().map(|(k, v)| (k, v)));
        }
    }
    cmd
}

/// Read the child's stdout and stderr line by line (to `lines` when
/// given, the last ones kept in `ring`).
fn read_output(
    child: &mut tokio::process::Child,
    max_line: usize,
    lines: &Option<LogTx>,
    ring: &Tail,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut readers = Vec::new();
    for (stream, reader) in [
        (
            Stream::Stdout,
            child
                .stdout
                .take()
                .map(|r| Box::new(r) as Box<dyn AsyncRead + Unpin + Send>),
        ),
        (
            Stream::Stderr,
            child
                .stderr
                .take()
                .map(|r| Box::new(r) as Box<dyn AsyncRead + Unpin + Send>),
        ),
    ] {
        if let Some(reader) = reader {
            let out = lines.clone();
            let tail = ring.clone();
            readers.push(tokio::spawn(read_lines(
                reader, stream, max_line, out, tail,
            )));
        }
    }
    readers
}

/// A running child, its process group and the cgroup holding it to its
/// limits.
struct Watched<'a> {
    child: &'a mut tokio::process::Child,
    pgid: Option<i32>,
    cgroup: Option<&'a crate::exec::limits::Cgroup>,
}

impl Watched<'_> {
    /// Wait for the child to exit; on a timeout or a cancel (marked in
    /// `exit`) SIGTERM it, then SIGKILL after the grace period; over a
    /// limit kill it at once. Its exit status, and the limit it hit.
    async fn wait(
        &mut self,
        spec: &CommandSpec,
        cancel: &CancellationToken,
        exit: &mut Exit,
    ) -> (
        Option<std::process::ExitStatus>,
        Option<crate::exec::limits::Hit>,
    ) {
        let cgroup = self.cgroup;
        let watch = async {
            match cgroup {
                Some(c) => loop {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if let Some(hit) = c.hit() {
                        break hit;
                    }
                },
                None => std::future::pending().await,
            }
        };
        let mut hit = None;
        let status = tokio::select! {
            s = self.child.wait() => s.ok(),
            _ = tokio::time::sleep(spec.timeout) => { exit.timed_out = true; None }
            _ = cancel.cancelled() => { exit.cancelled = true; None }
            h = watch => { hit = Some(h); None }
        };
        let status = match status {
            Some(s) => Some(s),
            // Over a limit: no grace, the whole sandbox goes at once.
            None if hit.is_some() => {
                signal_group(self.pgid, libc::SIGKILL);
                if let Some(c) = cgroup {
                    c.kill_all();
                }
                self.child.wait().await.ok()
            }
            None => {
                signal_group(self.pgid, libc::SIGTERM);
                match tokio::time::timeout(spec.grace, self.child.wait()).await {
                    Ok(s) => s.ok(),
                    Err(_) => {
                        signal_group(self.pgid, libc::SIGKILL);
                        self.child.wait().await.ok()
                    }
                }
            }
        };
        (status, hit)
    }
}

fn signal_group(pgid: Option<i32>, sig: i32) {
    if let Some(p) = pgid {
        if p > 0 {
            // SAFETY: killpg with a positive pgid we created; errors (ESRCH) are fine.
            unsafe {
                libc::killpg(p, sig);
            }
        }
    }
}

async fn read_lines(
    mut reader: Box<dyn AsyncRead + Unpin + Send>,
    stream: Stream,
    max: usize,
    out: Option<LogTx>,
    tail: Tail,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    let mut dropped: usize = 0;
    let mut batch: Vec<LogLine> = Vec::new();
    let emit = |line: &mut Vec<u8>, dropped: &mut usize, batch: &mut Vec<LogLine>| {
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        let mut text = String::from_utf8_lossy(line).into_owned();
        if *dropped > 0 {
            text.push_str(&format!(" …[line cut: {} more bytes]", *dropped));
        }
        if out.is_some() {
            batch.push(LogLine { stream, text });
        } else if let Ok(mut ring) = tail.lock() {
            if ring.len() == TAIL_LINES {
                ring.pop_front();
            }
            ring.push_back(rascal_core::text::cut(&text, TAIL_LINE_BYTES));
        }
        line.clear();
        *dropped = 0;
    };
    let mut eof = false;
    while !eof {
        let n = match reader.read(&mut buf).await {
            Ok(0) | Err(_) => {
                eof = true;
                0
            }
            Ok(n) => n,
        };
        let mut rest = &buf[..n];
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            take(&mut line, &rest[..i], max, &mut dropped);
            emit(&mut line, &mut dropped, &mut batch);
            rest = &rest[i + 1..];
        }
        take(&mut line, rest, max, &mut dropped);
        if eof && (!line.is_empty() || dropped > 0) {
            emit(&mut line, &mut dropped, &mut batch);
        }
        if batch.is_empty() {
            continue;
        }
        // The report's tail: the batch's last lines.
        if let Ok(mut ring) = tail.lock() {
            for l in batch.iter().skip(batch.len().saturating_sub(TAIL_LINES)) {
                if ring.len() == TAIL_LINES {
                    ring.pop_front();
                }
                ring.push_back(rascal_core::text::cut(&l.text, TAIL_LINE_BYTES));
            }
        }
        if let Some(o) = &out {
            // Waits while the consumer is behind: the child's pipe fills.
            let _ = o.send(std::mem::take(&mut batch)).await;
        }
    }
}

/// Add `bytes` (no newline among them) to the line, keeping `max` bytes.
fn take(line: &mut Vec<u8>, bytes: &[u8], max: usize, dropped: &mut usize) {
    let room = max.saturating_sub(line.len()).min(bytes.len());
    line.extend_from_slice(&bytes[..room]);
    *dropped += bytes.len() - room;
}
