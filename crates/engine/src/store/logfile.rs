//! Candidates' log files. Each attempt's output is an append-only file
//! (`runs/RUN/CANDIDATE/agent.log`), written through a buffer and cut into
//! segments — a run of lines of one stream, flushed, hashed — that the
//! journal records as `LogSegment` events instead of a row per line.
//! Readers (`show`, `attach`, the TUI, the headless printer) read a
//! segment's lines back by offset and check its hash, so an edit to a log
//! file after it was recorded is named, as an edit to the journal is.
//!
//! A runaway agent cannot fill the disk: past `max_log_bytes` one marker
//! line is written and further lines are counted, not kept.

use rascal_core::model::log::{Segment, Stream};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// A segment is closed (flushed and journalled) at this size at the latest,
/// so reading one back holds at most this much.
pub const SEGMENT_BYTES: u64 = 1024 * 1024;

/// The per-candidate default of `max_log_bytes`.
pub const DEFAULT_MAX_LOG_BYTES: u64 = 1024 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum LogFileError {
    #[error("could not write the log file {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not read the log file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the log file {path} was changed after it was recorded (its bytes {offset}..{end} no longer match the journal): the run's record cannot be trusted")]
    Changed {
        path: PathBuf,
        offset: u64,
        end: u64,
    },
}

struct Open {
    stream: Stream,
    offset: u64,
    lines: u64,
    own: u64,
    hash: Sha256,
}

/// What the cap dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dropped {
    pub lines: u64,
    pub bytes: u64,
}

/// Writes one attempt's log file and cuts it into segments.
pub struct LogWriter {
    out: BufWriter<File>,
    path: PathBuf,
    rel: String,
    candidate: String,
    end: u64,
    open: Option<Open>,
    cap: u64,
    dropped: Option<Dropped>,
}

impl LogWriter {
    /// Open (append to) `state/rel` for `candidate`'s lines, kept up to
    /// `cap` bytes.
    pub fn open(state: &Path, rel: &str, candidate: &str, cap: u64) -> Result<Self, LogFileError> {
        let path = state.join(rel);
        let werr = |source| LogFileError::Write {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(werr)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(werr)?;
        let end = file.metadata().map_err(werr)?.len();
        Ok(LogWriter {
            out: BufWriter::with_capacity(256 * 1024, file),
            path,
            rel: rel.to_string(),
            candidate: candidate.to_string(),
            end,
            open: None,
            cap,
            dropped: None,
        })
    }

    /// Lines the cap dropped so far (None while under it).
    pub fn dropped(&self) -> Option<Dropped> {
        self.dropped
    }

    /// A segment is open (lines written but not yet journalled).
    pub fn pending(&self) -> bool {
        self.open.is_some()
    }

    /// Append one line (no newline in it). Returns the segments this closed:
    /// the open one when the stream changed or it reached `SEGMENT_BYTES`.
    pub fn line(&mut self, stream: Stream, text: &str) -> Result<Vec<Segment>, LogFileError> {
        let mut closed = Vec::new();
        if let Some(d) = self.dropped.as_mut() {
            d.lines += 1;
            d.bytes += text.len() as u64 + 1;
            return Ok(closed);
        }
        let size = text.len() as u64 + 1;
        if self.end + size > self.cap {
            closed.extend(self.seal()?);
            let note = format!(
                "rascal: this log reached its cap (max_log_bytes = {}); further lines are counted, not kept",
                self.cap
            );
            self.write(Stream::Stderr, &note)?;
            closed.extend(self.seal()?);
            self.dropped = Some(Dropped {
                lines: 1,
                bytes: size,
            });
            return Ok(closed);
        }
        if self.open.as_ref().is_some_and(|o| o.stream != stream) {
            closed.extend(self.seal()?);
        }
        self.write(stream, text)?;
        if self
            .open
            .as_ref()
            .is_some_and(|o| self.end - o.offset >= SEGMENT_BYTES)
        {
            closed.extend(self.seal()?);
        }
        Ok(closed)
    }

    fn write(&mut self, stream: Stream, text: &str) -> Result<(), LogFileError> {
        let offset = self.end;
        let open = self.open.get_or_insert_with(|| Open {
            stream,
            offset,
            lines: 0,
            own: 0,
            hash: Sha256::new(),
        });
        open.hash.update(text.as_bytes());
        open.hash.update(b"\n");
        open.lines += 1;
        open.own += u64::from(text.starts_with("rascal: "));
        let path = &self.path;
        let werr = |source| LogFileError::Write {
            path: path.clone(),
            source,
        };
        self.out.write_all(text.as_bytes()).map_err(werr)?;
        self.out.write_all(b"\n").map_err(werr)?;
        self.end += text.len() as u64 + 1;
        Ok(())
    }

    /// Flush and close the open segment: from here readers can read it.
    pub fn seal(&mut self) -> Result<Option<Segment>, LogFileError> {
        let Some(open) = self.open.take() else {
            return Ok(None);
        };
        self.out.flush().map_err(|source| LogFileError::Write {
            path: self.path.clone(),
            source,
        })?;
        Ok(Some(Segment {
            candidate: self.candidate.clone(),
            stream: open.stream,
            file: self.rel.clone(),
            offset: open.offset,
            bytes: self.end - open.offset,
            lines: open.lines,
            sha256: hex::encode(open.hash.finalize()),
            own: open.own,
        }))
    }
}

/// The segment's bytes, checked against its hash.
pub fn read_bytes(state: &Path, seg: &Segment) -> Result<Vec<u8>, LogFileError> {
    let path = state.join(&seg.file);
    let rerr = |source| LogFileError::Read {
        path: path.clone(),
        source,
    };
    let changed = || LogFileError::Changed {
        path: path.clone(),
        offset: seg.offset,
        end: seg.offset + seg.bytes,
    };
    // A journal (written by rascal, chained) names a file inside the store.
    if Path::new(&seg.file)
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Err(changed());
    }
    let mut f = File::open(&path).map_err(rerr)?;
    f.seek(SeekFrom::Start(seg.offset)).map_err(rerr)?;
    let mut buf = Vec::with_capacity(seg.bytes.min(SEGMENT_BYTES * 2) as usize);
    f.take(seg.bytes).read_to_end(&mut buf).map_err(rerr)?;
    if buf.len() as u64 != seg.bytes || hex::encode(Sha256::digest(&buf)) != seg.sha256 {
        return Err(changed());
    }
    Ok(buf)
}

