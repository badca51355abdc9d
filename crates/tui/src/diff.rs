//! A unified diff parsed once into files, hunks and lines, with the pairs
//! of removed/added lines that side-by-side and intraline emphasis need.
//! Pure: text in, model out.

use rascal_core::text::sanitize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Hunk,
    Context,
    Add,
    Del,
    /// `\ No newline at end of file`, binary notes, mode lines.
    Meta,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: LineKind,
    pub old: Option<u32>,
    pub new: Option<u32>,
    /// Sanitised text without the `+`/`-`/` ` marker.
    pub text: String,
    /// Char range changed against the paired line (intraline emphasis).
    pub emph: Option<(usize, usize)>,
}

/// One side-by-side row: indices into `DiffFile::lines`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub left: Option<usize>,
    pub right: Option<usize>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiffFile {
    pub path: String,
    pub added: u32,
    pub removed: u32,
    pub lines: Vec<DiffLine>,
    /// Indices of hunk headers in `lines`.
    pub hunks: Vec<usize>,
    /// Side-by-side rows.
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    pub files: Vec<DiffFile>,
    /// Why the change could not be read (its tree and workspace gone):
    /// said instead of "changed nothing".
    pub unreadable: Option<String>,
}

impl Diff {
    /// A change that could not be read, and why.
    pub fn unreadable(why: String) -> Diff {
        Diff {
            files: Vec::new(),
            unreadable: Some(why),
        }
    }

    pub fn parse(text: &str) -> Diff {
        let mut files: Vec<DiffFile> = Vec::new();
        let (mut old, mut new) = (0u32, 0u32);
        let mut in_header = false;
        for raw in text.lines() {
            if let Some(rest) = raw.strip_prefix("diff --git ") {
                let path = rest
                    .rsplit_once(" b/")
                    .map(|(_, b)| b.to_string())
                    .unwrap_or_else(|| rest.to_string());
                files.push(DiffFile {
                    path: sanitize(&path),
                    ..Default::default()
                });
                in_header = true;
                continue;
            }
            if files.is_empty() {
                // A diff without git headers (e.g. produced by `similar`).
                if raw.starts_with("--- ") {
                    continue;
                }
                files.push(DiffFile::default());
                in_header = true;
            }
            let f = files.last_mut().expect("a file");
            if in_header {
                if let Some(p) = raw.strip_prefix("+++ ") {
                    let p = p.strip_prefix("b/").unwrap_or(p);
                    if f.path.is_empty() || p != "/dev/null" {
                        f.path = sanitize(p);
                    }
                    continue;
                }
                if raw.starts_with("--- ") || raw.starts_with("index ") {
                    continue;
                }
            }
            if raw.starts_with("@@") {
                in_header = false;
                let (o, n) = hunk_starts(raw);
                old = o;
                new = n;
                f.hunks.push(f.lines.len());
                f.lines.push(DiffLine {
                    kind: LineKind::Hunk,
                    old: None,
                    new: None,
                    text: sanitize(raw),
                    emph: None,
                });
                continue;
            }
            if in_header {
                f.lines.push(meta(raw));
                continue;
            }
            let (kind, body) = match raw.chars().next() {
                Some('+') => (LineKind::Add, &raw[1..]),
                Some('-') => (LineKind::Del, &raw[1..]),
                Some(' ') => (LineKind::Context, &raw[1..]),
                _ => {
                    f.lines.push(meta(raw));
                    continue;
                }
            };
            let (o, n) = match kind {
                LineKind::Add => {
                    new += 1;
                    f.added += 1;
                    (None, Some(new - 1))
                }
                LineKind::Del => {
                    old += 1;
                    f.removed += 1;
                    (Some(old - 1), None)
                }
                _ => {
                    old += 1;
                    new += 1;
                    (Some(old - 1), Some(new - 1))
                }
            };
            f.lines.push(DiffLine {
                kind,
                old: o,
                new: n,
                text: expand_tabs(&sanitize(body)),
                emph: None,
            });
        }
        for f in &mut files {
            pair(f);
        }
        Diff {
            files,
            unreadable: None,
        }
    }

    pub fn added(&self) -> u32 {
        self.files.iter().map(|f| f.added).sum()
    }

    pub fn removed(&self) -> u32 {
        self.files.iter().map(|f| f.removed).sum()
    }

    /// The file and line index showing `path:line` (new side), for jumping
    /// from an issue to the diff.
    pub fn locate(&self, path: &str, line: Option<u32>) -> Option<(usize, usize)> {
        let fi = self.files.iter().position(|f| f.path == path)?;
        let f = &self.files[fi];
        let li = match line {
            Some(l) => f
                .lines
                .iter()
                .position(|d| d.new == Some(l))
                .or_else(|| f.lines.iter().position(|d| d.new.is_some_and(|n| n >= l)))
                .unwrap_or(0),
            None => 0,
        };
        Some((fi, li))
    }
}

/// Tabs as spaces to the next multiple of [`TAB`] columns: a tab takes
/// no column on its own, so Go or Makefile indentation would vanish.
fn expand_tabs(s: &str) -> String {
    if !s.contains('\t') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut col = 0;
    for g in unicode_segmentation::UnicodeSegmentation::graphemes(s, true) {
        if g == "\t" {
            let n = TAB - col % TAB;
            out.push_str(&" ".repeat(n));
            col += n;
        } else {
            out.push_str(g);
            col += rascal_core::text::width(g);
        }
    }
    out
}

