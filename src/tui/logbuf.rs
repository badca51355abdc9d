//! A candidate's log tail: a bounded ring of parsed lines (the full log is
//! on disk in the run directory), with follow mode and a scroll offset.

use crate::model::log::Stream;
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

#[derive(Debug, Clone, Default)]
pub struct LogBuf {
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
            lines: VecDeque::with_capacity(256),
            dropped: 0,
            offset: 0,
            follow: true,
        }
    }

    pub fn push(&mut self, stream: Stream, text: &str, color: bool) {
        self.push_with_raw(stream, text, None, color)
    }

    /// Push a readable line that has a raw form to toggle to.
    pub fn push_with_raw(&mut self, stream: Stream, text: &str, raw: Option<&str>, color: bool) {
        if self.lines.len() == CAPACITY {
            self.lines.pop_front();
            self.dropped += 1;
        }
        let line = super::ansi::parse_line(text, color);
        let plain = line.spans.iter().map(|s| s.content.as_ref()).collect();
        let raw = raw.map(|r| super::ansi::parse_line(r, color));
        self.lines.push_back(LogEntry {
            stream,
            plain,
            line,
            raw,
        });
        if !self.follow {
            // Keep the view still while new lines arrive below it.
            self.offset = (self.offset + 1).min(self.lines.len().saturating_sub(1));
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
        self.offset = 0;
        self.follow = true;
    }

    /// The `rows` entries to show (oldest first), honouring the scroll
    /// offset and an optional substring filter. Only these are touched.
    pub fn visible(&self, rows: usize, filter: Option<&str>) -> Vec<&LogEntry> {
        let mut out = Vec::with_capacity(rows);
        let mut skip = self.offset;
        for e in self.lines.iter().rev() {
            if let Some(f) = filter {
                if !f.is_empty() && !e.plain.contains(f) {
                    continue;
                }
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
