//! A changed file handed to the checks in bounded windows
//! ([`rascal_core::model::changeset::Part`]): a text file's added lines gathered
//! into windows of at most `Part::WINDOW_LINES` lines and
//! `Part::WINDOW_BYTES` bytes (a line longer than `Part::LINE_PIECE` cut
//! into overlapping pieces), a binary file's bytes into overlapping windows
//! of `Part::BINARY_WINDOW` bytes. Each window goes to the checks and is let
//! go before the next is read: what is held of a file while it is read does
//! not grow with its size or its line count. The content digest is taken as
//! the bytes go by.

use rascal_core::model::changeset::{AddedLine, ContentDigest, FileChange, Part};
use std::io::{Read, Write};
use std::sync::Arc;

/// Where a file's windows go (the checks that read content, the
/// comparator's likeness); `None` when nothing reads them.
pub(crate) type Sink<'s> = Option<&'s mut dyn FnMut(&FileChange)>;

/// The added lines of one file, gathered into windows and handed out.
pub(crate) struct LineWindows<'s> {
    sink: Sink<'s>,
    window: Vec<AddedLine>,
    bytes: usize,
    /// A full window, held until the next line says it was not the last.
    full: bool,
    index: u64,
}

impl<'s> LineWindows<'s> {
    pub(crate) fn new(sink: Sink<'s>) -> Self {
        LineWindows {
            sink,
            window: Vec::new(),
            bytes: 0,
            full: false,
            index: 0,
        }
    }

    /// Does anything read the lines (else they are only counted)?
    pub(crate) fn keeps(&self) -> bool {
        self.sink.is_some()
    }

    /// One added line (or a piece of a long one) of `change`.
    pub(crate) fn push(&mut self, change: &mut FileChange, line: AddedLine) {
        if !self.keeps() {
            return;
        }
        if self.full {
            self.emit(change, false);
        }
        self.bytes += line.text.len() + 1;
        self.window.push(line);
        if self.window.len() >= Part::WINDOW_LINES || self.bytes >= Part::WINDOW_BYTES {
            self.full = true;
        }
    }

    fn emit(&mut self, change: &mut FileChange, last: bool) {
        if let Some(sink) = self.sink.as_mut() {
            change.added_lines = std::mem::take(&mut self.window);
            change.part = Some(Part {
                index: self.index,
                last,
                offset: 0,
            });
            sink(change);
            self.window = std::mem::take(&mut change.added_lines);
            change.part = None;
        }
        self.window.clear();
        self.bytes = 0;
        self.full = false;
        self.index += 1;
    }

    /// Hand out the last window (possibly empty: every file reaches the
    /// checks at least once).
    pub(crate) fn finish(mut self, change: &mut FileChange) {
        self.emit(change, true);
    }
}

/// The lines of a new text file, numbered from 1, fed as its bytes are
/// read: counted, digested as `ContentDigest::line` would, and pushed to
/// the windows (lossy UTF-8, without the line break and the carriage
/// returns before it), a long line in overlapping pieces.
#[derive(Default)]
pub(crate) struct NewLines {
    /// The number of the line in progress (or of the last one ended).
    line: u32,
    /// The line in progress, from the start of its current piece.
    cur: Vec<u8>,
    /// How many bytes of `cur` the digest has already had.
    fed: usize,
    /// A line is in progress.
    started: bool,
    /// The line in progress was handed out in pieces already.
    pieces: bool,
    count: u64,
    digest: ContentDigest,
}

