//! Copy mode for containers, for an engine with no shared disk (a remote
//! `DOCKER_HOST`): no bind mounts. The workspace, the instruction and the
//! artifacts directory go into the container's own volume at [`VOLUME`] as
//! a tar before it starts; when the agent exits its tree and artifacts come
//! back as tars and are unpacked — as untrusted input, see [`unpack`] —
//! into the local workspace, where the change is computed as usual.
//! Sizes and times go to the candidate's log.

pub mod pack;
pub mod unpack;

use crate::config::workspace::{resolve, WorkspaceMode};
use crate::exec::runner::{LogLine, Stream};
use bollard::query_parameters::{
    DownloadFromContainerOptionsBuilder, UploadToContainerOptionsBuilder,
};
use bollard::Docker;
use futures::StreamExt;
use std::io::{Seek, Write};
use std::path::Path;
use std::time::Instant;
use unpack::{Limits, Unpacked};

/// The container's own (anonymous) volume: written by the engine's archive
/// API even under a read-only root filesystem, removed with the container.
pub const VOLUME: &str = "/rascal";
/// The agent's working directory in copy mode.
pub const WORKSPACE: &str = "/rascal/workspace";
const ARTIFACTS: &str = "/rascal/artifacts";
/// What an agent may leave in its artifacts directory.
const ARTIFACT_LIMITS: Limits = Limits {
    bytes: 64 << 20,
    entries: 1000,
};
/// A file a check reads back (a test runner's results) is at most this.
const READ_BACK_MAX: u64 = 64 << 20;

/// Whether a container of `agent` runs in copy mode (its `workspace:`
/// setting, else automatic from `DOCKER_HOST`).
pub fn wanted(agent: Option<&crate::config::AgentConfig>) -> bool {
    let host = std::env::var("DOCKER_HOST").ok();
    resolve(agent.and_then(|a| a.workspace), host.as_deref()) == WorkspaceMode::Copy
}

/// One line from rascal in the candidate's log. The only place copy mode
/// sends to the log channel.
pub async fn say(logs: &crate::exec::runner::LogTx, text: impl std::fmt::Display) {
    let line = LogLine {
        stream: Stream::Stderr,
        text: format!("rascal: copy mode: {text}"),
    };
    let _ = logs.send(vec![line]).await;
}

fn size(bytes: u64) -> String {
    bytesize::ByteSize::b(bytes).display().iec().to_string()
}

/// Upload the workspace, instruction and artifacts of a created container
/// (before it starts). Returns the log line.
pub async fn upload(docker: &Docker, id: &str, sources: pack::Sources) -> Result<String, String> {
    let started = Instant::now();
    let (file, packed) = tokio::task::spawn_blocking(move || {
        let mut file =
            tempfile::tempfile().map_err(|e| format!("creating the upload archive: {e}"))?;
        let packed = pack::pack(&sources, std::io::BufWriter::new(&mut file))?;
        file.rewind()
            .map_err(|e| format!("reading the upload archive: {e}"))?;
        Ok::<_, String>((file, packed))
    })
    .await
    .map_err(|e| format!("packing the workspace: {e}"))??;
    let body = futures::stream::unfold(tokio::fs::File::from_std(file), |mut f| async move {
        use tokio::io::AsyncReadExt;
        let mut buf = vec![0u8; 1 << 20];
        match f.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok(bytes::Bytes::from(buf)), f))
            }
            Err(e) => Some((Err(e), f)),
        }
    });
    docker
        .upload_to_container(
            id,
            Some(
                UploadToContainerOptionsBuilder::default()
                    .path(VOLUME)
                    .build(),
            ),
            bollard::body_try_stream(body),
        )
        .await
        .map_err(|e| {
            format!(
                "uploading the workspace to the engine at {}: {e}",
                super::docker::engine_address()
            )
        })?;
    Ok(format!(
        "uploaded {} ({} files) in {} ms",
        size(packed.bytes),
        packed.files,
        started.elapsed().as_millis()
    ))
}

/// Bring the agent's tree back into `workspace` (keeping the host's own
/// `.git`) and its artifacts into `artifacts`. Returns the log lines.
pub async fn download(
    docker: &Docker,
    id: &str,
    workspace: &Path,
    artifacts: Option<&Path>,
) -> Result<Vec<String>, String> {
    let started = Instant::now();
    let (tree, wire) = bring_back(
        docker,
        id,
        WORKSPACE,
        pack::WORKSPACE_DIR,
        workspace,
        &[".git"],
        Limits::DEFAULT,
    )
    .await?;
    let mut lines = vec![format!(
        "downloaded {} ({} files; {} on the wire) in {} ms",
        size(tree.bytes),
        tree.files,
        size(wire),
        started.elapsed().as_millis()
    )];
    lines.extend(refusals("workspace", &tree));
    if let Some(a) = artifacts {
        let (got, _) = bring_back(
            docker,
            id,
            ARTIFACTS,
            pack::ARTIFACTS_DIR,
            a,
            &[],
            ARTIFACT_LIMITS,
        )
        .await
        .map_err(|e| format!("artifacts: {e}"))?;
        lines.extend(refusals("artifacts", &got));
    }
    Ok(lines)
}

