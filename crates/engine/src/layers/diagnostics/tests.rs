//! The readers on real output (tests/fixtures/diagnostics, captured by its
//! regenerate.sh; tsc and eslint from their documented formats) and on
//! hostile input.

use super::*;

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/diagnostics/",
            $name
        ))
    };
}

/// A copy of a candidate's change, as the sandbox names it.
const COPY: &str = "/home/u/.local/state/rascal/5f3a/runs/r-1/claude/checks/check-Ab12Cd";

fn with_files<T>(files: &[&str], roots: &[&str], f: impl FnOnce(&Locator) -> T) -> T {
    let files: Vec<String> = files.iter().map(|s| s.to_string()).collect();
    let exists = move |p: &str| files.iter().any(|f| f == p);
    let loc = Locator {
        dir: None,
        go_module: None,
        roots: roots.iter().map(|s| s.to_string()).collect(),
        exists: &exists,
    };
    f(&loc)
}

/// (message, path, line) of each issue.
fn found(loc: &Locator, output: &str) -> Vec<(String, Option<String>, Option<u32>)> {
    loc.issues("guardrails/x", &parse(output))
        .into_iter()
        .map(|i| (i.message, i.path, i.line))
        .collect()
}

fn is(
    message: &str,
    path: Option<&str>,
    line: Option<u32>,
) -> (String, Option<String>, Option<u32>) {
    (message.to_string(), path.map(str::to_string), line)
}

#[test]
fn rustc_errors_have_their_place_and_cargo_summaries_are_left_out() {
    let out = fixture!("cargo-build.txt");
    with_files(&["src/lib.rs"], &[], |l| {
        assert_eq!(
            found(l, out),
            vec![
                is(
                    "src/lib.rs:6:5: error[E0308]: mismatched types",
                    Some("src/lib.rs"),
                    Some(6)
                ),
                is(
                    "src/lib.rs:11:5: error[E0425]: cannot find function `undefined_fn` in this scope",
                    Some("src/lib.rs"),
                    Some(11)
                ),
            ]
        );
    });
    let d = parse(out);
    assert_eq!(d[0].lines, 1..8, "the block ends at the blank line");
    let syntax = parse(fixture!("cargo-build-syntax.txt"));
    assert_eq!(syntax.len(), 1);
    assert_eq!(syntax[0].message, "error: expected expression, found `}`");
    assert_eq!(
        syntax[0].at[0],
        Location::new("src/lib.rs", Some(3), Some(1))
    );
}

#[test]
fn cargo_test_panics_are_placed_and_warnings_are_not_errors() {
    with_files(&["src/lib.rs"], &[], |l| {
        assert_eq!(
            found(l, fixture!("cargo-test.txt")),
            vec![
                is(
                    "src/lib.rs:11:9: test tests::it_adds panicked: assertion `left == right` failed; left: 4; right: 5",
                    Some("src/lib.rs"),
                    Some(11)
                ),
                is(
                    "src/lib.rs:16:18: test tests::it_panics panicked: index out of bounds: the len is 0 but the index is 3",
                    Some("src/lib.rs"),
                    Some(16)
                ),
            ]
        );
    });
    let old =
        "thread 'main' panicked at 'boom', src/main.rs:2:5\nnote: run with `RUST_BACKTRACE=1`";
    let d = parse(old);
    assert_eq!(d[0].message, "thread 'main' panicked: boom");
    assert_eq!(d[0].at[0], Location::new("src/main.rs", Some(2), Some(5)));
}

