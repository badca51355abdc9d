//! The log filter over the whole log (`/` then Enter on the dashboard): the
//! lines of the candidate's log file that match, found by the shell in one
//! pass over the file (`Effect::SearchLog`), shown as one list followed by
//! the live lines that match after the search. Only the matches' line
//! numbers are held, and the entries of a window of them around the view
//! (loaded by `Effect::LoadFound`), so a filter over millions of lines stays
//! small. Pure: no I/O here.

use super::logbuf::LogEntry;

/// Matches listed at most; past it they are counted, not kept.
pub const HIT_CAP: usize = 200_000;
/// Matches whose lines are loaded around the view, at most.
pub const WINDOW: usize = 400;

/// The whole-log filter of one candidate.
#[derive(Debug, Clone, Default)]
pub struct Found {
    pub query: String,
    /// The shell is still reading the file.
    pub searching: bool,
    /// Lines of the file searched; the lines after them are the ring's.
    pub upto: u64,
    /// The ring's push count at which its lines come after `upto`.
    pub ring_from: u64,
    /// File lines that match, in order (at most [`HIT_CAP`]).
    pub hits: Vec<u64>,
    /// Matches past the cap, counted only.
    pub more: u64,
    /// The row shown at the top; None follows the newest match.
    pub top: Option<usize>,
    /// The index in `hits` of `entries[0]`.
    pub first: usize,
    pub entries: Vec<LogEntry>,
    /// A load of this range of `hits` is asked for.
    pub asked: Option<(usize, usize)>,
}

/// One row of the filtered view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    /// Match `i` of the file (index in `hits`).
    Hit(usize),
    /// The `i`th of the live lines that match after the search.
    Live(usize),
}

impl Found {
    /// A search for `query` started over the file's first `upto` lines.
    pub fn started(query: &str, upto: u64, ring_from: u64) -> Self {
        Found {
            query: query.to_string(),
            searching: true,
            upto,
            ring_from,
            ..Default::default()
        }
    }

    /// The search's result: the matches, and the entries of the last of
    /// them from hit `first`.
    pub fn finished(&mut self, hits: Vec<u64>, more: u64, first: usize, entries: Vec<LogEntry>) {
        self.searching = false;
        self.hits = hits;
        self.more = more;
        self.first = first;
        self.entries = entries;
        self.asked = None;
    }

    /// Entries of hits `first..` arrived.
    pub fn loaded(&mut self, first: usize, entries: Vec<LogEntry>) {
        self.first = first;
        self.entries = entries;
        self.asked = None;
    }

    /// Matches in all: listed, counted past the cap, and live ones.
    pub fn total(&self, live: usize) -> u64 {
        self.hits.len() as u64 + self.more + live as u64
    }

    /// The rows to show, oldest first, `rows` high, with `live` live matches
    /// after the listed ones.
    pub fn rows(&self, rows: usize, live: usize) -> Vec<Row> {
        let all = self.hits.len() + live;
        let last = all.saturating_sub(rows);
        let start = self.top.map_or(last, |t| t.min(last));
        (start..(start + rows).min(all))
            .map(|i| match i.checked_sub(self.hits.len()) {
                None => Row::Hit(i),
                Some(l) => Row::Live(l),
            })
            .collect()
    }

    /// The loaded entry of hit `i`, if loaded.
    pub fn entry(&self, i: usize) -> Option<&LogEntry> {
        i.checked_sub(self.first).and_then(|k| self.entries.get(k))
    }

    /// Scroll by `delta` rows (negative: up, toward older matches) in a
    /// view `rows` high; reaching the end follows again.
    pub fn scroll(&mut self, delta: i64, live: usize, rows: usize) {
        let last = (self.hits.len() + live).saturating_sub(rows) as i64;
        let at = self.top.map_or(last, |t| (t as i64).min(last)) + delta;
        self.top = (at < last).then_some(at.max(0) as usize);
    }