/// Columns between tab stops in diffs.
const TAB: usize = 4;

fn meta(raw: &str) -> DiffLine {
    DiffLine {
        kind: LineKind::Meta,
        old: None,
        new: None,
        text: sanitize(raw),
        emph: None,
    }
}

/// `@@ -a,b +c,d @@` → (a, c).
fn hunk_starts(h: &str) -> (u32, u32) {
    let mut old = 1;
    let mut new = 1;
    for part in h.split_whitespace().take(3) {
        let num = |s: &str| s.split(',').next().and_then(|n| n.parse().ok());
        if let Some(p) = part.strip_prefix('-') {
            old = num(p).unwrap_or(1);
        } else if let Some(p) = part.strip_prefix('+') {
            new = num(p).unwrap_or(1);
        }
    }
    (old.max(1), new.max(1))
}

/// Build side-by-side rows and mark intraline changes on paired lines.
fn pair(f: &mut DiffFile) {
    let mut rows = Vec::new();
    let n = f.lines.len();
    let mut i = 0;
    while i < n {
        match f.lines[i].kind {
            LineKind::Del | LineKind::Add => {
                let start = i;
                while i < n && f.lines[i].kind == LineKind::Del {
                    i += 1;
                }
                let dels: Vec<usize> = (start..i).collect();
                let astart = i;
                while i < n && f.lines[i].kind == LineKind::Add {
                    i += 1;
                }
                let adds: Vec<usize> = (astart..i).collect();
                for k in 0..dels.len().max(adds.len()) {
                    let (l, r) = (dels.get(k).copied(), adds.get(k).copied());
                    if let (Some(l), Some(r)) = (l, r) {
                        let (a, b) = emphasis(&f.lines[l].text, &f.lines[r].text);
                        f.lines[l].emph = a;
                        f.lines[r].emph = b;
                    }
                    rows.push(Row { left: l, right: r });
                }
            }
            LineKind::Context => {
                rows.push(Row {
                    left: Some(i),
                    right: Some(i),
                });
                i += 1;
            }
            LineKind::Hunk | LineKind::Meta => {
                rows.push(Row {
                    left: Some(i),
                    right: None,
                });
                i += 1;
            }
        }
    }
    f.rows = rows;
}

type Range = Option<(usize, usize)>;

/// The changed middle of two similar lines (common prefix and suffix
/// removed), as char ranges; None when the lines share too little.
pub fn emphasis(old: &str, new: &str) -> (Range, Range) {
    let a: Vec<char> = old.chars().collect();
    let b: Vec<char> = new.chars().collect();
    let pre = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let max_suf = a.len().min(b.len()) - pre;
    let suf = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_suf)
        .take_while(|(x, y)| x == y)
        .count();
    let common = pre + suf;
    if common * 3 < a.len().max(b.len()) {
        return (None, None);
    }
    let ra = (pre < a.len() - suf).then_some((pre, a.len() - suf));
    let rb = (pre < b.len() - suf).then_some((pre, b.len() - suf));
    (ra, rb)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "diff --git a/src/lib.rs b/src/lib.rs\nindex 1..2 100644\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,4 @@\n fn a() {}\n-let x = 1;\n+let x = 2;\n+let y = 3;\n fn b() {}\ndiff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n";

    #[test]
    fn parses_files_counts_and_line_numbers() {
        let d = Diff::parse(SAMPLE);
        assert_eq!(d.files.len(), 2);
        let f = &d.files[0];
        assert_eq!((f.path.as_str(), f.added, f.removed), ("src/lib.rs", 2, 1));
        assert_eq!(f.hunks, vec![0]);
        let add = f.lines.iter().find(|l| l.text == "let y = 3;").unwrap();
        assert_eq!(add.new, Some(3));
        assert_eq!(d.files[1].path, "new.txt");
        assert_eq!(d.locate("src/lib.rs", Some(3)), Some((0, 4)));
    }

    #[test]
    fn pairs_removed_and_added_lines_with_intraline_emphasis() {
        let d = Diff::parse(SAMPLE);
        let f = &d.files[0];
        let del = f
            .lines
            .iter()
            .position(|l| l.kind == LineKind::Del)
            .unwrap();
        assert_eq!(f.lines[del].emph, Some((8, 9)));
        assert!(f
            .rows
            .iter()
            .any(|r| r.left == Some(del) && r.right == Some(del + 1)));
        assert!(f
            .rows
            .iter()
            .any(|r| r.left.is_none() && r.right == Some(del + 2)));
    }

    #[test]
    fn tabs_become_spaces_to_the_next_stop() {
        let d = Diff::parse("--- a\n+++ b\n@@ -1 +1 @@\n-\tx\n+ab\tc\t\td\n");
        assert_eq!(d.files[0].lines[1].text, "    x");
        assert_eq!(d.files[0].lines[2].text, "ab  c       d");
    }

    #[test]
    fn escapes_in_diffs_are_sanitised() {
        let d = Diff::parse("--- a\n+++ b\n@@ -1 +1 @@\n-a\n+\u{1b}[2Jb\n");
        assert_eq!(d.files[0].lines[2].text, "^[[2Jb");
    }
}