#[test]
fn paths_in_a_copy_are_made_relative_and_paths_outside_are_dropped() {
    let out = format!(
        "error[E0308]: mismatched types\n --> {COPY}/src/lib.rs:6:5\n\nerror: bad\n --> /home/u/.cargo/registry/src/x-1.0/src/lib.rs:1:1\n\nerror: generated\n --> {COPY}/target/out.rs:2:2\n\nerror: climbing\n --> ../../etc/passwd:1:1\n"
    );
    with_files(&["src/lib.rs"], &[], |l| {
        assert_eq!(
            found(l, &out),
            vec![
                is(
                    "src/lib.rs:6:5: error[E0308]: mismatched types",
                    Some("src/lib.rs"),
                    Some(6)
                ),
                is("error: bad", None, None),
                is("error: generated", None, None),
                is("error: climbing", None, None),
            ]
        );
    });
    // In a container, and in the user's own tree (`rascal check`).
    with_files(&["src/a.rs"], &["/home/u/proj"], |l| {
        let r = |p: &str| l.resolve(&Location::new(p, Some(1), None));
        assert_eq!(r("/workspace/src/a.rs").as_deref(), Some("src/a.rs"));
        assert_eq!(r("/home/u/proj/src/a.rs").as_deref(), Some("src/a.rs"));
        assert_eq!(
            r("/home/u/proj/src/../src/a.rs").as_deref(),
            Some("src/a.rs")
        );
        assert_eq!(r("/home/u/projx/src/a.rs"), None);
        assert_eq!(r("./src/a.rs").as_deref(), Some("src/a.rs"));
        assert_eq!(r("src/../../src/a.rs"), None);
    });
    with_files(&[], &[], |l| {
        assert_eq!(
            l.tidy(&format!("failed to parse manifest at `{COPY}/Cargo.toml`")),
            "failed to parse manifest at `Cargo.toml`"
        );
    });
}

#[test]
fn a_leading_cd_is_where_relative_paths_start() {
    assert_eq!(leading_dir("cd web && npx tsc").as_deref(), Some("web"));
    assert_eq!(
        leading_dir("cd 'web/app'; npm test").as_deref(),
        Some("web/app")
    );
    assert_eq!(leading_dir("cargo build"), None);
    assert_eq!(leading_dir("cd .. && make"), None);
    assert_eq!(leading_dir("cd $HOME && make"), None);
    let files = ["web/src/a.ts".to_string()];
    let exists = |p: &str| files.iter().any(|f| f == p);
    let l = Locator {
        dir: Some("web".into()),
        go_module: None,
        roots: Vec::new(),
        exists: &exists,
    };
    assert_eq!(
        found(&l, fixture!("tsc.txt"))[0],
        is(
            "web/src/a.ts:3:5: error TS2322: Type 'string' is not assignable to type 'number'.",
            Some("web/src/a.ts"),
            Some(3)
        )
    );
}

#[test]
fn go_build_and_vet_errors() {
    with_files(&["x.go", "pkg/y.go"], &[], |l| {
        let want = vec![
            is(
                "pkg/y.go:3:23: cannot use \"y\" (untyped string constant) as int value in return statement",
                Some("pkg/y.go"),
                Some(3),
            ),
            is(
                "x.go:4:17: cannot use 1 (untyped int constant) as string value in variable declaration",
                Some("x.go"),
                Some(4),
            ),
        ];
        let build = found(l, fixture!("go-build.txt"));
        assert_eq!(build[..2], want[..]);
        assert_eq!(build[2].0, "x.go:5:2: undefined: undefinedFn");
        assert_eq!(found(l, fixture!("go-vet.txt")), want);
    });
}

#[test]
fn go_test_failures_are_placed_through_their_package() {
    let files = ["x_test.go".to_string(), "pkg/y_test.go".to_string()];
    let exists = |p: &str| files.iter().any(|f| f == p);
    let l = Locator {
        dir: None,
        go_module: Some(("example.com/m".into(), String::new())),
        roots: vec!["/tmp/dx/gomod".into()],
        exists: &exists,
    };
    let want = vec![
        is(
            "x_test.go:7: FAIL TestAdd: Add(2, 2) = 4, want 5",
            Some("x_test.go"),
            Some(7),
        ),
        is(
            "x_test.go:15: FAIL TestSub/inner: inner broke:",
            Some("x_test.go"),
            Some(15),
        ),
        is(
            "x_test.go:21: FAIL TestPanic: panic: assignment to entry in nil map",
            Some("x_test.go"),
            Some(21),
        ),
        is(
            "pkg/y_test.go:7: FAIL TestY: Y() is not 2",
            Some("pkg/y_test.go"),
            Some(7),
        ),
    ];
    assert_eq!(found(&l, fixture!("go-test.txt")), want);
    assert_eq!(found(&l, fixture!("go-test-v.txt")), want);
    // -json: the events unwrapped into the same lines.
    let c = Captured::from_text(fixture!("go-test-json.txt"));
    assert!(
        !c.text.as_str().contains("\"Action\""),
        "{}",
        c.text.as_str()
    );
    assert_eq!(found(&l, c.text.as_str()), want);
}