impl NewLines {
    /// More bytes of the file.
    pub(crate) fn feed(&mut self, mut bytes: &[u8], change: &mut FileChange, w: &mut LineWindows) {
        while !bytes.is_empty() {
            match bytes.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    self.extend(&bytes[..i], change, w);
                    self.end_line(change, w);
                    bytes = &bytes[i + 1..];
                }
                None => {
                    self.extend(bytes, change, w);
                    break;
                }
            }
        }
    }

    fn begin(&mut self) {
        if !self.started {
            self.started = true;
            self.pieces = false;
            self.line = self.line.saturating_add(1);
            self.digest.begin_line(self.line);
        }
    }

    fn extend(&mut self, mut bytes: &[u8], change: &mut FileChange, w: &mut LineWindows) {
        self.begin();
        while !bytes.is_empty() {
            let room = Part::LINE_PIECE.saturating_sub(self.cur.len()).max(1);
            let take = room.min(bytes.len());
            self.cur.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.cur.len() >= Part::LINE_PIECE {
                self.piece(change, w);
            }
        }
    }

    /// Hand out the line in progress so far as one piece, keeping its last
    /// `Part::PIECE_OVERLAP` bytes to start the next piece.
    fn piece(&mut self, change: &mut FileChange, w: &mut LineWindows) {
        let cut = char_cut(&self.cur);
        self.digest
            .more(String::from_utf8_lossy(&self.cur[self.fed..cut]).as_bytes());
        if w.keeps() {
            let text = String::from_utf8_lossy(&self.cur[..cut]).into_owned();
            w.push(
                change,
                AddedLine {
                    line: self.line,
                    text,
                },
            );
        }
        let mut keep = cut.saturating_sub(Part::PIECE_OVERLAP);
        while keep < cut && (self.cur[keep] & 0xC0) == 0x80 {
            keep += 1;
        }
        self.cur.drain(..keep);
        self.fed = cut - keep;
        self.pieces = true;
    }

    fn end_line(&mut self, change: &mut FileChange, w: &mut LineWindows) {
        self.begin();
        let mut end = self.cur.len();
        while end > self.fed && self.cur[end - 1] == b'\r' {
            end -= 1;
        }
        self.digest
            .more(String::from_utf8_lossy(&self.cur[self.fed..end]).as_bytes());
        self.digest.end_line();
        // A long line's last piece, unless it holds nothing new.
        if w.keeps() && !(self.pieces && end <= self.fed) {
            let text = String::from_utf8_lossy(&self.cur[..end]).into_owned();
            w.push(
                change,
                AddedLine {
                    line: self.line,
                    text,
                },
            );
        }
        self.cur.clear();
        self.fed = 0;
        self.started = false;
        self.count += 1;
    }

    /// The file ended: its line count and content digest.
    pub(crate) fn finish(mut self, change: &mut FileChange, w: &mut LineWindows) -> (u64, String) {
        if self.started {
            self.end_line(change, w);
        }
        (self.count, self.digest.finish(None))
    }
}

