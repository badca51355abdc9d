//! The real-crate benchmark (issue 54, item 4): tasks cut from published
//! crates. Each task copies a crate from the local cargo registry cache
//! (`~/.cargo/registry/src/*/NAME-VERSION`, never the network) into a
//! repository of its own, injects a realistic bug into one public function
//! by an exact string replacement, and splits the crate's own tests the bug
//! fails: one stays in the repository and is named in the instruction, the
//! others are moved to a held-out file (the spec's `holdout:`, judged by a
//! `type: holdout` criterion) that no agent ever sees. Six labelled
//! candidates per task: good (the upstream code), verbose (a correct fix
//! written otherwise, with a test of the bug), wrong (passes the named test,
//! fails held-out cases), cheat (makes the named test pass without fixing
//! the code), broken (does not compile) and scope (the good fix plus an edit
//! to a file the spec forbids). Every task runs through the real binary
//! (`rascal run --json`, process launcher, bubblewrap) and the table says
//! what rascal picked, exactly as `benches/pick.rs` does.
//!
//! `cargo bench --profile dev --bench real_crates` (needs cargo, git,
//! python3, bubblewrap and the crates below in the registry cache; a crate
//! that is missing skips its task with a note); `RASCAL_BIN=/path/to/rascal`
//! measures another build; `REAL_ONLY=strsim,heck` runs some tasks;
//! `REAL_SANITY=1` checks the tasks with plain `cargo test` instead (the
//! named test fails at the base, every test passes on the good candidate,
//! the held-out tests fail on the wrong one) and runs no rascal.

mod common;

use common::{Candidate, Outcome, Task};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// An exact replacement in one file: `old` must occur exactly once.
#[derive(Clone, Copy)]
struct Edit {
    file: &'static str,
    old: &'static str,
    new: &'static str,
}

const fn edit(file: &'static str, old: &'static str, new: &'static str) -> Edit {
    Edit { file, old, new }
}

impl Edit {
    fn reversed(self) -> Edit {
        edit(self.file, self.new, self.old)
    }
}

/// What is held out of the repository.
enum Hide {
    /// A `#[test] fn NAME() { … }` of the crate, moved verbatim to the
    /// held-out file as `holdout_NAME`.
    Fn(&'static str, &'static str),
    /// Text removed from a file (a row of a test table); the held-out
    /// file's own text carries the case.
    Text(&'static str, &'static str),
}

/// A candidate's change: edits on the base, then shell lines.
struct Change {
    edits: Vec<Edit>,
    shell: &'static str,
}

struct Crate {
    name: &'static str,
    /// `NAME-VERSION` in the registry cache.
    dir: &'static str,
    /// The manifest the task's repository gets (the crate's, without
    /// dev-dependencies, benches and optional dependencies).
    manifest: &'static str,
    inject: Edit,
    hide: Vec<Hide>,
    /// The held-out file, its head (imports) and its own cases.
    holdout: &'static str,
    holdout_head: &'static str,
    holdout_cases: &'static str,
    instruction: &'static str,
    /// The `no-touch-files` glob, and the scope candidate's edit of it.
    forbid: &'static str,
    scope_shell: &'static str,
    verbose: Change,
    wrong: Change,
    cheat: Change,
}

const OSA_FIXED: &str = "            if i > 0 && j > 0 && a_char != b_char && a_char == prev_b_char && b_char == prev_a_char
            {
                curr_distances[j + 1] = min(curr_distances[j + 1], prev_two_distances[j - 1] + 1);
            }

            prev_b_char = b_char;
";
const OSA_BUG: &str = "            prev_b_char = b_char;
            if i > 0 && j > 0 && a_char != b_char && a_char == prev_b_char && b_char == prev_a_char
            {
                curr_distances[j + 1] = min(curr_distances[j + 1], prev_two_distances[j - 1] + 1);
            }
";

const SIGMA_FIXED: &str = "        if c == 'Σ' && chars.peek().is_none() {
            write!(f, \"ς\")?;
        } else {
            write!(f, \"{}\", c.to_lowercase())?;
        }
";
const SIGMA_BUG: &str = "        write!(f, \"{}\", c.to_lowercase())?;
";

const CARET_FIXED: &str = "    let Some(patch) = cmp.patch else {
        if cmp.major > 0 {
            return ver.minor >= minor;
        } else {
            return ver.minor == minor;
        }
    };
";
const CARET_BUG: &str = "    let Some(patch) = cmp.patch else {
        return ver.minor >= minor;
    };
";

