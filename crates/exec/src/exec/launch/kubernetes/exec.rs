//! Commands rascal runs in the candidate's pod over the exec subresource
//! (a websocket, `v5.channel.k8s.io`, as `kubectl cp` does): `tar -x` in
//! `receive` with the workspace on stdin, `tar -c` in `collect` with the
//! result on stdout, and the `touch`es that end each wait. An exec counts
//! only when its status channel says Success.

use super::super::{LaunchError, LaunchSpec};
use super::spec;
use super::transfer::{self, Inbound};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, AttachParams};
use std::path::{Path, PathBuf};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Bytes of a command's stderr kept for messages.
const STDERR_KEPT: usize = 16 * 1024;
/// Bytes per exec websocket frame (kube-rs sends 1 KiB frames unless
/// told; a tree of megabytes would take thousands of them). 32 KiB is what
/// `kubectl cp` writes at a time.
const FRAME: usize = 32 * 1024;

fn err(e: impl std::fmt::Display) -> LaunchError {
    LaunchError::Start(e.to_string())
}

/// Read at most `cap` bytes into the end of `keep`; drain the rest.
async fn drain(mut from: impl tokio::io::AsyncRead + Unpin, cap: usize) -> Vec<u8> {
    let mut keep = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let room = cap.saturating_sub(keep.len());
        keep.extend_from_slice(&buf[..n.min(room)]);
    }
    keep
}

/// Whether an exec's status says it succeeded; else what it said.
fn outcome(
    status: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Status>,
    stderr: &[u8],
    what: &str,
) -> Result<(), LaunchError> {
    match status {
        Some(s) if s.status.as_deref() == Some("Success") => Ok(()),
        Some(s) => Err(err(format!(
            "{what} failed: {} {}",
            s.message.unwrap_or_default(),
            String::from_utf8_lossy(stderr).trim()
        ))),
        None => Err(err(format!(
            "{what}: the API server closed the exec stream without a status {}",
            String::from_utf8_lossy(stderr).trim()
        ))),
    }
}

/// Run `cmd` in `container`, feeding `stdin` from a file and writing its
/// stdout to `stdout` (at most `cap` bytes; more is an error).
async fn run(
    pods: &Api<Pod>,
    pod: &str,
    container: &str,
    cmd: &[&str],
    stdin: Option<&Path>,
    stdout: Option<(&Path, u64)>,
) -> Result<(), LaunchError> {
    let what = format!(
        "`{}` in container `{container}` of pod {pod}",
        cmd.join(" ")
    );
    let params = AttachParams::default()
        .container(container)
        .stdin(stdin.is_some())
        .stdout(stdout.is_some())
        .stderr(true)
        .max_stdin_buf_size(FRAME)
        .max_stdout_buf_size(FRAME);
    let mut proc = pods
        .exec(pod, cmd.iter().copied(), &params)
        .await
        .map_err(|e| err(format!("could not start {what}: {e}")))?;
    let status = proc.take_status();
    let errors = proc.stderr().map(|s| tokio::spawn(drain(s, STDERR_KEPT)));
    let reader = match (proc.stdout(), stdout) {
        (Some(mut out), Some((path, cap))) => {
            let path = path.to_path_buf();
            Some(tokio::spawn(async move {
                let mut file = tokio::fs::File::create(&path).await?;
                let mut total = 0u64;
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let n = out.read(&mut buf).await?;
                    if n == 0 {
                        break;
                    }
                    total += n as u64;
                    if total > cap {
                        return Err(std::io::Error::other(format!(
                            "the result is larger than {cap} bytes"
                        )));
                    }
                    file.write_all(&buf[..n]).await?;
                }
                file.flush().await?;
                Ok::<u64, std::io::Error>(total)
            }))
        }
        _ => None,
    };
    if let (Some(mut input), Some(path)) = (proc.stdin(), stdin) {
        let mut file = tokio::fs::File::open(path)
            .await
            .map_err(|e| err(format!("reading {}: {e}", path.display())))?;
        tokio::io::copy(&mut file, &mut input)
            .await
            .map_err(|e| err(format!("sending to {what}: {e}")))?;
        input
            .shutdown()
            .await
            .map_err(|e| err(format!("sending to {what}: {e}")))?;
        // Dropping the writer ends stdin (v5: a CLOSE frame).
        drop(input);
    }
    let status = match status {
        Some(s) => s.await,
        None => None,
    };
    if let Some(r) = reader {
        match r.await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(err(format!("{what}: {e}"))),
            Err(e) => return Err(err(format!("{what}: {e}"))),
        }
    }
    let stderr = match errors {
        Some(h) => h.await.unwrap_or_default(),
        None => Vec::new(),
    };
    let _ = proc.join().await;
    outcome(status, &stderr, &what)
}

