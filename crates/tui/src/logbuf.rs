//! A candidate's log tail: a bounded ring of parsed lines (the full log is
//! on disk in the run directory), with follow mode and a scroll offset.
//! Scrolling above the ring (or `g`) shows the whole log from its file:
//! the log's segments are indexed here, and a window of lines around the
//! view is loaded by the shell (`Effect::LoadLog`) — only a screenful or
//! two is ever held.

use rascal_core::model::log::Stream;
use ratatui::text::Line;
use std::collections::VecDeque;

/// Lines kept per candidate in memory.
pub const CAPACITY: usize = 2_000;

#[derive(Debug, Clone)]
pub struct LogEntry {
    pub stream: Stream,
    /// Plain text (for the filter).
    pub plain: String,
    pub line: Line<'static>,
    /// The raw line when `line` is the readable form of a parsed event.
    pub raw: Option<Line<'static>>,
}

/// Lines loaded around the view when it is above the ring, at most.
pub const WINDOW: u64 = 400;

/// The whole log, read from its file: where the view is and what is
/// loaded around it.
#[derive(Debug, Clone, Default)]
pub struct Older {
    /// The log file's line shown on the first row.
    pub top: u64,
    /// The file line of `entries[0]`.
    pub first: u64,
    pub entries: Vec<LogEntry>,
    /// A load of this range is asked for.
    pub asked: Option<(u64, u64)>,
}

#[derive(Debug, Clone, Default)]
pub struct LogBuf {
    /// The log file's segments: the file line each starts at, and where.
    pub segments: Vec<(u64, rascal_core::model::log::Segment)>,
    /// Lines in the log file (the segments' sum).
    pub file_lines: u64,
    /// The view is above the ring, in the file.
    pub older: Option<Older>,
    /// Lines pushed into the ring since the start.
    pub pushed: u64,
    /// Lines pushed since the last segment landed (not yet counted in
    /// `file_lines`).
    pub pending: u64,
    lines: VecDeque<LogEntry>,
    /// Lines dropped off the front since the start.
    pub dropped: u64,
    /// Rows scrolled up from the bottom; 0 with `follow`.
    pub offset: usize,
    pub follow: bool,
}

impl LogBuf {
    pub fn new() -> Self {
        LogBuf {
            segments: Vec::new(),
            file_lines: 0,
            older: None,
            pushed: 0,
            pending: 0,
            lines: VecDeque::with_capacity(256),
            dropped: 0,
            offset: 0,
            follow: true,
        }
    }

    pub fn push(&mut self, stream: Stream, text: &str, color: bool) {
        self.push_with_raw(stream, text, None, color)
    }

    /// A log entry as the ring keeps them.
    pub fn entry(stream: Stream, text: &str, raw: Option<&str>, color: bool) -> LogEntry {
        let line = super::ansi::parse_line(text, color);
        let plain = line.spans.iter().map(|s| s.content.as_ref()).collect();
        let raw = raw.map(|r| super::ansi::parse_line(r, color));
        LogEntry {
            stream,
            plain,
            line,
            raw,
        }
    }

    /// Push a readable line that has a raw form to toggle to.
    pub fn push_with_raw(&mut self, stream: Stream, text: &str, raw: Option<&str>, color: bool) {
        if self.lines.len() == CAPACITY {
            self.lines.pop_front();
            self.dropped += 1;
        }
        self.lines.push_back(Self::entry(stream, text, raw, color));
        self.pushed += 1;
        self.pending += 1;
        if !self.follow {
            // Keep the view still while new lines arrive below it.
            self.offset = (self.offset + 1).min(self.lines.len().saturating_sub(1));
        }
    }

    /// A segment of the log file landed.
    pub fn segment(&mut self, seg: &rascal_core::model::log::Segment) {
        self.segments.push((self.file_lines, seg.clone()));
        self.file_lines += seg.lines;
        self.pending = 0;
    }

    /// The ring's push count from which its lines come after the file's
    /// `file_lines` (the lines of a segment not landed yet).
    pub fn ring_from(&self) -> u64 {
        self.pushed - self.pending
    }

    /// The ring's entries pushed from `from` on that `m` matches, oldest
    /// first.
    pub fn live(&self, from: u64, m: &super::search::Matcher) -> Vec<&LogEntry> {
        let first = self.pushed - self.lines.len() as u64;
        let skip = from.saturating_sub(first) as usize;
        self.lines
            .iter()
            .skip(skip)
            .filter(|e| m.is_match(&e.plain))
            .collect()
    }

    /// Ring lines pushed since `from` that are no longer in the ring.
    pub fn lost_since(&self, from: u64) -> u64 {
        (self.pushed - self.lines.len() as u64).saturating_sub(from)
    }

    /// The file's lines `from..from + count` as segments to read: each
    /// segment, and the range of its own lines wanted.
    pub fn spans(
        &self,
        from: u64,
        count: u64,
    ) -> Vec<(rascal_core::model::log::Segment, u64, u64)> {
        let end = from + count;
        let start = self
            .segments
            .partition_point(|(first, s)| first + s.lines <= from);
        self.segments[start..]
            .iter()
            .take_while(|(first, _)| *first < end)
            .map(|(first, s)| {
                let a = from.saturating_sub(*first);
                let b = (end - first).min(s.lines);
                (s.clone(), a, b)
            })
            .collect()
    }

