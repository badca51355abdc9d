//! Hostile and garbage input never panics: the parsers and recognisers
//! run on generated garbage, truncated fixtures and broken commands.

use super::*;

/// A small deterministic generator: the same garbage on every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn text(&mut self, len: usize) -> String {
        const ALPHABET: &[&str] = &[
            "test ",
            " ... ",
            "ok",
            "FAILED",
            "ignored",
            "\n",
            "running 3 tests",
            "::",
            " > ",
            "{",
            "}",
            "[",
            "]",
            "\"",
            "'",
            "<",
            ">",
            "/",
            "Running ",
            "(",
            ")",
            "-",
            "é",
            "\u{1b}[31m",
            "\0",
            "&&",
            "|",
            ";",
            "$(",
            "`",
            "=",
            "cd ",
            "cargo test",
            "go test",
            "pytest",
            "npx jest",
            "vitest",
            "<testcase",
            " name=\"",
            "{\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"T\"}",
            "ok  \tp\t0.1s",
            "TestA",
            ": test",
            "testResults",
            "assertionResults",
            "\\",
            "#",
            " ",
        ];
        (0..len)
            .map(|_| ALPHABET[self.next() as usize % ALPHABET.len()])
            .collect()
    }
}

const RUNNERS: [Runner; 5] = [
    Runner::Cargo,
    Runner::Go,
    Runner::Pytest,
    Runner::Jest,
    Runner::Vitest,
];

fn exercise(text: &str) {
    let pj = Some(r#"{"scripts": {"test": "jest"}}"#);
    for runner in RUNNERS {
        let listing = parse_listing(runner, text);
        let r = parse_results(runner, text, Some(text), Some(&listing));
        let _ = ledger(runner, &listing, &listing, &r);
        let _ = parse_results(runner, text, None, None);
    }
    for package_json in [None, pj] {
        if let Some(r) = recognise(text, package_json) {
            let _ = listing_command(&r, text);
            let _ = results_command(&r, text, "out/results");
        }
    }
    let _ = package_json_dir(text);
}

#[test]
fn garbage_never_panics() {
    let mut g = Lcg(7);
    for len in 0..400 {
        exercise(&g.text(len % 60));
    }
    for bytes in [&b"\xff\xfe"[..], b"test \xe9 ... ok", b"\x00\x01\x02"] {
        exercise(&String::from_utf8_lossy(bytes));
    }
}

#[test]
fn truncated_fixtures_never_panic() {
    for text in [
        CARGO_LIST,
        CARGO_RUN_NOCAPTURE,
        GO_LIST,
        fixture!("go/run.jsonl"),
        PY_COLLECT,
        fixture!("pytest/junit-xunit1.xml"),
        fixture!("jest/results.json"),
        fixture!("vitest/synthetic-results.json"),
    ] {
        let step = (text.len() / 97).max(1);
        let mut at = 0;
        while at < text.len() {
            if text.is_char_boundary(at) {
                exercise(&text[..at]);
            }
            at += step;
        }
    }
}

#[test]
fn hostile_commands_never_panic() {
    for command in [
        "cd",
        "cd && cargo test",
        "cd .. && cd .. && pytest",
        "cd / && go test",
        "cargo test -- --",
        "cargo test --",
        "npm test --",
        "timeout",
        "env",
        "A=1",
        "A=1 B=2",
        "( ( ( cargo test",
        ") ) )",
        "cargo test >",
        "cargo test 2>&",
        "pytest <<EOF\nx\nEOF",
        "go test -run",
        "go test -args",
        "npx",
        "python -m",
        "yarn",
        "cargo test é'",
        "jest \"$(echo \"a)\")\"",
    ] {
        exercise(command);
    }
}