fn host_path(spec: &LaunchSpec, key: &str) -> Option<PathBuf> {
    spec.env
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| PathBuf::from(v))
}

/// Hand the pod the workspace, the instruction and stdin, then let the
/// init container end.
pub(crate) async fn send_workspace(
    pods: &Api<Pod>,
    pod: &str,
    spec: &LaunchSpec,
) -> Result<(), LaunchError> {
    let scratch = tempfile::Builder::new()
        .prefix("rascal-kube-in-")
        .tempfile()
        .map_err(|e| err(format!("making a scratch file: {e}")))?;
    let path = scratch.path().to_path_buf();
    let workdir = spec.workdir.clone();
    let instruction = host_path(spec, "RASCAL_INSTRUCTION_FILE");
    let criteria = host_path(spec, crate::exec::env::CRITERIA_ENV);
    let stdin = spec.stdin.clone().unwrap_or_default();
    let tree = spec.upload.clone();
    let packed = tokio::task::spawn_blocking(move || {
        let file = std::fs::File::create(&path)?;
        transfer::pack(
            &Inbound {
                workdir: &workdir,
                tree: tree.as_ref(),
                instruction: instruction.as_deref(),
                criteria: criteria.as_deref(),
                stdin: &stdin,
            },
            std::io::BufWriter::new(file),
        )
    })
    .await
    .map_err(|e| err(e.to_string()))?;
    packed.map_err(|e| {
        err(format!(
            "packing the workspace {} for the pod: {e}",
            spec.workdir.display()
        ))
    })?;
    run(
        pods,
        pod,
        spec::RECEIVE,
        &["tar", "-x", "-f", "-", "-C", spec::RASCAL_DIR],
        Some(scratch.path()),
        None,
    )
    .await?;
    run(
        pods,
        pod,
        spec::RECEIVE,
        &["touch", spec::READY],
        None,
        None,
    )
    .await
}