/// What was refused, for the log: a count and the first entries.
fn refusals(what: &str, u: &Unpacked) -> Vec<String> {
    let mut lines = Vec::new();
    if u.git_unchanged > 0 {
        lines.push(format!(
            "kept the host's .git ({} files the container left unchanged)",
            u.git_unchanged
        ));
    }
    if u.refused.is_empty() {
        return lines;
    }
    lines.push(format!(
        "refused {} entr{} of the container's {what} (not written here):",
        u.refused.len(),
        if u.refused.len() == 1 { "y" } else { "ies" }
    ));
    for (path, why) in u.refused.iter().take(20) {
        lines.push(format!("  refused {}: {why}", crate::text::cut(path, 200)));
    }
    if u.refused.len() > 20 {
        lines.push(format!("  … and {} more", u.refused.len() - 20));
    }
    lines
}

/// Download `path` of the container to a spool file (capped), unpack it
/// into a staging directory beside `dest`, then make `dest` hold exactly
/// that (keeping `keep`).
async fn bring_back(
    docker: &Docker,
    id: &str,
    path: &str,
    prefix: &'static str,
    dest: &Path,
    keep: &'static [&'static str],
    limits: Limits,
) -> Result<(Unpacked, u64), String> {
    let parent = dest
        .parent()
        .ok_or_else(|| format!("{} has no parent directory", dest.display()))?
        .to_path_buf();
    let mut spool = tempfile::tempfile_in(&parent)
        .map_err(|e| format!("creating a spool file in {}: {e}", parent.display()))?;
    // Tar framing adds at most a block per entry and a little padding.
    let wire_cap = limits
        .bytes
        .saturating_add(limits.entries.saturating_mul(1024) + (1 << 20));
    let mut wire = 0u64;
    let mut stream = docker.download_from_container(
        id,
        Some(
            DownloadFromContainerOptionsBuilder::default()
                .path(path)
                .build(),
        ),
    );
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            format!(
                "downloading {path} from the engine at {}: {e}",
                super::docker::engine_address()
            )
        })?;
        wire += chunk.len() as u64;
        if wire > wire_cap {
            return Err(format!(
                "the container's {path} is larger than {}; nothing of it was taken\n  hint: an agent that leaves that much behind is refused; check its log for what it did",
                size(limits.bytes)
            ));
        }
        spool
            .write_all(&chunk)
            .map_err(|e| format!("spooling {path}: {e}"))?;
    }
    let dest = dest.to_path_buf();
    let unpacked = tokio::task::spawn_blocking(move || {
        spool
            .rewind()
            .map_err(|e| format!("reading the spool: {e}"))?;
        let staging = tempfile::Builder::new()
            .prefix(".rascal-copy-back-")
            .tempdir_in(&parent)
            .map_err(|e| format!("creating a staging directory in {}: {e}", parent.display()))?;
        let host = keep.contains(&".git").then_some(dest.as_path());
        let got = unpack::unpack(
            std::io::BufReader::new(spool),
            prefix,
            staging.path(),
            host,
            limits,
        )?;
        unpack::replace_contents(staging.path(), &dest, keep)?;
        Ok::<_, String>(got)
    })
    .await
    .map_err(|e| format!("unpacking {path}: {e}"))??;
    Ok((unpacked, wire))
}

/// Read back files a check left in its container's workspace (paths
/// relative to it): None for one that is missing, not a regular file, or
/// over 64 MiB.
pub async fn read_files(docker: &Docker, id: &str, files: &[String]) -> Vec<Option<Vec<u8>>> {
    let mut out = Vec::new();
    for f in files {
        out.push(read_file(docker, id, f).await);
    }
    out
}

async fn read_file(docker: &Docker, id: &str, rel: &str) -> Option<Vec<u8>> {
    let clean = Path::new(rel)
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !clean || rel.is_empty() {
        return None;
    }
    let path = format!("{WORKSPACE}/{rel}");
    let mut stream = docker.download_from_container(
        id,
        Some(
            DownloadFromContainerOptionsBuilder::default()
                .path(&path)
                .build(),
        ),
    );
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        bytes.extend_from_slice(&chunk.ok()?);
        if bytes.len() as u64 > READ_BACK_MAX + (1 << 20) {
            return None;
        }
    }
    let mut tar = tar::Archive::new(&bytes[..]);
    let mut entry = tar.entries().ok()?.next()?.ok()?;
    let regular = entry.header().entry_type().is_file();
    let size = entry.header().size().ok()?;
    if !regular || size > READ_BACK_MAX {
        return None;
    }
    let mut data = Vec::with_capacity(size as usize);
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut entry, size), &mut data).ok()?;
    Some(data)
}