    /// The file lines `lines` (in order) as segments to read: each segment
    /// with the lines wanted, counted in the segment.
    pub fn spans_of(&self, lines: &[u64]) -> Vec<(rascal_core::model::log::Segment, Vec<u64>)> {
        let mut out: Vec<(rascal_core::model::log::Segment, Vec<u64>)> = Vec::new();
        let mut at = 0;
        for &l in lines {
            at += self.segments[at..].partition_point(|(first, s)| first + s.lines <= l);
            let Some((first, seg)) = self.segments.get(at) else {
                break;
            };
            if l < *first {
                continue;
            }
            match out.last_mut() {
                Some((s, want)) if s.offset == seg.offset && s.file == seg.file => {
                    want.push(l - first)
                }
                _ => out.push((seg.clone(), vec![l - first])),
            }
        }
        out
    }

    /// Move the view in the file to `top` (None: back to the ring). Returns
    /// the range to load when what is loaded does not cover the view.
    pub fn view_file(&mut self, top: Option<u64>, rows: u64) -> Option<(u64, u64)> {
        let Some(top) = top else {
            self.older = None;
            return None;
        };
        let top = top.min(self.file_lines.saturating_sub(1));
        let o = self.older.get_or_insert_with(Older::default);
        o.top = top;
        self.follow = false;
        let loaded = o.first..o.first + o.entries.len() as u64;
        let want_end = (top + rows).min(self.file_lines);
        if loaded.contains(&top) && want_end <= loaded.end {
            return None;
        }
        let from = top.saturating_sub(WINDOW / 4);
        let range = (from, WINDOW);
        if o.asked == Some(range) {
            return None;
        }
        o.asked = Some(range);
        Some(range)
    }

    /// Lines of the file from `first` arrived.
    pub fn loaded(&mut self, first: u64, entries: Vec<LogEntry>) {
        if let Some(o) = self.older.as_mut() {
            o.first = first;
            o.entries = entries;
            o.asked = None;
        }
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Scroll up `n` rows: pauses following.
    pub fn scroll_up(&mut self, n: usize) {
        self.offset = (self.offset + n).min(self.lines.len().saturating_sub(1));
        self.follow = false;
    }

    /// Scroll down `n` rows; reaching the bottom resumes following.
    pub fn scroll_down(&mut self, n: usize) {
        self.offset = self.offset.saturating_sub(n);
        if self.offset == 0 {
            self.follow = true;
        }
    }

    pub fn top(&mut self) {
        self.scroll_up(usize::MAX / 2);
    }

    pub fn resume(&mut self) {
        self.older = None;
        self.offset = 0;
        self.follow = true;
    }

    /// The `rows` entries to show (oldest first), honouring the scroll
    /// offset and an optional substring filter. Only these are touched.
    pub fn visible(&self, rows: usize, filter: Option<&str>) -> Vec<&LogEntry> {
        let m = filter.map(super::search::Matcher::new);
        if let Some(o) = &self.older {
            let skip = o.top.saturating_sub(o.first) as usize;
            return o
                .entries
                .iter()
                .skip(skip)
                .filter(|e| m.as_ref().is_none_or(|m| m.is_match(&e.plain)))
                .take(rows)
                .collect();
        }
        let mut out = Vec::with_capacity(rows);
        let mut skip = self.offset;
        for e in self.lines.iter().rev() {
            if m.as_ref().is_some_and(|m| !m.is_match(&e.plain)) {
                continue;
            }
            if skip > 0 {
                skip -= 1;
                continue;
            }
            out.push(e);
            if out.len() == rows {
                break;
            }
        }
        out.reverse();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_scrolling_pauses_follow() {
        let mut b = LogBuf::new();
        for i in 0..CAPACITY + 10 {
            b.push(Stream::Stdout, &format!("line {i}"), true);
        }
        assert_eq!(b.len(), CAPACITY);
        assert_eq!(b.dropped, 10);
        let last: Vec<_> = b.visible(2, None).iter().map(|e| e.plain.clone()).collect();
        assert_eq!(last, vec!["line 2008", "line 2009"]);
        b.scroll_up(1);
        assert!(!b.follow);
        b.push(Stream::Stdout, "new", true);
        let v: Vec<_> = b.visible(1, None).iter().map(|e| e.plain.clone()).collect();
        assert_eq!(v, vec!["line 2008"], "view stays put while paused");
        b.resume();
        assert_eq!(b.visible(1, None)[0].plain, "new");
    }

    #[test]
    fn filter_shows_matching_lines_only() {
        let mut b = LogBuf::new();
        for t in ["error: a", "ok", "error: b", "ok"] {
            b.push(Stream::Stdout, t, true);
        }
        let v: Vec<_> = b
            .visible(5, Some("error"))
            .iter()
            .map(|e| e.plain.clone())
            .collect();
        assert_eq!(v, vec!["error: a", "error: b"]);
    }
}
