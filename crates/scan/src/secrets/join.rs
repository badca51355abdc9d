//! Putting back together what was split to slip past a line-by-line regex:
//! string literals joined by an operator (`"AKIA" + "IOSF…"`, on one line or
//! continued on the next), adjacent literals (`"ghp_abc"` then `"def"` on the
//! next line), the commas of a `concat`/`join`, escapes inside literals
//! (`"\x41KIA…"`), and consecutive lines that are each one bare token (a
//! wrapped base64 block, a folded YAML value).

use std::ops::Range;

use super::decode;

/// A text made by joining pieces of one or more adjacent lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Joined {
    /// Index (in the lines given) of the line it starts on.
    pub line: usize,
    pub text: String,
    /// The joined part of `text` (the rest is the first line's text before
    /// it and the last line's text after it, up to [`decode::CONTEXT`]
    /// bytes each).
    pub body: Range<usize>,
    /// How it was joined, for a finding's message.
    pub how: &'static str,
}

/// One string literal on a line: the byte offsets of its quotes.
#[derive(Debug, Clone, Copy)]
struct Lit {
    open: usize,
    close: usize,
}

/// Which bytes are quotes.
type Quotes = [bool; 256];

fn quote_table(quotes: &[u8]) -> Quotes {
    let mut t = [false; 256];
    for &q in quotes {
        t[q as usize] = true;
    }
    t
}

/// Does the quote at `b[i]` open a literal? An apostrophe right after a
/// letter or digit is prose (`don't`), unless that is a literal's prefix
/// (`f'…'`, `rb'…'`).
fn opens(b: &[u8], i: usize) -> bool {
    if b[i] != b'\'' {
        return true;
    }
    let mut k = i;
    while k > 0 && i - k < 2 && b"rbfuRBFU".contains(&b[k - 1]) {
        k -= 1;
    }
    k == 0 || !(b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'_')
}

/// The string literals of `line`, in order, up to the first unclosed quote,
/// into `out` (cleared first). True when the reading is doubtful: a quote
/// was left unclosed, or a literal in other quotes holds a `"` (a quote
/// paired with the wrong one further on).
fn literals(line: &str, quotes: &Quotes, out: &mut Vec<Lit>) -> bool {
    out.clear();
    let b = line.as_bytes();
    let mut i = 0;
    let mut doubtful = false;
    while i < b.len() {
        if !quotes[b[i] as usize] || !opens(b, i) {
            i += 1;
            continue;
        }
        let q = b[i];
        let mut j = i + 1;
        while j < b.len() && b[j] != q {
            j += if b[j] == b'\\' { 2 } else { 1 };
        }
        if j >= b.len() {
            return true;
        }
        doubtful |= q != b'"' && b[i + 1..j].contains(&b'"');
        out.push(Lit { open: i, close: j });
        i = j + 1;
    }
    doubtful
}

/// Does the text between two literals (`before`, then `after` on the next
/// line) join them? `listing()`: inside a `concat`/`join`, where commas join
/// too.
fn joins(before: &str, after: &str, listing: impl FnOnce() -> bool) -> bool {
    // At most a few characters of operator (and a prefix of the second
    // literal: f"…", b'…', r"…", L"…", @"…", $"…").
    let mut buf = [0u8; 6];
    let mut n = 0;
    for &c in before.as_bytes().iter().chain(after.as_bytes()) {
        if c.is_ascii_whitespace() || c == b'\\' {
            continue;
        }
        if n == buf.len() {
            return false;
        }
        buf[n] = c;
        n += 1;
    }
    let mut s = &buf[..n];
    for _ in 0..2 {
        if let [rest @ .., last] = s {
            if b"rbfuRBFUL@$".contains(last) {
                s = rest;
            }
        }
    }
    match s {
        b"" | b"+" | b"." | b".." | b"&" | b"~" | b"||" | b"<<" | b"++" | b"<>" => true,
        b"," => listing(),
        _ => false,
    }
}

/// Do `lines` speak of joining a list (`concat`, `join`)?
fn listing(lines: &[&str]) -> bool {
    lines
        .iter()
        .any(|l| l.contains("concat") || l.contains("join") || l.contains("CONCAT"))
}