#[test]
fn tsc_plain_and_pretty() {
    with_files(&["src/a.ts", "src/b.ts", "src/c.ts"], &[], |l| {
        let plain = found(l, fixture!("tsc.txt"));
        assert_eq!(plain.len(), 4);
        assert_eq!(
            plain[2],
            is(
                "src/c.ts:4:7: error TS2322: Type '{ a: string; }' is not assignable to type 'B'.",
                Some("src/c.ts"),
                Some(4)
            )
        );
        // A file outside the change (node_modules) keeps no place.
        assert_eq!(plain[3], is("error TS1005: ';' expected.", None, None));
        assert_eq!(parse(fixture!("tsc.txt"))[2].lines, 2..5);
        let pretty = found(l, fixture!("tsc-pretty.txt"));
        assert_eq!(
            pretty,
            vec![
                is(
                    "src/a.ts:3:5: error TS2322: Type 'string' is not assignable to type 'number'.",
                    Some("src/a.ts"),
                    Some(3)
                ),
                is(
                    "src/b.ts:10:1: error TS2304: Cannot find name 'foo'.",
                    Some("src/b.ts"),
                    Some(10)
                ),
            ]
        );
    });
}

#[test]
fn eslint_stylish_and_unix_errors_but_not_warnings() {
    with_files(&["src/a.js", "src/b.js"], &[], |l| {
        let want = vec![
            is(
                "src/a.js:2:3: 'foo' is defined but never used (no-unused-vars)",
                Some("src/a.js"),
                Some(2),
            ),
            is(
                "src/b.js:5:1: Parsing error: Unexpected token }",
                Some("src/b.js"),
                Some(5),
            ),
        ];
        assert_eq!(found(l, fixture!("eslint-stylish.txt")), want);
        assert_eq!(found(l, fixture!("eslint-unix.txt")), want);
        let compact = format!("{COPY}/src/a.js: line 2, col 3, Error - 'foo' is defined but never used (no-unused-vars)\n");
        assert_eq!(found(l, &compact), want[..1]);
    });
    // The stylish block starts at the file's line.
    assert_eq!(parse(fixture!("eslint-stylish.txt"))[0].lines, 1..4);
}

#[test]
fn pytest_sections_long_short_and_line() {
    let files = ["tests/test_a.py", "src/calc.py"];
    with_files(&files, &["/tmp/dx/py"], |l| {
        let long = found(l, fixture!("pytest.txt"));
        assert_eq!(
            long,
            vec![
                is(
                    "tests/test_a.py:6: test_add: assert 3 == 4",
                    Some("tests/test_a.py"),
                    Some(6)
                ),
                is(
                    "src/calc.py:5: test_div: ZeroDivisionError: division by zero",
                    Some("src/calc.py"),
                    Some(5)
                ),
                is(
                    "tests/test_a.py:17: TestThing.test_method: AssertionError: assert {'a': 1} == {'a': 2}",
                    Some("tests/test_a.py"),
                    Some(17)
                ),
            ]
        );
        assert_eq!(found(l, fixture!("pytest-short.txt")), long);
        let line = found(l, fixture!("pytest-line.txt"));
        assert_eq!(
            line[1],
            is(
                "src/calc.py:5: ZeroDivisionError: division by zero",
                Some("src/calc.py"),
                Some(5)
            )
        );
        assert_eq!(line.len(), 3);
    });
    with_files(&["tests/test_b.py"], &["/tmp/dx/py"], |l| {
        assert_eq!(
            found(l, fixture!("pytest-collect-error.txt")),
            vec![is(
                "tests/test_b.py:1: ERROR collecting tests/test_b.py: ModuleNotFoundError: No module named 'notamodule'",
                Some("tests/test_b.py"),
                Some(1)
            )]
        );
    });
    // Only the summary: the test file, no line.
    with_files(&["tests/test_a.py"], &[], |l| {
        assert_eq!(
            found(l, "FAILED tests/test_a.py::test_add - assert 3 == 4\n")[0],
            is(
                "tests/test_a.py: FAILED tests/test_a.py::test_add - assert 3 == 4",
                Some("tests/test_a.py"),
                None
            )
        );
    });
}

