//! The words a test leans on that only its author's change added. In
//! cross-testing, a test that fails on another candidate's code because
//! that code lacks a name, a constant, a message or a file the test's
//! author added — and the base never had — shows nothing about how that
//! code behaves: two candidates sharing a marker cannot outvote a third
//! with it, and a test of an input the author special-cased (its literal
//! in the author's code) weighs nothing against code without the special
//! case. Words are read from tokens (comments never count, strings whole),
//! never from lines. Pure.

use super::base_tests::rust_test_modules;
use super::lex::{Source, Syntax};
use std::collections::BTreeSet;

/// Shorter words are too common to tell anything.
const MIN_WORD: usize = 3;

fn syntax(path: &str) -> Syntax {
    match path.rsplit('.').next().unwrap_or("") {
        "rs" => Syntax::Rust,
        "py" => Syntax::Python,
        "go" => Syntax::Go,
        "java" | "kt" | "scala" => Syntax::Jvm,
        _ => Syntax::Js,
    }
}

/// The function name in a runner's test id: `tests::adds`, `TestA::test_b`,
/// `test_calc.TestAdd.test_adds`, `tests/t.py::test_x[1-2]`, `TestAdd/sub`.
fn function_name(test: &str) -> &str {
    let test = test.split('[').next().unwrap_or(test);
    match test.rsplit_once("::") {
        Some((_, last)) => last,
        None => {
            let test = test.split('/').next().unwrap_or(test);
            test.rsplit('.').next().unwrap_or(test)
        }
    }
}

/// A function of the file: its name, and the byte range of its body.
struct Function<'a> {
    name: &'a str,
    body: (usize, usize),
    is_test: bool,
}

/// The functions of `src` (top level or nested, by their keyword).
fn functions<'a>(src: &Source<'a>, syn: Syntax) -> Vec<Function<'a>> {
    let keyword = match syn {
        Syntax::Rust => "fn",
        Syntax::Python => "def",
        Syntax::Go => "func",
        Syntax::Jvm | Syntax::Js => return Vec::new(),
    };
    let spans = src.spans();
    let mut out = Vec::new();
    for (k, &(a, b, lit)) in spans.iter().enumerate() {
        if lit || src.slice(a, b) != keyword {
            continue;
        }
        // Go methods: `func (r *T) Name(`.
        let mut j = k + 1;
        if syn == Syntax::Go && spans.get(j).is_some_and(|s| src.slice(s.0, s.1) == "(") {
            j = spans.partition_point(|s| s.0 <= src.close(spans[j].0));
        }
        let Some(&(na, nb, false)) = spans.get(j) else {
            continue;
        };
        let name = src.slice(na, nb);
        let body = match syn {
            Syntax::Python => python_body(src, a, nb),
            _ => braced_body(src, nb),
        };
        let Some(body) = body else { continue };
        let is_test = match syn {
            Syntax::Rust => rust_attribute_says_test(src, a),
            Syntax::Python => name.starts_with("test"),
            _ => name.starts_with("Test"),
        };
        out.push(Function {
            name,
            body,
            is_test,
        });
    }
    out
}

/// From after a function's name, its `{ … }` body (the first brace
/// outside the signature's brackets).
fn braced_body(src: &Source, mut i: usize) -> Option<(usize, usize)> {
    while i < src.len() {
        match src.at(i) {
            b'(' | b'[' => i = src.close(i).max(i) + 1,
            b'{' => return Some((i, src.close(i).max(i) + 1)),
            b';' => return None,
            _ => i += 1,
        }
    }
    None
}

/// A Python function's body: the lines after its `def` line indented
/// deeper than it.
fn python_body(src: &Source, def: usize, name_end: usize) -> Option<(usize, usize)> {
    let starts = src.line_starts();
    let line_of = |i: usize| starts.partition_point(|&s| s <= i).saturating_sub(1);
    let indent = |l: usize| -> Option<usize> {
        let (a, b) = (starts[l], starts.get(l + 1).copied().unwrap_or(src.len()));
        let line = src.code_str(a, b);
        let t = line.trim_start();
        (!t.trim().is_empty()).then(|| line.len() - t.len())
    };
    let own = indent(line_of(def))?;
    // The signature may run over lines: the body starts after its `:`.
    let open = (name_end..src.len()).find(|&i| src.at(i) == b'(')?;
    let first = line_of(src.close(open)) + 1;
    let mut last = first;
    for l in first..starts.len() {
        match indent(l) {
            Some(n) if n <= own => break,
            Some(_) => last = l + 1,
            None => {}
        }
    }
    let end = starts.get(last).copied().unwrap_or(src.len());
    Some((starts.get(first).copied().unwrap_or(src.len()), end))
}