/// The literal chains of `lines` (adjacent lines) that join two or more
/// literals, or that hold an escape: each as one text, unescaped.
pub fn literal_chains(lines: &[&str]) -> Vec<Joined> {
    let mut out = Vec::new();
    // When an apostrophe in prose may have paired with the wrong quote,
    // read double-quoted literals alone too.
    if chains(lines, b"\"'`", &mut out) {
        chains(lines, b"\"", &mut out);
    }
    out
}

/// The chains of literals in `lines`, into `out`. True when some line's
/// reading was doubtful.
fn chains(lines: &[&str], quotes: &[u8], out: &mut Vec<Joined>) -> bool {
    let quotes = quote_table(quotes);
    let mut chain: Vec<(usize, Lit)> = Vec::new();
    let mut lits = Vec::new();
    let mut doubtful = false;
    // For the current chain: up to which line `listing` was read, and its
    // answer (so each line is read once, however many commas it has).
    let mut listed: Option<(usize, bool)> = None;
    for (li, line) in lines.iter().enumerate() {
        if !line.bytes().any(|b| quotes[b as usize]) {
            finish(lines, &mut chain, out);
            listed = None;
            continue;
        }
        doubtful |= literals(line, &quotes, &mut lits);
        for &lit in &lits {
            let listing_now = || {
                let v = match listed {
                    Some((upto, v)) if upto >= li => v,
                    Some((upto, v)) => v || listing(&lines[upto + 1..=li]),
                    None => listing(&lines[chain[0].0.saturating_sub(1)..=li]),
                };
                listed = Some((li, v));
                v
            };
            let joined = match chain.last() {
                Some(&(pl, prev)) if pl == li => {
                    joins(&line[prev.close + 1..lit.open], "", listing_now)
                }
                Some(&(pl, prev)) if pl + 1 == li => {
                    joins(&lines[pl][prev.close + 1..], &line[..lit.open], listing_now)
                }
                _ => false,
            };
            if !joined {
                finish(lines, &mut chain, out);
                listed = None;
            }
            chain.push((li, lit));
        }
    }
    finish(lines, &mut chain, out);
    doubtful
}

/// Turn `chain` (emptied) into a joined text when it is worth a scan.
fn finish(lines: &[&str], chain: &mut Vec<(usize, Lit)>, out: &mut Vec<Joined>) {
    if chain.is_empty() {
        return;
    }
    joined(lines, chain, out);
    chain.clear();
}

fn joined(lines: &[&str], pieces: &[(usize, Lit)], out: &mut Vec<Joined>) {
    let Some(&(first_line, first)) = pieces.first() else {
        return;
    };
    let escaped = pieces
        .iter()
        .any(|&(l, lit)| lines[l][lit.open + 1..lit.close].contains('\\'));
    if pieces.len() < 2 && !escaped {
        return;
    }
    let (last_line, last) = *pieces.last().expect("not empty");
    let mut text = decode::before(lines[first_line], first.open + 1).to_string();
    let start = text.len();
    for &(l, lit) in pieces {
        unescape(&lines[l][lit.open + 1..lit.close], &mut text);
    }
    let body = start..text.len();
    text.push_str(decode::after(lines[last_line], last.close));
    out.push(Joined {
        line: first_line,
        text,
        body,
        how: if pieces.len() > 1 {
            ", split into string pieces"
        } else {
            ", written with escapes"
        },
    });
}

/// Append `s` with its backslash escapes resolved: `\xNN`, `\uNNNN`,
/// `\u{N…}`, `\NNN` (octal) and the one-letter ones; others keep their
/// character.
fn unescape(s: &str, out: &mut String) {
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let hex = |n: usize, chars: &mut std::iter::Peekable<std::str::Chars>| {
            let mut v = 0u32;
            let mut k = 0;
            while k < n {
                match chars.peek().and_then(|c| c.to_digit(16)) {
                    Some(d) => {
                        v = v * 16 + d;
                        chars.next();
                        k += 1;
                    }
                    None => break,
                }
            }
            char::from_u32(v).filter(|_| k > 0)
        };
        let decoded = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                char::from_u32(v)
            }
            'x' => hex(2, &mut chars),
            'u' if chars.peek() == Some(&'{') => {
                chars.next();
                let c = hex(6, &mut chars);
                if chars.peek() == Some(&'}') {
                    chars.next();
                }
                c
            }
            'u' => hex(4, &mut chars),
            other => Some(other),
        };
        out.push(decoded.unwrap_or('\u{fffd}'));
    }
}