#[test]
fn python_tracebacks_are_placed_at_the_innermost_frame_in_the_repository() {
    with_files(&["src/calc.py"], &["/tmp/dx/py"], |l| {
        assert_eq!(
            found(l, fixture!("python-traceback.txt")),
            vec![is(
                "src/calc.py:5: ZeroDivisionError: division by zero",
                Some("src/calc.py"),
                Some(5)
            )]
        );
    });
}

#[test]
fn the_same_error_twice_counts_once_and_many_are_capped() {
    let one = "error[E0308]: mismatched types\n --> src/lib.rs:6:5\n\n";
    with_files(&["src/lib.rs"], &[], |l| {
        assert_eq!(found(l, &one.repeat(2)).len(), 1);
        let many: String = (1..=30)
            .map(|n| format!("error: e{n}\n --> src/lib.rs:{n}:1\n\n"))
            .collect();
        let issues = l.issues("r", &parse(&many));
        assert_eq!(issues.len(), MAX_ISSUES + 1);
        assert_eq!(issues[MAX_ISSUES].severity, Severity::Info);
        assert!(issues[MAX_ISSUES].message.starts_with("10 more errors"));
    });
}

#[test]
fn kept_output_has_the_first_error_then_a_cut_then_the_tail() {
    let mut out = String::from("   Compiling x\nerror[E0308]: mismatched types\n --> src/lib.rs:6:5\n  |\n6 |     \"x\"\n\n");
    for n in 0..100 {
        out.push_str(&format!("noise {n}\n"));
    }
    let c = Captured::from_text(&out);
    let kept = c.kept("", 10);
    let lines: Vec<&str> = kept.lines().collect();
    assert_eq!(lines[0], "error[E0308]: mismatched types");
    assert_eq!(lines[4], "… 91 lines cut …");
    assert_eq!(lines[5], "noise 90");
    assert_eq!(lines.len(), 15);
    // Shown with a shorter tail: the block, the cut counting both gaps.
    let view = shown(&kept, 3);
    assert_eq!(view[0], "error[E0308]: mismatched types");
    assert_eq!(view[4], "… 98 lines cut …");
    assert_eq!(view[5..], ["noise 97", "noise 98", "noise 99"]);
    assert_eq!(
        first_block(&kept, 12).unwrap(),
        "error[E0308]: mismatched types\n --> src/lib.rs:6:5\n  |\n6 |     \"x\""
    );
    // The error inside the tail: nothing to add.
    let short = Captured::from_text("a\nerror: boom\n --> src/a.rs:1:1\n");
    assert_eq!(short.kept("", 10), "a\nerror: boom\n --> src/a.rs:1:1");
    assert_eq!(shown("a\nb\nc", 2), ["b", "c"]);
    // One line between the block and the tail is shown, not cut.
    assert_eq!(
        shown("error: x\n --> a.rs:1:1\n\nlast 1\nlast 2", 2),
        ["error: x", " --> a.rs:1:1", "", "last 1", "last 2"]
    );
    let c = Captured::from_text("error: x\n --> a.rs:1:1\n\nlast 1\nlast 2");
    assert_eq!(c.kept("", 2), "error: x\n --> a.rs:1:1\n\nlast 1\nlast 2");
    // Too big to capture whole: the runner's tail ends it.
    let mut big = Captured::default();
    big.push("error: first");
    big.push(" --> src/a.rs:1:1");
    big.push("");
    let filler = "x".repeat(1000);
    for _ in 0..(MAX_CAPTURE_BYTES / 1000 + 10) {
        big.push(&filler);
    }
    let kept = big.kept("runner tail 1\nrunner tail 2", 10);
    assert!(
        kept.starts_with("error: first\n --> src/a.rs:1:1\n… "),
        "{}",
        &kept[..80]
    );
    assert!(kept.ends_with("runner tail 1\nrunner tail 2"));
}