/// Fetch the result from `collect`, unpack it under the rules of
/// [`transfer::unpack`] and swap it in for the worktree (keeping the
/// host's `.git`) and the artifacts directory. Returns lines for the log:
/// the `.git` entries not taken.
pub(crate) async fn fetch_result(
    pods: &Api<Pod>,
    pod: &str,
    spec: &LaunchSpec,
    cap: u64,
) -> Result<Vec<String>, LaunchError> {
    let parent = spec
        .workdir
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(std::env::temp_dir);
    let scratch = tempfile::Builder::new()
        .prefix(".rascal-kube-out-")
        .tempdir_in(&parent)
        .map_err(|e| {
            err(format!(
                "making a staging directory in {}: {e}",
                parent.display()
            ))
        })?;
    let archive = scratch.path().join("result.tar");
    // Headers and padding come on top of the content's cap.
    let wire_cap = cap.saturating_add(cap / 8).saturating_add(1 << 20);
    run(
        pods,
        pod,
        spec::COLLECT,
        &[
            "tar",
            "-c",
            "-f",
            "-",
            "-C",
            spec::RASCAL_DIR,
            transfer::WORKSPACE_DIR,
            transfer::ARTIFACTS_DIR,
        ],
        None,
        Some((&archive, wire_cap)),
    )
    .await?;
    let staging = scratch.path().join("staging");
    let workdir = spec.workdir.clone();
    let artifacts = host_path(spec, crate::exec::env::ARTIFACTS_ENV);
    let candidate = spec.candidate.clone();
    tokio::task::spawn_blocking(move || {
        std::fs::create_dir(&staging).map_err(|e| e.to_string())?;
        let file = std::fs::File::open(&archive).map_err(|e| e.to_string())?;
        let got = transfer::unpack(std::io::BufReader::new(file), &staging, cap).map_err(|e| {
            format!(
                "the result of candidate `{candidate}` was refused: {e}; nothing of it was applied"
            )
        })?;
        transfer::swap_in(&staging.join(transfer::WORKSPACE_DIR), &workdir, &[".git"])
            .map_err(|e| format!("applying the result to {}: {e}", workdir.display()))?;
        if let Some(a) = artifacts {
            transfer::swap_in(&staging.join(transfer::ARTIFACTS_DIR), &a, &[])
                .map_err(|e| format!("applying the artifacts to {}: {e}", a.display()))?;
        }
        let mut lines = Vec::new();
        if !got.git_refused.is_empty() {
            lines.push(format!(
                "refused {} .git entr{} of the pod's result (the host keeps its own .git: hooks and config there could run code here):",
                got.git_refused.len(),
                if got.git_refused.len() == 1 { "y" } else { "ies" }
            ));
            for p in got.git_refused.iter().take(20) {
                lines.push(format!("  refused {}", rascal_core::text::cut(p, 200)));
            }
        }
        Ok::<Vec<String>, String>(lines)
    })
    .await
    .map_err(|e| err(e.to_string()))?
    .map_err(err)
}

/// Let `collect` end, so the pod and the Job complete.
pub(crate) async fn finish(pods: &Api<Pod>, pod: &str) -> Result<(), LaunchError> {
    run(pods, pod, spec::COLLECT, &["touch", spec::DONE], None, None).await
}

/// A file a check reads back (a test runner's results) is at most this.
pub(crate) const READ_BACK_MAX: u64 = 64 << 20;

/// Read back `files` (paths relative to the workspace) from `collect`,
/// one `tar -c` each: None for one that is missing, not a regular file,
/// over [`READ_BACK_MAX`], or named outside the workspace. The archive is
/// the check's (hostile) output: only its one regular entry of that name
/// is taken.
pub(crate) async fn read_files(
    pods: &Api<Pod>,
    pod: &str,
    files: &[String],
) -> Vec<Option<Vec<u8>>> {
    let mut out = Vec::new();
    for f in files {
        out.push(read_file(pods, pod, f).await);
    }
    out
}

async fn read_file(pods: &Api<Pod>, pod: &str, rel: &str) -> Option<Vec<u8>> {
    let clean = !rel.is_empty()
        && Path::new(rel)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !clean {
        return None;
    }
    let scratch = tempfile::NamedTempFile::new().ok()?;
    let dir = format!("{}/{}", spec::RASCAL_DIR, transfer::WORKSPACE_DIR);
    let name = format!("./{rel}");
    run(
        pods,
        pod,
        spec::COLLECT,
        &["tar", "-c", "-f", "-", "-C", dir.as_str(), name.as_str()],
        None,
        Some((scratch.path(), READ_BACK_MAX + (1 << 20))),
    )
    .await
    .ok()?;
    let file = std::fs::File::open(scratch.path()).ok()?;
    let mut tar = tar::Archive::new(file);
    let mut entry = tar.entries().ok()?.next()?.ok()?;
    let named = entry.path().ok()?.into_owned();
    let named = named.strip_prefix(".").unwrap_or(&named).to_path_buf();
    let regular = entry.header().entry_type().is_file();
    let size = entry.header().size().ok()?;
    if !regular || size > READ_BACK_MAX || named != Path::new(rel) {
        return None;
    }
    let mut data = Vec::with_capacity(size as usize);
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut entry, size), &mut data).ok()?;
    Some(data)
}