/// Whether the attributes just before the `fn` at `at` name a test
/// (`#[test]`, `#[tokio::test]`, `#[rstest]`…).
fn rust_attribute_says_test(src: &Source, at: usize) -> bool {
    let from = at.saturating_sub(400);
    let before = src.code_str(from, at);
    let item = before
        .rfind(['}', ';'])
        .map_or(before, |p| &before[p + 1..]);
    item.contains("#[") && item.contains("test")
}

/// The words of `text[a..b]` that lie outside every range of `skip`:
/// identifiers and numbers, and string literals whole (without quotes).
fn words_in(
    src: &Source,
    (a, b): (usize, usize),
    skip: &[(usize, usize)],
    out: &mut BTreeSet<String>,
) {
    for (s, e, lit) in src.spans() {
        if s < a || e > b || skip.iter().any(|&(x, y)| s >= x && e <= y) {
            continue;
        }
        let raw = src.slice(s, e);
        let word = if lit { unquoted(raw) } else { raw };
        let number = word.bytes().next().is_some_and(|c| c.is_ascii_digit());
        let long_enough = if number && !lit {
            word.len() >= 2
        } else {
            word.chars().count() >= MIN_WORD
        };
        if long_enough && (lit || number || word.bytes().any(|c| c.is_ascii_alphabetic())) {
            out.insert(word.to_string());
        }
    }
}

/// A string literal's text without its prefix and quotes (`r#"x"#`,
/// `f'x'`, `"""x"""`, `` `x` ``).
fn unquoted(raw: &str) -> &str {
    let body = raw.trim_start_matches(|c: char| c.is_ascii_alphabetic() || c == '#');
    let q = |c: char| matches!(c, '"' | '\'' | '`' | '#');
    body.trim_start_matches(q).trim_end_matches(q)
}

/// The words test `test` of the file at `path` reads: its own body and
/// whatever of the file is not another test (imports, constants, helpers)
/// — of a Rust source with test modules, only those modules. None when the
/// file has no function of that name.
pub fn test_words(path: &str, text: &str, test: &str) -> Option<BTreeSet<String>> {
    let syn = syntax(path);
    let src = Source::new(text, syn);
    let name = function_name(test);
    let fns = functions(&src, syn);
    let mine = fns
        .iter()
        .find(|f| f.name == name && f.is_test)
        .or_else(|| fns.iter().find(|f| f.name == name))?;
    let skip: Vec<(usize, usize)> = fns
        .iter()
        .filter(|f| f.is_test && f.body != mine.body)
        .filter(|f| !(f.body.0 <= mine.body.0 && mine.body.1 <= f.body.1))
        .map(|f| f.body)
        .collect();
    let regions = match syn {
        Syntax::Rust => {
            let m = rust_test_modules(text);
            if m.is_empty() {
                vec![(0, text.len())]
            } else {
                m
            }
        }
        _ => vec![(0, text.len())],
    };
    let mut out = BTreeSet::new();
    for r in regions {
        words_in(&src, r, &skip, &mut out);
    }
    Some(out)
}

/// The code of a changed source file, its Rust test modules cut out: what
/// a change added there that is not a test.
pub fn code_of(path: &str, text: &str) -> String {
    if syntax(path) != Syntax::Rust {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (a, b) in rust_test_modules(text) {
        out.push_str(text.get(at..a).unwrap_or(""));
        at = b;
    }
    out.push_str(text.get(at..).unwrap_or(""));
    out
}

/// A body of text asked whether it has a word: an identifier as a whole
/// word (so `strict` is not found in `strictly`), anything else (a
/// message, a path) as a substring.
#[derive(Debug, Default)]
pub struct Corpus {
    text: String,
    words: std::collections::HashSet<String>,
}

impl Corpus {
    pub fn add(&mut self, text: &str) {
        for w in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !w.is_empty() && !self.words.contains(w) {
                self.words.insert(w.to_string());
            }
        }
        self.text.push_str(text);
        self.text.push('\n');
    }

    pub fn has(&self, word: &str) -> bool {
        if word.chars().all(|c| c.is_alphanumeric() || c == '_') {
            self.words.contains(word)
        } else {
            self.text.contains(word)
        }
    }
}

