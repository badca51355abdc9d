//! What the comparator keeps of one changed file to tell how alike two
//! candidates' changes are, in bounded memory: a small file's changed lines
//! whole (normalised), a large one's sketch — its size and the smallest
//! hashes of its normalised lines (a bottom-k MinHash), from which the share
//! of lines two files have in common is estimated.
//!
//! Normalised: each added line with its whitespace collapsed (formatting
//! noise is not disagreement), blank lines left out, preceded by the
//! operation and old path and followed by the count of removed lines.

use crate::model::changeset::FileChange;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// How many hashes a sketch keeps.
pub const SKETCH_SIZE: usize = 128;

/// The most normalised text one ChangeSet keeps whole, over all its files;
/// past it, files are sketched.
pub const TEXT_BUDGET: usize = 1024 * 1024;

pub use crate::model::changeset::Likeness;

impl Likeness {
    /// The likeness of `f` (whose added lines are still held): its text
    /// whole when it fits in what is left of `budget` (which it then
    /// uses), else its sketch.
    pub fn of(f: &FileChange, budget: &mut usize) -> Likeness {
        let len = normalised_len(f);
        if len <= *budget {
            *budget -= len;
            return Likeness::Text(normalised(f).into());
        }
        let mut sketch = Sketcher::default();
        sketch.add(&header(f));
        for l in &f.added_lines {
            sketch.add_tokens(l.text.split_whitespace());
        }
        sketch.add(&footer(f));
        Likeness::Sketch {
            len: len as u64,
            mins: sketch.finish(),
        }
    }

