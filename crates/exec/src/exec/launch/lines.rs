//! A container's output stream split into log lines, for the launchers
//! that read a byte stream (docker, kubernetes): long lines are cut at
//! `MAX_LINE` with a note, and the first `skip` lines (already journalled
//! before a reattach) are not sent again — also when the stream is
//! reopened from its start (`restart`).

use crate::exec::runner::{LogLine, Stream};

/// Bytes of one line kept; the rest is counted in the line's note.
pub(crate) const MAX_LINE: usize = 64 * 1024;

pub(crate) struct Lines {
    stream: Stream,
    buf: Vec<u8>,
    dropped: usize,
    /// Lines of the stream sent so far (over every opening).
    sent: u64,
    /// Lines of this opening seen so far.
    seen: u64,
}

impl Lines {
    pub(crate) fn new(stream: Stream, skip: u64) -> Self {
        Lines {
            stream,
            buf: Vec::new(),
            dropped: 0,
            sent: skip,
            seen: 0,
        }
    }

    /// The stream is read again from its start.
    pub(crate) fn restart(&mut self) {
        self.buf.clear();
        self.dropped = 0;
        self.seen = 0;
    }

    /// Split `bytes` on newlines; finished lines go to `out`.
    pub(crate) fn push(&mut self, bytes: &[u8], out: &mut Vec<LogLine>) {
        for &b in bytes {
            if b == b'\n' {
                self.emit(out);
            } else if self.buf.len() < MAX_LINE {
                self.buf.push(b);
            } else {
                self.dropped += 1;
            }
        }
    }

    fn emit(&mut self, out: &mut Vec<LogLine>) {
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        self.seen += 1;
        if self.seen > self.sent {
            let mut text = String::from_utf8_lossy(&self.buf).into_owned();
            if self.dropped > 0 {
                text.push_str(&format!(" …[line cut: {} more bytes]", self.dropped));
            }
            out.push(LogLine {
                stream: self.stream,
                text,
            });
            self.sent = self.seen;
        }
        self.buf.clear();
        self.dropped = 0;
    }

    /// The stream ended: a last line without a newline is sent too.
    pub(crate) fn finish(&mut self, out: &mut Vec<LogLine>) {
        if !self.buf.is_empty() || self.dropped > 0 {
            self.emit(out);
        }
    }
}