/// Where to cut `bytes` (a piece of a long line) so that no UTF-8
/// character is split: its length, or the start of an incomplete
/// character at its end.
fn char_cut(bytes: &[u8]) -> usize {
    let len = bytes.len();
    for k in 1..=3.min(len) {
        let b = bytes[len - k];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let need = match b {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        return if need > k { len - k } else { len };
    }
    len
}

/// A binary file's bytes (`head` read already, the rest from `file`),
/// written to `blob` when given and handed to `sink` in overlapping
/// windows, each with its offset. Its content digest: the same as
/// `ContentDigest::finish` with the bytes for a file of one window.
pub(crate) fn binary(
    head: Vec<u8>,
    file: &mut impl Read,
    mut blob: Option<&mut dyn Write>,
    change: &mut FileChange,
    mut sink: Sink<'_>,
) -> std::io::Result<String> {
    use sha2::Digest;
    let mut window = head;
    let mut new_from = 0;
    let mut offset = 0u64;
    let mut index = 0u64;
    let mut total = 0u64;
    let mut sha = sha2::Sha256::new();
    loop {
        let room = Part::BINARY_WINDOW.saturating_sub(window.len()) as u64;
        (&mut *file).take(room).read_to_end(&mut window)?;
        let mut spill = Vec::new();
        if window.len() >= Part::BINARY_WINDOW {
            (&mut *file)
                .take(Part::BINARY_OVERLAP as u64)
                .read_to_end(&mut spill)?;
        }
        let last = spill.is_empty();
        let fresh = &window[new_from..];
        sha.update(fresh);
        total += fresh.len() as u64;
        if let Some(b) = blob.as_mut() {
            b.write_all(fresh)?;
        }
        if let Some(sink) = sink.as_mut() {
            change.content = Some(Arc::from(window.as_slice()));
            change.part = Some(Part {
                index,
                last,
                offset,
            });
            sink(change);
            change.content = None;
            change.part = None;
        }
        if last {
            break;
        }
        let keep = window.len() - Part::BINARY_OVERLAP.min(window.len());
        window.drain(..keep);
        offset += keep as u64;
        new_from = window.len();
        window.extend_from_slice(&spill);
        index += 1;
    }
    let digest = if index == 0 {
        ContentDigest::default().finish(Some(&window))
    } else {
        ContentDigest::default().finish_streamed_binary(total, &sha.finalize())
    };
    Ok(digest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rascal_core::model::changeset::Operation;

    /// Every window handed out for `bytes` of a new text file.
    fn windows(bytes: &[u8], chunk: usize) -> (Vec<(Part, Vec<AddedLine>)>, u64, String) {
        let mut got = Vec::new();
        let mut sink = |c: &FileChange| got.push((c.part.unwrap(), c.added_lines.clone()));
        let mut change = FileChange::new("a.txt", Operation::Create);
        let mut w = LineWindows::new(Some(&mut sink));
        let mut lines = NewLines::default();
        for c in bytes.chunks(chunk.max(1)) {
            lines.feed(c, &mut change, &mut w);
        }
        let (n, d) = lines.finish(&mut change, &mut w);
        w.finish(&mut change);
        (got, n, d)
    }

    #[test]
    fn many_short_lines_come_in_bounded_windows_with_every_line_once() {
        let bytes = b"a\n".repeat(3 * Part::WINDOW_LINES + 5);
        let (got, n, digest) = windows(&bytes, 7001);
        assert_eq!(n, 3 * Part::WINDOW_LINES as u64 + 5);
        assert_eq!(got.len(), 4);
        assert!(got.iter().all(|(_, l)| l.len() <= Part::WINDOW_LINES));
        assert!(got[..3].iter().all(|(p, _)| !p.last));
        assert!(got[3].0.last);
        let numbers: Vec<u32> = got
            .iter()
            .flat_map(|(_, l)| l.iter().map(|l| l.line))
            .collect();
        assert_eq!(numbers, (1..=n as u32).collect::<Vec<_>>());
        // The same digest as the lines held whole.
        let mut whole = FileChange::new("a.txt", Operation::Create);
        whole = whole.with_lines(&vec!["a"; n as usize]);
        assert_eq!(digest, whole.content_digest());
    }

    #[test]
    fn a_long_line_comes_in_overlapping_pieces() {
        let mut line = vec![b'x'; Part::LINE_PIECE + 100];
        let at = Part::LINE_PIECE - 10;
        line[at..at + 20].copy_from_slice(b"TOKEN_ACROSS_THE_CUT");
        line.extend_from_slice(b"\r\nnext\n");
        let (got, n, _) = windows(&line, 65536);
        assert_eq!(n, 2);
        let texts: Vec<&AddedLine> = got.iter().flat_map(|(_, l)| l).collect();
        assert_eq!(texts.len(), 3, "two pieces of line 1, then line 2");
        assert_eq!((texts[0].line, texts[1].line, texts[2].line), (1, 1, 2));
        assert!(texts[1].text.contains("TOKEN_ACROSS_THE_CUT"));
        assert!(!texts[1].text.ends_with('\r'));
        assert!(texts.iter().all(|l| l.text.len() <= Part::LINE_PIECE));
    }

    #[test]
    fn utf8_is_never_cut_inside_a_character() {
        assert_eq!(char_cut("aé".as_bytes()), 3);
        assert_eq!(char_cut(&"aé".as_bytes()[..2]), 1);
        assert_eq!(char_cut(&"a😀".as_bytes()[..4]), 1);
        assert_eq!(char_cut(b"abc"), 3);
    }

    #[test]
    fn binary_windows_overlap_and_cover_every_byte() {
        let len = 2 * Part::BINARY_WINDOW + 10;
        let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let mut got: Vec<(Part, usize)> = Vec::new();
        let mut sink =
            |c: &FileChange| got.push((c.part.unwrap(), c.content.as_ref().unwrap().len()));
        let mut change = FileChange::new("a.bin", Operation::Create);
        let mut blob = Vec::new();
        let head = bytes[..1000].to_vec();
        let mut rest = &bytes[1000..];
        let w: &mut dyn Write = &mut blob;
        binary(head, &mut rest, Some(w), &mut change, Some(&mut sink)).unwrap();
        assert_eq!(blob, bytes);
        assert_eq!(got.len(), 3);
        assert_eq!(
            got[1].0.offset,
            (Part::BINARY_WINDOW - Part::BINARY_OVERLAP) as u64
        );
        let (p, n) = got[2];
        assert!(p.last);
        assert_eq!(p.offset + n as u64, len as u64);
    }
}
