//! Copy mode for containers, for an engine with no shared disk (a remote
//! `DOCKER_HOST`): no bind mounts. The workspace, its git directory (beside
//! it at [`GIT`], with a `.git` file in the workspace pointing there), the
//! instruction and the artifacts directory go into the container's own
//! volume at [`VOLUME`] as a tar before it starts; when the agent exits
//! its tree (never the git directory: the host keeps its own) and
//! artifacts come back as tars and are unpacked — as untrusted input, see
//! [`unpack`] — into the local workspace, where the change is computed as
//! usual. Sizes and times, and the agent's HEAD in the container, go to
//! the candidate's log.

pub mod pack;
pub mod unpack;

use crate::exec::runner::{LogLine, Stream};
use bollard::query_parameters::{
    DownloadFromContainerOptionsBuilder, UploadToContainerOptionsBuilder,
};
use bollard::Docker;
use futures::StreamExt;
use rascal_core::config::workspace::{resolve, WorkspaceMode};
use std::io::{Seek, Write};
use std::path::Path;
use std::time::Instant;
use unpack::{Limits, Unpacked};

/// The container's own (anonymous) volume: written by the engine's archive
/// API even under a read-only root filesystem, removed with the container.
pub(crate) const VOLUME: &str = "/rascal";
/// The agent's working directory in copy mode.
pub(crate) const WORKSPACE: &str = "/rascal/workspace";
/// The workspace's git directory in the container (see `pack::GIT_POINTER`).
pub(crate) const GIT: &str = "/rascal/git";
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
pub fn wanted(agent: Option<&rascal_core::config::AgentConfig>) -> bool {
    let host = std::env::var("DOCKER_HOST").ok();
    resolve(agent.and_then(|a| a.workspace), host.as_deref()) == WorkspaceMode::Copy
}

/// One line from rascal in the candidate's log. The only place copy mode
/// sends to the log channel.
pub(crate) async fn say(logs: &crate::exec::runner::LogTx, text: impl std::fmt::Display) {
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
pub(crate) async fn upload(
    docker: &Docker,
    id: &str,
    sources: pack::Sources,
) -> crate::error::Result<String> {
    let started = Instant::now();
    let (file, packed) = tokio::task::spawn_blocking(move || {
        let mut file = tempfile::tempfile()
            .map_err(|e| crate::Error::Copy(format!("creating the upload archive: {e}")))?;
        let packed = pack::pack(&sources, std::io::BufWriter::new(&mut file))?;
        file.rewind()
            .map_err(|e| crate::Error::Copy(format!("reading the upload archive: {e}")))?;
        Ok::<_, crate::Error>((file, packed))
    })
    .await
    .map_err(|e| crate::Error::Copy(format!("packing the workspace: {e}")))??;
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
            crate::Error::Copy(format!(
                "uploading the workspace to the engine at {}: {e}",
                super::engine::engine_address()
            ))
        })?;
    Ok(format!(
        "uploaded {} ({} files) in {} ms",
        size(packed.bytes),
        packed.files,
        started.elapsed().as_millis()
    ))
}

/// Bring the agent's tree back into `workspace` (keeping the host's own
/// `.git`; the container's git directory is not downloaded) and its
/// artifacts into `artifacts`. Returns the log lines, the agent's HEAD in
/// the container among them.
pub(crate) async fn download(
    docker: &Docker,
    id: &str,
    workspace: &Path,
    artifacts: Option<&Path>,
) -> crate::error::Result<Vec<String>> {
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
    lines.push(format!(
        "the container's git directory ({GIT}) was not downloaded: the host keeps its own .git{}",
        if tree.pointer_intact {
            ""
        } else {
            " (the workspace's .git pointer was gone or changed)"
        }
    ));
    lines.push(agent_head(docker, id, workspace).await);
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
        .map_err(|e| crate::Error::Copy(format!("artifacts: {e}")))?;
        lines.extend(refusals("artifacts", &got));
    }
    Ok(lines)
}