/// Runs of two or more consecutive lines that are each one bare token of
/// base64 characters (at least [`decode::MIN_RUN`] long), joined.
pub fn token_blocks(lines: &[&str]) -> Vec<Joined> {
    let bare = |l: &str| {
        let t = l.trim();
        t.len() >= decode::MIN_RUN && decode::is_blob(t)
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut j = i;
        while j < lines.len() && bare(lines[j]) {
            j += 1;
        }
        if j - i >= 2 {
            let text: String = lines[i..j].iter().map(|l| l.trim()).collect();
            out.push(Joined {
                line: i,
                body: 0..text.len(),
                text,
                how: ", split over lines",
            });
        }
        i = j.max(i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bodies(lines: &[&str]) -> Vec<String> {
        literal_chains(lines)
            .into_iter()
            .map(|j| j.text[j.body].to_string())
            .collect()
    }

    #[test]
    fn operators_adjacency_and_continuations() {
        assert_eq!(
            bodies(&[r#"let k = "AKIA" + "IOSF" + "ODNN";"#]),
            vec!["AKIAIOSFODNN"]
        );
        assert_eq!(
            bodies(&[r#"k = ("ghp_abc""#, r#"     "def")"#]),
            vec!["ghp_abcdef"]
        );
        assert_eq!(bodies(&[r#"$k = 'ab' ."#, r#"  'cd';"#]), vec!["abcd"]);
        assert_eq!(bodies(&[r#"k = "ab" \"#, r#"  + f"cd""#]), vec!["abcd"]);
        assert_eq!(
            bodies(&["let k = concat!(", r#"    "ab","#, r#"    "cd","#, ");"]),
            vec!["abcd"]
        );
        // Commas outside a concat do not join; nor do lines apart.
        assert!(bodies(&[r#"f("ab", "cd")"#]).is_empty());
        assert!(bodies(&[r#"a = "ab" +"#, "", r#""cd""#]).is_empty());
        assert!(bodies(&[r#"if x == "ab" { "cd" }"#]).is_empty());
    }

    #[test]
    fn many_pieces_on_one_long_line_stay_linear() {
        // Two-piece chains broken apart (each keeps only some context),
        // and a long concat list (its line is read for `concat` once).
        let broken = r#""ab" + "cd" x "#.repeat(100_000);
        let j = literal_chains(&[&broken]);
        assert_eq!(j.len(), 100_000);
        assert!(j.iter().all(|j| j.text.len() <= 2 * decode::CONTEXT + 4));
        let list = format!("concat({})", r#""ab", "#.repeat(100_000));
        assert_eq!(literal_chains(&[&list]).len(), 1);
    }

    #[test]
    fn the_joined_text_keeps_its_line_around_it() {
        let j = &literal_chains(&[r#"password = "Tr0u" + "b4dor";  // x"#])[0];
        assert_eq!(j.text, r#"password = "Tr0ub4dor";  // x"#);
        assert_eq!(j.line, 0);
    }

    #[test]
    fn escapes_are_resolved() {
        assert_eq!(
            bodies(&[r#"k = "\x41KIA\u0049\u{4F}\123""#]),
            vec!["AKIAIOS"]
        );
        assert!(bodies(&[r#"k = "a\"b" + 'c'"#]).contains(&"a\"bc".to_string()));
    }

    #[test]
    fn prefixed_single_quoted_literals_join() {
        assert_eq!(bodies(&["k = f'ab' + rb'cd'"]), vec!["abcd"]);
        assert_eq!(
            bodies(&["// the user's key", "k = 'ab' + 'cd'"]),
            vec!["abcd"]
        );
    }

    #[test]
    fn apostrophes_in_prose_do_not_hide_literals() {
        let b = bodies(&[r#"/* it's */ let k = "AKI" + "A1";"#]);
        assert!(b.contains(&"AKIA1".to_string()), "{b:?}");
    }

    #[test]
    fn bare_token_lines_are_joined() {
        let j = token_blocks(&["key: >", "  QUtJQUlPU0ZP", "  RE5ON0VYQU1Q", "other text"]);
        assert_eq!(j.len(), 1);
        assert_eq!(j[0].text, "QUtJQUlPU0ZPRE5ON0VYQU1Q");
        assert_eq!(j[0].line, 1);
    }
}
