//! Reading the files of one change: each once, its content classified,
//! its lines counted or diffed, digested, and written to the change tree.

use super::*;

/// What reading one file's content gave.
#[derive(Default)]
pub(super) struct Taken {
    /// The content's digest, when taken as the file was read.
    pub(super) digest: Option<String>,
    /// Its entry in the change tree (blob or gitlink id, file mode), when
    /// one is being written.
    pub(super) entry: Option<(Oid, u32)>,
}

/// How the files of one change are read.
pub(super) struct Reading<'a> {
    pub(super) repo: &'a Repository,
    pub(super) workdir: &'a Path,
    pub(super) limits: &'a ChangeSetLimits,
    /// Build the added lines (else only count them, for a new file).
    pub(super) lines: bool,
    /// The workspace's store, when the change tree is being written.
    pub(super) store: Option<&'a Repository>,
}

impl Reading<'_> {
    /// The content of one changed file. A regular file is read once, from
    /// the working tree: those bytes are classified (text or binary), give
    /// the added lines (all of a new file's; a changed file's through git's
    /// diff of the base blob against them) and the digest, and become the
    /// file's blob. A symlink's target (read once, when the change was
    /// described) is its content; a deleted file's lines come from the base.
    pub(super) fn content(&self, source: Source, change: &mut FileChange) -> Result<Taken> {
        let old = self.old_blob(source);
        match change.new_kind {
            None => {
                // Deleted: its removed lines, from the base blob.
                let counted = matches!(
                    change.old_kind,
                    Some(EntryKind::File | EntryKind::Executable | EntryKind::Symlink)
                );
                if let (Some(old), true) = (old, counted) {
                    self.count(Some(old), &[], change)?;
                }
                Ok(Taken::default())
            }
            Some(EntryKind::Submodule) => {
                let entry = match self.store {
                    Some(_) => {
                        let full = crate::git::tree::inside(self.workdir, &change.path)?;
                        Some((crate::git::tree::submodule_head(&full)?, 0o160000))
                    }
                    None => None,
                };
                Ok(Taken {
                    digest: None,
                    entry,
                })
            }
            Some(EntryKind::Symlink) => {
                let entry = match (self.store, &change.symlink_target) {
                    (Some(_), None) => {
                        return Err(unreadable(
                            &self.workdir.join(&change.path),
                            std::io::Error::other("its target could not be read"),
                        ))
                    }
                    (Some(store), Some(t)) => Some((store.blob(t.as_bytes())?, 0o120000)),
                    (None, _) => None,
                };
                if matches!(source, Source::Delta(_)) {
                    let old = old.filter(|_| change.old_kind != Some(EntryKind::Submodule));
                    let target = change.symlink_target.clone().unwrap_or_default();
                    self.count(old, target.as_bytes(), change)?;
                }
                Ok(Taken {
                    digest: None,
                    entry,
                })
            }
            Some(kind) => {
                let file = self.read(change)?;
                let entry = file.blob.map(|b| (b, file_mode(Some(kind))));
                if file.binary {
                    change.binary = true;
                    change.content = Some(file.bytes.into());
                    return Ok(Taken {
                        digest: None,
                        entry,
                    });
                }
                let new_file = change.op == Operation::Create && change.old_kind.is_none();
                if new_file || matches!(source, Source::Hidden) {
                    let (added, digest) =
                        text_lines(&file.bytes, self.lines.then_some(&mut change.added_lines));
                    change.added = added;
                    return Ok(Taken {
                        digest: Some(digest),
                        entry,
                    });
                }
                // A file where a submodule was: every line is new (a
                // gitlink has no lines to diff against).
                let old = old.filter(|_| change.old_kind != Some(EntryKind::Submodule));
                self.count(old, &file.bytes, change)?;
                Ok(Taken {
                    digest: None,
                    entry,
                })
            }
        }
    }

    /// A regular file of a streamed change, read once in bounded windows
    /// ([`crate::git::windows`]): its bytes go into its blob (when one is
    /// written), into the content digest, and — as added lines, or a binary
    /// file's bytes — window by window to `sink`; none of it is held once
    /// read. A new file's lines are all added; a changed file small enough
    /// on both sides ([`DIFF_WHOLE`]) is diffed against its base blob by
    /// git; a larger changed file is read like a new one — every line
    /// counted as added, so the checks read more, never less — and its
    /// removed lines are those of the base blob.
    pub(super) fn stream(
        &self,
        source: Source,
        change: &mut FileChange,
        sink: crate::git::windows::Sink<'_>,
    ) -> Result<Taken> {
        use crate::git::windows::{self, LineWindows, NewLines};
        use std::io::{Read, Write};
        let old = self.old_blob(source);
        let (full, mut file) = self.open_changed(change)?;
        let io = |e| unreadable(&full, e);
        let first = Part::WINDOW_BYTES as u64;
        let mut head = Vec::with_capacity(change.size.min(first) as usize + 1);
        (&mut file).take(first).read_to_end(&mut head).map_err(io)?;
        let mut blob = self.store.map(|s| s.blob_writer(None)).transpose()?;
        let mode = file_mode(change.new_kind);
        if !is_text(&change.path, &head) {
            change.binary = true;
            let w = blob.as_mut().map(|w| w as &mut dyn Write);
            let digest = windows::binary(head, &mut file, w, change, sink).map_err(io)?;
            let entry = blob.map(|w| w.commit()).transpose()?.map(|b| (b, mode));
            return Ok(Taken {
                digest: Some(digest),
                entry,
            });
        }
        if let Some(w) = blob.as_mut() {
            w.write_all(&head).map_err(io)?;
        }
        let new_file = (change.op == Operation::Create && change.old_kind.is_none())
            || matches!(source, Source::Hidden);
        // A file where a submodule was: every line is new.
        let old = old
            .filter(|_| !new_file)
            .filter(|_| change.old_kind != Some(EntryKind::Submodule));
        let mut w = LineWindows::new(sink);
        if let Some(old) = old {
            let small = head.len() as u64 <= DIFF_WHOLE
                && self.repo.odb()?.read_header(old)?.0 as u64 <= DIFF_WHOLE;
            // Read one byte past the head: is that the whole file?
            let mut more = Vec::new();
            if small {
                (&mut file).take(1).read_to_end(&mut more).map_err(io)?;
            }
            if small && more.is_empty() {
                let mut digest = ContentDigest::default();
                let (added, removed) =
                    self.diff_lines(Some(old), &head, change, &mut |change, line| {
                        digest.line(line.line, line.text.as_bytes());
                        w.push(change, line);
                    })?;
                change.added = added;
                change.removed = removed;
                settle_op(change);
                w.finish(change);
                let entry = blob.map(|w| w.commit()).transpose()?.map(|b| (b, mode));
                return Ok(Taken {
                    digest: Some(digest.finish(None)),
                    entry,
                });
            }
            head.extend_from_slice(&more);
            change.removed = self.line_count(old)?;
        }
        let mut lines = NewLines::default();
        lines.feed(&head, change, &mut w);
        drop(head);
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io(e)),
            };
            if let Some(b) = blob.as_mut() {
                b.write_all(&buf[..n]).map_err(io)?;
            }
            lines.feed(&buf[..n], change, &mut w);
        }
        let (added, digest) = lines.finish(change, &mut w);
        change.added = u32::try_from(added).unwrap_or(u32::MAX);
        settle_op(change);
        w.finish(change);
        let entry = blob.map(|w| w.commit()).transpose()?.map(|b| (b, mode));
        Ok(Taken {
            digest: Some(digest),
            entry,
        })
    }

    /// The lines of the base blob `old` (what a larger changed file's
    /// removed lines are counted as).
    fn line_count(&self, old: Oid) -> Result<u32> {
        let blob = self.repo.find_blob(old)?;
        let bytes = blob.content();
        let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let n = match bytes.is_empty() {
            true => 0,
            false => body.iter().filter(|&&b| b == b'\n').count() + 1,
        };
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// git's diff of the base blob `old` (none: empty) against `new`: each
    /// added line to `each`; the counts of added and removed lines.
    fn diff_lines(
        &self,
        old: Option<Oid>,
        new: &[u8],
        change: &mut FileChange,
        each: &mut dyn FnMut(&mut FileChange, AddedLine),
    ) -> Result<(u32, u32)> {
        let mut opts = DiffOptions::new();
        opts.force_text(true).context_lines(0);
        let blob = old.map(|id| self.repo.find_blob(id)).transpose()?;
        let patch = match &blob {
            Some(b) => git2::Patch::from_blob_and_buffer(b, None, new, None, Some(&mut opts))?,
            None => git2::Patch::from_buffers(&[], None, new, None, Some(&mut opts))?,
        };
        let (mut added, mut removed) = (0u32, 0u32);
        for h in 0..patch.num_hunks() {
            for l in 0..patch.num_lines_in_hunk(h)? {
                let line = patch.line_in_hunk(h, l)?;
                match line.origin() {
                    '+' => {
                        added += 1;
                        let line = AddedLine {
                            line: line.new_lineno().unwrap_or(0),
                            text: line_text(line.content()),
                        };
                        each(change, line);
                    }
                    '-' => removed += 1,
                    _ => {}
                }
            }
        }
        Ok((added, removed))
    }

    /// Count the lines git's diff of the base blob `old` (none: empty)
    /// against `new` adds and removes; a text file's added lines are kept
    /// with their numbers.
    fn count(&self, old: Option<Oid>, new: &[u8], change: &mut FileChange) -> Result<()> {
        let mut opts = DiffOptions::new();
        opts.force_text(true).context_lines(0);
        let blob = old.map(|id| self.repo.find_blob(id)).transpose()?;
        let patch = match &blob {
            Some(b) => git2::Patch::from_blob_and_buffer(b, None, new, None, Some(&mut opts))?,
            None => git2::Patch::from_buffers(&[], None, new, None, Some(&mut opts))?,
        };
        let keep = is_regular(change.new_kind);
        for h in 0..patch.num_hunks() {
            for l in 0..patch.num_lines_in_hunk(h)? {
                let line = patch.line_in_hunk(h, l)?;
                match line.origin() {
                    '+' => {
                        change.added += 1;
                        if keep {
                            change.added_lines.push(AddedLine {
                                line: line.new_lineno().unwrap_or(0),
                                text: line_text(line.content()),
                            });
                        }
                    }
                    '-' => change.removed += 1,
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// A changed file of the workspace, opened beneath it: no link on the
    /// way is followed, and only a regular file is opened (never a FIFO or
    /// device). Its full path is for messages.
    fn open_changed(&self, change: &FileChange) -> Result<(PathBuf, std::fs::File)> {
        let full = crate::git::tree::inside(self.workdir, &change.path)?;
        let file = crate::git::beneath::Beneath::open(self.workdir)
            .and_then(|b| b.open_file(Path::new(&change.path)))
            .map_err(|e| unreadable(&full, e))?;
        Ok((full, file))
    }

    /// The base blob of a changed file (None for a new one).
    fn old_blob(&self, source: Source) -> Option<git2::Oid> {
        match source {
            Source::Delta(old) => old,
            Source::Hidden => None,
        }
    }

    /// Read the regular file of `change`, once: its first
    /// `max_binary_bytes` decide text or binary; a text file is read whole,
    /// a binary one is held up to the limit and the rest streamed into its
    /// blob (when one is being written), never held. A file that cannot be
    /// read is an error: the checks would not see it.
    fn read(&self, change: &FileChange) -> Result<FileRead> {
        use std::io::Read;
        let (full, mut file) = self.open_changed(change)?;
        let max = self.limits.max_binary_bytes;
        let mut bytes = Vec::with_capacity(change.size.min(max) as usize + 1);
        (&mut file)
            .take(max)
            .read_to_end(&mut bytes)
            .map_err(|e| unreadable(&full, e))?;
        if is_text(&change.path, &bytes) {
            file.read_to_end(&mut bytes)
                .map_err(|e| unreadable(&full, e))?;
            let blob = self.store.map(|s| s.blob(&bytes)).transpose()?;
            return Ok(FileRead {
                bytes,
                binary: false,
                blob,
            });
        }
        let blob = match self.store {
            Some(store) => {
                use std::io::Write;
                let mut w = store.blob_writer(None)?;
                let io = |e| unreadable(&full, e);
                w.write_all(&bytes).map_err(io)?;
                std::io::copy(&mut file, &mut w).map_err(io)?;
                Some(w.commit()?)
            }
            None => None,
        };
        Ok(FileRead {
            bytes,
            binary: true,
            blob,
        })
    }
}

/// One regular file as read: its bytes (a binary file's up to the limit),
/// and its blob when written.
struct FileRead {
    pub(super) bytes: Vec<u8>,
    pub(super) binary: bool,
    pub(super) blob: Option<Oid>,
}

fn unreadable(full: &Path, source: std::io::Error) -> WorkspaceError {
    WorkspaceError::Io {
        what: format!(
            "reading {} (a file of the change) to check it",
            full.display()
        ),
        source,
    }
}

/// A tree entry's file mode for an entry kind.
fn file_mode(kind: Option<EntryKind>) -> u32 {
    match kind {
        Some(EntryKind::Executable) => 0o100755,
        Some(EntryKind::Symlink) => 0o120000,
        Some(EntryKind::Submodule) => 0o160000,
        _ => 0o100644,
    }
}

/// One line as the layers read it: lossy UTF-8, without its line break
/// (and any carriage returns before it).
fn line_text(bytes: &[u8]) -> String {
    let mut end = bytes.len();
    while end > 0 && matches!(bytes[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// The lines of a new text file, numbered from 1, as the layers read them
/// ([`line_text`]): counted, digested, and pushed to `out` when given.
/// Valid UTF-8 without carriage returns (most source) is digested in one
/// pass over its bytes and its lines are sliced, not decoded one by one.
fn text_lines(bytes: &[u8], mut out: Option<&mut Vec<AddedLine>>) -> (u32, String) {
    let mut digest = ContentDigest::default();
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let count = if bytes.is_empty() {
        0
    } else {
        body.iter().filter(|&&b| b == b'\n').count() + 1
    };
    let clean = match std::str::from_utf8(bytes) {
        Ok(text) if !bytes.contains(&b'\r') => Some(text),
        _ => None,
    };
    if let Some(text) = clean {
        // Without a final line break, the digest's form has one.
        let end: &[u8] = if body.len() == bytes.len() {
            b"\n"
        } else {
            b""
        };
        digest.text(&[bytes, end], count as u64);
        if let Some(out) = out.as_deref_mut() {
            out.reserve_exact(count);
            let body = text.strip_suffix('\n').unwrap_or(text);
            if !bytes.is_empty() {
                for (i, line) in body.split('\n').enumerate() {
                    out.push(AddedLine {
                        line: i as u32 + 1,
                        text: line.to_string(),
                    });
                }
            }
        }
    } else if !bytes.is_empty() {
        for (i, raw) in body.split(|&b| b == b'\n').enumerate() {
            let text = line_text(raw);
            digest.line(i as u32 + 1, text.as_bytes());
            if let Some(out) = out.as_deref_mut() {
                out.push(AddedLine {
                    line: i as u32 + 1,
                    text,
                });
            }
        }
    }
    (count as u32, digest.finish(None))
}

pub(super) fn blob_text(repo: &Repository, id: Oid) -> Option<String> {
    if id.is_zero() {
        return None;
    }
    repo.find_blob(id)
        .ok()
        .map(|b| String::from_utf8_lossy(b.content()).into_owned())
}