/// What was refused, for the log: a count and the first entries.
fn refusals(what: &str, u: &Unpacked) -> Vec<String> {
    let mut lines = Vec::new();
    if u.refused.is_empty() {
        return lines;
    }
    lines.push(format!(
        "refused {} entr{} of the container's {what} (not written here):",
        u.refused.len(),
        if u.refused.len() == 1 { "y" } else { "ies" }
    ));
    for (path, why) in u.refused.iter().take(20) {
        lines.push(format!(
            "  refused {}: {why}",
            rascal_core::text::cut(path, 200)
        ));
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
) -> crate::error::Result<(Unpacked, u64)> {
    let parent = dest
        .parent()
        .ok_or_else(|| crate::Error::Copy(format!("{} has no parent directory", dest.display())))?
        .to_path_buf();
    let mut spool = tempfile::tempfile_in(&parent).map_err(|e| {
        crate::Error::Copy(format!(
            "creating a spool file in {}: {e}",
            parent.display()
        ))
    })?;
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
            crate::Error::Copy(format!(
                "downloading {path} from the engine at {}: {e}",
                super::engine::engine_address()
            ))
        })?;
        wire += chunk.len() as u64;
        if wire > wire_cap {
            return Err(crate::Error::Copy(format!(
                "the container's {path} is larger than {}; nothing of it was taken\n  hint: an agent that leaves that much behind is refused; check its log for what it did",
                size(limits.bytes)
            )));
        }
        spool
            .write_all(&chunk)
            .map_err(|e| crate::Error::Copy(format!("spooling {path}: {e}")))?;
    }
    let dest = dest.to_path_buf();
    let unpacked = tokio::task::spawn_blocking(move || {
        spool
            .rewind()
            .map_err(|e| crate::Error::Copy(format!("reading the spool: {e}")))?;
        let staging = tempfile::Builder::new()
            .prefix(".rascal-copy-back-")
            .tempdir_in(&parent)
            .map_err(|e| {
                crate::Error::Copy(format!(
                    "creating a staging directory in {}: {e}",
                    parent.display()
                ))
            })?;
        let pointer = keep.contains(&".git").then_some(pack::GIT_POINTER);
        let got = unpack::unpack(
            std::io::BufReader::new(spool),
            prefix,
            staging.path(),
            pointer,
            limits,
        )?;
        unpack::replace_contents(staging.path(), &dest, keep)?;
        Ok::<_, crate::Error>(got)
    })
    .await
    .map_err(|e| crate::Error::Copy(format!("unpacking {path}: {e}")))??;
    Ok((unpacked, wire))
}

/// Read back files a check left in its container's workspace (paths
/// relative to it): None for one that is missing, not a regular file, or
/// over 64 MiB.
pub(crate) async fn read_files(
    docker: &Docker,
    id: &str,
    files: &[String],
) -> Vec<Option<Vec<u8>>> {
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
    read_path(docker, id, &format!("{WORKSPACE}/{rel}"), READ_BACK_MAX).await
}

/// The agent's HEAD in the container, for the log: its commits stay
/// there (the change is computed from the files it left), so the log says
/// whether it made any. What the container wrote is hostile: only a
/// commit id (hex) and a plain `refs/` name are repeated.
async fn agent_head(docker: &Docker, id: &str, workspace: &Path) -> String {
    let base = git2::Repository::open(workspace)
        .ok()
        .and_then(|r| r.head().ok()?.target())
        .map(|o| o.to_string());
    let read = |p: String| async move {
        read_path(docker, id, &p, 4096)
            .await
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
    };
    let Some(head) = read(format!("{GIT}/HEAD")).await else {
        return "could not read the agent's HEAD in the container (its git directory's HEAD is gone)".into();
    };
    let (name, commit) = match head.strip_prefix("ref: ") {
        Some(r) => {
            let plain = r.starts_with("refs/")
                && r.len() <= 200
                && r.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
                && r.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c));
            if !plain {
                return "the agent's HEAD in the container names an odd ref (not repeated here)"
                    .into();
            }
            (Some(r.to_string()), read(format!("{GIT}/{r}")).await)
        }
        None => (None, Some(head)),
    };
    let commit = commit
        .filter(|c| (c.len() == 40 || c.len() == 64) && c.chars().all(|x| x.is_ascii_hexdigit()));
    let on = name.map(|n| format!(" on {n}")).unwrap_or_default();
    match (commit, base) {
        (Some(c), Some(b)) if c.eq_ignore_ascii_case(&b) => {
            format!("the agent's HEAD in the container is the base commit {}{on}: it made no commit", &b[..12])
        }
        (Some(c), b) => format!(
            "the agent's HEAD in the container is {c}{on}, not the base {}: its commits stay in the container; the change is computed from the files it left, as always",
            b.as_deref().map(|b| &b[..12]).unwrap_or("(unknown)")
        ),
        (None, _) => format!("the agent's HEAD in the container{on} is not a commit id rascal can read (a packed or odd ref)"),
    }
}

/// A regular file of the container at `path`, at most `max` bytes; None
/// when it is missing, larger, or not a regular file.
async fn read_path(docker: &Docker, id: &str, path: &str, max: u64) -> Option<Vec<u8>> {
    let mut stream = docker.download_from_container(
        id,
        Some(
            DownloadFromContainerOptionsBuilder::default()
                .path(path)
                .build(),
        ),
    );
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        bytes.extend_from_slice(&chunk.ok()?);
        if bytes.len() as u64 > max + (1 << 20) {
            return None;
        }
    }
    let mut tar = tar::Archive::new(&bytes[..]);
    let mut entry = tar.entries().ok()?.next()?.ok()?;
    let regular = entry.header().entry_type().is_file();
    let size = entry.header().size().ok()?;
    if !regular || size > max {
        return None;
    }
    let mut data = Vec::with_capacity(size as usize);
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut entry, size), &mut data).ok()?;
    Some(data)
}