    /// The range of `hits` to load (first, count) when the rows shown are
    /// not all loaded; None when they are, or when that load is asked for.
    pub fn to_load(&mut self, rows: usize, live: usize) -> Option<(usize, usize)> {
        if self.searching {
            return None;
        }
        let hits: Vec<usize> = self
            .rows(rows, live)
            .into_iter()
            .filter_map(|r| match r {
                Row::Hit(i) => Some(i),
                Row::Live(_) => None,
            })
            .collect();
        let (Some(&a), Some(&b)) = (hits.first(), hits.last()) else {
            return None;
        };
        let loaded = self.first..self.first + self.entries.len();
        if loaded.contains(&a) && loaded.contains(&b) {
            return None;
        }
        let from = a.saturating_sub(WINDOW / 4);
        let range = (from, WINDOW.min(self.hits.len() - from));
        if self.asked == Some(range) {
            return None;
        }
        self.asked = Some(range);
        Some(range)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Matcher;
    use rascal_core::model::log::Stream;

    fn entry(t: &str) -> LogEntry {
        super::super::logbuf::LogBuf::entry(Stream::Stdout, t, None, false)
    }

    #[test]
    fn smart_case() {
        assert!(Matcher::new("error").is_match("An ERROR here"));
        assert!(!Matcher::new("Error").is_match("an error here"));
        assert!(Matcher::new("Error").is_match("an Error here"));
        assert!(Matcher::new("").is_match("anything"));
    }

    #[test]
    fn rows_list_the_file_matches_then_the_live_ones() {
        let mut f = Found::started("x", 100, 7);
        f.finished(
            vec![3, 10, 50],
            0,
            0,
            vec![entry("a"), entry("b"), entry("c")],
        );
        assert_eq!(
            f.rows(10, 2),
            vec![
                Row::Hit(0),
                Row::Hit(1),
                Row::Hit(2),
                Row::Live(0),
                Row::Live(1)
            ]
        );
        assert_eq!(f.rows(2, 2), vec![Row::Live(0), Row::Live(1)]);
        f.scroll(-3, 2, 2);
        assert_eq!(f.rows(2, 2), vec![Row::Hit(0), Row::Hit(1)]);
        f.scroll(-100, 2, 2);
        assert_eq!(f.top, Some(0), "stops at the first match");
        assert_eq!(f.rows(2, 2), vec![Row::Hit(0), Row::Hit(1)]);
        f.scroll(1, 2, 2);
        assert_eq!(f.rows(2, 2), vec![Row::Hit(1), Row::Hit(2)]);
        f.scroll(100, 2, 2);
        assert_eq!(f.top, None, "the end follows again");
    }

    #[test]
    fn scrolling_out_of_the_loaded_window_asks_for_it_once() {
        let mut f = Found::started("x", 10_000, 0);
        let hits: Vec<u64> = (0..5_000).map(|i| i * 2).collect();
        let tail: Vec<LogEntry> = (0..WINDOW).map(|i| entry(&i.to_string())).collect();
        f.finished(hits, 0, 5_000 - WINDOW, tail);
        assert_eq!(f.to_load(20, 0), None, "the tail came with the result");
        f.scroll(-1_000, 0, 20);
        let want = f.to_load(20, 0).expect("the view left the window");
        assert_eq!(want, (5_000 - 1_020 - WINDOW / 4, WINDOW));
        assert_eq!(f.to_load(20, 0), None, "asked once");
        f.loaded(want.0, (0..WINDOW).map(|i| entry(&i.to_string())).collect());
        assert_eq!(f.to_load(20, 0), None);
        assert!(f.entry(5_000 - 1_020).is_some());
        assert!(f.entry(5_000 - 1).is_none());
    }

    #[test]
    fn nothing_to_load_while_searching_or_with_no_match() {
        let mut f = Found::started("x", 10, 0);
        assert_eq!(f.to_load(20, 0), None);
        f.finished(Vec::new(), 0, 0, Vec::new());
        assert_eq!(f.to_load(20, 3), None);
        assert_eq!(f.rows(20, 3).len(), 3);
    }
}
