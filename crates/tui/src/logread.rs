//! The TUI shell's reads of a candidate's log file, off the UI thread: a
//! window of lines (scrollback), a search over the whole file (the `/`
//! filter), and the lines of chosen matches. Each reads segments the
//! journal recorded, checked against their hashes (`LogView`).

use super::action::LogLineRead;
use super::found::{HIT_CAP, WINDOW};
use super::search::Matcher;
use rascal_core::model::event::CandidateInfo;
use rascal_core::model::log::Segment;
use rascal_engine::store::LogView;
use rascal_engine::RunHandle;
use std::collections::VecDeque;

fn view(run: &RunHandle, info: &CandidateInfo) -> Option<LogView> {
    run.log(info).ok()
}

/// The lines of `spans` (segment, from, to), in order.
pub fn window(
    run: &RunHandle,
    info: &CandidateInfo,
    spans: Vec<(Segment, u64, u64)>,
) -> Vec<LogLineRead> {
    let Some(view) = view(run, info) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for (seg, a, b) in spans {
        view.each(&seg, a, b, |stream, text, display| {
            lines.push((stream, text.to_string(), display))
        });
    }
    lines
}

/// What a search of the log file found.
#[derive(Debug, Default)]
pub struct Searched {
    /// File lines that match (at most [`HIT_CAP`]).
    pub hits: Vec<u64>,
    /// Matches past the cap.
    pub more: u64,
    /// The index in `hits` of the first of `lines`.
    pub first: usize,
    /// The lines of the last listed matches (at most [`WINDOW`]).
    pub lines: Vec<LogLineRead>,
}

/// Search the file lines of `spans` (segment, from, to; the first starting
/// at file line `from`) for `query`, matched against each line as the
/// screen shows it (readable form, colours stripped).
pub fn search(
    run: &RunHandle,
    info: &CandidateInfo,
    from: u64,
    spans: Vec<(Segment, u64, u64)>,
    query: &str,
) -> Searched {
    let mut out = Searched::default();
    let Some(view) = view(run, info) else {
        return out;
    };
    let m = Matcher::new(query);
    let mut tail: VecDeque<LogLineRead> = VecDeque::new();
    let mut line = from;
    for (seg, a, b) in spans {
        // Numbered by the segment's own count, even when it could not be
        // read (then it is one line saying so).
        let start = line;
        view.each(&seg, a, b, |stream, text, display| {
            let shown = display.as_deref().unwrap_or(text);
            let hit = if shown.contains('\x1b') {
                let plain: String = super::ansi::parse_line(shown, false)
                    .spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect();
                m.is_match(&plain)
            } else {
                m.is_match(shown)
            };
            if hit {
                if out.hits.len() < HIT_CAP {
                    out.hits.push(line);
                    if tail.len() == WINDOW {
                        tail.pop_front();
                    }
                    tail.push_back((stream, text.to_string(), display));
                } else {
                    out.more += 1;
                }
            }
            line += 1;
        });
        line = start + (b - a);
    }
    out.first = out.hits.len() - tail.len();
    out.lines = tail.into();
    out
}

/// The lines of `wanted` (segment, the lines wanted counted in it).
pub fn chosen(
    run: &RunHandle,
    info: &CandidateInfo,
    wanted: Vec<(Segment, Vec<u64>)>,
) -> Vec<LogLineRead> {
    let Some(view) = view(run, info) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for (seg, want) in wanted {
        let (Some(&a), Some(&b)) = (want.first(), want.last()) else {
            continue;
        };
        let (mut i, before) = (a, lines.len());
        let mut next = want.iter().peekable();
        view.each(&seg, a, b + 1, |stream, text, display| {
            if next.peek() == Some(&&i) {
                next.next();
                lines.push((stream, text.to_string(), display));
            }
            i += 1;
        });
        // A segment that could not be read said so in one line: it stands
        // for each line wanted, so the rest stay in step.
        while lines.len() < before + want.len() {
            let Some(last) = lines.last().cloned() else {
                break;
            };
            lines.push(last);
        }
    }
    lines
}