/// Each line of a segment, in order (checked first).
pub fn each_line(state: &Path, seg: &Segment, mut f: impl FnMut(&str)) -> Result<(), LogFileError> {
    let buf = read_bytes(state, seg)?;
    let text = String::from_utf8_lossy(&buf);
    for line in text.strip_suffix('\n').unwrap_or(&text).split('\n') {
        f(line);
    }
    Ok(())
}

/// The segment's lines (checked first).
pub fn lines(state: &Path, seg: &Segment) -> Result<Vec<String>, LogFileError> {
    let mut out = Vec::with_capacity(seg.lines as usize);
    each_line(state, seg, |l| out.push(l.to_string()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn rascals_own_notes_are_counted_apart_from_the_agents_lines() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = LogWriter::open(dir.path(), "a.log", "c", u64::MAX).unwrap();
        for t in [
            "agent says",
            "rascal: network: allowed x:443 (1.2.3.4:443)",
            "rascal said by the agent",
        ] {
            w.line(Stream::Stderr, t).unwrap();
        }
        let seg = w.seal().unwrap().unwrap();
        assert_eq!((seg.lines, seg.own), (3, 1));
    }

    use super::*;

    fn writer(dir: &Path, cap: u64) -> LogWriter {
        LogWriter::open(dir, "runs/r/a/agent.log", "a", cap).unwrap()
    }

    #[test]
    fn segments_cover_every_line_and_read_back_by_offset() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = writer(dir.path(), DEFAULT_MAX_LOG_BYTES);
        let mut segs = Vec::new();
        for i in 0..10 {
            segs.extend(w.line(Stream::Stdout, &format!("out {i}")).unwrap());
        }
        segs.extend(w.line(Stream::Stderr, "err").unwrap());
        segs.extend(w.line(Stream::Stdout, "out again").unwrap());
        segs.extend(w.seal().unwrap());
        assert_eq!(
            segs.iter().map(|s| (s.stream, s.lines)).collect::<Vec<_>>(),
            [
                (Stream::Stdout, 10),
                (Stream::Stderr, 1),
                (Stream::Stdout, 1)
            ]
        );
        assert_eq!(lines(dir.path(), &segs[1]).unwrap(), ["err"]);
        assert_eq!(lines(dir.path(), &segs[0]).unwrap()[9], "out 9");
        // A reopened writer appends after what is there.
        let mut w = writer(dir.path(), DEFAULT_MAX_LOG_BYTES);
        w.line(Stream::Stdout, "later").unwrap();
        let s = w.seal().unwrap().unwrap();
        assert_eq!(s.offset, segs[2].offset + segs[2].bytes);
        assert_eq!(lines(dir.path(), &s).unwrap(), ["later"]);
    }

    #[test]
    fn an_edited_log_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = writer(dir.path(), DEFAULT_MAX_LOG_BYTES);
        w.line(Stream::Stdout, "tests: 3 failed").unwrap();
        let s = w.seal().unwrap().unwrap();
        let path = dir.path().join(&s.file);
        std::fs::write(&path, "tests: 0 failed\n").unwrap();
        let e = lines(dir.path(), &s).unwrap_err();
        assert!(matches!(e, LogFileError::Changed { .. }), "{e}");
        std::fs::write(&path, "tests: 3 fail").unwrap();
        assert!(matches!(
            lines(dir.path(), &s).unwrap_err(),
            LogFileError::Changed { .. }
        ));
        let escape = Segment {
            file: "../outside.log".into(),
            ..s
        };
        assert!(lines(dir.path(), &escape).is_err());
    }

    #[test]
    fn past_the_cap_lines_are_counted_with_one_marker() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = writer(dir.path(), 100);
        let mut segs = Vec::new();
        for i in 0..50 {
            segs.extend(w.line(Stream::Stdout, &format!("line {i:02}")).unwrap());
        }
        segs.extend(w.seal().unwrap());
        let kept: Vec<String> = segs
            .iter()
            .flat_map(|s| lines(dir.path(), s).unwrap())
            .collect();
        assert_eq!(kept.len(), 13, "{kept:?}");
        assert!(kept.last().unwrap().contains("max_log_bytes"));
        let d = w.dropped().unwrap();
        assert_eq!(d.lines, 50 - 12);
        assert!(
            std::fs::metadata(dir.path().join("runs/r/a/agent.log"))
                .unwrap()
                .len()
                < 200
        );
    }

    #[test]
    fn big_floods_are_cut_into_bounded_segments() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = writer(dir.path(), DEFAULT_MAX_LOG_BYTES);
        let line = "x".repeat(1000);
        let mut segs = Vec::new();
        for _ in 0..3000 {
            segs.extend(w.line(Stream::Stdout, &line).unwrap());
        }
        segs.extend(w.seal().unwrap());
        assert!(segs.len() >= 3, "{}", segs.len());
        assert!(segs.iter().all(|s| s.bytes <= SEGMENT_BYTES + 1001));
        assert_eq!(segs.iter().map(|s| s.lines).sum::<u64>(), 3000);
    }
}
