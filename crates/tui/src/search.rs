//! Search in the diff screens (`/`): where a query matches a line (smart
//! case: a query without capitals ignores case), every match of a diff in
//! reading order, and the next or previous one from where the view is.
//! Pure: text and positions in, positions out.

use super::diff::Diff;

/// The search of the diff screens.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    pub query: String,
    /// The prompt is open: keys type into the query.
    pub editing: bool,
}

impl Search {
    /// A query is set and applied: matches are marked, `n`/`N` move.
    pub fn active(&self) -> bool {
        !self.editing && !self.query.is_empty()
    }
}

/// A smart-case matcher, as the diff search: a query with no capital
/// letter ignores case.
#[derive(Debug, Clone)]
pub struct Matcher {
    query: String,
    fold: bool,
}

impl Matcher {
    pub fn new(query: &str) -> Self {
        let fold = !query.chars().any(char::is_uppercase);
        Matcher {
            query: query.to_string(),
            fold,
        }
    }

    pub fn is_match(&self, text: &str) -> bool {
        if self.query.is_empty() {
            return true;
        }
        if self.fold {
            text.to_lowercase().contains(&self.query)
        } else {
            text.contains(&self.query)
        }
    }
}

/// Char ranges of `text` where `query` matches, left to right, not
/// overlapping. Smart case: a query with no capital letter ignores case.
pub fn ranges(text: &str, query: &str) -> Vec<(usize, usize)> {
    if query.is_empty() {
        return Vec::new();
    }
    let fold = !query.chars().any(char::is_uppercase);
    let norm = |c: char| {
        if fold {
            c.to_lowercase().next().unwrap_or(c)
        } else {
            c
        }
    };
    let hay: Vec<char> = text.chars().map(norm).collect();
    let needle: Vec<char> = query.chars().map(norm).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        if hay[i..i + needle.len()] == needle[..] {
            out.push((i, i + needle.len()));
            i += needle.len();
        } else {
            i += 1;
        }
    }
    out
}

/// Every line of `diff` that matches, as (file, line index), in reading order.
pub fn hits(diff: &Diff, query: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (fi, f) in diff.files.iter().enumerate() {
        for (li, l) in f.lines.iter().enumerate() {
            if !ranges(&l.text, query).is_empty() {
                out.push((fi, li));
            }
        }
    }
    out
}

/// Every line of `diff` that matches, as rows of the compare view, where
/// each file is a title row followed by its lines.
pub fn flat_hits(diff: &Diff, query: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut at = 0;
    for f in &diff.files {
        starts.push(at);
        at += 1 + f.lines.len();
    }
    hits(diff, query)
        .into_iter()
        .map(|(f, l)| starts[f] + 1 + l)
        .collect()
}

/// Which way to look from a position, and whether the position itself counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toward {
    /// The first match at or after the position (Enter).
    Here,
    /// The first match after it (`n`).
    Next,
    /// The last match before it (`N`).
    Prev,
}

/// The match to go to from `at`, wrapping around the ends; `true` when it
/// wrapped. None when nothing matches.
pub fn step<P: Ord + Copy>(hits: &[P], at: P, toward: Toward) -> Option<(P, bool)> {
    let found = match toward {
        Toward::Here => hits.iter().find(|&&h| h >= at),
        Toward::Next => hits.iter().find(|&&h| h > at),
        Toward::Prev => hits.iter().rev().find(|&&h| h < at),
    };
    match (found, toward) {
        (Some(&h), _) => Some((h, false)),
        (None, Toward::Prev) => hits.last().map(|&h| (h, true)),
        (None, _) => hits.first().map(|&h| (h, true)),
    }
}

/// `3/12`: which match the view is on (1-based) and how many there are;
/// `–/12` when the view is not on one.
pub fn position<P: Ord + Copy>(hits: &[P], at: P) -> String {
    match hits.iter().position(|&h| h == at) {
        Some(i) => format!("{}/{}", i + 1, hits.len()),
        None => format!("–/{}", hits.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smart_case_ranges_are_char_positions() {
        assert_eq!(ranges("Hello, hello", "hello"), vec![(0, 5), (7, 12)]);
        assert_eq!(ranges("Hello, hello", "Hello"), vec![(0, 5)]);
        assert_eq!(ranges("日本語 greet", "greet"), vec![(4, 9)]);
        assert_eq!(ranges("aaaa", "aa"), vec![(0, 2), (2, 4)]);
        assert!(ranges("abc", "").is_empty());
        assert!(ranges("ab", "abc").is_empty());
    }

    #[test]
    fn step_finds_here_next_and_previous_and_wraps() {
        let hits = [(0, 3), (0, 9), (1, 2)];
        assert_eq!(step(&hits, (0, 3), Toward::Here), Some(((0, 3), false)));
        assert_eq!(step(&hits, (0, 3), Toward::Next), Some(((0, 9), false)));
        assert_eq!(step(&hits, (0, 9), Toward::Prev), Some(((0, 3), false)));
        assert_eq!(step(&hits, (1, 2), Toward::Next), Some(((0, 3), true)));
        assert_eq!(step(&hits, (0, 0), Toward::Prev), Some(((1, 2), true)));
        assert_eq!(step::<(usize, usize)>(&[], (0, 0), Toward::Here), None);
        assert_eq!(position(&hits, (0, 9)), "2/3");
        assert_eq!(position(&hits, (0, 4)), "–/3");
    }

    #[test]
    fn hits_cover_every_file_and_compare_rows_count_titles() {
        let d = Diff::parse(crate::fixture::DIFF);
        let h = hits(&d, "shout");
        assert!(h.len() >= 3, "{h:?}");
        assert!(h.iter().any(|&(f, _)| f == 1), "README matches too");
        let flat = flat_hits(&d, "shout");
        assert_eq!(flat.len(), h.len());
        // The first file's lines start after its title row.
        assert_eq!(flat[0], h[0].1 + 1);
    }
}