/// The words of `words` that only the author's side has: in its code
/// (`author_code`: its changed non-test files and its changed paths),
/// nowhere in the base (`in_base`), nowhere in the target's code
/// (`in_target`). Sorted.
pub fn only_theirs(
    words: &BTreeSet<String>,
    author_code: &Corpus,
    base: &Corpus,
    target: &Corpus,
) -> Vec<String> {
    words
        .iter()
        .filter(|w| author_code.has(w))
        .filter(|w| !base.has(w) && !target.has(w))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(path: &str, text: &str, test: &str) -> Vec<String> {
        test_words(path, text, test).unwrap().into_iter().collect()
    }

    #[test]
    fn a_rust_tests_words_are_its_body_and_its_modules_shared_parts() {
        let text = "pub fn add(a: i32) -> i32 { helper_only_code(a) }\n\
                    #[cfg(test)]\nmod tests {\n    use super::*;\n    const LIMIT: i32 = 4096;\n\
                    #[test]\n    fn adds() { assert_eq!(add(2), MARKER_X); }\n\
                    #[test]\n    fn other() { assert_eq!(add(3), \"other_literal\"); }\n}\n";
        let w = words("src/lib.rs", text, "tests::adds");
        assert!(w.contains(&"MARKER_X".to_string()), "{w:?}");
        assert!(
            w.contains(&"LIMIT".to_string()) && w.contains(&"4096".to_string()),
            "{w:?}"
        );
        assert!(
            !w.contains(&"other_literal".to_string()),
            "another test's words: {w:?}"
        );
        assert!(
            !w.contains(&"helper_only_code".to_string()),
            "the code's words: {w:?}"
        );
        assert_eq!(test_words("src/lib.rs", text, "tests::absent"), None);
    }

    #[test]
    fn a_python_tests_words_hold_its_strings_whole_and_never_comments() {
        let text = "from calc import decode\nMARK = 'shared-marker'\n\n\
                    def test_marker():\n    # a comment_word here\n    assert decode(\"2a5\") == \"dangling count\"\n\n\
                    def test_other():\n    assert decode('x') == 'other_value'\n";
        let w = words(
            "tests/test_calc.py",
            text,
            "tests/test_calc.py::test_marker",
        );
        for want in ["decode", "MARK", "shared-marker", "2a5", "dangling count"] {
            assert!(w.contains(&want.to_string()), "{want}: {w:?}");
        }
        assert!(!w.contains(&"comment_word".to_string()), "{w:?}");
        assert!(!w.contains(&"other_value".to_string()), "{w:?}");
        let unittest = "import unittest\nclass TestA(unittest.TestCase):\n    def test_b(self):\n        self.assertEqual(f(), 'bee_value')\n    def test_c(self):\n        self.assertEqual(f(), 'sea_value')\n";
        let w = words("test_a.py", unittest, "test_a.TestA.test_b");
        assert!(
            w.contains(&"bee_value".to_string()) && !w.contains(&"sea_value".to_string()),
            "{w:?}"
        );
    }

    #[test]
    fn only_words_the_author_added_and_the_target_lacks_are_theirs() {
        let words: BTreeSet<String> = ["decode", "MARKER_X", "2a5", "helper_both"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let corpus = |t: &str| {
            let mut c = Corpus::default();
            c.add(t);
            c
        };
        let author = corpus("pub const MARKER_X: &str = \"x\"; fn helper_both() {} fn decode() {}");
        let base = corpus("fn decode() {} // MARKER_XY is another word");
        let target = corpus("fn helper_both() {}");
        let theirs = only_theirs(&words, &author, &base, &target);
        assert_eq!(theirs, vec!["MARKER_X"]);
        let message: BTreeSet<String> = ["dangling count".to_string()].into();
        let author = corpus("Err(\"dangling count at {}\")");
        let theirs = only_theirs(&message, &author, &base, &corpus("Err(\"bad\")"));
        assert_eq!(theirs, vec!["dangling count"], "a message by substring");
    }

    #[test]
    fn code_of_a_rust_file_leaves_its_test_modules_out() {
        let text = "fn a() {}\n#[cfg(test)]\nmod tests { fn t() { MARK } }\nfn b() {}\n";
        let code = code_of("src/lib.rs", text);
        assert!(code.contains("fn a()") && code.contains("fn b()") && !code.contains("MARK"));
        assert_eq!(code_of("x.py", "MARK"), "MARK");
    }
}