#[test]
fn ansi_colours_do_not_hide_an_error() {
    let out = "\u{1b}[0m\u{1b}[1m\u{1b}[38;5;9merror[E0308]\u{1b}[0m\u{1b}[0m\u{1b}[1m: mismatched types\u{1b}[0m\n\u{1b}[0m \u{1b}[0m\u{1b}[0m\u{1b}[1m\u{1b}[38;5;12m--> \u{1b}[0m\u{1b}[0msrc/lib.rs:6:5\u{1b}[0m\n";
    let d = parse(out);
    assert_eq!(d[0].message, "error[E0308]: mismatched types");
    assert_eq!(d[0].at[0], Location::new("src/lib.rs", Some(6), Some(5)));
}

#[test]
fn hostile_input_never_panics() {
    let nasty = [
        "",
        "\n\n\n",
        "error",
        "error:",
        "error[E]: x\n -->",
        " --> :99999999999999999999:1",
        "error: x\n --> src/lib.rs:4294967296:1",
        "thread '' panicked at :1:1:",
        "thread 'x' panicked at 'unterminated, a.rs:1:1",
        "---- x stdout ----\nthread 'x' panicked at a.rs:1:1:",
        "--- FAIL: \n    x.go:1:",
        "--- FAIL: T\npanic: x\n\t/x.go:1 +0x1",
        "panic: no test\n",
        "{\"Time\":1,\"Action\":\"output\",\"Output\":\"a\\nb\\n\"}",
        "{\"Action\":\"output\",\"Output\":7}",
        "{\"Time\":",
        "a.ts(1,1): error TS1: ",
        "(1,1): error TS1: x",
        "  1:1  error  x",
        "/x.js\n  1:1  error",
        ":1:1: x [Error/]",
        "________ x ________",
        "________  ________\nE",
        "=== FAILURES ===\n.py:1:",
        "Traceback (most recent call last):",
        "Traceback (most recent call last):\n  File \"\", line 99999999999",
        "FAILED ::",
        "\u{1b}[",
        "\u{1b}]8;;",
        "\u{1b}",
        "é\u{0}\u{7f}\u{9b}31m",
        "… 5 lines cut …",
        "… 99999999999999999999999 lines cut …",
    ];
    with_files(&["a.rs"], &["/"], |l| {
        for n in nasty {
            let d = parse(n);
            let _ = l.issues("r", &d);
            let _ = shown(n, 2);
            let _ = first_block(n, 3);
            let _ = Captured::from_text(n).kept(n, 2);
            let _ = l.tidy(n);
            let _ = leading_dir(n);
            let _ = go_module_path(n);
        }
        // Long lines and many of them.
        let long = format!(
            "error: {}\n --> {}:1:1\n",
            "x".repeat(100_000),
            "a/".repeat(10_000)
        );
        assert_eq!(l.issues("r", &parse(&long)).len(), 1);
        // Many failures: read in one pass, capped when made issues.
        let fails: String = (0..20_000)
            .map(|n| format!("--- FAIL: Test{n} (0.00s)\n    --- FAIL: Test{n}/sub (0.00s)\n        x_test.go:{n}: no\n"))
            .collect();
        assert_eq!(parse(&fails).len(), 20_000);
        assert_eq!(l.issues("r", &parse(&fails)).len(), MAX_ISSUES + 1);
        let mixed: String = nasty
            .iter()
            .map(|s| format!("{s}\n"))
            .collect::<String>()
            .repeat(200);
        let _ = l.issues("r", &parse(&mixed));
        let _ = shown(&mixed, 8);
    });
    assert_eq!(
        go_module_path("// x\nmodule  example.com/m \n\ngo 1.19\n").as_deref(),
        Some("example.com/m")
    );
}