    /// The normalised text's length: the weight of the file when changes
    /// are compared.
    pub fn len(&self) -> u64 {
        match self {
            Likeness::Text(t) => t.len() as u64,
            Likeness::Sketch { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How alike two files' changes are, 0..1: the share of matching lines
    /// (in order) when both are held whole, else the estimated share of
    /// distinct lines they have in common.
    pub fn similarity(&self, other: &Likeness) -> f64 {
        match (self, other) {
            (Likeness::Text(a), Likeness::Text(b)) => {
                similar::TextDiff::from_lines(a.as_ref(), b.as_ref()).ratio() as f64
            }
            _ => estimate(&self.mins(), &other.mins()),
        }
    }

    fn mins(&self) -> Arc<[u64]> {
        match self {
            Likeness::Sketch { mins, .. } => mins.clone(),
            Likeness::Text(t) => {
                let mut s = Sketcher::default();
                for line in t.lines() {
                    s.add(line);
                }
                s.finish()
            }
        }
    }
}

/// A file's likeness built window by window as the file is streamed
/// (`FileChange::part`): the same as [`Likeness::of`] the whole file, with
/// no more than the budget's text held at any time.
pub struct Building {
    /// The normalised text so far, while it fits in the budget.
    text: Option<String>,
    len: usize,
    sketch: Sketcher,
    budget: usize,
}

impl Building {
    /// Start the likeness of `f` with what is left of `budget`.
    pub fn new(f: &FileChange, budget: usize) -> Self {
        let mut text = header(f);
        text.push('\n');
        let mut sketch = Sketcher::default();
        sketch.add(&header(f));
        let len = text.len();
        Building {
            text: (len <= budget).then_some(text),
            len,
            sketch,
            budget,
        }
    }

    /// The added lines of one window of `f`.
    pub fn lines(&mut self, f: &FileChange) {
        for l in &f.added_lines {
            let mut words = l.text.split_whitespace().peekable();
            if words.peek().is_none() {
                continue;
            }
            self.sketch.add_tokens(l.text.split_whitespace());
            let (mut n, mut bytes) = (0, 0);
            for w in l.text.split_whitespace() {
                n += 1;
                bytes += w.len();
            }
            self.len += 1 + bytes + (n - 1) + 1;
            if self.len > self.budget {
                self.text = None;
            }
            if let Some(text) = &mut self.text {
                text.push('+');
                for (i, w) in words.enumerate() {
                    if i > 0 {
                        text.push(' ');
                    }
                    text.push_str(w);
                }
                text.push('\n');
            }
        }
    }

    /// The likeness, once every window of `f` was fed (`f.removed` final);
    /// uses `budget` when held whole.
    pub fn finish(mut self, f: &FileChange, budget: &mut usize) -> Likeness {
        let foot = footer(f);
        self.sketch.add(&foot);
        self.len += foot.len() + 1;
        match self.text {
            Some(mut text) if self.len <= *budget => {
                text.push_str(&foot);
                text.push('\n');
                *budget -= self.len;
                Likeness::Text(text.into())
            }
            _ => Likeness::Sketch {
                len: self.len as u64,
                mins: self.sketch.finish(),
            },
        }
    }
}

/// The normalised text of `f` (its added lines held).
pub fn normalised(f: &FileChange) -> String {
    let mut text = header(f);
    text.push('\n');
    for l in &f.added_lines {
        let mut words = l.text.split_whitespace();
        if let Some(first) = words.next() {
            text.push('+');
            text.push_str(first);
            for w in words {
                text.push(' ');
                text.push_str(w);
            }
            text.push('\n');
        }
    }
    text.push_str(&footer(f));
    text.push('\n');
    text
}

fn header(f: &FileChange) -> String {
    format!("{} {}", f.op.name(), f.old_path.as_deref().unwrap_or(""))
}

fn footer(f: &FileChange) -> String {
    format!("-{}", f.removed)
}

/// The length of [`normalised`], without building it.
fn normalised_len(f: &FileChange) -> usize {
    let mut len = header(f).len() + 1 + footer(f).len() + 1;
    for l in &f.added_lines {
        let (mut words, mut bytes) = (0, 0);
        for w in l.text.split_whitespace() {
            words += 1;
            bytes += w.len();
        }
        if words > 0 {
            len += 1 + bytes + (words - 1) + 1;
        }
    }
    len
}

/// The smallest distinct hashes of the lines added to it.
#[derive(Default)]
struct Sketcher {
    /// Ascending, distinct, at most SKETCH_SIZE.
    mins: Vec<u64>,
}

impl Sketcher {
    /// One normalised line, as it reads in [`normalised`] (without `+`
    /// for an added line: both forms go through `add_tokens`).
    fn add(&mut self, line: &str) {
        let line = line.strip_prefix('+').unwrap_or(line);
        self.add_tokens(line.split(' '));
    }

    /// One line given as its words; a line without words is skipped.
    fn add_tokens<'a>(&mut self, words: impl Iterator<Item = &'a str>) {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let mut any = false;
        for w in words.filter(|w| !w.is_empty()) {
            any = true;
            w.hash(&mut h);
        }
        if any {
            self.push(h.finish());
        }
    }

    fn push(&mut self, hash: u64) {
        if self.mins.len() == SKETCH_SIZE && hash >= self.mins[SKETCH_SIZE - 1] {
            return;
        }
        if let Err(at) = self.mins.binary_search(&hash) {
            self.mins.insert(at, hash);
            self.mins.truncate(SKETCH_SIZE);
        }
    }

    fn finish(self) -> Arc<[u64]> {
        self.mins.into()
    }
}

/// The estimated Jaccard similarity of two sets from their bottom-k
/// sketches: of the k smallest hashes of the union, the share in both.
fn estimate(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (mut i, mut j, mut seen, mut both) = (0, 0, 0, 0);
    while seen < SKETCH_SIZE && (i < a.len() || j < b.len()) {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                both += 1;
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => i += 1,
            (Some(_), None) => i += 1,
            _ => j += 1,
        }
        seen += 1;
    }
    both as f64 / seen as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::changeset::{FileChange, Operation};

    fn file(lines: &[String]) -> FileChange {
        FileChange::new("a.rs", Operation::Create).with_lines(lines)
    }

    #[test]
    fn normalised_length_is_the_texts() {
        let f = file(&["  a   b ".into(), "".into(), "c".into()]);
        assert_eq!(normalised(&f), "create \n+a b\n+c\n-0\n");
        assert_eq!(normalised_len(&f), normalised(&f).len());
    }

    #[test]
    fn small_files_are_held_whole_and_large_ones_sketched() {
        let small = file(&["x".into()]);
        let mut budget = TEXT_BUDGET;
        assert!(matches!(
            Likeness::of(&small, &mut budget),
            Likeness::Text(_)
        ));
        let mut none = 0;
        let l = Likeness::of(&small, &mut none);
        assert!(matches!(l, Likeness::Sketch { .. }));
        assert_eq!(l.len() as usize, normalised(&small).len());
    }

    #[test]
    fn built_by_windows_is_the_same_as_whole() {
        let lines: Vec<String> = (0..3000).map(|i| format!("  let  v{i} = {i};")).collect();
        let f = file(&lines);
        for budget in [TEXT_BUDGET, 10] {
            let (mut a, mut b) = (budget, budget);
            let whole = Likeness::of(&f, &mut a);
            let mut building = Building::new(&f, b);
            for chunk in f.added_lines.chunks(700) {
                let mut part = f.clone();
                part.added_lines = chunk.to_vec();
                building.lines(&part);
            }
            assert_eq!(building.finish(&f, &mut b), whole);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn sketches_estimate_the_shared_lines() {
        let lines: Vec<String> = (0..4000).map(|i| format!("let v{i} = {i};")).collect();
        let mut half = lines[..2000].to_vec();
        half.extend((0..2000).map(|i| format!("other {i}")));
        let (a, b) = (file(&lines), file(&half));
        let mut none = 0;
        let (sa, sb) = (Likeness::of(&a, &mut none), Likeness::of(&b, &mut none));
        assert_eq!(sa.similarity(&sa), 1.0);
        // Jaccard of the two line sets is 2000 / 6000.
        let s = sa.similarity(&sb);
        assert!((0.15..0.55).contains(&s), "{s}");
        let other = file(&(0..4000).map(|i| format!("z{i}")).collect::<Vec<_>>());
        assert!(sa.similarity(&Likeness::of(&other, &mut none)) < 0.05);
        // The same file held whole and sketched: alike.
        let mut budget = TEXT_BUDGET;
        let whole = Likeness::of(&a, &mut budget);
        assert!(matches!(whole, Likeness::Text(_)));
        assert_eq!(sa.similarity(&whole), 1.0);
    }
}