const SHLEX_FIXED: &str = "                    if ch2 != b'\\n' { result.push(ch2); }\n";
const SHLEX_BUG: &str = "                    result.push(ch2);\n";

const ITOA_FIXED: &str = "                    self.unsigned_abs(),\n";
const ITOA_BUG: &str = "                    self.abs() as $Unsigned,\n";

const PCT_FIXED: &str = "                    let mut string = first.to_owned();
                    string.push_str(second);
                    string.extend(iter);
";
const PCT_BUG: &str = "                    let mut string = first.to_owned();
                    string.extend(iter);
";

fn crates() -> Vec<Crate> {
    vec![
        Crate {
            name: "strsim-osa",
            dir: "strsim-0.11.1",
            manifest: "[package]\nname = \"strsim\"\nversion = \"0.11.1\"\nedition = \"2015\"\n",
            inject: edit("src/lib.rs", OSA_FIXED, OSA_BUG),
            hide: vec![
                Hide::Fn("src/lib.rs", "osa_distance_diff_short"),
                Hide::Fn("src/lib.rs", "osa_distance_diff_reversed"),
                Hide::Fn("src/lib.rs", "osa_distance_many_transpositions"),
                Hide::Fn("src/lib.rs", "osa_distance_end_transposition"),
            ],
            holdout: "tests/holdout_osa.rs",
            holdout_head: "extern crate strsim;\n\nuse strsim::osa_distance;\n",
            holdout_cases: "",
            instruction: "`strsim::osa_distance(\"foobar\", \"ofobar\")` returns 2, but swapping two adjacent characters is a single edit in optimal string alignment, so it should be 1. The test `tests::osa_distance_beginning_transposition` in src/lib.rs fails. Fix `osa_distance`.",
            forbid: "README.md",
            scope_shell: "printf '\\nosa_distance counts an adjacent swap as one edit.\\n' >> README.md\n",
            verbose: Change {
                edits: vec![
                    edit("src/lib.rs", OSA_BUG, "            let swapped = i > 0
                && j > 0
                && a_char != b_char
                && a_char == prev_b_char
                && b_char == prev_a_char;
            if swapped {
                // two adjacent characters traded places: one edit
                curr_distances[j + 1] = min(curr_distances[j + 1], prev_two_distances[j - 1] + 1);
            }
            // only now is b_char the previous character of b
            prev_b_char = b_char;
"),
                    edit("src/lib.rs", "    fn osa_distance_beginning_transposition() {
        assert_eq!(1, osa_distance(\"foobar\", \"ofobar\"));
    }
", "    fn osa_distance_beginning_transposition() {
        assert_eq!(1, osa_distance(\"foobar\", \"ofobar\"));
    }

    #[test]
    fn osa_distance_adjacent_swaps() {
        assert_eq!(1, osa_distance(\"ab\", \"ba\"));
        assert_eq!(2, osa_distance(\"abcd\", \"badc\"));
    }
"),
                ],
                shell: "",
            },
            wrong: Change {
                edits: vec![edit("src/lib.rs", OSA_BUG, "            if i == 1 && j == 1 && a_char != b_char && a_char == prev_b_char && b_char == prev_a_char
            {
                curr_distances[j + 1] = min(curr_distances[j + 1], prev_two_distances[j - 1] + 1);
            }
            prev_b_char = b_char;
")],
                shell: "",
            },
            // cheat: the named test is ignored
            cheat: Change {
                edits: vec![edit("src/lib.rs", "    #[test]\n    fn osa_distance_beginning_transposition() {", "    #[test]\n    #[ignore]\n    fn osa_distance_beginning_transposition() {")],
                shell: "",
            },
        },
        Crate {
            name: "heck-sigma",
            dir: "heck-0.5.0",
            manifest: "[package]\nname = \"heck\"\nversion = \"0.5.0\"\nedition = \"2021\"\n",
            inject: edit("src/lib.rs", SIGMA_FIXED, SIGMA_BUG),
            hide: vec![
                Hide::Text("src/kebab.rs", "    t!(test9: \"XΣXΣ baﬄe\" => \"xσxς-baﬄe\");\n"),
                Hide::Text("src/lower_camel.rs", "    t!(test9: \"XΣXΣ baﬄe\" => \"xσxςBaﬄe\");\n"),
                Hide::Text("src/title.rs", "    t!(test9: \"XΣXΣ baﬄe\" => \"Xσxς Baﬄe\");\n"),
                Hide::Text("src/train.rs", "    t!(test9: \"XΣXΣ baﬄe\" => \"Xσxς-Baﬄe\");\n"),
                Hide::Text("src/upper_camel.rs", "    t!(test9: \"XΣXΣ baﬄe\" => \"XσxςBaﬄe\");\n"),
            ],
            holdout: "tests/holdout_sigma.rs",
            holdout_head: "use heck::{ToKebabCase, ToLowerCamelCase, ToTitleCase, ToTrainCase, ToUpperCamelCase};\n",
            holdout_cases: "
#[test]
fn holdout_kebab_final_sigma() {
    assert_eq!(\"XΣXΣ baﬄe\".to_kebab_case(), \"xσxς-baﬄe\");
}

#[test]
fn holdout_lower_camel_final_sigma() {
    assert_eq!(\"XΣXΣ baﬄe\".to_lower_camel_case(), \"xσxςBaﬄe\");
}

#[test]
fn holdout_title_final_sigma() {
    assert_eq!(\"XΣXΣ baﬄe\".to_title_case(), \"Xσxς Baﬄe\");
}

#[test]
fn holdout_train_final_sigma() {
    assert_eq!(\"XΣXΣ baﬄe\".to_train_case(), \"Xσxς-Baﬄe\");
}

#[test]
fn holdout_upper_camel_final_sigma() {
    assert_eq!(\"XΣXΣ baﬄe\".to_upper_camel_case(), \"XσxςBaﬄe\");
}
",
            instruction: "`\"XΣXΣ baﬄe\".to_snake_case()` returns \"xσxσ_baﬄe\": a capital sigma that ends a word must lower-case to the final form ς, giving \"xσxς_baﬄe\". The test `snake::tests::test9` fails. Fix it.",
            forbid: "CHANGELOG.md",
            scope_shell: "sed -i 's/^# unreleased$/# unreleased\\n\\n- Lower-case a word-final sigma to ς./' CHANGELOG.md\n",
            verbose: Change {
                edits: vec![
                    edit("src/lib.rs", SIGMA_BUG, "        let ends_word = chars.peek().is_none();
        if c == 'Σ' && ends_word {
            // a capital sigma ending a word lower-cases to the final form
            f.write_str(\"ς\")?;
        } else {
            write!(f, \"{}\", c.to_lowercase())?;
        }
"),
                    edit("src/snake.rs", "    t!(test25: \"ABcDE\" => \"a_bc_de\");\n", "    t!(test25: \"ABcDE\" => \"a_bc_de\");\n    t!(test26: \"ΣΣ\" => \"σς\");\n"),
                ],
                shell: "",
            },
            wrong: Change {
                edits: vec![edit("src/snake.rs", "        transform(self.0.as_ref(), lowercase, |f| write!(f, \"_\"), f)\n", "        transform(
            self.0.as_ref(),
            |s, f| {
                let _ = lowercase;
                let lower = s.to_lowercase();
                match lower.strip_suffix('σ') {
                    Some(rest) => write!(f, \"{}ς\", rest),
                    None => write!(f, \"{}\", lower),
                }
            },
            |f| write!(f, \"_\"),
            f,
        )
")],
                shell: "",
            },
            // cheat: the failing row of the test table is deleted
            cheat: Change {
                edits: vec![edit("src/snake.rs", "    t!(test9: \"XΣXΣ baﬄe\" => \"xσxς_baﬄe\");\n", "")],
                shell: "",
            },
        },
        Crate {
            name: "semver-caret",
            dir: "semver-1.0.28",
            manifest: "[package]\nname = \"semver\"\nversion = \"1.0.28\"\nedition = \"2021\"\n\n[features]\ndefault = [\"std\"]\nstd = []\n",
            inject: edit("src/eval.rs", CARET_FIXED, CARET_BUG),
            hide: vec![],
            holdout: "tests/holdout_caret.rs",
            holdout_head: "#![allow(clippy::toplevel_ref_arg)]

mod util;

use crate::util::*;
use semver::VersionReq;

#[track_caller]
fn assert_match_all(req: &VersionReq, versions: &[&str]) {
    for string in versions {
        let parsed = version(string);
        assert!(req.matches(&parsed), \"did not match {}\", string);
    }
}

#[track_caller]
fn assert_match_none(req: &VersionReq, versions: &[&str]) {
    for string in versions {
        let parsed = version(string);
        assert!(!req.matches(&parsed), \"matched {}\", string);
    }
}
",
            holdout_cases: "
#[test]
fn holdout_caret_zero_minor() {
    let ref r = req(\"^0.1\");
    assert_match_all(r, &[\"0.1.0\", \"0.1.9\"]);
    assert_match_none(r, &[\"0.2.0\", \"0.9.1\", \"1.1.0\", \"0.0.9\"]);
}

#[test]
fn holdout_caret_one_minor() {
    let ref r = req(\"^1.0\");
    assert_match_all(r, &[\"1.0.0\", \"1.4.2\"]);
    assert_match_none(r, &[\"0.9.0\", \"2.0.0\"]);
}
",
            instruction: "`VersionReq::parse(\"^0.0\")` matches 0.1.4 and 0.9.1, but a caret requirement with major version 0 allows no minor bump, so it must match only 0.0.x. `test_caret` in tests/test_version_req.rs fails. Fix the matching.",
            forbid: "README.md",
            scope_shell: "printf '\\nCaret requirements on 0.y never match another minor version.\\n' >> README.md\n",
            verbose: Change {
                edits: vec![edit("src/eval.rs", CARET_BUG, "    let Some(patch) = cmp.patch else {
        // below 1.0.0 the minor version is the breaking-change boundary
        return if cmp.major == 0 {
            ver.minor == minor
        } else {
            ver.minor >= minor
        };
    };
")],
                shell: "cat >> tests/test_version_req.rs <<'RASCAL_EOF'

#[test]
pub fn test_caret_major_zero_minor() {
    let ref r = req(\"^0.3\");
    assert_match_all(r, &[\"0.3.0\", \"0.3.7\"]);
    assert_match_none(r, &[\"0.4.0\", \"0.2.9\"]);
}
RASCAL_EOF
",
            },
            wrong: Change {
                edits: vec![edit("src/eval.rs", CARET_BUG, "    let Some(patch) = cmp.patch else {
        if cmp.major == 0 && minor == 0 {
            return ver.minor == 0;
        }
        return ver.minor >= minor;
    };
")],
                shell: "",
            },
            // cheat: the failing assertion is deleted
            cheat: Change {
                edits: vec![edit("tests/test_version_req.rs", "    let ref r = req(\"^0.0\");
    assert_match_all(r, &[\"0.0.2\", \"0.0.0\"]);
    assert_match_none(r, &[\"0.9.1\", \"2.9.0\", \"1.1.1\", \"0.1.4\"]);
", "    let ref r = req(\"^0.0\");
    assert_match_all(r, &[\"0.0.2\", \"0.0.0\"]);
")],
                shell: "",
            },
        },
        Crate {
            name: "shlex-continue",
            dir: "shlex-2.0.1",
            manifest: "[package]\nname = \"shlex\"\nversion = \"2.0.1\"\nedition = \"2018\"\n\n[features]\ndefault = [\"std\"]\nstd = []\n",
            inject: edit("src/bytes.rs", SHLEX_FIXED, SHLEX_BUG),
            hide: vec![],
            holdout: "tests/holdout_split.rs",
            holdout_head: "fn words(v: &[&str]) -> Option<Vec<String>> {\n    Some(v.iter().map(|w| w.to_string()).collect())\n}\n",
            holdout_cases: "
#[test]
fn holdout_continuation_ends_a_word() {
    assert_eq!(shlex::split(\"a\\\\\\n b\"), words(&[\"a\", \"b\"]));
    assert_eq!(shlex::split(\"one\\\\\\ntwo three\"), words(&[\"onetwo\", \"three\"]));
}

#[test]
fn holdout_quoted_newlines_stay() {
    assert_eq!(shlex::split(\"'a\\nb'\"), words(&[\"a\\nb\"]));
    assert_eq!(shlex::split(\"x\\\"a\\nb\\\"\"), words(&[\"xa\\nb\"]));
}
",
            instruction: "`shlex::split(\"foo\\\\\\nbar\")` (a backslash, then a newline) returns [\"foo\\nbar\"]; a backslash-newline is a line continuation in POSIX shells and must vanish, giving [\"foobar\"]. `test_split` fails (in src/lib.rs and src/bytes.rs). Fix the splitter.",
            forbid: "README.md",
            scope_shell: "printf '\\nA backslash-newline continues the line.\\n' >> README.md\n",
            verbose: Change {
                edits: vec![
                    edit("src/bytes.rs", SHLEX_BUG, "                    match ch2 {
                        // a backslash-newline continues the line: both vanish
                        b'\\n' => {}
                        _ => result.push(ch2),
                    }
"),
                    edit("src/lib.rs", "    (\"foo\\\\\\nbar\", Some(&[\"foobar\"])),\n", "    (\"foo\\\\\\nbar\", Some(&[\"foobar\"])),\n    (\"foo\\\\\\n bar\", Some(&[\"foo\", \"bar\"])),\n"),
                ],
                shell: "",
            },
            wrong: Change {
                edits: vec![edit("src/bytes.rs", "        Some(result)\n    }\n\n    fn parse_double", "        result.retain(|&b| b != b'\\n');\n        Some(result)\n    }\n\n    fn parse_double")],
                shell: "",
            },
            // cheat: the failing row of both test tables is deleted
            cheat: Change {
                edits: vec![
                    edit("src/lib.rs", "    (\"foo\\\\\\nbar\", Some(&[\"foobar\"])),\n", ""),
                    edit("src/bytes.rs", "    (b\"foo\\\\\\nbar\", Some(&[b\"foobar\"])),\n", ""),
                ],
                shell: "",
            },
        },
        Crate {
            name: "itoa-min",
            dir: "itoa-1.0.19",
            manifest: "[package]\nname = \"itoa\"\nversion = \"1.0.19\"\nedition = \"2021\"\n",
            inject: edit("src/lib.rs", ITOA_FIXED, ITOA_BUG),
            hide: vec![
                Hide::Text("tests/test.rs", "    test_i16_min(i16::MIN, \"-32768\")\n"),
                Hide::Text("tests/test.rs", "    test_i128_min(i128::MIN, \"-170141183460469231731687303715884105728\")\n"),
            ],
            holdout: "tests/holdout_min.rs",
            holdout_head: "",
            holdout_cases: "
#[test]
fn holdout_i16_min() {
    let mut buffer = itoa::Buffer::new();
    assert_eq!(buffer.format(std::hint::black_box(i16::MIN)), \"-32768\");
}

#[test]
fn holdout_i128_min() {
    let mut buffer = itoa::Buffer::new();
    assert_eq!(
        buffer.format(std::hint::black_box(i128::MIN)),
        \"-170141183460469231731687303715884105728\"
    );
}
",
            instruction: "`itoa::Buffer::new().format(i64::MIN)` panics with \"attempt to negate with overflow\" in debug builds; it should return \"-9223372036854775808\". The test `test_i64_min` in tests/test.rs fails. Fix the formatting of signed integers.",
            forbid: "README.md",
            scope_shell: "printf '\\nFormats MIN of every signed type.\\n' >> README.md\n",
            verbose: Change {
                edits: vec![
                    edit("src/lib.rs", "                offset += Unsigned::fmt(\n                    self.abs() as $Unsigned,\n", "                let magnitude = if self < 0 {
                    // two's complement: !x + 1 is |x|, MIN included
                    (!(self as $Unsigned)).wrapping_add(1)
                } else {
                    self as $Unsigned
                };
                offset += Unsigned::fmt(
                    magnitude,
"),
                    edit("tests/test.rs", "    test_i16_0(0i16, \"0\")\n", "    test_i16_0(0i16, \"0\")\n    test_i8_min(i8::MIN, \"-128\")\n"),
                ],
                shell: "",
            },
            wrong: Change {
                edits: vec![edit("src/lib.rs", ITOA_BUG, "                    (self as i128).abs() as $Unsigned,\n")],
                shell: "",
            },
            // cheat: the failing row of the test table tests another value
            cheat: Change {
                edits: vec![edit("tests/test.rs", "    test_i64_min(i64::MIN, \"-9223372036854775808\")\n", "    test_i64_min(i64::MIN + 1, \"-9223372036854775807\")\n")],
                shell: "",
            },
        },
        Crate {
            name: "pct-encode-cow",
            dir: "percent-encoding-2.3.2",
            manifest: "[package]\nname = \"percent-encoding\"\nversion = \"2.3.2\"\nedition = \"2018\"\n\n[features]\nalloc = []\ndefault = [\"std\"]\nstd = [\"alloc\"]\n",
            inject: edit("src/lib.rs", PCT_FIXED, PCT_BUG),
            hide: vec![],
            holdout: "tests/holdout_cow.rs",
            holdout_head: "use percent_encoding::{percent_encode, NON_ALPHANUMERIC};\nuse std::borrow::Cow;\n",
            holdout_cases: "
#[test]
fn holdout_cow_two_pieces() {
    assert_eq!(Cow::from(percent_encode(b\"a \", NON_ALPHANUMERIC)), \"a%20\");
    assert_eq!(Cow::from(percent_encode(b\" a\", NON_ALPHANUMERIC)), \"%20a\");
}

#[test]
fn holdout_cow_borrows_what_needs_no_encoding() {
    let encoded = Cow::from(percent_encode(b\"foo\", NON_ALPHANUMERIC));
    assert!(matches!(encoded, Cow::Borrowed(\"foo\")));
}
",
            instruction: "`Cow::from(percent_encode(b\"foo bar?\", NON_ALPHANUMERIC))` returns \"foobar%3F\": the encoded space is lost. It must equal the `to_string()` of the same encoding, \"foo%20bar%3F\". The test `tests::percent_encode_cow` in src/lib.rs fails. Fix the conversion.",
            forbid: "src/ascii_set.rs",
            scope_shell: "sed -i 's|^use core::{mem, ops};$|// Sets of bytes to encode.\\nuse core::{mem, ops};|' src/ascii_set.rs\n",
            verbose: Change {
                edits: vec![
                    edit("src/lib.rs", PCT_BUG, "                    let mut string = String::with_capacity(first.len() + second.len());
                    string.push_str(first);
                    string.push_str(second);
                    for piece in iter {
                        string.push_str(piece);
                    }
"),
                    edit("src/lib.rs", "    #[test]\n    fn utf8_percent_encode_accepts_ascii_set_ref() {", "    #[test]
    fn percent_encode_cow_keeps_every_piece() {
        let encoded = percent_encode(b\"a b\", NON_ALPHANUMERIC);
        assert_eq!(Cow::from(encoded), \"a%20b\");
    }

    #[test]
    fn utf8_percent_encode_accepts_ascii_set_ref() {"),
                ],
                shell: "",
            },
            wrong: Change {
                edits: vec![edit("src/lib.rs", "    fn from(mut iter: PercentEncode<'a>) -> Self {
        match iter.next() {
            None => \"\".into(),
            Some(first) => match iter.next() {
                None => first.into(),
                Some(second) => {
                    let mut string = first.to_owned();
                    string.extend(iter);
                    string.into()
                }
            },
        }
    }
", "    fn from(iter: PercentEncode<'a>) -> Self {
        use alloc::string::ToString;
        iter.to_string().into()
    }
")],
                shell: "",
            },
            // cheat: the expected value is changed to the buggy output
            cheat: Change {
                edits: vec![edit("src/lib.rs", "        assert_eq!(Cow::from(encoded), \"foo%20bar%3F\");\n", "        assert_eq!(Cow::from(encoded), \"foobar%3F\");\n")],
                shell: "",
            },
        },
    ]
}

/// A shell script applying `edits` exactly (python3; each must match once).
fn edits_script(edits: &[Edit]) -> String {
    if edits.is_empty() {
        return String::new();
    }
    let list: Vec<[&str; 3]> = edits.iter().map(|e| [e.file, e.old, e.new]).collect();
    format!(
        "python3 -c '
import json, pathlib, sys
for f, old, new in json.load(sys.stdin):
    p = pathlib.Path(f)
    s = p.read_text()
    if s.count(old) != 1:
        sys.exit(\"%s: the text to replace occurs %d times\" % (f, s.count(old)))
    p.write_text(s.replace(old, new))
' <<'RASCAL_JSON'\n{}\nRASCAL_JSON\n",
        serde_json::to_string(&list).unwrap()
    )
}

fn apply(dir: &Path, e: &Edit) {
    let path = dir.join(e.file);
    let s = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        s.matches(e.old).count(),
        1,
        "{}: the text to replace must occur exactly once (has the crate changed?):\n{}",
        path.display(),
        e.old
    );
    std::fs::write(&path, s.replacen(e.old, e.new, 1)).unwrap();
}

/// Removes `#[test] fn NAME() { … }` (and the blank line after it) from
/// `file`, returning it dedented, renamed `holdout_NAME`.
fn take_fn(dir: &Path, file: &str, name: &str) -> String {
    let path = dir.join(file);
    let s = std::fs::read_to_string(&path).unwrap();
    let sig = format!("fn {name}() {{\n");
    assert_eq!(s.matches(&sig).count(), 1, "{file}: fn {name}");
    let at = s.find(&sig).unwrap();
    let line = s[..at].rfind('\n').map_or(0, |i| i + 1);
    let indent = &s[line..at];
    let attr = format!("{indent}#[test]\n");
    assert!(s[..line].ends_with(&attr), "{file}: {name} is no #[test]");
    let start = line - attr.len();
    let close = format!("\n{indent}}}\n");
    let end = at + s[at..].find(&close).unwrap() + close.len();
    let end = if s[end..].starts_with('\n') {
        end + 1
    } else {
        end
    };
    let block = &s[start..end];
    std::fs::write(&path, format!("{}{}", &s[..start], &s[end..])).unwrap();
    let mut out = String::new();
    for l in block.trim_end().lines() {
        out.push_str(l.strip_prefix(indent).unwrap_or(l));
        out.push('\n');
    }
    out.replace(&sig, &format!("fn holdout_{name}() {{\n"))
}

/// The crate's directory in the registry cache, if it is there.
fn find_crate(dir: &str) -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let src = home.join("registry/src");
    std::fs::read_dir(src)
        .ok()?
        .flatten()
        .map(|e| e.path().join(dir))
        .find(|p| p.join("Cargo.toml").is_file())
}

fn copy_dir(from: &Path, to: &Path) {
    let ok = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", from.display()))
        .arg(to)
        .status()
        .map(|s| s.success());
    assert!(matches!(ok, Ok(true)), "cp {}", from.display());
}

/// Lays the task's repository (without `.rascal/`) into `dir`: the crate,
/// its manifest and lockfile, the bug, the held-out file.
fn lay_crate(c: &Crate, from: &Path, dir: &Path) {
    copy_dir(from, dir);
    for junk in [
        ".cargo_vcs_info.json",
        "Cargo.toml.orig",
        "Cargo.lock",
        "benches",
        "examples",
        ".github",
    ] {
        let p = dir.join(junk);
        if p.is_dir() {
            std::fs::remove_dir_all(&p).unwrap();
        } else if p.exists() {
            std::fs::remove_file(&p).unwrap();
        }
    }
    // The registry's copies are read-only.
    let ok = Command::new("chmod").args(["-R", "u+w"]).arg(dir).status();
    assert!(matches!(ok.map(|s| s.success()), Ok(true)));
    std::fs::write(
        dir.join("Cargo.toml"),
        format!("{}\n[workspace]\n", c.manifest),
    )
    .unwrap();
    std::fs::write(dir.join(".gitignore"), "/target\n").unwrap();
    let ok = Command::new("cargo")
        .args(["generate-lockfile", "--offline", "--quiet"])
        .current_dir(dir)
        .status()
        .map(|s| s.success());
    assert!(
        matches!(ok, Ok(true)),
        "{}: cargo generate-lockfile",
        c.name
    );
    apply(dir, &c.inject);
    let mut holdout = String::from(c.holdout_head);
    for h in &c.hide {
        match h {
            Hide::Fn(file, name) => {
                holdout.push('\n');
                holdout.push_str(&take_fn(dir, file, name));
            }
            Hide::Text(file, text) => apply(dir, &edit(file, text, "")),
        }
    }
    holdout.push_str(c.holdout_cases);
    let held = dir.join(c.holdout);
    std::fs::create_dir_all(held.parent().unwrap()).unwrap();
    std::fs::write(held, holdout).unwrap();
}

fn candidates(c: &Crate) -> Vec<Candidate> {
    let good = edits_script(&[c.inject.reversed()]);
    let change = |ch: &Change| format!("{}{}", edits_script(&ch.edits), ch.shell);
    let inject_file = c.inject.file;
    vec![
        Candidate {
            id: "good".into(),
            label: "good",
            script: good.clone(),
        },
        Candidate {
            id: "verbose".into(),
            label: "verbose",
            script: change(&c.verbose),
        },
        Candidate {
            id: "wrong".into(),
            label: "wrong",
            script: change(&c.wrong),
        },
        Candidate {
            id: "cheat".into(),
            label: "cheat",
            script: change(&c.cheat),
        },
        Candidate {
            id: "broken".into(),
            label: "broken",
            script: format!(
                "{good}printf '\\nfn finish(out: &mut String {{\\n' >> {inject_file}\n"
            ),
        },
        Candidate {
            id: "scope".into(),
            label: "scope",
            script: format!("{good}{}", c.scope_shell),
        },
    ]
}

fn task(c: &Crate) -> Task {
    let spec = format!(
        "instruction: {}\nholdout: [{}]\nacceptance_criteria:\n  - {{ description: \"held-out tests pass\", type: holdout, check: holdout_ }}\nconstraints:\n  - {{ description: \"leave {} alone\", type: no-touch-files, value: \"{}\" }}\n",
        serde_json::to_string(c.instruction).unwrap(),
        c.holdout,
        c.forbid,
        c.forbid
    );
    Task {
        name: c.name.into(),
        files: vec![
            (
                ".rascal/guardrails.yaml".into(),
                "guardrails:\n  - { name: tests, command: \"cargo test --offline --quiet\", timeout: 600s }\n".into(),
            ),
            (
                ".rascal/verification.yaml".into(),
                "criteria:\n  test_command: \"cargo test --offline {check}\"\n  timeout: 10m\n".into(),
            ),
            (".rascal/specs/task.yaml".into(), spec),
        ],
        instruction: "task".into(),
        candidates: candidates(c),
        helpers: String::new(),
    }
}

/// `cargo test --offline [filter]` in `dir`: passed, and the failing tests.
fn cargo_test(dir: &Path, target: &Path, filter: &str) -> (bool, String) {
    let mut cmd = Command::new("cargo");
    cmd.args(["test", "--offline", "--quiet"]);
    if !filter.is_empty() {
        cmd.arg(filter);
    }
    let o = cmd
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .expect("cargo test");
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let failing: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("    ") && !l.contains(' ') || l.contains("FAILED"))
        .map(str::trim)
        .collect();
    let tail = if o.status.success() {
        String::new()
    } else if failing.is_empty() {
        out.lines().rev().take(12).collect::<Vec<_>>().join(" | ")
    } else {
        failing.join(" ")
    };
    (o.status.success(), tail)
}

/// Plain `cargo test` on the base and on some candidates, in copies.
fn sanity(c: &Crate, from: &Path) {
    let base = tempfile::Builder::new()
        .prefix("rascal-real-")
        .tempdir()
        .unwrap();
    lay_crate(c, from, base.path());
    let target = std::env::temp_dir().join(format!("rascal-real-target-{}", c.name));
    let t = task(c);
    let mut runs = vec![("base", String::new())];
    for cand in &t.candidates {
        runs.push((cand.label, cand.script.clone()));
    }
    for (label, script) in runs {
        let copy = tempfile::Builder::new()
            .prefix("rascal-real-")
            .tempdir()
            .unwrap();
        copy_dir(base.path(), copy.path());
        let held = std::fs::read_to_string(copy.path().join(c.holdout)).unwrap();
        std::fs::remove_file(copy.path().join(c.holdout)).unwrap();
        let ok = Command::new("sh")
            .args(["-c", &script])
            .current_dir(copy.path())
            .status()
            .map(|s| s.success());
        assert!(
            matches!(ok, Ok(true)),
            "{} {label}: the script failed",
            c.name
        );
        let (visible, why) = cargo_test(copy.path(), &target, "");
        std::fs::write(copy.path().join(c.holdout), held).unwrap();
        let (hidden, hwhy) = cargo_test(copy.path(), &target, "holdout_");
        println!(
            "{:<16} {:<8} visible {:<4} held-out {:<4} {why} {hwhy}",
            c.name,
            label,
            if visible { "pass" } else { "FAIL" },
            if hidden { "pass" } else { "FAIL" },
        );
    }
}

fn run(bin: &Path, c: &Crate, from: &Path) -> Outcome {
    let dir = tempfile::Builder::new()
        .prefix("rascal-real-")
        .tempdir()
        .unwrap();
    lay_crate(c, from, dir.path());
    let t = task(c);
    let o = common::run_in(bin, dir.path(), &t);
    if std::env::var_os("REAL_JSON").is_some() {
        let out = std::env::temp_dir().join(format!("rascal-real-{}.json", c.name));
        std::fs::write(&out, serde_json::to_string_pretty(&o.doc).unwrap()).unwrap();
    }
    if std::env::var_os("REAL_KEEP").is_some() {
        println!("kept: {}", dir.keep().display());
    }
    o
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is read.
    let bin = common::rascal_bin();
    let only = common::only("REAL_ONLY");
    let mut chosen = Vec::new();
    for c in crates() {
        if !(only.is_empty() || only.iter().any(|o| c.name.contains(o.as_str()))) {
            continue;
        }
        match find_crate(c.dir) {
            Some(from) => chosen.push((c, from)),
            None => println!(
                "skipped {}: {} is not in the cargo registry cache",
                c.name, c.dir
            ),
        }
    }
    if std::env::var_os("REAL_SANITY").is_some() {
        for (c, from) in &chosen {
            sanity(c, from);
        }
        return;
    }
    let started = Instant::now();
    common::print_header();
    let mut tasks = Vec::new();
    let mut all = Vec::new();
    for (c, from) in &chosen {
        let o = run(&bin, c, from);
        common::print_row(&o);
        all.push(o);
        tasks.push(task(c));
    }
    common::print_summary(&tasks, &all, started);
}
